"""Record a command file on a real CRANE-X7 or ViperX 300 S (or the emulator) over dynamixel-sdk.

The arm (`RecorderSettings.arm`) gives the servo bus (arm_bus.py: IDs, models, baud rate, the
shadow servos of dual-servo joints), the command-file format, the joint limits and the
realization constants (the CRANE-X7's file; another arm's from its twin, as the twin records it).

    record_arm(command_file, port, out) -> ArmRecording

Before torque: the command file is checked (joint limits of every waypoint and of the whole
interpolated reference, and the feedforward current of the reference against each axis's
current clamp), the port is opened and its USB latency timer checked, every servo is pinged
(ID, model number, firmware), the device's clock is checked against the timing (a real arm's
runs with time; `timing.py`), and the servos are configured with read-back
(`bus.ServoBus.configure`). Any of these failing raises `InputError` (exit status 2 in the
CLI); torque is never enabled then. SIGINT and SIGTERM are caught from before the port is
opened: one that arrives before torque is enabled stops the recording before it is enabled.

Then the torque handshake, and every 1 ms cycle (target; the measured cycle is logged; in
lockstep timing, for tests and demonstrations on the emulator, cycles run back to back on the
device's bus-driven clock and the log is stamped on the 1 ms grid, see timing.py):

    sync read (indirect block: hardware error, present current, velocity, position)
    -> checks: hardware-error bits, joint limits, the cycle watchdog
    -> reference of the cycle (sequencer.Sequencer: the twin's phases) and the shared
       FF+FB controller (2) (model.controller.realization_law, the twin's and CLIE's law)
    -> sync write of Goal Current -> the clamp watchdog -> the log row

On any fault (no status packet within the watchdog, a corrupt status packet, a hardware-error
bit, a joint beyond its limit by more than JOINT_LIMIT_MARGIN_DEG, a current clamp held longer
than CLAMP_HOLD_S, a cycle later than the watchdog, SIGINT or SIGTERM) the recorder sends goal
current 0 to every servo, switches torque off on every servo with read-back, and writes the
log with every sample logged so far, the fault and its cycle in the metadata.

The log is the twin's raw log (logs/raw_log.py; 106 columns on the CRANE-X7, 2 + 13 n on an
arm of n axes, which the metadata names), the same columns filled the same
way, plus the arm's provenance. While the arm moves, logged rows go straight into a memory-
mapped file beside the log (`<LOG>.<pid>.partial.npy`, with `<LOG>.<pid>.partial.json` holding
the metadata known at the start; pid: the recorder's process), so even a killed process
(SIGKILL, power loss) leaves its samples on disk: `recover_partial` turns them into a raw log
and removes them. A finished or faulted recording writes the log atomically and removes both.
The next `crane-id record` to the same LOG refuses while a killed recorder's partial files lie
there (one line naming them and `recover_partial`); with --force it removes them, saying so.
Every cycle's four stamps (wake-up, read start, read end, write end) go to `<LOG stem>.cycles.npz`.
"""

from __future__ import annotations

import errno
import gc
import json
import math
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.constants import CONTROL_PERIOD_S, ENCODER_RESOLUTION_RAD, KT
from crane_lib.errors import InputError, partial_name, process_ended, temporaries_of
from crane_lib.excitation import commands
from crane_lib.excitation.commands import CommandFile, check_command
from crane_lib.hardware import bus as bus_module
from crane_lib.hardware import control_table as ct
from crane_lib.hardware.arm_bus import BAUD_REGISTER, CRANE_X7, ArmBus, arm_bus
from crane_lib.hardware.sequencer import DWELL, LEAD, PHASE_NAMES, SEGMENT, TAIL, WAIT, Sequencer
from crane_lib.hardware.timing import REALTIME, Timing, next_cycle
from crane_lib.logs import raw_log
from crane_lib.logs.npz_io import write_npz
from crane_lib.model import controller
from crane_lib.model.controller import RealizationConstants, realization_law
from crane_lib.model.robot_description import joint_limits_rad
from crane_lib.twin.recorder import arm_constants, read_arm_command, segment_profiles

RECORDER_VERSION = 1
JOINT_LIMIT_MARGIN_DEG = (
    5.0  # beyond the manufacturer's limits (joint 4's upper limit, 0 deg, is where every file ends)
)
# one axis at its current clamp this long stops the arm (safety_margins shows a recording's longest
# run)
CLAMP_HOLD_S = 1.0
WATCHDOG_MS = (
    REALTIME.watchdog_ms
)  # = logs.raw_log.MAX_STAMP_GAP_S: a longer gap would make the log unreadable
BUS_WATCHDOG_UNITS = 5  # the servos stop by themselves after 5 x 20 ms without a packet
DEFAULT_IDLE_S = 3.0  # logged idle before and after the motion (the twin draws 3..10 s)
LATE_FACTOR = 1.5  # a cycle longer than 1.5 periods counts as late

