"""The recorder's side of the DYNAMIXEL bus, over dynamixel-sdk (Protocol 2.0).

`ServoBus.open` checks the port, its USB latency timer, and every servo (ID, model number,
firmware) before anything is written; `configure` puts the servos into current control with
read-back and maps the cycle's read block through indirect addresses; `enable_torque` is the
torque handshake (write, read back, all or nothing); `read_cycle` / `write_goal_current` are the
two group transfers of every 1 ms cycle; `torque_off` is the safe stop, which never raises.

Everything that is wrong before torque is enabled raises `InputError` naming the port or the ID
and what was expected (the CLI turns it into exit status 2); nothing is ever enabled then.

dynamixel-sdk 4.x (PyPI `dynamixel-sdk`, ROBOTIS-GIT/DynamixelSDK, python/src/dynamixel_sdk)
is used as published, with one subclass of its PortHandler (`WaitingPortHandler`): the SDK polls
the serial port in a tight loop while it waits for a status packet, and bases its reply timeout
on a 16 ms latency timer it assumes. The subclass waits in the kernel (select) instead of
spinning, which on a shared two-core machine leaves the CPU to the servo side (the emulator)
instead of fighting it, and takes the reply timeout from the recorder's watchdog.
"""

from __future__ import annotations

import os
import select
import struct
from dataclasses import dataclass
from pathlib import Path

import dynamixel_sdk as sdk
import numpy as np

from crane_lib.constants import ACTUATORS, N_AXES
from crane_lib.errors import InputError
from crane_lib.hardware import control_table as ct

LATENCY_TIMER_LIMIT_MS = 1  # a 1 ms cycle needs the adapter to forward every byte within 1 ms
SETUP_REPLY_TIMEOUT_MS = 250.0  # before torque, a slow answer is no danger: wait longer than the SDK's 34 ms
SYSFS_USB_SERIAL = Path("/sys/bus/usb-serial/devices")
COMM_NAMES = {
    sdk.COMM_SUCCESS: "success", sdk.COMM_PORT_BUSY: "port busy", sdk.COMM_TX_FAIL: "transmit failed",
    sdk.COMM_RX_FAIL: "no status packet", sdk.COMM_TX_ERROR: "bad instruction packet", sdk.COMM_RX_WAITING: "still receiving",
    sdk.COMM_RX_TIMEOUT: "timeout (no status packet)", sdk.COMM_RX_CORRUPT: "corrupt status packet (CRC)",
    sdk.COMM_NOT_AVAILABLE: "not available",
}
PACKET_ERRORS = {
    ct.ERROR_RESULT_FAIL: "result fail", ct.ERROR_INSTRUCTION: "instruction error", ct.ERROR_CRC: "CRC error",
    ct.ERROR_DATA_RANGE: "data range error", ct.ERROR_DATA_LENGTH: "data length error", ct.ERROR_DATA_LIMIT: "data limit error",
    ct.ERROR_ACCESS: "access error",
}
_CYCLE_STRUCT = struct.Struct("<Bhii")  # Hardware Error Status, Present Current, Present Velocity, Present Position


class BusFault(RuntimeError):
    """A fault on the bus while the arm is under torque (timeout, CRC, a servo's error)."""

    def __init__(self, kind: str, detail: str):
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


def comm_text(result: int) -> str:
    return COMM_NAMES.get(result, f"result {result}")


def packet_error_text(error: int) -> str:
    parts = []
    if error & ct.ERROR_ALERT:
        parts.append("hardware error alert")
    if error & 0x7F:
        parts.append(PACKET_ERRORS.get(error & 0x7F, f"error {error & 0x7F}"))
    return ", ".join(parts) or "no error"


# ---------------------------------------------------------------- the port


