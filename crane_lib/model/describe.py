"""An arm's description folder from its URDF or MJCF file (`crane-id describe`).

`describe(path, ...)` reads a URDF (`<robot>`) or an MJCF (`<mujoco>`) file and returns the four
files of the folder `arm_description.load_urdf_arm` reads (arm.toml, joints.csv, links.csv,
actuators.csv), as text, checked by that reader before they are returned.

* URDF: the file's own numbers, written as the file prints them (the committed SO-101 folder is
  the example-robot-data URDF's text unchanged); every joint of the tree under the root link,
  fixed ones included: `load_urdf_arm` composes the fixed joints between two arm joints exactly
  and lumps every link into the arm link that carries it (non-arm moving joints, such as
  fingers, count as fixed at zero). Pinocchio's URDF parser is the cross-check (tests).
* MJCF: compiled by MuJoCo (`mujoco.MjModel.from_xml_path`), so defaults, classes, `childclass`,
  `quat`/`euler`/`axisangle` and `<inertial>` are MuJoCo's own reading. Each body becomes a
  link whose frame is the body frame moved to its joint's `pos` and, for an axis off x, y and z,
  turned so that z is the axis; a body without a joint hangs from its parent by a fixed joint.
  Body inertials (`body_ipos`, `body_iquat`, `body_inertia`) are written as full tensors in the
  link frame. The root link is MuJoCo's `world`, gravity `opt.gravity` in it. `armature`,
  `damping` and `frictionloss` of each arm joint are returned as the prior (`Description.prior`)
  and written as comments of arm.toml (the schema has no field for them).

The chain: from the root link (`base`, default the tree's root) down to `tip` (default: the
leaf reached by following, at every link, the one child subtree that holds moving joints; a
link with two such subtrees is a branch and needs `tip`). Its moving joints are the arm joints
(`arm_joints` overrides), less the `gripper` if one is named.

Refused before anything is written, naming the file, the element (joint or body, with the
file's line) and what was expected: a file neither URDF nor MJCF; a branch without `tip`; a
floating (free, ball, planar) joint on the chain; a mimic joint, an equality constraint or a
tendon on the chain; a prismatic arm joint; an arm joint without limits (continuous; the audit
domain and the excitation need them); a link with mass <= 0 (a URDF link with mass 0 and no
inertia is a massless frame) or an inertia that is not positive semi-definite or breaks the
triangle inequality; unknown servo names or a count that does not match the axes.
"""

from __future__ import annotations

import json
import math
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

import numpy as np

from crane_lib.errors import SMALL_INPUT_MAX_BYTES, InputError, read_input_text
from crane_lib.model import arm_description, servo_catalogue
from crane_lib.paths import portable

FLOATING_TYPES = ("floating", "planar")
MOVING_TYPES = ("revolute", "continuous", "prismatic")
TRIANGLE_TOLERANCE = 1e-12  # kg·m^2, relative to the largest principal moment
AXIS_TOLERANCE = 1e-12  # an axis within this of x, y or z is that axis
GRAVITY_TOLERANCE = 1e-9  # gravity within this of a frame axis is along it
ENCODER_NOISE_FRACTION = 0.5  # the gains' rule, as the ViperX and the SO-101 use


@dataclass
class Joint:
    """One row of joints.csv: numbers as text (a URDF's own tokens) or floats."""

    name: str
    type: str
    parent: str
    child: str
    xyz: tuple
    rpy: tuple
    axis: tuple | None
    lower: object = None
    upper: object = None
    velocity: object = None
    effort: object = None
    line: str = ""
    mimic: str | None = None


@dataclass
class Link:
    """One row of links.csv: mass (None: a massless frame), centre of mass, inertial rpy, tensor."""

    name: str
    mass: object = None
    com: tuple = ("0", "0", "0")
    rpy: tuple = ("0", "0", "0")
    inertia: tuple = ("0", "0", "0", "0", "0", "0")  # ixx ixy ixz iyy iyz izz
    line: str = ""