_STAMPS = ("wake", "read_start", "read_end", "write_end")


@dataclass
class RecorderSettings:
    period_s: float = CONTROL_PERIOD_S
    lead_s: float = DEFAULT_IDLE_S
    tail_s: float = DEFAULT_IDLE_S
    preroll_s: float | None = None  # default: the twin's PREROLL_S
    approach: bool = True
    watchdog_ms: float | None = None  # default: the timing's (20 ms in real time)
    joint_margin_deg: float = JOINT_LIMIT_MARGIN_DEG
    clamp_hold_s: float = CLAMP_HOLD_S
    bus_watchdog_units: int = BUS_WATCHDOG_UNITS
    realtime: bool = (
        True  # ask for SCHED_FIFO (root or CAP_SYS_NICE); what it got is in the metadata
    )
    baud: int | None = None  # bit/s; None: the arm's bus (the CRANE-X7's 3 Mbit/s), set on creation
    timing: Timing = REALTIME  # timing.LOCKSTEP only for tests and demonstrations on the emulator
    arm: str = CRANE_X7  # the arm_description.ARMS key of the arm on the port (arm_bus.arm_bus)

    def __post_init__(self):
        if self.baud is None:
            self.baud = arm_bus(self.arm).baud

    @property
    def watchdog(self) -> float:
        """The cycle watchdog in ms: two encoder reads further apart (host clock) stop the arm."""
        return self.timing.watchdog_ms if self.watchdog_ms is None else float(self.watchdog_ms)

    @property
    def reply_timeout_ms(self) -> float:
        """The reply timeout (ms): the timing's, at most the watchdog."""
        return min(self.timing.reply_timeout_ms, self.watchdog)


@dataclass
class Fault:
    kind: str  # timeout, crc, bus, hardware_error, joint_limit, clamp, watchdog, signal, disk,
    # internal
    detail: str
    cycle: int
    sample: int  # logged rows before the fault

    def text(self) -> str:
        """The fault as printed ("kind: detail")."""
        return f"{self.kind}: {self.detail}"


@dataclass
class ArmRecording:
    samples: np.ndarray
    metadata: dict[str, str]
    stamps: dict[str, np.ndarray]  # per cycle: wake, read_start, read_end, write_end (s), phase
    fault: Fault | None
    torque_off: dict[int, int | None] = field(
        default_factory=dict
    )  # Torque Enable read back per ID after the stop
    path: Path | None = None

    @property
    def exit_status(self) -> int:
        """The recorder's exit status: 0, 1 on a fault, 128 + the signal's number."""
        if self.fault is None:
            return 0
        if self.fault.kind == "signal":
            return 128 + int(self.fault.detail.split()[-1])
        return 1

    def cycle_times_ms(self) -> np.ndarray:
        """Time between consecutive encoder reads over the whole run (ms)."""
        return np.diff(self.stamps["read_start"]) * 1e3


# ---------------------------------------------------------------- checks before torque


def check_before_torque(
    cmd: CommandFile, constants: RealizationConstants | None, period: float = CONTROL_PERIOD_S
) -> dict[str, str]:
    """The command file against the joint limits (waypoints and the whole reference) and, with
    `constants` (current mode; None for an arm in position mode, where the host commands no
    current), the current clamps (the reference's feedforward current); returns what was
    checked."""
    check_command(cmd)  # every waypoint inside the joint limits, the closing rows
    profiles = segment_profiles(cmd, period)
    limits = cmd.command_format.limits()  # the CRANE-X7's: joint_limits_rad()
    worst_share = 0.0
    for k in range(profiles.start.shape[0]):
        count = profiles.count[k]
        if count == 0:
            continue
        rows = slice(profiles.offset[k], profiles.offset[k] + count)
        delta = profiles.delta[k]
        theta = profiles.start[k] + profiles.s[rows] * delta
        outside = (theta < limits[:, 0] - commands.LIMIT_TOLERANCE_RAD) | (
            theta > limits[:, 1] + commands.LIMIT_TOLERANCE_RAD
        )
        if outside.any():
            i, axis = np.argwhere(outside)[0]
            raise InputError(
                f"{cmd.name}: segment {k + 1}",
                f"the reference reaches {math.degrees(theta[i, axis]):.2f} deg on axis {axis + 1}",
                f"inside the joint limits {np.degrees(limits[axis]).round(2).tolist()} deg",
            )
        if constants is None:
            continue
        limit_amps = constants.limit_units * constants.current_unit
        feedforward = constants.m_hat * (
            profiles.sdd[rows] * delta + constants.d_hat * profiles.sd[rows] * delta
        )
        amps = np.abs(feedforward) / constants.kt_command
        share = amps / limit_amps
        if share.max() > 1.0:
            i, axis = np.unravel_index(np.argmax(share), share.shape)
            raise InputError(
                f"{cmd.name}: segment {k + 1}",
                f"axis {axis + 1} needs {amps[i, axis]:.3f} A of feedforward current alone",
                f"at most the clamp {limit_amps[axis]:.3f} A",
            )
        worst_share = max(worst_share, float(share.max()))
    if constants is None:
        return {"check_reference_inside_joint_limits": "yes"}
    return {"check_feedforward_current_max_share_of_clamp": f"{worst_share:.4f}"}


