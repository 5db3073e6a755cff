"""Every result record of the pipeline is one JSON file written here and read back here.

Records are written atomically with sorted keys and a fixed indent, so re-running the same
inputs gives byte-identical files. A folder of records reads back in file-name order.
"""

from __future__ import annotations

import json
from pathlib import Path

from crane_lib.errors import InputError, atomic_write


def write_json_record(path, record: dict) -> Path:
    """One result record as JSON, written atomically (sorted keys: byte-identical on reruns)."""
    path = Path(path)
    with atomic_write(path, encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    return path


def read_json_record(path) -> dict:
    """One record; a missing, unreadable or malformed file is an InputError naming it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), "no such record") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(
            str(path), f"cannot be read ({error.__class__.__name__}: {error})", "a UTF-8 JSON file"
        ) from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{path}:{error.lineno}", f"not JSON ({error.msg})", "a JSON object"
        ) from None
    if not isinstance(record, dict):
        raise InputError(str(path), f"a JSON {type(record).__name__}", "a JSON object")
    return record


def read_json_records(directory, pattern: str = "*.json") -> list[dict]:
    """Every record of a folder, in file-name order (an absent folder has none)."""
    return [read_json_record(p) for p in sorted(Path(directory).glob(pattern))]
