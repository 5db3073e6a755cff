"""The schema of an arm's description folder, and the one reader that checks it before any use.

A folder arm (`arm_description.load_urdf_arm`) is four files: `arm.toml`, `joints.csv`,
`links.csv` and `actuators.csv`. `read_folder` reads all four as UTF-8 text and checks every
field against the schema below (type, unit, shape, range, required or optional) before any
description is built; bad input raises `InputError` naming the file, the key (arm.toml) or the
line and column (a CSV) and what was expected. Every value is used or refused: an unknown key or
column, a value where none is used (a fixed joint's axis, a massless link's centre of mass, an
actuator no axis drives, gripper limits without a gripper) is refused.

arm.toml (SI units, radians; a number may be written as a TOML integer or float, never a string):

    name                string, required: the arm's name
    root_link           string, required: frame 0's link, the root of joints.csv's tree
    arm_joints          list of strings, required: the arm's joints of joints.csv, base to tip
    gripper_joint       string, optional: the gripper's joint of joints.csv
    gripper_limits_rad  [lower, upper] rad, optional (with gripper_joint, whose row in
                        joints.csv then has no limits): lower < upper
    mounting            "hanging" or "upright", required
    gravity_direction   [x, y, z], required: a unit vector along x, y or z of the root frame
    audit_domain_rad    one [lower, upper] rad per arm joint, optional: lower < upper
    [controller]        required: k_p (s^-2), k_v (s^-1), k_i (s^-3), each > 0; or
                        encoder_noise_fraction in (0, 1] alone
    drive_mode          "current" or "position", optional (absent: "current"): how the axes are
                        driven, by the host's current commands through [controller] (the paper's
                        path) or by the servos' own position loop ([position_loop])
    [position_loop]     required with drive_mode = "position"; with "current", the loop the
                        servos run when switched to position mode (model.position_loop):
                        firmware      "dynamixel_x" or "feetech_sts": the register scales
                        p_gain, i_gain, d_gain   the position P, I, D gain registers, integers
                                      0..16383 (dynamixel_x) or 0..254 (feetech_sts)
                        pwm_limit     the largest PWM duty, a fraction of the supply in (0, 1]
                        profile_velocity_rad_s        the profile's speed limit, rad/s >= 0
                                                      (0: none)
                        profile_acceleration_rad_s2   its acceleration limit, rad/s^2 >= 0
                                                      (0: none)
                        period_s      the servo loop's tick, s, in (0, 0.1]
                        source        where the settings come from (string)
    [bus]               optional: protocol (string), baud (integer bit/s, 1..10500000), source
    [[axis]]            required, one per arm joint then the gripper, in that order:
                        joint, actuator (a model of actuators.csv), ids (servo IDs 0..252, the
                        first the primary; required with [bus], unique over the arm), reverse
                        (one true/false per ID, optional)

joints.csv, links.csv, actuators.csv: the columns of JOINT_COLUMNS, LINK_COLUMNS and
ACTUATOR_COLUMNS (name, meaning, unit, range); '#' lines are comments.
"""

from __future__ import annotations

import csv
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crane_lib.errors import SMALL_INPUT_MAX_BYTES, InputError, parse_number, read_input_text, shown
from crane_lib.paths import portable

MOUNTINGS = ("hanging", "upright")  # dynamics.MOUNTINGS: the two mountings gravity_sign knows
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
MAX_BAUD = 10_500_000  # bit/s: the fastest DYNAMIXEL rate
MAX_SERVO_ID = 252  # DYNAMIXEL IDs 0..252 (253 and 254 are reserved)


