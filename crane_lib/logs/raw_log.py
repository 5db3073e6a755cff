"""The raw log of one execution (paper Appendix D-C): 106 columns, nominally 1 ms, uneven stamps.

Every column is documented in `data/raw_log_columns.csv` (the source of truth for names and
units, read here). Column numbers there are 1-based as in the paper; arrays here are
0-based, so `COLUMN["theta_logged_1"] == 1`.

Another arm's log (arm_description: ViperX 300 S, SO-101) has the same groups with one column per
axis, 2 + 13 n columns for n axes, and names its arm in the metadata ("arm: so101", `layout`);
a log without that entry is a CRANE-X7's. A described arm's log names its folder, the folder's
fingerprint and what its layout needs (`folder_arm_metadata`).

Two containers hold the same 106 columns:
- text ('.csv', or '.csv.gz' compressed): one sample per line, 106 comma-separated numbers;
  lines starting with '#' at the top carry metadata as '# key: value'. This is what the
  hardware recorder appends to, line by line, so no logged sample is ever lost;
- '.npz' (numpy, compressed, lossless): the array under 'samples' and the metadata under
  'metadata' as 'key: value' lines. The twin's data set uses it: a 128 s log is about
  250 MB as full-precision text. The file is deterministic: the same samples and metadata
  always give the same bytes (see `npz_io`).

Reading (`read_raw_log`) checks what preprocessing relies on and raises an `InputError`
naming the file and the line (text) or sample index (npz) of the first fault:
- a file that cannot be read (missing, a folder, a FIFO, permissions, larger than
  MAX_TEXT_BYTES once decompressed), an '.npz' that is not a zip of plain '.npy' arrays;
- an empty file, or one with metadata but no samples;
- a line with other than 106 comma-separated fields, named with its count wherever it is
  (npz: an array not n x 106);
- a last line without its newline or with too few fields (a write cut short: "truncated");
- a field that is not an ASCII decimal number, or is NaN or infinite (an empty field reads as
  NaN); npz: samples that are not real numbers (complex, bool, text, object);
- a value outside its column's physical range (PHYSICAL_RANGES: angles within a turn either
  way, speeds, currents within the axis's current limit, register counts, flags);
- a time stamp equal to the previous one (duplicated) or smaller (non-monotonic);
- a step between consecutive stamps of more than MAX_STAMP_GAP_S (20 ms).
Tokens echoed in a message are cut to a few dozen characters (`errors.shown`).

`read_raw_log(path, repair=True)` repairs exactly two faults, each of which loses no
information that could be trusted, and lists what it did in `RawLog.repairs`:
1. truncated end: a last line without its final newline, or with fewer than 106 fields, is
   dropped (a '.csv.gz' cut short is decompressed as far as it goes, then the same rule
   applies). Only the last line: a short line elsewhere is corruption, not truncation;
2. duplicated stamps: a sample whose stamp equals the preceding sample's is dropped and the
   first of the run kept; the report counts how many of the dropped samples also differed in
   other columns.
Everything else stays an error even with repair=True: reordering non-monotonic stamps,
bridging a gap or replacing a NaN would invent data that was never logged.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from crane_lib.constants import (
    ACTUATORS,
    CLAMP_THRESHOLD_FRACTION,
    CLAMP_TORQUE,
    CURRENT_UNIT_A,
    ENCODER_COUNTS,
    KT,
    N_AXES,
)
from crane_lib.errors import (
    InputError,
    atomic_write,
    check_line_endings,
    parse_number,
    read_input_bytes,
    shown,
)
from crane_lib.excitation.commands import MAX_WAYPOINTS
from crane_lib.fingerprint import files_digest
from crane_lib.logs.npz_io import read_npz, write_npz
from crane_lib.paths import DATA_DIR, REPO_ROOT, portable

RAW_LOG_COLUMNS_CSV = DATA_DIR / "raw_log_columns.csv"
N_COLUMNS = 106
ANGLE_OFFSET = np.pi  # logged angle = theta + pi
# Largest accepted step between consecutive stamps: 20 nominal cycles. Beyond it, linear
# interpolation onto the 1 ms grid would make up two or more samples of the 10 ms bundle.
MAX_STAMP_GAP_S = 0.020
EXPECTED_TEXT = f"{N_COLUMNS} comma-separated numbers per line, the last line ending in a newline"
LOG_SUFFIXES = (".npz", ".csv", ".csv.gz")
# A raw log's text, decompressed: 250 MB holds a 128 s record at full precision; 4 GiB is over
# 30 minutes, past any command file's bound (commands.MAX_COMMANDED_DURATION_S).
MAX_TEXT_BYTES = 4 << 30


def _load_columns() -> list[dict[str, str]]:
    with open(RAW_LOG_COLUMNS_CSV, encoding="utf-8") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    if len(rows) != N_COLUMNS or [int(r["column"]) for r in rows] != list(range(1, N_COLUMNS + 1)):
        raise RuntimeError(f"{RAW_LOG_COLUMNS_CSV}: expected columns 1..{N_COLUMNS} in order")
    return rows


COLUMNS = _load_columns()
COLUMN = {row["name"]: int(row["column"]) - 1 for row in COLUMNS}  # 0-based index by name
COLUMN_NAMES = [row["name"] for row in COLUMNS]

_TURN = 2.0 * np.pi
_CURRENT_LIMIT_A = np.array([a.current_limit_units for a in ACTUATORS]) * CURRENT_UNIT_A
_CURRENT_TOLERANCE = 1.0 + 1e-6  # the limit times the register unit, printed and read back
# Physical range of every column group: (low, high, integer-valued, why). A value outside is
# not a measurement of a CRANE-X7 but a fault of the file; read_raw_log names it.
PHYSICAL_RANGES = {
    "t": (0.0, 86400.0, False, "stamped from 0 at the start of logging, at most a day"),
    "theta_logged": (
        np.pi - _TURN,
        np.pi + _TURN,
        False,
        "angle + pi; no joint turns a full turn either way",
    ),
    "dtheta": (
        -100.0,
        100.0,
        False,
        "65 encoder counts per 1 ms cycle; the drives reach under 5 rad/s",
    ),
    "theta_ref": (-_TURN, _TURN, False, "no joint turns a full turn either way"),
    "dtheta_ref": (-100.0, 100.0, False, "the velocity ceiling is 4.8 rad/s"),
    "ddtheta_ref": (-1000.0, 1000.0, False, "the 4-1-4 ramps reach under 40 rad/s^2"),
    "position_error": (-2 * _TURN, 2 * _TURN, False, "difference of two angles within a turn"),
    "current_command": (
        -_CURRENT_LIMIT_A * _CURRENT_TOLERANCE,
        _CURRENT_LIMIT_A * _CURRENT_TOLERANCE,
        False,
        "the axis's current limit: Goal Current register maximum x 2.69 mA",
    ),
    "u_feedforward": (-1000.0, 1000.0, False, "controller torque before the clamp"),
    "u_feedback": (-1000.0, 1000.0, False, "controller torque before the clamp"),
    "current_present": (-20.0, 20.0, False, "above any X-series drive's stall current"),
    "position_ticks": (0.0, float(ENCODER_COUNTS - 1), True, "the 12-bit position register"),
    "goal_current_units": (-2047.0, 2047.0, True, "the Goal Current register range"),
    "clamped": (0.0, 1.0, True, "a flag, 0 or 1"),
    "segment": (-1.0, float(MAX_WAYPOINTS - 1), True, "a command-file row index, -1 while idle"),
}


def _group_of(name: str) -> str:
    stem, _, suffix = name.rpartition("_")
    return stem if suffix.isdigit() and stem else name


def _range_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    low, high, integer = np.empty(N_COLUMNS), np.empty(N_COLUMNS), np.zeros(N_COLUMNS, dtype=bool)
    for index, name in enumerate(COLUMN_NAMES):
        lo, hi, whole, _ = PHYSICAL_RANGES[_group_of(name)]
        axis = int(name.rpartition("_")[2]) - 1 if _group_of(name) != name else 0
        low[index] = lo[axis] if np.ndim(lo) else lo
        high[index] = hi[axis] if np.ndim(hi) else hi
        integer[index] = whole
    return low, high, integer


COLUMN_LOW, COLUMN_HIGH, COLUMN_INTEGER = _range_arrays()

# ---------------------------------------------------------------- other arms: 2 + 13 n columns
# A log of an arm with n axes (arm_description) has the same layout with n columns per group:
# t, theta_logged_1..n, ..., clamped_1..n, segment. Its metadata names the arm ("arm: so101");
# a log without that entry is a CRANE-X7's (106 columns, the layout of data/raw_log_columns.csv).
CRANE_X7 = "crane_x7"
PER_AXIS_GROUPS = tuple(dict.fromkeys(_group_of(n) for n in COLUMN_NAMES[1:-1]))


def n_columns(n_axes: int = N_AXES) -> int:
    """Columns of a raw log of an arm with `n_axes` axes (the CRANE-X7: 106)."""
    return 2 + len(PER_AXIS_GROUPS) * n_axes


@lru_cache(maxsize=8)
def column_names(n_axes: int = N_AXES) -> tuple[str, ...]:
    """Column names of an `n_axes` log: t, every per-axis group with its axes 1..n, segment."""
    return ("t", *(f"{g}_{k}" for g in PER_AXIS_GROUPS for k in range(1, n_axes + 1)), "segment")


@lru_cache(maxsize=8)
def column_index(n_axes: int = N_AXES) -> dict[str, int]:
    """0-based column of every name in an `n_axes` log (the CRANE-X7's is COLUMN)."""
    return {name: index for index, name in enumerate(column_names(n_axes))}


@dataclass(frozen=True)
class Layout:
    """The columns of one arm's log: names, units and the accepted range of every column."""

    arm: str
    n_axes: int
    names: tuple[str, ...]
    units: tuple[str, ...]
    low: np.ndarray
    high: np.ndarray
    integer: np.ndarray
    kt: np.ndarray  # (n_axes,) N·m/A of the torque record, all servos of the axis
    clamp_torque: np.ndarray  # (n_axes,) N·m, the axis's current limit times kt

    @property
    def n_columns(self) -> int:
        """The number of columns."""
        return len(self.names)


@lru_cache(maxsize=8)
def layout(arm: str = CRANE_X7) -> Layout:
    """The column layout of a raw log of `arm` (an arm_description key; the CRANE-X7 by default)."""
    units = tuple(row["unit"] for row in COLUMNS)
    if arm == CRANE_X7:
        return Layout(
            arm,
            N_AXES,
            tuple(COLUMN_NAMES),
            units,
            COLUMN_LOW,
            COLUMN_HIGH,
            COLUMN_INTEGER,
            KT,
            CLAMP_TORQUE,
        )
    from crane_lib.model.arm_description import ARMS, load_arm  # only for other arms

    if arm not in ARMS:
        raise InputError("raw log arm", repr(arm), f"one of {sorted(ARMS)}")
    description = load_arm(arm)
    kt = np.array([a.kt * a.servos for a in description.actuators])
    limit = np.array([a.current_limit for a in description.actuators])
    clamp_torque = np.array([a.torque_limit for a in description.actuators])
    return _arm_layout(arm, description.n_axes, kt, limit, clamp_torque)


def _arm_layout(
    arm: str, n: int, kt: np.ndarray, limit: np.ndarray, clamp_torque: np.ndarray
) -> Layout:
    """The layout of an arm of `n` axes with these torque constants (N·m/A), current limits (A)
    and clamp torques (N·m)."""
    units = tuple(row["unit"] for row in COLUMNS)
    names = column_names(n)
    unit_of = {_group_of(name): unit for name, unit in zip(COLUMN_NAMES, units)}
    low, high = np.empty(len(names)), np.empty(len(names))
    integer = np.zeros(len(names), dtype=bool)
    for index, name in enumerate(names):
        group_name = _group_of(name)
        lo, hi, whole, _ = PHYSICAL_RANGES[group_name]
        axis = int(name.rpartition("_")[2]) - 1 if group_name != name else 0
        if group_name == "current_command":  # this arm's own current limits
            lo, hi = -limit[axis] * _CURRENT_TOLERANCE, limit[axis] * _CURRENT_TOLERANCE
        low[index] = lo[axis] if np.ndim(lo) else lo
        high[index] = hi[axis] if np.ndim(hi) else hi
        integer[index] = whole
    column_units = tuple(unit_of[_group_of(name)] for name in names)
    return Layout(arm, n, names, column_units, low, high, integer, kt, clamp_torque)


# ---------------------------------------------------------------- a described arm's folder
# A log of an arm no shipped key names (a folder `crane-id describe` wrote) names it by the
# folder's path and a fingerprint of its four files ("arm_fingerprint"), and carries what its
# layout needs (axes, torque constants, current and torque limits), so that it reads without the
# folder and `check_log_robot` can tell a log of another arm by the fingerprint.
ARM_FILES = ("arm.toml", "joints.csv", "links.csv", "actuators.csv")
FOLDER_FIELDS = ("arm_kt_N_m_per_A", "arm_current_limit_A", "arm_torque_limit_N_m")


def folder_fingerprint(folder) -> str:
    """Digest of a description folder's four files by name and content (`files_digest`)."""
    return files_digest(Path(folder) / name for name in ARM_FILES)


def folder_arm_metadata(folder) -> dict[str, str]:
    """The metadata entries of a log of the described arm in `folder`: its path (`portable`),
    fingerprint, axis count, and per axis the torque constant, current limit and clamp torque."""
    from crane_lib.model.arm_description import load_arm

    actuators = load_arm(str(folder)).actuators
    per_axis = (
        [a.kt * a.servos for a in actuators],
        [a.current_limit for a in actuators],
        [a.torque_limit for a in actuators],
    )
    metadata = {
        "arm": portable(Path(folder).resolve()),
        "arm_fingerprint": folder_fingerprint(folder),
        "arm_axes": str(len(actuators)),
    }
    for name, values in zip(FOLDER_FIELDS, per_axis):
        metadata[name] = " ".join(repr(float(v)) for v in values)
    return metadata


def log_folder(arm: str) -> Path:
    """The folder a folder arm's log names, absolute (a relative path is the repository's, as
    `portable` writes it), so that a stage loading the log's arm finds it from any folder."""
    path = Path(arm)
    return path if path.is_absolute() else REPO_ROOT / path


@lru_cache(maxsize=8)
def _folder_layout(arm: str, n: int, kt: tuple, limit: tuple, torque: tuple) -> Layout:
    return _arm_layout(arm, n, np.array(kt), np.array(limit), np.array(torque))


def layout_of(metadata: dict[str, str], where: str = "raw log") -> Layout:
    """The layout of the arm a log's metadata names: a shipped arm's (`layout`), or a folder
    arm's from its entries (`folder_arm_metadata`; an InputError naming `where` and the entry)."""
    if "arm_fingerprint" not in metadata:
        return layout(metadata.get("arm", CRANE_X7))
    try:
        n = int(metadata["arm_axes"])
        values = [tuple(float(x) for x in metadata[name].split()) for name in FOLDER_FIELDS]
    except (KeyError, ValueError) as error:
        raise InputError(
            where,
            f"a folder arm's metadata with a missing or malformed entry ({shown(str(error))})",
            f"arm, arm_fingerprint, arm_axes and {', '.join(FOLDER_FIELDS)}",
        ) from None
    good = all(np.all(np.isfinite(v)) and np.all(np.array(v) > 0) for v in values)
    if not (1 <= n <= N_AXES and good and all(len(v) == n for v in values)):
        raise InputError(
            where,
            f"a folder arm's metadata with arm_axes {n} and per-axis entries "
            f"{[len(v) for v in values]} long",
            f"1..{N_AXES} axes and that many positive numbers in each of {FOLDER_FIELDS}",
        )
    return _folder_layout(str(log_folder(metadata.get("arm", ""))), n, *values)


def physical_range_table() -> list[dict[str, str]]:
    """The accepted range of every column group, for the book: group, columns, unit, range, why."""
    rows = []
    for group_row in column_groups():
        name = group_row["group"]
        first, last = int(group_row["first column"]) - 1, int(group_row["last column"]) - 1
        lows, highs = COLUMN_LOW[first : last + 1], COLUMN_HIGH[first : last + 1]
        if np.all(lows == lows[0]) and np.all(highs == highs[0]):
            span = f"[{lows[0]:.6g}, {highs[0]:.6g}]"
        else:
            span = "; ".join(f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(lows, highs))
        whole = " integers" if PHYSICAL_RANGES[name][2] else ""
        columns = (
            group_row["first column"]
            if first == last
            else f"{group_row['first column']}-{group_row['last column']}"
        )
        rows.append(
            {
                "group": name,
                "columns": columns,
                "unit": group_row["unit"],
                "accepted": span + whole,
                "why": PHYSICAL_RANGES[name][3],
            }
        )
    return rows


def column_groups() -> list[dict[str, str]]:
    """The 106 columns as groups (per-axis groups of eight collapsed to one row), in column order.

    Each row: group name, first and last column (1-based, as in the paper), unit and the
    description of the group's first column (its "axis 1: " prefix removed).
    """
    groups: list[dict[str, str]] = []
    for row in COLUMNS:
        stem, _, suffix = row["name"].rpartition("_")
        name = stem if suffix.isdigit() and stem else row["name"]
        if groups and groups[-1]["group"] == name:
            groups[-1]["last column"] = row["column"]
            continue
        description = row["description"]
        description = description.removeprefix("axis 1: ")
        groups.append(
            {
                "group": name,
                "first column": row["column"],
                "last column": row["column"],
                "unit": row["unit"],
                "description": description,
            }
        )
    return groups


def group(name: str, n_axes: int = N_AXES) -> slice:
    """0-based slice of the per-axis columns of a group, e.g. group('current_command') -> 49:57
    (n_axes: the arm's axes, the CRANE-X7's eight by default)."""
    column = COLUMN if n_axes == N_AXES else column_index(n_axes)
    first = column[f"{name}_1"]
    if column[f"{name}_{n_axes}"] != first + n_axes - 1:
        raise KeyError(f"{name} is not a contiguous per-axis group")
    return slice(first, first + n_axes)


# --------------------------------------------------------------------------------------------
# the log in memory


def _axis_group(name: str, doc: str) -> property:
    """A per-axis column group of the log as a read-only (n, n_axes) property."""
    return property(lambda log: log.column_group(name), doc=f"{doc} (n, n_axes)")


@dataclass
class RawLog:
    """One raw log (Appendix D-C), what both recorders write and preprocessing and CLIE read.

    samples   (n, 106) as stored, columns as `data/raw_log_columns.csv` defines them (angles with
              their pi offset, commands as current in A); the properties below read them in SI
              units (t, theta, dtheta_logged, theta_ref..., current_command, torque_logged,
              clamp_threshold_reached, clamped, segment)
    metadata  the recorder's key-value header (e.g. commanded_duration_s, realized_motion_s,
              record_duration_s, seed), strings
    path      the file it was read from (None when built in memory)
    repairs   one sentence per repair `read_raw_log(..., repair=True)` made; empty when none
    arm       the arm whose log it is (an arm_description key; `layout`): its metadata's "arm"
              entry, the CRANE-X7 without one; a described arm's folder path where the
              metadata has "arm_fingerprint" (`folder_arm_metadata`)
    """

    samples: np.ndarray
    metadata: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    repairs: tuple[str, ...] = ()
    arm: str | None = None

    def __post_init__(self):
        if self.arm is None:
            self.arm = self.metadata.get("arm", CRANE_X7)

    @property
    def layout(self) -> Layout:
        """The columns of this log's arm."""
        if "arm_fingerprint" in self.metadata:  # a described arm's folder
            return layout_of(self.metadata, str(self.path or "raw log"))
        return layout(self.arm)

    @property
    def n_axes(self) -> int:
        """Axes of this log's arm (the CRANE-X7: 8)."""
        return self.layout.n_axes

    @property
    def n_samples(self) -> int:
        """The number of samples."""
        return self.samples.shape[0]

    def column_group(self, name: str) -> np.ndarray:
        """The samples of one column group (one column per axis)."""
        return self.samples[:, group(name, self.n_axes)]

    @property
    def t(self) -> np.ndarray:
        """Host time stamps (s), uneven."""
        return self.samples[:, 0]

    @property
    def duration(self) -> float:
        """The record's length (s)."""
        return float(self.t[-1] - self.t[0])

    @property
    def theta(self) -> np.ndarray:
        """Joint angles (rad), the logged pi offset removed; (n, 8)."""
        return self.column_group("theta_logged") - ANGLE_OFFSET

    dtheta_logged = _axis_group(
        "dtheta",
        "The controller's own one-cycle encoder-difference velocity (rad/s); not used by D-C.",
    )
    theta_ref = _axis_group(
        "theta_ref", "Reference angles of the command file's interpolation (rad)."
    )
    dtheta_ref = _axis_group("dtheta_ref", "Reference velocities (rad/s).")
    ddtheta_ref = _axis_group("ddtheta_ref", "Reference accelerations (rad/s^2).")
    current_command = _axis_group("current_command", "Commanded current (A), the torque command.")

    @property
    def torque_logged(self) -> np.ndarray:
        """Torque record (N·m): commanded current times the per-axis Kt of Sec. III-A."""
        return self.current_command * self.layout.kt

    @property
    def clamp_threshold_reached(self) -> np.ndarray:
        """(n, n_axes) bool: |torque| >= 0.98 of the axis clamp torque, the paper's clamp rule."""
        return np.abs(self.torque_logged) >= CLAMP_THRESHOLD_FRACTION * self.layout.clamp_torque

    @property
    def clamped(self) -> np.ndarray:
        """(n, 8) bool: the controller's own flag, set where the command reached the current
        limit."""
        return self.column_group("clamped") != 0

    @property
    def segment(self) -> np.ndarray:
        """Command-file segment index per sample (-1 while idle)."""
        return np.rint(self.samples[:, -1]).astype(np.int64)


# --------------------------------------------------------------------------------------------
# writing


def _metadata_lines(metadata: dict[str, str] | None) -> list[str]:
    lines = []
    for key, value in (metadata or {}).items():
        key, value = str(key), str(value)
        if "\n" in key or "\n" in value or ": " in key or not key:
            raise ValueError(
                f"metadata entry {key!r}: keys must be non-empty without ': ', and neither may "
                "hold a newline"
            )
        lines.append(f"{key}: {value}")
    return lines


def _check_shape(samples: np.ndarray, metadata: dict[str, str] | None = None) -> np.ndarray:
    samples = np.asarray(samples, dtype=float)
    arm = (metadata or {}).get("arm", CRANE_X7)
    expected = N_COLUMNS if arm == CRANE_X7 else layout_of(metadata).n_columns
    if samples.ndim != 2 or samples.shape[1] != expected:
        raise ValueError(
            f"raw log samples of {arm} have shape {samples.shape}; expected (n, {expected})"
        )
    return samples


def format_raw_log(samples: np.ndarray, metadata: dict[str, str] | None = None) -> str:
    """Text of a raw log; values printed with repr precision, so writing is lossless."""
    samples = _check_shape(samples, metadata)
    buffer = io.StringIO()
    for line in _metadata_lines(metadata):
        buffer.write(f"# {line}\n")
    np.savetxt(buffer, samples, delimiter=",", fmt="%.17g")
    return buffer.getvalue()


def write_raw_log(path, samples: np.ndarray, metadata: dict[str, str] | None = None) -> Path:
    """Write atomically (a temporary file renamed into place) in the container the suffix names.

    Every container is deterministic: the same samples and metadata give the same bytes.
    """
    path = Path(path)
    if path.suffix == ".npz":
        samples = _check_shape(samples, metadata)
        meta = "\n".join(_metadata_lines(metadata))
        write_npz(path, {"samples": samples, "metadata": np.array(meta)})
        return path
    text = format_raw_log(samples, metadata)
    if path.suffix == ".gz":
        with atomic_write(path, mode="wb") as handle:
            # a fixed mtime keeps compressed output byte-identical between runs
            with gzip.GzipFile(
                filename="", fileobj=handle, mode="wb", compresslevel=6, mtime=0
            ) as zipped:
                zipped.write(text.encode("utf-8"))
    else:
        with atomic_write(path, encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return path


# --------------------------------------------------------------------------------------------
# reading


def read_raw_log(path, repair: bool = False) -> RawLog:
    """Read and check a raw log ('.csv', '.csv.gz' or '.npz'); see the module text for the checks.

    With repair=False any fault raises an InputError naming the file and the line or sample.
    With repair=True the two repairable faults (truncated end, duplicated stamps) are
    repaired and listed in the returned `RawLog.repairs`; every other fault still raises.
    The columns are those of the arm the metadata names ("arm"), the CRANE-X7's without it.
    """
    path = Path(path)
    if path.suffix == ".npz":
        samples, metadata, origin, columns = _read_npz_container(path)
        repairs: list[str] = []
    else:
        samples, metadata, origin, repairs, columns = _read_text_container(path, repair)
    samples, origin, stamp_repairs = _check_samples(path, samples, origin, repair, columns)
    return RawLog(
        samples=samples,
        metadata=metadata,
        path=path,
        repairs=tuple(repairs + stamp_repairs),
        arm=columns.arm,
    )


def _expected_text(width: int) -> str:
    return f"{width} comma-separated numbers per line, the last line ending in a newline"


def _layout_of(path: Path, metadata: dict[str, str]) -> Layout:
    """The layout of the arm the metadata names; an InputError for an arm it does not know."""
    arm = metadata.get("arm", CRANE_X7)
    if "arm_fingerprint" in metadata:  # a described arm's folder: its layout is in the metadata
        return layout_of(metadata, str(path))
    try:
        return layout(arm)
    except InputError:
        raise InputError(
            str(path),
            f"metadata names the arm {shown(arm)!r}",
            "a shipped arm (arm_description.ARMS) or none",
        ) from None


@dataclass(frozen=True)
class _Origin:
    """Where each sample came from: 1-based line numbers (text) or 0-based sample indices (npz)."""

    kind: str  # "line" or "sample"
    number: np.ndarray

    def where(self, path: Path, row: int) -> str:
        if self.kind == "line":
            return f"{path}, line {int(self.number[row])}"
        return f"{path}, sample {int(self.number[row])}"

    def subset(self, keep: np.ndarray) -> _Origin:
        return _Origin(self.kind, self.number[keep])


def _read_npz_container(path: Path):
    arrays = read_npz(path, max_bytes=MAX_TEXT_BYTES)
    if "samples" not in arrays:
        raise InputError(
            str(path),
            f"no 'samples' array (found {shown(', '.join(sorted(arrays)))})",
            f"an (n, {N_COLUMNS}) array 'samples'",
        )
    samples = arrays["samples"]
    if samples.dtype.kind not in "fiu":
        raise InputError(
            str(path),
            f"'samples' has dtype {shown(str(samples.dtype))}",
            "real numbers (float or integer), not complex, bool, text or objects",
        )
    metadata = {}
    if "metadata" in arrays:
        text = arrays["metadata"]
        if text.dtype.kind != "U" or text.ndim != 0:
            raise InputError(
                str(path),
                f"'metadata' is a {text.dtype} array of shape {text.shape}",
                "one text of 'key: value' lines",
            )
        metadata = _parse_metadata(str(text).splitlines())
    columns = _layout_of(path, metadata)
    if samples.ndim != 2 or samples.shape[1] != columns.n_columns:
        raise InputError(
            str(path),
            f"'samples' has shape {samples.shape}: wrong column count",
            f"(n, {columns.n_columns})",
        )
    origin = _Origin("sample", np.arange(samples.shape[0]))
    return samples.astype(float, copy=False), metadata, origin, columns


def _parse_metadata(lines: list[str]) -> dict[str, str]:
    metadata = {}
    for line in lines:
        key, _, value = line.partition(": ")
        metadata[key.strip()] = value.strip()
    return metadata


def _decompress(path: Path, data: bytes, repair: bool, repairs: list[str]) -> bytes:
    """The gzip members of `data`, decompressed up to MAX_TEXT_BYTES (a bomb stops there)."""
    out, rest, total = [], data, 0
    while rest:
        stream = zlib.decompressobj(wbits=31)  # 31: gzip header and trailer
        try:
            chunk = stream.decompress(rest, MAX_TEXT_BYTES + 1 - total)
        except zlib.error as error:
            raise InputError(
                str(path), f"not a readable gzip file ({error})", "a '.csv.gz' written by gzip"
            ) from None
        total += len(chunk)
        out.append(chunk)
        if total > MAX_TEXT_BYTES or stream.unconsumed_tail:
            raise InputError(
                str(path),
                f"decompresses to more than {MAX_TEXT_BYTES:,} bytes",
                "a raw log of at most that much text",
            )
        if not stream.eof:
            if not repair:
                raise InputError(
                    str(path),
                    "the compressed stream ends before its end marker: the file is truncated",
                    "a complete gzip stream (read_raw_log(..., repair=True) keeps what "
                    "decompresses)",
                )
            repairs.append(f"the gzip stream was cut short; kept the {total} bytes that decompress")
            break
        rest = stream.unused_data
        if rest and not rest.startswith(b"\x1f\x8b"):
            raise InputError(
                str(path),
                f"{len(rest)} bytes after the gzip stream are not gzip",
                "a '.csv.gz' written by gzip",
            )
    return b"".join(out)


def _line_field_counts(body: bytes, line_starts: np.ndarray, line_ends: np.ndarray) -> np.ndarray:
    """Comma-separated fields on every line, by one vectorized scan of the commas."""
    commas = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == ord(","))
    return np.searchsorted(commas, line_ends) - np.searchsorted(commas, line_starts) + 1


# the first bytes of the binary containers, which a name ending in .csv must not hide: read as
# text they gave a wrong column count on every line
_MAGIC = (
    (b"PK\x03\x04", "a zip archive (an .npz raw log?)", "name it .npz"),
    (b"PK\x05\x06", "an empty zip archive", "a raw log"),
    (b"\x93NUMPY", "a NumPy .npy array", "a raw log in .npz (numpy.savez) or text"),
    (b"\x1f\x8b", "gzip-compressed", "name it .csv.gz"),
)


def _check_container(path: Path, data: bytes, gz: bool) -> None:
    """An InputError when the bytes of a text log are one of the binary containers."""
    for magic, kind, remedy in _MAGIC:
        if data.startswith(magic) and not (gz and magic == b"\x1f\x8b"):
            raise InputError(str(path), f"is {kind}, not CSV text", f"{EXPECTED_TEXT}; {remedy}")


def _read_text_container(path: Path, repair: bool):
    """(samples, metadata, origin, repairs, layout) of a text log."""
    repairs: list[str] = []
    gz = path.name.endswith(".gz")
    what = "a raw log (.csv, .csv.gz or .npz)"
    data = read_input_bytes(path, what, MAX_TEXT_BYTES)
    _check_container(path, data, gz)
    if gz:
        data = _decompress(path, data, repair, repairs)
    if not data or data.isspace():
        raise InputError(str(path), "empty file", EXPECTED_TEXT)
    if b"\r" in data:
        check_line_endings(data, path, what)

    # metadata: the '#' lines at the top (few, so a Python loop is fine here)
    metadata_lines, offset, n_header_lines = [], 0, 0
    while offset < len(data) and data.startswith(b"#", offset):
        end = data.find(b"\n", offset)
        end = len(data) if end < 0 else end
        metadata_lines.append(data[offset + 1 : end].decode("utf-8", errors="replace").strip())
        offset, n_header_lines = end + 1, n_header_lines + 1
    body = data[offset:]
    metadata = _parse_metadata(metadata_lines)
    columns = _layout_of(path, metadata)
    width = columns.n_columns
    expected_text = _expected_text(width)
    if not body:
        raise InputError(
            str(path), f"no samples after {n_header_lines} metadata lines", expected_text
        )
    first_line = n_header_lines + 1  # 1-based number of the first sample line
    samples = _parse_complete(data, offset, n_header_lines, width)
    if samples is not None:  # every line complete and a number in every field
        origin = _Origin("line", first_line + np.arange(samples.shape[0]))
        return samples, metadata, origin, repairs, columns

    # line boundaries and field counts by one vectorized scan each
    line_ends = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == ord("\n"))
    has_final_newline = body.endswith(b"\n")
    if not has_final_newline:
        line_ends = np.append(line_ends, len(body))
    line_starts = np.concatenate(([0], line_ends[:-1] + 1))
    n_lines = len(line_ends)
    counts = _line_field_counts(body, line_starts, line_ends)

    def describe(index: int) -> str:
        if (
            line_ends[index] - line_starts[index] == 0
            or not body[line_starts[index] : line_ends[index]].strip()
        ):
            return "a blank line"
        return f"{int(counts[index])} fields"

    wrong = np.flatnonzero(counts != width)
    last = n_lines - 1
    short_last = counts[last] < width and (wrong.size == 0 or wrong[0] == last)
    truncated = not has_final_newline or short_last
    if wrong.size and wrong[0] != last:
        row = int(wrong[0])
        share = f"; {wrong.size} of {n_lines} lines have a wrong count" if wrong.size > 1 else ""
        raise InputError(
            f"{path}, line {first_line + row}",
            f"{describe(row)}: wrong column count{share}",
            f"{width} comma-separated numbers",
        )
    if truncated:  # a write cut short: only the last line is incomplete
        where = first_line + last
        if not has_final_newline and counts[last] == width:
            reason = "has all fields but no final newline, so its last number may be cut short"
        elif not has_final_newline:
            reason = f"has {counts[last]} of {width} fields and no final newline"
        else:
            reason = f"has {counts[last]} of {width} fields"
        if not repair:
            raise InputError(
                f"{path}, line {where}",
                f"the last line {reason}: the file is truncated",
                f"{expected_text} (read_raw_log(..., repair=True) drops it)",
            )
        repairs.append(f"dropped the truncated last line {where} (it {reason})")
        n_lines -= 1
        body = body[: int(line_starts[n_lines])]
        if n_lines == 0:
            raise InputError(str(path), "no complete sample line after the repair", expected_text)
    elif wrong.size:  # the last line has too many fields
        raise InputError(
            f"{path}, line {first_line + last}",
            f"{describe(last)}: wrong column count",
            f"{width} comma-separated numbers",
        )

    samples = _parse_numbers(path, body, first_line, n_lines, columns)
    origin = _Origin("line", first_line + np.arange(n_lines))
    return samples, metadata, origin, repairs, columns


