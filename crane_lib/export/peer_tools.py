"""The same recording through the field's other tools, scored by the same code as Algorithm 1.

Per arm (the CRANE-X7's twin: AG02 at 40 ms, held out V01-V03; the SO-101's twin: PI_ALPHA,
held out its other blocks), four results:

* `algorithm1`: the book's accepted model, read from its record;
* `mujoco_prior`: MuJoCo's `sysid` (rollout least squares, finite-difference Jacobians) fitting
  every link's inertial in its log-Cholesky pseudo-inertia coordinates (`InertiaType.Pseudo`),
  and every joint's armature, damping and frictionloss, from the exported MJCF of the
  description prior, the recording's torque as `ctrl` of the MJCF's motors, each chunk started
  from the recorded state;
* `mujoco_accepted`: the same fit started from the accepted model's exported MJCF;
* `figaroh_ols` and `figaroh_consistent`: FIGAROH's regressor of the same URDF on the same 40 ms
  samples, its base parameters by double QR and OLS; and its physically consistent direct effort
  fit (an SDP with a pseudo-inertia LMI per link).

Every result is mapped exactly to the model's base parameters (link inertials in the exported
link frames -> standard parameters in the model's frames -> `DynamicModel.base_from_standard`)
and scored by `score`: held-out RMSE and MNE, the truth score, the dense audit over Theta, link
consistency, the tool's own uncertainty against the actual error. A tool that fails is a
result: its row keeps the message.

Here, in `export`, because the tools read the exported URDF and MJCF (`files`) and the
comparison needs `consistent` for link-level models; nothing later in the pipeline imports it
but the chapter's view.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import time
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
from scipy.stats import norm

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import held_out as held_out_stage
from crane_lib.acceptance import other_arms, truth_score
from crane_lib.acceptance.audit import audit_seeds
from crane_lib.errors import InputError
from crane_lib.export import artefacts, consistent, files
from crane_lib.identification.metrics import pooled_rmse, predicted_torque, prediction_error
from crane_lib.logs.preprocessing import cached_bundles
from crane_lib.model.arm_description import ARMS, load_arm
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet
from crane_lib.paths import RESULTS_DIR, TIMINGS_DIR, recording_path
from crane_lib.records import read_json_record, write_json_record

PEER_DIR = RESULTS_DIR / "peer_tools"
TOOLS = ("algorithm1", "mujoco_prior", "mujoco_accepted", "figaroh_ols", "figaroh_consistent")
COMPARED_ARMS = ("crane_x7", "so101")
TS = 0.040  # the identification interval of every tool on the regressor side
SYSID_TS = 0.010  # the bundle MuJoCo's rollouts are compared with (ctrl and angles)
# MuJoCo's fit per profile: seconds of the recording from its start, chunk length (each chunk
# starts from the recorded state), integrator step and Gauss-Newton iterations; the quick profile
# is cut so the step fits CI's budget
SYSID_SETTINGS = {
    "quick": {"duration_s": 3.0, "chunk_s": 1.0, "timestep_s": 0.004, "max_iters": 2},
    "full": {"duration_s": 12.0, "chunk_s": 1.0, "timestep_s": 0.002, "max_iters": 8},
}
# the drive terms the description lacks: one round value per kind for every axis, for both starts
# of the prior (kg·m^2, N·m·s/rad, N·m), and MuJoCo's box around them
DRIVE_NOMINAL = {"IA": 0.01, "FV": 0.1, "FS": 0.1}
DRIVE_BOUNDS = {"IA": (1e-5, 1.0), "FV": (0.0, 5.0), "FS": (0.0, 3.0)}
MJCF_FIELD = {"IA": "armature", "FV": "damping", "FS": "frictionloss"}
AUDIT_SEED = 1
CONFIDENCE = 0.95  # of the stated intervals the errors are counted in
Z95 = float(norm.ppf(0.5 + CONFIDENCE / 2))  # its two-sided normal quantile
TRACE_AXIS = 2  # the held-out torque figure's axis (1-based)


def record_path(arm: str, directory=None) -> Path:
    """Where one arm's comparison record lives."""
    return Path(directory or PEER_DIR) / f"{arm}.json"


# ----------------------------------------------------------------------------- the request


@dataclass(frozen=True)
class Inputs:
    """What one arm's comparison reads: its files, checked before any tool runs."""

    arm: str
    identification: Path  # the raw log identified
    held_out: list[Path]  # the raw logs held out
    accepted_mjcf: Path | None  # the accepted model's exported MJCF (the CRANE-X7's)
    accepted_record: Path  # the record holding the accepted model


