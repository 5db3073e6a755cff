"""CLIE for a record of an arm in position mode: the closed loop it simulates is the servos' own.

A record whose metadata says `drive_mode: position` (the twin's `run_position_loop`, written for
the SO-101 and for the ViperX run in position mode), or a record without the entry of an arm
described in position mode (a recorder's log of the SO-101), was realized by each servo's
position loop, not by controller (2). Its CLIE problem (`build_problem`) is the current-mode
problem of the same log (`clie.build_problem`: stamps, band-limited measured torque record,
clamp mask, residual filter) whose `simulate` runs `clie_core.simulate_position`: per stamp one
tick of `model.position_loop.position_loop_law`, the function the twin runs, toward the goal the
host wrote (θref rounded to whole encoder counts, the Goal Position register), from the loop's
state holding the first goal at the first measured angles; the torque is the duty's on the
motor's torque-speed line (`position_loop.duty_torque`) with the record's kt and the stall
current and no-load speed of the arm's servos (`twin.truth.motor_line`). Everything after the
simulation (residual, objective, the fast route's DIDIM Jacobian, DIDIM) is CLIE's.

The loop's settings are the log's arm description's `[position_loop]`. Routes that simulate
controller (2) themselves (the exact Jacobian's sensitivities) are refused on such a record:
`law_arguments` raises. book/register_twin.md ("The servo's position loop").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crane_lib.constants import ENCODER_RESOLUTION_RAD
from crane_lib.errors import InputError
from crane_lib.identification import clie
from crane_lib.logs.raw_log import CRANE_X7, RawLog
from crane_lib.model import controller, position_loop, spd_solve
from crane_lib.model.dynamics import DynamicModel, bind_template, is_crane_x7

POSITION = "position"


def drive_mode_of(log: RawLog) -> str:
    """The drive mode a log was recorded in: its metadata's drive_mode, else its arm's own (the
    description's; the CRANE-X7's current)."""
    mode = log.metadata.get("drive_mode")
    if mode is not None:
        return mode
    if log.arm == CRANE_X7:
        return "current"
    from crane_lib.model.arm_description import load_arm  # loads pandas: only for other arms

    return load_arm(log.arm).drive_mode


def goal_counts(theta_ref: np.ndarray) -> np.ndarray:
    """The Goal Position the host wrote for each reference angle: whole encoder counts (rad)."""
    res = ENCODER_RESOLUTION_RAD
    return np.rint((np.asarray(theta_ref) + math.pi) / res) * res - math.pi


_CORES: dict[str, object] = {}


def _core(model: DynamicModel):
    """clie_core.py bound to `model`'s kernels, keyed also by position_loop's source (numba does
    not see a change in a called module)."""
    name = model._module.__name__
    if name not in _CORES:
        _CORES[name] = bind_template(
            Path(clie.__file__).with_name("clie_core.py"),
            model.parameter_set,
            controller,
            spd_solve,
            position_loop,
            arm=None if is_crane_x7(model.arm) else model.arm,
        )
    return _CORES[name]


@dataclass
class PositionCLIEProblem(clie.CLIEProblem):
    """A CLIE problem whose closed loop is the servos' position loop (module docstring)."""

    goal: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (n, n_axes) rad
    loop_state_start: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    loop_gains: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    loop_period: float = 1e-3
    stall_current: np.ndarray = field(default_factory=lambda: np.zeros(0))  # A, one servo
    no_load_speed: np.ndarray = field(default_factory=lambda: np.zeros(0))  # rad/s, link side

    def law_arguments(self) -> tuple:
        """Refused: this record was not realized by controller (2)."""
        raise clie.CLIEError(
            f"{self.source}: a position-mode record (the servos' own loop); a route that "
            "simulates controller (2) does not apply: use clie, fast or didim"
        )

    def simulate(self, beta) -> clie.Simulation:
        """Simulate the servos' closed loop with parameters `beta`."""
        beta = np.ascontiguousarray(beta, dtype=float)
        if beta.shape != (len(self.names),):
            raise InputError(
                "CLIE parameters",
                f"shape {beta.shape}",
                f"({len(self.names)},) in the order {self.names}",
            )
        n = self.t.size
        tau, q, v, a = (np.zeros((n, self.n_axes)) for _ in range(4))
        code, cycles, refined = _core(self.model).simulate_position(
            self.t,
            self.goal,
            self.theta_start,
            self.loop_state_start,
            self.loop_gains,
            float(self.loop_period),
            beta,
            self.model._offsets,
            float(self.model.gravity_z),
            self.kt_record,
            self.stall_current,
            self.no_load_speed,
            float(self.max_step),
            clie.INTEGRATION_STEP_S,
            float(self.error_tolerance),
            clie.DIVERGED_SPEED_RAD_S,
            tau,
            q,
            v,
            a,
        )
        return clie.Simulation(int(code), int(cycles), tau, q, v, a, int(refined))


def build_problem(
    log: RawLog,
    model: DynamicModel | None = None,
    constants=None,
    max_step: float = clie.INTEGRATION_STEP_S,
    grid=None,
) -> clie.CLIEProblem:
    """The CLIE problem of one raw log in the drive mode it was recorded in: `clie.build_problem`
    for a current-mode log, its position-loop counterpart for a position-mode one (`grid`: the
    log's even grid when the caller has it)."""
    problem = clie.build_problem(log, model, constants, max_step, grid)
    if drive_mode_of(log) != POSITION:
        return problem
    from crane_lib.model.arm_description import load_arm  # loads pandas: only for other arms
    from crane_lib.twin import truth  # the servos' datasheet line, as the twin's

    description = load_arm(log.arm)
    if description.position_loop is None:
        raise InputError(
            str(log.path or "raw log"),
            f"a position-mode record of the {description.name}, whose description has no "
            "[position_loop]",
            "a record of an arm with its servos' loop described",
        )
    n_axes = description.n_axes
    lines = np.array([truth.motor_line(axis, log.arm) for axis in range(1, n_axes + 1)])
    goal = np.ascontiguousarray(goal_counts(log.theta_ref))
    fields = {f: getattr(problem, f) for f in problem.__dataclass_fields__}
    return PositionCLIEProblem(
        **fields,
        goal=goal,
        loop_state_start=position_loop.initial_state(goal[0], problem.theta_start),
        loop_gains=description.position_loop.gains(n_axes),
        loop_period=float(description.position_loop.period),
        stall_current=np.ascontiguousarray(lines[:, 0]),
        no_load_speed=np.ascontiguousarray(lines[:, 1]),
    )
