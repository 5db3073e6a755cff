"""The digital twin of the CRANE-X7 (DESIGN §5): a simulated arm that records raw logs.

`record(command_file, seed)` executes a command file on the twin under the realization
controller (2) of `controller.py` and returns the 106-column raw log (Appendix D-C) and its
metadata. The plant differs from the identification model the way the real arm does
(book/register_twin.md has the evidence for every setting):

* full rigid-body dynamics of the seven links from the truth file (products of inertia
  kept; the "full" 65-parameter kernels of `dynamics`), rotor inertias, viscous and exact
  (set-valued) Coulomb friction on the rotor side;
* a lightly damped rotor-link compliance on every arm axis, resonance near 100 Hz;
* load-dependent gear friction on the rotor side of that compliance: the spur gearbox loses
  a share of the torque it transmits, more when driving than when back-driven, so the
  friction (and the stiction band) grows with the load (`load_friction=False` switches it off);
* the drives' 12 V supply: near their no-load speed the winding current cannot follow the
  command (back-EMF), the delivered torque falls to the datasheet torque-speed line while the
  log keeps the commanded current (`voltage_limit=False` switches it off);
* per-axis true torque constants that differ from the logged 1.3-corrected conversion;
* 12-bit link-side encoders, current commands rounded to 2.69 mA and clamped at the
  current limit, a current-loop error, a noisy present-current register;
* a 1 ms host cycle with wake-up jitter and rare late cycles (uneven logged stamps), the
  0.9 ms encoder-read-and-dispatch latency, and the zero-order hold of the command (together
  the ~1.5 ms dead time of Sec. III-B);
* the in-position wait before each next segment (realized motion longer than commanded),
  idle samples at both ends of the log (logging started and stopped by hand);
* run-to-run variation: friction and torque-constant drift, and every per-cycle draw.

Everything random comes from one numpy Generator seeded by the caller: the same seed gives
byte-identical logs, another seed a rerun.

Another arm (`record(..., arm="vx300s" | "so101")`): the same core bound to that arm's kernels
(its sizes come from them), its truth and drive settings by the CRANE-X7's rules
(`truth.truth_parameters(arm)`, `truth.compute_plant_settings`), its realization constants
derived from its description (`truth.realization_constants`), its register unit and current
limits; the log has 2 + 13 n columns for n axes and names the arm in its metadata (raw_log).

Integration: a fixed 0.25 ms step (the step of the paper's CLIE simulation), semi-implicit
(symplectic) Euler for the rigid-body terms, one dynamics evaluation per step, which keeps the
twin fast (a Runge-Kutta step would cost four evaluations for accuracy the 1 ms sensor and
actuator quantization cannot show) and keeps the energy of undamped motion instead of draining
or pumping it (a test checks first-order energy conservation). The drivetrain spring and damper
are integrated implicitly (trapezoidal on the spring): an explicit spring went unstable at the
stiffest coupled wrist modes (up to 0.7 kHz) under saturated commands, and implicit Euler on it
would add a numerical damping ratio of ω·h/2 = 0.08 at 100 Hz; the trapezoidal rule halves that
and stays unconditionally stable. Events between steps are placed exactly: an encoder read
interpolates its step, a command switch enters its step as the exact impulse of the held input.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.constants import (
    CONTROL_PERIOD_S,
    CURRENT_UNIT_A,
    ENCODER_RESOLUTION_RAD,
    N_ARM_JOINTS,
    N_AXES,
)
from crane_lib.errors import InputError
from crane_lib.excitation import commands
from crane_lib.excitation.commands import (
    FINAL_DWELL_S,
    CommandFile,
    plan_segments,
    read_command_file,
)
from crane_lib.logs import raw_log
from crane_lib.model import controller, position_loop, spd_solve
from crane_lib.model.arm_description import ARMS, as_float_matrix
from crane_lib.model.controller import RealizationConstants, load_realization_constants
from crane_lib.model.dynamics import bind_template
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.paths import portable
from crane_lib.twin import effects as twin_effects
from crane_lib.twin import truth as twin_truth
from crane_lib.twin.truth import (
    CRANE_X7,
    TWIN_PLANT_CSV,
    TWIN_TRUTH_CSV,
    PlantSettings,
    compute_plant_settings,
    full_model,
    load_plant_settings,
    load_truth,
    twin_arm,
)

TWIN_VERSION = 1
CORE_TEMPLATE = Path(__file__).with_name(
    "core.py"
)  # the numba loop, bound to the generated kernels by _core()
INTEGRATION_STEP_S = 0.25e-3
RIGID_COULOMB_WIDTH_RAD_S = 0.01  # tanh smoothing, rigid test mode only

# host timing (Sec. III-A/B: 1 ms cycle, jitter, 0.9 ms read + dispatch)
WAKE_LATENCY_MEAN_S = 0.02e-3  # exponential wake-up latency of a non-real-time Linux timer
LATE_CYCLE_PROBABILITY = 1e-3  # occasional preempted cycle ...
LATE_CYCLE_DELAY_S = (0.2e-3, 0.8e-3)  # ... late by this much (uniform)
READ_DISPATCH_LATENCY_S = paper("encoder_read_dispatch_delay").value * 1e-3
READ_DISPATCH_LATENCY_SD_S = 0.03e-3
READ_DISPATCH_LATENCY_RANGE_S = (0.8e-3, 1.0e-3)
BUS_GAP_S = 0.05e-3  # a cycle's read starts after the previous command went out

# noise
CURRENT_LOOP_ERROR_SD_UNITS = 1.0  # actuator current-loop tracking error per cycle (register units)
PRESENT_CURRENT_NOISE_SD_UNITS = 2.0
CURRENT_LOOP_ERROR_SD_A = CURRENT_LOOP_ERROR_SD_UNITS * CURRENT_UNIT_A  # the CRANE-X7's, in A
ENCODER_NOISE_SD_COUNTS = 0.2  # read noise before the 12-bit quantization (count toggling at rest)
PRESENT_CURRENT_NOISE_SD_A = PRESENT_CURRENT_NOISE_SD_UNITS * CURRENT_UNIT_A

# run-to-run variation (temperature, wear) of an unchanged unit
FRICTION_RUN_SD = 0.05  # relative, lognormal
KT_RUN_SD = 0.01  # relative, normal

# the recording around the motion
PREROLL_S = 2.0  # unlogged hold before logging starts (controller settled at the start posture)
IDLE_RANGE_S = (3.0, 10.0)  # logged idle before and after the motion, each drawn uniformly
IN_POSITION_TOLERANCE_RAD = math.radians(0.5)
IN_POSITION_TIMEOUT_S = 2.0


def twin_log_bytes_bound() -> int:
    """Most memory the samples of one twin recording can take for any command file the reader
    accepts: both idle stretches at their longest, the longest commanded motion, and an
    in-position timeout on every row (commands.MAX_* bounds), at 1 ms, 106 float64 columns."""
    seconds = (
        2 * IDLE_RANGE_S[1]
        + commands.MAX_COMMANDED_DURATION_S
        + commands.MAX_WAYPOINTS * IN_POSITION_TIMEOUT_S
    )
    return int(round(seconds / CONTROL_PERIOD_S)) * raw_log.N_COLUMNS * 8


# ---------------------------------------------------------------- the compiled core


@lru_cache(maxsize=4)
def _core(arm: str = CRANE_X7):
    """The twin's numba core bound to the generated kernels of `arm`'s "full" set (cached on
    disk); its sizes (N_ARM, N_AX, the state layout) are the arm's."""
    if arm == CRANE_X7:
        return bind_template(CORE_TEMPLATE, "full", controller, spd_solve, position_loop)
    return bind_template(
        CORE_TEMPLATE, "full", controller, spd_solve, position_loop, arm=twin_arm(arm)
    )


