"""The recorder's side of the DYNAMIXEL bus, over dynamixel-sdk (Protocol 2.0).

`ServoBus.open` checks the port, its USB latency timer, and every servo (ID, model number,
firmware) before anything is written; `configure` puts the servos into current control with
read-back and maps the cycle's read block through indirect addresses; `enable_torque` is the
torque handshake (write, read back, all or nothing); `read_cycle` / `write_goal_current` are the
two group transfers of every 1 ms cycle; `torque_off` is the safe stop, which never raises.

Everything that is wrong before torque is enabled raises `InputError` naming the port or the ID
and what was expected (the CLI turns it into exit status 2); nothing is ever enabled then.

dynamixel-sdk 4.x (PyPI `dynamixel-sdk`, ROBOTIS-GIT/DynamixelSDK, python/src/dynamixel_sdk)
is used as published, with two subclasses:

* `WaitingPortHandler` (of its PortHandler): the SDK polls the serial port in a tight loop while
  it waits for a status packet, and bases its reply timeout on a 16 ms latency timer it assumes.
  The subclass waits in the kernel (select) instead of spinning, which on a shared two-core
  machine leaves the CPU to the servo side (the emulator) instead of fighting it, and takes the
  reply timeout from the recorder's timing. Before every transaction it discards what is waiting
  on the port (the SDK's `clearPort`, which is `reset_input_buffer` since 4.0.5 and was `flush`,
  an output flush, before), counting it; after every timeout or corrupt packet it drains the port
  until it has been quiet for the timing's settle time (`discard_stale`).
* `CheckedPacketHandler` (of its Protocol2PacketHandler): the SDK takes the first status packet
  whose ID matches as the reply, whatever its length. Protocol 2.0 has no sequence number, so a
  status packet that comes after its own request timed out (a servo or, on the emulator, a host
  that stalled) was read as the answer to the next request of the same servo: a write's empty
  status packet answering a one-byte read gives the read its CRC's low byte (this is how a
  Torque Enable once "read" 41 on a loaded CI machine). The subclass accepts a status packet
  only if its ID and its length are the request's (a read of n bytes: n + 4; a ping: 7; any
  other instruction: 4), discards every other one and counts it (`stale_packets`), and drains
  the port after a timeout. The log's metadata carries both counts.
"""

from __future__ import annotations

import os
import select
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import dynamixel_sdk as sdk
import numpy as np
from dynamixel_sdk.protocol2_packet_handler import (
    PKT_ERROR,
    PKT_ID,
    PKT_INSTRUCTION,
    PKT_LENGTH_H,
    PKT_LENGTH_L,
    PKT_PARAMETER0,
    Protocol2PacketHandler,
)
from serial import SerialException

from crane_lib.errors import InputError
from crane_lib.hardware import control_table as ct
from crane_lib.hardware.arm_bus import ArmBus, arm_bus
from crane_lib.hardware.timing import REALTIME, Timing

LATENCY_TIMER_LIMIT_MS = 1  # a 1 ms cycle needs the adapter to forward every byte within 1 ms
SETUP_REPLY_TIMEOUT_MS = (
    250.0  # before torque, a slow answer is no danger: wait longer than the SDK's 34 ms
)
SYSFS_USB_SERIAL = Path("/sys/bus/usb-serial/devices")
PTY_SLAVE_MAJORS = range(136, 144)  # Linux devices.txt: Unix98 PTY slaves
CLOCK_CHECK_S = 0.02  # the Realtime Tick is read twice this far apart (host time)
COMM_NAMES = {
    sdk.COMM_SUCCESS: "success",
    sdk.COMM_PORT_BUSY: "port busy",
    sdk.COMM_TX_FAIL: "transmit failed",
    sdk.COMM_RX_FAIL: "no status packet",
    sdk.COMM_TX_ERROR: "bad instruction packet",
    sdk.COMM_RX_WAITING: "still receiving",
    sdk.COMM_RX_TIMEOUT: "timeout (no status packet)",
    sdk.COMM_RX_CORRUPT: "corrupt status packet (CRC)",
    sdk.COMM_NOT_AVAILABLE: "not available",
}
PACKET_ERRORS = {
    ct.ERROR_RESULT_FAIL: "result fail",
    ct.ERROR_INSTRUCTION: "instruction error",
    ct.ERROR_CRC: "CRC error",
    ct.ERROR_DATA_RANGE: "data range error",
    ct.ERROR_DATA_LENGTH: "data length error",
    ct.ERROR_DATA_LIMIT: "data limit error",
    ct.ERROR_ACCESS: "access error",
}
_CYCLE_STRUCT = struct.Struct(
    "<Bhii"
)  # Hardware Error Status, Present Current, Present Velocity, Present Position