def check_request(arm: str, tools, profile: str) -> Inputs:
    """Refuse an unknown tool, an arm without an exported MJCF or a missing recording, naming
    it (InputError), before any tool runs."""
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise InputError("--tool", f"unknown tool {unknown[0]!r}", f"one of {', '.join(TOOLS)}")
    if profile not in SYSID_SETTINGS:
        raise InputError("--profile", repr(profile), f"one of {sorted(SYSID_SETTINGS)}")
    if arm not in COMPARED_ARMS:
        known = ", ".join(COMPARED_ARMS)
        what = "an arm this comparison has no exported MJCF for" if arm in ARMS else "no arm"
        raise InputError("--arm", f"{arm!r}: {what}", f"one of {known}")
    if arm == "crane_x7":
        paths = artefacts.export_paths()
        held = [recording_path(v, r) for v, r in held_out_stage.validation_executions(profile)]
        inputs = Inputs(
            arm,
            recording_path(*other_arms.CRANE_X7_ACCEPTED[::2]),
            held,
            paths["mjcf"],
            accepted_stage.accepted_paths(*other_arms.CRANE_X7_ACCEPTED)[1],
        )
    else:
        blocks = other_arms.HELD_OUT_BLOCKS[profile]
        inputs = Inputs(
            arm,
            other_arms.recording_file(arm, other_arms.IDENTIFICATION_BLOCK),
            [other_arms.recording_file(arm, b) for b in blocks],
            None,
            other_arms.record_path(arm),
        )
    needed = [(inputs.identification, "the identification recording")]
    needed += [(p, "a held-out recording") for p in inputs.held_out]
    needed += [(inputs.accepted_record, "the accepted model's record")]
    if inputs.accepted_mjcf is not None:
        needed.append((inputs.accepted_mjcf, "the accepted model's exported MJCF"))
    for path, what in needed:
        if not Path(path).is_file():
            raise InputError(str(path), f"missing: {what}", artefacts.MAKE_STEP)
    return inputs


# ----------------------------------------------------------------------------- the arm's data


@dataclass
class ArmData:
    """One arm's recordings, model, accepted record and truth, as every tool and the scorer see
    them."""

    arm: str
    description: object  # ArmDescription, None for the CRANE-X7
    model: DynamicModel
    identification: object  # 40 ms bundle
    sysid_bundle: object  # 10 ms bundle
    held_out: list  # 40 ms bundles
    held_out_names: list[str]
    accepted: dict  # the accepted record
    truth_base: ParameterSet
    inputs: Inputs


def bundle_of(path: Path, ts: float):
    """The cached bundle of a raw log at interval `ts` (s)."""
    return cached_bundles(path, (float(ts),))[float(ts)]


def arm_data(inputs: Inputs) -> ArmData:
    """Read everything one arm's comparison needs."""
    if inputs.arm == "crane_x7":
        description, model = None, shared_model("reduced")
        accepted = read_json_record(inputs.accepted_record)
    else:
        description = load_arm(inputs.arm)
        model = shared_model("reduced", arm=description)
        accepted = read_json_record(inputs.accepted_record)["algorithm1"]["accepted"]
    return ArmData(
        inputs.arm,
        description,
        model,
        bundle_of(inputs.identification, TS),
        bundle_of(inputs.identification, SYSID_TS),
        [bundle_of(p, TS) for p in inputs.held_out],
        [p.stem for p in inputs.held_out],
        accepted,
        truth_score.twin_truth_base(model, inputs.arm),
        inputs,
    )


def standard_names(data: ArmData) -> list[str]:
    """The arm's standard parameter names."""
    return list(data.model.standard_names)


def n_links(data: ArmData) -> int:
    """Arm links carrying ten inertial parameters."""
    return consistent.arm_terms(data.description).n_links


def with_drive_nominal(data: ArmData, values: np.ndarray) -> np.ndarray:
    """A standard vector whose drive terms (IA, FV, FS) are DRIVE_NOMINAL."""
    values = np.array(values, dtype=float)
    for k, name in enumerate(standard_names(data)):
        kind = name.rstrip("0123456789")
        if kind in DRIVE_NOMINAL:
            values[k] = DRIVE_NOMINAL[kind]
    return values


def prior_standard(data: ArmData) -> np.ndarray:
    """The description's inertial prior with the nominal drive terms."""
    prior, _ = consistent.prior_vector(arm=data.description)
    return with_drive_nominal(data, prior)


def accepted_standard(data: ArmData) -> np.ndarray:
    """The accepted model's link-level model: the exported one (the CRANE-X7) or its
    reconstruction (exact, else the nearest consistent one)."""
    base = ParameterSet(data.accepted["names"], np.asarray(data.accepted["parameters"]))
    result = consistent.reconstruct(base, arm=data.description, source="accepted model")
    return result.standard.ordered(standard_names(data), "standard parameters")


def robot_of(data: ArmData, standard: np.ndarray, notes=None) -> files.RobotModel:
    """The exported robot (URDF/MJCF content) of a standard vector of the arm."""
    return files.exported_robot(
        ParameterSet(standard_names(data), standard), data.description, notes=notes
    )


# ----------------------------------------------------------------------------- link frames


def link_poses(data: ArmData) -> list[np.ndarray]:
    """4x4 pose of the model's frame j in the exported link j's frame, per arm link."""
    if data.description is None:
        return files.mdh_in_link_frames()
    return [np.eye(4) for _ in range(n_links(data))]


