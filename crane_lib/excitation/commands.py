"""Command files (paper Appendix B-B): read, write, interpolate, and count their segments.

A command file is a list of absolute joint-space waypoints. The arm starts at the assumed
posture q̄A (not commanded), each waypoint row commands one segment from the previous target,
and the file ends at q̄0: the last row repeats q̄0 at 20 % (no displacement) and is followed
by a 1 s dwell. Degrees appear only in the file; everything in Python is in radians and SI.

File layout (version 1), one item per line, blank lines and text after '#' ignored::

    # any comment lines (the generator writes the trajectory name and block sequence)
    FORMAT CRANE-X7-COMMANDS 1
    VELOCITY_CEILING_DEG_S 274.800 175.872 274.800 274.800 274.800 274.800 274.800 274.800
    ACCEL_TIME_S 0.40 0.20 0.40 0.40 0.20 0.20 0.20 0.20
    START_POSTURE_DEG 0.000 0.000 0.000 -90.000 0.000 0.000 0.000 0.000
    SEGMENT_DWELL_S 0.0
    FINAL_DWELL_S 1.0
    WAYPOINTS <number of waypoint rows>
    <theta1> ... <theta8> <speed factor %>      one row per waypoint, degrees and percent

The header is identical in every file (B-B); the reader checks every keyword, its order and
its values, so a file written for other constants is rejected rather than misread.

Other arms (`CommandFormat`): the same layout with the arm's own number of axes, velocity
ceilings, ramp times, start posture and limits, and its name in the FORMAT line
(`FORMAT VX300S-COMMANDS 1`); the CRANE-X7's format is the default of every function here.

Bounds (so that no file can ask for more than a stated memory)
--------------------------------------------------------------
A file holds at most MAX_WAYPOINTS (500) rows, every speed factor lies in [1, 100] % and the
commanded motion (segments plus the final dwell) lasts at most MAX_COMMANDED_DURATION_S (600 s).
The longest of the 43 files in trajectories/ runs 114 s with 155 rows at no less than 20 %; a
1e-6 % factor would otherwise ask for years of motion, and 0.01 % for days. At the bounds the
1 ms reference (`interpolate`: time plus three (n, 8) arrays) takes at most
`reference_bytes_bound()` = 120 MB, and the twin's raw log at most `twin_log_bytes_bound()`
(crane_lib.twin.recorder). The file itself is read only up to MAX_FILE_BYTES (1 MiB), numbers
only in ASCII decimal notation (`errors.parse_number`).

Interpolation (the "4-1-4 profile", our reading; see book/register_excitation.md, E-3)
-----------------------------------------------------------------------------------
Every axis runs its own profile, as a DYNAMIXEL-style servo does with its own profile
velocity and acceleration: per segment and moving axis j, with displacement D_j, peak velocity
v_j = f·v_max,j (f the speed factor, "the peak velocity of that segment is that percentage of
the per-axis ceiling", B-B) and nominal acceleration time t_a,j, the axis ramps for
r_j = t_a,j if D_j >= v_j·t_a,j, else for the shortened r_j = sqrt(D_j·t_a,j / v_j) (same mean
ramp acceleration v_j/t_a,j, lower peak velocity D_j/r_j). Axis j arrives after
T_j = r_j + max(D_j/v_j, D_j·t_a,j/(v_j·r_j)) and holds; the segment ends when the last axis
arrives, T = max_j T_j, and the next row starts then (dwell 0). All moving axes start together.

"4-1-4" is read in the sense of the textbook 4-3-4 / 3-5-3 trajectories, as the polynomial
degrees of the three phases: a quartic acceleration ramp (velocity 0 -> V with zero
acceleration at both ends, an S-shaped velocity, peak acceleration 1.5·V/r), a first-order
(constant-velocity) cruise, and a quartic deceleration ramp. Each ramp covers V·r/2, so the
timing above holds for any symmetric ramp shape; DESIGN.md's alternative reading (a 4:1:4
time split of jerk-up, constant and jerk-down acceleration) gives the same segment times and
ramp durations and a peak acceleration of 1.8·V/r instead.

A ramp is one axis's acceleration (or deceleration) phase in one segment, so a segment moving
k axes has 2k ramps, and a ramp of duration r sampled at interval Ts carries floor(r/Ts)
samples (it spans r/Ts sampling intervals, independent of where the grid falls). The paper's
"at 80 ms between 59 and 68 % of ramps carry fewer than three samples" is what this gives
(0.200 s ramps span 2.5 intervals); counting grid points instead would leave about half of
the 0.200 s ramps with three (register, E-3).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crane_lib.constants import N_ARM_JOINTS, N_AXES, VELOCITY_CEILING_DEG_S
from crane_lib.errors import (
    InputError,
    atomic_write,
    decode_utf8,
    parse_integer,
    parse_number,
    read_input_bytes,
    shown,
)
from crane_lib.model.robot_description import joint_limits_rad

FORMAT_LINE = "FORMAT CRANE-X7-COMMANDS 1"
# nominal acceleration time per axis, s (B-B); a constant of the file format
ACCEL_TIME_S = np.array([0.40, 0.20, 0.40, 0.40, 0.20, 0.20, 0.20, 0.20])
START_POSTURE_DEG = np.array([0.0, 0.0, 0.0, -90.0, 0.0, 0.0, 0.0, 0.0])  # q̄A, assumed at start
SEGMENT_DWELL_S = 0.0
FINAL_DWELL_S = 1.0
FINAL_SPEED_PERCENT = 20.0
FINAL_POSTURE_DEG = np.zeros(N_AXES)  # q̄0: the arm straightened, hand closed

# peak acceleration of a quartic ramp reaching velocity V in time r is 1.5 V / r
RAMP_PEAK_ACCEL_FACTOR = 1.5
MOVING_TOLERANCE_RAD = 1e-9  # an axis whose target differs by less is not moving
LIMIT_TOLERANCE_RAD = 1e-9
ANGLE_DECIMALS = 3  # degrees in the file
SPEED_DECIMALS = 1  # percent in the file

SUFFIX = ".txt"

# bounds of a command file (module text): rows, speed factor, commanded motion, file size
MAX_WAYPOINTS = 500
MIN_SPEED_PERCENT = 1.0
MAX_SPEED_PERCENT = 100.0
MAX_COMMANDED_DURATION_S = 600.0
MAX_FILE_BYTES = 1 << 20


def reference_bytes_bound(dt: float = 1e-3) -> int:
    """Largest memory the 1 ms reference of any accepted file takes: t plus q, qd, qdd (n, 8) in
    float64."""
    samples = math.floor(MAX_COMMANDED_DURATION_S / dt) + 1
    return samples * (1 + 3 * N_AXES) * 8


def _fmt(values, decimals: int) -> str:
    # "-0.000" would differ byte-wise from "0.000" for the same angle
    return " ".join(f"{(0.0 if abs(v) < 0.5 * 10**-decimals else v):.{decimals}f}" for v in values)


def end_posture_deg(limits_deg) -> np.ndarray:
    """q̄0 (°) of an arm with these (n_axes, 2) limits (°): zero on every axis whose range holds
    it, else the range's midpoint truncated to the whole degree towards zero (the Panda's joint
    4, -176°..-4°: -90°)."""
    limits_deg = np.asarray(limits_deg, dtype=float)
    inside = (limits_deg[:, 0] <= 0.0) & (0.0 <= limits_deg[:, 1])
    return np.where(inside, 0.0, np.trunc(limits_deg.mean(axis=1)))


@dataclass(frozen=True, eq=False)
class CommandFormat:
    """One arm's header constants: axes, velocity ceilings, ramps, start posture, limits.

    The CRANE-X7's (`CRANE_X7_FORMAT`) is the default everywhere. Another arm's files have the
    same layout with its own values: the FORMAT line names the arm (`FORMAT <TAG>-COMMANDS 1`),
    so a file read with the wrong arm's format is refused at its first line.
    """

    tag: str
    velocity_ceiling_deg_s: np.ndarray  # (n_axes,)
    accel_time_s: np.ndarray  # (n_axes,)
    start_posture_deg: np.ndarray  # (n_axes,)
    n_arm_joints: int
    limits_rad: np.ndarray | None = None  # (n_axes, 2); None: the CRANE-X7 description's

    @property
    def n_axes(self) -> int:
        """Axes per waypoint row: the arm joints, then the gripper if any."""
        return len(self.velocity_ceiling_deg_s)

    @property
    def final_posture_deg(self) -> np.ndarray:
        """q̄0, where every file ends: all axes at zero, or where an axis's range excludes zero,
        its range's midpoint (`end_posture_deg`)."""
        if self.limits_rad is None:  # the CRANE-X7
            return np.zeros(self.n_axes)
        return end_posture_deg(np.degrees(self.limits_rad))

    def limits(self) -> np.ndarray:
        """(n_axes, 2) [lower, upper] joint limits in radians."""
        return joint_limits_rad() if self.limits_rad is None else self.limits_rad

    def header_lines(self) -> tuple[str, ...]:
        """The header lines every file of this arm carries, WAYPOINTS excluded."""
        return (
            f"FORMAT {self.tag}-COMMANDS 1",
            "VELOCITY_CEILING_DEG_S " + _fmt(self.velocity_ceiling_deg_s, 3),
            "ACCEL_TIME_S " + _fmt(self.accel_time_s, 2),
            "START_POSTURE_DEG " + _fmt(self.start_posture_deg, 3),
            f"SEGMENT_DWELL_S {SEGMENT_DWELL_S:.1f}",
            f"FINAL_DWELL_S {FINAL_DWELL_S:.1f}",
        )


