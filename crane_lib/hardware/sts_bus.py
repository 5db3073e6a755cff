"""The recorder's side of the SO-101's Feetech STS bus, over scservo_sdk (feetech-servo-sdk, the
package LeRobot uses; protocol_end 0).

`StsBus.open` checks the port; `discover` pings every ID and checks the model number (the SDK's
ping reads Model_Number(3)) and the ID register; `check_settings` reads, torque still off, what
the recorder relies on and does not change in the servo's EEPROM: Operating_Mode 0 (position),
Return_Delay_Time 0 (LeRobot's configure_motors writes both; the factory's 250 = 500 us would
cost 3 ms per cycle) and P/I/D_Coefficient equal to the description's [position_loop] (the loop
the twin and CLIE simulate); `configure` switches torque off and writes the RAM settings
LeRobot found necessary (Acceleration 254), Goal_Velocity 0 and the present position as the
goal, each read back; `enable_torque` is the torque handshake (write, read back, all or
nothing); `read_cycle` / `write_goal_position` are the two group transfers of every cycle;
`torque_off` is the safe stop, which never raises.

Everything that is wrong before torque is enabled raises `InputError` naming the port, the ID
and register and what was expected (the CLI: exit 2); nothing is ever enabled then.

Two subclasses of the SDK, as the DYNAMIXEL bus has (bus.py):

* `StsPortHandler` (of its PortHandler, with bus.WaitingPort): the SDK polls the port in a tight
  loop while it waits; this one waits in select() with the recorder's reply timeout, discards
  stale input before every request and drains the port after a timeout.
* `CheckedStsPacketHandler` (of its protocol_packet_handler): the SDK takes the first status
  packet whose ID matches as the reply, whatever its length; this one takes a status packet
  only if its ID and LEN are the request's (a read of n bytes: n + 2; a ping or a write: 2),
  drops and counts every other (`stale_packets`), and drains the port after a timeout or a
  corrupt packet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scservo_sdk as scs
from scservo_sdk.protocol_packet_handler import (
    PKT_ERROR,
    PKT_ID,
    PKT_INSTRUCTION,
    PKT_LENGTH,
    PKT_PARAMETER0,
    protocol_packet_handler,
)

from crane_lib.errors import InputError
from crane_lib.hardware import sts_control_table as sts
from crane_lib.hardware import sts_protocol
from crane_lib.hardware.arm_bus import ArmBus
from crane_lib.hardware.bus import SETUP_REPLY_TIMEOUT_MS, BusFault, WaitingPort, check_port
from crane_lib.hardware.timing import REALTIME, Timing
from crane_lib.model.position_loop import PositionLoopSettings

PID_REGISTERS = (sts.P_COEFFICIENT, sts.I_COEFFICIENT, sts.D_COEFFICIENT)
ADAPTER = "the SO-101's bus servo adapter, e.g. /dev/ttyACM0"
BROADCAST_PING_WINDOW_S = 0.05  # every servo on the bus answers a broadcast ping within this
COMM_NAMES = {
    scs.COMM_SUCCESS: "success",
    scs.COMM_PORT_BUSY: "port busy",
    scs.COMM_TX_FAIL: "transmit failed",
    scs.COMM_RX_FAIL: "no status packet",
    scs.COMM_TX_ERROR: "bad instruction packet",
    scs.COMM_RX_WAITING: "still receiving",
    scs.COMM_RX_TIMEOUT: "timeout (no status packet)",
    scs.COMM_RX_CORRUPT: "corrupt status packet (checksum)",
    scs.COMM_NOT_AVAILABLE: "not available",
}


def comm_text(result: int) -> str:
    """The SDK's communication result as words."""
    return COMM_NAMES.get(result, f"result {result}")


class StsPortHandler(WaitingPort, scs.PortHandler):
    """scservo_sdk's PortHandler, waiting in select() for bytes (bus.WaitingPort)."""

    def __init__(
        self, port_name: str, reply_timeout_ms: float, settle_ms: float = REALTIME.settle_ms
    ):
        scs.PortHandler.__init__(self, port_name)
        self.init_waiting(reply_timeout_ms, settle_ms)


def expected_status_length(txpacket) -> int:
    """The LEN of the status packet that answers `txpacket`: error, parameters, checksum."""
    if txpacket[PKT_INSTRUCTION] == scs.INST_READ:
        return txpacket[PKT_PARAMETER0 + 1] + 2
    return 2


