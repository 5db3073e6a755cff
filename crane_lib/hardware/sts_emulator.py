"""A Feetech STS bus emulator: the SO-101's six STS3215 servos on a pseudo-terminal, each in
position mode with the servo's own position loop driving the twin's plant behind them.

scservo_sdk (feetech-servo-sdk, the package LeRobot uses), opened on the terminal's path as it
would open /dev/ttyACM0, talks to a simulated SO-101. Usable by hand:

    python -m crane_lib.hardware.sts_emulator [--seed N] [--lockstep] [--return-delay 250]
    # prints the port, e.g. /dev/pts/7; then, in another shell:
    crane-id record trajectories/so101/PI_ALPHA.txt --robot so101 --out so.npz --port /dev/pts/7

What is emulated (sts_control_table for the sources; sts_protocol for the framing):

* instructions: PING (also broadcast), READ, WRITE, SYNC READ, SYNC WRITE; a packet whose
  checksum fails is ignored (the STS error byte has no checksum bit), as is any other
  instruction;
* the memory table (addresses 0..86) with the values a SO-101 has after LeRobot configured it
  (Return_Delay_Time 0, P/I/D 16/0/32, Acceleration 254, Operating_Mode 0 position), or any
  other Return_Delay_Time, operating mode, ID or model number (the bad-input tests);
  sign-magnitude registers (Present_Velocity, Present_Load, Present_Current, Goal_Velocity,
  Homing_Offset) are encoded as the servo sends them;
* the status error byte and Status(65): an error bit set by a fault (default 0x20, overload)
  rides on every status packet; a bit in Unloading_Condition(19) switches the torque off;
* Return_Delay_Time (2 us per unit before a reply) and, with `wire_baud`, each packet's time on
  the wire;
* the motors: in position mode with torque on each servo runs its position loop toward
  Goal_Position with its registers' gains (`StsPlant`: model.position_loop's
  `position_loop_law` and `duty_current`, the twin's and CLIE's loop, at the description's
  [position_loop] tick), the twin's plant integrates the resulting torque (Kt_true x current,
  the motor's torque-speed line); with
  torque off, or in any other mode (not emulated), the motor delivers nothing. Present_Position
  is the 12-bit encoder (2048 at 0 rad, read noise), Present_Velocity counts/s, Present_Current
  the drawn current in 6.5 mA units (saturating at the current limit), Present_Load the loop's
  PWM duty in 0.1 % (Feetech documents it as the load in 0.1 % of the maximum torque; what a
  real servo reports there is unverified), Moving 1 while the loop's profile has not reached
  the goal or the link turns faster than the twin's moving threshold, Present_Voltage 12.0 V,
  Present_Temperature 35 deg C.

Time, lockstep, reply ordering and the faults (drop, corrupt_crc: a corrupted checksum,
hardware_error: error bits, stuck, late) are those of the DYNAMIXEL emulator
(`emulator.ServoBus`, which this bus extends); in lockstep each SYNC READ starts the next
control period of the SO-101 recorder (`STS_PERIOD_S`) and the clock advances by each packet's
time at 1 Mbit/s.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from dataclasses import dataclass

import numpy as np

from crane_lib.hardware import emulator as base
from crane_lib.hardware import sts_control_table as sts
from crane_lib.hardware import sts_protocol as p
from crane_lib.hardware.arm_bus import ArmBus, sts_arm_bus
from crane_lib.hardware.emulator import Fault
from crane_lib.hardware.timing import STS_PERIOD_S
from crane_lib.model import position_loop
from crane_lib.model.arm_description import load_arm
from crane_lib.model.position_loop import PositionLoopSettings
from crane_lib.twin.recorder import MOVING_THRESHOLD_RAD_S

SO101 = "so101"
FIRMWARE = (3, 10)  # major, minor the emulated servos report
PRESENT_VOLTAGE = 120  # 0.1 V: the 12 V supply of the C018 servos
PRESENT_TEMPERATURE_C = 35
UNLOADING_FACTORY = 0x2C  # overheating, overcurrent, overload unload the torque (unverified)


@dataclass
class StsEmulatorConfig:
    seed: int = 1
    start_posture: tuple[float, ...] = ()  # rad per axis; empty: all 0
    faults: tuple[Fault, ...] = ()
    ids: tuple[int, ...] = ()  # every servo's ID in bus order; default: the arm's (1..6)
    models: tuple[int, ...] = ()  # per servo; default 777 (STS3215)
    operating_mode: int = sts.OPERATING_MODE_POSITION
    return_delay: int = 0  # as LeRobot's configure_motors leaves it (factory: 250)
    pid: tuple[int, int, int] = sts.PID_LEROBOT
    wire_baud: float = 0.0  # > 0: add each packet's time on a bus at this rate
    absent: tuple[int, ...] = ()  # IDs that never answer
    realtime: bool = False  # ask for SCHED_FIFO for the emulator process
    held_until_torque: bool = False  # the arm is held at start_posture until the first torque on
    lockstep: bool = False  # device time driven by the bus (one control period per SYNC READ)
    arm: str = SO101

    def __post_init__(self):
        bus = self.bus()
        if not self.ids:
            self.ids = bus.ids
        if not self.models:
            self.models = tuple(s.model_number for s in bus.servos)

    def bus(self) -> ArmBus:
        """The arm's STS bus."""
        return sts_arm_bus(self.arm)

    def posture(self) -> np.ndarray:
        """The start posture (rad), one angle per axis."""
        n = self.bus().n_axes
        posture = np.asarray(self.start_posture, dtype=float) if self.start_posture else np.zeros(n)
        if posture.shape != (n,):
            raise ValueError(f"start posture of {posture.size} angles for {n} axes")
        return posture