CRANE_X7_FORMAT = CommandFormat(
    "CRANE-X7",
    np.asarray(VELOCITY_CEILING_DEG_S, dtype=float),
    ACCEL_TIME_S,
    START_POSTURE_DEG,
    N_ARM_JOINTS,
)
HEADER_LINES = CRANE_X7_FORMAT.header_lines()
assert HEADER_LINES[0] == FORMAT_LINE


@dataclass(frozen=True)
class CommandFile:
    """One trajectory: waypoints (n, 8) in radians and speed factors (n,) in percent."""

    name: str
    waypoints: np.ndarray
    speed_percent: np.ndarray
    comments: tuple[str, ...] = field(default_factory=tuple)
    sha256: str = ""  # of the file's bytes when read from a file ("" when built in memory)
    command_format: CommandFormat = CRANE_X7_FORMAT  # the arm's header constants

    def __post_init__(self):
        wp = np.asarray(self.waypoints, dtype=float)
        sp = np.asarray(self.speed_percent, dtype=float)
        n_axes = self.command_format.n_axes
        if wp.ndim != 2 or wp.shape[1] != n_axes:
            raise InputError(self.name, f"waypoints of shape {wp.shape}", f"(n, {n_axes})")
        if sp.shape != (len(wp),):
            raise InputError(
                self.name, f"{sp.shape} speed factors for {len(wp)} waypoints", "one per waypoint"
            )
        object.__setattr__(self, "waypoints", wp)
        object.__setattr__(self, "speed_percent", sp)

    @property
    def n_waypoints(self) -> int:
        """The number of commanded waypoints."""
        return len(self.waypoints)

    @property
    def start(self) -> np.ndarray:
        """The assumed start posture (rad)."""
        return np.radians(self.command_format.start_posture_deg)

    def segment_endpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """(start, target) postures of every segment, each (n, 8) rad."""
        starts = np.vstack([self.start[None, :], self.waypoints[:-1]])
        return starts, self.waypoints


