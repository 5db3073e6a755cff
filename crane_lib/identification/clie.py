"""CLIE refinement (paper Sec. IV-C, Fig. 4, Appendix D-F), its fast route, and DIDIM.

CLIE (9): the raw 1 ms record is simulated in closed loop with the same FF+FB controller that
realized it (`controller.realization_law`), driven by the reference the controller executed
(the log's θref, θ̇ref, θ̈ref), on the record's own uneven stamps, from rest at the first
measured angles; the plant is the direct dynamic model of the 39 base parameters, integrated
by the explicit trapezoidal rule (Heun) in steps of at most 0.25 ms; dead time is not
modelled. The residual is the measured controller torque minus the simulated controller
torque, both in the torque-record units of the identification (commanded current x logged
Kt), put on the preprocessing's even 1 ms grid, low-passed by the zero-phase fourth-order
Butterworth of the 40 ms bundle (corner 5.625 Hz, D-F's 5.63 Hz), kept every 40 ms, and
masked where any axis of the measured record reached 0.98 of its clamp (dilated by one
window) — the bundle's own clamp mask. The objective is the sum of squares of that residual
(lsqnonlin's resnorm).

Three routes to refine a start (OLS or SDP estimate):
* `refine_faithful`: scipy least_squares 'trf' with a forward-difference Jacobian (one
  simulation per parameter, as lsqnonlin), bounds x0 ± 100|x0| with ZZR1 and IA3-IA8 >= 0,
  ftol 1e-6, at most 400 iterations;
* `refine_fast`: the same solver, bounds and tolerance, with the DIDIM Jacobian: along the
  simulated trajectory the simulated torque equals W(q_s, q̇_s, q̈_s) beta exactly, so the
  Jacobian of the residual is minus the band-limited, decimated, masked regressor evaluated
  on the simulated trajectory (the trajectory's own sensitivity to beta, which the closed
  loop keeps small inside its bandwidth, is neglected) — one simulation per iteration, and
  the closed loop integrated by one Heun step per 1 ms control cycle instead of four;
* `didim`: the related method (Gautier, Janot, Vandanjon): from a regular initialization
  (the joint-level inertias and viscous terms of the realization layer, everything else
  zero), Gauss-Newton steps that are each an IDIM least-squares on the simulated trajectory.

Another arm (an `arm_description` arm: ViperX 300 S, SO-101): `build_problem` takes the arm from
the raw log, its reduced model (`arm_model`), the controller constants its recorder ran with
(`arm_realization_constants`) and its torque-record Kt; the simulator is bound to that model's
kernels and sized by them (`_core`). The CRANE-X7's choices become rules per parameter name
(bounds, DIDIM's start) that give its sets unchanged.

Every choice is argued in book/register_clie.md.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.signal
import scipy.sparse

from crane_lib import fingerprint, parameter_sets, paths
from crane_lib.constants import KT, KT_CORRECTION
from crane_lib.errors import InputError
from crane_lib.logs import preprocessing
from crane_lib.logs.raw_log import CRANE_X7, RawLog, read_raw_log
from crane_lib.model import controller, spd_solve
from crane_lib.model.controller import RealizationConstants, load_realization_constants
from crane_lib.model.dynamics import DynamicModel, bind_template, is_crane_x7
from crane_lib.model.dynamics import model as dynamic_model
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.records import read_json_records, write_json_record

INTEGRATION_STEP_S = paper("clie_integration_step").value * 1e-3
# The fast route integrates each control cycle (1 ms) in one Heun step; only a gap longer than
# two periods is split (the twin's longest cycle is 1.8 ms). Its objective and solution stay
# within 0.1 % and 0.1 OLS standard error of the 0.25 ms route's (register_clie.md).
FAST_INTEGRATION_STEP_S = 2e-3
# A cycle whose Heun error estimate h/2 |a2 - a1| exceeds this is integrated again at 0.25 ms:
# stiff stretches (a start with a light, strongly damped axis) and Coulomb sign changes.
FAST_ERROR_TOLERANCE = 1e-4  # rad/s
# The largest relative difference, at the fast route's solution, between its objective and the
# objective integrated at 0.25 ms; beyond it the refinement runs again at 0.25 ms.
FAST_STEP_OBJECTIVE_TOLERANCE = 1e-3
RESIDUAL_INTERVAL_S = paper("clie_residual_decimation").value * 1e-3
FUNCTION_TOLERANCE = paper("lsqnonlin_function_tolerance").value
MAX_ITERATIONS = int(paper("lsqnonlin_max_iterations").value)
MAX_FEVALS_PER_VARIABLE = int(paper("max_fevals_multiplier").value)
BOUND_MULTIPLIER = paper("param_bound_multiplier").value
# lsqnonlin's defaults for the tolerances D-F leaves at default (StepTolerance, OptimalityTolerance)
STEP_TOLERANCE = 1e-6
OPTIMALITY_TOLERANCE = 1e-6
# sqrt(machine epsilon): the forward-difference step of lsqnonlin (FiniteDifferenceStepSize,
# TypicalX = 1) and of scipy's '2-point': h_j = sqrt(eps) max(1, |x_j|)
FD_RELATIVE_STEP = math.sqrt(np.finfo(float).eps)
NONNEGATIVE_PARAMETERS = ("ZZR1", "IA3", "IA4", "IA5", "IA6", "IA7", "IA8")  # the CRANE-X7's


def is_nonnegative(name: str) -> bool:
    """D-F's lower bound 0: ZZR1 and every rotor inertia IAj that is a base parameter on its own
    (the CRANE-X7: NONNEGATIVE_PARAMETERS; any arm by the same rule, register_clie.md)."""
    return name == "ZZR1" or re.fullmatch(r"IA[0-9]+", name) is not None


# The simulated controller rounds the command to 1 pA instead of the 2.69 mA register unit:
# the register rounding makes the simulated torque piecewise constant in beta, so a
# forward-difference step of 1e-8 would see no change at all (register_clie.md). The current
# limit stays the actuator's.
SIMULATED_CURRENT_RESOLUTION_A = 1e-12
# A simulated joint faster than this has left the physical range (the fastest commanded speed
# is 274.8 deg/s = 4.8 rad/s): the simulation is declared diverged.
DIVERGED_SPEED_RAD_S = 50.0
# Residual entry returned for a diverged simulation: infinite, which scipy's trf (like
# lsqnonlin) answers by rejecting the trial step and shrinking the trust region.
DIVERGED_RESIDUAL = np.inf
# clie_core's divergence codes, in words
DIVERGENCE_REASONS = {
    1: "a state is not finite",
    2: f"a joint exceeded {DIVERGED_SPEED_RAD_S:g} rad/s",
    3: "M(theta; beta) is not positive definite at a simulated configuration",
}


class CLIEError(RuntimeError):
    """CLIE cannot run: the start does not simulate, or the record is unusable."""


# ---------------------------------------------------------------- the compiled core


def _core(model: DynamicModel | None = None):
    """clie_core.py bound to the generated kernels of `model`'s set and arm (None: the CRANE-X7's
    reduced set); its sizes (N_ARM, N_AX) are that arm's. Cached on disk and per process."""
    model = dynamic_model("reduced") if model is None else model
    name = model._module.__name__  # one kernel module per set and arm
    if name not in _CORES:
        if model._chain and is_crane_x7(model.arm):  # bind_template would bind the MDH kernels
            raise ValueError("CLIE simulates the CRANE-X7 with its MDH kernels, not general=True")
        arm = None if is_crane_x7(model.arm) else model.arm
        _CORES[name] = bind_template(
            Path(__file__).with_name("clie_core.py"),
            model.parameter_set,
            controller,
            spd_solve,
            arm=arm,
        )
    return _CORES[name]