# ---------------------------------------------------------------- one servo's memory table


_OWNER: list = [None] * sts.CONTROL_TABLE_SIZE
for _register in sts.REGISTERS:
    for _k in range(_register.size):
        _OWNER[_register.address + _k] = _register
del _register, _k


class StsServo:
    """The memory table of one emulated STS3215 and the rules of reading and writing it."""

    def __init__(self, sts_id: int, model: int, axis: int, config: StsEmulatorConfig):
        self.id = sts_id
        self.axis = axis
        self.table = bytearray(sts.CONTROL_TABLE_SIZE)
        p_gain, i_gain, d_gain = config.pid
        defaults = {
            sts.FIRMWARE_MAJOR: FIRMWARE[0],
            sts.FIRMWARE_MINOR: FIRMWARE[1],
            sts.MODEL_NUMBER_REG: model,
            sts.ID: sts_id,
            sts.BAUD: sts.BAUD_REGISTER[config.bus().baud],
            sts.RETURN_DELAY_TIME: config.return_delay,
            sts.STATUS_RETURN_LEVEL: 1,
            sts.MIN_POSITION_LIMIT: 0,
            sts.MAX_POSITION_LIMIT: 4095,
            sts.MAX_TEMPERATURE_LIMIT: 70,
            sts.MAX_VOLTAGE_LIMIT: 140,
            sts.MIN_VOLTAGE_LIMIT: 40,
            sts.MAX_TORQUE_LIMIT: 1000,
            sts.UNLOADING_CONDITION: UNLOADING_FACTORY,
            sts.LED_ALARM_CONDITION: 0x2F,
            sts.P_COEFFICIENT: p_gain,
            sts.I_COEFFICIENT: i_gain,
            sts.D_COEFFICIENT: d_gain,
            sts.PROTECTION_CURRENT: 500,
            sts.OPERATING_MODE: config.operating_mode,
            sts.OVERLOAD_TORQUE: 80,
            sts.ACCELERATION: sts.ACCELERATION_SETTING,
            sts.TORQUE_LIMIT: 1000,
            sts.PRESENT_VOLTAGE: PRESENT_VOLTAGE,
            sts.PRESENT_TEMPERATURE: PRESENT_TEMPERATURE_C,
        }
        for register, value in defaults.items():
            self.set(register, value)
        self.torque_events: list[tuple[float, int]] = []
        self.last_instruction = 0.0

    def get(self, register) -> int:
        """A register's value (sign-magnitude registers decoded)."""
        raw = int.from_bytes(
            self.table[register.address : register.address + register.size], "little"
        )
        bit = sts.SIGN_BIT.get(register.address)
        return raw if bit is None else sts.decode_sign_magnitude(raw, bit)

    def set(self, register, value: int) -> None:
        """Store a register's value (sign-magnitude registers encoded)."""
        bit = sts.SIGN_BIT.get(register.address)
        raw = int(value) if bit is None else sts.encode_sign_magnitude(int(value), bit)
        self.table[register.address : register.address + register.size] = raw.to_bytes(
            register.size, "little"
        )

    @property
    def secondary_id(self) -> int:
        """STS servos have no shadow function (the DYNAMIXEL bus's hook)."""
        return -1

    @property
    def torque_on(self) -> bool:
        """Whether the servo's torque is enabled."""
        return self.table[sts.TORQUE_ENABLE.address] == 1

    @property
    def position_mode(self) -> bool:
        """Whether the servo runs its position loop."""
        return self.get(sts.OPERATING_MODE) == sts.OPERATING_MODE_POSITION

    def reply_delay_s(self) -> float:
        """Return_Delay_Time: 2 us per unit before the status packet."""
        return self.get(sts.RETURN_DELAY_TIME) * 2e-6

    def error_byte(self, error: int = 0) -> int:
        """The status packet's error byte: the Status(65) bits."""
        return (error | self.table[sts.STATUS.address]) & 0x7F

    def read(self, address: int, length: int) -> tuple[int, bytes]:
        """The bytes of a read of `length` at `address` (nothing beyond the table)."""
        if length < 1 or address < 0 or address + length > sts.CONTROL_TABLE_SIZE:
            return 0, b""
        return 0, bytes(self.table[address : address + length])

    def write(self, address: int, data: bytes, now: float) -> int:
        """Write `data` at `address`: whole writable registers only, values in range; a write
        that breaks a rule changes nothing (the STS error byte has no bit for it: 0)."""
        if not data or address < 0 or address + len(data) > sts.CONTROL_TABLE_SIZE:
            return 0
        k = 0
        updates = []
        while k < len(data):
            register = _OWNER[address + k]
            if register is None or register.address != address + k or not register.writable:
                return 0
            if k + register.size > len(data) or register in (sts.ID, sts.BAUD):
                return 0
            raw = int.from_bytes(data[k : k + register.size], "little")
            updates.append((register, raw))
            k += register.size
        for register, raw in updates:
            if register is sts.TORQUE_ENABLE and raw not in (0, 1):
                return 0
            if register is sts.OPERATING_MODE and raw not in sts.OPERATING_MODES:
                return 0
        for register, raw in updates:
            if register is sts.TORQUE_ENABLE and raw != self.table[register.address]:
                if raw == 1 and self.unloaded:
                    continue  # an unloading error keeps the torque off
                self.torque_events.append((now, raw))
            self.table[register.address : register.address + register.size] = raw.to_bytes(
                register.size, "little"
            )
        return 0

    @property
    def unloaded(self) -> bool:
        """Whether an error bit of Unloading_Condition(19) is set."""
        return bool(self.table[sts.STATUS.address] & self.table[sts.UNLOADING_CONDITION.address])

    def raise_hardware_error(self, bits: int, now: float) -> None:
        """Set error bits in Status(65); an unloading one switches the torque off."""
        self.table[sts.STATUS.address] |= bits & 0x7F
        if self.unloaded and self.torque_on:
            self.table[sts.TORQUE_ENABLE.address] = 0
            self.torque_events.append((now, 0))