class CheckedStsPacketHandler(protocol_packet_handler):
    """scservo_sdk's packet handler, taking as the reply only a status packet whose ID and LEN
    are the request's; any other is a late reply to an earlier request, dropped and counted."""

    def __init__(self):
        scs.PacketHandler(sts.PROTOCOL_END)  # the SDK's module-wide byte order (little-endian)
        self.stale_packets = 0

    def _matches(self, rxpacket, sts_id: int, length: int) -> bool:
        if rxpacket[PKT_ID] == sts_id and rxpacket[PKT_LENGTH] == length:
            return True
        self.stale_packets += 1
        return False

    @staticmethod
    def _after_failure(port, result: int) -> None:
        if result in (scs.COMM_RX_TIMEOUT, scs.COMM_RX_CORRUPT) and hasattr(port, "discard_stale"):
            port.discard_stale()

    def txRxPacket(self, port, txpacket):  # noqa: N802 (the SDK's name and flow, with the check)
        """Send a packet and read its status, checking the reply's ID and length."""
        sts_id = txpacket[PKT_ID]
        length = expected_status_length(txpacket)
        result = self.txPacket(port, txpacket)
        if result != scs.COMM_SUCCESS or sts_id == scs.BROADCAST_ID:
            port.is_using = False
            return None, result, 0
        port.setPacketTimeout(length + 4)
        while True:
            rxpacket, result = self.rxPacket(port)
            if result != scs.COMM_SUCCESS or self._matches(rxpacket, sts_id, length):
                break
        if result != scs.COMM_SUCCESS:
            self._after_failure(port, result)
            return rxpacket, result, 0
        return rxpacket, result, rxpacket[PKT_ERROR]

    def readRx(self, port, scs_id, length):  # noqa: N802 (used by GroupSyncRead per servo)
        """Read one servo's reply of `length` bytes, skipping stale packets."""
        while True:
            rxpacket, result = self.rxPacket(port)
            if result != scs.COMM_SUCCESS or self._matches(rxpacket, scs_id, length + 2):
                break
        if result != scs.COMM_SUCCESS:
            self._after_failure(port, result)
            return [], result, 0
        return (
            list(rxpacket[PKT_PARAMETER0 : PKT_PARAMETER0 + length]),
            result,
            rxpacket[PKT_ERROR],
        )


@dataclass(frozen=True)
class StsServoInfo:
    axis: int
    sts_id: int
    model_number: int
    firmware: str

    @property
    def model(self) -> str:
        """The servo's model name from its model number."""
        return sts.MODEL_NAME.get(self.model_number, f"model {self.model_number}")


@dataclass
class StsCycleRead:
    """One cycle's sync read per axis (register units, signs decoded)."""

    position_ticks: np.ndarray
    velocity_counts: np.ndarray
    load: np.ndarray
    voltage: np.ndarray
    temperature: np.ndarray
    status: np.ndarray
    moving: np.ndarray
    current_units: np.ndarray