def link_to_standard(mass: float, first: np.ndarray, second: np.ndarray, pose) -> np.ndarray:
    """(XX XY XZ YY YZ ZZ MX MY MZ M) about the model frame's origin of a link given by its mass,
    first moment h (kg·m) and inertia about the link frame's origin (kg·m^2), both in the link
    frame; `pose` places the model frame in the link frame. Linear in (m, h, I), so exact for any
    value (also a non-physical one)."""
    rot, p = pose[:3, :3], pose[:3, 3]
    sigma = 0.5 * np.trace(second) * np.eye(3) - second  # the second moment about the origin
    h = np.asarray(first, dtype=float)
    sigma_m = rot.T @ (sigma - np.outer(h, p) - np.outer(p, h) + mass * np.outer(p, p)) @ rot
    h_m = rot.T @ (h - mass * p)
    inertia = np.trace(sigma_m) * np.eye(3) - sigma_m
    return np.array(
        [
            inertia[0, 0],
            inertia[0, 1],
            inertia[0, 2],
            inertia[1, 1],
            inertia[1, 2],
            inertia[2, 2],
            *h_m,
            mass,
        ]
    )


def standard_vector(data: ArmData, links: list[np.ndarray], drive: dict[str, float]) -> np.ndarray:
    """The arm's standard vector of per-link (XX..M) rows and drive terms by name."""
    values = np.zeros(len(standard_names(data)))
    index = {n: k for k, n in enumerate(standard_names(data))}
    for j, row in enumerate(links, start=1):
        for kind, v in zip(consistent.LINK_KINDS, row):
            values[index[f"{kind}{j}"]] = v
    for name, v in drive.items():
        values[index[name]] = v
    return values


def base_of(data: ArmData, standard: np.ndarray) -> np.ndarray:
    """The model's base parameters of a standard vector."""
    return data.model.base_from_standard(ParameterSet(standard_names(data), standard)).values


# ----------------------------------------------------------------------------- MuJoCo sysid


class ToolFailure(Exception):
    """A tool that could not run or did not finish: its message is the result."""


def sysid_module():
    """MuJoCo's sysid module, or ToolFailure with why it is empty (its optional dependencies,
    `mujoco[sysid]`, are absent)."""
    try:
        importlib.import_module("mujoco.sysid._src.optimize")
        importlib.import_module("mujoco.sysid._src.trajectory")
    except ModuleNotFoundError as error:
        raise ToolFailure(
            f"import mujoco.sysid gives an empty module: {error} (the extra mujoco[sysid] is "
            "not installed)"
        ) from error
    from mujoco import sysid

    return sysid


def _set_joint(joint, field: str, value: float) -> None:
    current = getattr(joint, field)
    if np.ndim(current):  # damping is a polynomial in MuJoCo 4: its first coefficient is linear
        current[0] = value
        current[1:] = 0.0
    else:
        setattr(joint, field, float(value))


def _pseudo_modifier(body_name: str):
    """Write a body's inertial from its log-Cholesky coordinates theta (sysid's own conversion
    `pi_from_theta`), as full inertia about the centre of mass with an identity `iquat`: sysid's
    default Pseudo modifier sets `iquat` to NaN, which MuJoCo 4.0.0's compiler rejects."""
    from mujoco.sysid._src import model_modifier

    def modify(spec, param):
        pi = model_modifier.pi_from_theta(param.value)
        mass, com = pi[0], pi[1:4] / pi[0]
        skew = model_modifier.skew(com)
        central = pi[4:].reshape(3, 3) + mass * skew @ skew
        body = spec.body(body_name)
        body.explicitinertial = True
        body.mass, body.ipos = mass, com
        body.inertia[:] = 0.0
        body.iquat = [1.0, 0.0, 0.0, 0.0]
        body.fullinertia = [
            central[0, 0],
            central[1, 1],
            central[2, 2],
            central[0, 1],
            central[0, 2],
            central[1, 2],
        ]

    return modify


def sysid_spec(robot: files.RobotModel, timestep: float):
    """The MJCF of `robot` as an MjSpec with a joint-angle sensor per axis, `timestep` and the
    implicitfast integrator."""
    import mujoco

    spec = mujoco.MjSpec.from_string(files.mjcf_text(robot, timestep=timestep))
    # implicit in the damping, as sysid's own examples: the box lets a small rotor meet a large
    # damping, which the exported file's explicit RK4 does not survive at these steps
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    for joint in robot.axis_joints:
        spec.add_sensor(
            name=f"{joint.name}_angle",
            type=mujoco.mjtSensor.mjSENS_JOINTPOS,
            objtype=mujoco.mjtObj.mjOBJ_JOINT,
            objname=joint.name,
        )
    return spec


def recorded_ctrl(compiled, bundle) -> np.ndarray:
    """The motors' ctrl the recording was made with: a current-control motor (the CRANE-X7's
    export: ctrl a servo's current in A, its gear the torque record's N·m/A) takes the recorded
    torque over its gear; a position actuator (a servo's own position loop, the SO-101's
    export) takes the goal position the controller executed (rad)."""
    import mujoco

    position = compiled.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE
    torque = bundle.tau / compiled.actuator_gear[:, 0]
    return np.where(position[None, :], bundle.theta_ref, torque)


def motion_start(bundle) -> float:
    """Time (s) of the first sample inside the command file's first segment (the arm rests
    before it); the first sample when the bundle carries no segments."""
    segment = getattr(bundle, "segment", None)
    if segment is None or not np.any(segment >= 0):
        return float(bundle.t[0])
    return float(bundle.t[np.argmax(segment >= 0)])


