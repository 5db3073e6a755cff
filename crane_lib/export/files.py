"""A standard-parameter model as the files robotics tools read: URDF and MJCF.

Kinematics: the manufacturer's description (`data/crane_x7_description/`): its link and joint
names, joint origins, axes and limits, so that its meshes, MoveIt configurations and controllers
still fit. Only the chain that carries the eight axes is written: world, base_link, the mounting
plate, the shoulder's fixed part, the seven arm links and the first finger (cosmetic covers and
logos, which carry no mass, and the second finger, whose mimic joint no simulator reads the same
way, are left out). The arm's MDH frames are rigidly attached to these links: MDH link j is the
child link of arm joint j, and its frame sits in that link's frame at a constant pose
(`robot_description.place_mdh_frames`, checked by `geometry_check`), through which each link's
mass, centre of mass and inertia are expressed in the manufacturer's link frame.

Dynamics, per the identification model (DESIGN.md section 4):

* links 1-7: <inertial> with the link's mass, centre of mass and inertia about it; the gripper
  base carries link 7, which includes the hand and both fingers at rest;
* the hand axis (8) is a rotor decoupled from the arm: in the URDF the first finger joint moves a
  massless finger link; MuJoCo rejects a moving body without mass, so the MJCF gives the hand its
  own body on a hinge fixed to the world, whose inertia about the hinge is IA8 and whose centre of
  mass is on the hinge (no gravity torque, no coupling, as in the model);
* joint friction: URDF <dynamics damping="FV" friction="FS"/>, MJCF damping and frictionloss. The
  model's Coulomb term is FS sign(dtheta); MuJoCo's frictionloss is a dry-friction constraint that
  can also hold the joint at rest, the same law in motion;
* rotor inertia: MJCF armature. URDF has no field for it: it is recorded in each joint's
  <transmission> as Drake's <drake:rotor_inertia> with <drake:gear_ratio> 1 (reflected inertia =
  rotor inertia x ratio^2 = IA at the link), which Drake reads; Pinocchio users set
  model.armature from it (`read_urdf_joint_dynamics` reads all three per joint).
* gravity: the model's mounting. "hanging" (the default of the identification model: the arm
  hangs from a desk mount, the zero pose points down) turns base_link upside down in the world
  (roll pi on the world joint); "upright" leaves it as the manufacturer mounts it. Gravity is the
  standard 9.80665 m/s^2 along -z of the world: the MJCF states it, a URDF cannot (Pinocchio's
  default is 9.81: set model.gravity to match).

Any other arm (`arm_robot_model`, an `ArmDescription`): the chain model's own frames. Link j is
the child of arm joint j and its frame is joint j's frame (the description's exact fixed
transform, then the rotation about its z axis), so the reconstruction's link parameters go into
the files as they are; joint names, limits, torque and speed limits are the description's, link j
is named after its joint ("<joint>_link"), the gripper axis is a decoupled rotor as the CRANE-X7's
hand, and the world joint turns the root link so that the model's gravity points along -z of
the world.

Both files are written only when both are made, each atomically.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib.constants import (
    ACTUATORS,
    CLAMP_TORQUE,
    CONTROL_PERIOD_S,
    CURRENT_UNIT_A,
    GRAVITY,
    KT,
    N_AXES,
)
from crane_lib.errors import InputError, atomic_write
from crane_lib.export.consistent import link_inertial
from crane_lib.model.arm_description import ArmDescription, as_float_matrix
from crane_lib.model.controller import load_realization_constants
from crane_lib.model.dynamics import MOUNTINGS, gravity_sign, is_crane_x7
from crane_lib.model.parameters import N_LINKS, ParameterSet, standard_parameter_names
from crane_lib.model.position_loop import G_DUTY_LIMIT, G_KD, G_KP
from crane_lib.model.robot_description import (
    ARM_JOINTS,
    DESCRIPTION_DIR,
    HAND_JOINT,
    load_description,
    place_mdh_frames,
    zero_pose_link_frames,
)
from crane_lib.paper_numbers import paper

DRAKE_NAMESPACE = "http://drake.mit.edu"
ROBOT_NAME = "crane_x7_identified"
WORLD = "world"
HAND_ROTOR_BODY = "hand_rotor"  # the MJCF body of axis 8
# kg; any positive mass: the body is fixed to the world with its centre of mass on the hinge
HAND_ROTOR_MASS = 0.01


@dataclass(frozen=True)
class Inertial:
    mass: float  # kg
    com: np.ndarray  # (3,) m, in the body's frame
    inertia: np.ndarray  # (3, 3) kg·m^2 about the centre of mass, body axes


@dataclass(frozen=True)
class Joint:
    name: str
    type: str  # "fixed" or "revolute"
    parent: str
    child: str
    origin: np.ndarray  # 4x4 pose of the child frame in the parent frame (at zero angle)
    axis: np.ndarray | None = None
    lower: float | None = None
    upper: float | None = None
    axis_number: int | None = None  # 1..8 for the model's axes
    velocity: float | None = None


@dataclass(frozen=True)
class Drive:
    """How the arm is driven, per axis in axis order: the servo's current control (the goal
    current in A is the actuator's ctrl, the torque record's constant its gear) and the
    identified timing of the host's loop around it."""

    gear: np.ndarray  # N·m/A: torque per goal current, all servos of the axis (the torque record's)
    current_limit: np.ndarray  # A, one servo's current limit (ctrlrange and forcerange)
    dead_time: np.ndarray  # s, model (1)'s T_d per axis: encoder read to torque, hold included
    control_period: float = CONTROL_PERIOD_S  # s, the host's cycle
    mode: str = "current"  # "position": the servos' own loop, a MuJoCo position actuator
    kp: np.ndarray | None = None  # N·m/rad, position mode: gear · i_stall · K_P
    kv: np.ndarray | None = None  # N·m·s/rad, position mode: gear · i_stall · (K_D + 1/ω_nl)
    force_limit: np.ndarray | None = None  # N·m, position mode: gear · i_stall · d_max
    servo_period: float | None = None  # s, position mode: the servo loop's tick

    @property
    def torque_limit(self) -> np.ndarray:
        """Largest joint torque per axis (N·m): gear x current limit."""
        return self.gear * self.current_limit