# ------------------------------------------------------------------ checks


def check_command(cmd: CommandFile, where_of_row=None) -> None:
    """Raise InputError unless every angle is inside the joint limits, every speed factor is
    in [1, 100] %, there are at most MAX_WAYPOINTS rows, the file ends with the final q̄0 row
    (B-B) and the commanded motion lasts at most MAX_COMMANDED_DURATION_S. `where_of_row(i)`
    names row i."""
    where = where_of_row or (lambda i: f"{cmd.name}: waypoint {i + 1}")
    if cmd.n_waypoints > MAX_WAYPOINTS:
        raise InputError(
            where(MAX_WAYPOINTS), f"{cmd.n_waypoints} waypoint rows", f"at most {MAX_WAYPOINTS}"
        )
    limits = cmd.command_format.limits()
    for i, (q, f) in enumerate(zip(cmd.waypoints, cmd.speed_percent)):
        low = q < limits[:, 0] - LIMIT_TOLERANCE_RAD
        high = q > limits[:, 1] + LIMIT_TOLERANCE_RAD
        for axis in np.flatnonzero(low | high):
            lo, hi = np.degrees(limits[axis])
            raise InputError(
                where(i),
                f"axis {axis + 1} angle {np.degrees(q[axis]):.3f} deg outside the joint limits",
                f"{lo:.3f} <= angle <= {hi:.3f} deg",
            )
        if not (MIN_SPEED_PERCENT <= f <= MAX_SPEED_PERCENT):
            raise InputError(
                where(i),
                f"speed factor {f:g} %",
                f"{MIN_SPEED_PERCENT:g} <= speed factor <= {MAX_SPEED_PERCENT:g} % (a bound that "
                "keeps every file's "
                f"motion under {MAX_COMMANDED_DURATION_S:g} s)",
            )
    q0 = np.radians(cmd.command_format.final_posture_deg)
    last = cmd.n_waypoints - 1
    if cmd.n_waypoints < 2:
        raise InputError(
            where(max(last, 0)),
            f"{cmd.n_waypoints} waypoint rows",
            "at least the row reaching q̄0 and its repeat",
        )
    if not np.allclose(cmd.waypoints[-2:], q0, atol=1e-6):
        raise InputError(
            where(last),
            "the file does not end with two rows at q̄0",
            "the final q̄0 row repeated (B-B)",
        )
    if abs(cmd.speed_percent[-1] - FINAL_SPEED_PERCENT) > 1e-9:
        raise InputError(
            where(last),
            f"final row speed {cmd.speed_percent[-1]:g} %",
            f"{FINAL_SPEED_PERCENT:g} % on the repeated q̄0 row",
        )
    elapsed = 0.0
    for i, plan in enumerate(plan_segments(cmd)):
        elapsed = plan.end_time + (FINAL_DWELL_S if i == last else 0.0)
        if elapsed > MAX_COMMANDED_DURATION_S:
            raise InputError(
                where(i),
                f"the commanded motion reaches {elapsed:.1f} s at this row",
                f"at most {MAX_COMMANDED_DURATION_S:g} s of motion per file (split it into several "
                "files)",
            )