def plant_core(arm: str = CRANE_X7):
    """The compiled core for code that steps the plant itself (the hardware emulator): the state
    layout of `initial_state` (XQ, XV, XQM, XVM) and `run_steps` (see `integrate`)."""
    return _core(arm)


def command_format(arm: str):
    """The command-file format of `arm` (its header constants, excitation.arms.block_design)."""
    from crane_lib.excitation.arms import block_design  # loads sympy: only for other arms

    return block_design(twin_arm(arm)).command_format


def source_fingerprint() -> str:
    """Hash of every source file that shapes a recording (for content-addressed caching)."""
    return fingerprint.source_digest(
        __file__,
        CORE_TEMPLATE,
        twin_truth,
        twin_effects,
        controller,
        spd_solve,
        commands,
        raw_log,
        position_loop,
    )


# ---------------------------------------------------------------- plant description


class PlantNotPositiveDefinite(RuntimeError):
    """The plant's inertia matrix stopped being positive definite: the truth is not physical."""


class SimulationDiverged(RuntimeError):
    """The twin's state became non-finite (a truth or drive setting the integrator cannot
    follow)."""


@dataclass
class Plant:
    """Arrays the core needs for one execution (one unit, one run). Per-axis arrays have the
    arm's axis count, per-joint ones (stiffness, damping, gear loss, backlash) its joint count;
    the defaults below are the CRANE-X7's sizes (build_plant sizes every array from the arm)."""

    beta_link: np.ndarray  # "full" base parameters of the links alone (IA, FV, FS set to 0)
    ia: np.ndarray
    fv: np.ndarray
    fs: np.ndarray
    kt_true: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    offsets: np.ndarray
    gravity_z: float
    compliant: bool = True
    free: np.ndarray = field(default_factory=lambda: np.ones(N_AXES))
    standard: dict | None = None  # the 94 standard parameters it was built from (for energy checks)
    step: float = INTEGRATION_STEP_S
    # load-dependent gear friction of the arm axes: row 0 = 1/η_driving - 1, row 1 = 1 -
    # η_backdriven
    gear_loss: np.ndarray = field(default_factory=lambda: np.zeros((2, N_ARM_JOINTS)))
    load_friction: bool = (
        True  # False: the core skips the term altogether (the plant before it existed)
    )
    # supply-voltage limit: per axis stall current (A) and no-load speed (rad/s, link side) at the
    # supply voltage
    stall_current: np.ndarray = field(default_factory=lambda: np.full(N_AXES, np.inf))
    no_load_speed: np.ndarray = field(default_factory=lambda: np.full(N_AXES, np.inf))
    # False: the core delivers the commanded torque at any speed (the plant before the limit
    # existed)
    voltage_limit: bool = True
    # effects the nonideality study added (twin/effects.py), at values that leave the plant as it
    # was before them
    encoder_quantization: bool = (
        True  # False: the encoder reports the (noisy) angle without rounding to counts
    )
    backlash_half_gap: np.ndarray = field(
        default_factory=lambda: np.zeros(N_ARM_JOINTS)
    )  # rad, half the play per arm axis
    encoder_error: np.ndarray = field(
        default_factory=lambda: np.zeros((4, N_AXES))
    )  # a1, φ1, a2, φ2 per axis (core E_* rows)
    arm: str = CRANE_X7  # the arm key (arm_description.ARMS) or folder: which core steps this plant

    def scalars(self) -> np.ndarray:
        """The plant's scalar settings as the compiled loop takes them."""
        return np.array(
            [
                self.step,
                self.gravity_z,
                1.0 if self.compliant else 0.0,
                RIGID_COULOMB_WIDTH_RAD_S,
                ENCODER_RESOLUTION_RAD,
                twin_arm(self.arm).actuators[0].current_unit,
                1.0 if self.load_friction else 0.0,
                1.0 if self.voltage_limit else 0.0,
                1.0 if self.encoder_quantization else 0.0,
                1.0 if np.any(self.encoder_error[0::2] != 0.0) else 0.0,
                1.0 if (self.compliant and np.any(self.backlash_half_gap > 0.0)) else 0.0,
            ]
        )

    def drive(self) -> np.ndarray:
        """(3, n_joints) rows of twin_core's `gear`: the two gear-loss coefficients, the backlash
        half gap."""
        return np.ascontiguousarray(
            np.vstack([self.gear_loss, self.backlash_half_gap]).astype(float)
        )

    def motor(self) -> np.ndarray:
        """(3, n_axes) rows of twin_core's `motor`: this run's true Kt, stall current, no-load
        speed."""
        return np.ascontiguousarray(
            np.vstack([self.kt_true, self.stall_current, self.no_load_speed]).astype(float)
        )

    def step_arguments(self) -> tuple:
        """The arguments of the core's run_steps after (n_steps, x, torque): the plant alone, no
        sensors."""
        return (
            self.scalars(),
            self.offsets,
            self.beta_link,
            self.ia,
            self.fv,
            self.fs,
            self.stiffness,
            self.damping,
            self.drive(),
            self.motor(),
            self.free,
        )

    def core_arguments(self) -> tuple:
        """The plant's arguments as the compiled loop takes them."""
        return (
            self.scalars(),
            self.offsets,
            self.beta_link,
            self.ia,
            self.fv,
            self.fs,
            self.stiffness,
            self.damping,
            self.drive(),
            self.motor(),
            self.kt_true,
            self.free,
            np.ascontiguousarray(self.encoder_error, dtype=float),
        )