@dataclass
class RobotModel:
    """Everything both files carry: the tree, the inertials of the moving links, the joint
    dynamics."""

    joints: list[Joint]  # parents before children
    inertials: dict[str, Inertial]  # link name -> inertial (links 1-7 only)
    armature: dict[str, float]  # joint name -> IA (kg·m^2)
    damping: dict[str, float]  # joint name -> FV (N·m·s/rad)
    friction: dict[str, float]  # joint name -> FS (N·m)
    effort: dict[str, float]  # joint name -> torque limit (N·m)
    mounting: str
    name: str = ROBOT_NAME
    notes: list[str] = field(default_factory=list)
    hand_axis: int = N_AXES  # the decoupled rotor's axis number (the MJCF gives it its own body)
    header: list[str] | None = None  # the files' first lines; None: the CRANE-X7's
    drive: Drive | None = None  # None: no actuators in the MJCF

    @property
    def axis_joints(self) -> list[Joint]:
        """The eight joints of the model's axes, in axis order."""
        return sorted(
            (j for j in self.joints if j.axis_number is not None), key=lambda j: j.axis_number
        )


def _mounting_origin(mounting: str) -> np.ndarray:
    if mounting not in MOUNTINGS:
        raise InputError("mounting", repr(mounting), f"one of {sorted(MOUNTINGS)}")
    origin = np.eye(4)
    if (
        MOUNTINGS[mounting] > 0
    ):  # hanging: gravity along +z0, i.e. base_link upside down in the world
        origin[:3, :3] = np.diag([1.0, -1.0, -1.0])
    return origin


def axis_links() -> list[str]:
    """The manufacturer's link moved by each arm joint (MDH link j) and the hand joint."""
    joints, _ = load_description()
    return [joints[name].child for name in ARM_JOINTS + (HAND_JOINT,)]