@dataclass
class Description:
    """What `describe` found: the tree, the chain, gravity, the prior, and the folder's text."""

    source: str
    kind: str  # "urdf" or "mjcf"
    name: str
    root: str
    joints: list[Joint]
    links: list[Link]
    arm_joints: list[str]
    gripper: str | None
    gravity_direction: tuple[int, int, int]
    prior: dict[str, dict[str, float]] = field(default_factory=dict)  # MJCF: per joint
    texts: dict[str, str] = field(default_factory=dict)  # file name -> text
    unknown: list[str] = field(default_factory=list)  # catalogue fields no source gives


# ------------------------------------------------------------------ XML with line numbers


def _parse_xml(path: Path) -> tuple[ET.Element, dict[int, int]]:
    """The file's XML tree and each element's line (by id), or InputError naming the line."""
    text = read_input_text(path, "a URDF or MJCF file (UTF-8 XML)", 50 * SMALL_INPUT_MAX_BYTES)
    builder, lines = ET.TreeBuilder(), {}
    parser = expat.ParserCreate()

    def start(tag, attrs):
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.ordered_attributes = False
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        raise InputError(
            f"{portable(path)}:{error.lineno}", f"not XML ({error})", "a URDF or an MJCF file"
        ) from None
    return builder.close(), lines