_CORES: dict[str, object] = {}


# ---------------------------------------------------------------- bounds


def clie_bounds(names: list[str], x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """D-F: [x0 - 100|x0|, x0 + 100|x0|], lower bound raised to 0 for ZZR1 and IA3-IA8
    (another arm: ZZR1 and its base IAj, `is_nonnegative`).

    A start value of exactly zero would pin its parameter (both bounds equal x0); scipy
    needs lb < ub, so such a parameter gets the width of the smallest nonzero |x0| instead.
    """
    x0 = np.asarray(x0, dtype=float)
    width = BOUND_MULTIPLIER * np.abs(x0)
    if np.any(width == 0):
        smallest = np.min(np.abs(x0[x0 != 0])) if np.any(x0 != 0) else 1.0
        width = np.where(width == 0, BOUND_MULTIPLIER * smallest, width)
    lower = x0 - width
    upper = x0 + width
    for i, name in enumerate(names):
        if is_nonnegative(name):
            lower[i] = max(lower[i], 0.0)
    return lower, upper


# ---------------------------------------------------------------- the problem of one record


@dataclass
class Simulation:
    code: int  # clie_core.SIM_OK or the reason it diverged
    cycles: int  # cycles completed
    tau: np.ndarray  # (n, n_axes) simulated controller torque, record units (N·m)
    q: np.ndarray  # (n, n_axes) simulated state at each stamp (rad, rad/s, rad/s^2)
    v: np.ndarray
    a: np.ndarray
    refined_cycles: int = 0  # cycles integrated again at 0.25 ms (error estimate too large)

    @property
    def ok(self) -> bool:
        """Whether the simulation ran to the end without diverging."""
        return self.code == 0


@dataclass
class CLIEProblem:
    """Everything CLIE needs from one raw log; `residual(beta)` is the function of (9).

    Per-axis arrays have the model's arm's n_axes columns (the CRANE-X7: 8)."""

    names: list[str]
    t: np.ndarray  # (n,) raw stamps (s)
    theta_ref: np.ndarray  # (n, n_axes)
    dtheta_ref: np.ndarray
    ddtheta_ref: np.ndarray
    theta_start: np.ndarray  # (n_axes,) first measured angles
    integral_start: np.ndarray  # (n_axes,) controller integral state reproducing the first command
    interpolation: scipy.sparse.csr_matrix  # (K, n): raw stamps -> even 1 ms grid
    jacobian_interpolation: scipy.sparse.csr_matrix  # (Kc, n): raw stamps -> 5 ms block means
    jacobian_sections: np.ndarray  # the same low-pass designed for the 5 ms grid
    jacobian_keep: np.ndarray  # 5 ms grid indices of the 40 ms samples
    sections: np.ndarray  # residual low-pass (second-order sections, 1 ms grid)
    keep: np.ndarray  # grid indices of the 40 ms samples
    valid: (
        np.ndarray
    )  # (len(keep),) bool: not clamp-masked and clear of the filter's edge transients
    measured: np.ndarray  # (len(keep), n_axes) band-limited measured torque record
    constants: RealizationConstants
    model: DynamicModel
    kt_record: np.ndarray = field(default_factory=lambda: KT.copy())
    max_step: float = INTEGRATION_STEP_S
    error_tolerance: float = math.inf  # a cycle whose error estimate exceeds it: again at 0.25 ms
    source: str = "raw log"

    @property
    def n_axes(self) -> int:
        """Axes of the model's arm: the columns of every per-axis array."""
        return self.model.n_axes

    @property
    def n_residuals(self) -> int:
        """The number of residual entries (valid samples times axes)."""
        return int(self.valid.sum()) * self.n_axes

    def law_arguments(self) -> tuple:
        """The controller's constants as the compiled simulation takes them."""
        c = self.constants
        limit_units = np.rint(
            np.asarray(c.limit_units) * c.current_unit / SIMULATED_CURRENT_RESOLUTION_A
        ).astype(np.int64)
        return (
            c.m_hat,
            c.d_hat,
            float(c.k_p),
            float(c.k_v),
            float(c.k_i),
            np.asarray(c.kt_command, dtype=float),
            SIMULATED_CURRENT_RESOLUTION_A,
            limit_units,
        )

    def clamped_cycles(self, simulation: Simulation) -> np.ndarray:
        """(n, n_axes) bool: the cycles where the simulated current command sits at the
        controller's limit (the clamp of (2)), where the simulated torque is flat in beta."""
        *_, unit, limit_units = self.law_arguments()
        units = np.rint(simulation.tau / (unit * self.kt_record))
        return np.abs(units) >= limit_units

    def velocity_loop_gain(self, beta, poses) -> np.ndarray:
        """(n,) the gain g of (2)'s velocity feedback through the model `beta` at each of `poses`
        ((n, n_axes) rad): `controller.velocity_loop_gain` with M(θ; β) in record units, so the
        plant's torque per commanded torque is S = `record_per_command()`. Past
        `controller.VELOCITY_LOOP_STABLE_BELOW` the simulated loop chatters at its clamps."""
        c = self.constants
        inertia = self.model.inertia_matrix(poses, np.asarray(beta, dtype=float))
        return controller.velocity_loop_gain(
            inertia, c.m_hat, float(c.k_v), self.record_per_command()
        )

    def simulate(self, beta) -> Simulation:
        """Simulate the closed loop under controller (2) with parameters `beta`."""
        beta = np.ascontiguousarray(beta, dtype=float)
        if beta.shape != (len(self.names),):  # the compiled kernels would write out of bounds
            raise InputError(
                "CLIE parameters",
                f"shape {beta.shape}",
                f"({len(self.names)},) in the order {self.names}",
            )
        n = self.t.size
        tau, q, v, a = (np.zeros((n, self.n_axes)) for _ in range(4))
        code, cycles, refined = _core(self.model).simulate(
            self.t,
            self.theta_ref,
            self.dtheta_ref,
            self.ddtheta_ref,
            self.theta_start,
            self.integral_start,
            beta,
            self.model._offsets,
            float(self.model.gravity_z),
            self.kt_record,
            float(self.max_step),
            INTEGRATION_STEP_S,
            float(self.error_tolerance),
            DIVERGED_SPEED_RAD_S,
            *self.law_arguments(),
            tau,
            q,
            v,
            a,
        )
        return Simulation(int(code), int(cycles), tau, q, v, a, int(refined))

    def record_per_command(self):
        """Record torque per commanded torque (the DIDIM start's units): the CRANE-X7's 1.3 of
        Sec. III-A; another arm's kt_record / kt_command per axis."""
        if is_crane_x7(self.model.arm):
            return KT_CORRECTION
        return self.kt_record / np.asarray(self.constants.kt_command, dtype=float)

    def band_limit(self, raw: np.ndarray) -> np.ndarray:
        """Raw-stamp signal (n, c) -> even grid -> zero-phase low-pass -> 40 ms samples (len(keep),
        c)."""
        on_grid = self.interpolation @ raw
        return preprocessing.zero_phase_filter(self.sections, on_grid)[self.keep]

    def residual_of(self, simulation: Simulation) -> np.ndarray:
        """The torque-input error of a simulation: measured minus band-limited simulated torque."""
        if not simulation.ok:
            return np.full(self.n_residuals, DIVERGED_RESIDUAL)
        r = self.measured - self.band_limit(simulation.tau)
        return r[self.valid].ravel()

    def residual(self, beta) -> np.ndarray:
        """The torque-input error (N·m) at parameters `beta`, valid samples only."""
        return self.residual_of(self.simulate(beta))

    def objective(self, beta) -> float:
        """The CLIE objective: the squared norm of the residual (N²·m²)."""
        r = self.residual(beta)
        return float(r @ r)

    def band_limit_for_jacobian(self, raw: np.ndarray) -> np.ndarray:
        """band_limit for the (n, n_axes x p) Jacobian channels, run on 5 ms block means.

        Filtering 312 channels at 1 ms costs seconds per Jacobian; the 5 ms boxcar before the
        same 5.625 Hz Butterworth changes the passband gain by at most 0.13 % (register_clie.md).
        """
        on_grid = self.jacobian_interpolation @ raw
        return preprocessing.zero_phase_filter(self.jacobian_sections, on_grid)[self.jacobian_keep]

    def regressor_along(
        self, simulation: Simulation, first: int = 0, last: int | None = None
    ) -> np.ndarray:
        """W(q_s, q̇_s, q̈_s) of the simulated trajectory's stamps first:last, (n, n_axes, p):
        W beta == simulated torque."""
        q, v, a = (x[first:last] for x in (simulation.q, simulation.v, simulation.a))
        w = np.zeros((q.shape[0], self.n_axes, len(self.names)))
        c, s = self.model._trig(q)
        self.model._module.regressor_batch(c, s, v, a, np.sign(v), float(self.model.gravity_z), w)
        return w

    def didim_jacobian(self, simulation: Simulation) -> np.ndarray:
        """d residual / d beta with the trajectory held: -(band-limited W(q_s, q̇_s, q̈_s)).

        An (m, p) matrix; the same numbers as band_limit_for_jacobian(W) of the whole
        record, computed without holding W: the 5 ms block means of W's entries that are not
        identically zero (a link's parameters act on its own and the preceding axes only) are
        formed stamp by stamp in the compiled core, and only the channels that are not zero all
        along are filtered (a zero channel filters to zeros).
        """
        p, n_axes = len(self.names), self.n_axes
        entries = self.model.regressor_entries
        interpolation = self.jacobian_interpolation
        on_grid = np.empty((interpolation.shape[0], entries.shape[0]))
        c, s = self.model._trig(simulation.q)
        _core(self.model).block_mean_regressor(
            interpolation.indptr,
            interpolation.indices,
            interpolation.data,
            c,
            s,
            simulation.v,
            simulation.a,
            np.sign(simulation.v),
            float(self.model.gravity_z),
            entries[:, 0],
            entries[:, 1],
            np.zeros((n_axes, p)),
            on_grid,
        )
        nonzero = np.any(on_grid != 0.0, axis=0)
        channels = entries[nonzero, 0] * p + entries[nonzero, 1]
        filtered = np.zeros((self.jacobian_keep.size, n_axes * p))
        filtered[:, channels] = preprocessing.zero_phase_filter(
            self.jacobian_sections, on_grid[:, nonzero]
        )[self.jacobian_keep]
        return -filtered.reshape(-1, n_axes, p)[self.valid].reshape(-1, p)


def integral_reproducing_first_command(log: RawLog, constants: RealizationConstants) -> np.ndarray:
    """Integral state with which the simulated controller, at rest at the first measured
    angles, issues the first measured command (the real controller had been holding the arm
    before logging started). realization_law adds e dt before use, hence the last term."""
    u_first = log.current_command[0] * np.asarray(constants.kt_command)  # catalogue-Kt torque
    error = log.theta_ref[0] - log.theta[0]
    dt_first = float(log.t[1] - log.t[0]) if log.n_samples > 1 else 1e-3
    bracket = u_first / constants.m_hat - log.ddtheta_ref[0] - constants.d_hat * log.dtheta_ref[0]
    bracket -= constants.k_v * log.dtheta_ref[0] + constants.k_p * error
    return bracket / constants.k_i - error * dt_first


def grid_interpolation(t_raw: np.ndarray, t_grid: np.ndarray) -> scipy.sparse.csr_matrix:
    """Sparse (K, n) matrix of np.interp from the raw stamps onto the grid (two weights a row)."""
    right = np.clip(np.searchsorted(t_raw, t_grid, side="right"), 1, t_raw.size - 1)
    left = right - 1
    weight = np.clip((t_grid - t_raw[left]) / (t_raw[right] - t_raw[left]), 0.0, 1.0)
    rows = np.repeat(np.arange(t_grid.size), 2)
    cols = np.column_stack([left, right]).ravel()
    vals = np.column_stack([1.0 - weight, weight]).ravel()
    return scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(t_grid.size, t_raw.size))


