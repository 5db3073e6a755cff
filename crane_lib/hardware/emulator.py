"""A DYNAMIXEL Protocol 2.0 device emulator: an arm's servos on a pseudo-terminal, with the
digital twin's plant integrating behind them in real time.

One process opens a pseudo-terminal and answers on it as the CRANE-X7's eight servos (IDs
2..9: seven XM430-W350 and the XM540-W270 of axis 2), or as another arm's (`arm`, e.g. the
ViperX 300 S's nine on seven axes, arm_bus.py), so the real dynamixel-sdk, opened on the
terminal's path as it would open /dev/ttyUSB0, drives a simulated arm. Usable by hand:

    python -m crane_lib.hardware.emulator [--arm vx300s] [--seed N] [--start-posture DEG ...]
    # prints the port, e.g. /dev/pts/7; then, in another shell:
    crane-id record trajectories/AP01.txt --out AP01.csv --port /dev/pts/7
    crane-id record trajectories/vx300s/PI_ALPHA.txt --robot vx300s --baud 3000000 \
        --out vx.npz --port /dev/pts/7

Shadow servos (a joint driven by two, arm_bus.py): a servo obeys the instruction packets sent to
its ID and to its Secondary ID (register 12), and answers only those sent to its ID, so a shadow
takes its primary's goal writes silently; a goal written to its own ID is taken too (the
recorder never writes one). Each servo of a joint delivers its share of the joint's torque (the
twin's torque constant of the axis over the number of servos) from its own goal current, and
reports its own present current. A servo turns the joint in its normal direction unless its
mounting (mirrored where the arm's configuration sets the reverse bit) and its Drive Mode
reverse bit disagree; then its torque, position (mirrored about 2048) and velocity are the
joint's reversed.

What is emulated (e-Manual, X series, Protocol 2.0; addresses in control_table):

* instructions: PING (also broadcast), READ, WRITE, SYNC READ, SYNC WRITE, REBOOT; every other
  instruction answers with the Instruction Error; a packet whose CRC fails answers with the CRC
  Error (unicast) or is ignored (broadcast), as the e-Manual's status-packet table says;
* the control table of each model, factory values (Return Delay Time 250 = 500 us, Operating
  Mode 3 = position), the EEPROM lock while torque is on (Access Error), read-only registers,
  Goal Current beyond Current Limit (Data Limit Error), indirect addresses 1..56 and their data;
* status error bits: the alert bit (0x80) while Hardware Error Status is set; a hardware error
  whose bit is in Shutdown(63) clears Torque Enable until a REBOOT, as the real servo does;
* Return Delay Time (the reply waits 2 us per unit) and, with `wire_baud`, the time each
  packet takes on a bus at that rate (off by default: the emulator then answers as fast as the
  host can);
* Bus Watchdog(98): with torque on, no instruction packet for value x 20 ms stops the motor
  (goal current 0), the register reads -1 and Goal Current rejects writes (Data Range Error);
* the motors: in Current Control Mode with torque on, each axis delivers Kt_true x (goal
  current + the twin's current-loop error); with torque off, or in any other mode (not
  emulated), it delivers nothing and the arm moves under gravity and friction alone.
  Present Position is the twin's 12-bit encoder (2048 at 0 rad, read noise), Present Current
  the delivered current in 2.69 mA units, Present Velocity the link velocity in 0.229 rpm.

The plant is the twin's (`twin.recorder.build_plant`, one run-to-run draw from `seed`), advanced
in 0.25 ms steps to the device's time at which each packet arrives; between packets the motor
torques are constant, so stepping on demand is exact. The device's time is the wall clock by
default. With `lockstep` (`--lockstep`; tests and the book's demonstration, see
crane_lib/hardware/timing.py) it is driven by the bus instead: each SYNC READ starts the next
1 ms control period (the clock jumps to the next whole millisecond), and between two of them the
clock advances by the time each instruction and status packet would take on a 3 Mbit/s bus. Fault
start times, the Bus Watchdog and the Realtime Tick all run on the device's time; when replies
leave is always wall-clock time.

Each servo answers its instructions in order: its status packet never overtakes one it sent
earlier, so a late reply delays that servo's later replies (as a stalled servo, or a stalled
host behind the emulator, does); in a sync read each servo answers after the one before it.

Fault injection (each fault starts `after` seconds after the first Torque Enable = 1):

    drop          the servo stops answering (for `count` packets, default all)
    corrupt_crc   the servo's next `count` status packets carry a wrong CRC (default 1)
    hardware_error  Hardware Error Status gets `bits` (default 0x20, overload): alert bit, shutdown
    stuck         the joint of that axis seizes (the plant holds it still)
    late          the servo's replies leave `delay_ms` late (the next `count`, default all)
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import math
import os
import select
import signal
import struct
import subprocess
import sys
import time
import tty
from dataclasses import dataclass, field

import numpy as np

from crane_lib.constants import CONTROL_PERIOD_S, ENCODER_RESOLUTION_RAD
from crane_lib.hardware import control_table as ct
from crane_lib.hardware import protocol as p
from crane_lib.hardware.arm_bus import (
    BAUD_REGISTER,
    CRANE_X7,
    NO_SECONDARY_ID,
    ArmBus,
    BusServo,
    arm_bus,
)
from crane_lib.hardware.timing import LOCKSTEP_BUS_BAUD

FIRMWARE_VERSION = 46  # what the emulated servos report (Bus Watchdog needs v38 or later)
IDLE_STEP_S = 0.01  # the plant is advanced at least this often while the bus is quiet
PRESENT_VOLTAGE_DV = 120  # Present Input Voltage, 0.1 V units: the 12 V supply of the twin
PRESENT_TEMPERATURE_C = 35

FAULT_KINDS = ("drop", "corrupt_crc", "hardware_error", "stuck", "late")


@dataclass(frozen=True)
class Fault:
    """One injected fault: `target` is a servo ID (an axis number for `stuck`)."""

    kind: str
    target: int
    after: float = 0.0
    count: int = (
        0  # drop / corrupt_crc / late: how many packets (0: drop all, corrupt one, delay all)
    )
    bits: int = 0x20  # hardware_error
    delay_ms: float = 0.0  # late

    def __post_init__(self):
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"fault kind {self.kind!r}: expected one of {', '.join(FAULT_KINDS)}")


@dataclass
class EmulatorConfig:
    seed: int = 1
    start_posture: tuple[float, ...] = ()  # rad per axis; empty: all 0, the arm hanging at rest
    faults: tuple[Fault, ...] = ()
    ids: tuple[int, ...] = ()  # every servo's ID in bus order; default (empty): the arm's bus
    models: tuple[int, ...] = ()  # per ID; default (empty): the arm's
    operating_mode: int = 3  # factory value (position control)
    return_delay: int = 250  # factory value, units of 2 us
    wire_baud: float = 0.0  # > 0: add each packet's time on a bus at this rate
    firmware: int = FIRMWARE_VERSION
    absent: tuple[int, ...] = ()  # IDs that never answer (a servo missing from the bus)
    operating_mode_locked: bool = False  # writes of Operating Mode fail with the Access Error
    realtime: bool = False  # ask for SCHED_FIFO for the emulator process (root or CAP_SYS_NICE)
    held_until_torque: bool = (
        False  # the arm is held at start_posture until the first Torque Enable
    )
    # (as if someone held it there): a test starts at the command file's start posture without an
    # approach
    # device time driven by the bus (one control period per SYNC READ), not the wall clock
    lockstep: bool = False
    arm: str = CRANE_X7  # whose servos answer and whose twin moves behind them (arm_bus.arm_bus)
    # (ID, value) pairs that replace the arm's configured Secondary ID / Drive Mode of a servo
    # (tests: a shadow that does not follow its primary, a servo mounted the other way)
    secondary_ids: tuple[tuple[int, int], ...] = ()
    drive_modes: tuple[tuple[int, int], ...] = ()

    def __post_init__(self):
        bus = self.bus()
        if not self.ids:
            self.ids = bus.ids
        if not self.models:
            self.models = tuple(s.model_number for s in bus.servos)

    def bus(self) -> ArmBus:
        """The arm's servo bus."""
        return arm_bus(self.arm)

    def posture(self) -> np.ndarray:
        """The start posture (rad), one angle per axis of the arm."""
        n = self.bus().n_axes
        posture = np.asarray(self.start_posture, dtype=float) if self.start_posture else np.zeros(n)
        if posture.shape != (n,):
            raise ValueError(
                f"start posture of {posture.size} angles for the {self.bus().name}'s {n} axes"
            )
        return posture