def _float(text, where: str, what: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(where, f"{what} = {text!r}", "a finite number") from None
    if not math.isfinite(value):
        raise InputError(where, f"{what} = {text!r}", "a finite number")
    return value


def _triple(text: str | None, where: str, what: str) -> tuple:
    if text is None:
        return ("0", "0", "0")
    parts = text.split()
    if len(parts) != 3:
        raise InputError(where, f"{what} = {text!r}", "three numbers")
    for p in parts:
        _float(p, where, what)
    return tuple(parts)


# ------------------------------------------------------------------ URDF


def _read_urdf(path: Path, root_el: ET.Element, lines: dict) -> tuple[list[Joint], list[Link]]:
    shown = portable(path)
    links = []
    for el in root_el.findall("link"):
        where = f"{shown}:{lines[id(el)]}"
        link = Link(el.get("name", ""), line=where)
        inertial = el.find("inertial")
        if inertial is not None:
            mass_el, origin, tensor = (inertial.find(k) for k in ("mass", "origin", "inertia"))
            mass = "0" if mass_el is None else mass_el.get("value", "0")
            _float(mass, where, f"link {link.name!r} mass")
            link.mass = mass
            if origin is not None:
                link.com = _triple(origin.get("xyz"), where, f"link {link.name!r} inertial xyz")
                link.rpy = _triple(origin.get("rpy"), where, f"link {link.name!r} inertial rpy")
            if tensor is not None:
                keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
                link.inertia = tuple(tensor.get(k, "0") for k in keys)
                for k, v in zip(keys, link.inertia):
                    _float(v, where, f"link {link.name!r} {k}")
        links.append(link)
    joints = []
    for el in root_el.findall("joint"):
        where = f"{shown}:{lines[id(el)]}"
        name, kind = el.get("name", ""), el.get("type", "")
        parent, child, origin = el.find("parent"), el.find("child"), el.find("origin")
        axis_el, limit, mimic = el.find("axis"), el.find("limit"), el.find("mimic")
        if parent is None or child is None:
            raise InputError(where, f"joint {name!r} without parent or child", "both links")
        joint = Joint(
            name,
            kind,
            parent.get("link", ""),
            child.get("link", ""),
            _triple(None if origin is None else origin.get("xyz"), where, f"joint {name!r} xyz"),
            _triple(None if origin is None else origin.get("rpy"), where, f"joint {name!r} rpy"),
            None,
            line=where,
            mimic=None if mimic is None else mimic.get("joint"),
        )
        if kind in MOVING_TYPES:
            joint.axis = _triple(
                "1 0 0" if axis_el is None else axis_el.get("xyz", "1 0 0"),
                where,
                f"joint {name!r} axis",
            )
            if limit is not None and kind != "continuous":
                joint.lower, joint.upper = limit.get("lower", "0"), limit.get("upper", "0")
            if limit is not None:
                joint.velocity, joint.effort = limit.get("velocity"), limit.get("effort")
        elif kind != "fixed" and kind not in FLOATING_TYPES:
            raise InputError(
                where, f"joint {name!r} has type {kind!r}", "revolute, continuous, prismatic, fixed"
            )
        joints.append(joint)
    return joints, links


# ------------------------------------------------------------------ MJCF


def _rpy_of(rotation: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw of a rotation: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    pitch = math.atan2(-rotation[2, 0], math.hypot(rotation[0, 0], rotation[1, 0]))
    if math.cos(pitch) < 1e-12:  # gimbal lock: yaw taken as 0
        return math.atan2(-rotation[1, 2], rotation[1, 1]), pitch, 0.0
    roll = math.atan2(rotation[2, 1], rotation[2, 2])
    yaw = math.atan2(rotation[1, 0], rotation[0, 0])
    return roll, pitch, yaw


def _quat_matrix(quat) -> np.ndarray:
    import mujoco

    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.asarray(quat, dtype=float))
    return out.reshape(3, 3)


def _align(axis: np.ndarray) -> np.ndarray:
    """A rotation taking z onto `axis` (identity for an axis along x, y or z: none needed)."""
    unit = axis / np.linalg.norm(axis)
    if np.max(np.abs(np.abs(unit) - np.round(np.abs(unit)))) < AXIS_TOLERANCE:
        return np.eye(3)
    z = np.array([0.0, 0.0, 1.0])
    v, c = np.cross(z, unit), float(z @ unit)
    skew = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + skew + skew @ skew / (1.0 + c)


def _element_lines(root_el: ET.Element, lines: dict, tag: str) -> dict[str, int]:
    return {el.get("name"): lines[id(el)] for el in root_el.iter(tag) if el.get("name")}


def _compile_mjcf(path: Path):
    import mujoco

    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as error:
        message = " ".join(str(error).split())
        raise InputError(portable(path), f"MuJoCo does not compile it ({message})", "an MJCF file")


def _read_mjcf(path: Path, root_el: ET.Element, lines: dict):
    """Joints, links, prior and MuJoCo's model of an MJCF file (links: bodies)."""
    import mujoco

    shown = portable(path)
    model = _compile_mjcf(path)
    body_line = _element_lines(root_el, lines, "body")
    joint_line = _element_lines(root_el, lines, "joint")
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(model.nbody)]
    names = [n or f"body{b}" for b, n in enumerate(names)]
    kinds = {
        int(mujoco.mjtJoint.mjJNT_HINGE): "revolute",
        int(mujoco.mjtJoint.mjJNT_SLIDE): "prismatic",
        int(mujoco.mjtJoint.mjJNT_FREE): "floating",
        int(mujoco.mjtJoint.mjJNT_BALL): "ball",
    }
    # link frame of body b = body frame * (rotation, joint position): z along the joint's axis
    frame_rot, frame_pos = [np.eye(3)], [np.zeros(3)]
    joints, links, prior = [], [Link(names[0], line=shown)], {}
    for b in range(1, model.nbody):
        where = f"{shown}:{body_line.get(names[b], 0)}"
        count, first = model.body_jntnum[b], model.body_jntadr[b]
        if count > 1:
            raise InputError(
                where, f"body {names[b]!r} has {count} joints", "one joint per body (a serial arm)"
            )
        rot, pos = np.eye(3), np.zeros(3)
        kind, axis, jname, lower, upper = "fixed", None, f"{names[b]}_fixed", None, None
        if count == 1:
            j = first
            jname = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
            jwhere = f"{shown}:{joint_line.get(jname, body_line.get(names[b], 0))}"
            kind = kinds[int(model.jnt_type[j])]
            if kind in ("floating", "ball"):
                joints.append(
                    Joint(
                        jname,
                        kind,
                        names[model.body_parentid[b]],
                        names[b],
                        (),
                        (),
                        None,
                        line=jwhere,
                    )
                )
                frame_rot.append(rot), frame_pos.append(pos), links.append(Link(names[b]))
                continue
            axis = np.array(model.jnt_axis[j], dtype=float)
            rot, pos = _align(axis), np.array(model.jnt_pos[j], dtype=float)
            axis = rot.T @ axis / np.linalg.norm(axis)
            if model.jnt_limited[j]:
                lower, upper = (float(x) for x in model.jnt_range[j])
            elif kind == "revolute":
                kind = "continuous"
            dof = model.jnt_dofadr[j]
            prior[jname] = {
                "armature": float(model.dof_armature[dof]),
                "damping": float(model.dof_damping[dof]),
                "frictionloss": float(model.dof_frictionloss[dof]),
            }
        parent = model.body_parentid[b]
        body_rot = _quat_matrix(model.body_quat[b])
        # origin = C_parent^-1 * [body_rot | body_pos] * C_b
        p_rot, p_pos = frame_rot[parent], frame_pos[parent]
        origin_rot = p_rot.T @ body_rot @ rot
        origin_pos = p_rot.T @ (np.array(model.body_pos[b]) + body_rot @ pos - p_pos)
        frame_rot.append(rot)
        frame_pos.append(pos)
        joints.append(
            Joint(
                jname,
                kind,
                names[parent],
                names[b],
                tuple(float(x) for x in origin_pos),
                _rpy_of(origin_rot),
                None
                if axis is None
                else tuple(
                    float(round(a)) if abs(a - round(a)) < AXIS_TOLERANCE else float(a)
                    for a in axis
                ),
                lower,
                upper,
                line=f"{shown}:{joint_line.get(jname, body_line.get(names[b], 0))}",
            )
        )
        mass = float(model.body_mass[b])
        link = Link(names[b], line=where)
        if mass > 0:
            inertial_rot = rot.T @ _quat_matrix(model.body_iquat[b])
            tensor = inertial_rot @ np.diag(model.body_inertia[b]) @ inertial_rot.T
            link.mass = mass
            link.com = tuple(float(x) for x in rot.T @ (np.array(model.body_ipos[b]) - pos))
            link.rpy = (0.0, 0.0, 0.0)
            link.inertia = tuple(float(tensor[i, k]) for i, k in _TENSOR_INDEX)
        links.append(link)
    return joints, links, prior, model