def sysid_sequences(sysid, spec, bundle, settings: dict):
    """The recording from its first motion (`motion_start`) for `duration_s` as sysid's
    ModelSequences: chunks of `chunk_s`, each from the recorded state, driven as recorded
    (`recorded_ctrl`), the recorded angles as the measured sensors."""
    compiled = spec.compile()
    start = motion_start(bundle)
    keep = (bundle.t >= start) & (bundle.t <= start + settings["duration_s"] + 1e-9)
    t, q, dq = bundle.t[keep], bundle.theta[keep], bundle.dtheta[keep]
    step = int(round(settings["chunk_s"] / SYSID_TS))
    ctrl = recorded_ctrl(compiled, bundle)[keep]
    states, controls, sensors = [], [], []
    for s in range(0, len(t) - step + 1, step):
        state = sysid.create_initial_state(compiled, q[s], dq[s])
        state[0] = t[s]  # the full-physics state's first entry is the time
        states.append(state)
        controls.append(
            sysid.TimeSeries.from_control_names(t[s : s + step], ctrl[s : s + step], compiled)
        )
        sensors.append(sysid.TimeSeries.from_names(t[s : s + step], q[s : s + step], compiled))
    names = [f"chunk{k}" for k in range(len(states))]
    return sysid.ModelSequences("arm", spec, names, states, controls, sensors), compiled


def angle_residual(params, predicted, measured, model, return_pred_all, state=None):
    """sysid's residual hook: the simulated minus the recorded joint angles (rad) at the recorded
    times, unweighted (the default divides each column by the norm of the recorded angle, which
    is near zero for an axis resting at 0 rad)."""
    from mujoco.sysid._src import signal_modifier

    measured = signal_modifier.apply_delayed_ts_window(measured, predicted, 0.0, 0.0)
    predicted = predicted.resample(measured.times)
    return predicted.data - measured.data, predicted, measured


def sysid_parameters(sysid, spec, compiled, robot: files.RobotModel, pseudo_default: bool):
    """Every link's Pseudo inertial (the tool's default box) and every axis's armature, damping
    and frictionloss (DRIVE_BOUNDS); `pseudo_default`: sysid's own Pseudo modifier."""
    params = sysid.ParameterDict()
    links = [j.child for j in robot.axis_joints if j.child in robot.inertials]
    for body in links:
        modifier = None if pseudo_default else _pseudo_modifier(body)
        params.add(
            sysid.body_inertia_param(
                spec, compiled, body, inertia_type=sysid.InertiaType.Pseudo, modifier=modifier
            )
        )
    for joint in robot.axis_joints:
        for kind, field in MJCF_FIELD.items():
            nominal = {"IA": robot.armature, "FV": robot.damping, "FS": robot.friction}[kind]
            start = nominal[joint.name]
            if joint.axis_number == robot.hand_axis and kind == "IA":
                continue  # the hand rotor's inertia is its body's (below)
            lo, hi = DRIVE_BOUNDS[kind]
            params.add(
                sysid.Parameter(
                    f"{joint.name}.{field}",
                    min(max(start, lo), hi),
                    lo,
                    hi,
                    modifier=lambda s, p, j=joint.name, f=field: _set_joint(
                        s.joint(j), f, p.value[0]
                    ),
                )
            )
    if robot.hand_axis:
        hand = robot.axis_joints[robot.hand_axis - 1]
        lo, hi = DRIVE_BOUNDS["IA"]
        params.add(
            sysid.Parameter(
                f"{files.HAND_ROTOR_BODY}.inertia",
                min(max(robot.armature[hand.name], lo), hi),
                lo,
                hi,
                modifier=lambda s, p: _set_rotor(s, p.value[0]),
            )
        )
    return params


def _set_rotor(spec, inertia: float) -> None:
    body = spec.body(files.HAND_ROTOR_BODY)
    body.inertia = [inertia, inertia, inertia]


def standard_from_mujoco(data: ArmData, compiled, robot: files.RobotModel) -> np.ndarray:
    """The standard vector of a compiled MJCF of the arm: every link body's inertial (in its link
    frame) through `link_to_standard`, armature, damping and frictionloss as IA, FV, FS."""
    import mujoco

    rows = []
    links = [j.child for j in robot.axis_joints if j.child in robot.inertials]
    for body_name, pose in zip(links, link_poses(data)):
        body = compiled.body(body_name)
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, body.iquat)
        rot = rot.reshape(3, 3)
        mass, com = float(body.mass[0]), np.array(body.ipos)
        central = rot @ np.diag(body.inertia) @ rot.T
        about_origin = central + mass * (com @ com * np.eye(3) - np.outer(com, com))
        rows.append(link_to_standard(mass, mass * com, about_origin, pose))
    drive = {}
    for joint in robot.axis_joints:
        j, k = compiled.joint(joint.name), joint.axis_number
        drive[f"IA{k}"] = float(j.armature[0])
        drive[f"FV{k}"] = float(j.damping[0])
        drive[f"FS{k}"] = float(j.frictionloss[0])
    if robot.hand_axis:
        rotor = compiled.body(files.HAND_ROTOR_BODY)
        drive[f"IA{robot.hand_axis}"] += float(rotor.inertia[2])
    return standard_vector(data, rows, drive)