class BusFault(RuntimeError):
    """A fault on the bus while the arm is under torque (timeout, CRC, a servo's error)."""

    def __init__(self, kind: str, detail: str):
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


def comm_text(result: int) -> str:
    """The SDK's communication result as words."""
    return COMM_NAMES.get(result, f"result {result}")


def packet_error_text(error: int) -> str:
    """A status packet's error byte as words."""
    parts = []
    if error & ct.ERROR_ALERT:
        parts.append("hardware error alert")
    if error & 0x7F:
        parts.append(PACKET_ERRORS.get(error & 0x7F, f"error {error & 0x7F}"))
    return ", ".join(parts) or "no error"


# ---------------------------------------------------------------- the port


class WaitingPort:
    """The waiting half of a servo SDK's PortHandler (dynamixel-sdk's here, scservo_sdk's in
    sts_bus: both keep `ser`, `tx_time_per_byte`, `packet_start_time` and `packet_timeout` and
    poll `readPort` until `isPacketTimeout`): wait in select() for bytes, time out after
    `reply_timeout_ms` plus the packet's own transmission time, discard stale input before every
    transaction and drain it after a timeout. Mixed in before the SDK's class."""

    def init_waiting(self, reply_timeout_ms: float, settle_ms: float) -> None:
        """Set the reply timeout and settle time (ms) and zero the stale-byte count."""
        self.reply_timeout_ms = float(reply_timeout_ms)
        self.settle_ms = float(settle_ms)
        self.stale_bytes = 0  # bytes found waiting before a request, or arriving after a timeout

    def clearPort(self):  # noqa: N802 (the SDK's name; called by its txPacket before every request)
        """Drop what waits in the input buffer, counting the stale bytes."""
        try:
            self.stale_bytes += self.ser.in_waiting
        except OSError:
            pass
        self.ser.reset_input_buffer()

    def discard_stale(self) -> int:
        """Read and drop whatever arrives until the port has been quiet for `settle_ms` (at most
        ten times that in all): a status packet that comes after its request timed out must not
        be taken for the answer to the next one. Returns the bytes dropped."""
        dropped = 0
        deadline = time.monotonic() + 10 * self.settle_ms * 1e-3
        try:
            while True:
                readable, _, _ = select.select([self.ser.fileno()], [], [], self.settle_ms * 1e-3)
                if not readable:
                    break
                data = self.ser.read(4096)
                if not data:
                    break
                dropped += len(data)
                if time.monotonic() > deadline:
                    break
            self.ser.reset_input_buffer()
        except (OSError, ValueError, SerialException):
            pass
        self.stale_bytes += dropped
        return dropped

    def setPacketTimeout(self, packet_length):  # noqa: N802 (the SDK's name)
        """Start the reply's deadline: wire time of the packet plus the reply timeout."""
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + self.reply_timeout_ms

    def readPort(self, length):  # noqa: N802
        """Read up to `length` bytes, waiting until the reply's deadline."""
        data = self.ser.read(length)
        if data:
            return data
        left_ms = self.packet_timeout - (self.getCurrentTime() - self.packet_start_time)
        if left_ms > 0:
            select.select([self.ser.fileno()], [], [], min(left_ms, 1.0) * 1e-3)
            data = self.ser.read(length)
        return data


class WaitingPortHandler(WaitingPort, sdk.PortHandler):
    """dynamixel-sdk's PortHandler, waiting in select() for bytes and timing out after
    `reply_timeout_ms` plus the packet's own transmission time (instead of 2 x 16 ms + 2 ms);
    stale input is discarded before every transaction and drained after a timeout."""

    def __init__(
        self, port_name: str, reply_timeout_ms: float, settle_ms: float = REALTIME.settle_ms
    ):
        sdk.PortHandler.__init__(self, port_name)
        self.init_waiting(reply_timeout_ms, settle_ms)