EDGE_TIME_CONSTANTS = (
    5.0  # settling of the residual filter at the record's ends, in its slowest time constant
)


def filter_edge_guard_s(sections: np.ndarray, period: float) -> float:
    """Time the zero-phase filter's edge transient needs to fall below e^-5: five of its slowest
    pole's time constants. zero_phase_filter pads by 12 samples only (MATLAB's filtfilt), far
    shorter than this filter's memory, so its ends carry transients from the 1 ms ripple of the
    torque record (register_clie.md)."""
    poles = np.concatenate([np.roots(section[3:]) for section in sections])
    slowest = -period / np.log(np.max(np.abs(poles)))
    return EDGE_TIME_CONSTANTS * slowest


JACOBIAN_BLOCK_S = (
    0.005  # block-mean interval of the Jacobian's filtering (see band_limit_for_jacobian)
)


def block_mean_interpolation(
    t_raw: np.ndarray, t_grid: np.ndarray, block: int
) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """(raw stamps -> mean of the `block` 1 ms grid samples centred on every block-th grid point,
    grid indices)."""
    fine = grid_interpolation(t_raw, t_grid)
    centres = np.arange(0, t_grid.size, block)
    half = block // 2
    rows, cols = [], []
    for offset in range(-half, block - half):
        index = np.clip(centres + offset, 0, t_grid.size - 1)
        rows.append(np.arange(centres.size))
        cols.append(index)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    averaging = scipy.sparse.csr_matrix(
        (np.full(rows.size, 1.0 / block), (rows, cols)), shape=(centres.size, t_grid.size)
    )
    return (averaging @ fine).tocsr(), centres