def run_mujoco(data: ArmData, start: np.ndarray, profile: str, threads: int = 2) -> dict:
    """MuJoCo sysid from the standard vector `start` (exported as MJCF): the fitted standard
    vector, the call, its own 95 % intervals mapped to base parameters, and the times."""
    sysid = sysid_module()
    settings = SYSID_SETTINGS[profile]
    robot = robot_of(data, start)
    spec = sysid_spec(robot, settings["timestep_s"])
    sequences, compiled = sysid_sequences(sysid, spec, data.sysid_bundle, settings)
    notes = []
    params = sysid_parameters(sysid, spec, compiled, robot, pseudo_default=True)
    residual_fn = sysid.build_residual_fn(
        models_sequences=[sequences], modify_residual=angle_residual, n_threads=threads
    )
    try:  # sysid's own Pseudo modifier, once: where it fails, its message is kept
        residual_fn(params.as_vector(), params)
    except ValueError as error:
        notes.append(
            "sysid's own InertiaType.Pseudo modifier fails in MuJoCo "
            f"{_version('mujoco')}: {str(error).splitlines()[0]}; the same coordinates are "
            "applied with an identity iquat (`_pseudo_modifier`)"
        )
        spec = sysid_spec(robot, settings["timestep_s"])
        sequences, compiled = sysid_sequences(sysid, spec, data.sysid_bundle, settings)
        params = sysid_parameters(sysid, spec, compiled, robot, pseudo_default=False)
        residual_fn = sysid.build_residual_fn(
            models_sequences=[sequences], modify_residual=angle_residual, n_threads=threads
        )
    x0 = params.as_vector()
    start_cost = float(np.sum(np.concatenate(residual_fn(x0, params)[0]) ** 2))
    log = io.StringIO()  # the backend's iteration log: its last line goes into the notes
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(log), _absl_warnings() as said:
        fitted, result = sysid.optimize(
            initial_params=params,
            residual_fn=residual_fn,
            optimizer="mujoco",
            verbose=False,
            max_iters=settings["max_iters"],
        )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    notes += said + [line.strip() for line in log.getvalue().splitlines() if "Terminated" in line]
    x = fitted.as_vector()
    residuals = residual_fn(x, fitted)[0]
    final_cost = float(np.sum(np.concatenate(residuals) ** 2))

    def standard_at(vector):
        fitted.update_from_vector(vector)
        model = sysid.apply_param_modifiers(fitted, spec)
        return standard_from_mujoco(data, model, robot)

    standard = standard_at(x)
    covariance, intervals = sysid.calculate_intervals(residuals, np.asarray(result.jac))
    base_sigma = _mapped_sigma(lambda v: base_of(data, standard_at(v)), x, covariance)
    standard_at(x)
    return {
        "standard": standard,
        "call": (
            "sysid.optimize(initial_params=params, residual_fn=sysid.build_residual_fn("
            "models_sequences=[sequences], modify_residual=angle_residual, "
            f"n_threads={threads}), optimizer='mujoco', "
            f"verbose=False, max_iters={settings['max_iters']})"
        ),
        "options": {
            **settings,
            "parameters": int(x.size),
            "chunks": len(sequences.measured_rollout),
            "inertia_type": "Pseudo",
            "integrator": "implicitfast",
            "residual": "angle_residual (rad, unweighted)",
        },
        "notes": notes,
        "objective": {"start": start_cost, "end": final_cost},
        "stated_sigma": base_sigma,
        "stated": "95 % intervals of calculate_intervals (residual variance x (J^T J)^-1), "
        "mapped to base parameters by the linearized map",
        "intervals_finite": int(np.isfinite(intervals).sum()),
        "wall_s": wall,
        "cpu_s": cpu,
    }


@contextlib.contextmanager
def _absl_warnings():
    """sysid's warnings (absl logging) collected as lines instead of printed."""
    import logging

    from absl import logging as absl_logging

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(f"sysid warns: {record.getMessage()}")

    logger = absl_logging.get_absl_logger()
    handler, propagate = Keep(logging.WARNING), logger.propagate
    saved = list(logger.handlers)
    logger.handlers, logger.propagate = [handler], False
    try:
        yield lines
    finally:
        logger.handlers, logger.propagate = saved, propagate