def expected_status_length(txpacket) -> int:
    """The LEN field (unstuffed) of the status packet that answers `txpacket`: instruction 0x55,
    error, parameters, CRC (e-Manual, Protocol 2.0, status packet)."""
    instruction = txpacket[PKT_INSTRUCTION]
    if instruction == sdk.INST_READ:
        return sdk.DXL_MAKEWORD(txpacket[PKT_PARAMETER0 + 2], txpacket[PKT_PARAMETER0 + 3]) + 4
    if instruction == sdk.INST_PING:
        return 7  # model number (2) and firmware version (1)
    return 4  # write, reg write, reboot, clear, factory reset: no parameters


class CheckedPacketHandler(Protocol2PacketHandler):
    """dynamixel-sdk's Protocol 2.0 handler, taking as the reply only a status packet whose ID and
    length are the request's; any other is a late reply to an earlier request, dropped and
    counted. After a timeout or a corrupt packet the port is drained (`discard_stale`)."""

    def __init__(self):
        super().__init__()
        self.stale_packets = 0

    def _matches(self, rxpacket, dxl_id: int, length: int) -> bool:
        if (
            rxpacket[PKT_ID] == dxl_id
            and sdk.DXL_MAKEWORD(rxpacket[PKT_LENGTH_L], rxpacket[PKT_LENGTH_H]) == length
        ):
            return True
        self.stale_packets += 1
        return False

    @staticmethod
    def _after_failure(port, result: int) -> None:
        if result in (sdk.COMM_RX_TIMEOUT, sdk.COMM_RX_CORRUPT) and hasattr(port, "discard_stale"):
            port.discard_stale()

    def txRxPacket(self, port, txpacket):  # noqa: N802 (the SDK's name and flow, with the length check)
        """Send a packet and read its status, checking the reply's length."""
        dxl_id, instruction = txpacket[PKT_ID], txpacket[PKT_INSTRUCTION]
        length = expected_status_length(txpacket)  # before txPacket stuffs the packet in place
        result = self.txPacket(port, txpacket)
        if result != sdk.COMM_SUCCESS:
            return None, result, 0
        if instruction in (sdk.INST_BULK_READ, sdk.INST_SYNC_READ):
            result = sdk.COMM_NOT_AVAILABLE
        if dxl_id == sdk.BROADCAST_ID or instruction == sdk.INST_ACTION:
            port.is_using = False
            return None, result, 0
        port.setPacketTimeout(length + 7)  # the whole status packet on the wire
        while True:
            rxpacket, result = self.rxPacket(port, False)
            if result != sdk.COMM_SUCCESS or self._matches(rxpacket, dxl_id, length):
                break
        if result != sdk.COMM_SUCCESS:
            self._after_failure(port, result)
            return rxpacket, result, 0
        return rxpacket, result, rxpacket[PKT_ERROR]

    def readRx(self, port, dxl_id, length):  # noqa: N802 (used by GroupSyncRead for each servo's reply)
        """Read one servo's reply of `length` bytes, skipping stale packets."""
        while True:
            rxpacket, result = self.rxPacket(port, False)
            if result != sdk.COMM_SUCCESS or self._matches(rxpacket, dxl_id, length + 4):
                break
        if result != sdk.COMM_SUCCESS:
            self._after_failure(port, result)
            return [], result, 0
        return (
            list(rxpacket[PKT_PARAMETER0 + 1 : PKT_PARAMETER0 + 1 + length]),
            result,
            rxpacket[PKT_ERROR],
        )


def is_pseudo_terminal(port: str) -> bool:
    """Whether `port` is a pseudo-terminal (the emulator's)."""
    try:
        return os.major(os.stat(port).st_rdev) in PTY_SLAVE_MAJORS
    except OSError:
        return False


def latency_timer_ms(port: str) -> int | None:
    """The USB-serial adapter's latency timer (ms) from sysfs, or None where the port has none
    (a pseudo-terminal, a native UART)."""
    device = Path(os.path.realpath(port)).name
    path = SYSFS_USB_SERIAL / device / "latency_timer"
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def latency_fix(port: str) -> str:
    """The command that sets the USB serial adapter's latency timer."""
    device = Path(os.path.realpath(port)).name
    return (
        f"echo {LATENCY_TIMER_LIMIT_MS} | sudo tee {SYSFS_USB_SERIAL / device / 'latency_timer'}  "
        f"(or: setserial {port} low_latency; a udev rule makes it permanent)"
    )