_TENSOR_INDEX = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def _mjcf_couplings(model, path: Path, root_el, lines, chain_joints: set, chain_bodies: set):
    """Equality constraints and tendons that touch the chain: refused (closed loops, couplings)."""
    import mujoco

    shown = portable(path)
    obj = mujoco.mjtObj
    for e in range(model.neq):
        kind = model.eq_type[e]
        objtype = {
            int(mujoco.mjtEq.mjEQ_JOINT): obj.mjOBJ_JOINT,
            int(mujoco.mjtEq.mjEQ_CONNECT): obj.mjOBJ_BODY,
            int(mujoco.mjtEq.mjEQ_WELD): obj.mjOBJ_BODY,
        }.get(int(kind))
        if objtype is None:
            touched = True  # a tendon or flex equality: refused on any arm
            names = [str(e)]
        else:
            names = [
                mujoco.mj_id2name(model, objtype, int(i))
                for i in (model.eq_obj1id[e], model.eq_obj2id[e])
                if i >= 0
            ]
            touched = bool(
                set(names) & (chain_joints if objtype == obj.mjOBJ_JOINT else chain_bodies)
            )
        if touched:
            eq_lines = [
                lines[id(el)]
                for el in root_el.iter()
                if el.tag in ("connect", "weld", "joint", "tendon", "flex")
                and el.get("name") is not None
                and el.get("name") == mujoco.mj_id2name(model, obj.mjOBJ_EQUALITY, e)
            ]
            where = f"{shown}:{eq_lines[0]}" if eq_lines else shown
            raise InputError(
                where,
                f"equality constraint {e} couples {names} of the chain (a closed loop)",
                "a serial chain: no equality constraint on its joints or bodies",
            )
    for t in range(model.ntendon):
        start, count = model.tendon_adr[t], model.tendon_num[t]
        for w in range(start, start + count):
            kind, target = model.wrap_type[w], model.wrap_objid[w]
            if int(kind) == int(mujoco.mjtWrap.mjWRAP_JOINT):
                hit = mujoco.mj_id2name(model, obj.mjOBJ_JOINT, int(target)) in chain_joints
            elif int(kind) == int(mujoco.mjtWrap.mjWRAP_SITE):
                body = model.site_bodyid[target]
                hit = mujoco.mj_id2name(model, obj.mjOBJ_BODY, int(body)) in chain_bodies
            else:
                hit = False
            if hit:
                name = mujoco.mj_id2name(model, obj.mjOBJ_TENDON, t) or f"tendon {t}"
                tendon_line = _element_lines(root_el, lines, "fixed") | _element_lines(
                    root_el, lines, "spatial"
                )
                where = f"{shown}:{tendon_line[name]}" if name in tendon_line else shown
                raise InputError(
                    where,
                    f"tendon {name!r} acts on the chain",
                    "a serial chain without tendons on its joints or bodies",
                )


