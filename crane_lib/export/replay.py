"""Replay verification: an exported MJCF, simulated in MuJoCo under the controller a recording
used, against that (held-out) recording.

The recording gives, per control cycle k, the reference (θref, θ̇ref, θ̈ref), the measured angle
θ_k and the torque record τ_k (goal current x the torque record's Kt). The replay runs the
realization controller (2) (`model.controller.realization_law`, the function the twin and the
recorder run) at the recording's control period T around `mujoco.mj_step` on the exported file:

* cycle k reads the simulated angle at t_k = k T, rounded to the arm's encoder counts (the
  controller sees what the encoder gives), and computes the goal current from the recording's
  reference of row k, the velocity from the previous read over T (a periodic host: the recording's
  few-microsecond jitter is not replayed);
* the goal current becomes the actuator's ctrl (A) after the file's dead time minus the half
  period the hold itself adds (`dead_time_s` - T/2, per axis, rounded to the simulation step), and
  is held until the next command of that axis takes effect;
* MuJoCo integrates the file as written (its integrator, joint limits and dry friction), with the
  step T / SUBSTEPS so that the dead time falls on the step grid;
* the controller's state starts where the recording's did: at its first measured angle, at rest,
  with the integral that reproduces the first row's logged feedback torque (the arm was holding
  its posture before logging began).

A position-mode recording (the servos' own loop; its MJCF has position actuators) is replayed
the same way with the goals the host streamed, passed through the servo's own profile
(`model.position_loop.position_loop_law`, whose PID the position actuator stands for) into the
actuators' ctrl; its torque record is the logged present current, compared with the actuators'
force.

What is compared, per axis j over the N cycles:

    RMSE_θ,j = sqrt(1/N Σ_k (θ_sim,kj - θ_kj)²),   RMSE_τ,j = sqrt(1/N Σ_k (τ_sim,kj - τ_kj)²),

τ_sim the simulated goal current x the actuator's gear (the same torque record), both torque
series low-passed as the identification's bundle at the interval ts is (`logs.preprocessing`: D-C's
zero-phase Butterworth, corner 0.45/(2 ts), 5.6 Hz at 40 ms): at 1 ms each carries the feedback's
encoder-count chatter (K_V M̂_j per count per period, 8.5 N·m on the CRANE-X7's axis 2), which
is noise the two do not share. The raw RMSE is kept beside it (`torque_rmse_raw`). A model whose
closed loop runs away (a non-finite state or an angle beyond DIVERGED_RAD) stops there and is
reported as diverged, with infinite errors.

MuJoCo is imported inside the functions: the book and the tests use it, the pipeline does not
need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib.acceptance import other_arms
from crane_lib.constants import CONTROL_PERIOD_S, ENCODER_RESOLUTION_RAD, N_AXES
from crane_lib.export import consistent, files
from crane_lib.identification.clie_position import drive_mode_of
from crane_lib.logs.preprocessing import antialias_sections, zero_phase_filter
from crane_lib.logs.raw_log import RawLog, read_raw_log
from crane_lib.model import position_loop
from crane_lib.model.arm_description import ArmDescription, load_arm
from crane_lib.model.controller import OUT_GOAL_UNITS, OUT_ROWS, RealizationConstants
from crane_lib.model.controller import realization_law as law
from crane_lib.model.parameters import ParameterSet
from crane_lib.paths import RESULTS_DIR, portable, recording_path
from crane_lib.records import read_json_record, write_json_record
from crane_lib.twin.recorder import arm_constants
from crane_lib.twin.truth import CRANE_X7, TWIN_TRUTH_CSV, load_truth, truth_parameters

SUBSTEPS = 4  # MuJoCo steps per control period: 0.25 ms at 1 ms, the twin's own step
DIVERGED_RAD = 50.0  # |angle| beyond which a replay has run away
TS = 0.040  # s: the interval whose anti-alias filter the torques are compared through


@dataclass(frozen=True)
class Replay:
    """One model's replay of one recording: the simulated and measured angle and torque."""

    model: str
    recording: str
    t: np.ndarray  # (N,) s, the cycles' read times k T
    angle: np.ndarray  # (N, n) rad, simulated (true angle, not rounded)
    torque: np.ndarray  # (N, n) N·m, simulated torque record (goal current x gear)
    measured_angle: np.ndarray  # (N, n) rad
    measured_torque: np.ndarray  # (N, n) N·m
    cycles: int  # cycles simulated before a divergence (N when none)
    ts: float = TS  # s, the interval whose anti-alias filter the torque RMSE applies

    @property
    def diverged(self) -> bool:
        """Whether the closed loop ran away before the recording's end."""
        return self.cycles < len(self.t)

    def _rmse(self, simulated: np.ndarray, measured: np.ndarray) -> np.ndarray:
        if self.diverged:
            return np.full(simulated.shape[1], np.inf)
        return np.sqrt(np.mean((simulated - measured) ** 2, axis=0))

    @property
    def angle_rmse(self) -> np.ndarray:
        """(n,) rad: RMSE_θ,j over the recording."""
        return self._rmse(self.angle, self.measured_angle)

    @property
    def torque_rmse(self) -> np.ndarray:
        """(n,) N·m: RMSE_τ,j over the recording, both torques low-passed for the interval ts."""
        if self.diverged:
            return self._rmse(self.torque, self.measured_torque)
        sections = antialias_sections(self.ts)
        return self._rmse(
            zero_phase_filter(sections, self.torque),
            zero_phase_filter(sections, self.measured_torque),
        )

    @property
    def torque_rmse_raw(self) -> np.ndarray:
        """(n,) N·m: RMSE_τ,j of the unfiltered 1 ms torque records."""
        return self._rmse(self.torque, self.measured_torque)

    def to_dict(self) -> dict:
        """The errors as a record keeps them (inf written as None)."""

        def listed(values):
            return [float(v) if math.isfinite(v) else None for v in values]

        return {
            "model": self.model,
            "recording": self.recording,
            "cycles": int(self.cycles),
            "samples": len(self.t),
            "diverged": self.diverged,
            "angle_rmse_rad": listed(self.angle_rmse),
            "torque_rmse_N_m": listed(self.torque_rmse),
            "torque_rmse_raw_N_m": listed(self.torque_rmse_raw),
            "ts": self.ts,
        }