def read_arm_command(path, arm: str = CRANE_X7) -> CommandFile:
    """The command file at `path`, read in the format of `arm`'s command files."""
    if arm == CRANE_X7:
        return read_command_file(path)
    return read_command_file(path, command_format(arm))


def arm_constants(arm: str = CRANE_X7) -> RealizationConstants:
    """The realization constants of `arm`: the CRANE-X7's file, another arm's from its twin."""
    if arm == CRANE_X7:
        return load_realization_constants()
    return twin_truth.realization_constants(arm)


def _plant_settings(truth_set: ParameterSet, arm: str, default_truth: bool) -> PlantSettings:
    """The drive settings of the twin: the CRANE-X7's file for its default truth, else computed
    for the truth (same rules)."""
    if arm == CRANE_X7 and default_truth:
        return load_plant_settings(TWIN_PLANT_CSV)
    return compute_plant_settings(truth_set, arm)


def default_plant(arm: str = CRANE_X7) -> Plant:
    """The arm's twin plant from its default truth and drive settings (before the run-to-run
    draw), as `record` builds it without `truth` or `plant_settings`."""
    truth_set, _ = _as_truth(None, arm)
    return build_plant(truth_set, _plant_settings(truth_set, arm, True), arm)


def _as_truth(truth, arm: str = CRANE_X7) -> tuple[ParameterSet, str]:
    if truth is None:
        if arm == CRANE_X7:
            return load_truth(TWIN_TRUTH_CSV), portable(TWIN_TRUTH_CSV)
        shown = arm if arm in ARMS else portable(arm)  # a folder arm: its own truth
        return twin_truth.truth_parameters(arm), f"crane_lib.twin.truth.truth_parameters({shown!r})"
    if isinstance(truth, ParameterSet):
        return truth, "<in memory>"
    return load_truth(truth, arm), portable(truth)