# ---------------------------------------------------------------- the servo's position loop


def register_gains(servo: StsServo, settings: PositionLoopSettings) -> np.ndarray:
    """One servo's column of `position_loop_law`'s gains from its registers: P/I/D_Coefficient,
    the duty limit Torque_Limit(48) / 1000, the profile's speed Goal_Velocity(46) (0: the
    firmware's own limit, the description's profile velocity) and acceleration Acceleration(41)
    x 100 counts/s^2 (0: none), scaled by the firmware's factors (model.position_loop)."""
    speed = abs(servo.get(sts.GOAL_VELOCITY)) * sts.RAD_PER_COUNT
    acceleration = servo.get(sts.ACCELERATION) * sts.ACCELERATION_UNIT * sts.RAD_PER_COUNT
    registers = dataclasses.replace(
        settings,
        p_gain=servo.get(sts.P_COEFFICIENT),
        i_gain=servo.get(sts.I_COEFFICIENT),
        d_gain=servo.get(sts.D_COEFFICIENT),
        pwm_limit=min(servo.get(sts.TORQUE_LIMIT), servo.get(sts.MAX_TORQUE_LIMIT)) / 1000.0,
        profile_velocity=speed if speed > 0 else settings.profile_velocity,
        profile_acceleration=acceleration,
    )
    return registers.gains(1)[:, 0]


