"""A robot as data: kinematics, limits, gravity, inertial prior, actuators, gains and bus.

`ArmDescription` holds everything the pipeline needs to know about one serial arm with revolute
joints and an optional gripper axis decoupled from the arm. Three arms are shipped:

* `crane_x7()`: the CRANE-X7 as today's modules see it: the MDH table of `data/crane_x7_mdh.csv`,
  the limits and inertial prior of `robot_description`, the actuators of `constants`, the
  realization gains of `controller`, the audit domain of the paper's numbers, the bus of
  `data/crane_x7_arm.toml`.
* `load_urdf_arm(folder)`: an arm given by a URDF's numbers, committed as `joints.csv`,
  `links.csv`, `actuators.csv` and `arm.toml` (`data/vx300s_description/`,
  `data/so101_description/`).

Kinematics in the model's frames. Joint j moves frame j relative to frame j-1 by

    T_(j-1, j)(q_j) = [R_j | p_j] Rz(q_j),

with R_j, p_j exact rationals (an exact orthogonal R_j). An MDH row gives R_j = Rx(alpha_j)
Rz(offset_j) and p_j = (d_j, -r_j sin alpha_j, r_j cos alpha_j). A URDF joint gives frame j =
its child link frame turned by a signed permutation A_j that takes z onto the joint axis, so
R_j = A_(j-1)^T R_origin A_j and p_j = A_(j-1)^T p_origin, the origin including every fixed joint
between the two moving joints; frame 0 is the root link's frame. Axes must lie along x, y or z of
their joint frame (true of all three arms).

Rounding before the exact grouping. The base-parameter grouping is exact: a file that prints
pi/2 as 1.5708 tilts an axis by 4e-6 rad, which exact arithmetic takes for structure (a first
moment "identifiable" through a 4e-6 lever, two parallel axes no longer parallel). So, with
`snap=True` (the default), every origin angle within ANGLE_SNAP_RAD of a multiple of pi/2 becomes
that multiple and every origin length below LENGTH_SNAP_M becomes 0; `snapped` lists each change.
Other angles become exact rational points on the unit circle (error below 1e-15 rad).

Drive mode: `drive_mode` "current" (the host's controller (2) commands current, the paper's
path; the CRANE-X7, the ViperX as the book runs it) or "position" (goal positions to the servos'
own loop, `position_loop`; the SO-101, whose STS3215 has no current mode), with the loop's
registers in `position_loop` when the arm's arm.toml gives them; `in_drive_mode` switches.

Bad input raises `InputError` naming the file, the element and what was expected. A folder is
checked field by field first (`arm_schema.read_folder`: arm.toml's keys, every CSV cell, UTF-8,
unknown keys and unused values refused); then the joints that do not form one serial chain, an
arm joint without limits, an axis off the frame axes.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from crane_lib.constants import ACTUATORS, CURRENT_UNIT_A, GRAVITY
from crane_lib.errors import InputError
from crane_lib.model import arm_schema, controller, robot_description
from crane_lib.model.parameters import HAND_PARAMETER_KINDS, LINK_PARAMETER_KINDS
from crane_lib.model.position_loop import PositionLoopSettings, check_drive_mode
from crane_lib.paper_numbers import paper
from crane_lib.paths import DATA_DIR, portable

ANGLE_SNAP_RAD = 1e-4  # generators print pi/2 to 5-6 digits (1.5708: 3.7e-6 off)
LENGTH_SNAP_M = 1e-9  # CAD noise such as 1.7e-16 m
CIRCLE_DENOMINATOR = 10**9  # tan(angle/2) as a fraction: angle error below 1e-15 rad
ARMS = {"crane_x7": None, "vx300s": "vx300s_description", "so101": "so101_description"}
CRANE_X7_ARM_TOML = DATA_DIR / "crane_x7_arm.toml"

Matrix3 = tuple[tuple[Fraction, Fraction, Fraction], ...]
Vector3 = tuple[Fraction, Fraction, Fraction]


@dataclass(frozen=True)
class Actuator:
    """One axis's drive: servo model, torque constant, current register and limits (SI)."""

    model: str
    kt: float  # N·m/A of one servo, the constant the torque record uses
    current_unit: float  # A per register unit
    current_limit: float  # A, one servo
    velocity_limit: float  # rad/s
    servos: int = 1  # servos driving the joint together
    source: str = ""

    @property
    def torque_limit(self) -> float:
        """Largest joint torque the current limit allows (N·m), all servos of the axis together."""
        return self.kt * self.current_limit * self.servos