def mdh_in_link_frames() -> list[np.ndarray]:
    """(7) 4x4 pose of MDH frame j in the frame of the manufacturer's link j (constant)."""
    joints, _ = load_description()
    frames = zero_pose_link_frames(joints)
    placement = place_mdh_frames()
    return [
        np.linalg.inv(frames[link]) @ placement.frames[j]
        for j, link in enumerate(axis_links()[:N_LINKS])
    ]


def _drive_terms(named: dict, axis_names) -> dict:
    """Armature (IA), viscous (FV) and Coulomb (FS) friction per joint name, axis j the j-th."""
    terms = {"armature": "IA", "damping": "FV", "friction": "FS"}
    return {
        field: {n: float(named[f"{prefix}{i}"]) for i, n in enumerate(axis_names, start=1)}
        for field, prefix in terms.items()
    }


def crane_x7_drive() -> Drive:
    """The CRANE-X7's drive: the torque record's Kt (catalogue x 1.3), the Current Limit
    registers, and Table XIX's dead times (data/realization_constants.csv)."""
    dead = [m.dead_time for m in load_realization_constants().models]
    limit = np.array([a.current_limit_units * CURRENT_UNIT_A for a in ACTUATORS])
    return Drive(KT.copy(), limit, np.array(dead))


def arm_drive(arm: ArmDescription) -> Drive:
    """Another arm's drive: kt x servos of each axis, one servo's current limit, and the dead
    time of its joint models (1), the read-to-command latency plus half a period of hold
    (`twin.truth.realization_constants`: no joint-level identification of its own). In position
    mode (arm.toml's drive_mode) also the servo loop's PD as a position actuator
    (`position_drive`)."""
    dead = paper("encoder_read_dispatch_delay").value * 1e-3 + 0.5 * CONTROL_PERIOD_S
    drive = Drive(
        np.array([a.kt * a.servos for a in arm.actuators]),
        np.array([a.current_limit for a in arm.actuators]),
        np.full(arm.n_axes, dead),
    )
    return position_drive(drive, arm) if arm.drive_mode == "position" else drive


def position_drive(drive: Drive, arm: ArmDescription) -> Drive:
    """The servo's position loop (`model.position_loop`) as MuJoCo's position actuator: the duty
    d = K_P e + K_D ė drives the torque gear · i_stall (d - ω/ω_nl) along the motor's
    torque-speed line, so kp = gear · i_stall · K_P, kv = gear · i_stall · (K_D + 1/ω_nl) and the
    force limit gear · i_stall · d_max (the datasheet's stall current and no-load speed: the
    twin's tables, `twin.truth`, else the servo catalogue). Left out, as MJCF has no field for
    them: the profile that shapes the goal, the integral term, the derivative's share of the
    goal's own rate."""
    from crane_lib.model import servo_catalogue
    from crane_lib.twin.truth import NO_LOAD_SPEED_RPM, STALL_CURRENT_A

    loop = arm.position_loop
    gains = loop.gains(arm.n_axes)
    catalogue = servo_catalogue.load()
    stall, no_load = [], []
    for joint, actuator in zip(arm.joints + (None,), arm.actuators):
        model = actuator.model
        if model in STALL_CURRENT_A:  # the twin's own tables first: the file is the twin's loop
            line = (STALL_CURRENT_A[model], NO_LOAD_SPEED_RPM[model])
        elif model in catalogue.entries:
            line = (
                catalogue.value(model, "stall_current_A"),
                catalogue.value(model, "no_load_speed_rpm"),
            )
        else:
            line = (None, None)
        if None in line:
            name = arm.gripper if joint is None else joint.name
            raise InputError(
                f"{arm.source}: actuator of {name}",
                f"servo {model!r} has no known stall current or no-load speed",
                "a servo whose data/servo_catalogue.csv row gives both (position mode)",
            )
        stall.append(line[0])
        no_load.append(line[1] * 2.0 * math.pi / 60.0)
    torque_per_duty = drive.gear * np.array(stall)
    return dataclasses.replace(
        drive,
        mode="position",
        kp=torque_per_duty * gains[G_KP],
        kv=torque_per_duty * (gains[G_KD] + 1.0 / np.array(no_load)),
        force_limit=torque_per_duty * gains[G_DUTY_LIMIT],
        servo_period=float(loop.period),
    )