# ------------------------------------------------------------------ read / write


def _parse_floats(fields: list[str], where: str, what: str) -> np.ndarray:
    return np.array(
        [
            parse_number(text, where, what, field=f"field {k}")
            for k, text in enumerate(fields, start=1)
        ]
    )


def read_command_file(path, command_format: CommandFormat = CRANE_X7_FORMAT) -> CommandFile:
    """Parse and check a command file; the name is the file stem. Every fault is an InputError
    naming the file and line: unreadable, not UTF-8, too large, header, field count, a token that
    is not an ASCII decimal number, limits, speed factors, length (see `check_command`).
    `command_format`: the arm the file is for (default the CRANE-X7)."""
    path = Path(path)
    header_lines = command_format.header_lines()
    format_line = header_lines[0]
    n_axes = command_format.n_axes
    what = "a UTF-8 command file (Appendix B-B)"
    data = read_input_bytes(path, what, MAX_FILE_BYTES)
    lines = decode_utf8(data, path, what).split("\n")
    if lines and lines[-1] == "":
        lines.pop()

    comments: list[str] = []
    header_seen: list[str] = []
    declared_rows: int | None = None
    rows: list[np.ndarray] = []
    row_lines: list[int] = []
    header_keys = [h.split()[0] for h in header_lines[1:]] + ["WAYPOINTS"]

    for number, raw in enumerate(lines, start=1):
        where = f"{path}:{number}"
        text = raw.split("#", 1)[0].strip()
        if not text:
            if raw.strip().startswith("#") and not header_seen:
                comments.append(raw.strip()[1:].strip())
            continue
        if len(header_seen) == 0:
            if text.split() != format_line.split():
                raise InputError(where, f"first line {shown(text)}", f"{format_line!r}")
            header_seen.append(format_line)
            continue
        if declared_rows is None:
            fields = text.split()
            key = header_keys[len(header_seen) - 1]
            if fields[0] != key:
                raise InputError(
                    where, f"header keyword {shown(fields[0])}", f"{key!r} (header order of B-B)"
                )
            if key == "WAYPOINTS":
                expected = (
                    f"WAYPOINTS followed by the number of waypoint rows, 2 to {MAX_WAYPOINTS}"
                )
                if len(fields) != 2:
                    raise InputError(where, f"{shown(text)}", expected)
                declared_rows = parse_integer(fields[1], where, expected, field="row count")
                if not 2 <= declared_rows <= MAX_WAYPOINTS:
                    raise InputError(where, f"WAYPOINTS {declared_rows}", expected)
                continue
            expected_line = header_lines[len(header_seen)]
            expected = np.array(expected_line.split()[1:], dtype=float)
            if len(fields) - 1 != len(expected):
                raise InputError(
                    where,
                    f"{len(fields) - 1} values after {key}",
                    f"{len(expected)} values: {expected_line!r}",
                )
            values = _parse_floats(fields[1:], where, f"{expected_line!r}")
            if not np.allclose(values, expected, rtol=0, atol=1e-9):
                raise InputError(
                    where,
                    f"{key} values {shown(text.split(None, 1)[1])}",
                    f"{expected_line!r}, fixed in every file (B-B)",
                )
            header_seen.append(key)
            continue
        fields = text.split()
        if len(fields) != n_axes + 1:
            raise InputError(
                where,
                f"{len(fields)} fields",
                f"{n_axes} angles in degrees and a speed factor in percent",
            )
        if len(rows) == declared_rows:
            raise InputError(
                where,
                f"waypoint row {len(rows) + 1}",
                f"{declared_rows} rows as declared by WAYPOINTS",
            )
        rows.append(
            _parse_floats(
                fields, where, "numbers: eight angles in degrees and a speed factor in percent"
            )
        )
        row_lines.append(number)

    end = f"{path}:{max(len(lines), 1)}"
    if declared_rows is None:
        missing = header_keys[len(header_seen) - 1] if header_seen else "FORMAT"
        raise InputError(end, f"header ends before {missing}", "the complete header of B-B")
    if len(rows) != declared_rows:
        raise InputError(
            end, f"{len(rows)} waypoint rows", f"{declared_rows} as declared by WAYPOINTS"
        )
    table = np.array(rows)
    cmd = CommandFile(
        path.stem,
        np.radians(table[:, :n_axes]),
        table[:, n_axes],
        tuple(comments),
        sha256=hashlib.sha256(data).hexdigest(),
        command_format=command_format,
    )
    check_command(cmd, lambda i: f"{path}:{row_lines[i]}")
    return cmd


