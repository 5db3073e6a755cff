"""A payload identified on an accepted model, the arm's parameters held fixed (`crane-id payload`).

The paper names a payload as what invalidates an accepted model (Sec. VII-E). A rigid payload
fixed to the last link n adds ten standard parameters to that link, φ_p = (XX, XY, XZ, YY, YZ,
ZZ about O_n, MX, MY, MZ, M) in frame n, and its torque is linear in them through link n's
standard regressor columns Y_n. On a recording with the payload, the accepted model's base
parameters β̂ fixed,

    r = τ - Y(q, q̇, q̈) β̂ = Y_n(q, q̇, q̈) φ_p + e,

stacked over the preprocessed samples (clamp-masked ones left out), so φ_p is a small least-
squares problem. Physically consistent: the payload's pseudo-inertia

    J(φ_p) = [[tr(I)/2 E - I, h], [h^T, m]]  ⪰  PD_MARGIN · E

(Wensing, Kim and Slotine 2017; `twin.truth.check_physical` tests the same matrix), solved by
cvxpy with Clarabel as the project's other SDPs are. Standard errors: the unconstrained
estimate's, by a delete-a-block jackknife over JACKKNIFE_BLOCKS contiguous stretches of the
recording (the residual is filtered and holds the arm model's own error, so its samples are not
independent and s²(AᵀA)⁻¹ would be several times too small); the mass
m, the centre of mass c = h/m (delta method) and the inertia about it I_c = I - m(|c|²E - ccᵀ)
follow. An inertia entry whose standard error exceeds its estimate is reported as not excited by
the recording (the short recording moves the wrist too little to see it).

The updated model is the accepted one plus the payload mapped into its base parameters
(`DynamicModel.base_from_standard` of φ_p alone: linear, so the sum is the arm with the payload
in the model's set); it is audited over Θ on seeds 1-5 again (`audit.audit_seeds`) before it is
accepted. When the model file names gains of `crane-id calibrate` (its `torque_scale_gain`
entry), the recording's torque record is scaled by the same gains first.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import cvxpy as cp
import numpy as np

from crane_lib.acceptance.audit import AuditResult, audit_seeds
from crane_lib.arithmetic import CLARABEL_OPTIONS
from crane_lib.errors import InputError
from crane_lib.logs.preprocessing import preprocess
from crane_lib.logs.raw_log import RawLog, group
from crane_lib.model.arm_description import crane_x7
from crane_lib.model.chain_model import ChainModel
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet
from crane_lib.paths import RESULTS_DIR, TIMINGS_DIR
from crane_lib.records import write_json_record

PAYLOAD_KINDS = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
PD_MARGIN = 1e-9  # pseudo-inertia's smallest eigenvalue: positive, far below a 10 g payload's
AUDIT_SEEDS = (1, 2, 3, 4, 5)
JACKKNIFE_BLOCKS = 20  # contiguous stretches of the recording, each left out once
CRANE_X7_ARM = "crane_x7"


@dataclass
class PayloadEstimate:
    """The payload's standard parameters of link n (frame n, about O_n) and what follows.

    values     the physically consistent estimate (SDP), PAYLOAD_KINDS order
    ls_values  the unconstrained least-squares estimate
    std_errors its standard errors
    """

    link: int
    values: np.ndarray
    ls_values: np.ndarray
    std_errors: np.ndarray
    covariance: np.ndarray
    residual_rms_before: float
    residual_rms_after: float
    n_samples: int
    pseudo_inertia_min: float

    @property
    def names(self) -> list[str]:
        """The ten parameter names of the payload on link n."""
        return [f"{k}{self.link}" for k in PAYLOAD_KINDS]

    @property
    def mass(self) -> float:
        """Payload mass (kg)."""
        return float(self.values[9])

    @property
    def mass_std_error(self) -> float:
        """Standard error of the mass (kg)."""
        return float(self.std_errors[9])

    @property
    def com(self) -> np.ndarray:
        """Centre of mass in frame n (m): h/m."""
        return self.values[6:9] / self.values[9]

    @property
    def com_std_error(self) -> np.ndarray:
        """Standard errors of the centre of mass (m), delta method on h/m with the LS
        covariance."""
        m, h = self.ls_values[9], self.ls_values[6:9]
        errors = []
        for i in range(3):
            grad = np.zeros(10)
            grad[6 + i], grad[9] = 1.0 / m, -h[i] / m**2
            errors.append(math.sqrt(max(grad @ self.covariance @ grad, 0.0)))
        return np.array(errors)

    @property
    def inertia_about_com(self) -> np.ndarray:
        """Inertia tensor about the centre of mass, frame-n axes (kg·m²)."""
        xx, xy, xz, yy, yz, zz = self.values[:6]
        tensor = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        c = self.com
        return tensor - self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    def excited(self) -> np.ndarray:
        """Per parameter, whether the recording determines it (standard error below |value|)."""
        return self.std_errors < np.abs(self.ls_values)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "names": self.names,
            "values": self.values.tolist(),
            "ls_values": self.ls_values.tolist(),
            "std_errors": self.std_errors.tolist(),
            "mass": self.mass,
            "mass_std_error": self.mass_std_error,
            "com": self.com.tolist(),
            "com_std_error": self.com_std_error.tolist(),
            "inertia_about_com": self.inertia_about_com.tolist(),
            "excited": self.excited().tolist(),
            "residual_rms_before": self.residual_rms_before,
            "residual_rms_after": self.residual_rms_after,
            "n_samples": self.n_samples,
            "pseudo_inertia_min": self.pseudo_inertia_min,
        }


def check_payload_inputs(
    parameters: ParameterSet, source: str, log: RawLog, arm_key: str, arm_name: str | None
) -> None:
    """The model file and the recording are of the --robot's arm (`arm_key`; `arm_name` the name
    its model files carry in their `arm` entry, None for the CRANE-X7's, which carry none),
    before any computation; an InputError names the file and both arms."""
    named = parameters.meta.get("arm")
    if named != arm_name:
        raise InputError(
            source,
            f"is a model of the arm {named or 'CRANE-X7'!r}",
            f"a model of --robot {arm_key} ({arm_name or 'CRANE-X7'})",
        )
    recorded = log.arm or CRANE_X7_ARM
    if recorded != arm_key:
        raise InputError(
            str(log.path),
            f"was recorded on the arm {recorded}, not on the model's arm {arm_key}",
            f"a recording of {arm_key} with the payload",
        )


def model_gains(parameters: ParameterSet, n_axes: int) -> np.ndarray | None:
    """The gains the model was identified with (`torque_scale_gain` in its header), or None."""
    text = parameters.meta.get("torque_scale_gain")
    if not text:
        return None
    gains = np.array([float(x) for x in text.split()])
    if gains.shape != (n_axes,) or not np.all(gains > 0):
        raise InputError(
            "model file: torque_scale_gain", f"{text!r}", f"{n_axes} positive gains (one per axis)"
        )
    return gains


def _pseudo_inertia(phi):
    """J(φ) of the ten payload parameters (cvxpy expression or numpy array)."""
    xx, xy, xz, yy, yz, zz, mx, my, mz, m = (phi[i] for i in range(10))
    trace_half = (xx + yy + zz) / 2
    rows = [
        [trace_half - xx, -xy, -xz, mx],
        [-xy, trace_half - yy, -yz, my],
        [-xz, -yz, trace_half - zz, mz],
        [mx, my, mz, m],
    ]
    if isinstance(phi, np.ndarray):
        return np.array(rows, dtype=float)
    return cp.bmat(rows)


def _jackknife_covariance(
    scaled: np.ndarray, target: np.ndarray, scale: np.ndarray, n_axes: int
) -> np.ndarray:
    """Delete-a-block jackknife covariance of the LS estimate over JACKKNIFE_BLOCKS contiguous
    stretches of samples (all axes of a sample together): honest where the residual is filtered
    and carries model error, which the white-noise formula s²(AᵀA)⁻¹ would take for noise."""
    n = len(target) // n_axes
    blocks = np.array_split(np.arange(n), JACKKNIFE_BLOCKS)
    estimates = []
    for block in blocks:
        keep = np.ones(n, dtype=bool)
        keep[block] = False
        rows = np.repeat(keep, n_axes)
        estimates.append(np.linalg.lstsq(scaled[rows], target[rows], rcond=None)[0] / scale)
    estimates = np.array(estimates)
    spread = estimates - estimates.mean(axis=0)
    return (len(blocks) - 1) / len(blocks) * spread.T @ spread


def identify_payload(
    log: RawLog, parameters: ParameterSet, model: DynamicModel, ts: float
) -> PayloadEstimate:
    """The payload's ten parameters on the last link, the model's β held fixed (module text)."""
    gains = model_gains(parameters, log.n_axes)
    if gains is not None:
        samples = log.samples.copy()
        samples[:, group("current_command", log.n_axes)] *= gains
        log = RawLog(samples, dict(log.metadata), log.path, log.repairs, log.arm)
    bundle = preprocess(log, ts)
    keep = ~bundle.clamp_mask
    theta, dtheta, ddtheta = bundle.theta[keep], bundle.dtheta[keep], bundle.ddtheta[keep]
    beta = parameters.ordered(model.names, source="model file")
    residual = bundle.tau[keep] - model.inverse_dynamics(theta, dtheta, ddtheta, beta)
    chain = ChainModel(model.arm if model.arm is not None else crane_x7())
    link = chain.arm.n_joints
    columns = [chain.standard_names.index(f"{k}{link}") for k in PAYLOAD_KINDS]
    design = chain.standard_regressor(theta, dtheta, ddtheta)[:, :, columns].reshape(-1, 10)
    target = residual.reshape(-1)
    scale = np.linalg.norm(design, axis=0)
    scale[scale == 0.0] = 1.0
    scaled = design / scale
    ls = np.linalg.lstsq(scaled, target, rcond=None)[0] / scale
    covariance = _jackknife_covariance(scaled, target, scale, residual.shape[1])

    phi = cp.Variable(10)
    objective = cp.Minimize(cp.sum_squares(scaled @ cp.multiply(scale, phi) - target))
    problem = cp.Problem(objective, [_pseudo_inertia(phi) >> PD_MARGIN * np.eye(4)])
    problem.solve(solver=cp.CLARABEL, **CLARABEL_OPTIONS)  # the deterministic KKT solver
    if phi.value is None:
        raise InputError(
            str(log.path), f"no physically consistent payload ({problem.status})", "a solvable fit"
        )
    values = np.asarray(phi.value, dtype=float)
    after = target - design @ values
    return PayloadEstimate(
        link,
        values,
        ls,
        np.sqrt(np.maximum(np.diag(covariance), 0.0)),
        covariance,
        float(np.sqrt(np.mean(target**2))),
        float(np.sqrt(np.mean(after**2))),
        int(keep.sum()),
        float(np.linalg.eigvalsh(_pseudo_inertia(values))[0]),
    )


def with_payload(
    parameters: ParameterSet, estimate: PayloadEstimate, model: DynamicModel
) -> ParameterSet:
    """The model plus the payload in its base parameters (the payload's standard parameters
    alone mapped by the grouping; every other standard parameter zero)."""
    standard = {name: 0.0 for name in model.standard_names}
    standard.update(dict(zip(estimate.names, estimate.values)))
    added = model.base_from_standard(standard).ordered(model.names, source="payload")
    values = parameters.ordered(model.names, source="model file") + added
    meta = dict(parameters.meta)
    meta.update(
        payload_mass_kg=f"{estimate.mass:.6g}",
        payload_com_m=" ".join(f"{v:.6g}" for v in estimate.com),
    )
    return ParameterSet(model.names, values, parameters.std_errors, meta)


def reaudit(
    parameters: ParameterSet, model: DynamicModel, seeds=AUDIT_SEEDS
) -> tuple[bool, list[AuditResult]]:
    """The updated model's all-pose audit over Θ on `seeds`; accepted when every seed passes."""
    audits = audit_seeds(parameters.values, seeds, "dense", model)
    return all(a.passed for a in audits), audits


