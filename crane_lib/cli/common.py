"""What every `crane-id` subcommand shares: the exit status of bad input, argument types, the
check of an output path before any computation."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.errors import InputError

EXIT_BAD_INPUT = 2


def seed(text: str) -> int:
    """argparse type of a random seed: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed {text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed {value} is negative")
    return value


def checked_output(path, option: str = "--out") -> Path:
    """The output path of a command, checked before any computation: its folder must exist."""
    path = Path(path)
    if not path.parent.exists():
        raise InputError(f"{option} {path}", "its folder does not exist", "an existing folder")
    return path