def format_command_file(cmd: CommandFile) -> str:
    """The command file as text in the paper's format (Appendix B-B)."""
    lines = [f"# {c}" if c else "#" for c in cmd.comments]
    lines += list(cmd.command_format.header_lines())
    lines.append(f"WAYPOINTS {cmd.n_waypoints}")
    n_axes = cmd.command_format.n_axes
    lines.append("# " + " ".join(f"theta{j}_deg" for j in range(1, n_axes + 1)) + " speed_pct")
    for q, f in zip(np.degrees(cmd.waypoints), cmd.speed_percent):
        lines.append(_fmt(q, ANGLE_DECIMALS) + " " + _fmt([f], SPEED_DECIMALS))
    return "\n".join(lines) + "\n"


def write_command_file(path, cmd: CommandFile) -> Path:
    """Check, then write atomically; nothing is written if the command is bad."""
    path = Path(path)
    check_command(cmd, lambda i: f"{path}: waypoint {i + 1}")
    text = format_command_file(cmd)
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return path


# ------------------------------------------------------------------ the 4-1-4 profile


@dataclass(frozen=True)
class SegmentPlan:
    """Timing of one segment; all moving axes share the normalized profile s(t)."""

    start_time: float
    duration: float  # T = ramp + cruise; 0 for a row without displacement
    ramp: (
        float  # longest effective ramp of the moving axes (each of its two ramps), 0 if not moving
    )
    moving: np.ndarray  # (8,) bool
    start: np.ndarray  # (8,) rad
    target: np.ndarray  # (8,) rad
    speed_fraction: float
    axis_ramp: np.ndarray = field(
        default_factory=lambda: np.zeros(N_AXES)
    )  # (8,) s, r_j; 0 where not moving
    axis_duration: np.ndarray = field(
        default_factory=lambda: np.zeros(N_AXES)
    )  # (8,) s, T_j; 0 where not moving

    @property
    def end_time(self) -> float:
        """When the segment ends (s from the file's start)."""
        return self.start_time + self.duration


