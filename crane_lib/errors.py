"""Errors for bad input: each names the file (or entry), the line or sample, and what was expected."""

from __future__ import annotations

import csv
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


class InputError(ValueError):
    """Bad input: `where` is a file, a file:line, a sample, or a parameter name."""

    def __init__(self, where: str, problem: str, expected: str | None = None):
        self.where = str(where)
        self.problem = problem
        self.expected = expected
        text = f"{self.where}: {problem}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)


@contextmanager
def atomic_write(path, mode: str = "w", **open_kwargs):
    """Open a temporary file beside `path`; rename it over `path` only if the block succeeds.

    Nothing half-written is ever left at `path`: on any exception the temporary file is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            yield handle
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file ordinary permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def checked_csv_rows(path, header: list[str], what: str) -> list[tuple[str, list[str]]]:
    """Rows of a small CSV input with '#' comment lines: the header must be `header` and every
    row must have as many fields; returns ("file:line", fields) per data row."""
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), "no such file", what)
    with open(path, encoding="utf-8") as handle:
        numbered = [(n, line) for n, line in enumerate(handle, start=1) if line.strip() and not line.startswith("#")]
    reader = csv.reader([line for _, line in numbered])
    found = next(reader, None)
    if found != header:
        raise InputError(f"{path}:{numbered[0][0] if numbered else 1}", f"header {found}", ",".join(header))
    rows = []
    for (lineno, _), fields in zip(numbered[1:], reader):
        where = f"{path}:{lineno}"
        if len(fields) != len(header):
            raise InputError(where, f"{len(fields)} fields", f"{len(header)} fields ({','.join(header)})")
        rows.append((where, fields))
    return rows