# ------------------------------------------------------------------ the chain


def _children(joints: list[Joint]) -> dict[str, list[Joint]]:
    out: dict[str, list[Joint]] = {}
    for j in joints:
        out.setdefault(j.parent, []).append(j)
    return out


def _subtree_moves(link: str, children: dict) -> bool:
    return any(
        j.type != "fixed" or _subtree_moves(j.child, children) for j in children.get(link, [])
    )


def find_chain(joints: list[Joint], root: str, tip: str | None, source: str) -> list[Joint]:
    """The joints from `root` to `tip` (default: the leaf along the one moving subtree)."""
    children = _children(joints)
    by_child = {j.child: j for j in joints}
    if tip is not None:
        if tip not in by_child and tip != root:
            raise InputError(source, f"--tip {tip!r} is no link of the file", "a link name")
        path, link = [], tip
        while link != root:
            if link not in by_child:
                raise InputError(
                    source, f"--tip {tip!r} does not hang from {root!r}", "a link below the base"
                )
            path.insert(0, by_child[link])
            link = by_child[link].parent
        return path
    path, link = [], root
    while True:
        moving = [
            j
            for j in children.get(link, [])
            if j.type != "fixed" or _subtree_moves(j.child, children)
        ]
        if not moving:
            return path
        if len(moving) > 1:
            raise InputError(
                moving[1].line or source,
                f"link {link!r} branches into joints {[j.name for j in moving]}, each with moving "
                "joints below",
                "--tip LINK naming the end of the arm's chain (or --arm-joints)",
            )
        path.append(moving[0])
        link = moving[0].child


def _ordered(joints: list[Joint], root: str, first: list[Joint]) -> list[Joint]:
    """The chain's moving joints base to tip with the fixed joints before each, then the rest
    depth first in file order (the order joints.csv is read in does not matter; this one reads)."""
    children, by_child = _children(joints), {j.child: j for j in joints}
    out: list[Joint] = []
    for joint in first:
        path, link = [joint], joint.parent
        while link != root and by_child[link] not in out and by_child[link] not in path:
            path.insert(0, by_child[link])
            link = by_child[link].parent
        out += [j for j in path if j not in out]

    def visit(link):
        for j in children.get(link, []):
            if j not in out:
                out.append(j)
            visit(j.child)

    visit(root)
    return out


def _descendants(link: str, children: dict) -> set[str]:
    out = {link}
    for j in children.get(link, []):
        out |= _descendants(j.child, children)
    return out