# ------------------------------------------------------------------ the twin study

# The book's study on a shipped arm's twin (chapter "Your own arm", register "hardware"):
# a unit whose torque constants are off by up to ±20 % (drawn with SECRET_GAIN_SEED, never read
# by the fit), calibrated with the owner's weight, identified with and without the gains, then
# a payload nobody states identified on the calibrated model.
SECRET_GAIN_SPREAD = 0.20
SECRET_GAIN_SEED = 40400
CALIBRATION_MASS_KG = 0.3  # the owner's weight, at the gripper's stated point
SECRET_PAYLOAD_MASS_KG = 0.25
SECRET_PAYLOAD_OFFSET_M = (0.012, -0.008, 0.015)  # its centre of mass from the gripper's point
SECRET_PAYLOAD_SIZE_M = (0.025, 0.06)  # a solid cylinder along z of the last link: radius, length
STUDY_TS = 0.040
IDENTIFICATION_BLOCK, HELD_OUT_BLOCK, PAYLOAD_BLOCK = "PI_ALPHA", "PI_BETA", "PI_ALPHA"
STUDY_SEEDS = {"unloaded": 101, "loaded": 102, "identification": 1, "held_out": 2, "payload": 3}


def secret_payload(point: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The study's payload: mass (kg), centre of mass (m, frame n) and inertia about it."""
    mass = SECRET_PAYLOAD_MASS_KG
    radius, length = SECRET_PAYLOAD_SIZE_M
    side = mass * (3 * radius**2 + length**2) / 12
    return (
        mass,
        point + np.array(SECRET_PAYLOAD_OFFSET_M),
        np.diag([side, side, mass * radius**2 / 2]),
    )


def twin_study(key: str = "so101", times=None) -> dict:
    """Calibration, Algorithm 1 with and without the gains, and a payload, on `key`'s twin with
    a secret gain error (module constants); every number the chapter shows, as one record.
    `times(stage)`: told when each stage starts (wall times are kept apart from the record)."""
    from crane_lib.acceptance import torque_scale, truth_score
    from crane_lib.acceptance.accepted import accept_recording, accepted_record
    from crane_lib.acceptance.held_out import held_out
    from crane_lib.excitation.arms import arm_directory, block_design
    from crane_lib.excitation.commands import SUFFIX, commanded_duration
    from crane_lib.model.dynamics import model as shared_model
    from crane_lib.twin import recorder
    from crane_lib.twin import truth as twin_truth

    say = times or (lambda stage: None)
    say("calibration recordings")
    arm = twin_truth.twin_arm(key)
    settings = twin_truth.with_gain_error(
        twin_truth.compute_plant_settings(None, key), SECRET_GAIN_SPREAD, SECRET_GAIN_SEED
    )
    secret = settings.kt_true / settings.kt_logged
    point = torque_scale.tool_point(arm, key)
    poses = torque_scale.calibration_poses(arm, key, point)
    cmd = torque_scale.calibration_command(poses, block_design(arm).command_format)

    def log_of(command, seed, truth=None) -> RawLog:
        samples, meta = recorder.record(
            command, seed=seed, arm=key, truth=truth, plant_settings=settings
        )
        return RawLog(samples, meta, None)

    unloaded = log_of(cmd, STUDY_SEEDS["unloaded"])
    weight = twin_truth.with_payload(key, CALIBRATION_MASS_KG, point)
    loaded = log_of(cmd, STUDY_SEEDS["loaded"], weight)
    say("calibration fit")
    scale = torque_scale.fit_gains(arm, key, cmd, unloaded, loaded, CALIBRATION_MASS_KG, point)
    say("identification recordings")
    folder = arm_directory(key)
    identification = log_of(
        folder / f"{IDENTIFICATION_BLOCK}{SUFFIX}", STUDY_SEEDS["identification"]
    )
    held = log_of(folder / f"{HELD_OUT_BLOCK}{SUFFIX}", STUDY_SEEDS["held_out"])
    model = shared_model("reduced", arm=arm)
    runs = {}
    for label, gains in (("without", None), ("with", scale)):
        say(f"Algorithm 1 {label} calibration")
        result = accept_recording(
            identification, IDENTIFICATION_BLOCK, STUDY_TS, model=model, torque_scale=gains
        )
        scored_log = held if gains is None else torque_scale.scaled_log(held, gains)
        scores = held_out(result.parameters.values, [scored_log], STUDY_TS, model)
        score = truth_score.score_accepted(result, model, key)
        runs[label] = {
            "accepted": result.accepted,
            "verdict": result.verdict(),
            "held_out_mne": scores.errors[0].mne,
            "held_out_rmse": scores.pooled_rmse,
            "truth": score.to_dict(),
            "record": accepted_record(result, STUDY_TS),
            "parameters": result.parameters,
        }
    say("payload recording")
    mass, com, inertia = secret_payload(point)
    payload_truth = twin_truth.with_payload(key, mass, com, inertia)
    carried = log_of(folder / f"{PAYLOAD_BLOCK}{SUFFIX}", STUDY_SEEDS["payload"], payload_truth)
    say("payload fit and audit")
    calibrated = runs["with"].pop("parameters")
    runs["without"].pop("parameters")
    estimate = identify_payload(carried, calibrated, model, STUDY_TS)
    accepted, audits = reaudit(with_payload(calibrated, estimate, model), model)
    return {
        "arm": key,
        "drive_mode": identification.metadata.get("drive_mode", "current"),
        "secret_gain": secret.tolist(),
        "secret_gain_spread": SECRET_GAIN_SPREAD,
        "calibration": {
            "mass_kg": CALIBRATION_MASS_KG,
            "point_m": point.tolist(),
            "poses_deg": np.degrees(poses).tolist(),
            "commanded_s": commanded_duration(cmd),
            "rows": scale.rows(),
            "estimate": scale.estimate.tolist(),
            "fit_std_error": scale.fit_std_error.tolist(),
            "payload_torque": scale.payload_torque.tolist(),
            "difference": scale.difference.tolist(),
            "kt_drift_sd": torque_scale.KT_DRIFT_SD,
        },
        "identification": IDENTIFICATION_BLOCK,
        "held_out": HELD_OUT_BLOCK,
        "runs": runs,
        "payload": {
            "block": PAYLOAD_BLOCK,
            "secret_mass_kg": mass,
            "secret_com_m": com.tolist(),
            "secret_inertia": inertia.tolist(),
            "estimate": estimate.to_dict(),
            "accepted": accepted,
            "audits": [a.to_dict() for a in audits],
        },
    }


STUDY_DIR = RESULTS_DIR / "torque_scale"


def study_path(key: str = "so101", directory=None) -> Path:
    """Where the twin study of one arm is kept (results/torque_scale/<arm>.json)."""
    return Path(directory or STUDY_DIR) / f"{key}.json"


def _json_ready(value):
    """NaN (an axis gravity cannot load) as null; numpy scalars as Python numbers."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_study(key: str = "so101", directory=None) -> Path:
    """Compute the twin study and write its record atomically, its stages' wall times apart
    (results/timings/torque_scale_<arm>.json: they differ at every run, the record does not)."""
    stages: dict[str, float] = {}
    clock = {"name": None, "since": time.perf_counter()}

    def stage(name) -> None:
        now = time.perf_counter()
        if clock["name"] is not None:
            stages[clock["name"]] = now - clock["since"]
        clock.update(name=name, since=now)

    record = twin_study(key, stage)
    stage(None)
    path = write_json_record(study_path(key, directory), _json_ready(record))
    timings = TIMINGS_DIR if directory is None else Path(directory).parent / TIMINGS_DIR.name
    write_json_record(timings / f"torque_scale_{key}.json", {"arm": key, "stages_s": stages})
    return path