def robot_model(
    standard: ParameterSet, mounting: str = "hanging", notes: list[str] | None = None
) -> RobotModel:
    """The exported robot of a 94-parameter standard vector (SI, MDH frames)."""
    values = standard.ordered(standard_parameter_names(), "standard parameters")
    named = dict(zip(standard_parameter_names(), values))
    description, _ = load_description()
    by_child = {j.child: j for j in description.values()}
    # the chain from the world to link 7, then the hand joint
    chain, link = [], axis_links()[N_LINKS - 1]
    while link in by_child and by_child[link].parent != link:
        chain.append(by_child[link])
        link = by_child[link].parent
    chain = chain[::-1] + [description[HAND_JOINT]]
    axis_of = {name: i + 1 for i, name in enumerate(ARM_JOINTS + (HAND_JOINT,))}
    joints = []
    for j in chain:
        origin = _mounting_origin(mounting) if j.parent == WORLD else j.origin
        number = axis_of.get(j.name)
        joints.append(
            Joint(
                j.name,
                "fixed" if number is None else "revolute",
                j.parent,
                j.child,
                origin,
                None if number is None else np.asarray(j.axis, dtype=float),
                j.lower,
                j.upper,
                number,
                None if number is None else _velocity_limits().get(j.name),
            )
        )
    inertials = {}
    for j, (link_name, pose) in enumerate(
        zip(axis_links()[:N_LINKS], mdh_in_link_frames()), start=1
    ):
        body = link_inertial(values, j)
        rot, offset = pose[:3, :3], pose[:3, 3]
        inertials[link_name] = Inertial(
            body.mass, rot @ body.com + offset, rot @ body.inertia @ rot.T
        )
    names = ARM_JOINTS + (HAND_JOINT,)
    return RobotModel(
        joints=joints,
        inertials=inertials,
        **_drive_terms(named, names),
        effort={n: float(CLAMP_TORQUE[i - 1]) for i, n in enumerate(names, start=1)},
        mounting=mounting,
        notes=list(notes or []),
        drive=crane_x7_drive(),
    )


ROOT_LINK = "base_link"  # the root of another arm's exported chain
WORLD_JOINT = "world_joint"


def _gravity_alignment(direction: np.ndarray) -> np.ndarray:
    """4x4 pose of the root link in the world that turns the unit `direction` (gravity in the
    root frame) into -z of the world; exact for the axis-aligned directions."""
    from scipy.spatial.transform import Rotation

    origin = np.eye(4)
    down = np.array([0.0, 0.0, -1.0])
    if np.array_equal(direction, -down):  # gravity along +z of the root: upside down, as "hanging"
        origin[:3, :3] = np.diag([1.0, -1.0, -1.0])
    elif not np.array_equal(direction, down):
        origin[:3, :3] = Rotation.align_vectors([down], [direction])[0].as_matrix()
    return origin


def arm_link_name(joint: str) -> str:
    """The exported link moved by an arm's joint (its frame is the joint's frame)."""
    return f"{joint}_link"