class StsPlant(base.RealTimePlant):
    """The twin's plant driven by each servo's position loop (model.position_loop, the twin's
    and CLIE's loop), stepped tick by tick of the loop to the device's time."""

    def __init__(self, config: StsEmulatorConfig):
        super().__init__(config)
        n = self.n_axes
        settings = load_arm(config.arm).position_loop
        if settings is None:
            raise ValueError(f"the {config.bus().name}'s description has no [position_loop]")
        self.settings = settings
        self.goal = config.posture().copy()
        self.enabled = np.zeros(n, dtype=bool)
        self.gains = settings.gains(n)
        self.state = np.zeros((position_loop.S_ROWS, n))
        self.out = np.zeros((position_loop.O_ROWS, n))
        self.amps = np.zeros(n)
        self.loop_steps = max(1, int(round(settings.period / self.plant.step)))
        self.stall_current = np.asarray(self.plant.stall_current, dtype=float)
        self.no_load_speed = np.asarray(self.plant.no_load_speed, dtype=float)
        # the current register saturates at the servo's current limit (actuators.csv)
        self.limit_units = np.array([s.current_limit_units for s in config.bus().servos])

    def set_servo(self, axis: int, servo: StsServo) -> None:
        """Take axis `axis`'s servo registers: torque, mode, goal, loop gains."""
        enabled = servo.torque_on and servo.position_mode
        self.goal[axis] = (servo.get(sts.GOAL_POSITION) - sts.POSITION_CENTRE) * sts.RAD_PER_COUNT
        self.gains[:, axis] = register_gains(servo, self.settings)
        if enabled and not self.enabled[axis]:  # torque on: the loop holds from rest
            theta = self.x[self.core.XQ + axis]
            self.state[:, axis] = position_loop.initial_state([theta], [theta])[:, 0]
        self.enabled[axis] = enabled

    def advance(self, now: float) -> None:
        """Step the plant up to device time `now`; the loop's duty (and so the motor's torque at
        the rotor's speed) is updated once per tick of the servo's loop."""
        due = int((now - self.t0) / self.plant.step + 1e-6)
        core, n_axes = self.core, self.n_axes
        while self.steps < due and not self.failed:
            if self.steps % self.loop_steps == 0:
                theta = self.x[core.XQ : core.XQ + n_axes].copy()
                position_loop.position_loop_law(
                    self.goal, theta, self.settings.period, self.state, self.gains, self.out
                )
                # the rotor's speed (link side) of the arm's axes, the gripper's own speed
                speed = self.x[core.XV : core.XV + n_axes].copy()
                speed[: core.N_ARM] = self.x[core.XVM : core.XVM + core.N_ARM]
                # the compiled function's Python body, which takes the axes' arrays at once
                amps = position_loop.duty_current.py_func(
                    self.out[position_loop.O_DUTY], speed, self.stall_current, self.no_load_speed
                )
                self.amps = np.where(self.enabled, amps, 0.0)
                self.torque[:] = self.plant.kt_true * self.amps
            n = min(self.loop_steps - self.steps % self.loop_steps, due - self.steps)
            if not core.run_steps(n, self.x, self.torque, *self._step_arguments):
                self.failed = (
                    f"the plant's inertia matrix is not positive definite at {self.time:.3f} s"
                )
            self.steps += n

    def sts_sensors(self) -> tuple[np.ndarray, ...]:
        """Present_Position (counts, read noise), Present_Velocity (counts/s), Present_Current
        (6.5 mA units, noisy, saturating at the current limit), Present_Load (the loop's PWM duty
        in 0.1 %, as the twin logs it) and Moving per axis."""
        n = self.n_axes
        q = self.x[self.core.XQ : self.core.XQ + n]
        v = self.x[self.core.XV : self.core.XV + n]
        noise = self._noise_encoder * self.rng.normal(size=n)
        ticks = np.rint(q / sts.RAD_PER_COUNT + sts.POSITION_CENTRE + noise).astype(np.int64)
        ticks = np.clip(ticks, 0, sts.ENCODER_COUNTS - 1)
        velocity = np.rint(v / sts.RAD_PER_COUNT).astype(np.int64)
        amps = self.amps + self._noise_present * self.rng.normal(size=n)
        units = np.rint(amps / self.current_unit)
        current = np.clip(units, -self.limit_units, self.limit_units).astype(np.int64)
        duty = np.where(self.enabled, self.out[position_loop.O_DUTY], 0.0)
        load = np.clip(np.rint(1000.0 * duty), -1000, 1000).astype(np.int64)
        # Moving: the profile short of the goal, or the link faster than the threshold
        profiling = np.abs(self.state[position_loop.S_POSITION] - self.goal) >= 1e-9
        moving = self.enabled & (profiling | (np.abs(v) >= MOVING_THRESHOLD_RAD_S))
        return ticks, velocity, current, load, moving