class WaitingPortHandler(sdk.PortHandler):
    """dynamixel-sdk's PortHandler, waiting in select() for bytes and timing out after
    `reply_timeout_ms` plus the packet's own transmission time (instead of 2 x 16 ms + 2 ms)."""

    def __init__(self, port_name: str, reply_timeout_ms: float):
        super().__init__(port_name)
        self.reply_timeout_ms = float(reply_timeout_ms)

    def setPacketTimeout(self, packet_length):  # noqa: N802 (the SDK's name)
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + self.reply_timeout_ms

    def readPort(self, length):  # noqa: N802
        data = self.ser.read(length)
        if data:
            return data
        left_ms = self.packet_timeout - (self.getCurrentTime() - self.packet_start_time)
        if left_ms > 0:
            select.select([self.ser.fileno()], [], [], min(left_ms, 1.0) * 1e-3)
            data = self.ser.read(length)
        return data


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
    device = Path(os.path.realpath(port)).name
    return (f"echo {LATENCY_TIMER_LIMIT_MS} | sudo tee {SYSFS_USB_SERIAL / device / 'latency_timer'}  "
            f"(or: setserial {port} low_latency; a udev rule makes it permanent)")


# ---------------------------------------------------------------- the servos


@dataclass(frozen=True)
class ServoInfo:
    axis: int
    dxl_id: int
    model_number: int
    firmware: int

    @property
    def model(self) -> str:
        return ct.MODEL_NAME.get(self.model_number, f"model {self.model_number}")


@dataclass
class CycleRead:
    """One cycle's sync read, per axis (register units)."""

    hardware_error: np.ndarray
    current_units: np.ndarray
    velocity_units: np.ndarray
    position_ticks: np.ndarray