def check_port(
    port: str, timing: Timing, adapter: str = "the arm's U2D2 adapter, e.g. /dev/ttyUSB0"
) -> int | None:
    """Refuse (InputError) a missing port, a USB adapter whose latency timer is above
    LATENCY_TIMER_LIMIT_MS, and lockstep timing on anything but a pseudo-terminal; returns the
    latency timer (ms, None where the port has none)."""
    if not os.path.exists(port):
        raise InputError(port, "no such port", f"the serial device of {adapter}")
    latency = latency_timer_ms(port)
    if latency is not None and latency > LATENCY_TIMER_LIMIT_MS:
        raise InputError(
            port,
            f"USB latency timer {latency} ms (a 1 ms cycle cannot run); fix: {latency_fix(port)}",
            f"at most {LATENCY_TIMER_LIMIT_MS} ms",
        )
    if timing.lockstep and not is_pseudo_terminal(port):
        raise InputError(
            port,
            f"{timing.name} timing on a port that is not a pseudo-terminal",
            "the emulator's terminal (lockstep is for tests and demonstrations; a real arm "
            "does not wait for the host)",
        )
    return latency


# ---------------------------------------------------------------- the servos


@dataclass(frozen=True)
class ServoInfo:
    axis: int
    dxl_id: int
    model_number: int
    firmware: int

    @property
    def model(self) -> str:
        """The servo's model name from its model number."""
        return ct.MODEL_NAME.get(self.model_number, f"model {self.model_number}")


@dataclass
class CycleRead:
    """One cycle's sync read (register units): position and velocity per axis (its primary
    servo), current per axis (the servos' torques summed, over the sum of their torque
    constants: the one-servo current of the same torque), hardware error per servo (bus order)."""

    hardware_error: np.ndarray
    current_units: np.ndarray
    velocity_units: np.ndarray
    position_ticks: np.ndarray


