"""Robot description: the modified-DH table of the model and the manufacturer's description.

Stage 1 of the pipeline. The MDH table (paper Table I, OpenSYMORO convention) is read from
`data/crane_x7_mdh.csv`; the manufacturer's numeric description (masses, centres of mass,
inertias, joint origins and limits) from `data/crane_x7_description/`. This module places
the MDH frames in the description's coordinates, checks that they describe the same joint
axes, and expresses the description's links as standard parameters of the MDH links
(hand and fingers lumped into link 7).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from crane_lib.errors import InputError
from crane_lib.model.parameters import N_LINKS
from crane_lib.paths import DATA_DIR

if (
    TYPE_CHECKING
):  # sympy is imported where the exact table is read (a cached model load never does)
    import sympy

MDH_TABLE_CSV = DATA_DIR / "crane_x7_mdh.csv"
DESCRIPTION_DIR = DATA_DIR / "crane_x7_description"

ARM_JOINTS = (
    "crane_x7_shoulder_fixed_part_pan_joint",
    "crane_x7_shoulder_revolute_part_tilt_joint",
    "crane_x7_upper_arm_revolute_part_twist_joint",
    "crane_x7_upper_arm_revolute_part_rotate_joint",
    "crane_x7_lower_arm_fixed_part_joint",
    "crane_x7_lower_arm_revolute_part_joint",
    "crane_x7_wrist_joint",
)
HAND_JOINT = "crane_x7_gripper_finger_a_joint"
MDH_COLUMNS = ["j", "ant", "sigma", "alpha_deg", "d_m", "theta_offset_deg", "r_m"]


@dataclass(frozen=True)
class MDHRow:
    """One row of the MDH table; exact sympy values for the symbolic model, floats for numerics."""

    j: int
    ant: int
    sigma: int
    alpha: sympy.Expr
    d: sympy.Expr
    theta_offset: sympy.Expr
    r: sympy.Expr

    def as_floats(self) -> tuple[float, float, float, float]:
        """The row's α, d, θ offset and r as floats (rad, m)."""
        return float(self.alpha), float(self.d), float(self.theta_offset), float(self.r)


def _exact_angle(text: str) -> sympy.Expr:
    """Degrees in the file -> exact radians (90 -> pi/2)."""
    import sympy

    return sympy.Rational(text) * sympy.pi / 180


def _exact_length(text: str) -> sympy.Expr:
    import sympy

    return sympy.Rational(text)


