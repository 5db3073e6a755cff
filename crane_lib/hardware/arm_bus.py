"""The servo bus of one arm as the recorder and the emulator see it: which DYNAMIXEL IDs drive
which axis, their models, torque constants and factory current limits, the baud rate, and the
shadow servos of joints that two servos drive together.

The CRANE-X7's bus is built from control_table and crane_lib.constants alone (its path stays
what it was, without loading a description); every other arm's from its description's [bus]
section and [[axis]] entries (crane_lib.model.arm_description.BusLayout).

Dual-servo joints, as Interbotix runs them (interbotix_xsarm_control config/vx300s.yaml, the
`shadows:` section and each motor's Secondary_ID and Drive_Mode; the convention is DYNAMIXEL's,
ROBOTIS e-Manual, X series, "Secondary(Shadow) ID(12)" and "Drive Mode(10)"):

* the first ID of the axis is the primary; the second, the shadow, has Secondary ID = the
  primary's ID, so it acts on every instruction packet sent to the primary's ID (goal writes
  included) without answering it, and answers only to its own ID;
* the two servos are mounted mirrored on the joint; Interbotix sets the reverse-direction bit
  (Drive Mode bit 0) on the primary (IDs 2 and 4 of the ViperX 300 S) and not on the shadow
  (IDs 3 and 5), so both report and drive in the joint's direction;
* the recorder writes goals to the primary only, reads position and velocity from the primary,
  and the joint torque is the sum of both servos' torques (present current x torque constant).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from crane_lib.constants import ACTUATORS, CURRENT_UNIT_A
from crane_lib.errors import InputError
from crane_lib.hardware import control_table as ct

CRANE_X7 = "crane_x7"
PROTOCOL = "DYNAMIXEL Protocol 2.0"  # the only bus protocol dynamixel-sdk's recorder speaks
NO_SECONDARY_ID = 255  # e-Manual: Secondary ID 253..255 switches the shadow function off
# e-Manual "Baud Rate(8)": register value of each rate (bit/s)
BAUD_REGISTER = {
    9600: 0,
    57600: 1,
    115200: 2,
    1_000_000: 3,
    2_000_000: 4,
    3_000_000: 5,
    4_000_000: 6,
    4_500_000: 7,
}


@dataclass(frozen=True)
class BusServo:
    """One servo on the bus: its ID, the axis (1-based) it drives and how."""

    dxl_id: int
    axis: int
    model: str
    primary_id: int  # its own ID for a primary; the joint's primary for a shadow
    reverse: bool  # Drive Mode(10) bit 0 as the arm is configured
    kt: float  # N·m/A of this servo, the torque record's constant
    current_limit_units: int  # factory Current Limit(38)

    @property
    def shadow(self) -> bool:
        """Whether this servo follows another one's goals (its Secondary ID is the primary's)."""
        return self.primary_id != self.dxl_id

    @property
    def model_number(self) -> int:
        """The model number the servo reports (Model Number(0); an STS servo's Model_Number(3))."""
        if self.model in ct.MODEL_NUMBER:
            return ct.MODEL_NUMBER[self.model]
        from crane_lib.hardware import sts_control_table

        return sts_control_table.MODEL_NUMBER[self.model]


@dataclass(frozen=True)
class ArmBus:
    """The servos of one arm, in bus order (each axis's primary, then its shadows)."""

    key: str  # arm_description.ARMS key
    name: str  # how messages name the arm
    baud: int  # bit/s
    servos: tuple[BusServo, ...]
    current_unit: float  # A per register unit of Goal and Present Current
    source: str
    protocol: str = PROTOCOL  # DYNAMIXEL Protocol 2.0, or Feetech STS (sts_arm_bus)

    @property
    def n_axes(self) -> int:
        """Axes of the arm (joints and gripper)."""
        return max(s.axis for s in self.servos)

    @property
    def ids(self) -> tuple[int, ...]:
        """Every servo ID, in bus order (the cycle's sync read)."""
        return tuple(s.dxl_id for s in self.servos)

    @property
    def primary_ids(self) -> tuple[int, ...]:
        """The primary's ID of each axis (goal writes, position and velocity)."""
        return tuple(s.dxl_id for s in self.servos if not s.shadow)

    @property
    def shadows(self) -> tuple[BusServo, ...]:
        """The servos that follow a primary."""
        return tuple(s for s in self.servos if s.shadow)

    def axis_servos(self, axis: int) -> tuple[BusServo, ...]:
        """The servos that drive `axis` (1-based), the primary first."""
        return tuple(s for s in self.servos if s.axis == axis)


def _crane_x7_bus() -> ArmBus:
    """The CRANE-X7's eight single servos at 3 Mbit/s (control_table's cited IDs)."""
    servos = tuple(
        BusServo(dxl_id, axis, a.model, dxl_id, False, a.kt, a.current_limit_units)
        for axis, (dxl_id, a) in enumerate(zip(ct.AXIS_IDS, ACTUATORS), start=1)
    )
    return ArmBus(
        CRANE_X7,
        "CRANE-X7",
        ct.BAUD_RATE,
        servos,
        CURRENT_UNIT_A,
        "crane_lib.hardware.control_table",
    )


def bus_of_description(key: str, description) -> ArmBus:
    """The ArmBus of an arm description with a DYNAMIXEL Protocol 2.0 [bus] section; an
    InputError naming the arm otherwise."""
    where = f"--robot {key}"
    bus = description.bus
    if bus is None:
        raise InputError(
            where,
            "its description has no [bus] section",
            f"a [bus] section of a {PROTOCOL} arm (protocol, baud, ids per axis)",
        )
    if bus.protocol != PROTOCOL:
        raise InputError(
            where,
            f"its servo bus is {bus.protocol}, not {PROTOCOL} (the recorder "
            "and the emulator speak dynamixel-sdk's Protocol 2.0 only)",
            "an arm of DYNAMIXEL X-series servos (crane_x7, vx300s)",
        )
    servos = []
    units = {a.current_unit for a in description.actuators}
    if len(units) != 1:
        raise InputError(
            where, "current register units that differ between axes", "one register unit per arm"
        )
    for axis, (ids, actuator) in enumerate(zip(bus.ids, description.actuators), start=1):
        if actuator.model not in ct.MODEL_NUMBER:
            raise InputError(
                where,
                f"axis {axis}: servo model {actuator.model!r}",
                f"an X-series model of the control table ({sorted(ct.MODEL_NUMBER)})",
            )
        reverse = bus.reverse[axis - 1] if bus.reverse else (False,) * len(ids)
        limit_units = round(actuator.current_limit / actuator.current_unit)
        for dxl_id, reversed_ in zip(ids, reverse):
            servos.append(
                BusServo(
                    int(dxl_id),
                    axis,
                    actuator.model,
                    int(ids[0]),
                    bool(reversed_),
                    actuator.kt,
                    limit_units,
                )
            )
    all_ids = [s.dxl_id for s in servos]
    if len(set(all_ids)) != len(all_ids) or len(bus.ids) != description.n_axes:
        raise InputError(
            where,
            f"bus IDs {list(bus.ids)}",
            f"distinct IDs for each of the {description.n_axes} axes",
        )
    return ArmBus(key, description.name, int(bus.baud), tuple(servos), units.pop(), bus.source)


@lru_cache(maxsize=8)
def sts_arm_bus(key: str) -> ArmBus:
    """The servo bus of the shipped arm `key` whose description names a Feetech STS bus (the
    SO-101): one servo per axis, none reversed; an InputError naming the arm otherwise."""
    from crane_lib.hardware import sts_control_table as sts
    from crane_lib.model.arm_description import load_arm

    description = load_arm(key)
    where = f"--robot {key}"
    bus = description.bus
    if bus is None or bus.protocol != sts.PROTOCOL:
        found = "no [bus] section" if bus is None else f"a {bus.protocol} bus"
        raise InputError(where, f"its description has {found}", f"a {sts.PROTOCOL} bus")
    servos = []
    for axis, (ids, actuator) in enumerate(zip(bus.ids, description.actuators), start=1):
        if actuator.model not in sts.MODEL_NUMBER or len(ids) != 1:
            raise InputError(
                where,
                f"axis {axis}: servo model {actuator.model!r} on IDs {list(ids)}",
                f"one servo of a model of the STS table ({sorted(sts.MODEL_NUMBER)})",
            )
        limit_units = round(actuator.current_limit / actuator.current_unit)
        servos.append(
            BusServo(
                int(ids[0]), axis, actuator.model, int(ids[0]), False, actuator.kt, limit_units
            )
        )
    units = {a.current_unit for a in description.actuators}
    if len(units) != 1 or len({s.dxl_id for s in servos}) != len(servos):
        raise InputError(where, f"bus IDs {list(bus.ids)}", "distinct IDs, one current unit")
    return ArmBus(
        key, description.name, int(bus.baud), tuple(servos), units.pop(), bus.source, sts.PROTOCOL
    )


@lru_cache(maxsize=8)
def arm_bus(key: str = CRANE_X7) -> ArmBus:
    """The servo bus of the shipped arm `key` (the CRANE-X7 by default)."""
    if key == CRANE_X7:
        return _crane_x7_bus()
    from crane_lib.model.arm_description import load_arm  # only for other arms

    return bus_of_description(key, load_arm(key))