# ---------------------------------------------------------------- one servo's control table


def _register_map() -> tuple[list, list]:
    """Per address: the Register that owns it (None in gaps) and the offset inside it."""
    owner: list = [None] * ct.CONTROL_TABLE_SIZE
    offset = [0] * ct.CONTROL_TABLE_SIZE
    for register in ct.REGISTERS:
        for k in range(register.size):
            owner[register.address + k] = register
            offset[register.address + k] = k
    for address_first, data_first, entries in ct.INDIRECT_BLOCKS:
        for n in range(entries):
            reg = ct.Register(address_first + 2 * n, 2, f"Indirect Address {n + 1}", True)
            owner[reg.address] = owner[reg.address + 1] = reg
            offset[reg.address + 1] = 1
            owner[data_first + n] = ct.Register(data_first + n, 1, f"Indirect Data {n + 1}", True)
    return owner, offset


OWNER, OFFSET = _register_map()
_FORMATS = {
    (1, False): struct.Struct("<B"),
    (1, True): struct.Struct("<b"),
    (2, False): struct.Struct("<H"),
    (2, True): struct.Struct("<h"),
    (4, False): struct.Struct("<I"),
    (4, True): struct.Struct("<i"),
}
INDIRECT_DATA_TO_ADDRESS = {
    data_first + n: address_first + 2 * n
    for address_first, data_first, entries in ct.INDIRECT_BLOCKS
    for n in range(entries)
}