@dataclass(frozen=True)
class ChainJoint:
    """Revolute joint j: T_(j-1, j)(q) = [rotation | translation] Rz(q), exact rationals."""

    name: str
    rotation: Matrix3
    translation: Vector3
    lower: float  # rad
    upper: float  # rad


@dataclass(frozen=True)
class ControllerGains:
    """Common gains of the realization controller (2): K_P (s^-2), K_V (s^-1), K_I (s^-3)."""

    k_p: float
    k_v: float
    k_i: float


@dataclass(frozen=True)
class EncoderNoiseRule:
    """Gains by rule (controller.encoder_noise_gains): one encoder count per control period
    through K_V·M̂_j stays within this fraction of every axis's torque limit."""

    fraction: float


@dataclass(frozen=True)
class BusLayout:
    """The servo bus: protocol, baud rate (bit/s), servo IDs per axis and where they come from.

    Several IDs on one axis drive one joint together: the first is the primary, the others its
    shadows (their Secondary ID is the primary's, they follow its goal values). `reverse` holds,
    per axis and ID, whether the servo's Drive Mode has its reverse-direction bit set, as the
    arm's maker configures it (empty: no servo reversed)."""

    protocol: str
    baud: int
    ids: tuple[tuple[int, ...], ...]
    source: str
    reverse: tuple[tuple[bool, ...], ...] = ()


@dataclass(frozen=True)
class ArmDescription:
    """A serial revolute arm with an optional decoupled gripper axis, as data (SI, radians)."""

    name: str
    source: str
    joints: tuple[ChainJoint, ...]
    gravity_direction: Vector3  # unit vector of gravity in frame 0, exact
    mounting: str
    audit_domain: np.ndarray  # (n_joints, 2) [lower, upper]
    inertial_prior: dict[str, float]  # XXj..Mj of links 1..n in frames j, about O_j
    actuators: tuple[Actuator, ...]  # per axis: the arm joints, then the gripper
    controller: ControllerGains | EncoderNoiseRule  # fixed gains, or the rule that sets them
    gripper: str | None = None
    gripper_limits: tuple[float, float] | None = None
    bus: BusLayout | None = None
    snapped: tuple[str, ...] = field(default=())
    drive_mode: str = "current"  # "current": controller (2) on the host; "position": the servos'
    position_loop: PositionLoopSettings | None = None  # the servos' loop (position mode)

    def in_drive_mode(self, mode: str) -> "ArmDescription":
        """The same arm driven in `mode` ("current" or "position"; position needs the
        description's [position_loop])."""
        check_drive_mode(mode, f"{self.name}: drive mode")
        if mode == "position" and self.position_loop is None:
            raise InputError(
                f"{self.source}/arm.toml", f"{self.name} has no [position_loop]", "a servo loop"
            )
        return dataclasses.replace(self, drive_mode=mode)

    @property
    def n_joints(self) -> int:
        """Number of arm joints (the chain's links)."""
        return len(self.joints)

    @property
    def n_axes(self) -> int:
        """Arm joints plus the gripper axis, if any."""
        return self.n_joints + (self.gripper is not None)

    @property
    def gravity(self) -> np.ndarray:
        """Gravity acceleration in frame 0 (m/s^2)."""
        return GRAVITY * np.array([float(g) for g in self.gravity_direction])

    def joint_limits(self) -> np.ndarray:
        """(n_axes, 2) [lower, upper] in radians: the arm joints, then the gripper."""
        rows = [[j.lower, j.upper] for j in self.joints]
        if self.gripper is not None:
            rows.append(list(self.gripper_limits))
        return np.array(rows, dtype=float)

    def standard_parameter_names(self) -> list[str]:
        """13 standard parameters per arm link (XXj..FSj), then IA, FV, FS of the gripper."""
        names = [f"{k}{j}" for j in range(1, self.n_joints + 1) for k in LINK_PARAMETER_KINDS]
        if self.gripper is not None:
            names += [f"{k}{self.n_axes}" for k in HAND_PARAMETER_KINDS]
        return names