def file_timing(robot) -> tuple[float, np.ndarray]:
    """(control period s, per-axis dead time s) of an exported MJCF's custom numeric data."""
    return float(robot.numeric("control_period_s").data[0]), np.array(
        robot.numeric("dead_time_s").data, dtype=float
    )


def command_lags(dead_time: np.ndarray, period: float, substeps: int = SUBSTEPS) -> np.ndarray:
    """(substeps, n) whole cycles back whose command is in effect at each step of a cycle: the
    command of cycle i acts from i T + d_j on, d_j = dead time - T/2 on the step grid."""
    h = period / substeps
    delay = np.maximum(np.rint((np.asarray(dead_time) - 0.5 * period) / h), 0).astype(np.int64)
    steps = np.arange(substeps)[:, None]
    return -np.floor_divide(steps - delay[None, :], substeps)  # ceil((d_j - s) / substeps)


def encoder(angle: np.ndarray) -> np.ndarray:
    """The angle the arm's 12-bit encoder reports (rad): rounded to whole counts."""
    return np.rint((angle + math.pi) / ENCODER_RESOLUTION_RAD) * ENCODER_RESOLUTION_RAD - math.pi


def starting_integral(log: RawLog, constants: RealizationConstants, period: float) -> np.ndarray:
    """∫(θref - θ) dt before the first row: the value for which (2) gives the first row's
    logged feedback torque, so the replay starts holding the posture as the arm did."""
    error = log.theta_ref[0] - log.theta[0]
    velocity = log.column_group("dtheta")[0]
    feedback = log.column_group("u_feedback")[0] / constants.m_hat
    proportional = constants.k_v * (log.dtheta_ref[0] - velocity) + constants.k_p * error
    return (feedback - proportional) / constants.k_i - error * period