def gear_loss_coefficients(settings: PlantSettings) -> np.ndarray:
    """(2, n_joints): 1/η_driving - 1 and 1 - η_backdriven of the arm axes (both 0 at η = 1)."""
    driving = np.asarray(settings.efficiency_driving, dtype=float)
    backdriven = np.asarray(settings.efficiency_backdriven, dtype=float)
    return np.ascontiguousarray(np.vstack([1.0 / driving - 1.0, 1.0 - backdriven]))


def build_plant(truth: ParameterSet, settings: PlantSettings, arm: str = CRANE_X7) -> Plant:
    """The core's arrays for `arm`'s twin with these standard parameters and drive settings."""
    full = full_model(arm)
    description = twin_arm(arm)
    n_axes, n_joints = description.n_axes, description.n_joints
    link_only = truth.as_dict()
    for axis in range(1, n_axes + 1):
        for kind in ("IA", "FV", "FS"):
            link_only[f"{kind}{axis}"] = 0.0
    beta_link = full.base_from_standard(link_only).values

    def pick(kind: str) -> np.ndarray:
        return np.array([truth[f"{kind}{axis}"] for axis in range(1, n_axes + 1)])

    return Plant(
        beta_link=np.ascontiguousarray(beta_link),
        ia=pick("IA"),
        fv=pick("FV"),
        fs=pick("FS"),
        kt_true=np.array(settings.kt_true, dtype=float),
        stiffness=np.array(settings.stiffness, dtype=float),
        damping=np.array(settings.damping, dtype=float),
        offsets=np.array(full._offsets, dtype=float),
        gravity_z=full.gravity_z,
        standard=truth.as_dict(),
        gear_loss=gear_loss_coefficients(settings),
        stall_current=np.array(settings.stall_current, dtype=float),
        no_load_speed=np.array(settings.no_load_speed, dtype=float),
        free=np.ones(n_axes),
        backlash_half_gap=np.zeros(n_joints),
        encoder_error=np.zeros((4, n_axes)),
        arm=arm,
    )


def run_to_run(plant: Plant, rng: np.random.Generator, scale: float = 1.0) -> Plant:
    """This execution's drift of friction and torque constants (an unchanged unit, another day).

    The gear efficiencies do not drift (a property of the tooth geometry and the grease, kept
    fixed so that the no-load friction draw is the one run-to-run friction change). `scale`
    multiplies both spreads (the effect "run_drift"); the draws are the same at any scale."""
    n_axes = len(plant.ia)
    friction = np.exp((FRICTION_RUN_SD * scale) * rng.normal(size=n_axes))
    kt = 1.0 + (KT_RUN_SD * scale) * rng.normal(size=n_axes)
    return dataclasses.replace(
        plant,
        fv=plant.fv * friction,
        fs=plant.fs * friction,
        kt_true=plant.kt_true * kt,
        free=plant.free.copy(),
    )


def timing_array(latency_s: float = READ_DISPATCH_LATENCY_S, jitter: float = 1.0) -> np.ndarray:
    """The core's timing settings. `latency_s`: mean read-to-command latency (its admitted band
    moves
    with it, never below 0); `jitter`: scale of the wake-up latency, the late-cycle probability and
    the latency spread (0: a perfectly periodic host). The defaults are the twin's own settings."""
    shift = latency_s - READ_DISPATCH_LATENCY_S
    low, high = READ_DISPATCH_LATENCY_RANGE_S
    return np.array(
        [
            CONTROL_PERIOD_S,
            jitter * WAKE_LATENCY_MEAN_S,
            min(1.0, jitter * LATE_CYCLE_PROBABILITY),
            *LATE_CYCLE_DELAY_S,
            latency_s,
            jitter * READ_DISPATCH_LATENCY_SD_S,
            max(0.0, low + shift),
            max(0.0, high + shift),
            BUS_GAP_S,
        ]
    )


def noise_array(scale: float = 1.0, current_unit: float = CURRENT_UNIT_A) -> np.ndarray:
    """The core's noise settings: current-loop error (A), encoder read noise (counts) and
    present-current noise (A); the currents are whole register units of `current_unit`."""
    return scale * np.array(
        [
            CURRENT_LOOP_ERROR_SD_UNITS * current_unit,
            ENCODER_NOISE_SD_COUNTS,
            PRESENT_CURRENT_NOISE_SD_UNITS * current_unit,
        ]
    )


def initial_state(q0: np.ndarray, arm: str = CRANE_X7) -> np.ndarray:
    """The core's state at rest at the axis angles q0 (rotors aligned with their links)."""
    core = _core(arm)
    x = np.zeros(core.X_SIZE)
    x[core.XQ : core.XQ + core.N_AX] = q0
    x[core.XQM : core.XQM + core.N_ARM] = q0[: core.N_ARM]
    return x


# ---------------------------------------------------------------- references