@lru_cache(maxsize=8)
def arm_model(arm: str = CRANE_X7, parameter_set: str = "reduced") -> DynamicModel:
    """The shared model of `parameter_set` for the arm a raw log names (its `arm` key)."""
    if arm == CRANE_X7:
        return dynamic_model(parameter_set)
    from crane_lib.model.arm_description import load_arm  # loads pandas: only for other arms

    return dynamic_model(parameter_set, arm=load_arm(arm))


def arm_realization_constants(arm: str = CRANE_X7) -> RealizationConstants:
    """The realization constants the recorder of `arm` ran its controller with: the CRANE-X7's
    Table XIX; another arm's derived from its twin's description (only its twin records it;
    book/register_clie.md)."""
    if arm == CRANE_X7:
        return load_realization_constants()
    from crane_lib.twin import truth  # only another arm's constants come from its twin

    return truth.realization_constants(arm)


def check_sizes(log: RawLog, model: DynamicModel, constants: RealizationConstants) -> None:
    """Refuse (InputError) a log, model and constants that are not of one arm: the compiled
    simulator is sized by the model's kernels and indexes the others without bounds checks."""
    source = str(log.path) if log.path is not None else "raw log"
    if (log.arm == CRANE_X7) != is_crane_x7(model.arm) or log.n_axes != model.n_axes:
        arm_name = "the CRANE-X7" if is_crane_x7(model.arm) else model.arm.name
        raise InputError(
            source,
            f"a log of {log.arm} ({log.n_axes} axes)",
            f"a log of the model's arm, {arm_name} ({model.n_axes} axes)",
        )
    sizes = {
        "models": len(constants.models),
        "kt_command": np.size(constants.kt_command),
        "limit_units": np.size(constants.limit_units),
    }
    for what, size in sizes.items():
        if size != model.n_axes:
            raise InputError(
                f"realization constants ({what})",
                f"{size} axes",
                f"the model's {model.n_axes} axes",
            )


def build_problem(
    log: RawLog,
    model: DynamicModel | None = None,
    constants: RealizationConstants | None = None,
    max_step: float = INTEGRATION_STEP_S,
    grid: preprocessing.EvenGrid | None = None,
) -> CLIEProblem:
    """The CLIE problem of one raw log. `model`: the base-parameter model of the log's arm
    (default its "reduced" set); `constants`: the controller the log was recorded with
    (default `arm_realization_constants` of the log's arm); `grid`: `to_even_grid(log)` when
    the caller has it already (the gate's preprocessing made it)."""
    model = arm_model(log.arm) if model is None else model
    constants = arm_realization_constants(log.arm) if constants is None else constants
    check_sizes(log, model, constants)
    if log.n_samples < 2:
        raise CLIEError(f"{log.path or 'raw log'}: {log.n_samples} sample(s); CLIE needs a record")
    grid = preprocessing.to_even_grid(log) if grid is None else grid
    step = preprocessing.grid_step(RESIDUAL_INTERVAL_S)
    keep = np.arange(0, grid.t.size, step)
    if keep.size < 2:
        raise CLIEError(
            f"{grid.source}: shorter than two {RESIDUAL_INTERVAL_S * 1e3:g} ms residual samples"
        )
    sections = preprocessing.antialias_sections(RESIDUAL_INTERVAL_S)
    clamp_mask, _ = preprocessing.clamp_masks(grid, grid.t[keep], RESIDUAL_INTERVAL_S)
    guard = filter_edge_guard_s(sections, preprocessing.GRID_PERIOD_S)
    inside = (grid.t[keep] >= grid.t[0] + guard) & (grid.t[keep] <= grid.t[-1] - guard)
    if not inside.any():
        raise CLIEError(
            f"{grid.source}: shorter than the residual filter's two edge guards ({2 * guard:.2f} s)"
        )
    if not (inside & ~clamp_mask).any():  # the objective would be zero for every beta
        raise CLIEError(
            f"{grid.source}: every residual sample inside the edge guards is "
            "clamp-masked (an axis near its current limit in or beside its window); "
            "CLIE has nothing to fit"
        )
    measured = preprocessing.zero_phase_filter(sections, grid.tau)[keep]
    block = preprocessing.grid_step(JACOBIAN_BLOCK_S)
    if step % block:
        raise ValueError(
            f"the {RESIDUAL_INTERVAL_S} s residual interval is not a multiple of the "
            f"{JACOBIAN_BLOCK_S} s Jacobian block"
        )
    jacobian_interpolation, _ = block_mean_interpolation(log.t, grid.t, block)
    # the residual's Butterworth (order and corner of the 40 ms bundle) designed for the 5 ms grid
    jacobian_sections = scipy.signal.butter(
        preprocessing.FILTER_ORDER,
        preprocessing.corner_frequency_hz(RESIDUAL_INTERVAL_S) / (0.5 / JACOBIAN_BLOCK_S),
        output="sos",
    )
    contiguous = lambda x: np.ascontiguousarray(x, dtype=float)  # noqa: E731
    return CLIEProblem(
        names=list(model.names),
        t=contiguous(log.t),
        theta_ref=contiguous(log.theta_ref),
        dtheta_ref=contiguous(log.dtheta_ref),
        ddtheta_ref=contiguous(log.ddtheta_ref),
        theta_start=contiguous(log.theta[0]),
        integral_start=contiguous(integral_reproducing_first_command(log, constants)),
        interpolation=grid_interpolation(log.t, grid.t),
        jacobian_interpolation=jacobian_interpolation,
        jacobian_sections=jacobian_sections,
        jacobian_keep=keep // block,
        sections=sections,
        keep=keep,
        valid=~clamp_mask & inside,
        measured=measured,
        constants=constants,
        model=model,
        kt_record=np.array(log.layout.kt, dtype=float),
        max_step=max_step,
        source=grid.source,
    )