# ------------------------------------------------------------------ exact geometry


def _exact_cos_sin(angle: float) -> tuple[Fraction, Fraction]:
    """cos and sin of `angle` as an exact rational point of the unit circle."""
    quarter = angle / (math.pi / 2)
    if abs(quarter - round(quarter)) * math.pi / 2 < 1e-15:
        return {
            0: (Fraction(1), Fraction(0)),
            1: (Fraction(0), Fraction(1)),
            2: (Fraction(-1), Fraction(0)),
            3: (Fraction(0), Fraction(-1)),
        }[round(quarter) % 4]
    t = Fraction(math.tan(angle / 2)).limit_denominator(CIRCLE_DENOMINATOR)
    return (1 - t * t) / (1 + t * t), 2 * t / (1 + t * t)


def _rot_x(c: Fraction, s: Fraction) -> Matrix3:
    return ((Fraction(1), Fraction(0), Fraction(0)), (Fraction(0), c, -s), (Fraction(0), s, c))


def _rot_y(c: Fraction, s: Fraction) -> Matrix3:
    return ((c, Fraction(0), s), (Fraction(0), Fraction(1), Fraction(0)), (-s, Fraction(0), c))


def _rot_z(c: Fraction, s: Fraction) -> Matrix3:
    return ((c, -s, Fraction(0)), (s, c, Fraction(0)), (Fraction(0), Fraction(0), Fraction(1)))


def _matmul(a: Matrix3, b: Matrix3) -> Matrix3:
    return tuple(
        tuple(sum((a[i][k] * b[k][j] for k in range(3)), Fraction(0)) for j in range(3))
        for i in range(3)
    )


def _apply(a: Matrix3, v: Vector3) -> Vector3:
    return tuple(sum((a[i][k] * v[k] for k in range(3)), Fraction(0)) for i in range(3))


def _transpose(a: Matrix3) -> Matrix3:
    return tuple(tuple(a[j][i] for j in range(3)) for i in range(3))


IDENTITY: Matrix3 = _rot_z(Fraction(1), Fraction(0))


def rpy_rotation(roll: float, pitch: float, yaw: float) -> Matrix3:
    """URDF rpy as an exact rotation: Rz(yaw) Ry(pitch) Rx(roll)."""
    return _matmul(
        _rot_z(*_exact_cos_sin(yaw)),
        _matmul(_rot_y(*_exact_cos_sin(pitch)), _rot_x(*_exact_cos_sin(roll))),
    )


def as_float_matrix(matrix: Matrix3) -> np.ndarray:
    """An exact 3x3 rotation as a float array."""
    return np.array([[float(x) for x in row] for row in matrix])


def mdh_joint(row, lower: float, upper: float, name: str) -> ChainJoint:
    """A revolute MDH row as a chain joint: Rx(alpha) Rz(offset), (d, -r sin alpha, r cos alpha)."""
    ca, sa = _exact_cos_sin(float(row.alpha))
    co, so = _exact_cos_sin(float(row.theta_offset))
    d, r = Fraction(str(row.d)), Fraction(str(row.r))
    return ChainJoint(
        name, _matmul(_rot_x(ca, sa), _rot_z(co, so)), (d, -r * sa, r * ca), lower, upper
    )