# ---------------------------------------------------------------- the bus


class StsServoBus(base.ServoBus):
    """The SO-101's six STS servos on one bus: instruction packets in, (time, status bytes) out."""

    REPLY_ID_BYTE = 2  # FF FF ID LEN ERR ...
    LOCKSTEP_BAUD = 1_000_000  # the SO-101's bus rate
    period_s = STS_PERIOD_S

    def __init__(self, config: StsEmulatorConfig):  # noqa: D107 (the base's attributes, STS servos)
        bus = config.bus()
        if len(config.ids) != len(bus.servos) or len(config.models) != len(bus.servos):
            raise ValueError(f"the emulator needs {len(bus.servos)} IDs and model numbers")
        self.config = config
        self.n_axes = bus.n_axes
        self.servos = {
            i: StsServo(i, m, spec.axis, config)
            for i, m, spec in zip(config.ids, config.models, bus.servos)
        }
        self.plant = StsPlant(config)
        self.plant.hold(config.held_until_torque)
        self.faults = list(config.faults)
        self.armed_at = None
        self.started = set()
        self.drops_left, self.corrupt_left, self.late_s, self.late_left = {}, {}, {}, {}
        self.free_at = {}
        self.device_t = 0.0
        self.stats = base.BusStatistics()
        self.reader = p.PacketReader()
        self.log = []
        if not config.lockstep:
            for servo in self.servos.values():
                servo.last_instruction = time.monotonic()
        for k, servo in enumerate(self.servos.values()):
            servo.set(sts.GOAL_POSITION, self._ticks_now(k))

    def _ticks_now(self, k: int) -> int:
        q = self.plant.x[self.plant.core.XQ + k]
        return int(np.clip(round(q / sts.RAD_PER_COUNT) + sts.POSITION_CENTRE, 0, 4095))

    def _watchdogs(self, now: float) -> None:
        """STS servos have no bus watchdog."""

    def _sync_motors(self, redraw: bool = False) -> None:
        """Hand the plant every servo's torque, mode, goal and gains."""
        for k, servo in enumerate(self.servos.values()):
            self.plant.set_servo(k, servo)

    def _refresh(self) -> None:
        """Present values of every servo from the plant, as of this packet."""
        ticks, velocity, current, load, moving = self.plant.sts_sensors()
        for k, servo in enumerate(self.servos.values()):
            servo.set(sts.PRESENT_POSITION, ticks[k])
            servo.set(sts.PRESENT_VELOCITY, velocity[k])
            servo.set(sts.PRESENT_CURRENT, current[k])
            servo.set(sts.PRESENT_LOAD, load[k])
            servo.set(sts.MOVING, int(moving[k]))

    def _status_packet(self, servo, error: int, parameters: bytes) -> bytes:
        """The STS status packet of `servo`."""
        return p.status_packet(servo.id, servo.error_byte(error), parameters)

    def _handle(self, packet: p.Packet, now: float, t: float) -> list[tuple[float, bytes]]:
        """The replies to one packet arriving at wall time `now`, device time `t`."""
        instruction = packet.instruction
        self.stats.instructions[instruction] = self.stats.instructions.get(instruction, 0) + 1
        broadcast = packet.sts_id == p.BROADCAST_ID
        absent = self.config.absent
        if not broadcast and (packet.sts_id not in self.servos or packet.sts_id in absent):
            return []
        if not packet.checksum_ok:
            self.stats.crc_failures += 1
            return []
        present = [s for s in self.servos.values() if s.id not in absent]
        addressed = present if broadcast else [self.servos[packet.sts_id]]
        for servo in addressed:
            servo.last_instruction = t
        params = packet.parameters
        ready = now + self._wire(packet.raw_length)
        if instruction == p.INST_PING:
            out = []
            for servo in addressed:
                ready += self._wire(6)
                out += self._reply(servo, 0, b"", ready)
                ready = max(ready, out[-1][0]) if out else ready
            return out
        if instruction == p.INST_READ and not broadcast and len(params) == 2:
            self._refresh()
            servo = addressed[0]
            _, data = servo.read(params[0], params[1])
            return self._reply(servo, 0, data, ready + self._wire(6 + len(data)))
        if instruction == p.INST_WRITE and len(params) >= 2:
            out = []
            for servo in addressed:
                servo.write(params[0], params[1:], t)
                if not broadcast:
                    out += self._reply(servo, 0, b"", ready + self._wire(6))
            return out
        if instruction == p.INST_SYNC_READ and broadcast and len(params) >= 3:
            address, length = params[0], params[1]
            self._refresh()
            out = []
            for sts_id in params[2:]:
                servo = self.servos.get(sts_id)
                if servo is None or sts_id in absent:
                    continue  # an absent servo stays silent; the host times out
                _, data = servo.read(address, length)
                ready += self._wire(6 + len(data))
                out += self._reply(servo, 0, data, ready)
                ready = max(ready, out[-1][0]) if out else ready
            return out
        if instruction == p.INST_SYNC_WRITE and broadcast and len(params) >= 2:
            address, length = params[0], params[1]
            body = params[2:]
            if length < 1 or len(body) % (length + 1):
                return []
            for k in range(0, len(body), length + 1):
                servo = self.servos.get(body[k])
                if servo is not None and servo.id not in absent:
                    servo.write(address, body[k + 1 : k + 1 + length], t)
            return []
        return []

    def snapshot(self) -> dict:
        """What a test reads back: every servo's registers of interest and the event log."""
        xq = self.plant.core.XQ
        return {
            "servos": {
                str(i): {
                    "torque_enable": s.get(sts.TORQUE_ENABLE),
                    "goal_position": s.get(sts.GOAL_POSITION),
                    "operating_mode": s.get(sts.OPERATING_MODE),
                    "status": s.get(sts.STATUS),
                    "return_delay": s.get(sts.RETURN_DELAY_TIME),
                    "acceleration": s.get(sts.ACCELERATION),
                    "torque_events": list(s.torque_events),
                }
                for i, s in self.servos.items()
            },
            "stats": {
                **vars(self.stats),
                "instructions": {f"0x{k:02x}": v for k, v in self.stats.instructions.items()},
            },
            "theta_deg": [float(v) for v in np.degrees(self.plant.x[xq : xq + self.n_axes])],
            "plant_failed": self.plant.failed,
            "plant_time_s": self.plant.time,
            "lockstep": self.config.lockstep,
            "log": list(self.log),
        }


