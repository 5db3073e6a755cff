"""The reference of every cycle on the arm: how a command file is executed, cycle by cycle.

The same phases as the twin's recording loop (twin/core.py, `run_closed_loop`), with the same
per-segment 4-1-4 profiles (`twin.recorder.segment_profiles`), the same in-position rule and
the same final dwell, so that a recording of the arm and one of the twin carry the same
reference for the same measured angles (tests/test_hardware_sequencer.py feeds a twin log's
angles through this class and compares every reference column). The twin keeps its copy inside
its numba loop; this one is plain Python, called once per 1 ms cycle.

    approach  (arm only, not logged) a slow move from where the arm is to the start posture
    preroll   (not logged) hold the start posture while the controller settles
    lead      (logged) idle hold before the motion
    segment   the segment's profile on its own clock
    wait      hold the segment's target until every axis is in position (or a timeout)
    dwell     the final dwell after the last segment
    tail      (logged) idle hold after the motion
    done

The approach is the one element the twin lacks: a twin recording starts at the assumed start
posture q̄A, a real arm starts wherever it was switched on (hanging at rest). It runs the
command-file interpolation itself (a one-row command file from the measured angles to q̄A at
APPROACH_SPEED_PERCENT of the velocity ceilings) and then waits for the arm to be in position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.constants import CONTROL_PERIOD_S
from crane_lib.excitation.commands import CRANE_X7_FORMAT, FINAL_DWELL_S, CommandFile, CommandFormat
from crane_lib.twin.recorder import (
    IN_POSITION_TIMEOUT_S,
    IN_POSITION_TOLERANCE_RAD,
    PREROLL_S,
    SegmentProfiles,
    segment_profiles,
)

APPROACH, PREROLL, LEAD, SEGMENT, WAIT, DWELL, TAIL, DONE = range(8)
PHASE_NAMES = ("approach", "preroll", "lead", "segment", "wait", "dwell", "tail", "done")
LOGGED_PHASES = (LEAD, SEGMENT, WAIT, DWELL, TAIL)
APPROACH_SPEED_PERCENT = 20.0  # of the per-axis velocity ceilings (the final q̄0 row's speed)
APPROACH_TIMEOUT_S = 5.0  # in-position wait after the approach move


@dataclass
class Reference:
    theta: np.ndarray
    dtheta: np.ndarray
    ddtheta: np.ndarray
    segment: int  # command-file segment for the log (-1 while idle)


def approach_command(
    theta_now: np.ndarray, target: np.ndarray, command_format: CommandFormat = CRANE_X7_FORMAT
) -> CommandFile:
    """A one-segment command from `theta_now` to `target`, in the arm's command format."""

    class _From(CommandFile):
        @property
        def start(self) -> np.ndarray:  # the measured angles instead of the assumed q̄A
            return np.asarray(theta_now, dtype=float)

    return _From(
        "approach",
        np.asarray(target, dtype=float)[None, :],
        np.array([APPROACH_SPEED_PERCENT]),
        command_format=command_format,
    )