class ServoBus:
    """An arm's servos behind one port (the CRANE-X7's eight by default; arm_bus.ArmBus)."""

    def __init__(
        self,
        port: str,
        baud: int | None = None,
        arm: ArmBus | None = None,
        reply_timeout_ms: float | None = None,
        timing: Timing = REALTIME,
    ):
        self.arm = arm_bus() if arm is None else arm
        self.port_name = str(port)
        self.baud = self.arm.baud if baud is None else int(baud)
        self.ids = self.arm.primary_ids  # per axis: goal writes, position and velocity
        self.bus_ids = self.arm.ids  # every servo, shadows included: the cycle's sync read
        # per axis: (index in the sync read, weight of its current) of each servo; the weight is
        # its share of the axis's torque constant, and a single servo's current is taken as read
        self._current_parts = []
        for axis in range(1, self.arm.n_axes + 1):
            servos = self.arm.axis_servos(axis)
            total = sum(s.kt for s in servos)
            parts = tuple((self.bus_ids.index(s.dxl_id), s.kt / total) for s in servos)
            self._current_parts.append(parts)
        self._spec = {s.dxl_id: s for s in self.arm.servos}
        self._axis_of = [s.axis - 1 for s in self.arm.servos]
        self._primary = [not s.shadow for s in self.arm.servos]
        self._servo_currents = [0] * len(self.bus_ids)
        self.timing = timing
        # while the arm is under torque (at most the cycle's watchdog); before torque at least
        # SETUP_REPLY_TIMEOUT_MS
        self.reply_timeout_ms = (
            timing.reply_timeout_ms if reply_timeout_ms is None else float(reply_timeout_ms)
        )
        self.setup_timeout_ms = max(SETUP_REPLY_TIMEOUT_MS, self.reply_timeout_ms)
        self.port: WaitingPortHandler | None = None
        self.packet = CheckedPacketHandler()
        self.servos: list[ServoInfo] = []
        self.latency_timer: int | None = None
        self.configuration: dict[str, str] = {}
        self._reader: sdk.GroupSyncRead | None = None
        self._writer: sdk.GroupSyncWrite | None = None
        self._goal = [[0, 0] for _ in self.ids]

    # -- opening, before any write
    def open(self) -> None:
        """Open the port at the bus's baud rate, refusing a missing or busy device."""
        where = self.port_name
        self.latency_timer = check_port(self.port_name, self.timing)
        port = WaitingPortHandler(self.port_name, self.setup_timeout_ms, self.timing.settle_ms)
        try:
            opened = port.openPort() and port.setBaudRate(self.baud)
        except Exception as error:  # pyserial raises SerialException / OSError subclasses
            raise InputError(
                where, f"cannot open the port ({error})", "a serial port this user may open"
            ) from None
        if not opened:
            raise InputError(
                where,
                f"cannot set {self.baud} bit/s",
                f"a port that supports the {self.arm.name}'s {self.baud / 1e6:g} Mbit/s",
            )
        self.port = port

    def _servo_where(self, servo) -> str:
        """How a message names a servo: the port, its ID and axis (and whose shadow it is)."""
        shadow = f", shadow of ID {servo.primary_id}" if servo.shadow else ""
        return f"{self.port_name}, ID {servo.dxl_id} (axis {servo.axis}{shadow})"

    def discover(self) -> list[ServoInfo]:
        """Ping every ID; check model numbers, read firmware versions, check each shadow's
        Secondary ID. Raises InputError."""
        found = []
        silent = []
        for servo in self.arm.servos:
            dxl_id, axis, expected = servo.dxl_id, servo.axis, servo.model_number
            model, result, error = self.packet.ping(self.port, dxl_id)
            if result != sdk.COMM_SUCCESS:
                silent.append((servo, result))
                continue
            if model != expected:
                name = ct.MODEL_NAME.get(model, "unknown")
                raise InputError(
                    self._servo_where(servo),
                    f"model number {model} ({name})",
                    f"{expected} ({ct.MODEL_NAME[expected]})",
                )
            firmware = self.read(dxl_id, ct.FIRMWARE_VERSION)
            found.append(ServoInfo(axis, dxl_id, model, firmware))
        if len(silent) == len(self.bus_ids):
            ids = ", ".join(map(str, self.bus_ids))
            raise InputError(
                self.port_name,
                f"no servo answers a ping at {self.baud} bit/s on IDs {ids}",
                f"the {self.arm.name} powered and connected (12 V supply on, "
                f"U2D2 at {self.baud / 1e6:g} Mbit/s)",
            )
        if silent:
            servo, result = silent[0]
            raise InputError(
                self._servo_where(servo),
                f"no answer to a ping ({comm_text(result)})",
                f"a {servo.model} answering at ID {servo.dxl_id}",
            )
        for info in found:
            if info.firmware < ct.MIN_FIRMWARE_BUS_WATCHDOG:
                raise InputError(
                    f"{self.port_name}, ID {info.dxl_id}",
                    f"firmware v{info.firmware} has no Bus Watchdog",
                    f"firmware v{ct.MIN_FIRMWARE_BUS_WATCHDOG} or later (update with DYNAMIXEL "
                    "Wizard 2.0)",
                )
        for servo in self.arm.shadows:
            # a shadow whose Secondary ID is not its primary's would not follow the goal writes:
            # the joint would get one servo's torque while the log assumed two
            secondary = self.read(servo.dxl_id, ct.SECONDARY_ID)
            if secondary != servo.primary_id:
                raise InputError(
                    self._servo_where(servo),
                    f"Secondary(Shadow) ID(12) is {secondary}",
                    f"{servo.primary_id}, the ID of the joint's primary servo, so "
                    "that the shadow follows its goal writes (as Interbotix sets it)",
                )
        self.servos = found
        return found

    def check_clock(self) -> int:
        """The first servo's Realtime Tick, read twice CLOCK_CHECK_S apart: a servo's clock runs
        with time, the lockstep emulator's stands still between cycles. Raises InputError when
        the device's clock does not match the timing; returns the ticks it advanced."""
        dxl_id = self.ids[0]
        first = self.read(dxl_id, ct.REALTIME_TICK)
        start = time.monotonic()
        time.sleep(CLOCK_CHECK_S)
        second = self.read(dxl_id, ct.REALTIME_TICK)
        waited_ms = (time.monotonic() - start) * 1e3
        advanced = (second - first) % (ct.REALTIME_TICK_MAX + 1)
        standing = advanced <= 2  # reading the tick twice takes the lockstep clock about 0.2 ms
        where = f"{self.port_name}, ID {dxl_id}"
        if self.timing.lockstep and not standing:
            raise InputError(
                where,
                f"Realtime Tick(120) advanced {advanced} ms in {waited_ms:.0f} ms: the device's "
                "clock runs on its own",
                "the emulator in lockstep (python -m crane_lib.hardware.emulator --lockstep) for "
                f"{self.timing.name} timing",
            )
        if not self.timing.lockstep and advanced < CLOCK_CHECK_S * 1e3 / 2:
            raise InputError(
                where,
                f"Realtime Tick(120) advanced {advanced} ms in {waited_ms:.0f} ms: the device's "
                "clock stands still "
                "(the emulator in lockstep)",
                f"a clock that runs with time for {self.timing.name} timing (or --timing lockstep)",
            )
        return advanced

    def stale_counts(self) -> dict[str, str]:
        """Stale packets and bytes dropped so far, for the log's metadata."""
        return {
            "bus_stale_packets_dropped": str(self.packet.stale_packets),
            "bus_stale_bytes_dropped": str(self.port.stale_bytes if self.port is not None else 0),
        }

    # -- single register access with checks
    def read(self, dxl_id: int, register: ct.Register) -> int:
        """Read one register of one servo, raising BusFault on an error."""
        read = {
            1: self.packet.read1ByteTxRx,
            2: self.packet.read2ByteTxRx,
            4: self.packet.read4ByteTxRx,
        }[register.size]
        value, result, error = read(self.port, dxl_id, register.address)
        if result != sdk.COMM_SUCCESS or (error & 0x7F):
            raise InputError(
                f"{self.port_name}, ID {dxl_id}",
                f"reading {register.name}({register.address}) failed: "
                f"{comm_text(result) if result != sdk.COMM_SUCCESS else packet_error_text(error)}",
                "a status packet without error",
            )
        if register.signed and value >= 1 << (8 * register.size - 1):
            value -= 1 << (8 * register.size)
        return value

    def write(self, dxl_id: int, register: ct.Register, value: int) -> tuple[int, int]:
        """Write and return (communication result, packet error) without raising."""
        write = {
            1: self.packet.write1ByteTxRx,
            2: self.packet.write2ByteTxRx,
            4: self.packet.write4ByteTxRx,
        }[register.size]
        raw = int(value) & ((1 << (8 * register.size)) - 1)
        return write(self.port, dxl_id, register.address, raw)

    def write_checked(self, dxl_id: int, register: ct.Register, value: int, expected: str) -> None:
        """Write, read back, and raise InputError unless the servo holds `value`."""
        result, error = self.write(dxl_id, register, value)
        if result != sdk.COMM_SUCCESS or (error & 0x7F):
            problem = comm_text(result) if result != sdk.COMM_SUCCESS else packet_error_text(error)
            found = self._try_read(dxl_id, register)
            raise InputError(
                f"{self.port_name}, ID {dxl_id}",
                f"{register.name}({register.address}) is {found} and writing {value} failed: "
                f"{problem}",
                expected,
            )
        back = self.read(dxl_id, register)
        if back != value:
            raise InputError(
                f"{self.port_name}, ID {dxl_id}",
                f"{register.name}({register.address}) reads back {back} after writing {value}",
                expected,
            )

    def _try_read(self, dxl_id: int, register: ct.Register) -> str:
        try:
            return str(self.read(dxl_id, register))
        except InputError:
            return "unreadable"

    # -- configuration, torque still off
    def configure(self, current_limit_units) -> dict[str, str]:
        """Torque off, Return Delay Time 0, Current Control Mode, current limits checked, the
        cycle's indirect map; every write read back. Raises InputError, torque still off."""
        changed = []
        drive_modes, homing = [], []
        for info in self.servos:
            dxl_id = info.dxl_id
            self.write_checked(
                dxl_id, ct.TORQUE_ENABLE, 0, "torque off before configuring (Torque Enable 0)"
            )
            drive_mode = self.read(dxl_id, ct.DRIVE_MODE)
            reverse, bit = self._spec[dxl_id].reverse, bool(drive_mode & 0x01)
            # the reverse bit flips the position and current signs the log's angle convention
            # assumes; an arm whose servos are mounted mirrored has it set where its maker does
            if bit and not reverse:
                raise InputError(
                    f"{self.port_name}, ID {dxl_id}",
                    f"Drive Mode(10) is {drive_mode}: bit 0 (reverse direction) is set",
                    f"the normal direction (bit 0 clear), as the {self.arm.name} ships",
                )
            if reverse and not bit:
                raise InputError(
                    f"{self.port_name}, ID {dxl_id}",
                    f"Drive Mode(10) is {drive_mode}: bit 0 (reverse direction) is clear",
                    f"bit 0 set, as the {self.arm.name}'s maker configures this "
                    "mirrored servo (its angle and current in the joint's direction)",
                )
            drive_modes.append(drive_mode)
            homing.append(self.read(dxl_id, ct.HOMING_OFFSET))
            if self.read(dxl_id, ct.RETURN_DELAY_TIME) != 0:
                self.write_checked(
                    dxl_id,
                    ct.RETURN_DELAY_TIME,
                    0,
                    "Return Delay Time 0 (the servo answers at once)",
                )
                changed.append(f"ID {dxl_id} Return Delay Time -> 0")
            mode = self.read(dxl_id, ct.OPERATING_MODE)
            if mode != ct.OPERATING_MODE_CURRENT:
                self.write_checked(
                    dxl_id,
                    ct.OPERATING_MODE,
                    ct.OPERATING_MODE_CURRENT,
                    f"Operating Mode {ct.OPERATING_MODE_CURRENT} (current control; found {mode}: "
                    f"{ct.OPERATING_MODES.get(mode, 'unknown')})",
                )
                changed.append(f"ID {dxl_id} Operating Mode {mode} -> {ct.OPERATING_MODE_CURRENT}")
            limit = self.read(dxl_id, ct.CURRENT_LIMIT)
            needed = int(current_limit_units[info.axis - 1])
            if limit < needed:
                raise InputError(
                    f"{self.port_name}, ID {dxl_id}",
                    f"Current Limit(38) is {limit} units",
                    f"at least the controller's clamp of {needed} units (the {info.model} default)",
                )
            for pointer, target in ct.cycle_read_map():
                register = ct.Register(pointer, 2, f"Indirect Address ({pointer})", True)
                if self.read(dxl_id, register) != target:
                    self.write_checked(
                        dxl_id, register, target, f"Indirect Address({pointer}) = {target}"
                    )
            self.write_checked(dxl_id, ct.GOAL_CURRENT, 0, "Goal Current 0 before torque on")
        self._reader = sdk.GroupSyncRead(
            self.port, self.packet, ct.CYCLE_READ_ADDRESS, ct.CYCLE_READ_LENGTH
        )
        self._writer = sdk.GroupSyncWrite(
            self.port, self.packet, ct.GOAL_CURRENT.address, ct.GOAL_CURRENT.size
        )
        for dxl_id in self.bus_ids:
            self._reader.addParam(dxl_id)
        for axis, dxl_id in enumerate(self.ids):  # goals to the primaries: their shadows follow
            self._writer.addParam(dxl_id, self._goal[axis])
        self.configuration = {
            "configuration_changes": "; ".join(changed) or "none",
            "servo_drive_mode": " ".join(map(str, drive_modes)),
            "servo_homing_offset": " ".join(map(str, homing)),
        }
        return self.configuration

    def enable_torque(self, bus_watchdog_units: int) -> None:
        """Torque on for every servo with read-back, then the servos' own Bus Watchdog; on any
        failure every servo is switched off again before the InputError propagates. Goal Current
        is 0 throughout (configure), so the arm carries no current yet and a slow status packet is
        no danger: the handshake keeps the setup timeout; the cycle's reply timeout applies from
        the first cycle on."""
        try:
            for info in self.servos:
                self.write_checked(info.dxl_id, ct.TORQUE_ENABLE, 1, "Torque Enable 1 (read back)")
            for info in self.servos:
                self.write_checked(
                    info.dxl_id,
                    ct.BUS_WATCHDOG,
                    bus_watchdog_units,
                    f"Bus Watchdog {bus_watchdog_units} x 20 ms",
                )
        except BaseException:
            self.torque_off()
            raise
        self.port.reply_timeout_ms = self.reply_timeout_ms

    # -- the cycle
    def read_cycle(self, out: CycleRead) -> None:
        """Read one cycle's positions, velocities, currents and errors by sync read."""
        result = self._reader.txRxPacket()
        if result != sdk.COMM_SUCCESS:
            raise BusFault(
                "timeout"
                if result == sdk.COMM_RX_TIMEOUT
                else ("crc" if result == sdk.COMM_RX_CORRUPT else "bus"),
                f"sync read: {comm_text(result)}",
            )
        data = self._reader.data_dict
        currents = self._servo_currents
        for k, dxl_id in enumerate(self.bus_ids):
            raw = data[dxl_id]
            if len(raw) != ct.CYCLE_READ_LENGTH:
                raise BusFault(
                    "bus",
                    f"sync read: ID {dxl_id} returned {len(raw)} bytes, expected "
                    f"{ct.CYCLE_READ_LENGTH}",
                )
            error, current, velocity, position = _CYCLE_STRUCT.unpack(bytes(raw))
            out.hardware_error[k] = error
            currents[k] = current
            axis = self._axis_of[k]
            if self._primary[k]:
                out.velocity_units[axis] = velocity
                out.position_ticks[axis] = position
        for axis, parts in enumerate(self._current_parts):
            if len(parts) == 1:
                out.current_units[axis] = currents[parts[0][0]]
            else:  # the joint's torque, both servos' together, as one servo's current
                out.current_units[axis] = sum(weight * currents[k] for k, weight in parts)

    def new_cycle_read(self) -> CycleRead:
        """A zeroed CycleRead sized for this arm (hardware errors per servo, the rest per axis)."""
        n = self.arm.n_axes
        return CycleRead(
            np.zeros(len(self.bus_ids), dtype=np.int64),
            np.zeros(n),
            np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=np.int64),
        )

    def write_goal_current(self, units) -> None:
        """Write every axis's goal current (units of the current register) by sync write."""
        for axis, dxl_id in enumerate(self.ids):
            value = int(units[axis]) & 0xFFFF
            goal = self._goal[axis]
            goal[0], goal[1] = value & 0xFF, value >> 8
            self._writer.changeParam(dxl_id, goal)
        result = self._writer.txPacket()
        if result != sdk.COMM_SUCCESS:
            raise BusFault("bus", f"sync write of Goal Current: {comm_text(result)}")

    # -- stopping
    def torque_off(self, attempts: int = 3) -> dict[int, int | None]:
        """Goal current 0 (one sync write), then Torque Enable 0 on every servo, read back.
        Never raises; returns the Torque Enable read back per ID (None: unreadable)."""
        state: dict[int, int | None] = {}
        if self.port is None:
            return state
        self.port.reply_timeout_ms = max(self.reply_timeout_ms, SETUP_REPLY_TIMEOUT_MS / 5)
        self.port.is_using = False  # a transaction an exception left open must not block the stop
        try:
            if self._writer is not None:
                for axis, dxl_id in enumerate(self.ids):
                    self._writer.changeParam(dxl_id, [0, 0])
                self._writer.txPacket()
        except Exception:  # noqa: BLE001 - the stop must go on
            pass
        for dxl_id in self.bus_ids:
            value = None
            for _ in range(attempts):
                try:
                    self.write(dxl_id, ct.TORQUE_ENABLE, 0)
                    value, result, _ = self.packet.read1ByteTxRx(
                        self.port, dxl_id, ct.TORQUE_ENABLE.address
                    )
                    if result == sdk.COMM_SUCCESS and value == 0:
                        break
                    value = None
                except Exception:  # noqa: BLE001
                    value = None
            state[dxl_id] = value
        # the servos' own watchdog off again (it would stop the next tool that enables torque)
        for dxl_id in self.bus_ids:
            try:
                self.write(dxl_id, ct.BUS_WATCHDOG, 0)
            except Exception:  # noqa: BLE001
                pass
        return state

    def close(self) -> None:
        """Close the port (idempotent)."""
        if self.port is not None:
            try:
                self.port.closePort()
            except Exception:  # noqa: BLE001
                pass
            self.port = None
