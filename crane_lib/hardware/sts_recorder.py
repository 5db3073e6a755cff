"""Record a command file on a real SO-101 (or its STS emulator) over scservo_sdk, the arm in
position mode: the host streams goal positions, each servo's own position loop follows them.

    record_so101(command_file, port, out) -> ArmRecording

Before torque (each failure an InputError, exit 2 in the CLI, torque never enabled): the command
file (its waypoints and whole reference inside the joint limits), the port (recorder's
`bus.check_port`), every servo (ping, model number 777, its ID register, firmware), each servo's
Operating_Mode 0 (position) and Return_Delay_Time 0 (read, not changed: the arm as LeRobot sets
it up), then Acceleration 254 and the present position as the goal (written, read back).
SIGINT and SIGTERM are caught from before the port is opened.

Then the torque handshake and every cycle (STS_PERIOD_S, 4 ms):

    sync read (Present_Position .. Present_Current: 15 bytes per servo)
    -> checks: the status error bits, joint limits, the cycle watchdog
    -> reference of the cycle (sequencer.Sequencer, the DYNAMIXEL recorder's and the twin's
       phases) -> sync write of Goal_Position (the reference angle in counts)
    -> the clamp watchdog (a servo at its torque limit) -> the log row

Why 4 ms, not the CRANE-X7's 1 ms: at the SO-101's 1 Mbit/s (10 us a byte) one cycle's packets
take 1.66 ms on the wire (sync read 14 bytes, six status packets of 21, sync write 26), plus
two turnarounds of the USB adapter. `bus_wire_seconds` computes it; a period shorter than the
wire time is refused. The log is stamped on the host's time of each read as the DYNAMIXEL
recorder's; preprocessing resamples it (steps up to logs.raw_log.MAX_STAMP_GAP_S are read).

On any fault (no status packet within the watchdog, a corrupt status packet, a status error bit
such as overload, a joint beyond its limit by more than the margin, a servo at its torque limit
longer than CLAMP_HOLD_S, a late cycle, SIGINT or SIGTERM) the recorder switches torque off on
every servo with read-back and writes the log of every sample logged so far, the fault in its
metadata (the DYNAMIXEL recorder's `finish_recording`, partial files and `recover_partial`).

The log: the raw log of an arm of n = 6 axes (2 + 13 n columns, logs/raw_log.py), position mode's
analogue of the current-mode columns:

    theta_logged, position_ticks   Present_Position (2048 at 0 rad, 4096 counts a turn)
    dtheta                         encoder difference over one cycle
    theta_ref, dtheta_ref, ddtheta_ref, position_error   the sequencer's reference, as logged
                                   by the current-mode recorder; the goal sent is theta_ref in
                                   counts (round(theta_ref / (2 pi / 4096)) + 2048)
    current_command, current_present   the Present_Current reading (A, 6.5 mA a unit): in
                                   position mode the host commands no current, and the torque
                                   record (current_command x kt) is the servo's own reading
    goal_current_units             the Present_Current register (units), as read
    u_feedforward                  0 (no host controller)
    u_feedback                     Present_Load / 1000, the servo's output (the twin logs its
                                   loop's PWM duty there)
    clamped                        1 where |Present_Load| reached 98 % of Torque_Limit (the
                                   twin: where its loop's duty is clamped)

as the position-mode twin fills them (twin.recorder.position_metadata); the sequencer counts an
axis in position when its servo's Moving flag is clear, as the twin's servo does.

and, per cycle in `<LOG stem>.cycles.npz` beside the stamps: Present_Load (0.1 %),
Present_Voltage (0.1 V), Present_Temperature (deg C), the Status bits and the goal sent.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import signal
import time
from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.errors import InputError
from crane_lib.excitation import commands
from crane_lib.excitation.commands import CommandFile
from crane_lib.hardware import sts_bus
from crane_lib.hardware import sts_control_table as sts
from crane_lib.hardware.arm_bus import sts_arm_bus
from crane_lib.hardware.bus import BusFault
from crane_lib.hardware.recorder import (
    ArmRecording,
    Fault,
    LoggedRows,
    MemoryRows,
    RecorderSettings,
    SignalStop,
    check_before_torque,
    cleanup_partial,
    current_scheduling,
    finish_recording,
    partial_paths,
    request_realtime,
    restore_scheduling,
)
from crane_lib.hardware.sequencer import PHASE_NAMES, Sequencer
from crane_lib.hardware.timing import LOCKSTEP, REALTIME, STS_PERIOD_S, next_cycle
from crane_lib.logs import raw_log
from crane_lib.model.arm_description import load_arm
from crane_lib.twin.recorder import position_metadata, read_arm_command

RECORDER_VERSION = 1
SO101 = "so101"
TIMINGS = {
    timing.name: dataclasses.replace(timing, period_s=STS_PERIOD_S)
    for timing in (REALTIME, LOCKSTEP)
}
CLAMP_FRACTION = 0.98  # of Torque_Limit: the servo's loop gives all it may
_STAMPS = ("wake", "read_start", "read_end", "write_end")
_PER_AXIS = ("load", "voltage", "temperature", "status", "goal_ticks")


def settings_for(timing: str = "realtime", **fields) -> RecorderSettings:
    """Recorder settings of the SO-101: its bus's baud rate, the STS period and `timing`."""
    bus = sts_arm_bus(fields.get("arm", SO101))
    values = {"arm": bus.key, "baud": bus.baud, "period_s": STS_PERIOD_S, "timing": TIMINGS[timing]}
    return RecorderSettings(**{**values, **fields})