# ---------------------------------------------------------------- the loop


class SignalStop:
    """SIGINT / SIGTERM during the recording: remember it, stop at the end of the cycle."""

    def __init__(self):
        self.signum = 0
        self.previous = {}

    def __enter__(self):
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self.previous[signum] = signal.signal(signum, self._handler)
            except ValueError:  # not the main thread: signals stay with their owner
                pass
        return self

    def _handler(self, signum, frame):
        self.signum = signum

    def __exit__(self, *exc):
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def request_realtime(enable: bool) -> str:
    """Ask for SCHED_FIFO 50 for this process; returns what it got (see `restore_scheduling`)."""
    if not enable:
        return "off"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
        return "SCHED_FIFO 50"
    except (AttributeError, PermissionError, OSError) as error:
        return f"refused ({error.__class__.__name__})"


def current_scheduling():
    """The process's scheduling policy and parameters, or None where unavailable."""
    try:
        return os.sched_getscheduler(0), os.sched_getparam(0)
    except (AttributeError, OSError):
        return None


def restore_scheduling(previous) -> None:
    """Back to the policy `current_scheduling()` returned (the caller's process, a notebook
    kernel or a test worker, must not go on at real-time priority)."""
    if previous is not None:
        try:
            os.sched_setscheduler(0, previous[0], previous[1])
        except OSError:
            pass


def _sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version("dynamixel-sdk")
    except Exception:  # noqa: BLE001
        return "unknown"


class LoggedRows:
    """Logged rows in a memory-mapped .npy beside the log (survives a killed process)."""

    def __init__(self, path: Path, capacity: int, n_columns: int = raw_log.N_COLUMNS):
        self.path = path
        self.n = 0
        self.array = np.lib.format.open_memmap(
            path, mode="w+", dtype=np.float64, shape=(max(capacity, 1000), n_columns)
        )
        _reserve(path)

    def next_row(self) -> np.ndarray:
        """The next row to fill (the file grows by doubling when full)."""
        if self.n >= self.array.shape[0]:
            growing = self.path.with_suffix(".grow.npy")
            try:
                grown = np.lib.format.open_memmap(
                    growing,
                    mode="w+",
                    dtype=np.float64,
                    shape=(2 * self.array.shape[0], self.array.shape[1]),
                )
                _reserve(growing)
            except OSError as error:  # a full disk: the rows so far stay in self.path
                growing.unlink(missing_ok=True)
                raise OSError(error.errno, error.strerror, str(growing)) from error
            grown[: self.n] = self.array[: self.n]
            del self.array
            os.replace(self.path.with_suffix(".grow.npy"), self.path)
            self.array = grown
        row = self.array[self.n]
        self.n += 1
        return row

    def samples(self) -> np.ndarray:
        """The rows filled so far, copied out of the file."""
        return np.array(self.array[: self.n])

    def remove(self) -> None:
        """Delete the file."""
        del self.array
        self.path.unlink(missing_ok=True)


def _reserve(path: Path) -> None:
    """Allocate every block of the file now: a page of a memory map written when the disk is
    full kills the process with SIGBUS, and an allocation refused here is an OSError instead."""
    with open(path, "r+b") as handle:
        os.posix_fallocate(handle.fileno(), 0, os.fstat(handle.fileno()).st_size)


def _kept_on_full_disk(error: OSError, target: Path, rows) -> OSError:
    """The one-line error of a recording the disk stopped: it names the file that did not fit
    and where the logged rows are kept (the partial file, for `recover_partial`)."""
    kept = (
        f"; torque off, the {rows.n} samples logged are kept in {rows.path} (recover_partial "
        "once there is room)"
        if rows.n and rows.path is not None
        else "; torque off"
    )
    return OSError(error.errno, f"{error.strerror}{kept}", str(target))