def load_mdh_table(path: Path | str = MDH_TABLE_CSV) -> tuple[MDHRow, ...]:
    """Read and check an MDH table file: a serial chain of revolute joints j = 1..7."""
    path = Path(path)
    rows: list[MDHRow] = []
    header = None
    with open(path, encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fields = [f.strip() for f in line.split(",")]
            where = f"{path}:{lineno}"
            if header is None:
                if fields != MDH_COLUMNS:
                    raise InputError(
                        where, f"header {fields}", f"the columns {','.join(MDH_COLUMNS)}"
                    )
                header = fields
                continue
            if len(fields) != len(MDH_COLUMNS):
                raise InputError(
                    where,
                    f"{len(fields)} fields",
                    f"{len(MDH_COLUMNS)} fields ({','.join(MDH_COLUMNS)})",
                )
            values = {}
            for name, text in zip(MDH_COLUMNS, fields):
                try:
                    number = float(text)
                except ValueError:
                    raise InputError(
                        where, f"{name} = {text!r} is not a number", "a finite number"
                    ) from None
                if not math.isfinite(number):
                    raise InputError(where, f"{name} = {text!r}", "a finite number")
                values[name] = text
            j, ant, sigma = int(values["j"]), int(values["ant"]), int(values["sigma"])
            expected_j = len(rows) + 1
            if j != expected_j or ant != j - 1:
                raise InputError(
                    where,
                    f"joint j={j} with antecedent {ant}",
                    f"joint {expected_j} with antecedent {expected_j - 1} (serial chain)",
                )
            if sigma != 0:
                raise InputError(where, f"sigma={sigma} for joint {j}", "sigma=0 (revolute joint)")
            rows.append(
                MDHRow(
                    j=j,
                    ant=ant,
                    sigma=sigma,
                    alpha=_exact_angle(values["alpha_deg"]),
                    d=_exact_length(values["d_m"]),
                    theta_offset=_exact_angle(values["theta_offset_deg"]),
                    r=_exact_length(values["r_m"]),
                )
            )
    if header is None:
        raise InputError(str(path), "no header", f"the columns {','.join(MDH_COLUMNS)}")
    if len(rows) != N_LINKS:
        raise InputError(str(path), f"{len(rows)} joints", f"{N_LINKS} revolute arm joints")
    return tuple(rows)


def mdh_transform(row: MDHRow, theta: float) -> np.ndarray:
    """4x4 transform of frame j in frame j-1: Rx(alpha) Tx(d) Rz(theta) Tz(r)."""
    alpha, d, offset, r = row.as_floats()
    ca, sa = math.cos(alpha), math.sin(alpha)
    ct, st = math.cos(theta + offset), math.sin(theta + offset)
    return np.array(
        [
            [ct, -st, 0.0, d],
            [ca * st, ca * ct, -sa, -r * sa],
            [sa * st, sa * ct, ca, r * ca],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def mdh_frames(table: tuple[MDHRow, ...], q: np.ndarray | None = None) -> list[np.ndarray]:
    """Transforms of frames 1..7 in frame 0 at the arm angles q (default the zero pose)."""
    q = np.zeros(len(table)) if q is None else np.asarray(q, dtype=float)
    frames, pose = [], np.eye(4)
    for row, angle in zip(table, q):
        pose = pose @ mdh_transform(row, angle)
        frames.append(pose)
    return frames


# ---------------------------------------------------------------- manufacturer's description


@dataclass(frozen=True)
class UrdfJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray  # 4x4 transform of the child frame in the parent frame at zero angle
    axis: np.ndarray | None
    lower: float | None
    upper: float | None


@dataclass(frozen=True)
class UrdfInertial:
    link: str
    mass: float
    com: np.ndarray  # in the link frame
    inertia: np.ndarray  # about the centre of mass, in link-frame axes
    note: str


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (
        math.cos(roll),
        math.sin(roll),
        math.cos(pitch),
        math.sin(pitch),
        math.cos(yaw),
        math.sin(yaw),
    )
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@lru_cache(maxsize=4)
def load_description(
    directory: Path | str = DESCRIPTION_DIR,
) -> tuple[dict[str, UrdfJoint], dict[str, UrdfInertial]]:
    """Joints and inertials of the manufacturer's description (SI, radians)."""
    directory = Path(directory)
    joints: dict[str, UrdfJoint] = {}
    for lineno, row in enumerate(_read_csv(directory / "joints.csv"), start=2):
        try:
            xyz = [float(row[f"origin_{a}"]) for a in "xyz"]
            rpy = [float(row[f"origin_{a}"]) for a in ("roll", "pitch", "yaw")]
        except ValueError:
            raise InputError(
                f"{directory / 'joints.csv'}:{lineno}", "non-numeric origin", "numbers in origin_*"
            ) from None
        origin = np.eye(4)
        origin[:3, :3] = _rpy_matrix(*rpy)
        origin[:3, 3] = xyz
        axis = np.array([float(row[f"axis_{a}"]) for a in "xyz"]) if row["axis_x"] else None
        joints[row["joint"]] = UrdfJoint(
            row["joint"],
            row["type"],
            row["parent"],
            row["child"],
            origin,
            axis,
            float(row["lower_rad"]) if row["lower_rad"] else None,
            float(row["upper_rad"]) if row["upper_rad"] else None,
        )
    inertials: dict[str, UrdfInertial] = {}
    for row in _read_csv(directory / "links.csv"):
        if not row["mass_kg"]:
            continue
        ixx, ixy, ixz, iyy, iyz, izz = (
            float(row[k]) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        )
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        note = row["frame_note"]
        # some inertials are given in a frame rotated by rpy = (1.570795, 0, 0): the source's M_PI/2
        if "rotated rpy=(1.570795 0 0)" in note:
            rot = _rpy_matrix(1.570795, 0.0, 0.0)
            inertia = rot @ inertia @ rot.T
        inertials[row["link"]] = UrdfInertial(
            row["link"],
            float(row["mass_kg"]),
            np.array([float(row[f"com_{a}"]) for a in "xyz"]),
            inertia,
            note,
        )
    return joints, inertials


def joint_limits_rad(directory: Path | str = DESCRIPTION_DIR) -> np.ndarray:
    """(8, 2) [lower, upper] of axes 1..8 in radians: the seven arm joints, then the hand."""
    joints, _ = load_description(directory)
    return np.array(
        [[joints[name].lower, joints[name].upper] for name in ARM_JOINTS + (HAND_JOINT,)]
    )


def zero_pose_link_frames(joints: dict[str, UrdfJoint]) -> dict[str, np.ndarray]:
    """Pose of every link of the description in base_link coordinates at zero joint angles."""
    by_child = {j.child: j for j in joints.values()}
    frames: dict[str, np.ndarray] = {}

    def frame(link: str) -> np.ndarray:
        if link not in frames:
            joint = by_child.get(link)
            frames[link] = (
                np.eye(4)
                if joint is None or joint.parent == link
                else frame(joint.parent) @ joint.origin
            )
        return frames[link]

    for j in joints.values():
        frame(j.child)
    return frames


def _moving_link_of(link: str, joints: dict[str, UrdfJoint]) -> int:
    """MDH link (1..7) that carries `link`, or 0 for the base. Finger joints count as fixed."""
    by_child = {j.child: j for j in joints.values()}
    while link in by_child:
        joint = by_child[link]
        if joint.name in ARM_JOINTS:
            return ARM_JOINTS.index(joint.name) + 1
        if joint.parent == "world" and joint.type == "fixed" and joint.child != "base_link":
            return 0  # the massless gazebo mimic dummy hangs off world
        link = joint.parent
    return 0


@dataclass(frozen=True)
class FramePlacement:
    """MDH frames placed in the description's coordinates at the zero pose."""

    base_in_description: np.ndarray  # 4x4 pose of MDH frame 0 in base_link coordinates
    frames: list[np.ndarray]  # 4x4 poses of MDH frames 1..7 in base_link coordinates
    description_joint_origins: list[np.ndarray]  # origins of the URDF arm joint frames
    description_joint_axes: list[np.ndarray]  # their axes in base_link coordinates


def place_mdh_frames(table=None, directory: Path | str = DESCRIPTION_DIR) -> FramePlacement:
    """Put frame 0 where the joint-1 axis meets the joint-2 axis, axes parallel to base_link's.

    That point is where the MDH table (d1 = r1 = r2 = 0) puts O0 = O1 = O2; what lies
    between it and base_link along the joint-1 axis (the 0.105 m rise) is not a kinematic
    quantity of the model, since joint 1 turns about that line.
    """
    table = load_mdh_table() if table is None else table
    joints, _ = load_description(directory)
    link_frames = zero_pose_link_frames(joints)
    origins, axes = [], []
    for name in ARM_JOINTS:
        joint = joints[name]
        pose = link_frames[joint.parent] @ joint.origin
        origins.append(pose[:3, 3])
        axes.append(pose[:3, :3] @ joint.axis)
    # closest point of the joint-1 axis to the joint-2 axis
    p1, u1, p2, u2 = origins[0], axes[0], origins[1], axes[1]
    w0 = p1 - p2
    a, b, c, d, e = u1 @ u1, u1 @ u2, u2 @ u2, u1 @ w0, u2 @ w0
    denom = a * c - b * b
    s = (b * e - c * d) / denom if abs(denom) > 1e-12 else 0.0
    base = np.eye(4)
    base[:3, 3] = p1 + s * u1
    frames = [base @ f for f in mdh_frames(table)]
    return FramePlacement(base, frames, origins, axes)


def description_standard_parameters(
    table=None, directory: Path | str = DESCRIPTION_DIR
) -> dict[str, float]:
    """Inertial standard parameters (XXj..Mj, about O_j in frame-j axes) of MDH links 1..7.

    Each URDF link with an inertial joins the MDH link that moves it; the gripper base and
    both fingers (hand at 0) are lumped into link 7. The shoulder's fixed part is the base.
    """
    placement = place_mdh_frames(table, directory)
    joints, inertials = load_description(directory)
    link_frames = zero_pose_link_frames(joints)
    params: dict[str, float] = {}
    for j in range(1, N_LINKS + 1):
        mass, first_moment, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        frame = placement.frames[j - 1]
        rot, origin = frame[:3, :3], frame[:3, 3]
        for link, inertial in inertials.items():
            if _moving_link_of(link, joints) != j:
                continue
            pose = link_frames[link]
            com_world = pose[:3, :3] @ inertial.com + pose[:3, 3]
            inertia_world = pose[:3, :3] @ inertial.inertia @ pose[:3, :3].T
            r = rot.T @ (com_world - origin)
            m = inertial.mass
            mass += m
            first_moment += m * r
            inertia += rot.T @ inertia_world @ rot + m * (r @ r * np.eye(3) - np.outer(r, r))
        params.update(
            {
                f"XX{j}": inertia[0, 0],
                f"XY{j}": inertia[0, 1],
                f"XZ{j}": inertia[0, 2],
                f"YY{j}": inertia[1, 1],
                f"YZ{j}": inertia[1, 2],
                f"ZZ{j}": inertia[2, 2],
                f"MX{j}": first_moment[0],
                f"MY{j}": first_moment[1],
                f"MZ{j}": first_moment[2],
                f"M{j}": mass,
            }
        )
    return params


def geometry_check(table=None, directory: Path | str = DESCRIPTION_DIR) -> list[dict]:
    """Per arm joint: the MDH axis against the description's axis at the zero pose.

    `axis_angle_deg` is the angle between the two axis directions, `line_distance_m` the
    distance of the description's joint origin from the MDH axis line, `origin_offset_m` how
    far along the axis the description's joint frame sits from the MDH origin O_j.
    """
    placement = place_mdh_frames(table, directory)
    rows = []
    for j in range(1, N_LINKS + 1):
        frame = placement.frames[j - 1]
        z, origin = frame[:3, 2], frame[:3, 3]
        urdf_origin, urdf_axis = (
            placement.description_joint_origins[j - 1],
            placement.description_joint_axes[j - 1],
        )
        delta = urdf_origin - origin
        along = float(delta @ z)
        rows.append(
            {
                "joint": j,
                "mdh_axis": tuple(np.round(z, 12) + 0.0),
                "description_axis": tuple(np.round(urdf_axis, 12) + 0.0),
                "axis_angle_deg": math.degrees(
                    math.acos(max(-1.0, min(1.0, float(z @ urdf_axis))))
                ),
                "line_distance_m": float(np.linalg.norm(delta - along * z)),
                "origin_offset_m": along,
                "mdh_origin_height_m": float(origin[2]),
            }
        )
    return rows