def arm_robot_model(
    standard: ParameterSet,
    arm: ArmDescription,
    mounting: str | None = None,
    notes: list[str] | None = None,
) -> RobotModel:
    """The exported robot of another arm's standard vector (SI, the chain model's frames)."""
    names = arm.standard_parameter_names()
    values = standard.ordered(names, "standard parameters")
    named = dict(zip(names, values))
    mounting, sign = gravity_sign(mounting, arm.mounting)
    gravity = sign * np.array([float(g) for g in arm.gravity_direction])
    joints = [Joint(WORLD_JOINT, "fixed", WORLD, ROOT_LINK, _gravity_alignment(gravity))]
    parent = ROOT_LINK
    axes = list(arm.joints)
    inertials = {}
    for number, joint in enumerate(axes, start=1):
        origin = np.eye(4)
        origin[:3, :3] = as_float_matrix(joint.rotation)
        origin[:3, 3] = [float(x) for x in joint.translation]
        child = arm_link_name(joint.name)
        actuator = arm.actuators[number - 1]
        joints.append(
            Joint(
                joint.name,
                "revolute",
                parent,
                child,
                origin,
                np.array([0.0, 0.0, 1.0]),
                joint.lower,
                joint.upper,
                number,
                actuator.velocity_limit,
            )
        )
        body = link_inertial(values, number, arm)
        inertials[child] = Inertial(body.mass, body.com, body.inertia)
        parent = child
    axis_names = [j.name for j in axes]
    if arm.gripper is not None:  # a massless rotor link on the last arm link, decoupled
        lower, upper = arm.gripper_limits
        joints.append(
            Joint(
                arm.gripper,
                "revolute",
                parent,
                arm_link_name(arm.gripper),
                np.eye(4),
                np.array([0.0, 0.0, 1.0]),
                lower,
                upper,
                arm.n_axes,
                arm.actuators[-1].velocity_limit,
            )
        )
        axis_names.append(arm.gripper)
    header = [
        f"{arm.name}, identified dynamics ({{kind}}), written by crane-id export "
        "(crane_lib.export);",
        f"kinematics: the chain model's frames of the description ({arm.source}),",
        "link j in joint j's frame. SI units, radians.",
        f"Mounting: {mounting} (gravity along -z of the world).",
    ]
    return RobotModel(
        joints=joints,
        inertials=inertials,
        **_drive_terms(named, axis_names),
        effort={n: float(a.torque_limit) for n, a in zip(axis_names, arm.actuators)},
        mounting=mounting,
        name=re.sub(r"[^a-z0-9]+", "_", arm.name.lower()).strip("_") + "_identified",
        notes=list(notes or []),
        hand_axis=arm.n_axes if arm.gripper is not None else 0,
        header=header,
        drive=arm_drive(arm),
    )


def exported_robot(
    standard: ParameterSet,
    arm: ArmDescription | None = None,
    mounting: str | None = None,
    notes: list[str] | None = None,
) -> RobotModel:
    """The exported robot of any arm: the CRANE-X7's (None or its description) in the
    manufacturer's frames (`robot_model`, default "hanging"), another in its chain frames."""
    if is_crane_x7(arm):
        return robot_model(standard, "hanging" if mounting is None else mounting, notes)
    return arm_robot_model(standard, arm, mounting, notes)


@lru_cache(maxsize=1)
def _velocity_limits() -> dict[str, float]:
    """Joint velocity limits of the manufacturer's description (rad/s), which UrdfJoint does not
    carry."""
    with open(DESCRIPTION_DIR / "joints.csv", encoding="utf-8") as handle:
        return {
            row["joint"]: float(row["velocity"])
            for row in csv.DictReader(handle)
            if row["velocity"]
        }


# ----------------------------------------------------------------------------- numbers as text