def _check_chain(joints, arm, gripper, source):
    named = {j.name: j for j in joints}
    for name in arm + ([gripper] if gripper else []):
        if name not in named:
            raise InputError(source, f"joint {name!r} is not in the file", "a joint of the file")
    for name in arm + ([gripper] if gripper else []):
        j = named[name]
        if j.type in FLOATING_TYPES or j.type in ("floating", "ball"):
            raise InputError(
                j.line, f"joint {name!r} is {j.type} (a floating base)", "a fixed-base serial arm"
            )
        if j.mimic is not None:
            raise InputError(
                j.line, f"joint {name!r} mimics {j.mimic!r}", "independent joints on the chain"
            )
    for j in joints:
        if j.mimic is not None and j.mimic in arm + ([gripper] if gripper else []):
            raise InputError(
                j.line,
                f"joint {j.name!r} mimics the chain's joint {j.mimic!r}",
                "no joint coupled to the chain's joints",
            )
    for name in arm:
        j = named[name]
        if j.type == "prismatic":
            raise InputError(j.line, f"arm joint {name!r} is prismatic", "a revolute joint")
        if j.type == "continuous" or j.lower is None or j.upper is None:
            raise InputError(
                j.line,
                f"arm joint {name!r} has no limits ({j.type})",
                "a revolute joint with lower and upper limits (the audit domain and the "
                "excitation need them)",
            )


def _check_floating(joints: list[Joint], root: str):
    """A floating joint anywhere between the root and the chain (or at all) is refused."""
    for j in joints:
        if j.type in FLOATING_TYPES or j.type in ("floating", "ball"):
            raise InputError(
                j.line,
                f"joint {j.name!r} is {j.type} (a floating base or a free body)",
                "a fixed-base serial arm: the base fixed to the root link",
            )


def _check_inertials(links: list[Link]):
    """Masses > 0 (or a massless frame), tensors PSD and within the triangle inequality."""
    for link in links:
        if link.mass is None:
            continue
        mass = float(link.mass)
        tensor6 = [float(x) for x in link.inertia]
        if mass == 0 and not any(tensor6):
            link.mass = None  # a massless frame (a URDF writes it as mass 0, no inertia)
            continue
        if mass <= 0:
            raise InputError(
                link.line, f"link {link.name!r} has mass {mass:g} kg", "a positive mass"
            )
        ixx, ixy, ixz, iyy, iyz, izz = tensor6
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        moments = np.linalg.eigvalsh(tensor)
        scale = max(abs(moments[-1]), 1e-300)
        if moments[0] < -TRIANGLE_TOLERANCE * scale:
            raise InputError(
                link.line,
                f"link {link.name!r} has an inertia tensor with eigenvalues "
                f"{', '.join(f'{m:.3g}' for m in moments)} kg·m^2",
                "a positive (semi-)definite inertia tensor about the centre of mass",
            )
        if moments[0] + moments[1] < moments[2] - TRIANGLE_TOLERANCE * scale:
            raise InputError(
                link.line,
                f"link {link.name!r} has principal moments {', '.join(f'{m:.3g}' for m in moments)}"
                " kg·m^2 that break the triangle inequality",
                "each principal moment at most the sum of the other two (a physical body)",
            )


# ------------------------------------------------------------------ writing


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return repr(float(value)) if value != 0 else "0"


def _joints_csv(joints: list[Joint]) -> str:
    lines = [",".join(arm_description.JOINT_COLUMNS)]
    for j in joints:
        axis = j.axis or ("", "", "")
        row = [j.name, j.type, j.parent, j.child, *j.xyz, *j.rpy, *axis, j.lower, j.upper]
        row += [j.velocity, j.effort] if j.type != "fixed" else [None, None]
        lines.append(",".join(_text(v) for v in row))
    return "\n".join(lines) + "\n"


def _links_csv(links: list[Link]) -> str:
    lines = [",".join(arm_description.LINK_COLUMNS)]
    for link in links:
        if link.mass is None:
            lines.append(link.name + "," * (len(arm_description.LINK_COLUMNS) - 1))
            continue
        ixx, ixy, ixz, iyy, iyz, izz = link.inertia  # links.csv's order: ixx iyy izz ixy ixz iyz
        row = [link.name, link.mass, *link.com, *link.rpy, ixx, iyy, izz, ixy, ixz, iyz]
        lines.append(",".join(_text(v) for v in row))
    return "\n".join(lines) + "\n"