class Servo:
    """The control table of one emulated servo and the rules of reading and writing it."""

    def __init__(
        self,
        dxl_id: int,
        model: int,
        axis: int,
        config: EmulatorConfig,
        spec: BusServo | None = None,
    ):
        """Servo `dxl_id` of axis `axis` (1-based); `spec`: its place on the arm's bus (default:
        the axis's primary servo)."""
        spec = config.bus().axis_servos(axis)[0] if spec is None else spec
        self.id = dxl_id
        self.axis = axis
        self.table = bytearray(ct.CONTROL_TABLE_SIZE)
        # a servo mounted mirrored on its joint turns the joint backwards in the normal
        # direction: its maker sets the reverse bit (the arm's configuration) to undo that
        self.mount_sign = -1 if spec.reverse else 1
        baud = BAUD_REGISTER[config.bus().baud]
        secondary = spec.primary_id if spec.shadow else NO_SECONDARY_ID
        defaults = {
            ct.MODEL_NUMBER_REG: model,
            ct.FIRMWARE_VERSION: config.firmware,
            ct.ID: dxl_id,
            ct.BAUD: baud,
            ct.RETURN_DELAY_TIME: config.return_delay,
            ct.OPERATING_MODE: config.operating_mode,
            ct.SECONDARY_ID: secondary,
            ct.DRIVE_MODE: 1 if spec.reverse else 0,
            ct.PROTOCOL_TYPE: 2,
            ct.MOVING_THRESHOLD: 10,
            ct.TEMPERATURE_LIMIT: 80,
            ct.MAX_VOLTAGE_LIMIT: 160,
            ct.MIN_VOLTAGE_LIMIT: 95,
            ct.PWM_LIMIT: 885,
            ct.CURRENT_LIMIT: spec.current_limit_units,
            ct.ACCELERATION_LIMIT: 32767,
            ct.VELOCITY_LIMIT: 350,
            ct.MAX_POSITION_LIMIT: 4095,
            ct.MIN_POSITION_LIMIT: 0,
            ct.SHUTDOWN: ct.SHUTDOWN_DEFAULT,
            ct.STATUS_RETURN_LEVEL: 2,
            ct.VELOCITY_I_GAIN: 1920,
            ct.VELOCITY_P_GAIN: 100,
            ct.POSITION_P_GAIN: 800,
            ct.PRESENT_INPUT_VOLTAGE: PRESENT_VOLTAGE_DV,
            ct.PRESENT_TEMPERATURE: PRESENT_TEMPERATURE_C,
        }
        defaults.update({ct.SECONDARY_ID: v for i, v in config.secondary_ids if i == dxl_id})
        defaults.update({ct.DRIVE_MODE: v for i, v in config.drive_modes if i == dxl_id})
        for register, value in defaults.items():
            self.set(register, value)
        for (
            address_first,
            data_first,
            entries,
        ) in ct.INDIRECT_BLOCKS:  # factory: each points at its own data byte
            for n in range(entries):
                self.table[address_first + 2 * n : address_first + 2 * n + 2] = (
                    data_first + n
                ).to_bytes(2, "little")
        self.mode_locked = config.operating_mode_locked
        self._read_plan: dict[tuple[int, int], list[int]] = {}
        self.torque_events: list[tuple[float, int]] = []  # (device time, new Torque Enable value)
        self.last_instruction = 0.0 if config.lockstep else time.monotonic()

    # raw access to one register
    def get(self, register: ct.Register) -> int:
        """A register's value from the control table."""
        return _FORMATS[register.size, register.signed].unpack_from(self.table, register.address)[0]

    def set(self, register: ct.Register, value: int) -> None:
        """Write a register's value into the control table."""
        _FORMATS[register.size, register.signed].pack_into(self.table, register.address, int(value))

    @property
    def direction(self) -> int:
        """+1 when the servo turns its joint forwards (its mounting and reverse bit agree)."""
        return -self.mount_sign if self.table[ct.DRIVE_MODE.address] & 0x01 else self.mount_sign

    @property
    def secondary_id(self) -> int:
        """The Secondary(Shadow) ID: the ID whose instruction packets this servo also obeys."""
        return self.table[ct.SECONDARY_ID.address]

    @property
    def torque_on(self) -> bool:
        """Whether the servo's torque is enabled."""
        return self.table[ct.TORQUE_ENABLE.address] == 1

    @property
    def shut_down(self) -> bool:
        """Whether a hardware error has shut the servo down."""
        return bool(self.table[ct.HARDWARE_ERROR_STATUS.address] & self.table[ct.SHUTDOWN.address])

    def reply_delay_s(self) -> float:
        """Return Delay Time: how long the servo waits before answering (2 us per unit)."""
        return self.get(ct.RETURN_DELAY_TIME) * 2e-6

    def error_byte(self, error: int = 0) -> int:
        """A status packet's error byte, with the alert bit when a hardware error is set."""
        return error | (ct.ERROR_ALERT if self.table[ct.HARDWARE_ERROR_STATUS.address] else 0)

    def _resolve(self, address: int) -> int:
        """The address a byte access really reaches (indirect data -> its target)."""
        pointer = INDIRECT_DATA_TO_ADDRESS.get(address)
        if pointer is None:
            return address
        return int.from_bytes(self.table[pointer : pointer + 2], "little")

    def read(self, address: int, length: int) -> tuple[int, bytes]:
        """The error byte and bytes of a read of `length` bytes at `address` (indirect resolved)."""
        if length < 1 or address < 0 or address + length > ct.CONTROL_TABLE_SIZE:
            return ct.ERROR_ACCESS, b""
        targets = self._read_plan.get((address, length))
        if targets is None:  # cached until an Indirect Address changes
            targets = self._read_plan[address, length] = [
                self._resolve(a) for a in range(address, address + length)
            ]
        if targets[-1] - targets[0] == length - 1 and targets == list(
            range(targets[0], targets[0] + length)
        ):
            return 0, bytes(self.table[targets[0] : targets[0] + length])
        table = self.table
        return 0, bytes([table[a] for a in targets])

    def write(self, address: int, data: bytes, now: float) -> int:
        """Write `data` at `address` with the servo's rules; returns the error number (0: done).

        Every byte must belong to a writable register (EEPROM ones only with torque off); a
        register's value rules apply to the value it would hold; nothing is written on error."""
        if not data or address < 0 or address + len(data) > ct.CONTROL_TABLE_SIZE:
            return ct.ERROR_ACCESS
        owner = OWNER[address]
        if (
            owner is not None
            and owner.address == address
            and owner.size == len(data)
            and address not in INDIRECT_DATA_TO_ADDRESS
        ):
            touched = {
                address: (owner, dict(enumerate(data)))
            }  # the common case: one whole register
        else:
            touched = {}
            for k, byte in enumerate(data):
                target = self._resolve(address + k)
                register = OWNER[target] if 0 <= target < ct.CONTROL_TABLE_SIZE else None
                if register is None:
                    return ct.ERROR_ACCESS
                touched.setdefault(register.address, (register, {}))[1][OFFSET[target]] = byte
        new_values = []
        for register, parts in touched.values():
            if not register.writable or register is ct.ID or register is ct.BAUD:
                return ct.ERROR_ACCESS
            if register.eeprom and self.torque_on:
                return ct.ERROR_ACCESS
            if register is ct.OPERATING_MODE and self.mode_locked:
                return ct.ERROR_ACCESS
            raw = bytearray(self.table[register.address : register.address + register.size])
            for k, byte in parts.items():
                raw[k] = byte
            value = _FORMATS[register.size, register.signed].unpack(raw)[0]
            error = self._check(register, value)
            if error:
                return error
            new_values.append((register, value))
        for register, value in new_values:
            self._apply(register, value, now)
            if register.name.startswith("Indirect Address"):
                self._read_plan.clear()
        return 0

    def _check(self, register: ct.Register, value: int) -> int:
        if register is ct.TORQUE_ENABLE and value not in (0, 1):
            return ct.ERROR_DATA_RANGE
        if register is ct.OPERATING_MODE and value not in ct.OPERATING_MODES:
            return ct.ERROR_DATA_RANGE
        if register is ct.RETURN_DELAY_TIME and not 0 <= value <= 254:
            return ct.ERROR_DATA_RANGE
        if register is ct.BUS_WATCHDOG and not 0 <= value <= 127:
            return ct.ERROR_DATA_RANGE
        if register is ct.GOAL_CURRENT:
            if self.get(ct.BUS_WATCHDOG) == -1:
                return ct.ERROR_DATA_RANGE  # goal values are read-only after a bus-watchdog stop
            if abs(value) > self.get(ct.CURRENT_LIMIT):
                return ct.ERROR_DATA_LIMIT
        if (
            register.name.startswith("Indirect Address")
            and not ct.INDIRECT_RAM_RANGE[0] <= value <= ct.INDIRECT_RAM_RANGE[1]
        ):
            return ct.ERROR_DATA_RANGE
        return 0

    def _apply(self, register: ct.Register, value: int, now: float) -> None:
        if register is ct.TORQUE_ENABLE:
            if value == 1 and self.shut_down:
                return  # only a REBOOT brings the torque back after a shutdown
            if value != self.table[ct.TORQUE_ENABLE.address]:
                self.torque_events.append((now, value))
        self.set(register, value)

    def reboot(self, now: float) -> None:
        """Reboot the servo: torque off, errors cleared, goal current and watchdog zero."""
        if self.torque_on:
            self.torque_events.append((now, 0))
        self.set(ct.TORQUE_ENABLE, 0)
        self.set(ct.HARDWARE_ERROR_STATUS, 0)
        self.set(ct.GOAL_CURRENT, 0)
        self.set(ct.BUS_WATCHDOG, 0)

    def raise_hardware_error(self, bits: int, now: float) -> None:
        """Set hardware error bits, disabling torque when they shut the servo down."""
        self.set(ct.HARDWARE_ERROR_STATUS, self.get(ct.HARDWARE_ERROR_STATUS) | bits)
        if self.shut_down and self.torque_on:
            self.set(ct.TORQUE_ENABLE, 0)
            self.torque_events.append((now, 0))

    def delivered_units(self) -> int:
        """Goal current the motor acts on (register units): zero unless torque is on in current
        mode."""
        if (
            not self.torque_on
            or self.get(ct.OPERATING_MODE) != ct.OPERATING_MODE_CURRENT
            or self.get(ct.BUS_WATCHDOG) == -1
        ):
            return 0
        return self.get(ct.GOAL_CURRENT)