# what pandas' C parser reads a log's text with: every field a float, an empty one NaN
_CSV_OPTIONS = dict(
    header=None,
    index_col=False,
    dtype=np.float64,
    engine="c",
    skip_blank_lines=False,
    na_filter=True,
    keep_default_na=False,
    na_values=[""],
    quoting=csv.QUOTE_NONE,
)
_PARSE_FAILURES = (
    ValueError,
    TypeError,
    OverflowError,
    pd.errors.ParserError,
    pd.errors.EmptyDataError,
)


def _parse_complete(data: bytes, offset: int, n_header_lines: int, width: int):
    """The samples of a text log whose every line is complete, parsed in place (no copy of the
    text, no per-line scan); None where a line might not be, for `_read_text_container`'s checks
    to name it. Complete: the text ends in a newline, pandas reads every line as `width` numbers
    (a short line would hold NaN, a long one fails), and the commas number exactly (width - 1)
    per line, so no line has more (pandas drops a trailing comma with index_col=False)."""
    if not data.endswith(b"\n"):
        return None
    n_lines = data.count(b"\n", offset)
    if data.count(b",", offset) != (width - 1) * n_lines:
        return None
    try:
        frame = pd.read_csv(
            io.BytesIO(data), skiprows=n_header_lines, names=range(width), **_CSV_OPTIONS
        )
        samples = frame.to_numpy(dtype=np.float64)
    except _PARSE_FAILURES:
        return None
    with np.errstate(over="ignore"):  # an overflowing sum is no NaN
        nan = np.isnan(samples.sum())  # a NaN: some field empty
    return None if nan or samples.shape != (n_lines, width) else samples