class StsBus:
    """The SO-101's servos behind one port (arm_bus.sts_arm_bus)."""

    def __init__(
        self,
        port: str,
        arm: ArmBus,
        timing: Timing = REALTIME,
        reply_timeout_ms: float | None = None,
        baud: int | None = None,
        loop: PositionLoopSettings | None = None,
    ):
        self.arm = arm
        self.loop = loop  # the description's [position_loop]: the servos' gains must be its
        self.port_name = str(port)
        self.baud = arm.baud if baud is None else int(baud)
        self.ids = arm.primary_ids
        self.timing = timing
        self.reply_timeout_ms = (
            timing.reply_timeout_ms if reply_timeout_ms is None else float(reply_timeout_ms)
        )
        self.setup_timeout_ms = max(SETUP_REPLY_TIMEOUT_MS, self.reply_timeout_ms)
        self.port: StsPortHandler | None = None
        self.packet = CheckedStsPacketHandler()
        self.servos: list[StsServoInfo] = []
        self.latency_timer: int | None = None
        self.settings: dict[str, str] = {}
        self.torque_limit = np.full(len(self.ids), 1000)
        self._reader = None
        self._writer = None

    def where(self, sts_id: int) -> str:
        """How a message names a servo: the port, its ID and axis."""
        axis = self.ids.index(sts_id) + 1 if sts_id in self.ids else "?"
        return f"{self.port_name}, ID {sts_id} (axis {axis})"

    # -- opening, before any write
    def open(self) -> None:
        """Open the port at the bus's baud rate, refusing a missing or busy device."""
        self.latency_timer = check_port(self.port_name, self.timing, ADAPTER)
        port = StsPortHandler(self.port_name, self.setup_timeout_ms, self.timing.settle_ms)
        try:
            opened = port.openPort() and port.setBaudRate(self.baud)
        except Exception as error:  # pyserial raises SerialException / OSError subclasses
            raise InputError(
                self.port_name,
                f"cannot open the port ({error})",
                "a serial port this user may open",
            ) from None
        if not opened:
            raise InputError(
                self.port_name,
                f"cannot set {self.baud} bit/s",
                f"a port that supports the {self.arm.name}'s {self.baud / 1e6:g} Mbit/s",
            )
        self.port = port

    def broadcast_ping(self) -> list[int]:
        """The IDs that answer a broadcast PING (each servo answers in turn), ascending."""
        port = self.port
        port.clearPort()
        port.writePort(sts_protocol.instruction_packet(sts_protocol.BROADCAST_ID, scs.INST_PING))
        data = bytearray()
        deadline = time.monotonic() + BROADCAST_PING_WINDOW_S
        while time.monotonic() < deadline:
            port.packet_start_time = port.getCurrentTime()
            port.packet_timeout = (deadline - time.monotonic()) * 1e3
            data += port.readPort(4096)
        port.is_using = False
        return sorted({pk.sts_id for pk in sts_protocol.PacketReader().feed(bytes(data))})

    def discover(self) -> list[StsServoInfo]:
        """Ping every ID of the arm, check its model number and ID register, read its firmware.
        Raises InputError naming the servo."""
        found, silent = [], []
        for axis, sts_id in enumerate(self.ids, start=1):
            expected = self.arm.axis_servos(axis)[0].model_number
            model, result, _ = self.packet.ping(self.port, sts_id)
            if result != scs.COMM_SUCCESS:
                silent.append((axis, sts_id, result))
                continue
            if model != expected:
                raise InputError(
                    f"{self.where(sts_id)}, Model_Number(3)",
                    f"{model} ({sts.MODEL_NAME.get(model, 'unknown')})",
                    f"{expected} ({sts.MODEL_NAME[expected]}, the {self.arm.name}'s servo)",
                )
            own = self.read(sts_id, sts.ID)
            if own != sts_id:
                raise InputError(
                    f"{self.where(sts_id)}, ID(5)",
                    f"reads {own}",
                    f"{sts_id}, the ID it answers to",
                )
            major, minor = (
                self.read(sts_id, sts.FIRMWARE_MAJOR),
                self.read(sts_id, sts.FIRMWARE_MINOR),
            )
            found.append(StsServoInfo(axis, sts_id, model, f"{major}.{minor}"))
        if silent:
            answering = self.broadcast_ping()
            heard = ", ".join(map(str, answering)) if answering else "none"
            if len(silent) == len(self.ids):
                raise InputError(
                    self.port_name,
                    f"no STS servo answers a ping at {self.baud / 1e6:g} Mbit/s on IDs "
                    f"{', '.join(map(str, self.ids))} (IDs answering a broadcast ping: {heard})",
                    f"the {self.arm.name}'s servos powered and connected, IDs "
                    f"{', '.join(map(str, self.ids))} (LeRobot's setup_motors sets them)",
                )
            axis, sts_id, result = silent[0]
            raise InputError(
                self.where(sts_id),
                f"no answer to a ping ({comm_text(result)}; IDs answering a broadcast ping: "
                f"{heard})",
                f"the axis-{axis} servo answering at ID {sts_id}",
            )
        self.servos = found
        self._reader = scs.GroupSyncRead(
            self.port, self.packet, sts.CYCLE_READ_ADDRESS, sts.CYCLE_READ_LENGTH
        )
        for sts_id in self.ids:
            self._reader.addParam(sts_id)
        return found

    def check_settings(self) -> dict[str, str]:
        """Read, torque off, what the recorder relies on in each servo's EEPROM and does not
        change: Operating_Mode 0 (position) and Return_Delay_Time 0. Raises InputError naming
        the servo, the register and what was expected. Returns the settings for the log."""
        modes, gains, limits, offsets = [], [], [], []
        for info in self.servos:
            sts_id = info.sts_id
            mode = self.read(sts_id, sts.OPERATING_MODE)
            if mode != sts.OPERATING_MODE_POSITION:
                raise InputError(
                    f"{self.where(sts_id)}, Operating_Mode(33)",
                    f"{mode} ({sts.OPERATING_MODES.get(mode, 'unknown')} mode)",
                    "0 (position mode, as LeRobot's so101 follower sets it): the recorder "
                    "drives the arm through the servo's own position loop",
                )
            delay = self.read(sts_id, sts.RETURN_DELAY_TIME)
            if delay != 0:
                factory = " (the factory value)" if delay == sts.RETURN_DELAY_FACTORY else ""
                raise InputError(
                    f"{self.where(sts_id)}, Return_Delay_Time(7)",
                    f"{delay} x 2 us{factory}: {len(self.ids)} replies a cycle would wait "
                    f"{len(self.ids) * delay * 2e-3:.1f} ms",
                    "0 (LeRobot's configure_motors writes it; e.g. connect the arm once with "
                    "LeRobot, or write 0 to address 7 with torque off)",
                )
            modes.append(mode)
            pid = [self.read(sts_id, r) for r in PID_REGISTERS]
            if self.loop is not None:
                wanted = (self.loop.p_gain, self.loop.i_gain, self.loop.d_gain)
                for register, found, value in zip(PID_REGISTERS, pid, wanted):
                    if found != value:
                        raise InputError(
                            f"{self.where(sts_id)}, {register.name}({register.address})",
                            str(found),
                            f"{value}, the description's [position_loop] (P/I/D "
                            f"{'/'.join(map(str, wanted))}, LeRobot's), the loop the twin and "
                            "the refinement simulate",
                        )
            gains.append("/".join(map(str, pid)))
            low, high = (
                self.read(sts_id, r) for r in (sts.MIN_POSITION_LIMIT, sts.MAX_POSITION_LIMIT)
            )
            limits.append(f"{low}..{high}")
            offsets.append(str(self.read(sts_id, sts.HOMING_OFFSET)))
        self.settings = {
            "servo_operating_mode": " ".join(map(str, modes)),
            "servo_pid_coefficients": " ".join(gains),
            "servo_position_limits": " ".join(limits),
            "servo_homing_offset": " ".join(offsets),
        }
        return self.settings

    # -- single register access with checks
    def read(self, sts_id: int, register) -> int:
        """Read one register of one servo (sign-magnitude decoded); InputError on a failure."""
        data, result, error = self.packet.readTxRx(
            self.port, sts_id, register.address, register.size
        )
        if result != scs.COMM_SUCCESS or len(data) != register.size:
            raise InputError(
                f"{self.where(sts_id)}, {register.name}({register.address})",
                f"reading failed: {comm_text(result)}",
                "a status packet",
            )
        raw = int.from_bytes(bytes(data), "little")
        bit = sts.SIGN_BIT.get(register.address)
        return raw if bit is None else sts.decode_sign_magnitude(raw, bit)

    def write(self, sts_id: int, register, value: int) -> tuple[int, int]:
        """Write and return (communication result, status error byte) without raising."""
        bit = sts.SIGN_BIT.get(register.address)
        raw = int(value) if bit is None else sts.encode_sign_magnitude(int(value), bit)
        data = list(raw.to_bytes(register.size, "little"))
        return self.packet.writeTxRx(self.port, sts_id, register.address, register.size, data)

    def write_checked(self, sts_id: int, register, value: int, expected: str) -> None:
        """Write, read back, and raise InputError unless the servo holds `value`."""
        result, _ = self.write(sts_id, register, value)
        where = f"{self.where(sts_id)}, {register.name}({register.address})"
        if result != scs.COMM_SUCCESS:
            raise InputError(where, f"writing {value} failed: {comm_text(result)}", expected)
        back = self.read(sts_id, register)
        if back != value:
            raise InputError(where, f"reads back {back} after writing {value}", expected)

    # -- configuration, torque still off
    def configure(self, goal_ticks) -> dict[str, str]:
        """Torque off, Acceleration 254 (LeRobot's setting), the goal at `goal_ticks` (where the
        arm is, so that torque on moves nothing); every write read back. InputError otherwise."""
        for axis, sts_id in enumerate(self.ids):
            self.write_checked(sts_id, sts.TORQUE_ENABLE, 0, "torque off before configuring")
            self.write_checked(
                sts_id,
                sts.ACCELERATION,
                sts.ACCELERATION_SETTING,
                f"Acceleration {sts.ACCELERATION_SETTING} (LeRobot's configure_motors)",
            )
            self.write_checked(
                sts_id,
                sts.GOAL_VELOCITY,
                0,
                "Goal_Velocity 0 (the firmware's own speed limit, the profile the loop assumes)",
            )
            self.write_checked(
                sts_id,
                sts.GOAL_POSITION,
                int(goal_ticks[axis]),
                "the present position as the goal before torque on",
            )
        self._writer = scs.GroupSyncWrite(
            self.port, self.packet, sts.GOAL_POSITION.address, sts.GOAL_POSITION.size
        )
        for axis, sts_id in enumerate(self.ids):
            value = int(goal_ticks[axis])
            self._writer.addParam(sts_id, [value & 0xFF, value >> 8])
        self.torque_limit = np.array([self.read(i, sts.TORQUE_LIMIT) for i in self.ids])
        return {
            **self.settings,
            "servo_acceleration": str(sts.ACCELERATION_SETTING),
            "servo_goal_velocity": "0",
            "servo_torque_limit": " ".join(map(str, self.torque_limit)),
        }

    def enable_torque(self) -> None:
        """Torque on for every servo with read-back; on any failure every servo is switched off
        again before the InputError propagates."""
        try:
            for sts_id in self.ids:
                self.write_checked(sts_id, sts.TORQUE_ENABLE, 1, "Torque_Enable 1 (read back)")
        except BaseException:
            self.torque_off()
            raise
        self.port.reply_timeout_ms = self.reply_timeout_ms

    # -- the cycle
    def new_cycle_read(self) -> StsCycleRead:
        """A zeroed StsCycleRead for this arm."""
        n = len(self.ids)
        return StsCycleRead(*(np.zeros(n, dtype=np.int64) for _ in range(8)))

    def read_cycle(self, out: StsCycleRead) -> None:
        """Read one cycle's block (position .. current) of every servo by sync read."""
        result = self._reader.txRxPacket()
        if result != scs.COMM_SUCCESS:
            kind = {scs.COMM_RX_TIMEOUT: "timeout", scs.COMM_RX_CORRUPT: "crc"}.get(result, "bus")
            raise BusFault(kind, f"sync read: {comm_text(result)}")
        data = self._reader.data_dict
        for k, sts_id in enumerate(self.ids):
            raw = data[sts_id]
            if len(raw) != sts.CYCLE_READ_LENGTH:
                raise BusFault(
                    "bus",
                    f"sync read: ID {sts_id} returned {len(raw)} of {sts.CYCLE_READ_LENGTH} bytes",
                )
            (
                out.position_ticks[k],
                out.velocity_counts[k],
                out.load[k],
                out.voltage[k],
                out.temperature[k],
                out.status[k],
                out.moving[k],
                out.current_units[k],
            ) = sts.unpack_cycle(raw)

    def write_goal_position(self, ticks) -> None:
        """Write every axis's Goal_Position (counts, 0..4095) by sync write."""
        for axis, sts_id in enumerate(self.ids):
            value = int(ticks[axis])
            self._writer.changeParam(sts_id, [value & 0xFF, value >> 8])
        result = self._writer.txPacket()
        if result != scs.COMM_SUCCESS:
            raise BusFault("bus", f"sync write of Goal_Position: {comm_text(result)}")

    def stale_counts(self) -> dict[str, str]:
        """Stale packets and bytes dropped so far, for the log's metadata."""
        return {
            "bus_stale_packets_dropped": str(self.packet.stale_packets),
            "bus_stale_bytes_dropped": str(self.port.stale_bytes if self.port is not None else 0),
        }

    # -- stopping
    def torque_off(self, attempts: int = 3) -> dict[int, int | None]:
        """Torque_Enable 0 on every servo, read back. Never raises; returns the value read back
        per ID (None: unreadable)."""
        state: dict[int, int | None] = {}
        if self.port is None:
            return state
        self.port.reply_timeout_ms = max(self.reply_timeout_ms, SETUP_REPLY_TIMEOUT_MS / 5)
        self.port.is_using = False  # a transaction an exception left open must not block the stop
        for sts_id in self.ids:
            value = None
            for _ in range(attempts):
                try:
                    self.write(sts_id, sts.TORQUE_ENABLE, 0)
                    data, result, _ = self.packet.readTxRx(
                        self.port, sts_id, sts.TORQUE_ENABLE.address, 1
                    )
                    if result == scs.COMM_SUCCESS and data == [0]:
                        value = 0
                        break
                except Exception:  # noqa: BLE001 - the stop must go on
                    pass
            state[sts_id] = value
        return state

    def close(self) -> None:
        """Close the port (idempotent)."""
        if self.port is not None:
            try:
                self.port.closePort()
            except Exception:  # noqa: BLE001
                pass
            self.port = None