def _num(value: float) -> str:
    """Shortest text that reads back to the same double."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value} in an exported file")
    return repr(value + 0.0)  # no "-0.0"


def _nums(values) -> str:
    return " ".join(_num(v) for v in values)


def _rpy(rot: np.ndarray) -> tuple[float, float, float]:
    """URDF roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)) of a rotation matrix."""
    pitch = math.atan2(-rot[2, 0], math.hypot(rot[0, 0], rot[1, 0]))
    if abs(math.cos(pitch)) < 1e-12:  # gimbal lock: put everything into yaw
        return 0.0, pitch, math.atan2(-rot[0, 1], rot[1, 1])
    return math.atan2(rot[2, 1], rot[2, 2]), pitch, math.atan2(rot[1, 0], rot[0, 0])


def _quaternion(rot: np.ndarray) -> tuple[float, float, float, float]:
    """(w, x, y, z) of a rotation matrix (MuJoCo's order)."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(rot).as_quat()
    return (w, x, y, z) if w >= 0 else (-w, -x, -y, -z)


def _full_inertia(inertia: np.ndarray) -> list[float]:
    return [
        inertia[0, 0],
        inertia[1, 1],
        inertia[2, 2],
        inertia[0, 1],
        inertia[0, 2],
        inertia[1, 2],
    ]


# ----------------------------------------------------------------------------- URDF


def urdf_text(robot: RobotModel) -> str:
    """The robot model as URDF text (rotor inertia as Drake's transmission tags)."""
    ET.register_namespace("drake", DRAKE_NAMESPACE)
    root = ET.Element("robot", {"name": robot.name})
    for line in _header(robot, "URDF") + [
        "Rotor inertia (armature) has no URDF field: each joint's <transmission> records it as "
        "Drake's drake:rotor_inertia",
        "with drake:gear_ratio 1, i.e. the reflected inertia at the joint; for Pinocchio set "
        "model.armature from it.",
        "Gravity: 9.80665 m/s^2 along -z of the world (Pinocchio's default is 9.81).",
    ]:
        root.append(ET.Comment(f" {line} "))
    links = [WORLD] + [j.child for j in robot.joints]
    for name in links:
        link = ET.SubElement(root, "link", {"name": name})
        inertial = robot.inertials.get(name)
        if inertial is not None:
            element = ET.SubElement(link, "inertial")
            ET.SubElement(element, "origin", {"xyz": _nums(inertial.com), "rpy": "0 0 0"})
            ET.SubElement(element, "mass", {"value": _num(inertial.mass)})
            i = inertial.inertia
            ET.SubElement(
                element,
                "inertia",
                {
                    "ixx": _num(i[0, 0]),
                    "ixy": _num(i[0, 1]),
                    "ixz": _num(i[0, 2]),
                    "iyy": _num(i[1, 1]),
                    "iyz": _num(i[1, 2]),
                    "izz": _num(i[2, 2]),
                },
            )
    for j in robot.joints:
        joint = ET.SubElement(root, "joint", {"name": j.name, "type": j.type})
        ET.SubElement(
            joint, "origin", {"xyz": _nums(j.origin[:3, 3]), "rpy": _nums(_rpy(j.origin[:3, :3]))}
        )
        ET.SubElement(joint, "parent", {"link": j.parent})
        ET.SubElement(joint, "child", {"link": j.child})
        if j.type == "revolute":
            ET.SubElement(joint, "axis", {"xyz": _nums(j.axis)})
            ET.SubElement(
                joint,
                "limit",
                {
                    "lower": _num(j.lower),
                    "upper": _num(j.upper),
                    "effort": _num(robot.effort[j.name]),
                    "velocity": _num(j.velocity if j.velocity is not None else 0.0),
                },
            )
            ET.SubElement(
                joint,
                "dynamics",
                {"damping": _num(robot.damping[j.name]), "friction": _num(robot.friction[j.name])},
            )
    for j in robot.axis_joints:
        transmission = ET.SubElement(root, "transmission", {"name": f"{j.name}_transmission"})
        ET.SubElement(transmission, "type").text = "transmission_interface/SimpleTransmission"
        joint = ET.SubElement(transmission, "joint", {"name": j.name})
        ET.SubElement(joint, "hardwareInterface").text = "hardware_interface/EffortJointInterface"
        actuator = ET.SubElement(transmission, "actuator", {"name": f"{j.name}_actuator"})
        ET.SubElement(actuator, "mechanicalReduction").text = "1"
        ET.SubElement(
            actuator, f"{{{DRAKE_NAMESPACE}}}rotor_inertia", {"value": _num(robot.armature[j.name])}
        )
        ET.SubElement(actuator, f"{{{DRAKE_NAMESPACE}}}gear_ratio", {"value": "1"})
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def read_urdf_joint_dynamics(path) -> dict[str, dict[str, float]]:
    """{joint: {"armature", "damping", "friction"}} of the revolute joints of an exported URDF, in
    file order; armature is drake:rotor_inertia x drake:gear_ratio^2 of the joint's transmission."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as error:
        raise InputError(
            str(path), f"not a readable URDF ({error})", "an XML file with a <robot> root"
        ) from None
    result: dict[str, dict[str, float]] = {}
    for joint in root.findall("joint"):
        if joint.get("type") not in ("revolute", "continuous"):
            continue
        dynamics = joint.find("dynamics")
        result[joint.get("name")] = {
            "armature": 0.0,
            "damping": float(dynamics.get("damping", 0.0)) if dynamics is not None else 0.0,
            "friction": float(dynamics.get("friction", 0.0)) if dynamics is not None else 0.0,
        }
    for transmission in root.findall("transmission"):
        joint = transmission.find("joint")
        actuator = transmission.find("actuator")
        if joint is None or actuator is None or joint.get("name") not in result:
            continue
        rotor = actuator.find(f"{{{DRAKE_NAMESPACE}}}rotor_inertia")
        ratio = actuator.find(f"{{{DRAKE_NAMESPACE}}}gear_ratio")
        if rotor is not None:
            r = float(ratio.get("value")) if ratio is not None else 1.0
            result[joint.get("name")]["armature"] = float(rotor.get("value")) * r * r
    return result


# ----------------------------------------------------------------------------- MJCF


def mjcf_text(robot: RobotModel, timestep: float = 1e-3) -> str:
    """The robot model as MJCF text (armature, damping, frictionloss per joint)."""
    root = ET.Element("mujoco", {"model": robot.name})
    for line in _header(robot, "MJCF") + [
        "The hand axis (8) is a rotor decoupled from the arm, as in the identification model: "
        "MuJoCo rejects a moving",
        f"body without mass, so it is the body '{HAND_ROTOR_BODY}' on a hinge fixed to the world, "
        "with inertia IA8 about the",
        "hinge and its centre of mass on it (its mass has no effect).",
    ]:
        root.append(ET.Comment(f" {line} "))
    ET.SubElement(
        root, "compiler", {"angle": "radian", "autolimits": "true", "inertiafromgeom": "false"}
    )
    ET.SubElement(
        root,
        "option",
        {"gravity": f"0 0 {_num(-GRAVITY)}", "timestep": _num(timestep), "integrator": "RK4"},
    )
    world = ET.SubElement(root, "worldbody")
    bodies = {WORLD: world}
    hand = None
    for j in robot.joints:
        if j.axis_number == robot.hand_axis:
            hand = j
            continue
        quat = _quaternion(j.origin[:3, :3])
        body = ET.SubElement(
            bodies[j.parent],
            "body",
            {"name": j.child, "pos": _nums(j.origin[:3, 3]), "quat": _nums(quat)},
        )
        bodies[j.child] = body
        inertial = robot.inertials.get(j.child)
        if inertial is not None:
            ET.SubElement(
                body,
                "inertial",
                {
                    "pos": _nums(inertial.com),
                    "mass": _num(inertial.mass),
                    "fullinertia": _nums(_full_inertia(inertial.inertia)),
                },
            )
        if j.type == "revolute":
            ET.SubElement(body, "joint", _mjcf_joint(robot, j))
    if hand is not None:
        ia8 = robot.armature[hand.name]
        body = ET.SubElement(world, "body", {"name": HAND_ROTOR_BODY})
        ET.SubElement(
            body,
            "inertial",
            {"pos": "0 0 0", "mass": _num(HAND_ROTOR_MASS), "diaginertia": _nums([ia8, ia8, ia8])},
        )
        attributes = _mjcf_joint(robot, hand)
        attributes.update(axis="0 0 1", armature="0")
        ET.SubElement(body, "joint", attributes)
    if robot.drive is not None:
        _mjcf_drive(root, robot)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def _mjcf_drive(root: ET.Element, robot: RobotModel) -> None:
    """One actuator per axis as the arm is driven, and the timing MJCF has no field for."""
    drive = robot.drive
    joints = robot.axis_joints
    period = _num(drive.control_period)
    if drive.mode == "position":
        lines = [
            "Actuators: the servos' own position loop (drive_mode position). ctrl = goal position "
            "(rad); force = kp (ctrl - q)",
            "- kv qdot, clamped at forcerange (N·m): kp = gear x stall current x the loop's duty "
            "per rad, kv = gear x stall",
            "current x (its duty per rad/s + 1/no-load speed: the motor's torque-speed line), "
            "forcerange = gear x stall current",
            "x the duty limit. Not in MJCF: the servo's profile of the goal, its integral term, "
            "its tick (servo_period_s).",
        ]
    else:
        lines = [
            "Actuators: the servos' current control. ctrl = goal current of one servo (A); joint "
            "torque = gear x ctrl, gear the",
            "torque record's N·m/A of the axis (all its servos); ctrlrange and forcerange = the "
            "servo's current limit, so the",
            "torque limit is gear x forcerange (also the joint's actuatorfrcrange, N·m).",
        ]
    lines += [
        f"Timing (custom numeric data): the host's control period control_period_s = {period} s "
        "(each command is",
        "held between cycles) and each axis's dead time dead_time_s (model (1)'s T_d: encoder "
        "read to torque, the half",
        "period of hold included); a controller run around mj_step at that period should apply "
        "each command",
        "dead_time_s - control_period_s/2 after the read it was computed from.",
    ]
    for line in lines:
        root.append(ET.Comment(f" {line} "))
    custom = ET.SubElement(root, "custom")
    ET.SubElement(custom, "numeric", {"name": "control_period_s", "data": period})
    ET.SubElement(custom, "numeric", {"name": "dead_time_s", "data": _nums(drive.dead_time)})
    if drive.servo_period is not None:
        ET.SubElement(
            custom, "numeric", {"name": "servo_period_s", "data": _num(drive.servo_period)}
        )
    actuators = ET.SubElement(root, "actuator")
    for index, j in enumerate(joints):
        if drive.mode == "position":
            limit = drive.force_limit[index]
            attributes = {
                "name": f"{j.name}_position",
                "joint": j.name,
                "kp": _num(drive.kp[index]),
                "kv": _num(drive.kv[index]),
                "ctrlrange": f"{_num(j.lower)} {_num(j.upper)}",
                "forcerange": f"{_num(-limit)} {_num(limit)}",
            }
            ET.SubElement(actuators, "position", attributes)
            continue
        limit = drive.current_limit[index]
        current = f"{_num(-limit)} {_num(limit)}"
        ET.SubElement(
            actuators,
            "motor",
            {
                "name": f"{j.name}_motor",
                "joint": j.name,
                "gear": _num(drive.gear[index]),
                "ctrlrange": current,
                "forcerange": current,
            },
        )


def _mjcf_joint(robot: RobotModel, j: Joint) -> dict[str, str]:
    return {
        "name": j.name,
        "type": "hinge",
        "axis": _nums(j.axis),
        "range": f"{_num(j.lower)} {_num(j.upper)}",
        "armature": _num(robot.armature[j.name]),
        "damping": _num(robot.damping[j.name]),
        "frictionloss": _num(robot.friction[j.name]),
    } | (
        {}
        if robot.drive is None
        else {"actuatorfrcrange": f"{_num(-robot.effort[j.name])} {_num(robot.effort[j.name])}"}
    )


def _header(robot: RobotModel, kind: str) -> list[str]:
    if robot.header is not None:
        return [line.replace("{kind}", kind) for line in robot.header] + robot.notes
    return [
        f"CRANE-X7, identified dynamics ({kind}), written by crane-id export (crane_lib.export); "
        "kinematics, link and",
        "joint names: RT Corporation's crane_x7_description (non-commercial licence). SI units, "
        "radians.",
        f"Mounting: {robot.mounting} (gravity along -z of the world).",
    ] + robot.notes


# ----------------------------------------------------------------------------- writing


def write_text(path, text: str) -> Path:
    """One file, atomically (nothing half-written)."""
    with atomic_write(path, encoding="utf-8") as handle:
        handle.write(text)
    return Path(path)


def write_files(robot: RobotModel, urdf=None, mjcf=None) -> list[Path]:
    """Write the URDF and/or MJCF; both texts are made before either file is written, each
    atomically."""
    texts = []
    if urdf is not None:
        texts.append((Path(urdf), urdf_text(robot)))
    if mjcf is not None:
        texts.append((Path(mjcf), mjcf_text(robot)))
    return [write_text(path, text) for path, text in texts]