def _parse_numbers(
    path: Path, body: bytes, first_line: int, n_lines: int, columns: Layout
) -> np.ndarray:
    """(n_lines, columns) floats by pandas' C parser (every line has that many fields by now); on
    a parse failure, find the line and the field the slow way."""
    width = columns.n_columns
    try:
        frame = pd.read_csv(io.BytesIO(body), names=range(width), **_CSV_OPTIONS)
        samples = frame.to_numpy(dtype=np.float64)
        if samples.shape == (n_lines, width):
            return samples
    except _PARSE_FAILURES:
        pass
    # error path only: line by line, to name the line and the field
    for index, line in enumerate(body.split(b"\n")[:n_lines]):
        for column, token in enumerate(line.split(b",")):
            if token.strip() == b"":
                # an empty field reads as NaN: reported by the finite check with its column
                continue
            parse_number(
                token,
                f"{path}, line {first_line + index}",
                "a decimal number (ASCII digits, '.', exponent)",
                field=f"column {column + 1} ({columns.names[column]})",
            )
    raise InputError(str(path), "the text could not be parsed as numbers", _expected_text(width))


def _any_fault(samples: np.ndarray, columns: Layout) -> bool:
    """Whether any (finite) sample lies outside its column's range or is fractional in an integer
    column: by each column's extremes, and the integer columns one at a time (no n x columns
    temporaries)."""
    if np.any(samples.min(axis=0) < columns.low) or np.any(samples.max(axis=0) > columns.high):
        return True
    for column in np.flatnonzero(columns.integer):
        values = samples[:, column]
        if np.any(values != np.round(values)):
            return True
    return False