def _axis_alignment(axis: np.ndarray, where: str) -> Matrix3:
    """The signed permutation A with A e_z = axis, for an axis along x, y or z."""
    one, zero = Fraction(1), Fraction(0)
    table = {
        (0, 0, 1): IDENTITY,
        (0, 0, -1): _rot_x(-one, zero),
        (1, 0, 0): _rot_y(zero, one),
        (-1, 0, 0): _rot_y(zero, -one),
        (0, 1, 0): _rot_x(zero, -one),
        (0, -1, 0): _rot_x(zero, one),
    }
    key = tuple(int(round(a)) for a in axis)
    if key not in table or np.max(np.abs(axis - np.array(key))) > 1e-12:
        raise InputError(
            where,
            f"axis {tuple(axis.tolist())}",
            "a joint axis along +-x, +-y or +-z of the joint frame",
        )
    return table[key]


# ------------------------------------------------------------------ the CRANE-X7


def _crane_x7_audit_domain() -> np.ndarray:
    def span(number_id: str) -> list[float]:
        number = paper(number_id)
        return [float(np.deg2rad(number.value)), float(np.deg2rad(number.value_hi))]

    wide, half, elbow = (
        span("audit_domain_j1357"),
        span("audit_domain_j26"),
        span("audit_domain_j4"),
    )
    return np.array([wide, half, wide, elbow, wide, half, wide])


def crane_x7() -> ArmDescription:
    """The CRANE-X7 from today's files: MDH table, description, actuators, gains, Theta, bus."""
    table = robot_description.load_mdh_table()
    limits = robot_description.joint_limits_rad()
    names = robot_description.ARM_JOINTS
    joints = tuple(mdh_joint(row, *limits[i], names[i]) for i, row in enumerate(table))
    facts = arm_schema.read_toml(CRANE_X7_ARM_TOML)  # UTF-8 TOML (its own keys)
    actuators = tuple(
        Actuator(
            a.model,
            a.kt,
            CURRENT_UNIT_A,
            a.current_limit_a,
            math.radians(a.velocity_ceiling_deg_s),
            1,
            "crane_lib.constants",
        )
        for a in ACTUATORS
    )
    bus = facts["bus"]
    return ArmDescription(
        name=facts["name"],
        source="data/crane_x7_mdh.csv, data/crane_x7_description/, data/crane_x7_arm.toml",
        joints=joints,
        gravity_direction=tuple(Fraction(g) for g in facts["gravity_direction"]),
        mounting=facts["mounting"],
        audit_domain=_crane_x7_audit_domain(),
        inertial_prior=robot_description.description_standard_parameters(),
        actuators=actuators,
        controller=ControllerGains(controller.K_P, controller.K_V, controller.K_I),
        gripper=robot_description.HAND_JOINT,
        gripper_limits=tuple(limits[-1]),
        bus=BusLayout(
            bus["protocol"], int(bus["baud"]), tuple((i,) for i in bus["ids"]), bus["source"]
        ),
    )


# ------------------------------------------------------------------ URDF arms


@dataclass(frozen=True)
class _UrdfJoint:
    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    axis: np.ndarray | None
    lower: float | None
    upper: float | None
    line: str  # file:line, for messages

    @property
    def origin(self) -> np.ndarray:
        """4x4 transform of the child frame in the parent frame at zero angle."""
        transform = np.eye(4)
        transform[:3, :3] = _rpy_float(*self.rpy)
        transform[:3, 3] = self.xyz
        return transform


JOINT_COLUMNS = [c.name for c in arm_schema.JOINT_COLUMNS]
LINK_COLUMNS = [c.name for c in arm_schema.LINK_COLUMNS]
ACTUATOR_COLUMNS = [c.name for c in arm_schema.ACTUATOR_COLUMNS]


def _snap_angle(value: float, snap: bool, label: str, snapped: list[str]) -> float:
    quarter = round(value / (math.pi / 2)) * (math.pi / 2)
    if snap and value != quarter and abs(value - quarter) < ANGLE_SNAP_RAD:
        snapped.append(f"{label}: {value!r} -> {quarter!r}")
        return quarter
    return value


def _snap_length(value: float, snap: bool, label: str, snapped: list[str]) -> float:
    if snap and value != 0.0 and abs(value) < LENGTH_SNAP_M:
        snapped.append(f"{label}: {value!r} -> 0")
        return 0.0
    return value


