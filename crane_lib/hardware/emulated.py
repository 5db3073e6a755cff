"""A recording of the twin made through the emulator: the recorder, dynamixel-sdk and the
Protocol 2.0 emulator end to end, as the book's "your arm" chapter and the tests use them.

The emulator and the recorder both run in real time on the host. A host that stalls longer
than the recorder's watchdog (20 ms) makes the recorder stop, exactly as it must on a real
arm; on a shared machine that can happen without any fault of the bus. `record_on_emulator`
then records again (at most `attempts` times) and reports every attempt, so that a stall is
visible in the result instead of silently retried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from crane_lib.excitation.commands import START_POSTURE_DEG
from crane_lib.hardware.emulator import EmulatorConfig, EmulatorProcess
from crane_lib.hardware.recorder import ArmRecording, RecorderSettings, record_arm

TIMING_FAULTS = ("watchdog", "timeout")  # what a stalled host looks like to the recorder


@dataclass
class EmulatedRecording:
    recording: ArmRecording
    attempts: list[str] = field(default_factory=list)  # the fault of every attempt ("none" for a complete one)
    emulator: dict = field(default_factory=dict)  # the emulator's snapshot after the last attempt
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        return self.recording.fault is None


def demo_config(seed: int = 1, realtime: bool = True) -> EmulatorConfig:
    """Factory control tables and the arm straightened (all angles 0), resting there until the
    torque is on: what a user's arm looks like when switched on. The emulator has no mechanical
    joint stops, so an unsupported arm would sag past joint 4's 0 deg limit before the recorder
    had configured the servos; resting on its stand it cannot."""
    return EmulatorConfig(seed=seed, realtime=realtime, held_until_torque=True)


def record_on_emulator(command_file, out, config: EmulatorConfig | None = None, settings: RecorderSettings | None = None,
                       attempts: int = 3, emulator: EmulatorProcess | None = None) -> EmulatedRecording:
    """Record `command_file` through a fresh emulator (or `emulator`, reset to `config`)."""
    config = config or demo_config()
    settings = settings or RecorderSettings(realtime=config.realtime)
    own = emulator is None
    start = time.perf_counter()
    emulator = EmulatorProcess(config) if own else emulator
    faults: list[str] = []
    try:
        for attempt in range(attempts):
            emulator.reset(config)
            recording = record_arm(command_file, emulator.port, out, settings)
            faults.append("none" if recording.fault is None else recording.fault.text())
            if recording.fault is None or recording.fault.kind not in TIMING_FAULTS or config.faults:
                break
        snapshot = emulator.snapshot()
    finally:
        if own:
            emulator.stop()
    return EmulatedRecording(recording, faults, snapshot, time.perf_counter() - start)


def start_posture_config(**overrides) -> EmulatorConfig:
    """The arm held at the command files' start posture until torque is on (tests: no approach move)."""
    return EmulatorConfig(start_posture=tuple(np.radians(START_POSTURE_DEG)), held_until_torque=True, **overrides)

