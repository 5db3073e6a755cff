"""The command-line tool `crane-id`: one module per subcommand, one error boundary.

    crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N]
    crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...]
    crane-id identify LOG --trajectory COMMAND_FILE --ts 0.04 --out MODEL [--repair] [--refine fast|clie|didim|none]
    crane-id audit MODEL [--seed N] [--sparse] [--box manufacturer] [--certify] [--json]
    crane-id rescue MODEL --out MODEL [--epsilon 1e-3]
    crane-id export MODEL --urdf OUT.urdf --mjcf OUT.xml [--nearest] [--distance bregman|euclidean] [--standard OUT.csv]

Each subcommand module exposes `register(subparsers)`, which adds its parser and sets its
handler; a handler returns the exit status. Bad input (a missing or malformed file, an option
out of range) raises InputError, which `main` turns into one line naming the file and what
was wrong, exit status 2, with nothing written.
"""

from __future__ import annotations

import argparse
import sys

from crane_lib.cli import audit, export, identify, preprocess, record, rescue
from crane_lib.cli.common import EXIT_BAD_INPUT
from crane_lib.errors import InputError

SUBCOMMANDS = (record, preprocess, identify, audit, rescue, export)  # in pipeline order

__all__ = ["EXIT_BAD_INPUT", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crane-id", description="CRANE-X7 dynamic identification tools.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except InputError as error:
        print(f"crane-id {args.command}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