def recording_problem(path) -> CLIEProblem:
    """The CLIE problem of a raw log file, built once per process for the file's bytes.

    D-F's objective is the same at all four identification intervals (the 1 ms record is
    simulated and its residual filtered and decimated alike; the interval enters only through
    the start), so the reference sequence, stamps, band-limited measured torque, clamp mask and
    decimation indices are prepared once per execution and shared by its conditions (the sweep
    runs an execution's conditions in one kernel). Callers must not modify the problem.
    """
    path = Path(path)
    return _problem_of_file(str(path.resolve()), fingerprint.file_digest(path))


@lru_cache(maxsize=1)
def _problem_of_file(path: str, digest: str) -> CLIEProblem:
    return build_problem(read_raw_log(Path(path)))


# ---------------------------------------------------------------- solvers


@dataclass
class RefinementReport:
    """What a refinement did (CLIE faithful or fast, or DIDIM); the CLIE sweep's records, Table VI
    and the cost tables read it. Objectives are sums of squares of the masked, band-limited torque
    residual over all kept samples and axes (lsqnonlin's resnorm), N²·m².

    method                "clie" (finite-difference TRF, D-F), "fast" (DIDIM Jacobian) or "didim"
    names                 the base parameters, in the order of x0 and x
    x0, x                 the start and the end point
    objective_start       objective at x0
    objective_final       objective at x
    iterations            solver iterations (scipy's, or DIDIM's Gauss-Newton steps)
    simulations           every closed-loop simulation run: trial points and Jacobian columns
                          (lsqnonlin's funcCount)
    trial_evaluations     scipy's nfev: residual evaluations at trial points
    jacobian_evaluations  Jacobians formed
    diverged_evaluations  simulations that diverged (residual +inf, the step rejected)
    wall_time_s           wall time of the refinement
    integration_step_s    the longest step of the closed-loop simulation's Heun integration
    objective_final_paper_step  the fast route's objective at x integrated at 0.25 ms (its check;
                          None for a route that integrates at 0.25 ms throughout)
    status, message       the solver's exit code and its reason in words (-2: the iteration cap)
    history               objective after each iteration
    """

    method: str
    names: list[str]
    x0: np.ndarray
    x: np.ndarray
    objective_start: float
    objective_final: float
    iterations: int
    simulations: int
    trial_evaluations: int
    jacobian_evaluations: int
    diverged_evaluations: int
    wall_time_s: float
    status: int
    message: str
    history: list[float] = field(default_factory=list)
    integration_step_s: float = INTEGRATION_STEP_S
    objective_final_paper_step: float | None = None

    def parameters(self) -> ParameterSet:
        """The refined parameters."""
        return ParameterSet(self.names, self.x, meta={"stage": self.method})

    def as_dict(self) -> dict:
        """The refinement as a JSON-ready dict."""
        return {
            "method": self.method,
            "objective_start": self.objective_start,
            "objective_final": self.objective_final,
            "iterations": self.iterations,
            "simulations": self.simulations,
            "trial_evaluations": self.trial_evaluations,
            "jacobian_evaluations": self.jacobian_evaluations,
            "diverged_evaluations": self.diverged_evaluations,
            "wall_time_s": self.wall_time_s,
            "status": self.status,
            "message": self.message,
            "history": list(self.history),
            "x": self.x.tolist(),
            "names": list(self.names),
            "integration_step_s": self.integration_step_s,
            "objective_final_paper_step": self.objective_final_paper_step,
        }


class _Evaluator:
    """Residual evaluations with a one-entry cache (trf asks for the Jacobian at the point it
    has just evaluated) and the counts a report needs."""

    def __init__(self, problem: CLIEProblem):
        self.problem = problem
        self.simulations = 0
        self.diverged = 0
        self._key = None
        self._cached: tuple[Simulation, np.ndarray] | None = None

    def evaluate(self, x) -> tuple[Simulation, np.ndarray]:
        key = np.asarray(x, dtype=float).tobytes()
        if key == self._key and self._cached is not None:
            return self._cached
        simulation = self.problem.simulate(x)
        self.simulations += 1
        if not simulation.ok:
            self.diverged += 1
        residual = self.problem.residual_of(simulation)
        self._key, self._cached = key, (simulation, residual)
        return self._cached

    def residual(self, x) -> np.ndarray:
        return self.evaluate(x)[1]


