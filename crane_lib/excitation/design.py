"""The excitation set (paper Sec. V-A, Appendix B-C..B-G) as command files.

Tables XIII-XV lost their bodies in the text we have; the tables below are our reconstruction
from the prose of B-C..B-F, and every choice is listed with its evidence in
book/register_excitation.md. The pieces:

* postures q̄0 (straightened), q̄A (Fig. 1, θ4 = -90°), q̄B (θ4 = -150°), q̄C (θ2 = +60°, θ4 =
-150°),
  the wrist offset w = -89° e6;
* the single-joint block S(q̄) of ten primitives (Table XIII);
* the pair blocks Πα, Πβ, Πγ: six adjacent-pair primitives and one hand primitive (Table XIV);
* the eleven block sequences shared by PA/PB/PC, the AP and AG families (Table XV);
* the validation trajectories V01-V03 (B-G).

Rows are built by walking a "current posture": a primitive's rows are its excursion points;
a change of home posture between primitives is commanded as rows of its own (arm joints
first, then the wrist offset; the offset is removed first when leaving it), except where
B-D/B-E say the files merge it into the next outbound leg. Run ``python -m
crane_lib.excitation.design``
to regenerate trajectories/.

Everything arm-specific that the row builders read (postures, primitives, pair blocks, the
one-sided axes, the wrist and hand axes, the limits, the command format) is one `BlockDesign`;
`CRANE_X7_DESIGN`, built from the tables below, is the default of every builder, and
`crane_lib.excitation.arms` builds the same blocks for other arms through the same code.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib.constants import N_AXES
from crane_lib.excitation.commands import (
    CRANE_X7_FORMAT,
    FINAL_POSTURE_DEG,
    FINAL_SPEED_PERCENT,
    START_POSTURE_DEG,
    SUFFIX,
    CommandFile,
    CommandFormat,
    commanded_duration,
    segment_statistics,
    write_command_file,
)
from crane_lib.model.robot_description import joint_limits_rad
from crane_lib.paths import TRAJECTORY_DIR

DELTA_DEG = 60.0  # sweep and pair amplitude δ (Tables XIII, XIV)
WRIST_AXIS = 6
HAND_AXIS = 8


def _posture(**angles_deg) -> np.ndarray:
    q = np.zeros(N_AXES)
    for key, value in angles_deg.items():
        q[int(key[1:]) - 1] = value
    return q


def _unit(axis: int) -> np.ndarray:
    return _posture(**{f"j{axis}": 1.0})


# nominal postures, degrees (axes 1..7 and hand)
Q0 = _posture()  # the arm straightened
QA = START_POSTURE_DEG.copy()  # Fig. 1 posture, assumed at the start of every file
QB = _posture(j4=-150.0)  # elbow folded
QC = _posture(j2=60.0, j4=-150.0)  # shoulder up, elbow folded: most severe for the PD audit
W = _posture(j6=-89.0)  # wrist offset w = -89° e6
E2 = _unit(2)
POSTURES = {"0": Q0, "A": QA, "B": QB, "C": QC}
assert np.array_equal(Q0, FINAL_POSTURE_DEG)

# speed levels: fractions of the per-axis velocity ceiling
PROXIMAL_SPEED = 0.75  # pairs (1,2), (2,3), (3,4) at the normal level
DISTAL_SPEED = 0.90  # pairs (4,5), (5,6), (6,7) and the hand at the normal level
SINGLE_JOINT_SPEED = 0.75  # S block at the normal level (not stated in the text; see the register)
REDUCED_LEVELS = (0.30, 0.60)
NORMAL = "normal"


# ------------------------------------------------------------------ Table XIII: S(q̄)


@dataclass(frozen=True)
class SingleJointPrimitive:
    number: int
    axis: int
    held: tuple[tuple[int, float], ...] = ()  # (axis, absolute angle) displaced while it runs

    @property
    def label(self) -> str:
        """The primitive as printed ("axis 5 with θ6 = -89°")."""
        if self.axis == HAND_AXIS:
            return "hand"
        held = ", ".join(f"θ{a} = {v:g}°" for a, v in self.held)
        return f"axis {self.axis}" + (f" with {held}" if held else "")


SINGLE_JOINT_PRIMITIVES = (
    SingleJointPrimitive(1, 1),
    SingleJointPrimitive(2, 2),
    SingleJointPrimitive(3, 3),
    SingleJointPrimitive(4, 4),
    SingleJointPrimitive(5, 5),
    SingleJointPrimitive(6, 5, ((6, -89.0),)),
    SingleJointPrimitive(7, 6),
    SingleJointPrimitive(8, 6, ((5, -90.0),)),
    SingleJointPrimitive(9, 7),
    SingleJointPrimitive(10, HAND_AXIS),
)


def sweep_angles(axis: int, nominal: float, limits_deg: np.ndarray, design=None) -> list[float]:
    """Absolute angles one sweep visits after leaving `nominal`, ending back at nominal.

    Arm axes other than 4 sweep about their zero, -δ first: nominal -> -δ -> +δ -> nominal.
    B-D says the Posture-C order +60 -> 0 -> -60 -> +60 "visits the same three angles as at
    Postures A and B, in a rotated order", and the only order of which it is a rotation is
    0 -> -60 -> +60 -> 0. Axis 4, whose zero is a joint limit, sweeps ±δ about its nominal
    angle and only to the side inside the range (B-D). A nominal that already sits on an
    endpoint is swept through the centre to the other endpoint and back (axis 2 at Posture C).
    The hand sweeps one-sided by δ to the side with room, + first (the CRANE-X7's range is
    -5°..90°: +δ); where neither side has δ, to the whole degree inside the roomier side's
    limit. `design` (default the CRANE-X7's) names the hand axis and the axes that, like axis 4,
    sweep about their nominal angle; `limits_deg` None: the design's own for the hand.
    """
    design = CRANE_X7_DESIGN if design is None else design
    if axis == design.hand_axis:
        lo, hi = design.limits_deg[axis - 1] if limits_deg is None else limits_deg
        if nominal + DELTA_DEG <= hi:
            return [nominal + DELTA_DEG, nominal]
        if nominal - DELTA_DEG >= lo:
            return [nominal - DELTA_DEG, nominal]
        room = float(np.trunc(hi - nominal if hi - nominal >= nominal - lo else lo - nominal))
        return [nominal + room, nominal]
    lo, hi = limits_deg
    centre = nominal if axis in design.one_sided_axes else 0.0
    upper, lower = centre + DELTA_DEG, centre - DELTA_DEG
    if np.isclose(nominal, upper):
        return [centre, lower, nominal]
    sides = [a for a in (lower, upper) if lo <= a <= hi]
    return sides + [nominal]


# ------------------------------------------------------------------ Table XIV: pair blocks


@dataclass(frozen=True)
class PairPrimitive:
    first_axis: int  # the pair is (first_axis, first_axis + 1)
    home: tuple[float, ...]  # degrees, 8 values
    sign: int  # direction s applied to both joints
    merged_entry: bool = False  # the posture change rides on the outbound leg (B-E)
    second_sign: int | None = None  # other arms: the second joint's own direction (None: sign)

    @property
    def axes(self) -> tuple[int, int]:
        """The two axes the pair moves."""
        return (self.first_axis, self.first_axis + 1)

    @property
    def proximal(self) -> bool:
        """Whether the pair is proximal (first axis 1 to 3)."""
        return self.first_axis <= 3

    def excursion(self) -> np.ndarray:
        """The pair's excursion target (°)."""
        both = np.zeros(len(self.home))
        both[self.first_axis - 1] = self.sign
        both[self.first_axis] = self.sign if self.second_sign is None else self.second_sign
        return np.array(self.home) + DELTA_DEG * both


@dataclass(frozen=True)
class PairBlock:
    name: str
    pairs: tuple[PairPrimitive, ...]
    hand_home: tuple[float, ...]


def _pair(axis, home, sign, merged=False):
    return PairPrimitive(axis, tuple(float(x) for x in home), sign, merged)


PI_ALPHA = PairBlock(
    "Πα",
    (
        _pair(1, Q0, +1),
        _pair(2, Q0, +1),
        _pair(3, Q0, -1),
        _pair(4, Q0, -1),
        _pair(5, Q0, +1),
        _pair(6, Q0, +1),
    ),
    tuple(Q0),
)
PI_BETA = PairBlock(
    "Πβ",
    (
        _pair(1, QB, +1),
        _pair(2, QB, +1),
        _pair(3, Q0, -1, merged=True),
        _pair(4, QB + W, +1),
        _pair(5, Q0 + W, +1),
        _pair(6, QB + W, +1),
    ),
    tuple(QB + W),
)
PI_GAMMA = PairBlock(
    "Πγ",
    (
        _pair(1, QB + W - 60 * E2, +1),
        _pair(2, QB + W - 60 * E2, +1),
        _pair(3, Q0 + W - 60 * E2, -1, merged=True),
        _pair(4, QB + W + 60 * E2, +1, merged=True),
        _pair(5, Q0 + W + 60 * E2, +1),
        _pair(6, QB + W + 60 * E2, +1),
    ),
    tuple(QB + W + 60 * E2),
)
PAIR_BLOCKS = {"alpha": PI_ALPHA, "beta": PI_BETA, "gamma": PI_GAMMA}


# ------------------------------------------------------------------ one arm's design


@dataclass(frozen=True, eq=False)
class BlockDesign:
    """What the block builders read of one arm: postures, primitives, pair blocks, axes, format."""

    postures: dict  # "0", "A", "B", "C" -> (n_axes,) degrees; files start at "A", end at "0"
    single_joint_primitives: tuple[SingleJointPrimitive, ...]
    pair_blocks: dict  # "alpha", "beta", "gamma" -> PairBlock
    limits_deg: np.ndarray  # (n_axes, 2)
    one_sided_axes: tuple[int, ...]  # sweep ±δ about the nominal angle, the side inside the range
    last_proximal_axis: int  # pairs starting at or before it run at PROXIMAL_SPEED
    wrist_axis: int | None  # its offset is commanded in a row of its own (E-9); None: no offset
    hand_axis: int | None
    command_format: CommandFormat
    generator: str = "crane_lib.excitation.design (paper Appendix B)"  # the files' comment


# ------------------------------------------------------------------ Table XV: composition


@dataclass(frozen=True)
class Block:
    kind: str  # "S" or a key of PAIR_BLOCKS
    posture: str = ""  # A, B or C for "S"
    level: object = NORMAL  # "normal" or a reduced fraction

    @property
    def label(self) -> str:
        """The block as printed ("S(A)", "Πβ@0.30")."""
        base = f"S({self.posture})" if self.kind == "S" else PAIR_BLOCKS[self.kind].name
        return base if self.level == NORMAL else f"{base}@{self.level:.2f}"


@dataclass(frozen=True)
class TrajectorySpec:
    name: str
    blocks: tuple[Block, ...]
    # departures the paper reports in its files (B-E), not implied by Tables XIII-XV
    merge_opening_into_first_pair: bool = False  # AP01 enters Πα straight from q̄A
    merge_wrist_offset_into_gamma: bool = False  # PB05, PB10, PB11

    @property
    def sequence(self) -> str:
        """The trajectory's blocks joined as printed ("S(A) ++ Πα")."""
        return " ++ ".join(b.label for b in self.blocks)


# the eleven rows shared by PA, PB, PC: (pair blocks after S(X), level). One of the 116
# compositions with eleven distinct rows that meet every textual constraint and the paper's
# segment and duration totals (register E-11, tools/table_xv_search.py); chosen as the one
# with the fewest distinct block sequences whose rows 05/10/11 form a speed ladder like
# AP02/AP05/AP04. The counts do not single it out.
FAMILY_ROWS = {
    1: (("alpha", "beta", "gamma"), 0.30),
    2: (("alpha",), 0.60),
    3: (("beta",), 0.60),
    4: (("alpha", "beta"), 0.60),
    5: (("alpha", "gamma"), NORMAL),
    6: (("alpha", "beta"), 0.30),
    7: (("alpha",), 0.30),
    8: (("beta",), 0.30),
    9: (("gamma",), 0.30),
    10: (("alpha", "gamma"), 0.60),
    11: (("alpha", "gamma"), 0.30),
}
PB_WRIST_MERGE_ROWS = (5, 10, 11)  # B-E names PB05, PB10, PB11


def trajectory_specs() -> dict[str, TrajectorySpec]:
    """The 40 identification trajectories as block sequences (Tables XIII-XV)."""
    specs: dict[str, TrajectorySpec] = {}
    for family in "ABC":
        for row, (pairs, level) in FAMILY_ROWS.items():
            name = f"P{family}{row:02d}"
            blocks = (Block("S", family, level),) + tuple(Block(p, "", level) for p in pairs)
            merge = family == "B" and row in PB_WRIST_MERGE_ROWS
            specs[name] = TrajectorySpec(name, blocks, merge_wrist_offset_into_gamma=merge)
    specs["AP01"] = TrajectorySpec("AP01", (Block("alpha"),), merge_opening_into_first_pair=True)
    specs["AP02"] = TrajectorySpec("AP02", (Block("gamma"),))
    specs["AP03"] = TrajectorySpec("AP03", (Block("beta"),))
    specs["AP04"] = TrajectorySpec("AP04", (Block("gamma", level=0.30),))
    specs["AP05"] = TrajectorySpec("AP05", (Block("gamma", level=0.60),))
    specs["AG01"] = TrajectorySpec("AG01", (Block("alpha"), Block("beta"), Block("gamma")))
    specs["AG02"] = TrajectorySpec(
        "AG02",
        tuple(Block("S", p) for p in "ABC") + (Block("alpha"), Block("beta"), Block("gamma")),
    )
    return specs


IDENTIFICATION_NAMES = tuple(trajectory_specs())
VALIDATION_NAMES = ("V01", "V02", "V03")


# ------------------------------------------------------------------ building rows


class _RowWriter:
    """Appends waypoint rows (degrees, percent) while tracking the commanded posture."""

    def __init__(self, design=None):
        self.design = CRANE_X7_DESIGN if design is None else design
        self.current = self.design.postures["A"].copy()
        self.rows: list[np.ndarray] = []
        self.speeds: list[float] = []

    def go(self, q, fraction: float) -> None:
        q = np.array(q, dtype=float)
        self.rows.append(q)
        self.speeds.append(round(100.0 * fraction, 6))
        self.current = q

    def change_posture(self, target, fraction: float, one_joint_at_a_time: bool = False) -> None:
        """Own rows for a posture change: other axes first, then the wrist axis 6; when
        the wrist offset is being removed, axis 6 goes first. With `one_joint_at_a_time`
        (the single-joint blocks, E-9) every row moves one joint, in axis order."""
        target = np.asarray(target, dtype=float)
        if np.allclose(self.current, target):
            return
        if one_joint_at_a_time:
            for axis in np.flatnonzero(~np.isclose(self.current, target)):
                q = self.current.copy()
                q[axis] = target[axis]
                self.go(q, fraction)
            return
        wrist = self.design.wrist_axis
        if wrist is None:
            self.go(target, fraction)
            return
        wrist_changes = not np.isclose(self.current[wrist - 1], target[wrist - 1])
        others = target.copy()
        others[wrist - 1] = self.current[wrist - 1]
        removing = wrist_changes and np.isclose(target[wrist - 1], 0.0)
        if removing:
            wrist_first = self.current.copy()
            wrist_first[wrist - 1] = target[wrist - 1]
            self.go(wrist_first, fraction)
            if not np.allclose(self.current, target):
                self.go(target, fraction)
            return
        if not np.allclose(self.current, others):
            self.go(others, fraction)
        if wrist_changes:
            self.go(target, fraction)


def _limits_deg() -> np.ndarray:
    return np.degrees(joint_limits_rad())


CRANE_X7_DESIGN = BlockDesign(
    postures=POSTURES,
    single_joint_primitives=SINGLE_JOINT_PRIMITIVES,
    pair_blocks=PAIR_BLOCKS,
    limits_deg=_limits_deg(),
    one_sided_axes=(4,),
    last_proximal_axis=3,
    wrist_axis=WRIST_AXIS,
    hand_axis=HAND_AXIS,
    command_format=CRANE_X7_FORMAT,
)


def _single_joint_block(out: _RowWriter, posture: str, fraction: float) -> None:
    design = out.design
    nominal = design.postures[posture]
    limits = design.limits_deg
    out.change_posture(nominal, fraction, one_joint_at_a_time=True)
    merge_pending = False
    for prim in design.single_joint_primitives:
        # the hand primitive runs at q̄A in the A block, at q̄0 in the B and C blocks (B-D)
        hand_home = design.postures["A" if posture == "A" else "0"]
        base = (hand_home if prim.axis == design.hand_axis else nominal).copy()
        for axis, angle in prim.held:
            base[axis - 1] = angle
        if not merge_pending:
            out.change_posture(base, fraction, one_joint_at_a_time=True)
        merge_pending = False
        angles = sweep_angles(prim.axis, base[prim.axis - 1], limits[prim.axis - 1], design)
        # a sweep starting on its +δ end (axis 2 at Posture C) returns there on the next
        # primitive's outbound leg (B-D)
        merge_return = (
            prim.axis != design.hand_axis
            and prim.axis not in design.one_sided_axes
            and np.isclose(base[prim.axis - 1], DELTA_DEG)
        )
        if merge_return:
            angles = angles[:-1]
        for angle in angles:
            q = base.copy()
            q[prim.axis - 1] = angle
            out.go(q, fraction)
        merge_pending = merge_return
        if prim.held:  # release the held joint before the next primitive
            out.change_posture(nominal, fraction, one_joint_at_a_time=True)


def _pair_block(
    out: _RowWriter, block: PairBlock, level, merge_first_entry: bool, merge_wrist: bool
) -> None:
    design = out.design
    for k, pair in enumerate(block.pairs):
        proximal = pair.first_axis <= design.last_proximal_axis
        fraction = (PROXIMAL_SPEED if proximal else DISTAL_SPEED) if level == NORMAL else level
        home = np.array(pair.home)
        if k == 0 and merge_wrist:
            # PB05/10/11: arm joints to the home, then the wrist offset rides on the first excursion
            arm_only = home.copy()
            arm_only[design.wrist_axis - 1] = out.current[design.wrist_axis - 1]
            out.change_posture(arm_only, fraction)
        elif not (pair.merged_entry or (k == 0 and merge_first_entry)):
            out.change_posture(home, fraction)
        out.go(pair.excursion(), fraction)
        out.go(home, fraction)
    fraction = DISTAL_SPEED if level == NORMAL else level
    hand = design.hand_axis
    if hand is None:
        return
    hand_home = np.array(block.hand_home)
    out.change_posture(hand_home, fraction)
    for angle in sweep_angles(hand, hand_home[hand - 1], None, design):
        q = hand_home.copy()
        q[hand - 1] = angle
        out.go(q, fraction)


def _finish(out: _RowWriter, fraction: float) -> None:
    """End at q̄0, then repeat q̄0 at 20 % (B-B)."""
    q0 = out.design.postures["0"]
    out.change_posture(q0, fraction)
    out.go(q0, FINAL_SPEED_PERCENT / 100.0)


def build(spec: TrajectorySpec, design=None) -> CommandFile:
    """The command file of one trajectory spec, for `design`'s arm (default the CRANE-X7)."""
    design = CRANE_X7_DESIGN if design is None else design
    out = _RowWriter(design)
    last_fraction = SINGLE_JOINT_SPEED
    for b, block in enumerate(spec.blocks):
        if block.kind == "S":
            last_fraction = SINGLE_JOINT_SPEED if block.level == NORMAL else block.level
            _single_joint_block(out, block.posture, last_fraction)
        else:
            first = b == 0
            _pair_block(
                out,
                design.pair_blocks[block.kind],
                block.level,
                merge_first_entry=first and spec.merge_opening_into_first_pair,
                merge_wrist=block.kind == "gamma" and spec.merge_wrist_offset_into_gamma,
            )
            last_fraction = DISTAL_SPEED if block.level == NORMAL else block.level
    _finish(out, last_fraction)
    comments = (f"{spec.name}: {spec.sequence}", f"generated by {design.generator}")
    return CommandFile(
        spec.name,
        np.radians(np.array(out.rows)),
        np.array(out.speeds),
        comments,
        command_format=design.command_format,
    )


# ------------------------------------------------------------------ validation (B-G)

VALIDATION_AMPLITUDE_DEG = 45.0
VALIDATION_CENTRE = QA  # ±45° about the start posture keeps axis 4 inside [-159°, 0°]
VALIDATION_LEVELS = (0.30, 0.60, 0.75)
V01_LEVEL = 0.60
# cycle counts are not stated (B-G); these make V01-V03 come closest to the paper's 105 s in
# total with three roughly equal lengths (see the register)
V01_CYCLES = 14  # (+45°, -45°) cycles
V02_CYCLES_PER_LEVEL = 5
PROXIMAL_GROUP = (1, 2, 3, 4)
DISTAL_GROUP = (4, 5, 6, 7)
WRIST_GROUP = (5, 6, 7)
SHOULDER_PAIR = (1, 2)
WRIST_PAIR = (6, 7)


def _offset(axes_signs: dict[int, int]) -> np.ndarray:
    """Centre + 45° · sign on the given arm axes; the hand opens to +45° on any '+' pose."""
    q = VALIDATION_CENTRE.copy()
    for axis, sign in axes_signs.items():
        q[axis - 1] += sign * VALIDATION_AMPLITUDE_DEG
    if any(s > 0 for s in axes_signs.values()):
        q[HAND_AXIS - 1] = VALIDATION_AMPLITUDE_DEG
    return q


def _all_arm(sign: int) -> np.ndarray:
    return _offset({a: sign for a in range(1, 8)})


def _v01_cycle(out: _RowWriter, fraction: float, cycles: int) -> None:
    for _ in range(cycles):
        out.go(_all_arm(+1), fraction)
        out.go(_all_arm(-1), fraction)
    out.go(VALIDATION_CENTRE, fraction)


def _group_motions(out: _RowWriter, fraction: float) -> None:
    for group in (PROXIMAL_GROUP, DISTAL_GROUP, WRIST_GROUP):
        out.go(_offset({a: +1 for a in group}), fraction)
        out.go(_offset({a: -1 for a in group}), fraction)
        out.go(VALIDATION_CENTRE, fraction)
    # shoulder-wrist alternation: the shoulder pair and the wrist pair in opposite directions
    for sign in (+1, -1):
        out.go(
            _offset({**{a: sign for a in SHOULDER_PAIR}, **{a: -sign for a in WRIST_PAIR}}),
            fraction,
        )
    out.go(VALIDATION_CENTRE, fraction)


def build_validation(name: str) -> CommandFile:
    """The validation command file `name` (V01-V03, Appendix B-G)."""
    out = _RowWriter()
    if name == "V01":
        _v01_cycle(out, V01_LEVEL, V01_CYCLES)
        text, last = (
            f"V01: all seven arm joints and the hand, ±45° about q̄A, {V01_CYCLES} cycles at "
            f"{V01_LEVEL:.2f}",
            V01_LEVEL,
        )
    elif name == "V02":
        for level in VALIDATION_LEVELS:
            _v01_cycle(out, level, V02_CYCLES_PER_LEVEL)
        text, last = (
            f"V02: the V01 waypoints, {V02_CYCLES_PER_LEVEL} cycles at each of {VALIDATION_LEVELS}",
            VALIDATION_LEVELS[-1],
        )
    elif name == "V03":
        for level in VALIDATION_LEVELS:
            _group_motions(out, level)
        text, last = (
            "V03: four-joint groups, wrist group, shoulder-wrist alternation at each of "
            f"{VALIDATION_LEVELS}",
            VALIDATION_LEVELS[-1],
        )
    else:
        raise KeyError(f"no validation trajectory {name!r}; expected one of {VALIDATION_NAMES}")
    _finish(out, last)
    comments = (text, "generated by crane_lib.excitation.design (paper Appendix B-G)")
    return CommandFile(name, np.radians(np.array(out.rows)), np.array(out.speeds), comments)


# ------------------------------------------------------------------ the whole set


def generate_identification() -> dict[str, CommandFile]:
    """Every identification command file, built from its specification."""
    return {name: build(spec) for name, spec in trajectory_specs().items()}


def generate_validation() -> dict[str, CommandFile]:
    """The validation command files V01-V03."""
    return {name: build_validation(name) for name in VALIDATION_NAMES}


def generate_all() -> dict[str, CommandFile]:
    """The 40 identification trajectories and V01-V03, name -> CommandFile."""
    return {**generate_identification(), **generate_validation()}


def write_all(directory=TRAJECTORY_DIR) -> list[Path]:
    """Write `<directory>/<NAME>.txt` for every trajectory; each file is written atomically."""
    directory = Path(directory)
    return [
        write_command_file(directory / f"{name}{SUFFIX}", cmd)
        for name, cmd in generate_all().items()
    ]


# ------------------------------------------------------------------ tables and counts


def table_single_joint_block():
    """Table XIII (reconstructed): the ten primitives and the angles they visit per posture."""
    import pandas as pd

    limits = _limits_deg()
    rows = []
    for prim in SINGLE_JOINT_PRIMITIVES:
        row = {"#": prim.number, "primitive": prim.label}
        for posture in "ABC":
            nominal = POSTURES[posture]
            base = (
                (QA if posture == "A" else Q0).copy() if prim.axis == HAND_AXIS else nominal.copy()
            )
            for axis, angle in prim.held:
                base[axis - 1] = angle
            start = base[prim.axis - 1]
            angles = [start] + sweep_angles(prim.axis, start, limits[prim.axis - 1])
            row[f"Posture {posture}"] = " → ".join(f"{a:+g}" for a in angles)
        rows.append(row)
    return pd.DataFrame(rows).set_index("#")


def _posture_label(q) -> str:
    q = np.asarray(q, dtype=float)
    for base_name, base in (("q̄0", Q0), ("q̄B", QB)):
        for w_name, w in (("", 0 * W), (" + w", W)):
            diff = q - base - w
            if np.allclose(diff, 0):
                return base_name + w_name
            if np.allclose(diff, diff[1] * E2):
                return f"{base_name}{w_name} {diff[1]:+g}°·e2"
    return " ".join(f"{x:g}" for x in q)


def table_pair_blocks():
    """Table XIV (reconstructed): home posture and sign s of each pair primitive, and its speed."""
    import pandas as pd

    rows = []
    for k in range(6):
        pairs = [block.pairs[k] for block in PAIR_BLOCKS.values()]
        row = {"pair": f"({pairs[0].first_axis},{pairs[0].first_axis + 1})"}
        for block, pair in zip(PAIR_BLOCKS.values(), pairs):
            merged = " (entry merged)" if pair.merged_entry else ""
            row[block.name] = (
                f"{_posture_label(pair.home)}, s = {'+' if pair.sign > 0 else '−'}{merged}"
            )
        row["speed (normal level)"] = PROXIMAL_SPEED if pairs[0].proximal else DISTAL_SPEED
        rows.append(row)
    hand = {"pair": "hand"}
    for block in PAIR_BLOCKS.values():
        hand[block.name] = _posture_label(block.hand_home)
    hand["speed (normal level)"] = DISTAL_SPEED
    rows.append(hand)
    return pd.DataFrame(rows).set_index("pair")


def table_composition():
    """Table XV (reconstructed): block sequence of every identification trajectory."""
    import pandas as pd

    rows = []
    for row, (pairs, level) in FAMILY_ROWS.items():
        seq = " ++ ".join(["S(X)"] + [PAIR_BLOCKS[p].name for p in pairs])
        rows.append(
            {
                "trajectory": f"PX{row:02d}",
                "block sequence": seq,
                "level": level if level == NORMAL else f"{level:.2f}",
            }
        )
    for name, spec in trajectory_specs().items():
        if name.startswith("P"):
            continue
        levels = {b.level for b in spec.blocks}
        level = levels.pop() if len(levels) == 1 else "mixed"
        rows.append(
            {
                "trajectory": name,
                "block sequence": spec.sequence.replace("@0.30", "").replace("@0.60", ""),
                "level": level if level in (NORMAL, "mixed") else f"{level:.2f}",
            }
        )
    return pd.DataFrame(rows).set_index("trajectory")


def mean_commanded_speed(cmd: CommandFile) -> float:
    """Arm-joint travel summed over axes 1-7 divided by the commanded duration, rad/s."""
    starts, targets = cmd.segment_endpoints()
    travel = np.abs(targets - starts)[:, :7].sum()
    return float(travel / commanded_duration(cmd))


@dataclass(frozen=True)
class SetCounts:
    """The counts of B-E/B-F/VII-D computed over a set of identification files."""

    n_files: int
    n_segments: int
    n_three_joint_segments: int
    max_moving_arm_joints: int
    three_joint_files: dict  # name -> number of three-joint segments
    files_without_three_joint: tuple
    total_duration_s: float
    slowest: str  # lowest mean commanded speed
    ramp_median_s: float
    ramp_min_s: float
    undersampled_share: dict  # ts -> (min, max) over files of the share of ramps with < 3 samples
    undersampled_by_file: dict  # ts -> {file: share of its ramps with < 3 samples}


def set_counts(
    cmds: dict, sampling_intervals=(0.010, 0.020, 0.040, 0.080), stats: dict | None = None
) -> SetCounts:
    """The counts over `cmds`; `stats` (name -> SegmentStatistics) when already computed."""
    stats = (
        {name: segment_statistics(cmd) for name, cmd in cmds.items()} if stats is None else stats
    )
    ramps = np.concatenate([s.ramps_s for s in stats.values()])
    shares = {
        ts: {n: s.share_of_ramps_below(ts) for n, s in stats.items()} for ts in sampling_intervals
    }
    speeds = {name: mean_commanded_speed(cmd) for name, cmd in cmds.items()}
    return SetCounts(
        n_files=len(cmds),
        n_segments=sum(s.n_segments for s in stats.values()),
        n_three_joint_segments=sum(s.n_three_joint_segments for s in stats.values()),
        max_moving_arm_joints=max(s.max_moving_arm_joints for s in stats.values()),
        three_joint_files={
            n: s.n_three_joint_segments for n, s in stats.items() if s.n_three_joint_segments
        },
        files_without_three_joint=tuple(
            n for n, s in stats.items() if s.n_three_joint_segments == 0
        ),
        total_duration_s=sum(s.commanded_duration_s for s in stats.values()),
        slowest=min(speeds, key=speeds.get),
        ramp_median_s=float(np.median(ramps)),
        ramp_min_s=float(ramps.min()),
        undersampled_share={ts: (min(v.values()), max(v.values())) for ts, v in shares.items()},
        undersampled_by_file=shares,
    )


def main(argv=None) -> int:
    """Regenerate the command files into a folder."""
    parser = argparse.ArgumentParser(
        description="Regenerate the CRANE-X7 command files (paper Appendix B)."
    )
    parser.add_argument("directory", nargs="?", default=str(TRAJECTORY_DIR))
    args = parser.parse_args(argv)
    paths = write_all(args.directory)
    print(f"wrote {len(paths)} command files to {args.directory}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