def bus_wire_seconds(n_servos: int, baud: float) -> float:
    """Time one cycle's packets take on the wire (10 bits a byte): the sync read (8 + one byte
    per ID), a status packet per servo (6 + the 15-byte block), the sync write of Goal_Position
    (8 + ID and two bytes each)."""
    read = 8 + n_servos + n_servos * (6 + sts.CYCLE_READ_LENGTH)
    write = 8 + n_servos * (1 + sts.GOAL_POSITION.size)
    return (read + write) * 10.0 / baud


def goal_ticks(theta: np.ndarray) -> np.ndarray:
    """Goal_Position (counts) of joint angles `theta` (rad): 2048 at 0, clipped to 0..4095."""
    ticks = np.rint(theta / sts.RAD_PER_COUNT) + sts.POSITION_CENTRE
    return np.clip(ticks, 0, sts.ENCODER_COUNTS - 1).astype(np.int64)


def record_so101(
    command_file,
    port: str,
    out=None,
    settings: RecorderSettings | None = None,
    progress=None,
    on_logging=None,
) -> ArmRecording:
    """Execute `command_file` (path or CommandFile) on the SO-101 behind `port`, in position mode.

    Writes the raw log to `out` when given and returns the recording either way. Raises
    InputError before torque for bad input; faults during the motion are returned in
    `ArmRecording.fault` (the log is written all the same)."""
    settings = settings or settings_for()
    bus = sts_arm_bus(settings.arm)
    period = settings.period_s
    if settings.timing.lockstep and abs(period - settings.timing.period_s) > 1e-12:
        raise ValueError(f"lockstep timing runs a {settings.timing.period_s * 1e3:g} ms period")
    wire = bus_wire_seconds(len(bus.ids), settings.baud)
    if wire >= period:
        raise InputError(
            f"{port} at {settings.baud / 1e6:g} Mbit/s",
            f"one cycle's packets take {wire * 1e3:.2f} ms on the wire",
            f"a control period longer than that (not {period * 1e3:g} ms)",
        )
    if isinstance(command_file, CommandFile):
        cmd, command_name, command_sha = command_file, command_file.name, "<in memory>"
    else:
        cmd = read_arm_command(command_file, bus.key)
        command_name, command_sha = str(command_file), fingerprint.file_digest(command_file)
    if cmd.command_format.n_axes != bus.n_axes:
        raise InputError(
            command_name,
            f"a command file of {cmd.command_format.n_axes} axes",
            f"one of the {bus.name}'s {bus.n_axes} axes",
        )
    out = None if out is None else Path(out)
    checks = check_before_torque(cmd, None, period)
    limits = cmd.command_format.limits()
    margin = math.radians(settings.joint_margin_deg)
    low, high = limits[:, 0] - margin, limits[:, 1] + margin
    with SignalStop() as stop:
        servos = sts_bus.StsBus(
            port,
            bus,
            timing=settings.timing,
            reply_timeout_ms=settings.reply_timeout_ms,
            baud=settings.baud,
            loop=load_arm(bus.key).position_loop,
        )
        servos.open()
        try:
            infos = servos.discover()
            servos.check_settings()
            read = servos.new_cycle_read()
            try:
                servos.read_cycle(read)
            except BusFault as fault:
                raise InputError(
                    port, f"the first sync read failed ({fault})", "every servo answering it"
                ) from None
            configuration = servos.configure(read.position_ticks)
            theta_start = (read.position_ticks - sts.POSITION_CENTRE) * sts.RAD_PER_COUNT
            metadata = _metadata(
                cmd, command_name, command_sha, port, servos, infos, configuration, settings
            )
            metadata.update(checks)
            metadata["bus_wire_ms_per_cycle"] = f"{wire * 1e3:.3f}"
            return _run(
                cmd, servos, settings, theta_start, low, high, metadata, out, progress, stop,
                on_logging,
            )  # fmt: skip
        finally:
            servos.close()