def _start(evaluator: _Evaluator, x0) -> tuple[np.ndarray, np.ndarray]:
    """The start as an array and its residual, simulated through `evaluator` (whose cache hands
    the same simulation to the solve's first evaluation); CLIEError if it diverges."""
    problem = evaluator.problem
    x0 = np.array(x0.ordered(problem.names) if isinstance(x0, ParameterSet) else x0, dtype=float)
    simulation, r0 = evaluator.evaluate(x0)
    if not np.all(np.isfinite(r0)):
        at = problem.t[min(simulation.cycles, problem.t.size - 1)] - problem.t[0]
        raise CLIEError(
            f"{problem.source}: the closed-loop simulation from the start point diverges at t = "
            f"{at:.2f} s "
            f"of {problem.t[-1] - problem.t[0]:.1f} s "
            f"({DIVERGENCE_REASONS.get(simulation.code, 'code %d' % simulation.code)}); "
            "CLIE needs a start (OLS or SDP estimate) whose simulation stays bounded"
        )
    return x0, r0


def solve_trf(
    problem,
    x0,
    jacobian,
    evaluator,
    method,
    max_iterations,
    ftol,
    started,
    xtol: float = STEP_TOLERANCE,
    gtol: float = OPTIMALITY_TOLERANCE,
) -> RefinementReport:
    """CLIE's bounded trust-region-reflective solve of min |r(x)|² from x0 with `jacobian`, its
    stopping rule (ftol, xtol, gtol), iteration cap and divergence handling, as a report."""
    lower, upper = clie_bounds(problem.names, x0)
    x0 = np.clip(x0, lower, upper)
    history: list[float] = []
    iterations = [0]

    def callback(intermediate_result):  # this name makes scipy pass the OptimizeResult
        iterations[0] = int(intermediate_result.nit)
        history.append(2.0 * float(intermediate_result.cost))
        if iterations[0] >= max_iterations:  # the iteration cap (lsqnonlin's MaxIterations)
            raise StopIteration  # scipy halts on this; a callback's return value is ignored

    r0 = evaluator.residual(x0)
    result = scipy.optimize.least_squares(
        evaluator.residual,
        x0,
        jac=jacobian,
        bounds=(lower, upper),
        method="trf",
        ftol=ftol,
        xtol=xtol,
        gtol=gtol,
        x_scale=1.0,
        max_nfev=MAX_FEVALS_PER_VARIABLE * len(x0),
        callback=callback,
    )
    message = "iteration limit reached" if result.status == -2 else result.message
    return RefinementReport(
        method=method,
        names=list(problem.names),
        x0=x0,
        x=result.x,
        objective_start=float(r0 @ r0),
        objective_final=float(2.0 * result.cost),
        iterations=iterations[0],
        simulations=evaluator.simulations,
        trial_evaluations=int(result.nfev),
        jacobian_evaluations=int(result.njev),
        diverged_evaluations=evaluator.diverged,
        wall_time_s=time.perf_counter() - started,
        status=int(result.status),
        message=message,
        history=history,
        integration_step_s=problem.max_step,
    )


def forward_difference_jacobian(
    problem: CLIEProblem, evaluator: _Evaluator, x, lower, upper, workers: int = 2
) -> np.ndarray:
    """lsqnonlin's (and scipy '2-point') forward differences, one simulation per parameter.

    h_j = sqrt(eps) max(1, |x_j|) sign(x_j), flipped when x + h leaves the bounds; the
    simulations run on `workers` threads (the numba core releases the GIL). A column whose
    perturbed simulation diverges is taken by a backward difference, zero if both diverge.
    """
    _, r_x = evaluator.evaluate(x)
    h = FD_RELATIVE_STEP * np.maximum(1.0, np.abs(x)) * np.where(x >= 0, 1.0, -1.0)
    h = np.where((x + h > upper) | (x + h < lower), -h, h)

    def column(j):
        shifted = x.copy()
        shifted[j] += h[j]
        r = problem.residual(shifted)
        if not np.all(np.isfinite(r)):
            shifted[j] = x[j] - h[j]
            r_back = problem.residual(shifted)
            return (r_x - r_back) / h[j] if np.all(np.isfinite(r_back)) else np.zeros_like(r_x), 2
        return (r - r_x) / h[j], 1

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        columns = list(pool.map(column, range(x.size)))
    evaluator.simulations += sum(n for _, n in columns)
    return np.column_stack([c for c, _ in columns])


def refine_faithful(
    problem: CLIEProblem,
    x0,
    max_iterations: int = MAX_ITERATIONS,
    ftol: float = FUNCTION_TOLERANCE,
    workers: int = 2,
) -> RefinementReport:
    """CLIE as D-F: trust-region reflective, forward-difference Jacobian, bounds, ftol 1e-6."""
    started = time.perf_counter()
    evaluator = _Evaluator(problem)
    x0, _ = _start(evaluator, x0)
    lower, upper = clie_bounds(problem.names, x0)
    jacobian = lambda x: forward_difference_jacobian(problem, evaluator, x, lower, upper, workers)  # noqa: E731
    return solve_trf(problem, x0, jacobian, evaluator, "clie", max_iterations, ftol, started)


def integrated_at(
    problem: CLIEProblem,
    integration_step: float = FAST_INTEGRATION_STEP_S,
    error_tolerance: float = FAST_ERROR_TOLERANCE,
) -> CLIEProblem:
    """`problem` with its closed loop integrated as the fast route integrates it: Heun steps of
    at most `integration_step` (s; one per 1 ms control cycle by default), a cycle whose error
    estimate exceeds `error_tolerance` (rad/s) integrated again at the paper's 0.25 ms."""
    return dataclasses.replace(problem, max_step=integration_step, error_tolerance=error_tolerance)