class ServoBus:
    """The CRANE-X7's eight servos behind one port."""

    def __init__(self, port: str, baud: int = ct.BAUD_RATE, ids=ct.AXIS_IDS, reply_timeout_ms: float = 20.0):
        self.port_name = str(port)
        self.baud = int(baud)
        self.ids = tuple(ids)
        self.reply_timeout_ms = reply_timeout_ms  # while the arm is under torque (the cycle's watchdog)
        self.port: WaitingPortHandler | None = None
        self.packet = sdk.PacketHandler(2.0)
        self.servos: list[ServoInfo] = []
        self.latency_timer: int | None = None
        self.configuration: dict[str, str] = {}
        self._reader: sdk.GroupSyncRead | None = None
        self._writer: sdk.GroupSyncWrite | None = None
        self._goal = [[0, 0] for _ in range(N_AXES)]

    # -- opening, before any write
    def open(self) -> None:
        where = self.port_name
        if not os.path.exists(self.port_name):
            raise InputError(where, "no such port", "the serial device of the arm's U2D2 adapter, e.g. /dev/ttyUSB0")
        self.latency_timer = latency_timer_ms(self.port_name)
        if self.latency_timer is not None and self.latency_timer > LATENCY_TIMER_LIMIT_MS:
            raise InputError(where, f"USB latency timer {self.latency_timer} ms (a 1 ms cycle cannot run); fix: {latency_fix(self.port_name)}",
                             f"at most {LATENCY_TIMER_LIMIT_MS} ms")
        port = WaitingPortHandler(self.port_name, SETUP_REPLY_TIMEOUT_MS)
        try:
            opened = port.openPort() and port.setBaudRate(self.baud)
        except Exception as error:  # pyserial raises SerialException / OSError subclasses
            raise InputError(where, f"cannot open the port ({error})", "a serial port this user may open") from None
        if not opened:
            raise InputError(where, f"cannot set {self.baud} bit/s", "a port that supports the CRANE-X7's 3 Mbit/s")
        self.port = port

    def discover(self) -> list[ServoInfo]:
        """Ping every ID; check model numbers; read firmware versions. Raises InputError."""
        found = []
        silent = []
        for axis, (dxl_id, expected) in enumerate(zip(self.ids, ct.EXPECTED_MODELS), start=1):
            model, result, error = self.packet.ping(self.port, dxl_id)
            if result != sdk.COMM_SUCCESS:
                silent.append((axis, dxl_id, result))
                continue
            if model != expected:
                raise InputError(f"{self.port_name}, ID {dxl_id} (axis {axis})", f"model number {model} ({ct.MODEL_NAME.get(model, 'unknown')})",
                                 f"{expected} ({ct.MODEL_NAME[expected]})")
            firmware = self.read(dxl_id, ct.FIRMWARE_VERSION)
            found.append(ServoInfo(axis, dxl_id, model, firmware))
        if len(silent) == len(self.ids):
            raise InputError(self.port_name, f"no servo answers a ping at {self.baud} bit/s on IDs {', '.join(map(str, self.ids))}",
                             "the CRANE-X7 powered and connected (12 V supply on, U2D2 at 3 Mbit/s)")
        if silent:
            axis, dxl_id, result = silent[0]
            raise InputError(f"{self.port_name}, ID {dxl_id} (axis {axis})", f"no answer to a ping ({comm_text(result)})",
                             f"a {ACTUATORS[axis - 1].model} answering at ID {dxl_id}")
        for info in found:
            if info.firmware < ct.MIN_FIRMWARE_BUS_WATCHDOG:
                raise InputError(f"{self.port_name}, ID {info.dxl_id}", f"firmware v{info.firmware} has no Bus Watchdog",
                                 f"firmware v{ct.MIN_FIRMWARE_BUS_WATCHDOG} or later (update with DYNAMIXEL Wizard 2.0)")
        self.servos = found
        return found

    # -- single register access with checks
    def read(self, dxl_id: int, register: ct.Register) -> int:
        read = {1: self.packet.read1ByteTxRx, 2: self.packet.read2ByteTxRx, 4: self.packet.read4ByteTxRx}[register.size]
        value, result, error = read(self.port, dxl_id, register.address)
        if result != sdk.COMM_SUCCESS or (error & 0x7F):
            raise InputError(f"{self.port_name}, ID {dxl_id}", f"reading {register.name}({register.address}) failed: "
                             f"{comm_text(result) if result != sdk.COMM_SUCCESS else packet_error_text(error)}", "a status packet without error")
        if register.signed and value >= 1 << (8 * register.size - 1):
            value -= 1 << (8 * register.size)
        return value

    def write(self, dxl_id: int, register: ct.Register, value: int) -> tuple[int, int]:
        """Write and return (communication result, packet error) without raising."""
        write = {1: self.packet.write1ByteTxRx, 2: self.packet.write2ByteTxRx, 4: self.packet.write4ByteTxRx}[register.size]
        raw = int(value) & ((1 << (8 * register.size)) - 1)
        return write(self.port, dxl_id, register.address, raw)

    def write_checked(self, dxl_id: int, register: ct.Register, value: int, expected: str) -> None:
        """Write, read back, and raise InputError unless the servo holds `value`."""
        result, error = self.write(dxl_id, register, value)
        if result != sdk.COMM_SUCCESS or (error & 0x7F):
            problem = comm_text(result) if result != sdk.COMM_SUCCESS else packet_error_text(error)
            found = self._try_read(dxl_id, register)
            raise InputError(f"{self.port_name}, ID {dxl_id}", f"{register.name}({register.address}) is {found} and writing {value} failed: {problem}",
                             expected)
        back = self.read(dxl_id, register)
        if back != value:
            raise InputError(f"{self.port_name}, ID {dxl_id}", f"{register.name}({register.address}) reads back {back} after writing {value}", expected)

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
            self.write_checked(dxl_id, ct.TORQUE_ENABLE, 0, "torque off before configuring (Torque Enable 0)")
            drive_mode = self.read(dxl_id, ct.DRIVE_MODE)
            if drive_mode & 0x01:  # reverse mode flips the position and current signs the log's angle convention assumes
                raise InputError(f"{self.port_name}, ID {dxl_id}", f"Drive Mode(10) is {drive_mode}: bit 0 (reverse direction) is set",
                                 "the normal direction (bit 0 clear), as the CRANE-X7 ships")
            drive_modes.append(drive_mode)
            homing.append(self.read(dxl_id, ct.HOMING_OFFSET))
            if self.read(dxl_id, ct.RETURN_DELAY_TIME) != 0:
                self.write_checked(dxl_id, ct.RETURN_DELAY_TIME, 0, "Return Delay Time 0 (the servo answers at once)")
                changed.append(f"ID {dxl_id} Return Delay Time -> 0")
            mode = self.read(dxl_id, ct.OPERATING_MODE)
            if mode != ct.OPERATING_MODE_CURRENT:
                self.write_checked(dxl_id, ct.OPERATING_MODE, ct.OPERATING_MODE_CURRENT,
                                   f"Operating Mode {ct.OPERATING_MODE_CURRENT} (current control; found {mode}: {ct.OPERATING_MODES.get(mode, 'unknown')})")
                changed.append(f"ID {dxl_id} Operating Mode {mode} -> {ct.OPERATING_MODE_CURRENT}")
            limit = self.read(dxl_id, ct.CURRENT_LIMIT)
            needed = int(current_limit_units[info.axis - 1])
            if limit < needed:
                raise InputError(f"{self.port_name}, ID {dxl_id}", f"Current Limit(38) is {limit} units",
                                 f"at least the controller's clamp of {needed} units (the {ACTUATORS[info.axis - 1].model} default)")
            for pointer, target in ct.cycle_read_map():
                register = ct.Register(pointer, 2, f"Indirect Address ({pointer})", True)
                if self.read(dxl_id, register) != target:
                    self.write_checked(dxl_id, register, target, f"Indirect Address({pointer}) = {target}")
            self.write_checked(dxl_id, ct.GOAL_CURRENT, 0, "Goal Current 0 before torque on")
        self._reader = sdk.GroupSyncRead(self.port, self.packet, ct.CYCLE_READ_ADDRESS, ct.CYCLE_READ_LENGTH)
        self._writer = sdk.GroupSyncWrite(self.port, self.packet, ct.GOAL_CURRENT.address, ct.GOAL_CURRENT.size)
        for axis, dxl_id in enumerate(self.ids):
            self._reader.addParam(dxl_id)
            self._writer.addParam(dxl_id, self._goal[axis])
        self.configuration = {"configuration_changes": "; ".join(changed) or "none",
                              "servo_drive_mode": " ".join(map(str, drive_modes)), "servo_homing_offset": " ".join(map(str, homing))}
        return self.configuration

    def enable_torque(self, bus_watchdog_units: int) -> None:
        """Torque on for every servo with read-back, then the servos' own Bus Watchdog; on any
        failure every servo is switched off again before the InputError propagates."""
        try:
            self.port.reply_timeout_ms = self.reply_timeout_ms
            for info in self.servos:
                self.write_checked(info.dxl_id, ct.TORQUE_ENABLE, 1, "Torque Enable 1 (read back)")
            for info in self.servos:
                self.write_checked(info.dxl_id, ct.BUS_WATCHDOG, bus_watchdog_units, f"Bus Watchdog {bus_watchdog_units} x 20 ms")
        except BaseException:
            self.torque_off()
            raise

    # -- the cycle
    def read_cycle(self, out: CycleRead) -> None:
        result = self._reader.txRxPacket()
        if result != sdk.COMM_SUCCESS:
            raise BusFault("timeout" if result == sdk.COMM_RX_TIMEOUT else ("crc" if result == sdk.COMM_RX_CORRUPT else "bus"),
                           f"sync read: {comm_text(result)}")
        data = self._reader.data_dict
        for axis, dxl_id in enumerate(self.ids):
            raw = data[dxl_id]
            if len(raw) != ct.CYCLE_READ_LENGTH:
                raise BusFault("bus", f"sync read: ID {dxl_id} returned {len(raw)} bytes, expected {ct.CYCLE_READ_LENGTH}")
            error, current, velocity, position = _CYCLE_STRUCT.unpack(bytes(raw))
            out.hardware_error[axis] = error
            out.current_units[axis] = current
            out.velocity_units[axis] = velocity
            out.position_ticks[axis] = position

    def write_goal_current(self, units) -> None:
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
        try:
            if self._writer is not None:
                for axis, dxl_id in enumerate(self.ids):
                    self._writer.changeParam(dxl_id, [0, 0])
                self._writer.txPacket()
        except Exception:  # noqa: BLE001 - the stop must go on
            pass
        for dxl_id in self.ids:
            value = None
            for _ in range(attempts):
                try:
                    self.write(dxl_id, ct.TORQUE_ENABLE, 0)
                    value, result, _ = self.packet.read1ByteTxRx(self.port, dxl_id, ct.TORQUE_ENABLE.address)
                    if result == sdk.COMM_SUCCESS and value == 0:
                        break
                    value = None
                except Exception:  # noqa: BLE001
                    value = None
            state[dxl_id] = value
        for dxl_id in self.ids:  # the servos' own watchdog off again (it would stop the next tool that enables torque)
            try:
                self.write(dxl_id, ct.BUS_WATCHDOG, 0)
            except Exception:  # noqa: BLE001
                pass
        return state

    def close(self) -> None:
        if self.port is not None:
            try:
                self.port.closePort()
            except Exception:  # noqa: BLE001
                pass
            self.port = None