def _mapped_sigma(function, x: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """Standard deviations of function(x) under covariance of x (forward differences)."""
    f0 = function(x)
    jac = np.empty((f0.size, x.size))
    for k in range(x.size):
        h = 1e-6 * max(1.0, abs(x[k]))
        step = x.copy()
        step[k] += h
        jac[:, k] = (function(step) - f0) / h
    return np.sqrt(np.maximum(np.einsum("ik,kl,il->i", jac, covariance, jac), 0.0))


# ----------------------------------------------------------------------------- FIGAROH


def import_figaroh():
    """FIGAROH's modules, its import's ndcurves warning kept off the output."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        from figaroh.identification import identification_tools, physical_fit
        from figaroh.tools import qrdecomposition, regressor
    return regressor, qrdecomposition, identification_tools, physical_fit


def figaroh_problem(data: ArmData, urdf_text: str):
    """Pinocchio's model of the URDF (gravity as the model's), FIGAROH's standard regressor of the
    40 ms samples with friction and actuator inertia, and its standard names."""
    import tempfile

    import pinocchio

    from crane_lib.constants import GRAVITY

    regressor, *_ = import_figaroh()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "arm.urdf"
        path.write_text(urdf_text, encoding="utf-8")
        model = pinocchio.buildModelFromUrdf(str(path))
    model.gravity.linear[:] = [0.0, 0.0, -GRAVITY]

    class Robot:  # what FIGAROH's RegressorBuilder reads of a robot
        pass

    robot = Robot()
    robot.model, robot.data = model, model.createData()
    nv = model.nv
    config = {"has_friction": True, "has_actuator_inertia": True, "act_idxv": list(range(nv))}
    b = data.identification
    w = regressor.build_regressor_basic(robot, b.theta, b.dtheta, b.ddtheta, config)
    joints = list(model.names[1:])
    kinds = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
    names = [f"{k}_{j}" for j in joints for k in kinds]
    names += [f"{k}_{j}" for k in ("fv", "fs", "Ia") for j in joints]
    tau = b.tau.T.reshape(-1)  # FIGAROH stacks the rows joint by joint
    return w, tau, names, joints, config


def standard_from_figaroh(data: ArmData, theta: dict[str, float], joints: list[str]) -> np.ndarray:
    """Our standard vector of FIGAROH's named standard values (Pinocchio's link parameters in
    the URDF's link frames, and fv, fs, Ia per joint)."""
    rows = []
    for j, pose in zip(joints[: n_links(data)], link_poses(data)):
        m, mx, my, mz, ixx, ixy, iyy, ixz, iyz, izz = (
            theta.get(f"{k}_{j}", 0.0)
            for k in ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
        )
        second = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        rows.append(link_to_standard(m, np.array([mx, my, mz]), second, pose))
    drive = {}
    for k, j in enumerate(joints, start=1):
        drive.update({f"IA{k}": theta.get(f"Ia_{j}", 0.0), f"FV{k}": theta.get(f"fv_{j}", 0.0)})
        drive[f"FS{k}"] = theta.get(f"fs_{j}", 0.0)
    return standard_vector(data, rows, drive)


def _hand_columns(names: list[str], joints: list[str], n: int) -> list[int]:
    """The inertial columns of the massless links beyond the arm links (the gripper's finger):
    the model has no such body (the hand is a decoupled rotor), so they are left out."""
    extra = set(joints[n:])
    inertial = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
    return [
        i
        for i, name in enumerate(names)
        if name.split("_", 1)[0] in inertial and name.split("_", 1)[1] in extra
    ]


def run_figaroh(data: ArmData, consistent_fit: bool) -> dict:
    """FIGAROH on the 40 ms samples: OLS on its base parameters (double QR), or its physically
    consistent direct effort fit (cvxopt) from the prior; the standard vector, the stated
    uncertainty mapped to base parameters, and the times."""
    _, qrdecomposition, identification_tools, physical_fit = import_figaroh()
    prior = prior_standard(data)
    urdf = files.urdf_text(robot_of(data, prior))
    wall, cpu = time.perf_counter(), time.process_time()
    w, tau, names, joints, config = figaroh_problem(data, urdf)
    drop = _hand_columns(names, joints, n_links(data))
    keep = [i for i in range(len(names)) if i not in drop]
    w, names = w[:, keep], [names[i] for i in keep]
    if not consistent_fit:
        idx_e, params_r = _eliminate(w, names)
        w_e = np.delete(w, idx_e, 1)
        decomposer = qrdecomposition.QRDecomposer()
        w_b, _, expressions, phi_b = decomposer.double_decomposition(tau, w_e, params_r)
        theta_r = qrdecomposition.redistribute_min_norm(decomposer.M, phi_b)
        theta = dict(zip(params_r, theta_r))
        residual = tau - w_b @ phi_b
        s2 = residual @ residual / (len(tau) - len(phi_b))
        cov_b = s2 * np.linalg.inv(w_b.T @ w_b)
        relative = identification_tools.relative_stdev(w_b, phi_b, tau)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        standard = standard_from_figaroh(data, theta, joints)
        # sigma of our base parameters: beta = K g(M^+ phi_b), g linear (`standard_from_figaroh`)
        jac = np.column_stack(
            [
                base_of(data, standard_from_figaroh(data, dict(zip(params_r, col)), joints))
                for col in np.linalg.pinv(decomposer.M).T
            ]
        )
        sigma = np.sqrt(np.maximum(np.einsum("ik,kl,il->i", jac, cov_b, jac), 0.0))
        return {
            "standard": standard,
            "call": (
                "regressor.build_regressor_basic(robot, q, dq, ddq, {has_friction: True, "
                "has_actuator_inertia: True}); QRDecomposer().double_decomposition(tau, W_e, "
                "params_r); redistribute_min_norm(M, phi_b); relative_stdev(W_b, phi_b, tau)"
            ),
            "options": {
                "base_parameters": len(phi_b),
                "eliminated_columns": len(idx_e),
                "samples": int(data.identification.t.size),
            },
            "notes": [
                f"{len(expressions)} base parameters; relative standard deviations "
                f"{float(np.min(relative)):.3g}-{float(np.max(relative)):.3g} %"
            ],
            "stated_sigma": sigma,
            "stated": "relative_stdev (residual variance x (W_b^T W_b)^-1), mapped exactly to "
            "base parameters",
            "wall_s": wall,
            "cpu_s": cpu,
        }
    prior_figaroh = figaroh_vector(data, prior, names, joints)
    problem = physical_fit.build_problem(w, tau, names, joints, prior=prior_figaroh)
    record = physical_fit.solve_direct_effort_fit(problem, solver="cvxopt")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if record.theta is None:
        raise ToolFailure(
            f"solve_direct_effort_fit: status {record.solver_status}: {record.exception}"
        )
    theta = dict(zip(problem.params_std, np.asarray(record.theta)))
    return {
        "standard": standard_from_figaroh(data, theta, joints),
        "call": "physical_fit.solve_direct_effort_fit(physical_fit.build_problem(W, tau, "
        "params_std, joints, prior=prior), solver='cvxopt')",
        "options": {
            "solver": "cvxopt",
            "prior": "the description's, drive terms nominal",
            "prior_weight": float(problem.policy.prior_weight),
        },
        "notes": [f"status {record.solver_status}, accepted by FIGAROH: {record.accepted}"],
        "stated_sigma": None,
        "stated": "none (the SDP states no uncertainty)",
        "wall_s": wall,
        "cpu_s": cpu,
    }