def one_step_per_cycle(
    problem: CLIEProblem,
    run,
    integration_step: float = FAST_INTEGRATION_STEP_S,
    error_tolerance: float = FAST_ERROR_TOLERANCE,
) -> RefinementReport:
    """`run(problem)` with the closed loop integrated one Heun step per control cycle, its
    solution checked at the problem's own integration (the paper's 0.25 ms steps).

    Where the two objectives at the solution differ by more than FAST_STEP_OBJECTIVE_TOLERANCE,
    or the one-step run cannot start (its simulation of the start diverges), `run` is repeated
    on the problem as given, so a record the one-step integration cannot simulate accurately
    gets the paper's integration (the report's message says so).
    """
    started = time.perf_counter()
    if integration_step <= problem.max_step:
        return run(problem)
    try:
        report = run(integrated_at(problem, integration_step, error_tolerance))
    except CLIEError as one_step_failure:  # a start only the finer integration simulates
        again = run(problem)
        again.wall_time_s = time.perf_counter() - started
        step_ms = problem.max_step * 1e3
        again.message = f"{again.message} (run at {step_ms:g} ms: {one_step_failure})"
        return again
    check = problem.objective(report.x)
    report.simulations += 1
    report.objective_final_paper_step = check
    report.wall_time_s = time.perf_counter() - started
    gap = abs(report.objective_final - check)
    if np.isfinite(check) and gap <= FAST_STEP_OBJECTIVE_TOLERANCE * check:
        return report
    again = run(problem)
    again.simulations += report.simulations
    again.wall_time_s = time.perf_counter() - started
    again.message = (
        f"{again.message} (run again at {problem.max_step * 1e3:g} ms steps: "
        f"at the one-step solution the objective was {report.objective_final:.6g} "
        f"one step per cycle, {check:.6g} at {problem.max_step * 1e3:g} ms)"
    )
    return again


def refine_fast(
    problem: CLIEProblem,
    x0,
    max_iterations: int = MAX_ITERATIONS,
    ftol: float = FUNCTION_TOLERANCE,
    integration_step: float = FAST_INTEGRATION_STEP_S,
    error_tolerance: float = FAST_ERROR_TOLERANCE,
) -> RefinementReport:
    """The same objective, solver, bounds and tolerance with the DIDIM Jacobian (one simulation
    per iteration), the closed loop integrated one Heun step per control cycle and the solution
    checked at 0.25 ms (`one_step_per_cycle`)."""

    def run(integrated: CLIEProblem) -> RefinementReport:
        started = time.perf_counter()
        evaluator = _Evaluator(integrated)
        start, _ = _start(evaluator, x0)
        jacobian = lambda x: integrated.didim_jacobian(evaluator.evaluate(x)[0])  # noqa: E731
        return solve_trf(
            integrated, start, jacobian, evaluator, "fast", max_iterations, ftol, started
        )

    return one_step_per_cycle(problem, run, integration_step, error_tolerance)


# ---------------------------------------------------------------- DIDIM


def regular_initialization(
    names: list[str], constants: RealizationConstants | None = None, to_record=KT_CORRECTION
) -> np.ndarray:
    """DIDIM's regular initialization, in this arm's units: a diagonal inertia matrix equal to
    the realization layer's joint-level inertias M̂_j and viscous terms M̂_j D̂_j (converted from
    command-Kt to record torque units by `to_record`, per axis or one number: the CRANE-X7's
    record torque is the catalogue torque x 1.3), every other parameter zero. The simulated
    loop then has exactly the poles the controller was designed for, so no gain update is
    needed. Axis j's inertia goes to IAj where that is a base parameter on its own, else to
    ZZRj (the CRANE-X7: ZZR1, ZZR2, IA3-IA8)."""
    constants = load_realization_constants() if constants is None else constants
    n_axes = len(constants.models)
    to_record = np.broadcast_to(np.asarray(to_record, dtype=float), (n_axes,))
    x = np.zeros(len(names))
    for axis in range(1, n_axes + 1):
        name = f"IA{axis}" if f"IA{axis}" in names else f"ZZR{axis}"
        if name not in names or f"FV{axis}" not in names:
            raise CLIEError(
                f"DIDIM's regular initialization: axis {axis} has neither IA{axis} "
                f"nor ZZR{axis}, or no FV{axis}, among the base parameters"
            )
        m_hat, d_hat = constants.m_hat[axis - 1], constants.d_hat[axis - 1]
        x[names.index(name)] = m_hat * to_record[axis - 1]
        x[names.index(f"FV{axis}")] = m_hat * d_hat * to_record[axis - 1]
    return x


MAX_STEP_HALVINGS = 12


def didim(
    problem: CLIEProblem,
    x0=None,
    max_iterations: int = 30,
    tolerance: float = 1e-4,
    integration_step: float = INTEGRATION_STEP_S,
) -> RefinementReport:
    """DIDIM: beta_{k+1} = argmin || F D (tau_measured - W(q_s(beta_k), ...) beta) ||, the
    Gauss-Newton step of the torque output error written as an IDIM least-squares on the
    simulated trajectory. Stops when the objective changes by less than `tolerance`
    (relative). A step whose simulation diverges or whose objective does not decrease is
    halved toward the previous estimate (the usual globalization of Gauss-Newton). The closed
    loop is integrated at the problem's step (0.25 ms) unless `integration_step` asks for the
    fast route's one step per cycle (`one_step_per_cycle`): on AG02 at 40 ms DIDIM's end point
    fails that route's check (0.22 % apart), so the one-step run would only be paid twice."""
    run = lambda integrated: _didim(integrated, x0, max_iterations, tolerance)  # noqa: E731
    return one_step_per_cycle(problem, run, integration_step)


def _didim(problem: CLIEProblem, x0, max_iterations: int, tolerance: float) -> RefinementReport:
    started = time.perf_counter()
    if x0 is None:
        x = regular_initialization(problem.names, problem.constants, problem.record_per_command())
    else:
        x = np.array(x0.ordered(problem.names) if isinstance(x0, ParameterSet) else x0, dtype=float)
    evaluator = _Evaluator(problem)
    simulation, r = evaluator.evaluate(x)
    if not simulation.ok:
        raise CLIEError(f"{problem.source}: the closed-loop simulation diverges at the DIDIM start")
    x_start, objective_start = x.copy(), float(r @ r)
    objective = objective_start
    history, iterations, status, message = [], 0, 0, "iteration limit reached"
    target = problem.measured[problem.valid].ravel()
    for iterations in range(1, max_iterations + 1):
        regressor = -problem.didim_jacobian(simulation)
        proposal = np.linalg.lstsq(regressor, target, rcond=None)[0]
        step = proposal - x
        for _ in range(MAX_STEP_HALVINGS):
            simulation_new, r_new = evaluator.evaluate(x + step)
            if simulation_new.ok and float(r_new @ r_new) < objective:
                break
            step *= 0.5
        else:
            status, message = 2, "no step along the Gauss-Newton direction lowers the objective"
            break
        x, simulation, r = x + step, simulation_new, r_new
        objective_new = float(r @ r)
        history.append(objective_new)
        change = (objective - objective_new) / objective
        objective = objective_new
        if change < tolerance:
            status, message = 1, f"objective changed by less than {tolerance:g} (relative)"
            break
    return RefinementReport(
        method="didim",
        names=list(problem.names),
        x0=x_start,
        x=x,
        objective_start=objective_start,
        objective_final=objective,
        iterations=iterations,
        simulations=evaluator.simulations,
        trial_evaluations=evaluator.simulations,
        jacobian_evaluations=iterations,
        diverged_evaluations=evaluator.diverged,
        wall_time_s=time.perf_counter() - started,
        status=status,
        message=message,
        history=history,
        integration_step_s=problem.max_step,
    )