def partial_paths(out: Path) -> tuple[Path, Path]:
    """The partial rows and metadata files a recording of `out` keeps while it runs."""
    return partial_name(out, ".npy"), partial_name(out, ".json")


def cycles_path(out: Path) -> Path:
    """The file of per-cycle timings beside the log `out`."""
    name = out.name
    for suffix in (".csv.gz", ".npz", ".csv"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return out.with_name(name + ".cycles.npz")


def record_arm(
    command_file,
    port: str,
    out=None,
    settings: RecorderSettings | None = None,
    constants: RealizationConstants | None = None,
    progress=None,
    on_logging=None,
) -> ArmRecording:
    """Execute `command_file` (path or CommandFile) on the arm behind `port`.

    Writes the raw log to `out` (suffix picks the container) when given; returns the recording
    either way. Raises InputError before torque for bad input; faults during the motion are
    returned in `ArmRecording.fault` (the log is written all the same). `progress(cycle, phase)`
    is called every 1000 cycles, `on_logging(cycle)` once, when the first row is logged (the
    torque is on and SIGINT/SIGTERM are the recorder's)."""
    settings = settings or RecorderSettings()
    if settings.timing.lockstep and abs(settings.period_s - settings.timing.period_s) > 1e-12:
        raise ValueError(
            f"lockstep timing runs the emulator's {settings.timing.period_s * 1e3:g} ms period, "
            f"not {settings.period_s * 1e3:g} ms"
        )
    bus = arm_bus(settings.arm)
    constants = arm_constants(bus.key) if constants is None else constants
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
    checks = check_before_torque(cmd, constants, settings.period_s)
    check_bus_speed(bus, settings.baud, settings.period_s, port)
    limits = cmd.command_format.limits()
    margin = math.radians(settings.joint_margin_deg)
    low, high = limits[:, 0] - margin, limits[:, 1] + margin

    # from here on SIGINT and SIGTERM only set a flag: the recorder decides how to stop, and a
    # signal that comes before the torque handshake means the torque is never enabled
    with SignalStop() as stop:
        servos = bus_module.ServoBus(
            port,
            baud=settings.baud,
            arm=bus,
            timing=settings.timing,
            reply_timeout_ms=settings.reply_timeout_ms,
        )
        servos.open()
        try:
            infos = servos.discover()
            servos.check_clock()
            configuration = servos.configure(constants.limit_units)
            read = servos.new_cycle_read()
            try:
                servos.read_cycle(read)
            except bus_module.BusFault as fault:
                raise InputError(
                    f"{port}",
                    f"the first sync read failed ({fault})",
                    "every servo answering the cycle's sync read",
                ) from None
            theta_start = read.position_ticks * ENCODER_RESOLUTION_RAD - math.pi
            metadata = _static_metadata(
                cmd,
                command_name,
                command_sha,
                port,
                servos,
                infos,
                configuration,
                constants,
                settings,
                checks,
            )
            return _run(
                cmd,
                servos,
                settings,
                constants,
                theta_start,
                low,
                high,
                metadata,
                out,
                progress,
                stop,
                on_logging,
            )
        finally:
            servos.close()


def _arm_metadata(servos) -> dict[str, str]:
    """What the log says of another arm than the CRANE-X7: its key (raw_log.layout), the
    torque constants of the torque record per axis, how dual-servo currents were combined."""
    bus = servos.arm
    if bus.key == CRANE_X7:
        return {"kt_logged": " ".join(f"{v:.6g}" for v in KT)}
    kt = [sum(s.kt for s in bus.axis_servos(axis)) for axis in range(1, bus.n_axes + 1)]
    shadows = " ".join(f"{s.dxl_id}:{s.primary_id}" for s in bus.shadows) or "none"
    return {
        "arm": bus.key,
        "kt_logged": " ".join(f"{v:.6g}" for v in kt),
        "servo_shadows": shadows,
        "servo_reverse": " ".join(str(int(s.reverse)) for s in bus.servos),
        "current_present_of_shadowed_axes": "both servos' torques (kt x present current) summed, "
        "divided by the axis's kt_logged",
        "bus_wire_ms_per_cycle": f"{bus_wire_seconds(bus) * 1e3:.3f}",
    }


def bus_wire_seconds(bus: ArmBus, baud: float | None = None) -> float:
    """Time one cycle's packets take on the wire at `baud` (default: the bus's rate; 10 bits per
    byte): the sync read (14 + one byte per ID), a status packet per servo (11 + the block), and
    the sync write of Goal Current to the primaries (14 + ID and value each)."""
    n_ids, n_goals = len(bus.ids), len(bus.primary_ids)
    read = 14 + n_ids + n_ids * (11 + ct.CYCLE_READ_LENGTH)
    write = 14 + n_goals * (1 + ct.GOAL_CURRENT.size)
    return (read + write) * 10.0 / (bus.baud if baud is None else baud)


def check_bus_speed(bus: ArmBus, baud: float, period_s: float, port: str) -> None:
    """InputError, before the port is opened, when one cycle's packets need the whole control
    period on the wire at `baud`: every cycle would be late and the log of no use."""
    wire = bus_wire_seconds(bus, baud)
    if wire < period_s:
        return
    fast = [rate for rate in sorted(BAUD_REGISTER) if bus_wire_seconds(bus, rate) < period_s]
    remedy = (
        f"every servo's Baud Rate(8) set to {fast[0] / 1e6:g} Mbit/s (value "
        f"{BAUD_REGISTER[fast[0]]}, e.g. with DYNAMIXEL Wizard 2.0) and --baud {fast[0]}"
        if fast
        else "fewer servos on the bus"
    )
    raise InputError(
        f"{port} at {baud / 1e6:g} Mbit/s",
        f"one cycle's packets take {wire * 1e3:.2f} ms on the wire "
        f"({len(bus.ids)} servos), not less than the {period_s * 1e3:g} ms control "
        "period",
        f"a faster bus: {remedy}",
    )


def _static_metadata(
    cmd, command_name, command_sha, port, servos, infos, configuration, constants, settings, checks
) -> dict[str, str]:
    latency = servos.latency_timer
    return {
        "source": f"{servos.arm.name} over dynamixel-sdk {_sdk_version()} "
        f"(crane_lib.hardware.recorder v{RECORDER_VERSION})",
        "trajectory": cmd.name,
        "command_file": command_name,
        "command_sha256": command_sha,
        "port": str(port),
        "baud_rate": str(servos.baud),
        "usb_latency_timer_ms": "none (not a USB serial adapter)"
        if latency is None
        else str(latency),
        "servo_ids": " ".join(str(i.dxl_id) for i in infos),
        "servo_models": " ".join(f"{i.model_number}:{i.model}" for i in infos),
        "servo_firmware": " ".join(str(i.firmware) for i in infos),
        **configuration,
        **checks,
        "controller": f"K_P={constants.k_p:.6g} K_V={constants.k_v:.6g} K_I={constants.k_i:.6g}",
        "realization_M_hat": " ".join(f"{v:.6g}" for v in constants.m_hat),
        "realization_D_hat": " ".join(f"{v:.6g}" for v in constants.d_hat),
        **_arm_metadata(servos),
        "target_period_ms": f"{settings.period_s * 1e3:g}",
        "timing": settings.timing.name,
        "timing_detail": settings.timing.describe(),
        "watchdog_ms": f"{settings.watchdog:g}",
        "reply_timeout_ms": f"{settings.reply_timeout_ms:g}",
        "bus_watchdog_ms": str(settings.bus_watchdog_units * 20),
        "joint_limit_margin_deg": f"{settings.joint_margin_deg:g}",
        "clamp_hold_limit_s": f"{settings.clamp_hold_s:g}",
        "commanded_duration_s": f"{commands.commanded_duration(cmd):.3f}",
        "crane_lib_sources": fingerprint.source_digest(__file__, bus_module, controller),
    }


def _run(
    cmd,
    servos,
    settings,
    constants,
    theta_start,
    low,
    high,
    metadata,
    out,
    progress,
    stop,
    on_logging,
) -> ArmRecording:
    period = settings.period_s
    lockstep = settings.timing.lockstep
    n_axes = servos.arm.n_axes
    current_unit = servos.arm.current_unit
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
    rows = None
    partial_json = None
    if out is not None:
        partial_npy, partial_json = partial_paths(out)
        try:
            partial_json.write_text(json.dumps(metadata, indent=1))
            rows = LoggedRows(partial_npy, int(expected), raw_log.n_columns(n_axes))
        except OSError as error:  # a full disk names no file: name the partial file (no torque yet)
            partial_json.unlink(missing_ok=True)
            partial_npy.unlink(missing_ok=True)
            raise OSError(
                error.errno, error.strerror, str(error.filename or partial_json)
            ) from error
    else:
        rows = MemoryRows(int(expected), raw_log.n_columns(n_axes))
    stamps = {name: np.zeros(int(expected) + cyc(10.0)) for name in _STAMPS}
    stamps["phase"] = np.zeros(len(stamps["wake"]), dtype=np.int8)
    law = constants.law_arguments()
    out_law = np.zeros((controller.OUT_ROWS, n_axes))
    integral = np.zeros(n_axes)
    theta_previous = theta_start.copy()
    read = servos.new_cycle_read()
    clamp_run = np.zeros(n_axes, dtype=np.int64)
    clamp_hold_cycles = max(1, cyc(settings.clamp_hold_s))
    watchdog_s = settings.watchdog * 1e-3
    fault: Fault | None = None
    torque_state: dict[int, int | None] = {}
    previous_scheduling = current_scheduling()
    realtime = request_realtime(settings.realtime)
    col = raw_log.column_index(n_axes)
    g = {
        name: raw_log.group(name, n_axes)
        for name in (
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
        )
    }
    phases = []  # phase of each logged row
    disk_error = None  # the OSError of a full disk while the rows grew
    t_first = None
    cycle = 0
    # load the compiled law (numba's cache) and touch every path of the cycle before torque is on
    realization_law(
        theta_start,
        theta_start * 0.0,
        theta_start * 0.0,
        theta_start,
        theta_start,
        period,
        np.zeros(n_axes),
        *law,
        out_law,
    )
    sequencer.reference()
    # the cyclic garbage collector can pause the interpreter for tens of ms in a large process (a
    # notebook kernel); the loop creates no reference cycles, so it is switched off until the end
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        if not stop.signum:  # a signal before the handshake: the torque is never enabled
            servos.enable_torque(settings.bus_watchdog_units)
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
            if not lockstep:  # the cycle starts at the next point of the 1 ms grid
                grid = next_cycle(t0, grid, period)
            t_wake = time.perf_counter()
            if stop.signum:
                fault = Fault(
                    "signal", f"{signal.Signals(stop.signum).name} {stop.signum}", cycle, rows.n
                )
                break
            t_read = time.perf_counter()
            try:
                servos.read_cycle(read)
            except bus_module.BusFault as error:
                fault = Fault(error.kind, error.detail, cycle, rows.n)
                break
            t_read_end = time.perf_counter()
            if t_previous_read is not None and t_read - t_previous_read > watchdog_s:
                fault = Fault(
                    "watchdog",
                    f"{(t_read - t_previous_read) * 1e3:.1f} ms between two reads",
                    cycle,
                    rows.n,
                )
                break
            if read.hardware_error.any():
                k = int(np.flatnonzero(read.hardware_error)[0])  # the servo in bus order
                bits, axis = int(read.hardware_error[k]), servos.arm.servos[k].axis - 1
                fault = Fault(
                    "hardware_error",
                    f"ID {servos.bus_ids[k]} (axis {axis + 1}): "
                    f"Hardware Error Status 0x{bits:02x} "
                    f"({ct.hardware_error_text(bits)})",
                    cycle,
                    rows.n,
                )
                break
            theta = read.position_ticks * ENCODER_RESOLUTION_RAD - math.pi
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
            # the time the controller and the log see: the host's, or in lockstep the device's grid
            t_stamp = cycle * period if lockstep else t_read
            dt = period if lockstep or t_previous_read is None else t_read - t_previous_read
            reference = sequencer.reference()
            realization_law(
                reference.theta,
                reference.dtheta,
                reference.ddtheta,
                theta,
                theta_previous,
                dt,
                integral,
                *law,
                out_law,
            )
            try:
                servos.write_goal_current(out_law[controller.OUT_GOAL_UNITS])
            except bus_module.BusFault as error:
                fault = Fault(error.kind, error.detail, cycle, rows.n)
                break
            t_write = time.perf_counter()
            clamped = out_law[controller.OUT_CLAMPED] > 0.5
            clamp_run = np.where(clamped, clamp_run + 1, 0)
            phase = sequencer.phase
            if sequencer.logged:
                if t_first is None:
                    t_first = t_stamp
                    if on_logging is not None:
                        on_logging(cycle)
                try:
                    row = rows.next_row()
                except OSError as error:  # the disk is full: stop the arm, keep the rows so far
                    fault = Fault("disk", f"{error.filename}: {error.strerror}", cycle, rows.n)
                    disk_error = error
                    break
                row[col["t"]] = t_stamp - t_first
                row[g["theta_logged"]] = theta + math.pi
                row[g["dtheta"]] = out_law[controller.OUT_VELOCITY]
                row[g["theta_ref"]] = reference.theta
                row[g["dtheta_ref"]] = reference.dtheta
                row[g["ddtheta_ref"]] = reference.ddtheta
                row[g["position_error"]] = reference.theta - theta
                row[g["current_command"]] = (
                    out_law[controller.OUT_GOAL_UNITS] * constants.current_unit
                )
                row[g["u_feedforward"]] = out_law[controller.OUT_FEEDFORWARD]
                row[g["u_feedback"]] = out_law[controller.OUT_FEEDBACK]
                row[g["current_present"]] = read.current_units * current_unit
                row[g["position_ticks"]] = read.position_ticks
                row[g["goal_current_units"]] = out_law[controller.OUT_GOAL_UNITS]
                row[g["clamped"]] = out_law[controller.OUT_CLAMPED]
                row[col["segment"]] = reference.segment
                phases.append(phase)
            stamps["wake"][cycle], stamps["read_start"][cycle] = t_wake - t0, t_read - t0
            stamps["read_end"][cycle], stamps["write_end"][cycle] = t_read_end - t0, t_write - t0
            stamps["phase"][cycle] = phase
            theta_previous = theta
            t_previous_read = t_read
            sequencer.advance(theta)
            cycle += 1
            if clamp_run.max() >= clamp_hold_cycles:
                axis = int(np.argmax(clamp_run))
                fault = Fault(
                    "clamp",
                    f"axis {axis + 1} held at its current clamp for {clamp_run[axis] * period:.3f} "
                    "s",
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
            disk_error,
        )
    return recording


class MemoryRows(LoggedRows):
    """Logged rows in memory, for a recording without a log file."""

    # super().__init__ not called: no file
    def __init__(self, capacity: int, n_columns: int = raw_log.N_COLUMNS):  # noqa
        self.path = None
        self.n = 0
        self.array = np.zeros((max(capacity, 1000), n_columns))

    def next_row(self) -> np.ndarray:
        """The next row to fill (the array grows by doubling when full)."""
        if self.n >= self.array.shape[0]:
            self.array = np.vstack([self.array, np.zeros_like(self.array)])
        row = self.array[self.n]
        self.n += 1
        return row

    def remove(self) -> None:
        """Nothing to delete: the rows live in memory."""
        pass


def cleanup_partial(rows, partial_json) -> None:
    """Delete a recording's partial rows and metadata files."""
    rows.remove()
    if partial_json is not None:
        partial_json.unlink(missing_ok=True)


def finish_recording(
    rows,
    phases,
    stamps,
    cycles_run,
    fault,
    torque_state,
    metadata,
    settings,
    realtime,
    sequencer,
    out,
    partial_json,
    disk_error=None,
) -> ArmRecording:
    """Write the log (every logged row, the fault and the cycle statistics in its metadata) and
    the cycle stamps, remove the partial files, and return the recording. A full disk (while the
    rows grew, `disk_error`, or while writing the log) raises an OSError naming the file, with the
    partial files kept."""
    samples = rows.samples()
    stamps = {name: values[:cycles_run] for name, values in stamps.items()}
    period = settings.period_s
    phases = np.array(phases, dtype=np.int64)
    meta = dict(metadata)
    meta.update(_cycle_statistics(stamps, period))
    meta["scheduling"] = realtime
    if len(samples):
        t = samples[:, raw_log.COLUMN["t"]]
        moving = np.flatnonzero(np.isin(phases, (SEGMENT, WAIT, DWELL)))
        motion_start = int(moving[0]) if moving.size else 0
        motion_end = int(moving[-1]) + 1 if moving.size else 0
        meta.update(
            {
                "realized_motion_s": f"{t[motion_end - 1] - t[motion_start] + period:.3f}"
                if moving.size
                else "0.000",
                "record_duration_s": f"{t[-1] - t[0] + period:.3f}",
                "motion_start_sample": str(motion_start),
                "motion_end_sample": str(motion_end),
                "lead_idle_s": f"{np.count_nonzero(phases == LEAD) * period:.3f}",
                "tail_idle_s": f"{np.count_nonzero(phases == TAIL) * period:.3f}",
            }
        )
    meta.update(
        {
            "in_position_wait_s": f"{sequencer.wait_total * period:.3f}",
            "in_position_timeouts": str(sequencer.timeouts),
            "samples": str(len(samples)),
            "fault": "none" if fault is None else fault.text(),
            "fault_cycle": "" if fault is None else str(fault.cycle),
            "fault_sample": "" if fault is None else str(fault.sample),
            "torque_off_read_back": " ".join(
                f"{i}:{'?' if v is None else v}" for i, v in torque_state.items()
            ),
        }
    )
    recording = ArmRecording(samples, meta, stamps, fault, torque_state)
    if out is not None:
        if disk_error is not None:
            raise _kept_on_full_disk(disk_error, Path(disk_error.filename), rows)
        try:
            if len(samples):
                raw_log.write_raw_log(out, samples, meta)
                recording.path = out
            write_npz(cycles_path(out), {**stamps, "period_s": np.array(period)})
        except OSError as error:
            if recording.path is not None:  # the log is whole: only its cycle timings are lost
                cleanup_partial(rows, partial_json)
                raise
            if error.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise _kept_on_full_disk(error, out, rows) from error
        cleanup_partial(rows, partial_json)
    return recording


def _cycle_statistics(stamps: dict[str, np.ndarray], period: float) -> dict[str, str]:
    reads = stamps["read_start"]
    if len(reads) < 2:
        return {"cycles": str(len(reads))}
    cycle_ms = np.diff(reads) * 1e3
    bus_ms = (stamps["write_end"] - stamps["read_start"]) * 1e3
    return {
        "cycles": str(len(reads)),
        "cycle_ms_median": f"{np.median(cycle_ms):.4f}",
        "cycle_ms_p99": f"{np.percentile(cycle_ms, 99):.4f}",
        "cycle_ms_max": f"{cycle_ms.max():.4f}",
        "cycles_late": str(int(np.count_nonzero(cycle_ms > LATE_FACTOR * period * 1e3))),
        "cycles_missed": str(
            int(np.sum(np.maximum(np.floor(cycle_ms / (period * 1e3) + 1e-9) - 1, 0)))
        ),
        "read_write_ms_median": f"{np.median(bus_ms):.4f}",
        "read_write_ms_p99": f"{np.percentile(bus_ms, 99):.4f}",
    }


def safety_margins(log: raw_log.RawLog) -> dict[str, float]:
    """What a recording needed of the recorder's limits: the largest excursion beyond a joint
    limit (deg, 0 when inside) and the longest run of one axis at its current clamp (s)."""
    limits = joint_limits_rad() if log.arm == CRANE_X7 else _arm_limits(log.arm)
    beyond = np.maximum(log.theta - limits[:, 1], limits[:, 0] - log.theta).max(axis=0)
    longest = 0
    for axis in range(log.n_axes):
        flags = np.concatenate([[0], log.clamped[:, axis].astype(np.int8), [0]])
        edges = np.diff(flags)
        runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
        longest = max(longest, int(runs.max()) if runs.size else 0)
    axis = int(np.argmax(beyond))
    return {
        "beyond_limit_deg": max(0.0, float(np.degrees(beyond[axis]))),
        "beyond_limit_axis": axis + 1,
        "longest_clamp_s": longest * CONTROL_PERIOD_S,
    }


def _arm_limits(key: str) -> np.ndarray:
    """(n_axes, 2) joint limits (rad) of another arm than the CRANE-X7."""
    from crane_lib.model.arm_description import load_arm

    return load_arm(key).joint_limits()


def _killed_partial(log_path: Path) -> tuple[Path, Path]:
    """The partial rows and metadata of the latest killed recorder of `log_path` (its process
    has ended): `<LOG>.<pid>.partial.npy`, or `<LOG>.partial.npy` as earlier versions named it."""
    candidates = [
        path
        for path, pid in temporaries_of(log_path)
        if path.name.endswith(".partial.npy")
        and not path.name.endswith(".grow.npy")
        and process_ended(pid)
    ]
    legacy = log_path.with_name(log_path.name + ".partial.npy")
    if legacy.is_file():
        candidates.append(legacy)
    if not candidates:
        raise InputError(
            str(log_path.with_name(log_path.name + ".<pid>.partial.npy")),
            "no such file (of a recorder that has ended)",
            "the partial recording a killed recorder leaves beside its log",
        )
    npy = max(candidates, key=lambda path: path.stat().st_mtime)
    return npy, npy.with_name(npy.name[: -len(".npy")] + ".json")


def recover_partial(log_path, repaired_out=None) -> Path:
    """The rows a killed recorder left in `<LOG>.<pid>.partial.npy` as a raw log (`repaired_out`,
    default LOG itself), with the metadata of `<LOG>.<pid>.partial.json` and fault 'killed';
    the partial files are removed once the log is written."""
    log_path = Path(log_path)
    partial_npy, partial_json = _killed_partial(log_path)
    array = np.load(partial_npy, mmap_mode="r")
    t = array[:, raw_log.COLUMN["t"]]
    written = (
        1 + int(np.argmax(np.diff(t) <= 0)) if len(t) > 1 and np.any(np.diff(t) <= 0) else len(t)
    )
    meta = json.loads(partial_json.read_text()) if partial_json.is_file() else {}
    meta.update({"fault": "killed: recovered from the partial recording", "samples": str(written)})
    out = Path(repaired_out) if repaired_out is not None else log_path
    raw_log.write_raw_log(out, np.array(array[:written]), meta)
    del array
    for path in (partial_npy, partial_json, partial_npy.with_suffix(".grow.npy")):
        path.unlink(missing_ok=True)
    return out