def _check_samples(
    path: Path, samples: np.ndarray, origin: _Origin, repair: bool, columns: Layout | None = None
):
    """Finite values in their physical ranges and strictly increasing stamps without gaps;
    returns (samples, origin, repairs)."""
    columns = layout() if columns is None else columns
    repairs: list[str] = []
    if samples.shape[0] == 0:
        raise InputError(str(path), "no samples", f"at least one (n, {columns.n_columns}) sample")
    # the sum is finite only if every sample is (an overflow only costs the full check)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = None if np.isfinite(samples.sum()) else np.isfinite(samples)
    if finite is not None and not finite.all():
        row, column = np.argwhere(~finite)[0]
        name = columns.names[column]
        raise InputError(
            origin.where(path, row),
            f"column {column + 1} ({name}) is {samples[row, column]}",
            "finite numbers (NaN, inf or an empty field are not repaired)",
        )
    if _any_fault(samples, columns):  # then the first one, row by row
        outside = (samples < columns.low) | (samples > columns.high)
        fractional = columns.integer & (samples != np.round(samples))
        bad = outside | fractional
        row, column = np.argwhere(bad)[0]
        name = columns.names[column]
        _, _, whole, why = PHYSICAL_RANGES[_group_of(name)]
        kind = "integers " if whole else ""
        value = f"{samples[row, column]:.6g} {columns.units[column]}"
        span = f"[{columns.low[column]:.6g}, {columns.high[column]:.6g}]"
        raise InputError(
            origin.where(path, row),
            f"column {column + 1} ({name}) is {value}",
            f"{kind}in {span}: {why}",
        )

    t = samples[:, 0]
    step = np.diff(t)
    if repair:
        repeats = np.flatnonzero(step == 0) + 1
        if repeats.size:
            # compare each dropped sample with the kept first sample of its run
            starts = np.concatenate(([True], step != 0))
            run_start = np.maximum.accumulate(np.where(starts, np.arange(len(t)), 0))
            differing = int(np.any(samples[repeats] != samples[run_start[repeats]], axis=1).sum())
            shown_rows = ", ".join(origin.where(path, r).rsplit(", ", 1)[1] for r in repeats[:5])
            more = f" and {repeats.size - 5} more" if repeats.size > 5 else ""
            repairs.append(
                f"dropped {repeats.size} samples whose stamp repeated the previous sample's "
                f"({shown_rows}{more}); "
                f"{differing} of them differed in other columns; the first sample of each run was "
                "kept"
            )
            keep = np.ones(len(t), dtype=bool)
            keep[repeats] = False
            samples, origin = samples[keep], origin.subset(keep)
            t = samples[:, 0]
            step = np.diff(t)

    faults = np.flatnonzero((step <= 0) | (step > MAX_STAMP_GAP_S))
    if faults.size:
        row = int(faults[0]) + 1
        before, now = t[row - 1], t[row]
        if now == before:
            problem = f"time stamp {float(now)!r} s repeats the previous sample's"
            expected = (
                "strictly increasing time stamps (read_raw_log(..., repair=True) drops repeats)"
            )
        elif now < before:
            problem = (
                f"time stamp {float(now)!r} s is earlier than the previous sample's "
                f"{float(before)!r} s (non-monotonic)"
            )
            expected = "strictly increasing time stamps; reordering is not repaired"
        else:
            problem = f"a gap of {(now - before) * 1e3:.3f} ms from the previous sample"
            expected = f"at most {MAX_STAMP_GAP_S * 1e3:g} ms between stamps; gaps are not bridged"
        raise InputError(origin.where(path, row), problem, expected)
    return samples, origin, repairs