def _sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version("feetech-servo-sdk")
    except Exception:  # noqa: BLE001
        return "unknown"


def _metadata(
    cmd, command_name, command_sha, port, servos, infos, configuration, settings
) -> dict[str, str]:
    bus = servos.arm
    latency = servos.latency_timer
    return {
        "source": f"{bus.name} over feetech-servo-sdk {_sdk_version()} "
        f"(crane_lib.hardware.sts_recorder v{RECORDER_VERSION})",
        "arm": bus.key,
        **position_metadata(load_arm(bus.key).position_loop),
        "log_columns": (
            "position mode: current_command and current_present hold Present_Current (the "
            "torque record), goal_current_units its register value, u_feedback Present_Load / "
            "1000 (the servo's output; the twin logs its PWM duty there), u_feedforward 0, "
            "theta_ref the goal streamed (in counts: round(theta_ref / (2 pi / 4096)) + 2048), "
            "clamped where |Present_Load| reached 98 % of Torque_Limit"
        ),
        "trajectory": cmd.name,
        "command_file": command_name,
        "command_sha256": command_sha,
        "port": str(port),
        "baud_rate": str(servos.baud),
        "usb_latency_timer_ms": "none (not an FTDI-type adapter)"
        if latency is None
        else str(latency),
        "servo_ids": " ".join(str(i.sts_id) for i in infos),
        "servo_models": " ".join(f"{i.model_number}:{i.model}" for i in infos),
        "servo_firmware": " ".join(i.firmware for i in infos),
        **configuration,
        "kt_logged": " ".join(f"{s.kt:.6g}" for s in bus.servos),
        "current_command_source": "Present_Current(69) read back (position mode: the host "
        "commands goal positions, not current)",
        "current_unit_A": f"{bus.current_unit:g}",
        "target_period_ms": f"{settings.period_s * 1e3:g}",
        "timing": settings.timing.name,
        "timing_detail": settings.timing.describe(),
        "watchdog_ms": f"{settings.watchdog:g}",
        "reply_timeout_ms": f"{settings.reply_timeout_ms:g}",
        "joint_limit_margin_deg": f"{settings.joint_margin_deg:g}",
        "clamp_hold_limit_s": f"{settings.clamp_hold_s:g}",
        "commanded_duration_s": f"{commands.commanded_duration(cmd):.3f}",
        "crane_lib_sources": fingerprint.source_digest(__file__, sts_bus, sts),
    }