def _toml_list(values) -> str:
    return "[" + ", ".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in values) + "]"


def _toml_value(value) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _arm_toml(
    d: Description, servos: list[str], gripper_limits, drive: str | None, loop: dict | None
) -> str:
    mounting = "hanging" if d.gravity_direction == (0, 0, 1) else "upright"
    lines = [
        f"# {d.name} as data, written by crane-id describe from {d.source}",
        f'name = "{d.name}"',
        f'root_link = "{d.root}"',
        f"arm_joints = {_toml_list(d.arm_joints)}",
    ]
    if d.gripper:
        lines.append(f'gripper_joint = "{d.gripper}"')
    if gripper_limits is not None:
        lines.append(f"gripper_limits_rad = {_toml_list(gripper_limits)}")
    lines += [
        f'mounting = "{mounting}"',
        f"gravity_direction = {_toml_list(d.gravity_direction)}  # in the root link's frame",
    ]
    if drive is not None:
        lines.append(f'drive_mode = "{drive}"')
    for name, values in d.prior.items():
        if name in d.arm_joints or name == d.gripper:
            shown = ", ".join(f"{k} {v!r}" for k, v in values.items())
            lines.append(f"# the MJCF's prior of {name}: {shown}")
    lines += [
        "",
        "# the realization gains by rule (crane_lib.model.controller.encoder_noise_gains)",
        "[controller]",
        f"encoder_noise_fraction = {ENCODER_NOISE_FRACTION}",
    ]
    if loop is not None:
        lines += ["", "[position_loop]", *(f"{k} = {_toml_value(v)}" for k, v in loop.items())]
    for joint, servo in zip(d.arm_joints + ([d.gripper] if d.gripper else []), servos):
        lines += ["[[axis]]", f'joint = "{joint}"', f'actuator = "{servo}"']
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the entry point


def _gravity(vector: np.ndarray, where: str) -> tuple[int, int, int]:
    unit = vector / np.linalg.norm(vector)
    rounded = np.round(unit)
    if np.max(np.abs(unit - rounded)) > GRAVITY_TOLERANCE or np.sum(np.abs(rounded)) != 1:
        raise InputError(
            where,
            f"gravity {tuple(unit.round(6))} in the root link's frame",
            "gravity along x, y or z of the root link (--base another link)",
        )
    return tuple(int(g) for g in rounded)


def _zero_pose_rotation(joints: list[Joint], link: str) -> np.ndarray:
    by_child = {j.child: j for j in joints}
    rot = np.eye(3)
    while link in by_child:
        j = by_child[link]
        rot = (
            arm_description.as_float_matrix(
                arm_description.rpy_rotation(*(float(x) for x in j.rpy))
            )
            @ rot
        )
        link = j.parent
    return rot