def is_position_mode(robot) -> bool:
    """Whether a compiled MJCF drives its axes by position actuators (the servos' own loop)."""
    import mujoco

    return bool(np.all(robot.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE))


def replay(
    mjcf,
    log: RawLog,
    name: str = "model",
    constants: RealizationConstants | None = None,
    substeps: int = SUBSTEPS,
    rows: int | None = None,
    ts: float = TS,
) -> Replay:
    """Simulate the MJCF in MuJoCo under the controller the recording used, with its reference,
    and set it beside the recording (the first `rows` cycles, or all): controller (2) around its
    current-control motors, or, for a position-mode recording, its position actuators fed the
    goals the host streamed (the torque record then the actuators' force)."""
    import mujoco

    robot = mujoco.MjModel.from_xml_path(str(mjcf))
    data = mujoco.MjData(robot)
    n = log.n_axes
    if robot.nu != n or robot.nq != n:
        raise ValueError(f"{mjcf}: {robot.nu} actuators, {robot.nq} joints; the log has {n} axes")
    position = is_position_mode(robot)
    if position != (drive_mode_of(log) == "position"):
        raise ValueError(
            f"{mjcf}: {'position' if position else 'current'} actuators for a recording in "
            f"{drive_mode_of(log)} mode ({log.path})"
        )
    count = log.n_samples if rows is None else min(int(rows), log.n_samples)
    period = float(np.median(np.diff(log.t[: max(count, 2)])))
    _, dead_time = file_timing(robot)
    robot.opt.timestep = period / substeps
    lags = command_lags(dead_time, period, substeps)
    first = int(lags.max())
    reference = (log.theta_ref[:count], log.dtheta_ref[:count], log.ddtheta_ref[:count])
    measured_angle, measured_torque = log.theta[:count], log.torque_logged[:count]
    data.qpos[:] = log.theta[0]
    data.qvel[:] = 0.0
    mujoco.mj_forward(robot, data)
    # commands of the cycles before the first: what the arm was holding with (goal or current)
    held = log.theta_ref[0] if position else log.current_command[0]
    command = np.vstack([np.tile(held, (first, 1)), np.zeros((count, n))])
    if position:  # the servo's own profile shapes the goal it is given (model.position_loop)
        loop = load_arm(log.arm).position_loop
        gains, state = loop.gains(n), position_loop.initial_state(held, log.theta[0])
        loop_out = np.zeros((position_loop.O_ROWS, n))
    else:
        constants = arm_constants(log.arm) if constants is None else constants
        arguments, unit = constants.law_arguments(), constants.current_unit
        integral = starting_integral(log, constants, period)
        previous = encoder(data.qpos.copy())
    angle, force, out = np.zeros((count, n)), np.zeros((count, n)), np.zeros((OUT_ROWS, n))
    axes = np.arange(n)
    done = count
    for k in range(count):
        angle[k] = data.qpos
        force[k] = data.actuator_force
        if position:
            theta = encoder(angle[k])
            position_loop.position_loop_law(reference[0][k], theta, period, state, gains, loop_out)
            command[first + k] = state[position_loop.S_POSITION]
        else:
            theta = encoder(angle[k])
            law(
                reference[0][k],
                reference[1][k],
                reference[2][k],
                theta,
                previous,
                period,
                integral,
                *arguments,
                out,
            )
            previous = theta
            command[first + k] = out[OUT_GOAL_UNITS] * unit
        for s in range(substeps):
            data.ctrl[:] = command[first + k - lags[s], axes]
            mujoco.mj_step(robot, data)
        if not np.all(np.isfinite(data.qpos)) or np.abs(data.qpos).max() > DIVERGED_RAD:
            done = k + 1
            break
    gear = robot.actuator_gear[:, 0]
    torque = force * gear if position else command[first : first + count] * gear
    return Replay(
        name,
        log.metadata.get("trajectory", str(log.path)),
        np.arange(count) * period,
        angle,
        torque,
        measured_angle,
        measured_torque,
        done,
        ts,
    )


