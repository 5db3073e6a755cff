"""The JSON file a benchmark writes its result to (`--out`).

Its place is checked and its temporary file opened before the measurement, so an `--out` that
cannot be written is refused in one line, exit status 2, before minutes or hours of work; the
file appears whole when the measurement ends, or not at all.
"""

from __future__ import annotations

import json
from contextlib import ExitStack, contextmanager
from pathlib import Path


class _NothingToWrite(Exception):
    """Raised inside the open file's block when the benchmark wrote no result: discard it."""


@contextmanager
def json_out(parser, path: Path | None):
    """A function that takes the benchmark's result (a JSON-able dict) for `path`; the file is
    written when the block ends, removed if the block raises or never passed a result. `path`
    None: nothing is written. A folder, a place under a file or an unwritable folder is refused
    with `parser.error` before the block runs."""
    if path is None:
        yield lambda result: None
        return
    from crane_book.options import shown
    from crane_lib.errors import atomic_write

    if path.is_dir():
        parser.error(f"--out {shown(path)}: a folder; expected a JSON file's name")
    place = next(parent for parent in path.absolute().parents if parent.exists())
    if not place.is_dir():
        parser.error(f"--out {shown(path)}: {place} is not a folder")
    stack = ExitStack()
    try:
        handle = stack.enter_context(atomic_write(path, encoding="utf-8"))
    except OSError as error:
        stack.close()
        parser.error(
            f"--out {shown(path)}: cannot be written ({error.strerror or error}); "
            "expected a file in a writable folder"
        )
    results: list[dict] = []
    try:
        with stack:
            yield results.append
            if not results:
                raise _NothingToWrite
            handle.write(json.dumps(results[-1], indent=1, default=float))
    except _NothingToWrite:
        return
    print(f"written {path}")
