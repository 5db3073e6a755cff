"""The JSON file a benchmark writes its result to (`--out`).

Its place is checked before the measurement, a temporary file created and removed there, so an
`--out` that cannot be written is refused in one line, exit status 2, before minutes or hours of
work; the file appears whole when the measurement ends, or not at all (nothing is on disk while
it runs, so a killed benchmark leaves nothing behind).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path


class _Discard(Exception):
    """Raised inside an open temporary file's block to have it removed unwritten."""


@contextmanager
def json_out(parser, path: Path | None):
    """A function that takes the benchmark's result (a JSON-able dict) for `path`; the file is
    written when the block ends, not if the block raises or never passed a result. `path` None:
    nothing is written. A folder, a place under a file or an unwritable folder is refused with
    `parser.error` before the block runs."""
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
    try:  # the temporary file the result will be written through, created and removed
        with atomic_write(path, encoding="utf-8"):
            raise _Discard
    except _Discard:
        pass
    except OSError as error:
        parser.error(
            f"--out {shown(path)}: cannot be written ({error.strerror or error}); "
            "expected a file in a writable folder"
        )
    results: list[dict] = []
    yield results.append
    if results:
        with atomic_write(path, encoding="utf-8") as handle:
            handle.write(json.dumps(results[-1], indent=1, default=float))
        print(f"written {path}")