def read_urdf_joints(directory: Path, snap: bool = True) -> tuple[dict[str, _UrdfJoint], list[str]]:
    """The joints of `directory/joints.csv` (checked), origins rounded."""
    return _urdf_joints(arm_schema.read_joints(Path(directory)), snap)


def _urdf_joints(rows: list[arm_schema.Row], snap: bool) -> tuple[dict[str, _UrdfJoint], list[str]]:
    """Checked joints.csv rows as joints, origins rounded (see the module docstring)."""
    joints: dict[str, _UrdfJoint] = {}
    snapped: list[str] = []
    for where, row in rows:
        name = row["joint"]

        def origin(axes, rounded):
            return tuple(
                rounded(row[f"origin_{a}"], snap, f"{name} origin_{a}", snapped) for a in axes
            )

        xyz = origin("xyz", _snap_length)
        rpy = origin(("roll", "pitch", "yaw"), _snap_angle)
        axis = None
        if row["type"] != "fixed":
            axis = np.array([row[f"axis_{a}"] for a in "xyz"])
        joints[name] = _UrdfJoint(
            name,
            row["type"],
            row["parent"],
            row["child"],
            xyz,
            rpy,
            axis,
            row["lower_rad"],
            row["upper_rad"],
            where,
        )
    return joints, snapped


@dataclass(frozen=True)
class UrdfInertial:
    """One link's inertial: mass (kg), centre of mass and inertia about it, in the link frame."""

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray


def _rpy_float(roll: float, pitch: float, yaw: float) -> np.ndarray:
    return as_float_matrix(rpy_rotation(roll, pitch, yaw))


def read_urdf_inertials(directory: Path) -> dict[str, UrdfInertial]:
    """Inertials of `directory/links.csv` (checked: masses, positive semi-definite tensors)."""
    return _urdf_inertials(arm_schema.read_links(Path(directory)))


