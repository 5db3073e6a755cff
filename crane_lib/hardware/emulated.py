"""A recording of the twin made through the emulator: the recorder, dynamixel-sdk and the
Protocol 2.0 emulator end to end, as the book's "your arm" chapter and the tests use them.

`record_on_emulator` runs the recorder against a fresh (or reset) emulator with matching timing:
lockstep by default (`demo_config`), where the device's clock is driven by the bus and a loaded
host cannot stall the recording, so the chapter and the tests get the same recording on any
machine (crane_lib/hardware/timing.py). In real time (`demo_config(lockstep=False)`, the
benchmark) a host that stalls longer than the recorder's 20 ms watchdog stops the recording,
exactly as it must on a real arm; `attempts` > 1 then records again and every attempt is
reported, so that a stall is visible in the result instead of silently retried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from crane_lib.excitation.commands import START_POSTURE_DEG
from crane_lib.hardware.arm_bus import CRANE_X7
from crane_lib.hardware.emulator import EmulatorConfig, EmulatorProcess
from crane_lib.hardware.recorder import ArmRecording, RecorderSettings, record_arm
from crane_lib.hardware.timing import LOCKSTEP, REALTIME

TIMING_FAULTS = (
    "watchdog",
    "timeout",
)  # what a stalled host looks like to the recorder in real time


@dataclass
class EmulatedRecording:
    recording: ArmRecording
    attempts: list[str] = field(
        default_factory=list
    )  # the fault of every attempt ("none" for a complete one)
    emulator: dict = field(default_factory=dict)  # the emulator's snapshot after the last attempt
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        """Whether the recording ended without a fault."""
        return self.recording.fault is None

    def require_complete(self) -> None:
        """Raise unless the recording ran to its end (a demonstration must not go on with a
        part)."""
        if not self.complete:
            raise RuntimeError(
                f"the recording through the emulator stopped: {'; '.join(self.attempts)}"
            )


def demo_config(
    seed: int = 1, realtime: bool = True, lockstep: bool = True, arm: str = CRANE_X7
) -> EmulatorConfig:
    """Factory control tables and the arm straightened (all angles 0), resting there until the
    torque is on: what a user's arm looks like when switched on. The emulator has no mechanical
    joint stops, so an unsupported arm would sag past joint 4's 0 deg limit before the recorder
    had configured the servos; resting on its stand it cannot. Lockstep by default (timing.py)."""
    return EmulatorConfig(
        seed=seed, realtime=realtime, held_until_torque=True, lockstep=lockstep, arm=arm
    )


def settings_for(config: EmulatorConfig, **fields) -> RecorderSettings:
    """Recorder settings whose timing and arm match the emulator's."""
    timing = LOCKSTEP if config.lockstep else REALTIME
    return RecorderSettings(
        **{"timing": timing, "realtime": config.realtime, "arm": config.arm, **fields}
    )


def record_on_emulator(
    command_file,
    out,
    config: EmulatorConfig | None = None,
    settings: RecorderSettings | None = None,
    attempts: int = 1,
    emulator: EmulatorProcess | None = None,
    **fields,
) -> EmulatedRecording:
    """Record `command_file` through a fresh emulator (or `emulator`, reset to `config`); without
    `settings`, the recorder's timing matches the emulator's clock and `fields` set the rest."""
    config = config or demo_config()
    settings = settings or settings_for(config, **fields)
    if settings.timing.lockstep != config.lockstep:
        raise ValueError(
            f"the recorder's {settings.timing.name} timing against an emulator "
            f"{'in' if config.lockstep else 'out of'} lockstep"
        )
    own = emulator is None
    start = time.perf_counter()
    emulator = EmulatorProcess(config) if own else emulator
    faults: list[str] = []
    try:
        for attempt in range(attempts):
            emulator.reset(config)
            recording = record_arm(command_file, emulator.port, out, settings)
            faults.append("none" if recording.fault is None else recording.fault.text())
            if (
                recording.fault is None
                or recording.fault.kind not in TIMING_FAULTS
                or config.faults
                or config.lockstep
            ):
                break
        snapshot = emulator.snapshot()
    finally:
        if own:
            emulator.stop()
    return EmulatedRecording(recording, faults, snapshot, time.perf_counter() - start)


def start_posture_config(**overrides) -> EmulatorConfig:
    """The arm (`arm=`, the CRANE-X7 by default) held at its command files' start posture until
    torque is on (tests: no approach move); lockstep unless `lockstep=False` is given."""
    arm = overrides.get("arm", CRANE_X7)
    if arm == CRANE_X7:
        posture = START_POSTURE_DEG
    else:
        from crane_lib.twin.recorder import command_format

        posture = command_format(arm).start_posture_deg
    return EmulatorConfig(
        **{
            "start_posture": tuple(np.radians(posture)),
            "held_until_torque": True,
            "lockstep": True,
            **overrides,
        }
    )