@dataclass(frozen=True)
class Key:
    """One key of arm.toml: its kind, whether it is required, what it means, unit, range."""

    kind: str  # string, strings, choice, number, integer, numbers, integers, booleans, table(s)
    required: bool
    meaning: str
    unit: str = ""
    shape: tuple = ()  # numbers: e.g. (2,), (3,), ("arm_joints", 2)
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low excluded
    choices: tuple[str, ...] = ()
    keys: dict = field(default_factory=dict)  # table(s): the keys of the table

    def expected(self, shape: tuple | None = None) -> str:
        """What a valid value is, in words (the message's 'expected' part); `shape`: the shape
        of a list of numbers with its sizes resolved (audit_domain_rad: the arm's joints)."""
        shape = self.shape if shape is None else shape
        kind = {
            "string": "a non-empty string",
            "strings": "a list of distinct non-empty strings",
            "choice": f"one of {', '.join(repr(c) for c in self.choices)}",
            "number": "a finite number",
            "integer": "an integer",
            "numbers": f"a list of finite numbers of shape {_shape_text(shape)}",
            "integers": "a list of distinct integers",
            "booleans": "a list of true or false",
            "table": f"a table with the keys {', '.join(self.keys)}",
            "tables": f"an array of tables with the keys {', '.join(self.keys)}",
        }[self.kind]
        bounds = ""
        if self.low is not None or self.high is not None:
            low = (
                "" if self.low is None else f"{_bound(self.low)} {'<' if self.low_open else '<='} "
            )
            high = "" if self.high is None else f" <= {_bound(self.high)}"
            bounds = f", {low}value{high}"
        unit = f" in {self.unit}" if self.unit else ""
        return f"{self.meaning}: {kind}{unit}{bounds}"