def _axis_timing(
    delta: np.ndarray, fraction: float, command_format: CommandFormat = CRANE_X7_FORMAT
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-axis (ramp r_j, arrival time T_j, moving mask) of one segment (module docstring)."""
    distance = np.abs(delta)
    moving = distance > MOVING_TOLERANCE_RAD
    ramp = np.zeros(len(delta))
    arrival = np.zeros(len(delta))
    if not moving.any():
        return ramp, arrival, moving
    d = distance[moving]
    v = fraction * np.radians(command_format.velocity_ceiling_deg_s)[moving]
    ta = command_format.accel_time_s[moving]
    r = np.where(d >= v * ta, ta, np.sqrt(d * ta / v))
    ramp[moving] = r
    arrival[moving] = r + np.maximum(d / v, d * ta / (v * r))
    return ramp, arrival, moving


def _segment_timing(delta: np.ndarray, fraction: float) -> tuple[float, float, np.ndarray]:
    """(longest ramp, duration T = slowest arrival, moving mask) of one segment."""
    ramp, arrival, moving = _axis_timing(delta, fraction)
    return float(ramp.max()), float(arrival.max()), moving


def plan_segments(cmd: CommandFile) -> list[SegmentPlan]:
    """The timing of every segment of the command file under the 4-1-4 profile."""
    starts, targets = cmd.segment_endpoints()
    plans, t = [], 0.0
    for a, b, pct in zip(starts, targets, cmd.speed_percent):
        ramp, arrival, moving = _axis_timing(b - a, pct / 100.0, cmd.command_format)
        duration = float(arrival.max())
        plans.append(
            SegmentPlan(t, duration, float(ramp.max()), moving, a, b, pct / 100.0, ramp, arrival)
        )
        t += duration + SEGMENT_DWELL_S
    return plans


def commanded_duration(cmd: CommandFile) -> float:
    """Sum of the segment durations plus the final dwell, s."""
    plans = plan_segments(cmd)
    return plans[-1].end_time + FINAL_DWELL_S


def _ramp_up(u: np.ndarray, ramp: float, peak_v: float):
    """Quartic ramp from rest to peak_v over [0, ramp]: zero acceleration at both ends."""
    x = np.clip(u, 0.0, ramp) / ramp
    p = peak_v * ramp * (x**3 - x**4 / 2)
    v = peak_v * (3 * x**2 - 2 * x**3)
    a = peak_v / ramp * (6 * x - 6 * x**2)
    return p, v, a


def _unit_profile(tau: np.ndarray, ramp: float, duration: float):
    """Normalized s, ds/dt, d2s/dt2 at times tau in [0, T]: 0 -> 1 by the 4-1-4 profile."""
    peak_v = 1.0 / (duration - ramp)
    tau = np.clip(tau, 0.0, duration)
    up_p, up_v, up_a = _ramp_up(tau, ramp, peak_v)
    dn_p, dn_v, dn_a = _ramp_up(duration - tau, ramp, peak_v)
    half = peak_v * ramp / 2  # distance covered by one ramp
    in_up, in_down = tau <= ramp, tau >= duration - ramp
    s = np.where(in_up, up_p, np.where(in_down, 1.0 - dn_p, half + peak_v * (tau - ramp)))
    sd = np.where(in_up, up_v, np.where(in_down, dn_v, peak_v))
    sdd = np.where(in_up, up_a, np.where(in_down, -dn_a, 0.0))
    return s, sd, sdd


def segment_unit_profiles(
    plan: SegmentPlan, tau: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-axis normalized profiles of one segment at times `tau` from its start, (len(tau), 8)
    each.

    Axis j goes 0 -> 1 by its own 4-1-4 profile over [0, T_j] and holds 1 until the segment
    ends; axes that do not move stay 0. The reference is start + s * (target - start). The
    interpolator and the twin both sample segments through this function.
    """
    s = np.zeros((len(tau), len(plan.moving)))
    sd = np.zeros_like(s)
    sdd = np.zeros_like(s)
    for j in np.flatnonzero(plan.moving):
        s[:, j], sd[:, j], sdd[:, j] = _unit_profile(tau, plan.axis_ramp[j], plan.axis_duration[j])
    return s, sd, sdd


@dataclass(frozen=True)
class Reference:
    """Commanded references sampled on an even grid, SI units."""

    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, 8) rad
    qd: np.ndarray  # (N, 8) rad/s
    qdd: np.ndarray  # (N, 8) rad/s^2
    segment_start: np.ndarray  # (n_segments,) s
    segment_end: np.ndarray  # (n_segments,) s
    segment_ramp: np.ndarray  # (n_segments,) s, longest axis ramp, 0 for rows without displacement
    segment_axis_ramp: np.ndarray | None = (
        None  # (n_segments, 8) s, each axis's ramp, 0 where not moving
    )