def _eliminate(w: np.ndarray, names: list[str], tol: float = 1e-6):
    """FIGAROH's zero-column elimination (`get_index_eliminate`) over an ordered name list."""
    regressor, *_ = import_figaroh()
    return regressor.get_index_eliminate(w, dict.fromkeys(names, 0.0), tol)


def figaroh_vector(data: ArmData, standard: np.ndarray, names: list[str], joints) -> np.ndarray:
    """A standard vector of ours in FIGAROH's names (link frames), for its prior."""
    robot = robot_of(data, standard)
    links = [j.child for j in robot.axis_joints if j.child in robot.inertials]
    values = dict.fromkeys(names, 0.0)
    for joint, link in zip(joints, links):
        inertial = robot.inertials[link]
        m, c = inertial.mass, inertial.com
        about = inertial.inertia + m * (c @ c * np.eye(3) - np.outer(c, c))
        for key, v in zip(
            ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"),
            (
                m,
                *(m * c),
                about[0, 0],
                about[0, 1],
                about[1, 1],
                about[0, 2],
                about[1, 2],
                about[2, 2],
            ),
        ):
            values[f"{key}_{joint}"] = v
    named = dict(zip(standard_names(data), standard))
    for k, joint in enumerate(joints, start=1):
        for key, ours in (("fv", "FV"), ("fs", "FS"), ("Ia", "IA")):
            if f"{key}_{joint}" in values:
                values[f"{key}_{joint}"] = named[f"{ours}{k}"]
    return np.array([values[n] for n in names])


# ----------------------------------------------------------------------------- the score


def score(data: ArmData, base: np.ndarray, standard: np.ndarray | None, sigma) -> dict:
    """One result scored as every other: held-out RMSE (pooled) and MNE per recording, the truth
    score on the accepted record's well-determined parameters, the dense audit (seed 1), the link
    margins of its link-level model, and its stated sigma against the actual error."""
    model = data.model
    names = list(model.names)
    errors = [prediction_error(model, base, b) for b in data.held_out]
    ols = ParameterSet(
        names, np.asarray(data.accepted["ols"]), np.asarray(data.accepted["std_errors"])
    )
    truth = truth_score.truth_score(ParameterSet(names, base), ols, data.truth_base)
    audit = audit_seeds(base, (AUDIT_SEED,), "dense", model)[0]
    margins = None if standard is None else consistent.link_margins(standard, data.description)
    stated = None
    if sigma is not None:
        well = [names.index(n) for n in truth.names]
        actual = np.abs(truth.estimate - truth.truth)
        s = np.asarray(sigma)[well]
        stated = {
            "within_95": int(np.sum(actual <= Z95 * s)),
            "scored": len(well),
            "median_error_over_sigma": float(np.median(actual / np.where(s > 0, s, np.nan))),
        }
    return {
        "held_out_rmse": pooled_rmse(model, base, data.held_out),
        "held_out_mne": [e.mne for e in errors],
        "truth": truth.to_dict(),
        "audit": {"passed": bool(audit.passed), "lambda_min": float(audit.lambda_min)},
        "link_margins": None if margins is None else margins.tolist(),
        "consistent_links": None if margins is None else int(np.sum(margins > 0)),
        "stated_vs_actual": stated,
    }


def trace(data: ArmData, base: np.ndarray) -> list[float]:
    """The predicted torque of axis TRACE_AXIS on the first held-out recording (N·m)."""
    return predicted_torque(data.model, base, data.held_out[0])[:, TRACE_AXIS - 1].tolist()


# ----------------------------------------------------------------------------- one arm


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions() -> dict[str, str]:
    """The versions of the tools and of what they run on."""
    return {
        n: _version(n) for n in ("mujoco", "absl-py", "figaroh", "pin", "picos", "cvxopt", "numpy")
    }