@dataclass(frozen=True)
class SegmentProfiles:
    """Per-segment reference samples at the 1 ms cycle, from the segment's own start."""

    start: np.ndarray  # (n_seg, n_axes)
    delta: np.ndarray  # (n_seg, n_axes)
    offset: np.ndarray  # (n_seg,) first sample of each segment in the profile arrays
    count: np.ndarray  # (n_seg,) samples of each segment (0 for a row without displacement)
    s: np.ndarray  # (samples, n_axes) per-axis normalized profiles (commands.segment_unit_profiles)
    sd: np.ndarray
    sdd: np.ndarray


def segment_profiles(cmd: CommandFile, period: float = CONTROL_PERIOD_S) -> SegmentProfiles:
    """The per-axis 4-1-4 profiles of every segment (commands.segment_unit_profiles), sampled from
    the segment's start.

    On the arm a segment starts when the previous one is in position, so the samples are
    taken on each segment's own clock, not on the commanded global grid.
    """
    plans = plan_segments(cmd)
    starts, deltas, offsets, counts, s_parts, sd_parts, sdd_parts = [], [], [], [], [], [], []
    total = 0
    for plan in plans:
        starts.append(plan.start)
        deltas.append(plan.target - plan.start)
        offsets.append(total)
        if plan.duration > 0.0:
            tau = np.arange(int(math.floor(plan.duration / period + 1e-9)) + 1) * period
            s, sd, sdd = commands.segment_unit_profiles(plan, tau)
            s_parts.append(s)
            sd_parts.append(sd)
            sdd_parts.append(sdd)
            counts.append(len(tau))
            total += len(tau)
        else:
            counts.append(0)
    n_axes = cmd.command_format.n_axes
    cat = lambda parts: np.concatenate(parts) if parts else np.zeros((1, n_axes))  # noqa: E731
    return SegmentProfiles(
        np.array(starts),
        np.array(deltas),
        np.array(offsets, dtype=np.int64),
        np.array(counts, dtype=np.int64),
        cat(s_parts),
        cat(sd_parts),
        cat(sdd_parts),
    )


def _log_columns(n_axes: int = N_AXES) -> np.ndarray:
    """The core's `cols`: the first column of t, of every per-axis group and of the segment."""
    groups = [
        "theta_logged",
        "dtheta",
        "theta_ref",
        "dtheta_ref",
        "ddtheta_ref",
        "position_error",
        "current_command",
        "u_feedforward",
        "u_feedback",
        "current_present",
        "position_ticks",
        "goal_current_units",
        "clamped",
    ]
    column = raw_log.column_index(n_axes)
    starts = [raw_log.group(g, n_axes).start for g in groups]
    return np.array([column["t"], *starts, column["segment"]], dtype=np.int64)


# ---------------------------------------------------------------- recording


@dataclass
class Recording:
    samples: np.ndarray  # (n, 106)
    metadata: dict[str, str]