def _run(
    cmd, servos, settings, theta_start, low, high, metadata, out, progress, stop, on_logging
) -> ArmRecording:
    period = settings.period_s
    lockstep = settings.timing.lockstep
    n_axes = servos.arm.n_axes
    current_unit = servos.arm.current_unit
    torque_limit = servos.torque_limit  # Torque_Limit(48): the loop's largest output, 0.1 %
    cyc = lambda seconds: int(round(seconds / period))  # noqa: E731
    sequencer = Sequencer(
        cmd,
        cyc(settings.lead_s),
        cyc(settings.tail_s),
        None if settings.preroll_s is None else cyc(settings.preroll_s),
        approach_from=theta_start if settings.approach else None,
        period=period,
    )
    expected = (
        settings.lead_s
        + settings.tail_s
        + commands.commanded_duration(cmd) * 1.5
        + 0.2 * sequencer.n_segments
        + 30.0
    ) / period
    n_columns = raw_log.n_columns(n_axes)
    partial_json = None
    if out is not None:
        partial_npy, partial_json = partial_paths(out)
        partial_json.write_text(json.dumps(metadata, indent=1))
        rows = LoggedRows(partial_npy, int(expected), n_columns)
    else:
        rows = MemoryRows(int(expected), n_columns)
    size = int(expected) + cyc(10.0)
    stamps = {name: np.zeros(size) for name in _STAMPS}
    stamps["phase"] = np.zeros(size, dtype=np.int8)
    for name in _PER_AXIS:
        stamps[name] = np.zeros((size, n_axes), dtype=np.int64)
    col = raw_log.column_index(n_axes)
    g = {name: raw_log.group(name, n_axes) for name in raw_log.PER_AXIS_GROUPS}
    read = servos.new_cycle_read()
    theta_previous = theta_start.copy()
    clamp_run = np.zeros(n_axes, dtype=np.int64)
    clamp_hold_cycles = max(1, cyc(settings.clamp_hold_s))
    watchdog_s = settings.watchdog * 1e-3
    fault: Fault | None = None
    torque_state: dict[int, int | None] = {}
    previous_scheduling = current_scheduling()
    realtime = request_realtime(settings.realtime)
    phases: list[int] = []
    t_first = None
    cycle = 0
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        if not stop.signum:  # a signal before the handshake: the torque is never enabled
            servos.enable_torque()
    except BaseException:
        cleanup_partial(rows, partial_json)
        restore_scheduling(previous_scheduling)
        if gc_was_enabled:
            gc.enable()
        gc.unfreeze()
        raise
    t0 = time.perf_counter()
    grid = 0
    t_previous_read = None
    try:
        while not sequencer.done:
            if cycle >= len(stamps["wake"]):
                for name in stamps:
                    stamps[name] = np.concatenate([stamps[name], np.zeros_like(stamps[name])])
            if not lockstep:
                grid = next_cycle(t0, grid, period)
            t_wake = time.perf_counter()
            if stop.signum:
                name = signal.Signals(stop.signum).name
                fault = Fault("signal", f"{name} {stop.signum}", cycle, rows.n)
                break
            t_read = time.perf_counter()
            try:
                servos.read_cycle(read)
            except BusFault as error:
                fault = Fault(error.kind, error.detail, cycle, rows.n)
                break
            t_read_end = time.perf_counter()
            if t_previous_read is not None and t_read - t_previous_read > watchdog_s:
                gap = (t_read - t_previous_read) * 1e3
                fault = Fault("watchdog", f"{gap:.1f} ms between two reads", cycle, rows.n)
                break
            if read.status.any():
                k = int(np.flatnonzero(read.status)[0])
                bits = int(read.status[k])
                fault = Fault(
                    "hardware_error",
                    f"ID {servos.ids[k]} (axis {k + 1}): status 0x{bits:02x} "
                    f"({sts.error_text(bits)})",
                    cycle,
                    rows.n,
                )
                break
            theta = (read.position_ticks - sts.POSITION_CENTRE) * sts.RAD_PER_COUNT
            beyond = (theta < low) | (theta > high)
            if beyond.any():
                axis = int(np.flatnonzero(beyond)[0])
                fault = Fault(
                    "joint_limit",
                    f"axis {axis + 1} at {math.degrees(theta[axis]):.2f} deg, beyond "
                    f"[{math.degrees(low[axis]):.2f}, {math.degrees(high[axis]):.2f}] deg",
                    cycle,
                    rows.n,
                )
                break
            t_stamp = cycle * period if lockstep else t_read
            dt = period if lockstep or t_previous_read is None else t_read - t_previous_read
            reference = sequencer.reference()
            goal = goal_ticks(reference.theta)
            try:
                servos.write_goal_position(goal)
            except BusFault as error:
                fault = Fault(error.kind, error.detail, cycle, rows.n)
                break
            t_write = time.perf_counter()
            clamped = np.abs(read.load) >= CLAMP_FRACTION * torque_limit
            clamp_run = np.where(clamped, clamp_run + 1, 0)
            phase = sequencer.phase
            if sequencer.logged:
                if t_first is None:
                    t_first = t_stamp
                    if on_logging is not None:
                        on_logging(cycle)
                amps = read.current_units * current_unit
                row = rows.next_row()
                row[col["t"]] = t_stamp - t_first
                row[g["theta_logged"]] = theta + math.pi
                row[g["dtheta"]] = (theta - theta_previous) / dt
                row[g["theta_ref"]] = reference.theta
                row[g["dtheta_ref"]] = reference.dtheta
                row[g["ddtheta_ref"]] = reference.ddtheta
                row[g["position_error"]] = reference.theta - theta
                row[g["current_command"]] = amps
                row[g["u_feedforward"]] = 0.0
                row[g["u_feedback"]] = read.load * sts.LOAD_UNIT
                row[g["current_present"]] = amps
                row[g["position_ticks"]] = read.position_ticks
                row[g["goal_current_units"]] = read.current_units
                row[g["clamped"]] = clamped
                row[col["segment"]] = reference.segment
                phases.append(phase)
            stamps["wake"][cycle], stamps["read_start"][cycle] = t_wake - t0, t_read - t0
            stamps["read_end"][cycle], stamps["write_end"][cycle] = t_read_end - t0, t_write - t0
            stamps["phase"][cycle] = phase
            stamps["load"][cycle], stamps["voltage"][cycle] = read.load, read.voltage
            stamps["temperature"][cycle], stamps["status"][cycle] = read.temperature, read.status
            stamps["goal_ticks"][cycle] = goal
            theta_previous = theta
            t_previous_read = t_read
            sequencer.advance(theta, read.moving == 0)
            cycle += 1
            if clamp_run.max() >= clamp_hold_cycles:
                axis = int(np.argmax(clamp_run))
                fault = Fault(
                    "clamp",
                    f"axis {axis + 1} at its torque limit for {clamp_run[axis] * period:.3f} s",
                    cycle,
                    rows.n,
                )
                break
            if progress is not None and cycle % 1000 == 0:
                progress(cycle, PHASE_NAMES[sequencer.phase])
    except BaseException as error:  # a bug or an interrupt outside the handlers: stop the arm first
        fault = Fault("internal", f"{error.__class__.__name__}: {error}", cycle, rows.n)
        torque_state = servos.torque_off()
        raise
    finally:
        if not torque_state:
            torque_state = servos.torque_off()
        restore_scheduling(previous_scheduling)
        if gc_was_enabled:
            gc.enable()
        gc.unfreeze()
        metadata = {**metadata, **servos.stale_counts()}
        recording = finish_recording(
            rows,
            phases,
            stamps,
            cycle,
            fault,
            torque_state,
            metadata,
            settings,
            realtime,
            sequencer,
            out,
            partial_json,
        )
    return recording