def replay_models(mjcfs: dict[str, Path], log: RawLog, **options) -> dict[str, Replay]:
    """The same recording replayed on each named MJCF, in the order given."""
    return {name: replay(path, log, name, **options) for name, path in mjcfs.items()}


# ----------------------------------------------------------------------------- the three models

MODELS = ("identified", "prior", "twin")  # the rows of a replay table, in order


def truth_standard(key: str) -> ParameterSet:
    """The twin's truth of a shipped arm (its standard parameters, true torque)."""
    if key == CRANE_X7:
        return load_truth(TWIN_TRUTH_CSV)
    return truth_parameters(key)


def prior_standard(arm: ArmDescription | None, identified: ParameterSet) -> ParameterSet:
    """The description's prior as a standard vector: its link inertials, and no rotor inertia or
    friction on the arm joints (the descriptions publish none). A gripper axis is a rotor alone,
    with no inertia to simulate in the description, so it keeps the identified model's terms."""
    terms = consistent.arm_terms(arm)
    values, _ = terms.prior()
    gripper = N_AXES if terms.crane_x7 else (arm.n_axes if arm.gripper is not None else None)
    kept = {f"{kind}{gripper}": value for kind in consistent.DRIVE_KINDS for value in [0.0]}
    kept = {n: identified[n] for n in kept} if gripper is not None else {}
    names = terms.names
    return ParameterSet(names, np.array([values.get(n, kept.get(n, 0.0)) for n in names]))


def model_files(
    key: str,
    accepted: ParameterSet,
    directory,
    identified: ParameterSet | None = None,
    twin: bool = True,
    drive_mode: str | None = None,
) -> dict[str, Path]:
    """Write the MJCFs a replay compares, as `crane-id export --nearest` writes them: the
    accepted base model's nearest consistent link-level model (or `identified`, its standard
    vector when already reconstructed), the description's prior and (with `twin`) the twin's
    truth. `key`: a shipped arm's key, or the folder of a described arm; `drive_mode`: the
    actuators' mode (a recording's), default the description's."""
    arm = None if key == CRANE_X7 else load_arm(key)
    if arm is not None and drive_mode is not None:
        arm = arm.in_drive_mode(drive_mode)
    if identified is None:
        identified = consistent.reconstruct(accepted, arm=arm).standard
    standards = {"identified": identified, "prior": prior_standard(arm, identified)}
    if twin:
        standards["twin"] = truth_standard(key)
    directory = Path(directory)
    stem = Path(key).name
    paths = {}
    for name, standard in standards.items():
        notes = [f"Replay verification: the {name} model of {stem}."]
        robot = files.exported_robot(standard, arm, notes=notes)
        paths[name] = files.write_text(directory / f"{stem}_{name}.xml", files.mjcf_text(robot))
    return paths


def table_lines(replays: dict[str, Replay]) -> list[str]:
    """The replay table as text lines: per model, the angle (deg) and torque (N·m) RMSE per axis."""
    lines = []
    for name, result in replays.items():
        if result.diverged:
            lines.append(f"  {name:<10} diverged after {result.cycles} cycles")
            continue
        angle = " ".join(f"{v:.3g}" for v in np.degrees(result.angle_rmse))
        torque = " ".join(f"{v:.3g}" for v in result.torque_rmse)
        lines.append(f"  {name:<10} angle [deg] {angle} | torque [N·m] {torque}")
    return lines


# ----------------------------------------------------------------------------- the record

REPLAY_DIR = RESULTS_DIR / "replay"
SEGMENT_S = 5.0  # s of the held-out recording the figure shows, from the motion's start
SEGMENT_STEP = 5  # cycles between the figure's samples


def held_out_log(key: str, directory=None) -> Path:
    """The held-out recording a shipped arm's replay uses: the CRANE-X7's V01 (first execution),
    another arm's PI_BETA block (held out from its PI_ALPHA identification in every profile)."""
    if key == CRANE_X7:
        return recording_path("V01", 1)
    return other_arms.recording_file(key, "PI_BETA", directory)