def record(
    command_file,
    seed: int,
    truth=None,
    constants: RealizationConstants | None = None,
    plant_settings: PlantSettings | None = None,
    progress=None,
    chunk_rows: int = 20000,
    compliant: bool = True,
    noise_scale: float = 1.0,
    load_friction: bool = True,
    voltage_limit: bool = True,
    effects: twin_effects.TwinEffects | None = None,
    arm: str = CRANE_X7,
    drive_mode: str | None = None,
) -> tuple[np.ndarray, dict[str, str]]:
    """Execute `command_file` (a path or a CommandFile) on the twin; return (samples, metadata).

    `arm`: the arm key (arm_description.ARMS) of the twin, or a folder of an arm with a shipped
    arm's kinematics (its own inertials, actuators and gains; the log names the shipped arm);
    another arm than the CRANE-X7 reads a command file path with its own format, takes its truth
    from `truth.truth_parameters(arm)` and its realization constants from
    `truth.realization_constants(arm)`, and logs its own axis count (raw_log.n_columns).

    `truth`: a truth parameter file or ParameterSet (default data/twin_truth.csv); a custom
    truth gets drive settings computed for it (same torque-constant draw). `progress`: an
    optional callable receiving the number of rows logged so far after every chunk.
    `load_friction=False` leaves the load-dependent gear friction out of the core's step
    (the plant as it was before that term existed; equal to efficiencies of 1, bit for bit).
    `voltage_limit=False` lets every drive deliver the commanded current at any speed (the
    plant before the supply-voltage limit existed; equal to an unbounded supply, bit for bit).
    `effects`: a twin profile (twin/effects.py) that switches or scales the nonidealities and adds
    the candidate ones; None and `effects.profile("default")` are today's twin, byte for byte. It
    acts on top of the switches above (an effect a keyword already removed stays removed).
    `drive_mode`: "current" (controller (2) on the host) or "position" (the servos' own loop,
    `model.position_loop`; goal positions in, present current logged: `run_position_loop`);
    None: the arm description's own mode (the CRANE-X7's and the ViperX's current, the
    SO-101's position).
    """
    if isinstance(command_file, CommandFile):
        cmd, command_name, command_sha = (
            command_file,
            command_file.name,
            command_file.sha256 or "<in memory>",
        )
    else:
        path = Path(command_file)
        cmd = read_arm_command(path, arm)
        command_name, command_sha = (
            portable(path),
            cmd.sha256,
        )  # the digest of the bytes that were parsed
    description = twin_arm(arm)
    mode = description.drive_mode if drive_mode is None else drive_mode
    position_mode = description.in_drive_mode(mode).drive_mode == "position"
    if cmd.command_format.n_axes != description.n_axes:
        raise InputError(
            command_name,
            f"a command file of {cmd.command_format.n_axes} axes",
            f"one of {description.name}'s {description.n_axes} axes",
        )
    truth_set, truth_name = _as_truth(truth, arm)
    if plant_settings is None:
        plant_settings = _plant_settings(truth_set, arm, truth is None)
    constants = arm_constants(arm) if constants is None else constants
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("seed", f"{seed!r}", "a non-negative integer")

    chosen = None
    if effects is not None:
        chosen = twin_effects.realization(effects, truth_set, plant_settings, arm)
    if chosen is not None:
        truth_set, plant_settings = chosen.truth, chosen.settings
        compliant, load_friction, voltage_limit = (
            compliant and chosen.compliant,
            load_friction and chosen.load_friction,
            voltage_limit and chosen.voltage_limit,
        )

    core = _core(arm)
    rng = np.random.default_rng(int(seed))
    plant = build_plant(truth_set, plant_settings, arm)
    plant.compliant = compliant
    plant.load_friction = load_friction
    plant.voltage_limit = voltage_limit
    noise = noise_array(noise_scale, description.actuators[0].current_unit)
    timing, law = timing_array(), constants.law_arguments()
    if chosen is not None:
        plant.encoder_quantization = chosen.encoder_quantization
        plant.backlash_half_gap = chosen.backlash_half_gap
        plant.encoder_error = chosen.encoder_error
        timing, noise = timing_array(chosen.latency_s, chosen.jitter), noise_scale * chosen.noise
        if (
            not chosen.current_quantization
        ):  # the register unit made 2^20 times finer: no rounding to speak of
            law = law[:6] + (
                law[6] / twin_effects.CURRENT_UNQUANTIZED_DIVISOR,
                law[7] * int(twin_effects.CURRENT_UNQUANTIZED_DIVISOR),
            )
    plant = run_to_run(plant, rng, 1.0 if chosen is None else chosen.run_drift)
    lead_s = float(rng.uniform(*IDLE_RANGE_S))
    tail_s = float(rng.uniform(*IDLE_RANGE_S))
    period = CONTROL_PERIOD_S
    cycles = lambda seconds: int(round(seconds / period))  # noqa: E731

    profiles = segment_profiles(cmd, period)
    start = cmd.start.copy()
    x = initial_state(start, arm)
    si = np.zeros(core.SI_SIZE, dtype=np.int64)
    si[core.S_PHASE] = core.PH_PREROLL
    si[core.S_LEFT] = cycles(PREROLL_S)
    sf = np.zeros(core.SF_SIZE)
    sf[core.F_SWITCH] = -1.0
    sf[core.F_LAST_APPLY] = -1.0
    n_axes = description.n_axes
    torque_old = np.zeros(n_axes)
    torque_new = np.zeros(n_axes)
    theta_previous = np.zeros(n_axes)
    integral = np.zeros(n_axes)
    tolerance = np.full(n_axes, IN_POSITION_TOLERANCE_RAD)
    cols = _log_columns(n_axes)

    chunks = []
    if position_mode:
        plant.voltage_limit = False  # the duty's torque-speed line is the supply (position_loop)
        loop = position_loop_arguments(description, x, start, core)
    while si[core.S_PHASE] != core.PH_DONE:
        out = np.zeros((chunk_rows, raw_log.n_columns(n_axes)))
        if position_mode:
            rows = core.run_position_loop(
                chunk_rows,
                out,
                x,
                si,
                sf,
                *loop,
                theta_previous,
                *plant.core_arguments(),
                timing,
                noise,
                rng,
                cols,
                profiles.start,
                profiles.delta,
                profiles.offset,
                profiles.count,
                profiles.s,
                profiles.sd,
                profiles.sdd,
                start,
                cycles(PREROLL_S),
                cycles(lead_s),
                cycles(FINAL_DWELL_S),
                cycles(tail_s),
                tolerance,
                MOVING_THRESHOLD_RAD_S,
                cycles(IN_POSITION_TIMEOUT_S),
                float(law[6]),  # the current register's unit and limit (an effect may refine)
                np.asarray(law[7], dtype=np.int64),
            )
            chunks.append(out[:rows])
            if progress is not None:
                progress(int(si[core.S_ROWS]))
            continue
        rows = core.run_closed_loop(
            chunk_rows,
            out,
            x,
            si,
            sf,
            torque_old,
            torque_new,
            theta_previous,
            integral,
            *plant.core_arguments(),
            timing,
            noise,
            rng,
            cols,
            profiles.start,
            profiles.delta,
            profiles.offset,
            profiles.count,
            profiles.s,
            profiles.sd,
            profiles.sdd,
            start,
            cycles(PREROLL_S),
            cycles(lead_s),
            cycles(FINAL_DWELL_S),
            cycles(tail_s),
            tolerance,
            cycles(IN_POSITION_TIMEOUT_S),
            *law,
        )
        chunks.append(out[:rows])
        if progress is not None:
            progress(int(si[core.S_ROWS]))
    samples = np.vstack(chunks)
    if si[core.S_NOT_PD]:
        raise PlantNotPositiveDefinite(
            f"twin recording of {command_name}: the plant's inertia matrix is not positive "
            "definite "
            f"at sample {len(samples)} (truth: {truth_name}); a physical truth has M > 0 everywhere"
        )
    if not np.all(np.isfinite(samples)):
        bad = int(np.argwhere(~np.isfinite(samples))[0, 0])
        raise SimulationDiverged(
            f"twin recording of {command_name}: non-finite value at sample {bad} (the simulation "
            "diverged)"
        )

    t = samples[:, raw_log.column_index(n_axes)["t"]]
    motion_start, motion_end = int(si[core.S_MOTION_START]), int(si[core.S_MOTION_END])
    metadata = {
        "source": f"digital twin v{TWIN_VERSION} (crane_lib.twin.recorder)",
        "trajectory": cmd.name,
        "command_file": command_name,
        "command_sha256": command_sha,
        "seed": str(int(seed)),
        "truth_file": truth_name,
        "twin_sources": source_fingerprint(),
        "controller": f"K_P={constants.k_p:.6g} K_V={constants.k_v:.6g} K_I={constants.k_i:.6g}",
        "realization_M_hat": " ".join(f"{v:.6g}" for v in constants.m_hat),
        "realization_D_hat": " ".join(f"{v:.6g}" for v in constants.d_hat),
        "commanded_duration_s": f"{commands.commanded_duration(cmd):.3f}",
        "realized_motion_s": f"{t[motion_end - 1] - t[motion_start] + period:.3f}",
        "record_duration_s": f"{t[-1] - t[0] + period:.3f}",
        "motion_start_sample": str(motion_start),
        "motion_end_sample": str(motion_end),
        "lead_idle_s": f"{lead_s:.3f}",
        "tail_idle_s": f"{tail_s:.3f}",
        "in_position_wait_s": f"{si[core.S_WAIT_TOTAL] * period:.3f}",
        "in_position_timeouts": str(int(si[core.S_TIMEOUTS])),
        "kt_true_this_run": " ".join(f"{v:.6g}" for v in plant.kt_true),
        "kt_logged": " ".join(f"{v:.6g}" for v in plant_settings.kt_logged),
        "gear_efficiency_driving": " ".join(f"{v:.6g}" for v in plant_settings.efficiency_driving)
        if load_friction
        else "off",
        "gear_efficiency_backdriven": " ".join(
            f"{v:.6g}" for v in plant_settings.efficiency_backdriven
        )
        if load_friction
        else "off",
        "supply_voltage_V": f"{plant_settings.supply_voltage:.6g}" if voltage_limit else "off",
    }
    if effects is not None and not effects.is_default:
        metadata["twin_effects"] = effects.describe()
    if position_mode:
        metadata.update(position_metadata(description.position_loop))
    elif description.drive_mode != "current":  # an arm described in position mode, run in current
        metadata["drive_mode"] = "current"  # (a log without the entry: its arm's own mode)
    if arm != CRANE_X7:  # a log without this entry is a CRANE-X7's (raw_log.layout)
        shipped = twin_truth.log_arm(arm)
        if shipped is None:  # a described arm: its folder's path, fingerprint and layout
            metadata.update(raw_log.folder_arm_metadata(arm))
        else:
            metadata["arm"] = shipped
    return samples, metadata