# ---------------------------------------------------------------- serving


def config_from_json(text: str) -> StsEmulatorConfig:
    """The configuration from its JSON (dataclasses.asdict)."""
    fields = json.loads(text)
    fields["faults"] = tuple(Fault(**f) for f in fields.get("faults", ()))
    for key in ("start_posture", "ids", "models", "absent", "pid"):
        if key in fields:
            fields[key] = tuple(fields[key])
    return StsEmulatorConfig(**fields)


def emulator_process(config: StsEmulatorConfig, timeout_s: float = 120.0) -> base.EmulatorProcess:
    """The STS emulator in its own process (port, snapshot, reset, stop as the DYNAMIXEL one's)."""
    return base.EmulatorProcess(config, timeout_s, module="crane_lib.hardware.sts_emulator")


def build_parser() -> argparse.ArgumentParser:
    """The STS emulator's command-line parser."""
    parser = argparse.ArgumentParser(
        prog="python -m crane_lib.hardware.sts_emulator",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the plant and the noise")
    parser.add_argument("--start-posture", type=float, nargs="+", metavar="DEG", default=None)
    parser.add_argument("--operating-mode", type=int, default=0, help="Operating_Mode (0)")
    parser.add_argument(
        "--return-delay", type=int, default=0, help="Return_Delay_Time (0; factory 250)"
    )
    parser.add_argument("--lockstep", action="store_true", help="device time driven by the bus")
    base.add_fault_options(parser)
    parser.add_argument(
        "--serve-stdio", metavar="CONFIG_JSON", default=None, help=argparse.SUPPRESS
    )
    return parser


def main(argv=None) -> int:
    """Serve the emulated STS bus on a pseudo-terminal until interrupted."""
    args = build_parser().parse_args(argv)
    if args.serve_stdio is not None:
        return base._serve_stdio(config_from_json(args.serve_stdio), StsServoBus, config_from_json)
    config = StsEmulatorConfig(
        seed=args.seed,
        start_posture=tuple(np.radians(args.start_posture)) if args.start_posture else (),
        operating_mode=args.operating_mode,
        return_delay=args.return_delay,
        lockstep=args.lockstep,
        faults=base.faults_of(args),
        held_until_torque=True,  # resting on its stand until torque is on (no joint stops here)
    )
    master, slave, path = base.open_pty()
    session = base.Session(StsServoBus(config))
    print(f"SO-101 STS emulator on {path} (IDs {config.ids}); Ctrl-C stops", flush=True)
    try:
        base.serve(session, master)
    except KeyboardInterrupt:
        pass
    return 0


def config_to_json(config: StsEmulatorConfig) -> str:
    """The configuration as JSON."""
    return json.dumps(dataclasses.asdict(config))


if __name__ == "__main__":
    sys.exit(main())