def _urdf_inertials(rows: list[arm_schema.Row]) -> dict[str, UrdfInertial]:
    """Checked links.csv rows as inertials in link axes (a massless frame has none)."""
    inertials: dict[str, UrdfInertial] = {}
    for _, row in rows:
        if row["mass_kg"] is None:
            continue  # a massless frame
        link = row["link"]
        ixx, ixy, ixz, iyy, iyz, izz = (row[k] for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        rotation = _rpy_float(
            *(row[k] for k in ("inertial_roll", "inertial_pitch", "inertial_yaw"))
        )
        com = np.array([row[f"com_{a}"] for a in "xyz"])
        inertials[link] = UrdfInertial(link, row["mass_kg"], com, rotation @ tensor @ rotation.T)
    return inertials


def _read_actuators(
    rows: list[arm_schema.Row],
) -> dict[str, tuple[float, float, float, float, str]]:
    """Checked actuators.csv rows by model: kt, current unit, limit (units), velocity, source."""
    return {
        row["model"]: (
            row["kt_N_m_per_A"],
            row["current_unit_A"],
            row["current_limit_units"],
            row["velocity_limit_rad_s"],
            row["source"],
        )
        for _, row in rows
    }


def _chain(joints: dict[str, _UrdfJoint], root: str, arm: list[str], where: str):
    """Per arm joint: the fixed joints from the previous moving link to it; checks seriality."""
    by_child = {j.child: j for j in joints.values()}
    for name in arm:
        if name not in joints:
            raise InputError(
                where, f"arm joint {name!r} is not in joints.csv", "a joint of joints.csv"
            )
        joint = joints[name]
        if joint.type not in ("revolute", "continuous"):
            raise InputError(joint.line, f"arm joint {name!r} is {joint.type}", "a revolute joint")
    paths, previous = [], root
    for name in arm:
        path, link = [joints[name]], joints[name].parent
        while link != previous:
            joint = by_child.get(link)
            if joint is None or joint.name in arm:
                raise InputError(
                    joints[name].line,
                    f"joint {name!r} does not hang from {previous!r} through fixed joints",
                    "the arm joints in order along one serial chain from the root link",
                )
            if joint.type != "fixed":
                raise InputError(
                    joint.line,
                    f"{joint.type} joint {joint.name!r} between arm joints",
                    "only fixed joints between consecutive arm joints",
                )
            path.insert(0, joint)
            link = joint.parent
        paths.append(path)
        previous = joints[name].child
    return paths


def _owner(link: str, joints: dict[str, _UrdfJoint], arm: list[str]) -> int:
    """Arm link (1..n) that carries `link`; 0 for the base. Other moving joints count as fixed."""
    by_child = {j.child: j for j in joints.values()}
    while link in by_child:
        joint = by_child[link]
        if joint.name in arm:
            return arm.index(joint.name) + 1
        link = joint.parent
    return 0


def inertial_prior(
    frames: list[np.ndarray],
    owners: dict[str, int],
    poses: dict[str, np.ndarray],
    inertials: dict[str, UrdfInertial],
) -> dict[str, float]:
    """XXj..Mj of links 1..n about O_j in frame-j axes, each link's inertials lumped at zero."""
    params: dict[str, float] = {}
    for j, frame in enumerate(frames, start=1):
        rot, origin = frame[:3, :3], frame[:3, 3]
        mass, first, tensor = 0.0, np.zeros(3), np.zeros((3, 3))
        for link, inertial in inertials.items():
            if owners.get(link) != j:
                continue
            pose = poses[link]
            com = rot.T @ (pose[:3, :3] @ inertial.com + pose[:3, 3] - origin)
            turned = rot.T @ pose[:3, :3]
            m = inertial.mass
            mass += m
            first += m * com
            tensor += turned @ inertial.inertia @ turned.T + m * (
                com @ com * np.eye(3) - np.outer(com, com)
            )
        params.update(
            {
                f"XX{j}": tensor[0, 0],
                f"XY{j}": tensor[0, 1],
                f"XZ{j}": tensor[0, 2],
                f"YY{j}": tensor[1, 1],
                f"YZ{j}": tensor[1, 2],
                f"ZZ{j}": tensor[2, 2],
                f"MX{j}": first[0],
                f"MY{j}": first[1],
                f"MZ{j}": first[2],
                f"M{j}": mass,
            }
        )
    return params


def load_urdf_arm(directory: Path | str, snap: bool = True) -> ArmDescription:
    """An arm from its folder of URDF numbers (joints.csv, links.csv, actuators.csv, arm.toml),
    every field of the four files checked first (`arm_schema.read_folder`)."""
    directory = Path(directory)
    folder = arm_schema.read_folder(directory)
    facts, toml_where = folder.toml, folder.toml_where
    arm = facts["arm_joints"]
    joints, snapped = _urdf_joints(folder.joints, snap)
    paths = _chain(joints, facts["root_link"], arm, toml_where)
    gripper = facts.get("gripper_joint")
    # A_j aligns z with the axis: R_j = A_(j-1)^T R_origin A_j, p_j = A_(j-1)^T p_origin
    chain, frames, previous = [], [], IDENTITY
    poses = robot_description.zero_pose_link_frames(joints)
    for name, path in zip(arm, paths):
        joint = joints[name]
        if joint.lower is None or joint.upper is None or not joint.lower < joint.upper:
            raise InputError(
                joint.line,
                f"joint {name!r} has limits {joint.lower}, {joint.upper}",
                "lower_rad < upper_rad (every arm joint needs limits)",
            )
        rotation, translation = IDENTITY, (Fraction(0),) * 3
        for step in path:  # compose the origins, exactly
            step_rotation = rpy_rotation(*step.rpy)
            step_translation = tuple(Fraction(repr(x)) for x in step.xyz)
            translation = tuple(
                t + u for t, u in zip(translation, _apply(rotation, step_translation))
            )
            rotation = _matmul(rotation, step_rotation)
        align = _axis_alignment(joint.axis, joint.line)
        chain.append(
            ChainJoint(
                name,
                _matmul(_transpose(previous), _matmul(rotation, align)),
                _apply(_transpose(previous), translation),
                joint.lower,
                joint.upper,
            )
        )
        frame = np.eye(4)
        frame[:3, :3] = poses[joint.child][:3, :3] @ as_float_matrix(align)
        frame[:3, 3] = poses[joint.child][:3, 3]
        frames.append(frame)
        previous = align
    owners = {j.child: _owner(j.child, joints, arm) for j in joints.values()}
    prior = inertial_prior(frames, owners, poses, _urdf_inertials(folder.links))
    gripper_limits = None
    if gripper is not None:
        g = joints[gripper]
        if g.type not in ("revolute", "continuous"):
            raise InputError(
                g.line, f"gripper joint {gripper!r} is {g.type}", "a revolute or continuous joint"
            )
        gripper_limits = tuple(facts.get("gripper_limits_rad", (g.lower, g.upper)))
        if None in gripper_limits or not gripper_limits[0] < gripper_limits[1]:
            raise InputError(
                g.line,
                f"gripper joint {gripper!r} has no limits",
                "lower_rad < upper_rad here or gripper_limits_rad in arm.toml",
            )
    models = _read_actuators(folder.actuators)
    axes = facts["axis"]
    actuators = []
    for axis in axes:
        kt, unit, limit_units, velocity, source = models[axis["actuator"]]
        actuators.append(
            Actuator(
                axis["actuator"],
                kt,
                unit,
                limit_units * unit,
                velocity,
                len(axis.get("ids", [1])),
                source,
            )
        )
    bus = facts.get("bus")
    direction = tuple(Fraction(g) for g in facts["gravity_direction"])
    domain = facts.get("audit_domain_rad", [[j.lower, j.upper] for j in chain])
    return ArmDescription(
        name=facts["name"],
        source=portable(directory),
        joints=tuple(chain),
        gravity_direction=direction,
        mounting=facts["mounting"],
        audit_domain=np.array(domain, dtype=float).reshape(len(chain), 2),
        inertial_prior=prior,
        actuators=tuple(actuators),
        controller=_controller(facts["controller"]),
        gripper=gripper,
        gripper_limits=gripper_limits,
        bus=(
            None
            if bus is None
            else BusLayout(
                bus["protocol"],
                bus["baud"],
                tuple(tuple(a["ids"]) for a in axes),
                bus["source"],
                tuple(tuple(a.get("reverse", [False] * len(a["ids"]))) for a in axes),
            )
        ),
        snapped=tuple(snapped),
        drive_mode=facts.get("drive_mode", "current"),
        position_loop=_position_loop(facts.get("position_loop")),
    )


def _position_loop(loop: dict | None) -> PositionLoopSettings | None:
    """The checked [position_loop] section as the loop's settings (None: no section)."""
    if loop is None:
        return None
    return PositionLoopSettings(
        loop["firmware"],
        loop["p_gain"],
        loop["i_gain"],
        loop["d_gain"],
        loop["pwm_limit"],
        loop["profile_velocity_rad_s"],
        loop["profile_acceleration_rad_s2"],
        loop["period_s"],
        loop["source"],
    )


def _controller(gains: dict) -> ControllerGains | EncoderNoiseRule:
    """The checked [controller] section: k_p, k_v, k_i, or encoder_noise_fraction (the rule)."""
    if "encoder_noise_fraction" in gains:
        return EncoderNoiseRule(gains["encoder_noise_fraction"])
    return ControllerGains(gains["k_p"], gains["k_v"], gains["k_i"])


def load_arm(name: str) -> ArmDescription:
    """One of the shipped arms by name (crane_x7, vx300s, so101) or a folder of URDF numbers."""
    if name == "crane_x7":
        return crane_x7()
    if name in ARMS:
        return load_urdf_arm(DATA_DIR / ARMS[name])
    if Path(name).is_dir():
        return load_urdf_arm(name)
    raise InputError(name, "unknown arm", f"one of {sorted(ARMS)} or a folder with arm.toml")