# The servo's Moving flag: DYNAMIXEL X Moving Threshold(24) default 10 x 0.229 rev/min
MOVING_THRESHOLD_RAD_S = 10 * 0.229 * 2.0 * math.pi / 60.0


def position_loop_arguments(description, x: np.ndarray, start: np.ndarray, core) -> tuple:
    """(servo, loop state, loop gains, ticks per servo period) of `run_position_loop`: every
    servo holding `start` (rounded to counts) from rest at the plant's state `x`."""
    settings = description.position_loop
    servo_steps = round(settings.period / INTEGRATION_STEP_S)
    if servo_steps < 1 or abs(servo_steps * INTEGRATION_STEP_S - settings.period) > 1e-12:
        raise InputError(
            f"{description.source}/arm.toml",
            f"key 'position_loop.period_s' = {settings.period!r}",
            f"a whole number of the twin's {INTEGRATION_STEP_S * 1e3:g} ms steps",
        )
    n_axes = description.n_axes
    goal = np.rint((start + math.pi) / ENCODER_RESOLUTION_RAD) * ENCODER_RESOLUTION_RAD - math.pi
    servo = np.zeros((core.SV_ROWS, n_axes))
    servo[core.SV_GOAL_OLD] = goal
    servo[core.SV_GOAL_NEW] = goal
    state = position_loop.initial_state(goal, x[core.XQ : core.XQ + n_axes])
    return servo, state, settings.gains(n_axes), int(servo_steps)