def algorithm1_result(data: ArmData) -> dict:
    """The accepted model from its record, with its link-level model and OLS standard errors."""
    base = np.asarray(data.accepted["parameters"], dtype=float)
    return {
        "base": base,
        "standard": accepted_standard(data),
        "call": "acceptance.accepted.accept_recording(log, trajectory, 0.04) (from the record)",
        "options": {"refine": data.accepted["refinement"].get("method", "")},
        "notes": [data.accepted["verdict"]],
        "stated_sigma": np.asarray(data.accepted["std_errors"], dtype=float),
        "stated": "OLS standard errors of the record",
        "wall_s": None,
        "cpu_s": None,
    }


def run_tool(tool: str, data: ArmData, profile: str) -> dict:
    """One tool's result on one arm (a dict with `base`), or ToolFailure's message."""
    if tool == "algorithm1":
        return algorithm1_result(data)
    if tool == "mujoco_prior":
        result = run_mujoco(data, prior_standard(data), profile)
    elif tool == "mujoco_accepted":
        result = run_mujoco(data, accepted_standard(data), profile)
    elif tool == "figaroh_ols":
        result = run_figaroh(data, consistent_fit=False)
    else:
        result = run_figaroh(data, consistent_fit=True)
    result["base"] = base_of(data, result["standard"])
    return result


def compare_arm(arm: str, profile: str, tools=TOOLS, progress=None) -> dict:
    """Every tool on one arm, each scored by `score`; a failing tool keeps its message."""
    inputs = check_request(arm, tools, profile)
    data = arm_data(inputs)
    rows = {}
    for tool in tools:
        if progress is not None:
            progress(f"{arm}: {tool}")
        try:
            result = run_tool(tool, data, profile)
        except (ToolFailure, ValueError, RuntimeError, np.linalg.LinAlgError) as error:
            rows[tool] = {"failed": f"{type(error).__name__}: {error}"}
            continue
        sigma = result.pop("stated_sigma")
        base, standard = result.pop("base"), result.pop("standard")
        rows[tool] = {
            **result,
            "base": base.tolist(),
            **score(data, base, standard, sigma),
            "trace": trace(data, base),
        }
    first = data.held_out[0]
    return {
        "arm": arm,
        "profile": profile,
        "identification": inputs.identification.stem,
        "held_out": data.held_out_names,
        "names": list(data.model.names),
        "versions": versions(),
        "trace_axis": TRACE_AXIS,
        "trace_t": first.t.tolist(),
        "trace_measured": first.tau[:, TRACE_AXIS - 1].tolist(),
        "results": rows,
    }


def timing_path(arm: str, directory=None) -> Path:
    """Where the times of one arm's tools are kept, beside the build's own step times."""
    folder = TIMINGS_DIR if directory is None else Path(directory).parent / TIMINGS_DIR.name
    return folder / f"peer_tools_{arm}.json"


def write_comparison(arm: str, profile: str, directory=None, progress=None, tools=TOOLS) -> Path:
    """Compute one arm's comparison and write its record atomically; the tools' wall and CPU
    times go to `timing_path` (they differ at every run, the record does not)."""
    record = compare_arm(arm, profile, tools, progress=progress)
    times = {
        tool: {"wall_s": result.pop("wall_s", None), "cpu_s": result.pop("cpu_s", None)}
        for tool, result in record["results"].items()
    }
    path = write_json_record(record_path(arm, directory), record)
    write_json_record(
        timing_path(arm, directory),
        {"arm": arm, "profile": profile, "cpu_count": os.cpu_count(), "tools": times},
    )
    return path


def read_times(directory=None) -> dict[str, dict]:
    """The tools' times of each compared arm whose record this results folder computed."""
    paths = {arm: timing_path(arm, directory) for arm in COMPARED_ARMS}
    return {arm: read_json_record(p)["tools"] for arm, p in paths.items() if p.is_file()}


def read_comparisons(directory=None) -> list[dict]:
    """The comparison records that exist, in COMPARED_ARMS order."""
    paths = [record_path(a, directory) for a in COMPARED_ARMS]
    return [read_json_record(p) for p in paths if p.is_file()]


def input_files(arm: str, profile: str) -> list[Path]:
    """The files whose content decides one arm's record (for the step's key)."""
    inputs = check_request(arm, TOOLS, profile)
    paths = [inputs.identification, *inputs.held_out, inputs.accepted_record]
    return paths + ([inputs.accepted_mjcf] if inputs.accepted_mjcf is not None else [])


# ----------------------------------------------------------------------------- the command


def main(argv=None) -> int:
    """`python -m crane_lib.export.peer_tools --arm ARM [--tool T ...] [--profile P] [--out DIR]`:
    one arm's comparison record; a bad option or a missing input is refused in one line, exit 2,
    before any tool runs."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m crane_lib.export.peer_tools")
    parser.add_argument("--arm", required=True)
    parser.add_argument("--tool", action="append", default=[], help=f"one of {', '.join(TOOLS)}")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", default=None, help="folder of the record (default results/)")
    args = parser.parse_args(argv)
    tools = tuple(args.tool) or TOOLS
    try:
        check_request(args.arm, tools, args.profile)
        path = write_comparison(args.arm, args.profile, args.out, tools=tools)
    except InputError as error:
        print(f"peer tools: {error}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