# ---------------------------------------------------------------- the plant in real time


class RealTimePlant:
    """The twin's plant, stepped on demand to the device's time (the wall clock, or the lockstep
    clock, which starts at 0)."""

    def __init__(self, config: EmulatorConfig):
        from crane_lib.twin import recorder as twin

        bus = config.bus()
        arm = bus.key
        self.rng = np.random.default_rng(config.seed)
        self.plant = twin.run_to_run(twin.default_plant(arm), self.rng)
        self.n_axes = bus.n_axes
        self.x = twin.initial_state(config.posture(), arm)
        self.core = twin.plant_core(arm)
        # the arguments of core.run_steps after (n, x, torque), built once
        self._step_arguments = self.plant.step_arguments()
        # load the compiled step before the first packet
        twin.integrate(self.plant, self.x.copy(), np.zeros(self.n_axes), 1)
        self.torque = np.zeros(self.n_axes)
        self.current_unit = bus.current_unit
        # per servo (bus order): its axis (0-based), the servos sharing that axis, its motor current
        # (A, in its own direction); each servo of an axis delivers its share of the axis's torque
        self.servo_axis = [s.axis - 1 for s in bus.servos]
        self.axis_servos = [
            [k for k, s in enumerate(bus.servos) if s.axis == axis]
            for axis in range(1, self.n_axes + 1)
        ]
        self.current = np.zeros(len(bus.servos))
        self.direction = np.ones(len(bus.servos), dtype=np.int64)
        self.t0 = (
            0.0 if config.lockstep else time.monotonic()
        )  # after the loading above: the plant's clock starts now
        self.steps = 0
        self.failed = ""
        noise = twin.noise_array(1.0, bus.current_unit)
        self._noise_current, self._noise_encoder, self._noise_present = noise

    @property
    def time(self) -> float:
        """The plant's time (s)."""
        return self.steps * self.plant.step

    def advance(self, now: float) -> None:
        """Step the plant up to device time `now` (s)."""
        due = int(
            (now - self.t0) / self.plant.step + 1e-6
        )  # a lockstep time on the step grid is not one step short
        n = due - self.steps
        if n <= 0 or self.failed:
            return
        if not self.core.run_steps(n, self.x, self.torque, *self._step_arguments):
            self.failed = (
                f"the plant's inertia matrix is not positive definite at {self.time:.3f} s"
            )
        self.steps = due

    def command(self, servo: int, units: int, direction: int = 1) -> None:
        """Servo `servo` (bus order) acts on `units` of goal current from now on, with the
        current-loop error, turning its joint in `direction` (+1: the joint's own)."""
        loop_error = self._noise_current * self.rng.normal() if units else 0.0
        amps = units * self.current_unit + loop_error
        self.current[servo] = amps
        self.direction[servo] = direction
        axis = self.servo_axis[servo]
        sharing = self.axis_servos[axis]
        if len(sharing) == 1:
            self.torque[axis] = self.plant.kt_true[axis] * (amps if direction > 0 else -amps)
        else:  # kt_true is the axis's, all its servos together: each delivers its share
            joint_amps = sum(self.direction[k] * self.current[k] for k in sharing) / len(sharing)
            self.torque[axis] = self.plant.kt_true[axis] * joint_amps

    def stick(self, axis: int) -> None:
        """Hold `axis` still (a stuck joint)."""
        self.plant.free[axis] = 0.0

    def hold(self, held: bool) -> None:
        """Hold every axis still, or free them all."""
        self.plant.free[:] = 0.0 if held else 1.0

    def sensors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Present Position (12-bit encoder with read noise) and Present Velocity (0.229 rpm
        units) of every axis in the joint's direction, and Present Current (register units,
        noisy) of every servo in its own direction, as the registers hold them."""
        n = self.n_axes
        q = self.x[self.core.XQ : self.core.XQ + n]
        v = self.x[self.core.XV : self.core.XV + n]
        read_noise = self._noise_encoder * self.rng.normal(size=n)
        ticks = np.rint((q + math.pi) / ENCODER_RESOLUTION_RAD + read_noise).astype(np.int64)
        velocity = np.rint(v / ct.VELOCITY_UNIT_RAD_S).astype(np.int64)
        noise = self._noise_present * self.rng.normal(size=len(self.current))
        current = np.rint((self.current + noise) / self.current_unit).astype(np.int64)
        return ticks, velocity, current


# ---------------------------------------------------------------- the bus


@dataclass
class BusStatistics:
    packets: int = 0
    crc_failures: int = 0
    replies: int = 0
    dropped: int = 0
    corrupted: int = 0
    instructions: dict = field(default_factory=dict)


class ServoBus:
    """An arm's servos on one bus (the CRANE-X7's eight by default): turns instruction packets
    into (delay, status bytes) replies. A servo obeys the packets sent to its ID and to its
    Secondary ID, and answers only those sent to its ID (e-Manual, Secondary(Shadow) ID(12))."""

    REPLY_ID_BYTE = 4  # where a status packet carries its servo's ID (FF FF FD 00 ID ...)
    LOCKSTEP_BAUD = LOCKSTEP_BUS_BAUD  # the lockstep clock's bus rate (bit/s, 10 bits per byte)
    period_s = CONTROL_PERIOD_S  # lockstep: device time of one control period (one SYNC READ)

    def __init__(self, config: EmulatorConfig):
        bus = config.bus()
        ids, models = config.ids, config.models
        if len(ids) != len(bus.servos) or len(models) != len(bus.servos):
            raise ValueError(
                f"the emulator needs {len(bus.servos)} IDs and model numbers for the {bus.name}"
            )
        self.config = config
        self.n_axes = bus.n_axes
        self.servos = {
            i: Servo(i, m, spec.axis, config, spec) for i, m, spec in zip(ids, models, bus.servos)
        }
        self.plant = RealTimePlant(config)
        self.plant.hold(config.held_until_torque)
        self.faults = list(config.faults)
        self.armed_at: float | None = None  # first Torque Enable = 1
        self.started: set[int] = set()  # indices of faults in effect
        self.drops_left: dict[int, int] = {}
        self.corrupt_left: dict[int, int] = {}
        self.late_s: dict[int, float] = {}
        self.late_left: dict[int, int] = {}
        self.free_at: dict[
            int, float
        ] = {}  # per ID: wall time its last reply leaves (a servo answers in order)
        self.device_t = 0.0  # lockstep: the device's clock (s), driven by the bus
        self.applied = [0] * len(self.servos)  # goal current units each motor acts on
        self.stats = BusStatistics()
        self.reader = p.PacketReader()
        self.log: list[str] = []

    # time-driven behaviour: plant, faults, watchdog
    def tick(self, now: float) -> None:
        """Advance the plant to `now` (s) and start the faults that are due."""
        self.plant.advance(now)
        self._arm(now)
        if self.armed_at is not None:
            for index, fault in enumerate(self.faults):
                if index not in self.started and now >= self.armed_at + fault.after:
                    self.started.add(index)
                    self._start(fault, now)
                    self._sync_motors()
        self._watchdogs(now)

    def _watchdogs(self, now: float) -> None:
        """Bus Watchdog(98): a servo without an instruction packet for too long stops."""
        for servo in self.servos.values():
            watchdog = servo.table[ct.BUS_WATCHDOG.address]
            if (
                0 < watchdog <= 127
                and servo.torque_on
                and now - servo.last_instruction > watchdog * 0.020
            ):
                servo.set(ct.BUS_WATCHDOG, -1)
                servo.set(ct.GOAL_CURRENT, 0)
                self.log.append(f"{now:.6f} ID {servo.id}: bus watchdog expired")
                self._sync_motors()

    def _arm(self, now: float) -> None:
        """The first Torque Enable = 1: faults count from here, and a held arm is let go."""
        if self.armed_at is None and any(s.torque_on for s in self.servos.values()):
            self.armed_at = now
            if self.config.held_until_torque:
                self.plant.hold(False)

    def _start(self, fault: Fault, now: float) -> None:
        self.log.append(f"{now:.6f} fault {fault.kind} on {fault.target} starts")
        if fault.kind == "drop":
            self.drops_left[fault.target] = fault.count if fault.count > 0 else -1
        elif fault.kind == "corrupt_crc":
            self.corrupt_left[fault.target] = max(fault.count, 1)
        elif fault.kind == "hardware_error":
            self.servos[fault.target].raise_hardware_error(fault.bits, now)
        elif fault.kind == "stuck":
            self.plant.stick(fault.target - 1)
        elif fault.kind == "late":
            self.late_s[fault.target] = fault.delay_ms * 1e-3
            self.late_left[fault.target] = fault.count if fault.count > 0 else -1

    def _sync_motors(self, redraw: bool = False) -> None:
        """Hand every motor the current it acts on; `redraw` after a write (a new command, a new
        draw of the current-loop error, as the twin draws one per command)."""
        for k, servo in enumerate(self.servos.values()):
            units = servo.delivered_units()
            if redraw or units != self.applied[k]:
                self.applied[k] = units
                self.plant.command(k, units, servo.direction)

    def _refresh(self) -> None:
        """Present values of every servo from the plant, as of this packet."""
        ticks, velocity, current = self.plant.sensors()
        tick = int(self.plant.time * 1000 + 1e-6) % (ct.REALTIME_TICK_MAX + 1)
        for k, servo in enumerate(self.servos.values()):
            axis = servo.axis - 1
            if servo.direction > 0:
                servo.set(ct.PRESENT_POSITION, ticks[axis])
                servo.set(ct.PRESENT_VELOCITY, velocity[axis])
            else:  # a servo turning against its joint counts the other way about the centre 2048
                servo.set(ct.PRESENT_POSITION, 4096 - ticks[axis])
                servo.set(ct.PRESENT_VELOCITY, -velocity[axis])
            servo.set(ct.PRESENT_CURRENT, current[k])
            servo.set(ct.REALTIME_TICK, tick)

    # the device's clock
    def device_time(self, now: float) -> float:
        """The device's time at wall time `now`: `now` itself, or the lockstep clock."""
        return self.device_t if self.config.lockstep else now

    def idle(self, now: float) -> None:
        """The bus is quiet at wall time `now`. In lockstep nothing happens: the device's clock
        stands still, and everything it drives happened at the last packet (a wall-clock pause
        here must not change the recording)."""
        if not self.config.lockstep:
            self.tick(now)

    def _lockstep_packet(self, packet: p.Packet) -> float:
        """Advance the lockstep clock over an instruction packet; a SYNC READ first moves it to the
        next whole control period."""
        if packet.instruction == p.INST_SYNC_READ:
            period = self.period_s
            self.device_t = (math.floor(self.device_t / period + 1e-6) + 1) * period
        self.device_t += packet.raw_length * 10.0 / self.LOCKSTEP_BAUD
        return self.device_t

    # packets
    def receive(self, data: bytes, now: float) -> list[tuple[float, bytes]]:
        """Feed bytes from the host at wall time `now`; returns the replies as (wall time to send,
        bytes),
        in the order they leave."""
        replies = []
        for packet in self.reader.feed(data):
            self.stats.packets += 1
            t = self._lockstep_packet(packet) if self.config.lockstep else now
            self.tick(t)
            answers = self._handle(packet, now, t)
            self._arm(t)  # at the packet that enables torque, not whenever the next one comes
            if (
                packet.instruction in (p.INST_WRITE, p.INST_SYNC_WRITE, p.INST_REBOOT)
                or self.started
            ):
                self._sync_motors(redraw=packet.instruction in (p.INST_WRITE, p.INST_SYNC_WRITE))
            for leave, raw in answers:
                sender = raw[self.REPLY_ID_BYTE]
                leave = self.free_at[sender] = max(
                    leave, self.free_at.get(sender, 0.0)
                )  # never before its earlier reply
                replies.append((leave, raw))
                if self.config.lockstep:
                    self.device_t += len(raw) * 10.0 / self.LOCKSTEP_BAUD
        return replies

    def _reply(
        self, servo: Servo, error: int, parameters: bytes, ready: float
    ) -> list[tuple[float, bytes]]:
        """One status packet of `servo`, or none when a fault swallows it."""
        left = self.drops_left.get(servo.id, 0)
        if left:
            self.stats.dropped += 1
            self.drops_left[servo.id] = left - 1 if left > 0 else -1
            return []
        packet = self._status_packet(servo, error, parameters)
        if self.corrupt_left.get(servo.id, 0) > 0:
            self.corrupt_left[servo.id] -= 1
            self.stats.corrupted += 1
            packet = packet[:-2] + bytes(((packet[-2] ^ 0x5A), packet[-1]))
        self.stats.replies += 1
        delay = servo.reply_delay_s()
        late = self.late_left.get(servo.id, 0)
        if late:
            delay += self.late_s[servo.id]
            self.late_left[servo.id] = late - 1 if late > 0 else -1
        return [(ready + delay, packet)]

    def _status_packet(self, servo, error: int, parameters: bytes) -> bytes:
        """The status packet of `servo` with `error` and `parameters`."""
        return p.status_packet(servo.id, servo.error_byte(error), parameters)

    def _wire(self, n_bytes: int) -> float:
        return n_bytes * 10.0 / self.config.wire_baud if self.config.wire_baud > 0 else 0.0

    def _handle(self, packet: p.Packet, now: float, t: float) -> list[tuple[float, bytes]]:
        """The replies to one packet arriving at wall time `now`, device time `t`."""
        instruction = packet.instruction
        self.stats.instructions[instruction] = self.stats.instructions.get(instruction, 0) + 1
        broadcast = packet.dxl_id == p.BROADCAST_ID
        if not broadcast and (
            packet.dxl_id not in self.servos or packet.dxl_id in self.config.absent
        ):
            return []
        if not packet.crc_ok:
            self.stats.crc_failures += 1
            return (
                [] if broadcast else self._reply(self.servos[packet.dxl_id], ct.ERROR_CRC, b"", now)
            )
        followers = () if broadcast else self._followers(packet.dxl_id)
        addressed = self.servos.values() if broadcast else (self.servos[packet.dxl_id], *followers)
        for servo in addressed:
            servo.last_instruction = t
        params = packet.parameters
        ready = now + self._wire(packet.raw_length)
        if instruction == p.INST_PING:
            targets = list(self.servos.values()) if broadcast else [self.servos[packet.dxl_id]]
            out = []
            for servo in targets:
                if servo.id in self.config.absent:
                    continue
                body = servo.get(ct.MODEL_NUMBER_REG).to_bytes(2, "little") + bytes(
                    (servo.get(ct.FIRMWARE_VERSION),)
                )
                ready += self._wire(14)
                out += self._reply(servo, 0, body, ready)
            return out
        if instruction == p.INST_READ and not broadcast:
            servo = self.servos[packet.dxl_id]
            if len(params) != 4:
                return self._reply(servo, ct.ERROR_DATA_LENGTH, b"", ready)
            address, length = (
                int.from_bytes(params[:2], "little"),
                int.from_bytes(params[2:4], "little"),
            )
            self._refresh()
            error, data = servo.read(address, length)
            return self._reply(servo, error, data, ready + self._wire(11 + len(data)))
        if instruction == p.INST_WRITE:
            if len(params) < 3:
                return (
                    []
                    if broadcast
                    else self._reply(self.servos[packet.dxl_id], ct.ERROR_DATA_LENGTH, b"", ready)
                )
            address = int.from_bytes(params[:2], "little")
            out = []
            for servo in self.servos.values() if broadcast else (self.servos[packet.dxl_id],):
                error = servo.write(address, params[2:], t)
                if not broadcast:
                    out += self._reply(servo, error, b"", ready + self._wire(11))
            for servo in followers:  # a shadow obeys its primary's packets without answering
                servo.write(address, params[2:], t)
            return out
        if instruction == p.INST_SYNC_READ and broadcast:
            if len(params) < 5:
                return []
            address, length = (
                int.from_bytes(params[:2], "little"),
                int.from_bytes(params[2:4], "little"),
            )
            out = []
            self._refresh()
            for dxl_id in params[4:]:
                servo = self.servos.get(dxl_id)
                if servo is None or dxl_id in self.config.absent:
                    continue  # an absent servo stays silent; the host times out
                error, data = servo.read(address, length)
                ready += self._wire(11 + len(data))
                out += self._reply(servo, error, data, ready)
                ready = (
                    max(ready, out[-1][0]) if out else ready
                )  # the next servo answers after this one
            return out
        if instruction == p.INST_SYNC_WRITE and broadcast:
            if len(params) < 4:
                return []
            address, length = (
                int.from_bytes(params[:2], "little"),
                int.from_bytes(params[2:4], "little"),
            )
            body = params[4:]
            if length < 1 or len(body) % (length + 1):
                return []
            for k in range(0, len(body), length + 1):
                servo = self.servos.get(body[k])
                if servo is not None:
                    servo.write(
                        address, body[k + 1 : k + 1 + length], t
                    )  # no status: errors are silent
                for follower in self._followers(body[k]):  # the shadows take their primary's data
                    follower.write(address, body[k + 1 : k + 1 + length], t)
            return []
        if instruction == p.INST_REBOOT:
            targets = list(self.servos.values()) if broadcast else [self.servos[packet.dxl_id]]
            for servo in (*targets, *followers):
                servo.reboot(t)
            return [] if broadcast else self._reply(targets[0], 0, b"", ready + self._wire(11))
        return (
            []
            if broadcast
            else self._reply(self.servos[packet.dxl_id], ct.ERROR_INSTRUCTION, b"", ready)
        )

    def _followers(self, dxl_id: int) -> tuple[Servo, ...]:
        """The other servos whose Secondary ID is `dxl_id` (its shadows), present on the bus."""
        absent = self.config.absent
        return tuple(
            s
            for s in self.servos.values()
            if s.secondary_id == dxl_id and s.id != dxl_id and s.id not in absent
        )

    def snapshot(self) -> dict:
        """What a test reads back: every servo's registers of interest and the event log."""
        xq = self.plant.core.XQ
        return {
            "servos": {
                str(i): {
                    "torque_enable": s.get(ct.TORQUE_ENABLE),
                    "goal_current": s.get(ct.GOAL_CURRENT),
                    "operating_mode": s.get(ct.OPERATING_MODE),
                    "hardware_error": s.get(ct.HARDWARE_ERROR_STATUS),
                    "bus_watchdog": s.get(ct.BUS_WATCHDOG),
                    "return_delay": s.get(ct.RETURN_DELAY_TIME),
                    "secondary_id": s.secondary_id,
                    "drive_mode": s.get(ct.DRIVE_MODE),
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


# ---------------------------------------------------------------- serving on a pseudo-terminal


def open_pty() -> tuple[int, int, str]:
    """(master fd, slave fd, slave path) of a new pseudo-terminal in raw mode."""
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, slave, os.ttyname(slave)


class Session:
    """The bus being served; `reset` swaps in a fresh one (a new arm on the same terminal)."""

    def __init__(self, bus: ServoBus):
        self.bus = bus
        self.pending: list[tuple[float, bytes]] = []

    def reset(self, config: EmulatorConfig) -> None:
        """A fresh bus with `config`, nothing pending."""
        self.bus = type(self.bus)(config)
        self.pending = []


def serve(session: Session, master: int, stop_fd: int | None = None, on_command=None) -> None:
    """Answer on `master` until `on_command(stop_fd)` returns False (or forever without stop_fd)."""
    watch = [master] + ([stop_fd] if stop_fd is not None else [])
    while True:
        now = time.monotonic()
        timeout = IDLE_STEP_S
        if session.pending:
            timeout = max(0.0, min(timeout, min(t for t, _ in session.pending) - now))
        readable, _, _ = select.select(watch, [], [], timeout)
        now = time.monotonic()
        if stop_fd is not None and stop_fd in readable:
            if on_command is None or not on_command(stop_fd):
                return
        if master in readable:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO while no process has the terminal open
                data = b""
            if data:
                session.pending.extend(session.bus.receive(data, now))
            else:
                time.sleep(0.001)
        else:
            session.bus.idle(now)
        if session.pending:
            now = time.monotonic()
            due = sorted((r for r in session.pending if r[0] <= now), key=lambda r: r[0])
            if due:
                session.pending = [r for r in session.pending if r[0] > now]
                os.write(master, b"".join(packet for _, packet in due))


def config_to_json(config: EmulatorConfig) -> str:
    """The configuration as JSON."""
    return json.dumps(dataclasses.asdict(config))


def config_from_json(text: str) -> EmulatorConfig:
    """The configuration from its JSON."""
    fields = json.loads(text)
    fields["faults"] = tuple(Fault(**f) for f in fields.get("faults", ()))
    for key in ("start_posture", "ids", "models", "absent"):
        if key in fields:
            fields[key] = tuple(fields[key])
    for key in ("secondary_ids", "drive_modes"):
        if key in fields:
            fields[key] = tuple(tuple(pair) for pair in fields[key])
    return EmulatorConfig(**fields)


def _serve_stdio(config, bus_class=None, parse=None) -> int:
    """The emulator as a child process: the terminal path on the first line of stdout, then one
    JSON command per stdin line ("snapshot", "reset" with a config, "stop"), one JSON answer
    each. `bus_class` and `parse` (a configuration from its JSON) default to this module's
    DYNAMIXEL bus; the STS emulator passes its own."""
    bus_class = ServoBus if bus_class is None else bus_class
    parse = config_from_json if parse is None else parse
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    if config.realtime:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
        except (AttributeError, OSError):
            pass
    master, slave, path = open_pty()
    session = Session(bus_class(config))
    commands = sys.stdin.buffer
    answer = sys.stdout

    def say(value) -> None:
        answer.write(json.dumps(value) + "\n")
        answer.flush()

    say(path)

    def on_command(_fd) -> bool:
        line = commands.readline()
        if not line:
            return False
        request = json.loads(line)
        if request["command"] == "snapshot":
            say(session.bus.snapshot())
        elif request["command"] == "reset":
            session.reset(parse(request["config"]))
            say("ok")
        else:
            say(session.bus.snapshot())
            return False
        return True

    gc.collect()
    # what exists now is never collected again: no full collection walks the twin's modules
    # mid-reply
    gc.freeze()
    try:
        serve(session, master, commands.fileno(), on_command)
    finally:
        os.close(master)
        os.close(slave)
    return 0


class EmulatorProcess:
    """The emulator in its own process (its timing does not share the recorder's interpreter).

    `port` is the terminal path to open with dynamixel-sdk; `snapshot()` reads back every
    servo's control table; `reset(config)` starts a fresh arm (new plant, factory tables) on the
    same terminal; `stop()` ends the process and returns the last snapshot."""

    def __init__(
        self,
        config: EmulatorConfig | None = None,
        timeout_s: float = 120.0,
        module: str = "crane_lib.hardware.emulator",
    ):
        """Start `module`'s emulator (this one, or crane_lib.hardware.sts_emulator) with
        `config`."""
        config = config or EmulatorConfig()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                module,
                "--serve-stdio",
                config_to_json(config),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.process.kill()
            raise RuntimeError(f"the emulator did not start within {timeout_s:g} s")
        self.port = json.loads(line)

    def _ask(self, request: dict):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the emulator on {self.port} has stopped")
        return json.loads(line)

    def snapshot(self) -> dict:
        """The emulator's state: control tables, faults, torque events."""
        return self._ask({"command": "snapshot"})

    def reset(self, config: EmulatorConfig) -> None:
        """Reset the emulator with `config`."""
        self._ask({"command": "reset", "config": config_to_json(config)})

    def stop(self) -> dict | None:
        """Stop the emulator process and return its final state (None if it had ended)."""
        if self.process.poll() is not None:
            return None
        try:
            final = self._ask({"command": "stop"})
        except (RuntimeError, BrokenPipeError, OSError):
            final = None
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return final

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------- by hand


def _fault_option(kind: str):
    def parse(text: str) -> Fault:
        # TARGET@SECONDS[:ARG]
        try:
            target_text, _, rest = text.partition("@")
            after_text, _, argument = rest.partition(":")
            target, after = int(target_text), float(after_text or 0.0)
            extra = {}
            if argument:
                if kind in ("drop", "corrupt_crc"):
                    extra["count"] = int(argument)
                elif kind == "hardware_error":
                    extra["bits"] = int(argument, 0)
                elif kind == "late":
                    extra["delay_ms"] = float(argument)
            return Fault(kind, target, after, **extra)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--{kind.replace('_', '-')} {text!r}: expected TARGET@SECONDS[:ARG]"
            ) from None

    return parse


def add_fault_options(parser: argparse.ArgumentParser) -> None:
    """The fault-injection options (--drop, --corrupt-crc, --hardware-error, --stuck, --late),
    shared with the STS emulator; `faults_of(args)` collects them."""
    help_fault = "TARGET@SECONDS[:ARG], seconds after the first torque enable"
    parser.add_argument(
        "--drop",
        type=_fault_option("drop"),
        action="append",
        default=[],
        help=f"{help_fault}; ARG: packets (default all)",
    )
    parser.add_argument(
        "--corrupt-crc",
        type=_fault_option("corrupt_crc"),
        action="append",
        default=[],
        help=f"{help_fault}; ARG: packets (1)",
    )
    parser.add_argument(
        "--hardware-error",
        type=_fault_option("hardware_error"),
        action="append",
        default=[],
        help=f"{help_fault}; ARG: bits (0x20)",
    )
    parser.add_argument(
        "--stuck",
        type=_fault_option("stuck"),
        action="append",
        default=[],
        help="AXIS@SECONDS: the joint seizes",
    )
    parser.add_argument(
        "--late",
        type=_fault_option("late"),
        action="append",
        default=[],
        help=f"{help_fault}; ARG: delay in ms",
    )


def faults_of(args) -> tuple[Fault, ...]:
    """The faults the fault-injection options asked for."""
    return tuple(args.drop + args.corrupt_crc + args.hardware_error + args.stuck + args.late)


def build_parser() -> argparse.ArgumentParser:
    """The emulator's command-line parser."""
    parser = argparse.ArgumentParser(
        prog="python -m crane_lib.hardware.emulator",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        help="seed of the plant's run-to-run draw and the sensor noise",
    )
    parser.add_argument(
        "--arm", default=CRANE_X7, help="whose servos answer: crane_x7 (default) or vx300s"
    )
    parser.add_argument(
        "--start-posture",
        type=float,
        nargs="+",
        metavar="DEG",
        default=None,
        help="initial angle of every axis in degrees (default: all 0, hanging)",
    )
    parser.add_argument(
        "--operating-mode",
        type=int,
        default=3,
        help="initial Operating Mode of every servo (factory: 3)",
    )
    parser.add_argument(
        "--wire-baud",
        type=float,
        default=0.0,
        help="add each packet's time on a bus at this rate (e.g. 3e6)",
    )
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="device time driven by the bus, one 1 ms period per sync read (tests and "
        "demonstrations; "
        "record with crane-id record --timing lockstep)",
    )
    parser.add_argument(
        "--missing-id", type=int, action="append", default=[], help="leave this ID off the bus"
    )
    add_fault_options(parser)
    parser.add_argument(
        "--serve-stdio", metavar="CONFIG_JSON", default=None, help=argparse.SUPPRESS
    )  # EmulatorProcess's child
    return parser


def config_from_args(args) -> EmulatorConfig:
    """The emulator's configuration from its command-line options."""
    faults = faults_of(args)
    start = tuple(np.radians(args.start_posture)) if args.start_posture else ()
    config = EmulatorConfig(
        seed=args.seed,
        start_posture=start,
        faults=faults,
        operating_mode=args.operating_mode,
        wire_baud=args.wire_baud,
        absent=tuple(args.missing_id),
        lockstep=args.lockstep,
        arm=args.arm,
    )
    config.posture()  # the start posture has one angle per axis of the arm (ValueError otherwise)
    return config


def main(argv=None) -> int:
    """Serve the emulated bus on a pseudo-terminal until interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.serve_stdio is not None:
        return _serve_stdio(config_from_json(args.serve_stdio))
    try:
        config = config_from_args(args)
    except ValueError as error:  # an arm without a Protocol 2.0 bus, a posture of the wrong size
        parser.error(str(error))
    master, slave, path = open_pty()
    session = Session(ServoBus(config))
    clock = "lockstep: record with --timing lockstep" if config.lockstep else "real time"
    ids = ", ".join(map(str, config.ids))
    print(f"{config.bus().name} emulator on {path} (IDs {ids}; {clock}); Ctrl-C stops", flush=True)
    try:
        serve(session, master)
    except KeyboardInterrupt:
        pass
    finally:
        os.close(master)
        os.close(slave)
    snapshot = session.bus.snapshot()
    print(
        f"{snapshot['stats']['packets']} packets, {snapshot['stats']['replies']} replies; plant "
        f"time {snapshot['plant_time_s']:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