def position_metadata(settings) -> dict[str, str]:
    """The log's record of the servos' loop (a position-mode log; raw_log column meanings)."""
    return {
        "controller": "none on the host: the servos' own position loop (position_loop)",
        "drive_mode": "position",
        "position_loop": (
            f"{settings.firmware} P={settings.p_gain} I={settings.i_gain} D={settings.d_gain} "
            f"pwm_limit={settings.pwm_limit:.6g} "
            f"profile_velocity={settings.profile_velocity:.6g} rad/s "
            f"profile_acceleration={settings.profile_acceleration:.6g} rad/s^2 "
            f"period={settings.period:.6g} s"
        ),
        "log_columns": (
            "position mode: current_command and current_present hold the present current "
            "(the torque record), goal_current_units its register value, u_feedback the "
            "servo's PWM duty, u_feedforward 0, theta_ref the goal streamed"
        ),
    }


def record_to_file(command_file, out_path, seed: int, truth=None, **kwargs) -> Path:
    """Record and write the raw log atomically (the suffix picks the container, see raw_log)."""
    samples, metadata = record(command_file, seed, truth=truth, **kwargs)
    return raw_log.write_raw_log(out_path, samples, metadata)


def integrate(plant: Plant, x: np.ndarray, torque: np.ndarray, n_steps: int) -> np.ndarray:
    """Advance the state x (in place) by n_steps integration steps under constant motor torques."""
    core = _core(plant.arm)
    ok = core.run_steps(int(n_steps), x, np.asarray(torque, dtype=float), *plant.step_arguments())
    if not ok:
        raise PlantNotPositiveDefinite(
            "twin plant: the inertia matrix is not positive definite at this state"
        )
    return x


def energy(x: np.ndarray, plant: Plant) -> float:
    """Kinetic + gravity potential + spring energy of the twin's state (for checks).

    Kinetic energy uses the dynamics module's M(θ) of the links plus the rotor inertias; the
    potential is -m g·p summed over links, from the arm's joint frames and the first moments.
    """
    core = _core(plant.arm)
    full = full_model(plant.arm)
    n_arm, n_axes = core.N_ARM, core.N_AX
    q = x[core.XQ : core.XQ + n_axes]
    v = x[core.XV : core.XV + n_axes]
    qm = x[core.XQM : core.XQM + n_arm]
    vm = x[core.XVM : core.XVM + n_arm]
    mass = full.inertia_matrix(q[None, :], plant.beta_link)[0]
    kinetic = 0.5 * v @ mass @ v
    if plant.compliant:
        kinetic += 0.5 * np.sum(plant.ia[:n_arm] * vm**2)
        spring = 0.5 * np.sum(plant.stiffness * (qm - q[:n_arm]) ** 2)
    else:
        kinetic += 0.5 * np.sum(plant.ia[:n_arm] * v[:n_arm] ** 2)
        spring = 0.0
    kinetic += 0.5 * np.sum(plant.ia[n_arm:] * v[n_arm:] ** 2)
    return float(kinetic + spring + _potential(q, plant))


def joint_frames(arm: str, q: np.ndarray) -> list[np.ndarray]:
    """4x4 pose of every link frame in frame 0: T_j = T_(j-1) [R_j | p_j] Rz(q_j)."""
    frames, pose = [], np.eye(4)
    for joint, angle in zip(twin_arm(arm).joints, q):
        step = np.eye(4)
        step[:3, :3] = as_float_matrix(joint.rotation)
        step[:3, 3] = [float(t) for t in joint.translation]
        turn = np.eye(4)
        turn[:2, :2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
        pose = pose @ step @ turn
        frames.append(pose)
    return frames


def _potential(q: np.ndarray, plant: Plant) -> float:
    """Gravity potential from the truth's masses and first moments (the arm's joint frames)."""
    standard = plant.standard
    if standard is None:
        raise ValueError("energy() needs plant.standard (the standard parameters)")
    n_arm = twin_arm(plant.arm).n_joints
    frames = joint_frames(plant.arm, q[:n_arm])
    direction = np.array([float(g) for g in twin_arm(plant.arm).gravity_direction])
    gravity = direction * plant.gravity_z  # gz: the signed magnitude along it (dynamics)
    potential = 0.0
    for j, frame in enumerate(frames, start=1):
        first_moment = np.array([standard[f"MX{j}"], standard[f"MY{j}"], standard[f"MZ{j}"]])
        mass = standard[f"M{j}"]
        # U = -g · (m p_O + R ms): the centre of mass times the mass, in frame 0
        potential -= gravity @ (mass * frame[:3, 3] + frame[:3, :3] @ first_moment)
    return float(potential)