def describe(
    path: Path | str,
    base: str | None = None,
    tip: str | None = None,
    arm_joints: list[str] | None = None,
    gripper: str | None = None,
    servos: list[str] | None = None,
    name: str | None = None,
    drive: str | None = None,
    position_loop: dict | None = None,
) -> Description:
    """The description folder's four files of the arm in a URDF or MJCF file (module docstring),
    checked by `arm_description.load_urdf_arm` before they are returned."""
    path = Path(path)
    shown = portable(path)
    root_el, lines = _parse_xml(path)
    prior, model = {}, None
    if root_el.tag == "robot":
        kind = "urdf"
        joints, links = _read_urdf(path, root_el, lines)
        default_name = root_el.get("name") or path.stem
    elif root_el.tag == "mujoco":
        kind = "mjcf"
        joints, links, prior, model = _read_mjcf(path, root_el, lines)
        default_name = root_el.get("model") or path.stem
    else:
        raise InputError(
            f"{shown}:{lines[id(root_el)]}",
            f"root element <{root_el.tag}>",
            "a URDF (<robot>) or an MJCF (<mujoco>) file",
        )
    children_of = {j.child for j in joints}
    roots = [link.name for link in links if link.name not in children_of]
    if base is None:
        if len(roots) != 1:
            raise InputError(shown, f"{len(roots)} root links {roots}", "one tree (or --base)")
        base = roots[0]
    elif base not in {link.name for link in links}:
        raise InputError(shown, f"--base {base!r} is no link of the file", "a link name")
    children = _children(joints)
    below = _descendants(base, children)
    tree = [j for j in joints if j.parent in below]
    _check_floating(tree, base)
    if arm_joints is None:
        chain = find_chain(tree, base, tip, shown)
        moving = [j.name for j in chain if j.type != "fixed"]
        arm = [n for n in moving if n != gripper]
        if gripper is not None and gripper not in moving:
            raise InputError(
                shown, f"--gripper {gripper!r} is not on the chain", f"one of {moving}"
            )
    else:
        arm = list(arm_joints)
    if not arm:
        raise InputError(shown, "no moving joint below the base", "a serial arm")
    _check_chain(tree, arm, gripper, shown)
    named = {j.name: j for j in tree}
    tree = _ordered(tree, base, [named[n] for n in arm + ([gripper] if gripper else [])])
    chain_links = {base} | {named[n].child for n in arm + ([gripper] if gripper else [])}
    if kind == "mjcf":
        _mjcf_couplings(
            model, path, root_el, lines, set(arm + ([gripper] if gripper else [])), chain_links
        )
        gravity_world = np.array(model.opt.gravity, dtype=float)
    else:
        gravity_world = np.array([0.0, 0.0, -1.0])  # URDF: the root frame's z is up
    tree_links = [link for link in links if link.name in below]
    _check_inertials(tree_links)
    rotation = _zero_pose_rotation(joints, base)
    direction = _gravity(rotation.T @ gravity_world, shown)
    axes = arm + ([gripper] if gripper else [])
    servos = list(servos) if servos else []
    catalogue = servo_catalogue.load()
    if servos:
        if len(servos) != len(axes):
            raise InputError(
                f"--servos {','.join(servos)}",
                f"{len(servos)} servos for {len(axes)} axes {axes}",
                "one servo per arm joint, then the gripper",
            )
        catalogue.require(servos, f"--servos {','.join(servos)}")
    description = Description(
        shown, kind, name or default_name, base, tree, tree_links, arm, gripper, direction, prior
    )
    gripper_limits = None
    if gripper is not None and named[gripper].type == "continuous":
        if not servos:
            raise InputError(
                named[gripper].line,
                f"gripper joint {gripper!r} is continuous",
                "limits, or --servos naming its servo (its position register's span)",
            )
        gripper_limits = catalogue.position_span(servos[-1], named[gripper].line)
    if not servos:
        raise InputError(
            shown, "no --servos", f"one servo per axis {axes}, of {', '.join(catalogue.models)}"
        )
    actuators, unknown = catalogue.actuators_csv(servos)
    description.unknown = unknown
    description.texts = {
        "arm.toml": _arm_toml(description, servos, gripper_limits, drive, position_loop),
        "joints.csv": _joints_csv(tree),
        "links.csv": _links_csv(tree_links),
        "actuators.csv": actuators,
    }
    check_folder(description)
    return description


def check_folder(description: Description) -> None:
    """The folder's text read back by `load_urdf_arm` (unknown actuator fields stood in for)."""
    texts = dict(description.texts)
    if description.unknown:
        texts["actuators.csv"] = servo_catalogue.stand_in(texts["actuators.csv"])
    with tempfile.TemporaryDirectory() as tmp:
        for file_name, text in texts.items():
            (Path(tmp) / file_name).write_text(text, encoding="utf-8")
        try:
            arm_description.load_urdf_arm(tmp)
        except InputError as error:
            raise InputError(
                description.source,
                f"the described folder is refused ({error.problem})",
                error.expected,
            ) from None
