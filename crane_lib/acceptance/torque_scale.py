"""Each axis's current-to-torque gain from a known weight (`crane-id calibrate`).

Where no datasheet fixes the torque constant (the SO-101's STS3215: its current unit and stall
current are unverified), the torque record is `kt_logged · i` and the true torque `g_j kt_logged
· i`, with an unknown gain g_j per axis. A known mass m held in the gripper, its centre of mass at
the gripper's stated point c (frame n of the last link), adds a gravity torque the kinematics
and m alone give, τ_p(q) = Y_n(q) φ_p with φ_p the point mass's standard parameters of link n
(`twin.truth.rigid_body_parameters`). Recorded without and with it at the same poses, the
difference of the logged torques is

    Δτ_j,k = τ_p,j(q_k) / g_j + e_j,k,        k = 1..K poses,

so 1/g_j is the slope of a line through the origin: ĉ_j = Σ a b / Σ a² with a = τ_p, b = Δτ,
its standard error s/√(Σ a²), s² the residual variance over K - 1 degrees of freedom, and ĝ_j =
1/ĉ_j with SE(ĝ) = SE(ĉ)/ĉ² (first order).

Static poses without stiction. A servo at rest holds any torque inside its friction band, and on
these gearboxes the band grows with the load (the twin's gear friction: about 12 % of the
transmitted torque); a hold at rest would bias every gain by up to that much. So each pose is
crossed slowly (CREEP_SPEED_PERCENT, the slowest a command file allows) from q - δ to q + δ and
back; the mean over the samples within δ/2 of the pose, up and down averaged, is the torque at
the pose with the friction's sign known and cancelled. The command file (`calibration_command`)
says nothing of the drive mode: the same file is recorded in current or in position mode, and
only the logged angles, segments and torque record are read.

Poses: drawn within POSE_RANGE_FRACTION of each joint's range (seeded), the gripper held at
zero, and for an upright arm the gripper's point at least MIN_TOOL_HEIGHT_M above the mount;
chosen greedily to raise the smallest, over the axes gravity loads, of each axis's Σ τ_p² (as a
share of the most any candidate gives). An axis whose τ_p is zero at every pose (a vertical first
axis, the gripper) cannot be calibrated by gravity: it keeps the logged conversion (gain 1) and
is marked `not loaded by gravity`; one whose relative standard error exceeds MAX_RELATIVE_SE is
marked `poorly determined` and also keeps gain 1 (its estimate is still reported).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib.errors import InputError, atomic_write, read_input_text
from crane_lib.excitation.commands import FINAL_SPEED_PERCENT, CommandFile
from crane_lib.logs.raw_log import RawLog
from crane_lib.model.arm_description import ARMS, ArmDescription, read_urdf_joints
from crane_lib.model.chain_model import ChainModel
from crane_lib.model.robot_description import zero_pose_link_frames
from crane_lib.paths import DATA_DIR
from crane_lib.twin.truth import rigid_body_parameters

CREEP_DEG = 3.0  # each pose is crossed from q - δ to q + δ and back
CREEP_SPEED_PERCENT = 1.0  # the slowest factor a command file allows (commands.MIN_SPEED_PERCENT)
APPROACH_SPEED_PERCENT = 30.0
DEFAULT_POSES = 12
POSE_SEED = 20261205
POSE_RANGE_FRACTION = 0.6  # of each joint's half range about its centre
POSE_CANDIDATES = 4000
MIN_TOOL_HEIGHT_M = 0.05  # an upright arm's gripper point stays this far above its mount plane
LOADED_FLOOR_N_M_PER_KG = 1e-6  # below this at every pose, gravity does not load the axis
# Drift of a servo's torque constant between two recordings (relative SD): its NdFeB magnet's
# remanence falls by about 0.1 %/K, and a servo warms by some 10 K over a session
KT_DRIFT_SD = 0.01
MAX_RELATIVE_SE = 0.05  # a gain known worse than this keeps the logged conversion
MASS_RANGE_KG = (0.0, 5.0)  # (open, closed]: the owner's weight, 100-500 g in practice
MIN_SAMPLES_PER_PASS = 20
MOVING_SHARE = 0.25  # of the creep speed: an axis slower than this may be stuck in its friction
VELOCITY_SPAN_S = 0.05  # samples within δ/2 of the pose on one pass, per axis
STATUS_CALIBRATED = "calibrated"
STATUS_UNLOADED = "not loaded by gravity"
STATUS_POOR = "poorly determined"
GAINS_COLUMNS = ("axis", "joint", "kt_logged", "gain", "std_error", "kt_calibrated", "status")


# ------------------------------------------------------------------ the gripper's point


def tool_point(arm: ArmDescription, key: str) -> np.ndarray | None:
    """The gripper's stated point in frame n of the last link (m): the origin of the farthest
    link hanging from the last arm joint's child through fixed joints in the description's
    joints.csv; None for an arm without a folder of URDF numbers (the CRANE-X7)."""
    if key in ARMS:
        folder = None if ARMS[key] is None else DATA_DIR / ARMS[key]
    else:
        folder = Path(key) if Path(key).is_dir() else None
    if folder is None:
        return None
    joints, _ = read_urdf_joints(folder)
    children: dict[str, list[str]] = {}
    for joint in joints.values():
        if joint.type == "fixed":
            children.setdefault(joint.parent, []).append(joint.child)
    leaf, depth, stack = joints[arm.joints[-1].name].child, 0, []
    stack.append((leaf, 0))
    while stack:
        link, level = stack.pop()
        if level > depth:
            leaf, depth = link, level
        stack.extend((child, level + 1) for child in children.get(link, []))
    by_child = {j.child: j for j in joints.values()}
    root = joints[arm.joints[0].name].parent
    while root in by_child:
        root = by_child[root].parent
    poses = zero_pose_link_frames(joints)
    leaf_in_root = np.linalg.solve(poses.get(root, np.eye(4)), poses[leaf][:, 3])
    frame = _frames(arm, np.zeros(arm.n_joints))
    return np.linalg.solve(frame, leaf_in_root)[:3]


def _frames(arm: ArmDescription, q: np.ndarray) -> np.ndarray:
    """4x4 pose of frame n (the last link) in frame 0 at joint angles q (rad)."""
    frame = np.eye(4)
    for joint, angle in zip(arm.joints, q):
        step = np.eye(4)
        step[:3, :3] = np.array([[float(x) for x in row] for row in joint.rotation])
        step[:3, 3] = [float(t) for t in joint.translation]
        turn = np.eye(4)
        turn[:2, :2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
        frame = frame @ step @ turn
    return frame


# ------------------------------------------------------------------ the weight's torque


def payload_vector(chain: ChainModel, key: str, mass: float, point, inertia=None) -> np.ndarray:
    """The standard-parameter vector (chain's order) of a rigid payload on the last link."""
    added = rigid_body_parameters(key, mass, np.asarray(point, dtype=float), inertia)
    return np.array([added.get(n, 0.0) for n in chain.standard_names])


def payload_gravity(chain: ChainModel, q: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """(n, n_axes) gravity torque (N·m) of standard parameters `phi` at rest at poses q."""
    q = np.atleast_2d(q)
    zeros = np.zeros_like(q)
    return chain.standard_regressor(q, zeros, zeros) @ phi


def _tool_height(arm: ArmDescription, q: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Height of the gripper's point against gravity above the base origin (m), per pose."""
    up = -np.array([float(g) for g in arm.gravity_direction])
    return np.array(
        [up @ (_frames(arm, pose)[:3, :3] @ point + _frames(arm, pose)[:3, 3]) for pose in q]
    )


def loaded_axes(arm: ArmDescription, key: str, point, chain: ChainModel | None = None):
    """Per axis, whether a unit mass at `point` loads it by gravity anywhere in the joint
    ranges (POSE_CANDIDATES poses drawn with POSE_SEED)."""
    chain = ChainModel(arm) if chain is None else chain
    poses = _candidates(arm, 1.0)
    torque = payload_gravity(chain, poses, payload_vector(chain, key, 1.0, point))
    return np.max(np.abs(torque), axis=0) > LOADED_FLOOR_N_M_PER_KG


def _candidates(arm: ArmDescription, fraction: float) -> np.ndarray:
    rng = np.random.default_rng(POSE_SEED)
    limits = arm.joint_limits()
    centre, half = limits.mean(axis=1), 0.5 * np.diff(limits, axis=1)[:, 0]
    poses = centre + fraction * half * rng.uniform(-1.0, 1.0, (POSE_CANDIDATES, arm.n_axes))
    if arm.gripper is not None:
        poses[:, -1] = 0.0  # the gripper holds the weight
    return poses


def calibration_poses(
    arm: ArmDescription, key: str, point, n_poses: int = DEFAULT_POSES
) -> np.ndarray:
    """(n_poses, n_axes) static poses (rad) that load every gravity-loaded axis (module text)."""
    chain = ChainModel(arm)
    poses = _candidates(arm, POSE_RANGE_FRACTION)
    if arm.mounting == "upright":
        poses = poses[_tool_height(arm, poses, np.asarray(point)) >= MIN_TOOL_HEIGHT_M]
    g2 = payload_gravity(chain, poses, payload_vector(chain, key, 1.0, point)) ** 2
    loaded = np.flatnonzero(np.max(g2, axis=0) > LOADED_FLOOR_N_M_PER_KG**2)
    scale = np.max(g2[:, loaded], axis=0)
    chosen, total = [], np.zeros(len(loaded))
    for _ in range(n_poses):
        score = np.min((total + g2[:, loaded]) / scale, axis=1)
        score[chosen] = -np.inf
        best = int(np.argmax(score))
        chosen.append(best)
        total += g2[best, loaded]
    order, left, here = [], list(chosen), np.zeros(arm.n_axes)
    while left:  # nearest next pose: short approaches
        nearest = min(left, key=lambda i: float(np.max(np.abs(poses[i] - here))))
        order.append(nearest)
        left.remove(nearest)
        here = poses[nearest]
    return poses[order]


def calibration_command(
    poses: np.ndarray, command_format, name: str = "CALIBRATION"
) -> CommandFile:
    """The command file crossing every pose slowly both ways: per pose q, rows q - δ (approach),
    q + δ and q - δ (creep), then q̄0 and its repeat (B-B). The gripper does not move."""
    delta = np.full(poses.shape[1], math.radians(CREEP_DEG))
    if command_format.n_axes > command_format.n_arm_joints:
        delta[command_format.n_arm_joints :] = 0.0
    rows, speeds = [], []
    for q in poses:
        rows += [q - delta, q + delta, q - delta]
        speeds += [APPROACH_SPEED_PERCENT, CREEP_SPEED_PERCENT, CREEP_SPEED_PERCENT]
    zero = np.radians(command_format.final_posture_deg)
    rows += [zero, zero]
    speeds += [APPROACH_SPEED_PERCENT, FINAL_SPEED_PERCENT]
    comments = (
        f"{name}: {len(poses)} static poses for crane-id calibrate, each crossed at "
        f"{CREEP_SPEED_PERCENT:g} % from -{CREEP_DEG:g} to +{CREEP_DEG:g} deg and back",
    )
    return CommandFile(name, np.array(rows), np.array(speeds), comments, "", command_format)


def poses_of_command(cmd: CommandFile) -> np.ndarray:
    """The poses of a calibration command file (`calibration_command`'s layout), or an
    InputError naming the file and the row that breaks the layout."""
    rows, speeds = cmd.waypoints, cmd.speed_percent
    n_poses, extra = divmod(len(rows) - 2, 3)
    expected = "the layout crane-id calibrate --write-poses writes (per pose: q - δ, q + δ, q - δ)"
    if extra or n_poses < 1:
        raise InputError(cmd.name, f"{len(rows)} waypoint rows", f"3 per pose plus 2; {expected}")
    poses = []
    for k in range(n_poses):
        low, high, back = rows[3 * k], rows[3 * k + 1], rows[3 * k + 2]
        centre, delta = 0.5 * (low + high), 0.5 * (high - low)
        creeping = speeds[3 * k + 1] == CREEP_SPEED_PERCENT == speeds[3 * k + 2]
        if not (np.allclose(back, low, atol=1e-6) and creeping and np.all(delta >= -1e-9)):
            raise InputError(
                f"{cmd.name}: waypoint {3 * k + 2}", "not a creep through a pose", expected
            )
        poses.append(centre)
    return np.array(poses)


# ------------------------------------------------------------------ the fit


@dataclass
class TorqueScale:
    """Per-axis gains g_j (true torque = g_j · logged torque) with standard errors.

    gain       (n_axes,) the gain applied (1 where not calibrated)
    estimate   (n_axes,) the fitted gain (NaN where gravity does not load the axis)
    std_error  (n_axes,) its standard error (NaN where not loaded)
    status     per axis: calibrated, not loaded by gravity, poorly determined
    """

    arm: str
    joints: list[str]
    kt_logged: np.ndarray
    gain: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    status: list[str]
    mass: float
    point: np.ndarray
    n_poses: int
    meta: dict
    fit_std_error: np.ndarray | None = None
    payload_torque: np.ndarray | None = None  # (K, n_axes) a: the weight's gravity torque
    difference: np.ndarray | None = None  # (K, n_axes) b: loaded minus unloaded, logged

    @property
    def kt_calibrated(self) -> np.ndarray:
        """The calibrated torque constants (N·m/A): g_j kt_logged,j."""
        return self.gain * self.kt_logged

    def rows(self) -> list[dict]:
        """One row per axis, as the gains file holds it."""
        return [
            {
                "axis": j + 1,
                "joint": self.joints[j],
                "kt_logged": float(self.kt_logged[j]),
                "gain": float(self.gain[j]),
                "std_error": float(self.std_error[j]),
                "kt_calibrated": float(self.kt_calibrated[j]),
                "status": self.status[j],
            }
            for j in range(len(self.gain))
        ]


def _check_mass(mass) -> float:
    low, high = MASS_RANGE_KG
    if not (isinstance(mass, (int, float)) and math.isfinite(mass) and low < mass <= high):
        raise InputError(
            f"--mass {mass!r}", "is no mass a gripper holds", f"a mass in ({low:g}, {high:g}] kg"
        )
    return float(mass)


def check_calibration_inputs(arm: ArmDescription, cmd: CommandFile, mass, logs) -> np.ndarray:
    """Every check before the fit: the mass, the command file's layout, at least as many poses
    as axes, both logs of this arm and of this command file. Returns the poses."""
    _check_mass(mass)
    poses = poses_of_command(cmd)
    if len(poses) < arm.n_axes:
        raise InputError(
            cmd.name,
            f"{len(poses)} poses",
            f"at least as many poses as axes ({arm.n_axes} on {arm.name})",
        )
    for log in logs:
        recorded = log.metadata.get("command_sha256", "")
        if log.n_axes != arm.n_axes:
            raise InputError(
                str(log.path), f"a log of {log.n_axes} axes", f"{arm.n_axes} axes ({arm.name})"
            )
        if cmd.sha256 and recorded and recorded != cmd.sha256:
            raise InputError(
                str(log.path),
                f"records the command file with sha256 {recorded[:12]}...",
                f"a recording of {cmd.name} (sha256 {cmd.sha256[:12]}...)",
            )
    return poses


def _smoothed_velocity(log: RawLog) -> np.ndarray:
    """(n, n_axes) joint velocity (rad/s) by differences over ±VELOCITY_SPAN_S: at the creep
    speed one encoder count per millisecond would be far too coarse."""
    t, theta = log.t, log.theta
    span = max(1, int(round(VELOCITY_SPAN_S / max(np.median(np.diff(t)), 1e-6))))
    ahead = np.minimum(np.arange(len(t)) + span, len(t) - 1)
    behind = np.maximum(np.arange(len(t)) - span, 0)
    return (theta[ahead] - theta[behind]) / np.maximum(t[ahead] - t[behind], 1e-9)[:, None]


def pass_means(log: RawLog, poses: np.ndarray, chain: ChainModel, phi: np.ndarray | None):
    """Per pose, pass (up, down) and axis j: the means over the pass's samples in which axis j
    moves the pass's way at no less than MOVING_SHARE of the creep speed (kinetic friction of a
    known sign), of axis j's logged torque, of the measured angles and (with `phi`) of the
    payload's gravity torque on axis j there. Returns (K, 2, n_axes), (K, 2, n_axes, n_axes),
    (K, 2, n_axes). Axes that do not creep (the gripper) use all the pass's samples."""
    theta, segment, torque = log.theta, log.segment, log.torque_logged
    velocity = _smoothed_velocity(log)
    n_poses, n_axes = poses.shape
    creep = np.zeros(n_axes)
    creep[: chain.arm.n_joints] = 1.0
    measured, payload = np.zeros((n_poses, 2, n_axes)), np.zeros((n_poses, 2, n_axes))
    angles = np.zeros((n_poses, 2, n_axes, n_axes))
    for k in range(n_poses):
        for p in range(2):
            rows = np.flatnonzero(segment == 3 * k + 1 + p)
            direction = 1.0 if p == 0 else -1.0
            gravity = None if phi is None else payload_gravity(chain, theta[rows], phi)
            for j in range(n_axes):
                speed = direction * velocity[rows, j]
                moving = (
                    speed >= MOVING_SHARE * _creep_speed(log, j) if creep[j] else speed == speed
                )
                if moving.sum() < MIN_SAMPLES_PER_PASS:
                    raise InputError(
                        str(log.path),
                        f"{int(moving.sum())} samples of axis {j + 1} creeping through pose "
                        f"{k + 1} on pass {p + 1} (segment {3 * k + 2 + p})",
                        f"at least {MIN_SAMPLES_PER_PASS}: a recording of the calibration file",
                    )
                measured[k, p, j] = torque[rows[moving], j].mean()
                angles[k, p, j] = theta[rows[moving]].mean(axis=0)
                if gravity is not None:
                    payload[k, p, j] = gravity[moving, j].mean()
    return measured, angles, payload


def _creep_speed(log: RawLog, axis: int) -> float:
    """The commanded creep speed of `axis` (rad/s): its reference's largest speed in the log
    while creeping, i.e. CREEP_SPEED_PERCENT of its velocity ceiling."""
    reference = np.abs(log.dtheta_ref[:, axis])
    creeping = (log.segment % 3 != 0) & (log.segment >= 0)
    return float(np.max(reference[creeping])) if creeping.any() else 0.0


def _prior_vector(chain: ChainModel, arm: ArmDescription) -> np.ndarray:
    """The description's inertial prior of the links as a standard vector (drives zero)."""
    return np.array([arm.inertial_prior.get(n, 0.0) for n in chain.standard_names])


def fit_gains(
    arm: ArmDescription,
    key: str,
    cmd: CommandFile,
    unloaded: RawLog,
    loaded: RawLog,
    mass: float,
    point=None,
) -> TorqueScale:
    """The per-axis gains from the two recordings of the calibration file (module text)."""
    poses = check_calibration_inputs(arm, cmd, mass, (unloaded, loaded))
    point = tool_point(arm, key) if point is None else np.asarray(point, dtype=float)
    if point is None:
        raise InputError(
            f"--robot {key}",
            "states no gripper point",
            "--point X Y Z in the last link's frame (m)",
        )
    chain = ChainModel(arm)
    phi = payload_vector(chain, key, mass, point)
    base, base_angles, _ = pass_means(unloaded, poses, chain, None)
    held, held_angles, expected = pass_means(loaded, poses, chain, phi)
    # the two runs hold each pose a little differently (the weight bends the tracking error);
    # the arm's own gravity torque is moved to the loaded run's angles with the description's
    # prior: an error of the prior enters only times that small difference of angles
    prior = _prior_vector(chain, arm)
    n = arm.n_axes
    shift = (
        payload_gravity(chain, held_angles.reshape(-1, n), prior)
        - payload_gravity(chain, base_angles.reshape(-1, n), prior)
    ).reshape(base.shape + (n,))
    shift = np.diagonal(shift, axis1=2, axis2=3)  # axis j's torque at axis j's own samples
    a = expected.mean(axis=1)  # (K, n_axes): the weight's gravity torque at each pose
    b = (held - base - shift).mean(axis=1)  # the logged difference at the loaded run's angles
    unloaded_torque = base.mean(axis=1)
    n_axes = arm.n_axes
    gain, estimate, error = np.ones(n_axes), np.full(n_axes, np.nan), np.full(n_axes, np.nan)
    fit_error = np.full(n_axes, np.nan)
    status = []
    loaded_mask = loaded_axes(arm, key, point, chain)
    for j in range(n_axes):
        if not loaded_mask[j]:
            status.append(STATUS_UNLOADED)
            continue
        slope = float(a[:, j] @ b[:, j] / (a[:, j] @ a[:, j]))
        residual = b[:, j] - slope * a[:, j]
        slope_se = math.sqrt(residual @ residual / (len(a) - 1) / (a[:, j] @ a[:, j]))
        estimate[j], fit_error[j] = 1.0 / slope, slope_se / slope**2
        # the arm's own torque over the weight's, as the slope sees it (module text)
        share = float(a[:, j] @ (unloaded_torque[:, j] / slope) / (a[:, j] @ a[:, j]))
        drift = estimate[j] * KT_DRIFT_SD * math.hypot(1.0 + share, share)
        error[j] = math.hypot(fit_error[j], drift)
        good = slope > 0 and error[j] <= MAX_RELATIVE_SE * estimate[j]
        status.append(STATUS_CALIBRATED if good else STATUS_POOR)
        if good:
            gain[j] = estimate[j]
    joints = [j.name for j in arm.joints] + ([arm.gripper] if arm.gripper else [])
    kt = np.array([a_.kt * a_.servos for a_ in arm.actuators])
    meta = {
        "unloaded_log": str(unloaded.path),
        "loaded_log": str(loaded.path),
        "command_file": cmd.name,
        "command_sha256": cmd.sha256,
    }
    return TorqueScale(
        key,
        joints,
        kt,
        gain,
        estimate,
        error,
        status,
        float(mass),
        point,
        len(poses),
        meta,
        fit_error,
        a,
        b,
    )


# ------------------------------------------------------------------ the gains file


def gains_text(scale: TorqueScale) -> str:
    """The gains file: '#' key: value lines (arm, mass, point, poses, sources), then one CSV row
    per axis (GAINS_COLUMNS)."""
    buffer = io.StringIO()
    header = {
        "arm": scale.arm,
        "mass_kg": repr(scale.mass),
        "point_m": " ".join(repr(float(x)) for x in scale.point),
        "poses": str(scale.n_poses),
        **scale.meta,
    }
    buffer.write("# per-axis current-to-torque gains: true torque = gain x logged torque\n")
    for key, value in header.items():
        buffer.write(f"# {key}: {value}\n")
    writer = csv.DictWriter(buffer, GAINS_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in scale.rows():
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    return buffer.getvalue()


def write_torque_scale(path, scale: TorqueScale, new: bool = False) -> Path:
    """Write the gains file atomically (with `new`, only if still absent)."""
    with atomic_write(path, new=new, encoding="utf-8", newline="\n") as handle:
        handle.write(gains_text(scale))
    return Path(path)


def read_torque_scale(path, arm: ArmDescription, key: str) -> TorqueScale:
    """A gains file of `key`'s arm; an InputError names the file, line and what was expected."""
    path = Path(path)
    text = read_input_text(path, "a gains file of crane-id calibrate", 1 << 16)
    header, body = {}, []
    for line in text.splitlines():
        if line.startswith("# ") and ": " in line:
            name, value = line[2:].split(": ", 1)
            header[name] = value
        elif line and not line.startswith("#"):
            body.append(line)
    if header.get("arm") != key:
        raise InputError(
            str(path), f"gains of the arm {header.get('arm')!r}", f"gains of --robot {key}"
        )
    rows = list(csv.DictReader(body))
    if not body or tuple(csv.reader([body[0]]).__next__()) != GAINS_COLUMNS:
        raise InputError(str(path), "no gains table", f"the columns {', '.join(GAINS_COLUMNS)}")
    if len(rows) != arm.n_axes:
        raise InputError(str(path), f"{len(rows)} axes", f"{arm.n_axes} ({arm.name})")
    values = {}
    for name in ("kt_logged", "gain", "std_error"):
        try:
            values[name] = np.array([float(r[name]) for r in rows])
        except (TypeError, ValueError):
            raise InputError(str(path), f"a {name} that is no number", "numbers") from None
    if not np.all(np.isfinite(values["gain"]) & (values["gain"] > 0)):
        raise InputError(str(path), "a gain that is not positive", "positive finite gains")
    status = [r["status"] for r in rows]
    estimate = np.where(
        [s == STATUS_UNLOADED for s in status], np.nan, values["gain"]
    )  # a poor axis's estimate is not in the file; its gain is 1
    return TorqueScale(
        key,
        [r["joint"] for r in rows],
        values["kt_logged"],
        values["gain"],
        estimate,
        values["std_error"],
        status,
        float(header.get("mass_kg", "nan")),
        np.array([float(x) for x in header.get("point_m", "nan nan nan").split()]),
        int(header.get("poses", "0")),
        {
            **{k: v for k, v in header.items() if k not in ("arm", "mass_kg", "point_m", "poses")},
            "path": str(path),
        },
    )


def scaled_log(log: RawLog, scale: TorqueScale) -> RawLog:
    """The log with its torque record in calibrated units: each axis's current column times
    its gain (every other column as recorded)."""
    from crane_lib.logs.raw_log import group

    samples = log.samples.copy()
    samples[:, group("current_command", log.n_axes)] *= scale.gain
    metadata = dict(log.metadata)
    metadata["torque_scale"] = " ".join(f"{g:.6g}" for g in scale.gain)
    return RawLog(samples, metadata, log.path, log.repairs, log.arm)


def scale_meta(scale: TorqueScale, path) -> dict[str, str]:
    """The model file's header entries that name the gains it was identified with."""
    return {
        "torque_scale_file": str(path),
        "torque_scale_gain": " ".join(f"{g:.6g}" for g in scale.gain),
        "torque_scale_std_error": " ".join(f"{e:.3g}" for e in scale.std_error),
        "torque_scale_status": " | ".join(scale.status),
    }