def interpolate(cmd: CommandFile, dt: float = 1e-3) -> Reference:
    """θref, θ̇ref, θ̈ref of `cmd` at t = 0, dt, 2dt, ... through the final dwell."""
    if not dt > 0:
        raise InputError("interpolate", f"dt = {dt!r}", "a positive sampling interval in seconds")
    plans = plan_segments(cmd)
    total = plans[-1].end_time + FINAL_DWELL_S
    t = np.arange(int(math.floor(total / dt + 1e-9)) + 1) * dt
    q = np.tile(cmd.start, (len(t), 1))
    qd = np.zeros_like(q)
    qdd = np.zeros_like(q)
    for plan in plans:
        if plan.duration == 0.0:
            continue
        after = t >= plan.start_time
        q[after] = plan.target  # holds until the next segment overwrites it
        inside = after & (t <= plan.end_time)
        delta = plan.target - plan.start
        s, sd, sdd = segment_unit_profiles(plan, t[inside] - plan.start_time)
        q[inside] = plan.start + s * delta
        qd[inside] = sd * delta
        qdd[inside] = sdd * delta
    return Reference(
        t,
        q,
        qd,
        qdd,
        np.array([p.start_time for p in plans]),
        np.array([p.end_time for p in plans]),
        np.array([p.ramp for p in plans]),
        np.array([p.axis_ramp for p in plans]),
    )


# ------------------------------------------------------------------ statistics


def segment_table(cmd: CommandFile):
    """One row per commanded segment (every waypoint row is one segment)."""
    import pandas as pd

    rows = []
    n_arm = cmd.command_format.n_arm_joints
    for k, plan in enumerate(plan_segments(cmd), start=1):
        arm = np.flatnonzero(plan.moving[:n_arm]) + 1
        rows.append(
            {
                "segment": k,
                "moving_arm_joints": tuple(int(j) for j in arm),
                "n_moving_arm_joints": len(arm),
                "hand_moving": bool(plan.moving[n_arm:].any()),
                "speed_fraction": plan.speed_fraction,
                "start_s": plan.start_time,
                "duration_s": plan.duration,
                "ramp_s": plan.ramp,
                "axis_ramps_s": tuple(float(r) for r in plan.axis_ramp[plan.moving]),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SegmentStatistics:
    name: str
    segments: object  # pandas DataFrame, one row per segment (segment_table)
    n_waypoints: int
    n_segments: int
    n_three_joint_segments: int
    max_moving_arm_joints: int
    commanded_duration_s: float  # segments plus the final dwell
    ramps_s: np.ndarray  # effective ramp durations, one per ramp: two per moving axis and segment

    def ramp_samples(self, ts: float) -> np.ndarray:
        """Samples each ramp carries at interval ts: floor(r / ts), the sampling intervals it
        spans."""
        return np.floor(self.ramps_s / ts + 1e-9)

    def share_of_ramps_below(self, ts: float, n_samples: int = 3) -> float:
        """The share of acceleration ramps shorter than `n_samples` samples at interval `ts` (s)."""
        counts = self.ramp_samples(ts)
        return float(np.mean(counts < n_samples)) if len(counts) else 0.0


def segment_statistics(cmd: CommandFile) -> SegmentStatistics:
    """Counts and timings of the command file's segments (Appendix B tables)."""
    table = segment_table(cmd)
    axis_ramps = [r for ramps in table.axis_ramps_s for r in ramps]
    return SegmentStatistics(
        name=cmd.name,
        segments=table,
        n_waypoints=cmd.n_waypoints,
        n_segments=len(table),
        n_three_joint_segments=int((table.n_moving_arm_joints == 3).sum()),
        max_moving_arm_joints=int(table.n_moving_arm_joints.max()),
        commanded_duration_s=commanded_duration(cmd),
        ramps_s=np.repeat(np.array(axis_ramps, dtype=float), 2),
    )