# ---------------------------------------------------------------- condition records


def record_path(trajectory: str, ts: float, run: int = 1, method: str = "fast") -> Path:
    """Where the CLIE sweep keeps one condition's refinement (one directory per route)."""
    return (
        paths.RESULTS_DIR / "clie" / method / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms.json"
    )


def write_record(path, condition, report: RefinementReport) -> Path:
    """One condition's stages for the parameter clouds: the OLS estimate, the CLIE start (the
    SDP projection on route O-S-C, else the OLS estimate again) and the CLIE solution, with the
    refinement's cost counts and the condition's route, epsilon and kappa."""
    record = {
        "trajectory": condition.trajectory,
        "ts": condition.ts,
        "run": condition.run,
        "route": condition.route,
        "epsilon": None if condition.projection is None else condition.projection.epsilon,
        "kappa": condition.ols.kappa,
        "names": list(report.names),
        "ols": condition.ols.parameters.values.tolist(),
        "std_errors": condition.ols.parameters.std_errors.tolist(),
        "start": condition.start.values.tolist(),
        **{f"clie_{k}": v for k, v in report.as_dict().items()},
    }
    write_json_record(path, record)
    (Path(path).parent / "failed" / Path(path).name).unlink(
        missing_ok=True
    )  # a failure noted by an earlier build
    return Path(path)


def report_from_record(record: dict) -> RefinementReport:
    """The refinement a record of `write_record` holds (its start is the record's "start")."""
    fields = {k[len("clie_") :]: v for k, v in record.items() if k.startswith("clie_")}
    return RefinementReport(
        method=fields["method"],
        names=list(fields["names"]),
        x0=np.asarray(record["start"]),
        x=np.asarray(fields["x"]),
        objective_start=fields["objective_start"],
        objective_final=fields["objective_final"],
        iterations=fields["iterations"],
        simulations=fields["simulations"],
        trial_evaluations=fields["trial_evaluations"],
        jacobian_evaluations=fields["jacobian_evaluations"],
        diverged_evaluations=fields["diverged_evaluations"],
        wall_time_s=fields["wall_time_s"],
        status=fields["status"],
        message=fields["message"],
        history=list(fields["history"]),
        integration_step_s=fields["integration_step_s"],
        objective_final_paper_step=fields["objective_final_paper_step"],
    )


def failure_path(trajectory: str, ts: float, run: int = 1, method: str = "fast") -> Path:
    """Where the sweep notes a condition it could not refine (beside the records, in `failed/`)."""
    path = record_path(trajectory, ts, run, method)
    return path.parent / "failed" / path.name


def write_failure(path, condition, message: str) -> Path:
    """Write the record of a refinement that failed, with its message."""
    return write_json_record(
        path,
        {
            "trajectory": condition.trajectory,
            "ts": condition.ts,
            "run": condition.run,
            "route": condition.route,
            "failure": message,
        },
    )


# the sweeps that write CLIE records (papermill_params/<sweep>_<profile>.csv, column refine)
SWEEPS = ("clie", "clie_faithful")


def profile_record_paths(method: str = "fast", profile: str | None = None) -> list[Path]:
    """The CLIE records of `method` present: those of the conditions `profile`'s sweeps list for
    it (all when None), in file-name order."""
    if profile is None:
        return sorted(record_path("x", 0.04, 1, method).parent.glob("*.json"))
    listed = parameter_sets.profile_conditions(SWEEPS, profile, refine=method)
    found = [record_path(t, ms / 1e3, run, method) for t, ms, run in listed]
    return sorted(p for p in found if p.is_file())


def load_failures(method: str = "fast", profile: str | None = None) -> list[dict]:
    """Every condition the CLIE sweep could not refine for `method`, with its reason; with a
    profile, only the conditions its sweeps list for `method`."""
    found = read_json_records(failure_path("x", 0.04, 1, method).parent)
    return parameter_sets.in_profile(found, SWEEPS, profile, refine=method)


def load_records(method: str = "fast", profile: str | None = None) -> list[dict]:
    """Every CLIE record the sweep wrote for `method`, sorted by file name; with a profile, only
    the conditions its sweeps list for `method` (the folder may hold the other profile's too)."""
    found = read_json_records(record_path("x", 0.04, 1, method).parent)
    return parameter_sets.in_profile(found, SWEEPS, profile, refine=method)


def iteration_statistics(records) -> "pd.DataFrame":
    """The cost figures of Sec. IV-C over a set of CLIE records (one row per condition, as
    `load_records` returns them): medians by route, the iteration counts half and nine-tenths
    of the refinements finish within, runs stopped at the iteration cap, total wall time."""
    frame = pd.DataFrame(records)
    iterations = frame["clie_iterations"].astype(int)
    by_route = frame.groupby("route")["clie_iterations"].median()
    rows = [
        ("median iterations, route O-C", by_route.get("O-C", np.nan)),
        ("median iterations, route O-S-C", by_route.get("O-S-C", np.nan)),
        (
            "half of the refinements finish within (iterations)",
            float(np.quantile(iterations, 0.5, method="inverted_cdf")),
        ),
        (
            "nine-tenths finish within (iterations)",
            float(np.quantile(iterations, 0.9, method="inverted_cdf")),
        ),
        (
            f"stopped at the {MAX_ITERATIONS}-iteration cap",
            int((iterations >= MAX_ITERATIONS).sum()),
        ),
        ("total refinement time", f"{frame['clie_wall_time_s'].sum() / 3600:.2f} h"),
    ]
    return pd.DataFrame(rows, columns=["", "this book (fast route)"]).set_index("")
