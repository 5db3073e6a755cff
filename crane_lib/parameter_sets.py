"""Parameter sets of the sweeps (`papermill_params/*.csv`): one row per condition, one column per
notebook parameter, read and checked; and the name a condition's files take."""

from __future__ import annotations

import re
from pathlib import Path

from crane_lib.errors import SMALL_INPUT_MAX_BYTES, InputError, parse_number, read_input_text, shown
from crane_lib.paths import PAPERMILL_PARAMS_DIR

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_SAFE_TEXT = re.compile(r"[A-Za-z0-9_.+-]+")  # values end up in file names (condition_name)
MAX_CONDITIONS = 10_000


def _column_values(path: Path, column: str, cells: list[tuple[str, str]]) -> list:
    """One column's values, typed as a whole column the way pandas would read it: all integers
    -> int, all numbers -> float, all True/False -> bool, else text (file-name-safe)."""
    texts = [text.strip() for _, text in cells]
    if all(_INTEGER.fullmatch(t) and len(t) <= 18 for t in texts):
        return [int(t) for t in texts]
    if all(t in ("True", "False") for t in texts):
        return [t == "True" for t in texts]
    numbers = []
    for (where, text), t in zip(cells, texts):
        try:
            numbers.append(parse_number(t, where, "a number", field=column))
        except InputError:
            break
    if len(numbers) == len(texts):
        return numbers
    for (where, _), t in zip(cells, texts):
        if not _SAFE_TEXT.fullmatch(t):
            raise InputError(
                where,
                f"{column} {shown(t)}",
                "letters, digits and . _ + - only (values name result files)",
            )
    return texts


def read_conditions(path) -> list[dict]:
    """Rows of a papermill_params CSV as parameter dicts ('#' lines skipped). The header names
    notebook parameters (Python identifiers, each once); every row has one value per column
    (the line is named otherwise); a column of integers reads as int, of numbers as float, of
    True/False as bool, anything else as file-name-safe text."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = PAPERMILL_PARAMS_DIR / path
    text = read_input_text(
        path, "a conditions file (CSV with a header of notebook parameters)", SMALL_INPUT_MAX_BYTES
    )
    lines = [
        (n, line.rstrip("\r"))
        for n, line in enumerate(text.split("\n"), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError(str(path), "no header", "a header of notebook parameter names")
    header_line, header_text = lines[0]
    header = [name.strip() for name in header_text.split(",")]
    for name in header:
        if not _IDENTIFIER.fullmatch(name):
            raise InputError(
                f"{path}:{header_line}",
                f"column name {shown(name)}",
                "notebook parameter names (Python identifiers)",
            )
    if len(set(header)) != len(header):
        raise InputError(f"{path}:{header_line}", "a column name repeats", "each parameter once")
    rows = lines[1:]
    if not rows:
        raise InputError(str(path), "no conditions", "at least one row")
    if len(rows) > MAX_CONDITIONS:
        raise InputError(str(path), f"{len(rows)} conditions", f"at most {MAX_CONDITIONS}")
    table = []
    for index, (number, line) in enumerate(rows, start=1):
        fields = line.split(",")
        where = f"{path}:{number} (condition {index})"
        if len(fields) != len(header):
            raise InputError(where, f"{len(fields)} fields", f"{len(header)} ({','.join(header)})")
        for name, field in zip(header, fields):
            if not field.strip():
                raise InputError(where, f"empty field {name}", "a value in every column")
        table.append((where, fields))
    columns = {
        name: _column_values(path, name, [(where, fields[k]) for where, fields in table])
        for k, name in enumerate(header)
    }
    return [{name: columns[name][i] for name in header} for i in range(len(table))]


def condition_name(parameters: dict) -> str:
    """The file-name stem of a condition: its parameters as name-value pairs."""
    return "_".join(f"{k}-{v}" for k, v in parameters.items()).replace("/", "-").replace(" ", "")


def condition_key(condition: dict) -> tuple[str, int, int]:
    """(trajectory, interval in whole ms, execution) of a condition row or of its record."""
    return str(condition["trajectory"]), round(float(condition["ts"]) * 1e3), int(condition["run"])


def profile_conditions(sweeps, profile: str, refine: str | None = None) -> set[tuple]:
    """The `condition_key`s a profile lists in papermill_params/<sweep>_<profile>.csv for each of
    `sweeps` (only the rows refined by `refine`, when given): what a reader of a results folder
    keeps, since one folder may hold both profiles' records (a record's key is its inputs, so a
    condition both profiles list is one record)."""
    keys = set()
    for sweep in (sweeps,) if isinstance(sweeps, str) else sweeps:
        for row in read_conditions(f"{sweep}_{profile}.csv"):
            if refine is None or row.get("refine") == refine:
                keys.add(condition_key(row))
    return keys


def in_profile(records: list[dict], sweeps, profile: str | None, refine: str | None = None):
    """The records of the conditions `profile` lists (`profile_conditions`); all when None."""
    if profile is None:
        return list(records)
    keys = profile_conditions(sweeps, profile, refine)
    return [r for r in records if condition_key(r) in keys]