def _bound(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


CONTROLLER_KEYS = {
    "k_p": Key("number", False, "the position gain K_P", "s^-2", low=0.0, low_open=True),
    "k_v": Key("number", False, "the velocity gain K_V", "s^-1", low=0.0, low_open=True),
    "k_i": Key("number", False, "the integral gain K_I", "s^-3", low=0.0, low_open=True),
    "encoder_noise_fraction": Key(
        "number",
        False,
        "the share of each torque limit one encoder count may take (the gains' rule)",
        low=0.0,
        low_open=True,
        high=1.0,
    ),
}
BUS_KEYS = {
    "protocol": Key("string", True, "the servos' protocol"),
    "baud": Key("integer", True, "the bus's baud rate", "bit/s", low=1, high=MAX_BAUD),
    "source": Key("string", True, "where the bus settings come from"),
}
AXIS_KEYS = {
    "joint": Key("string", True, "the axis's joint (arm joints, then the gripper)"),
    "actuator": Key("string", True, "the axis's servo model (a model of actuators.csv)"),
    "ids": Key(
        "integers",
        False,
        "the servo IDs driving the axis, the primary first",
        low=0,
        high=MAX_SERVO_ID,
    ),
    "reverse": Key("booleans", False, "per ID, the Drive Mode reverse bit"),
}
DRIVE_MODES = ("current", "position")  # position_loop.DRIVE_MODES
FIRMWARES = ("dynamixel_x", "feetech_sts")  # position_loop.FIRMWARE_SCALES
FIRMWARE_REGISTER_MAX = {"dynamixel_x": 16383, "feetech_sts": 254}
POSITION_LOOP_KEYS = {
    "firmware": Key(
        "choice", True, "the servo firmware whose scales the gain registers take", choices=FIRMWARES
    ),
    "p_gain": Key("integer", True, "the position P gain register", low=0, high=16383),
    "i_gain": Key("integer", True, "the position I gain register", low=0, high=16383),
    "d_gain": Key("integer", True, "the position D gain register", low=0, high=16383),
    "pwm_limit": Key(
        "number",
        True,
        "the largest PWM duty, a fraction of the supply",
        low=0.0,
        low_open=True,
        high=1.0,
    ),
    "profile_velocity_rad_s": Key(
        "number", True, "the profile's speed limit (0: none)", "rad/s", low=0.0
    ),
    "profile_acceleration_rad_s2": Key(
        "number", True, "the profile's acceleration limit (0: none)", "rad/s^2", low=0.0
    ),
    "period_s": Key("number", True, "the servo loop's tick", "s", low=0.0, low_open=True, high=0.1),
    "source": Key("string", True, "where the loop's settings come from"),
}
ARM_TOML_KEYS = {
    "name": Key("string", True, "the arm's name"),
    "root_link": Key("string", True, "the link of frame 0, the root of joints.csv's tree"),
    "arm_joints": Key("strings", True, "the arm's joints of joints.csv, base to tip"),
    "gripper_joint": Key("string", False, "the gripper's joint of joints.csv"),
    "gripper_limits_rad": Key(
        "numbers", False, "the gripper's [lower, upper], lower < upper", "rad", shape=(2,)
    ),
    "mounting": Key("choice", True, "how the arm is mounted", choices=MOUNTINGS),
    "gravity_direction": Key(
        "numbers", True, "gravity's unit vector along x, y or z of the root frame", shape=(3,)
    ),
    "audit_domain_rad": Key(
        "numbers",
        False,
        "the audit domain, [lower, upper] per arm joint, lower < upper",
        "rad",
        shape=("arm_joints", 2),
    ),
    "controller": Key(
        "table", True, "the realization gains, or the rule that sets them", keys=CONTROLLER_KEYS
    ),
    "bus": Key("table", False, "the servo bus", keys=BUS_KEYS),
    "drive_mode": Key(
        "choice",
        False,
        "how the axes are driven (absent: current)",
        choices=DRIVE_MODES,
    ),
    "position_loop": Key("table", False, "the servos' own position loop", keys=POSITION_LOOP_KEYS),
    "axis": Key("tables", True, "one [[axis]] per arm joint, then the gripper", keys=AXIS_KEYS),
}


@dataclass(frozen=True)
class Column:
    """One CSV column: meaning, unit, whether a cell may be empty, range of a number."""

    name: str
    kind: str  # "name" (non-empty text), "text", "choice", "number"
    meaning: str
    unit: str = ""
    optional_column: bool = False  # the header may leave it out
    low: float | None = None
    low_open: bool = False

    def expected(self) -> str:
        """What a valid cell is, in words."""
        if self.kind == "name":
            return f"{self.meaning}: a non-empty name"
        if self.kind == "choice":
            return f"{self.meaning}: one of {', '.join(JOINT_TYPES)}"
        if self.kind == "text":
            return f"{self.meaning}: text"
        bound = ""
        if self.low is not None:
            bound = f" {'>' if self.low_open else '>='} {self.low:g}"
        unit = f" in {self.unit}" if self.unit else ""
        return f"{self.meaning}: a finite decimal number{unit}{bound}"


def _numbers(names: str, meaning: str, unit: str, low=None, optional=False) -> list[Column]:
    return [
        Column(n, "number", f"{meaning} {n}", unit, optional_column=optional, low=low)
        for n in names.split()
    ]


JOINT_COLUMNS = [
    Column("joint", "name", "the joint's name"),
    Column("type", "choice", "the joint's URDF type"),
    Column("parent", "name", "the parent link"),
    Column("child", "name", "the child link"),
    *_numbers("origin_x origin_y origin_z", "the origin's", "m"),
    *_numbers("origin_roll origin_pitch origin_yaw", "the origin's", "rad"),
    *_numbers("axis_x axis_y axis_z", "the joint axis's (empty for a fixed joint)", ""),
    *_numbers("lower_rad upper_rad", "the joint's limit (rad; m if prismatic; may be empty)", ""),
    *_numbers(
        "velocity effort", "the URDF's limit (empty for a fixed joint)", "", low=0.0, optional=True
    ),
]
LINK_COLUMNS = [
    Column("link", "name", "the link's name"),
    Column("mass_kg", "number", "the link's mass (empty: a massless frame)", "kg", low=0.0),
    *_numbers("com_x com_y com_z", "the centre of mass's", "m"),
    *_numbers("inertial_roll inertial_pitch inertial_yaw", "the inertial frame's", "rad"),
    *_numbers("ixx iyy izz ixy ixz iyz", "the inertia about the centre of mass,", "kg·m^2"),
]
ACTUATOR_COLUMNS = [
    Column("model", "name", "the servo model"),
    Column("kt_N_m_per_A", "number", "the torque constant", "N·m/A", low=0.0, low_open=True),
    Column("current_unit_A", "number", "the current register's unit", "A", low=0.0, low_open=True),
    Column(
        "current_limit_units",
        "number",
        "the current limit in register units",
        "",
        low=0.0,
        low_open=True,
    ),
    Column("velocity_limit_rad_s", "number", "the velocity limit", "rad/s", low=0.0, low_open=True),
    Column("source", "text", "where the values come from"),
]
# cells that may be empty (any other cell must hold a value)
_MAY_BE_EMPTY = {
    "joints.csv": {"axis_x", "axis_y", "axis_z", "lower_rad", "upper_rad", "velocity", "effort"},
    "links.csv": {c.name for c in LINK_COLUMNS[1:]},
    "actuators.csv": {"source"},
}

_ROW_WORD = {"joints.csv": "joint", "links.csv": "link", "actuators.csv": "actuator"}
Row = tuple[str, dict]  # ("file:line", {column: str | float | None})


@dataclass(frozen=True)
class CheckedFolder:
    """An arm's folder with every field checked: arm.toml's values and the CSVs' typed rows."""

    toml: dict
    toml_where: str
    joints: list[Row]
    links: list[Row]
    actuators: list[Row]


# ------------------------------------------------------------------ arm.toml


def read_toml(path: Path) -> dict:
    """arm.toml's table: UTF-8, TOML, at most SMALL_INPUT_MAX_BYTES; the values not yet checked."""
    text = read_input_text(path, "the arm's arm.toml (UTF-8 TOML)", SMALL_INPUT_MAX_BYTES)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(portable(path), f"not TOML ({error})", "a TOML file") from None


def _kind_of(value) -> str:
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a table"
    names = {bool: "a boolean", str: "a string", int: "an integer", float: "a number"}
    return names.get(type(value), f"a TOML {type(value).__name__}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_value(value, spec: Key, where: str, key: str, context: dict):
    """`value` checked against `spec`, normalized (numbers as float, lists as lists)."""
    shape = tuple(len(context["arm_joints"]) if s == "arm_joints" else s for s in spec.shape)

    def refuse(problem: str):
        raise InputError(where, f"key {key!r} {problem}", spec.expected(shape))

    def in_range(number) -> bool:
        if spec.low is not None and (number <= spec.low if spec.low_open else number < spec.low):
            return False
        return spec.high is None or number <= spec.high

    if spec.kind in ("string", "choice"):
        if not isinstance(value, str):
            refuse(f"= {shown(value)} is {_kind_of(value)}")
        if not value.strip():
            refuse("is an empty string")
        if spec.kind == "choice" and value not in spec.choices:
            refuse(f"= {shown(value)}")
        return value
    if spec.kind == "strings":
        if not isinstance(value, list) or not value:
            refuse(f"= {shown(value)} is {_kind_of(value)}, not a non-empty list")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                refuse(f"holds {shown(item)}, {_kind_of(item)}")
        if len(set(value)) != len(value):
            refuse(f"= {value!r} names an entry twice")
        return list(value)
    if spec.kind in ("number", "integer"):
        if spec.kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
            refuse(f"= {shown(value)} is {_kind_of(value)}")
        if not _is_number(value) or not math.isfinite(value):
            refuse(f"= {shown(value)} is {_kind_of(value)}")
        if not in_range(value):
            refuse(f"= {value!r} is out of range")
        return int(value) if spec.kind == "integer" else float(value)
    if spec.kind == "numbers":
        return _check_array(value, shape, refuse)
    if spec.kind in ("integers", "booleans"):
        if not isinstance(value, list) or not value:
            refuse(f"= {shown(value)} is {_kind_of(value)}, not a non-empty list")
        for item in value:
            good = (
                isinstance(item, bool)
                if spec.kind == "booleans"
                else isinstance(item, int) and not isinstance(item, bool) and in_range(item)
            )
            if not good:
                refuse(f"holds {shown(item)}, {_kind_of(item)}")
        if spec.kind == "integers" and len(set(value)) != len(value):
            refuse(f"= {value!r} names an ID twice")
        return list(value)
    if spec.kind == "table":
        if not isinstance(value, dict):
            refuse(f"is {_kind_of(value)}, not a table")
        return _check_table(value, spec.keys, where, f"{key}.", context)
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        refuse(f"is {_kind_of(value)}, not an array of tables [[{key}]]")
    return [
        _check_table(entry, spec.keys, where, f"{key}[{n}].", context)
        for n, entry in enumerate(value, 1)
    ]


def _check_array(value, shape: tuple, refuse) -> list:
    """A nested list of finite numbers of `shape`, as floats."""
    if len(shape) == 0:
        if not _is_number(value) or not math.isfinite(value):
            refuse(f"holds {shown(value)}, {_kind_of(value)}")
        return float(value)
    if not isinstance(value, list) or len(value) != shape[0]:
        size = len(value) if isinstance(value, list) else None
        refuse(
            f"= {shown(value)} is {_kind_of(value)}"
            + ("" if size is None else f" of {size} entries")
        )
    return [_check_array(v, shape[1:], refuse) for v in value]


def _check_table(table: dict, keys: dict[str, Key], where: str, prefix: str, context: dict):
    """Every key of `table` known and valid, every required key present; values normalized."""
    unknown = [k for k in table if k not in keys]
    if unknown:
        raise InputError(
            where,
            f"unknown key {prefix + unknown[0]!r}",
            f"the keys {', '.join(prefix + k for k in keys)}",
        )
    checked = {}
    for name, spec in keys.items():
        if name not in table:
            if spec.required:
                raise InputError(where, f"key {prefix + name!r} missing", spec.expected())
            continue
        checked[name] = _check_value(table[name], spec, where, prefix + name, context)
        if not prefix:
            context[name] = checked[name]
    return checked


def check_arm_toml(table: dict, where: str) -> dict:
    """arm.toml's values checked against ARM_TOML_KEYS and against each other; normalized."""
    context: dict = {}  # the top-level values checked so far (arm_joints before the domain)
    facts = _check_table(table, ARM_TOML_KEYS, where, "", context)
    arm, gripper = facts["arm_joints"], facts.get("gripper_joint")
    if gripper is not None and gripper in arm:
        raise InputError(
            where, f"key 'gripper_joint' = {gripper!r} is an arm joint", "another joint"
        )
    if "gripper_limits_rad" in facts:
        lower, upper = facts["gripper_limits_rad"]
        if gripper is None:
            raise InputError(
                where, "key 'gripper_limits_rad' without 'gripper_joint'", "no limits, no gripper"
            )
        if not lower < upper:
            raise InputError(
                where, f"key 'gripper_limits_rad' = {[lower, upper]}", "lower < upper (rad)"
            )
    direction = facts["gravity_direction"]
    if sorted(abs(g) for g in direction) != [0.0, 0.0, 1.0]:
        raise InputError(
            where,
            f"key 'gravity_direction' = {table['gravity_direction']!r} is not along an axis",
            ARM_TOML_KEYS["gravity_direction"].expected(),
        )
    for n, (lower, upper) in enumerate(facts.get("audit_domain_rad", []), 1):
        if not lower < upper:
            raise InputError(
                where,
                f"key 'audit_domain_rad' row {n} ({arm[n - 1]}) = {[lower, upper]}",
                "lower < upper (rad)",
            )
    _check_controller(facts["controller"], where)
    _check_position_loop(facts, where)
    _check_axes(facts, where)
    return facts


def _check_position_loop(facts: dict, where: str) -> None:
    """drive_mode = "position" has its [position_loop]; each gain fits its firmware's register."""
    loop = facts.get("position_loop")
    if facts.get("drive_mode", "current") == "position" and loop is None:
        raise InputError(
            where,
            "key 'drive_mode' = 'position' without [position_loop]",
            "a [position_loop] table with the keys " + ", ".join(POSITION_LOOP_KEYS),
        )
    if loop is None:
        return
    largest = FIRMWARE_REGISTER_MAX[loop["firmware"]]
    for name in ("p_gain", "i_gain", "d_gain"):
        if loop[name] > largest:
            raise InputError(
                where,
                f"key 'position_loop.{name}' = {loop[name]} ({loop['firmware']})",
                f"a {loop['firmware']} register value 0..{largest}",
            )


def _check_controller(gains: dict, where: str) -> None:
    if set(gains) not in ({"encoder_noise_fraction"}, {"k_p", "k_v", "k_i"}):
        raise InputError(
            where,
            f"[controller] keys {sorted(gains)}",
            "k_p, k_v, k_i, or encoder_noise_fraction alone",
        )


def _check_axes(facts: dict, where: str) -> None:
    axes, gripper = facts["axis"], facts.get("gripper_joint")
    expected = facts["arm_joints"] + ([gripper] if gripper is not None else [])
    if [a["joint"] for a in axes] != expected:
        raise InputError(
            where,
            f"[[axis]] joints {[a['joint'] for a in axes]}",
            f"one [[axis]] per axis in the order {expected}",
        )
    seen: dict[int, str] = {}
    for n, axis in enumerate(axes, 1):
        if "bus" in facts and "ids" not in axis:
            raise InputError(
                where, f"key 'axis[{n}].ids' missing ({axis['joint']})", "the IDs (with [bus])"
            )
        ids = axis.get("ids", [1])
        if "reverse" in axis and len(axis["reverse"]) != len(ids):
            raise InputError(
                where,
                f"key 'axis[{n}].reverse' = {axis['reverse']!r} ({axis['joint']})",
                f"one true or false per ID of {ids}",
            )
        for servo in axis.get("ids", []):
            if servo in seen:
                raise InputError(
                    where,
                    f"key 'axis[{n}].ids': ID {servo} also drives {seen[servo]!r}",
                    "each servo ID on one axis only",
                )
            seen[servo] = axis["joint"]


# ------------------------------------------------------------------ the CSV files


def read_rows(path: Path, columns: list[Column]) -> list[Row]:
    """A CSV file of the folder, every cell checked against `columns`: ("file:line", cells) per
    data row, numbers as floats, empty cells as None; '#' lines and blank lines skipped."""
    what = f"the arm's {path.name} (UTF-8 CSV)"
    text = read_input_text(path, what, SMALL_INPUT_MAX_BYTES)
    shown_path = portable(path)
    lines = [
        (n, line.rstrip("\r"))
        for n, line in enumerate(text.split("\n"), 1)
        if line.strip() and not line.startswith("#")
    ]
    if not lines:
        raise InputError(f"{shown_path}:1", "no header", ",".join(c.name for c in columns))
    by_name = {c.name: c for c in columns}
    header_line, header = lines[0][0], _fields(lines[0], shown_path, columns)
    header_where = f"{shown_path}:{header_line}"
    for name in header:
        if name not in by_name:
            raise InputError(
                header_where, f"unknown column {shown(name)}", f"the columns {list(by_name)}"
            )
    if len(set(header)) != len(header):
        raise InputError(header_where, "a column named twice", "each column once")
    missing = [c.name for c in columns if c.name not in header and not c.optional_column]
    if missing:
        raise InputError(header_where, f"no column {missing[0]!r}", f"the columns {list(by_name)}")
    empty_ok = _MAY_BE_EMPTY[path.name]
    rows = []
    for lineno, line in lines[1:]:
        where = f"{shown_path}:{lineno}"
        fields = _fields((lineno, line), shown_path, columns)
        if len(fields) != len(header):
            raise InputError(where, f"{len(fields)} fields", f"{len(header)} fields ({header})")
        first = columns[0].name  # the row's name: joint, link or model
        label = f"{_ROW_WORD[path.name]} {shown(dict(zip(header, fields)).get(first, ''))}"
        cells = {}
        for name, text in zip(header, fields):
            cells[name] = _cell(text, by_name[name], where, name not in empty_ok, label)
        rows.append((where, cells))
    return rows


def _fields(numbered: tuple[int, str], shown_path: str, columns: list[Column]) -> list[str]:
    lineno, line = numbered
    try:
        return next(csv.reader([line]))
    except csv.Error as error:
        raise InputError(
            f"{shown_path}:{lineno}", f"not a CSV line ({error})", "comma-separated fields"
        ) from None


def _cell(text: str, column: Column, where: str, required: bool, label: str):
    """One cell: a name, text, a choice or a number in range; None where empty and allowed.
    `label` names the row in messages (its joint, link or model)."""
    if column.kind == "text":
        return text
    if not text.strip():
        if required:
            raise InputError(where, f"{label}: column {column.name!r} is empty", column.expected())
        return None
    if column.kind == "name":
        return text
    if column.kind == "choice":
        if text not in JOINT_TYPES:
            raise InputError(
                where, f"{label}: column {column.name!r} = {shown(text)}", column.expected()
            )
        return text
    value = parse_number(text, where, column.expected(), field=f"{label}: column {column.name!r}")
    if column.low is not None and (value <= column.low if column.low_open else value < column.low):
        raise InputError(
            where, f"{label}: column {column.name!r} = {text.strip()}", column.expected()
        )
    return value


def _refuse_filled(where: str, cells: dict, names, why: str, label: str) -> None:
    for name in names:
        if cells.get(name) is not None:
            raise InputError(
                where, f"{label}: column {name!r} = {cells[name]!r} {why}", "an empty cell"
            )


def read_joints(directory: Path) -> list[Row]:
    """joints.csv checked: names, types, numbers, a tree (one parent per link, no cycle)."""
    rows = read_rows(directory / "joints.csv", JOINT_COLUMNS)
    names, parent_of = set(), {}
    for where, cells in rows:
        name = cells["joint"]
        if name in names:
            raise InputError(where, f"joint {name!r} repeated", "each joint once")
        names.add(name)
        if cells["type"] == "fixed":
            _refuse_filled(
                where,
                cells,
                ("axis_x", "axis_y", "axis_z", "lower_rad", "upper_rad", "velocity", "effort"),
                "on a fixed joint",
                f"joint {name!r}",
            )
        else:
            axis = [cells[f"axis_{a}"] for a in "xyz"]
            if None in axis or not any(axis):
                raise InputError(
                    where, f"joint {name!r} has the axis {axis}", "a non-zero axis_x, y, z"
                )
        lower, upper = cells["lower_rad"], cells["upper_rad"]
        if lower is not None and upper is not None and not lower <= upper:
            raise InputError(
                where, f"joint {name!r} has lower_rad > upper_rad", "lower_rad <= upper_rad"
            )
        child = cells["child"]
        if child == cells["parent"] or child in parent_of:
            raise InputError(
                where, f"link {child!r} is a child twice or its own parent", "a tree of links"
            )
        parent_of[child] = (cells["parent"], where)
    for child, (_, where) in parent_of.items():
        link, steps = child, 0
        while link in parent_of:
            link, steps = parent_of[link][0], steps + 1
            if steps > len(parent_of):
                raise InputError(where, f"link {child!r} is its own ancestor", "a tree of links")
    return rows


def read_links(directory: Path) -> list[Row]:
    """links.csv checked: names once each, masses positive, a massless row without values."""
    rows = read_rows(directory / "links.csv", LINK_COLUMNS)
    names = set()
    for where, cells in rows:
        if cells["link"] in names:
            raise InputError(where, f"link {cells['link']!r} repeated", "each link once")
        names.add(cells["link"])
        if cells["mass_kg"] is None:
            _refuse_filled(
                where,
                cells,
                [c.name for c in LINK_COLUMNS[2:]],
                "on a massless link (no mass_kg)",
                f"link {cells['link']!r}",
            )
            continue
        if cells["mass_kg"] <= 0:
            raise InputError(
                where,
                f"link {cells['link']!r} has mass {cells['mass_kg']:g} kg",
                "a positive mass",
            )
        for column in LINK_COLUMNS[2:]:
            if cells[column.name] is None:
                raise InputError(
                    where,
                    f"link {cells['link']!r}: column {column.name!r} is empty",
                    column.expected(),
                )
        ixx, ixy, ixz, iyy, iyz, izz = (
            cells[k] for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        )
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        eigenvalues = np.linalg.eigvalsh(tensor)
        if eigenvalues[0] < -1e-12 * max(1.0, abs(eigenvalues[-1])):
            raise InputError(
                where,
                f"link {cells['link']!r} has an indefinite inertia tensor (eigenvalues "
                f"{', '.join(f'{e:.3g}' for e in eigenvalues)} kg·m^2)",
                "a positive semi-definite inertia tensor about the centre of mass",
            )
    return rows


def read_actuators(directory: Path) -> list[Row]:
    """actuators.csv checked: models once each, positive constants and limits."""
    rows = read_rows(directory / "actuators.csv", ACTUATOR_COLUMNS)
    names = set()
    for where, cells in rows:
        if cells["model"] in names:
            raise InputError(where, f"actuator {cells['model']!r} repeated", "each model once")
        names.add(cells["model"])
    return rows


def read_folder(directory: Path | str) -> CheckedFolder:
    """All four files of an arm's folder, every field checked, before any description is built."""
    directory = Path(directory)
    toml_path = directory / "arm.toml"
    where = portable(toml_path)
    facts = check_arm_toml(read_toml(toml_path), where)
    joints, links = read_joints(directory), read_links(directory)
    actuators = read_actuators(directory)
    named = {c["joint"]: (w, c) for w, c in joints}
    tree = {c["parent"] for _, c in joints} | {c["child"] for _, c in joints}
    children = {c["child"] for _, c in joints}
    root = facts["root_link"]
    if root not in tree or root in children:
        raise InputError(
            where, f"key 'root_link' = {root!r}", "the root link of joints.csv (no joint's child)"
        )
    for key, names in (("arm_joints", facts["arm_joints"]), ("gripper_joint", [])):
        if key == "gripper_joint" and "gripper_joint" in facts:
            names = [facts["gripper_joint"]]
        for name in names:
            if name not in named:
                raise InputError(
                    where, f"key {key!r}: joint {name!r} is not in joints.csv", "a joint of it"
                )
    if "gripper_limits_rad" in facts:  # one source of the gripper's span, not two
        line, cells = named[facts["gripper_joint"]]
        if cells["lower_rad"] is not None or cells["upper_rad"] is not None:
            raise InputError(
                where,
                f"key 'gripper_limits_rad' while {line} gives the gripper joint's limits",
                "the gripper's limits in one place: arm.toml or joints.csv",
            )
    for line, cells in links:
        if cells["link"] not in tree:
            raise InputError(line, f"link {cells['link']!r} is in no joint", "a link of joints.csv")
    models = {c["model"]: line for line, c in actuators}
    used = {a["actuator"] for a in facts["axis"]}
    for n, axis in enumerate(facts["axis"], 1):
        if axis["actuator"] not in models:
            raise InputError(
                where,
                f"key 'axis[{n}].actuator' = {axis['actuator']!r} ({axis['joint']})",
                f"a model of actuators.csv ({sorted(models)})",
            )
    for model, line in models.items():
        if model not in used:
            raise InputError(line, f"actuator {model!r} drives no [[axis]]", "a model in use")
    return CheckedFolder(facts, where, joints, links, actuators)