class Sequencer:
    """Cycle-by-cycle reference of one command file; `step(theta)` after each encoder read."""

    def __init__(
        self,
        cmd: CommandFile,
        lead_cycles: int,
        tail_cycles: int,
        preroll_cycles: int | None = None,
        approach_from: np.ndarray | None = None,
        period: float = CONTROL_PERIOD_S,
    ):
        self.cmd = cmd
        self.period = period
        self.profiles: SegmentProfiles = segment_profiles(cmd, period)
        self.start = cmd.start.copy()
        self.lead_cycles = int(lead_cycles)
        self.tail_cycles = int(tail_cycles)
        self.preroll_cycles = (
            int(round(PREROLL_S / period)) if preroll_cycles is None else int(preroll_cycles)
        )
        self.dwell_cycles = int(round(FINAL_DWELL_S / period))
        self.timeout_cycles = int(round(IN_POSITION_TIMEOUT_S / period))
        self.tolerance = IN_POSITION_TOLERANCE_RAD
        self.n_segments = self.profiles.start.shape[0]
        self.segment = 0
        self.local = 0
        self.wait = 0
        self.wait_total = 0
        self.timeouts = 0
        self.cycle = 0
        self._zero = np.zeros(cmd.command_format.n_axes)
        self.approach: SegmentProfiles | None = None
        if approach_from is not None:
            approach = approach_command(approach_from, self.start, cmd.command_format)
            self.approach = segment_profiles(approach, period)
            self.phase = APPROACH
        else:
            self.phase = PREROLL
        self.left = self.preroll_cycles
        if self.phase == PREROLL and self.left <= 0:
            self._enter_lead()

    @property
    def logged(self) -> bool:
        """Whether the current phase is logged."""
        return self.phase in LOGGED_PHASES

    @property
    def done(self) -> bool:
        """Whether the sequence has finished."""
        return self.phase == DONE

    def reference(self) -> Reference:
        """The reference of this cycle (before `advance`)."""
        phase = self.phase
        if phase == SEGMENT:
            p = self.profiles
            index = p.offset[self.segment] + self.local
            delta = p.delta[self.segment]
            return Reference(
                p.start[self.segment] + p.s[index] * delta,
                p.sd[index] * delta,
                p.sdd[index] * delta,
                self.segment,
            )
        if phase == APPROACH:
            a = self.approach
            if self.local < a.count[0]:
                delta = a.delta[0]
                return Reference(
                    a.start[0] + a.s[self.local] * delta,
                    a.sd[self.local] * delta,
                    a.sdd[self.local] * delta,
                    -1,
                )
            return Reference(self.start.copy(), self._zero.copy(), self._zero.copy(), -1)
        if phase in (PREROLL, LEAD):
            return Reference(self.start.copy(), self._zero.copy(), self._zero.copy(), -1)
        last = min(self.segment, self.n_segments - 1)
        target = self.profiles.start[last] + self.profiles.delta[last]
        return Reference(
            target,
            self._zero.copy(),
            self._zero.copy(),
            self.segment if phase in (WAIT, DWELL) else -1,
        )

    def advance(self, theta: np.ndarray, settled: np.ndarray | None = None) -> None:
        """Move the state machine on after this cycle, given this cycle's measured angles and,
        for an arm in position mode, which servos have settled on their goal (their Moving flag
        cleared: an axis counts as in position then, as on the position-mode twin)."""
        phase = self.phase
        if phase == APPROACH:
            self.local += 1
            if self.local >= self.approach.count[0]:
                inside = self._inside(self.start, theta, settled)
                self.wait += 1
                if inside or self.wait >= int(round(APPROACH_TIMEOUT_S / self.period)):
                    self.timeouts += 0 if inside else 1
                    self.phase, self.left, self.wait, self.local = (
                        PREROLL,
                        self.preroll_cycles,
                        0,
                        0,
                    )
                    if self.left <= 0:
                        self._enter_lead()
        elif phase in (PREROLL, LEAD, DWELL, TAIL):
            self.left -= 1
            if self.left <= 0:
                if phase == PREROLL:
                    self._enter_lead()
                elif phase == LEAD:
                    self.phase = SEGMENT if self.profiles.count[0] > 0 else WAIT
                    self.segment, self.local, self.wait = 0, 0, 0
                elif phase == DWELL:
                    self.phase, self.left = TAIL, self.tail_cycles
                    if self.left <= 0:
                        self.phase = DONE
                else:
                    self.phase = DONE
        elif phase == SEGMENT:
            self.local += 1
            if self.local >= self.profiles.count[self.segment]:
                self.phase, self.wait = WAIT, 0
        if phase == WAIT:
            target = self.profiles.start[self.segment] + self.profiles.delta[self.segment]
            inside = self._inside(target, theta, settled)
            self.wait += 1
            timed_out = self.wait >= self.timeout_cycles
            if inside or timed_out:
                if timed_out and not inside:
                    self.timeouts += 1
                self.wait_total += self.wait
                if self.segment + 1 < self.n_segments:
                    self.segment += 1
                    self.local, self.wait = 0, 0
                    self.phase = SEGMENT if self.profiles.count[self.segment] > 0 else WAIT
                else:
                    self.phase, self.left = DWELL, self.dwell_cycles
        self.cycle += 1

    def _inside(self, target: np.ndarray, theta: np.ndarray, settled) -> bool:
        near = np.abs(target - theta) <= self.tolerance
        return bool(np.all(near if settled is None else near | settled))

    def _enter_lead(self) -> None:
        self.phase, self.left = LEAD, self.lead_cycles
        if self.left <= 0:
            self.phase = SEGMENT if self.profiles.count[0] > 0 else WAIT
            self.segment, self.local, self.wait = 0, 0, 0
