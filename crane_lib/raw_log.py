"""The raw log of one execution (paper Appendix D-C): 106 columns, nominally 1 ms, uneven stamps.

Every column is documented in `data/raw_log_columns.csv` (the source of truth for names and
units, read here). Column numbers there are 1-based as in the paper; arrays here are
0-based, so `COLUMN["theta_logged_1"] == 1`.

Two containers hold the same 106 columns:
- text ('.csv', or '.csv.gz' compressed): one sample per line, 106 comma-separated numbers;
  lines starting with '#' at the top carry metadata as '# key: value'. This is what the
  hardware recorder appends to, line by line, so no logged sample is ever lost;
- '.npz' (numpy, compressed, lossless): the array under 'samples' and the metadata under
  'metadata' as 'key: value' lines. The twin's data set uses it: a 128 s log is about
  250 MB as full-precision text.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np

from .constants import N_AXES
from .errors import atomic_write
from .paths import DATA_DIR

RAW_LOG_COLUMNS_CSV = DATA_DIR / "raw_log_columns.csv"
N_COLUMNS = 106
ANGLE_OFFSET = np.pi  # logged angle = theta + pi


def _load_columns() -> list[dict[str, str]]:
    with open(RAW_LOG_COLUMNS_CSV, encoding="utf-8") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    if len(rows) != N_COLUMNS or [int(r["column"]) for r in rows] != list(range(1, N_COLUMNS + 1)):
        raise RuntimeError(f"{RAW_LOG_COLUMNS_CSV}: expected columns 1..{N_COLUMNS} in order")
    return rows


COLUMNS = _load_columns()
COLUMN = {row["name"]: int(row["column"]) - 1 for row in COLUMNS}  # 0-based index by name


def group(name: str) -> slice:
    """0-based slice of the eight per-axis columns of a group, e.g. group('current_command') -> 49:57."""
    first = COLUMN[f"{name}_1"]
    if COLUMN[f"{name}_{N_AXES}"] != first + N_AXES - 1:
        raise KeyError(f"{name} is not a contiguous per-axis group")
    return slice(first, first + N_AXES)


def _open_text(path: Path, mode: str):
    return gzip.open(path, mode + "t", encoding="utf-8", compresslevel=6) if path.suffix == ".gz" else open(path, mode, encoding="utf-8")


def format_raw_log(samples: np.ndarray, metadata: dict[str, str] | None = None) -> str:
    """Text of a raw log; values printed with repr precision, so writing is lossless."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 2 or samples.shape[1] != N_COLUMNS:
        raise ValueError(f"raw log samples have shape {samples.shape}; expected (n, {N_COLUMNS})")
    buffer = io.StringIO()
    for key, value in (metadata or {}).items():
        buffer.write(f"# {key}: {value}\n")
    np.savetxt(buffer, samples, delimiter=",", fmt="%.17g")
    return buffer.getvalue()


def write_raw_log(path, samples: np.ndarray, metadata: dict[str, str] | None = None) -> Path:
    """Write atomically (a temporary file renamed into place) in the container the suffix names."""
    path = Path(path)
    if path.suffix == ".npz":
        samples = np.asarray(samples, dtype=float)
        if samples.ndim != 2 or samples.shape[1] != N_COLUMNS:
            raise ValueError(f"raw log samples have shape {samples.shape}; expected (n, {N_COLUMNS})")
        meta = "\n".join(f"{k}: {v}" for k, v in (metadata or {}).items())
        with atomic_write(path, mode="wb") as handle:
            np.savez_compressed(handle, samples=samples, metadata=np.array(meta))
        return path
    text = format_raw_log(samples, metadata)
    if path.suffix == ".gz":
        with atomic_write(path, mode="wb") as handle:
            # a fixed mtime keeps compressed output byte-identical between runs
            with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=6, mtime=0) as zipped:
                zipped.write(text.encode("utf-8"))
    else:
        with atomic_write(path, encoding="utf-8") as handle:
            handle.write(text)
    return path