def segment(replays: dict[str, Replay], log: RawLog) -> dict:
    """The figure's data: SEGMENT_S of the recording from the motion's start, every
    SEGMENT_STEP-th cycle, on the axis with the largest measured torque range there; angles as
    recorded and simulated, torques low-passed as the RMSE compares them."""
    first = next(iter(replays.values()))
    start = int(log.metadata.get("motion_start_sample", 0))
    stop = min(start + int(round(SEGMENT_S / CONTROL_PERIOD_S)), len(first.t))
    window = slice(start, stop, SEGMENT_STEP)
    sections = antialias_sections(first.ts)
    measured = zero_phase_filter(sections, first.measured_torque)
    axis = int(np.argmax(np.ptp(measured[start:stop], axis=0)))
    entry = {
        "axis": axis + 1,
        "t": (first.t[window] - first.t[start]).tolist(),
        "measured_angle": first.measured_angle[window, axis].tolist(),
        "measured_torque": measured[window, axis].tolist(),
    }
    for name, result in replays.items():
        if result.diverged:
            continue
        torque = zero_phase_filter(sections, result.torque)
        entry[f"{name}_angle"] = result.angle[window, axis].tolist()
        entry[f"{name}_torque"] = torque[window, axis].tolist()
    return entry


def record_path(key: str, directory=None) -> Path:
    """Where one shipped arm's replay record lives (its MJCFs beside it)."""
    return Path(directory or REPLAY_DIR) / f"{key}.json"


def model_paths(key: str, directory=None) -> list[Path]:
    """The three MJCFs of one shipped arm's replay (written by `model_files`)."""
    return [Path(directory or REPLAY_DIR) / f"{key}_{name}.xml" for name in MODELS]


def accepted_model(record: dict) -> ParameterSet:
    """The accepted model of an `acceptance.other_arms` record, with its OLS standard errors
    (the nearest consistent model weighs its change by them, as `crane-id export` does)."""
    accepted = record["algorithm1"]["accepted"]
    return ParameterSet(
        accepted["names"], np.array(accepted["parameters"]), np.array(accepted["std_errors"])
    )


def write_replay_record(key: str, directory=None, arms_directory=None) -> Path:
    """One shipped arm's replay record from its `other_arms` record, written atomically."""
    arm_record = read_json_record(other_arms.record_path(key, arms_directory))
    folder = Path(directory or REPLAY_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    record = replay_record(
        key, accepted_model(arm_record), held_out_log(key, arms_directory), folder
    )
    return write_json_record(record_path(key, folder), record)


def read_replay_records(directory=None) -> list[dict]:
    """The replay records of the shipped arms that exist, the CRANE-X7 first."""
    paths = [record_path(key, directory) for key in other_arms.ARM_KEYS]
    return [read_json_record(p) for p in paths if p.is_file()]


def replay_record(key: str, accepted: ParameterSet, log_path, directory) -> dict:
    """One shipped arm's replay: the three MJCFs written to `directory`, the held-out recording
    replayed on each, per-axis errors and the figure's segment."""
    log = read_raw_log(log_path)
    paths = model_files(key, accepted, directory, drive_mode=drive_mode_of(log))
    replays = replay_models(paths, log)
    _, dead_time = file_timing_of(paths["identified"])
    return {
        "arm": key,
        "drive_mode": drive_mode_of(log),
        "held_out": log.metadata.get("trajectory", Path(log_path).stem),
        "recording": portable(log_path),
        "ts": TS,
        "substeps": SUBSTEPS,
        "control_period_s": float(np.median(np.diff(log.t))),
        "dead_time_s": dead_time.tolist(),
        "models": [replays[name].to_dict() for name in MODELS],
        "segment": segment(replays, log),
    }


def file_timing_of(mjcf) -> tuple[float, np.ndarray]:
    """`file_timing` of an MJCF file on disk."""
    import mujoco

    return file_timing(mujoco.MjModel.from_xml_path(str(mjcf)))
