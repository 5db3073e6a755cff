"""The DYNAMIXEL facts the recorder and the emulator share: control-table addresses, model
numbers, the CRANE-X7's bus, and the indirect-address map of the recorder's sync read.

Sources (cited, not guessed):

* Control table of the XM430-W350 and the XM540-W270 (Protocol 2.0): ROBOTIS e-Manual,
  https://emanual.robotis.com/docs/en/dxl/x/xm430-w350/#control-table and
  https://emanual.robotis.com/docs/en/dxl/x/xm540-w270/#control-table. Both servos have the
  same addresses; they differ in the model number (1020 / 1120) and the default Current Limit
  (1193 / 2047 units of 2.69 mA, crane_lib.constants).
* Status-packet error field and instruction codes: ROBOTIS e-Manual, Protocol 2.0,
  https://emanual.robotis.com/docs/en/dxl/protocol2/ (the same values as
  dynamixel_sdk.robotis_def).
* Hardware Error Status bits (70) and Shutdown (63): e-Manual "Shutdown(63)": bit 0 input
  voltage, bit 2 overheating, bit 3 motor encoder, bit 4 electrical shock, bit 5 overload; a
  shutdown clears Torque Enable and sets the alert bit (0x80) of every status packet until
  a REBOOT.
* Bus Watchdog (98, firmware v38 and later): e-Manual "Bus Watchdog(98)": 1..127 in units of
  20 ms while torque is on; on expiry the servo stops, the register reads -1 and the goal
  values become read-only until 0 is written.
* Indirect Address 1..28 at 168 + 2(n-1) pointing at any RAM address 64..661, read and written
  through Indirect Data 1..28 at 224 + (n-1): e-Manual "Indirect Address, Indirect Data".
* The CRANE-X7's bus: IDs 2..9 for joints 1..7 and the hand, 3 Mbit/s, as in the
  manufacturer's ros2_control settings (crane_x7_description, `crane_x7_ros2_control_settings`:
  baud_rate 3000000, joint_ids 2, 3, 4, 5, 6, 7, 8, 9).
"""

from __future__ import annotations

from dataclasses import dataclass

from crane_lib.constants import ACTUATORS

# ---------------------------------------------------------------- the CRANE-X7 bus

BAUD_RATE = 3_000_000  # bit/s, the manufacturer's ros2_control setting
AXIS_IDS = (2, 3, 4, 5, 6, 7, 8, 9)  # DYNAMIXEL ID of axis 1..8 (joints 1..7, hand)
MODEL_NUMBER = {"XM430-W350": 1020, "XM540-W270": 1120}  # e-Manual, Model Number(0)
EXPECTED_MODELS = tuple(MODEL_NUMBER[a.model] for a in ACTUATORS)  # per axis
MODEL_NAME = {number: name for name, number in MODEL_NUMBER.items()}
MIN_FIRMWARE_BUS_WATCHDOG = 38  # Bus Watchdog(98) exists from firmware v38

# ---------------------------------------------------------------- addresses (e-Manual, X series,
# Protocol 2.0)


@dataclass(frozen=True)
class Register:
    address: int
    size: int
    name: str
    writable: bool
    eeprom: bool = False  # writable only while Torque Enable is 0
    signed: bool = False


MODEL_NUMBER_REG = Register(0, 2, "Model Number", False, True)
MODEL_INFORMATION = Register(2, 4, "Model Information", False, True)
FIRMWARE_VERSION = Register(6, 1, "Firmware Version", False, True)
ID = Register(7, 1, "ID", True, True)
BAUD = Register(8, 1, "Baud Rate", True, True)
RETURN_DELAY_TIME = Register(
    9, 1, "Return Delay Time", True, True
)  # units of 2 us, default 250 (500 us)
DRIVE_MODE = Register(10, 1, "Drive Mode", True, True)
OPERATING_MODE = Register(11, 1, "Operating Mode", True, True)
SECONDARY_ID = Register(12, 1, "Secondary(Shadow) ID", True, True)
PROTOCOL_TYPE = Register(13, 1, "Protocol Type", True, True)
HOMING_OFFSET = Register(20, 4, "Homing Offset", True, True, signed=True)
MOVING_THRESHOLD = Register(24, 4, "Moving Threshold", True, True)
TEMPERATURE_LIMIT = Register(31, 1, "Temperature Limit", True, True)
MAX_VOLTAGE_LIMIT = Register(32, 2, "Max Voltage Limit", True, True)
MIN_VOLTAGE_LIMIT = Register(34, 2, "Min Voltage Limit", True, True)
PWM_LIMIT = Register(36, 2, "PWM Limit", True, True)
CURRENT_LIMIT = Register(38, 2, "Current Limit", True, True)
ACCELERATION_LIMIT = Register(40, 4, "Acceleration Limit", True, True)
VELOCITY_LIMIT = Register(44, 4, "Velocity Limit", True, True)
MAX_POSITION_LIMIT = Register(48, 4, "Max Position Limit", True, True)
MIN_POSITION_LIMIT = Register(52, 4, "Min Position Limit", True, True)
SHUTDOWN = Register(63, 1, "Shutdown", True, True)
TORQUE_ENABLE = Register(64, 1, "Torque Enable", True)
LED = Register(65, 1, "LED", True)
STATUS_RETURN_LEVEL = Register(68, 1, "Status Return Level", True)
REGISTERED_INSTRUCTION = Register(69, 1, "Registered Instruction", False)
HARDWARE_ERROR_STATUS = Register(70, 1, "Hardware Error Status", False)
VELOCITY_I_GAIN = Register(76, 2, "Velocity I Gain", True)
VELOCITY_P_GAIN = Register(78, 2, "Velocity P Gain", True)
POSITION_D_GAIN = Register(80, 2, "Position D Gain", True)
POSITION_I_GAIN = Register(82, 2, "Position I Gain", True)
POSITION_P_GAIN = Register(84, 2, "Position P Gain", True)
FEEDFORWARD_2ND_GAIN = Register(88, 2, "Feedforward 2nd Gain", True)
FEEDFORWARD_1ST_GAIN = Register(90, 2, "Feedforward 1st Gain", True)
BUS_WATCHDOG = Register(98, 1, "Bus Watchdog", True, signed=True)
GOAL_PWM = Register(100, 2, "Goal PWM", True, signed=True)
GOAL_CURRENT = Register(102, 2, "Goal Current", True, signed=True)
GOAL_VELOCITY = Register(104, 4, "Goal Velocity", True, signed=True)
PROFILE_ACCELERATION = Register(108, 4, "Profile Acceleration", True)
PROFILE_VELOCITY = Register(112, 4, "Profile Velocity", True)
GOAL_POSITION = Register(116, 4, "Goal Position", True, signed=True)
REALTIME_TICK = Register(120, 2, "Realtime Tick", False)
REALTIME_TICK_MAX = (
    32767  # the tick counts milliseconds and wraps from 32767 to 0 (e-Manual, Realtime Tick(120))
)
MOVING = Register(122, 1, "Moving", False)
MOVING_STATUS = Register(123, 1, "Moving Status", False)
PRESENT_PWM = Register(124, 2, "Present PWM", False, signed=True)
PRESENT_CURRENT = Register(126, 2, "Present Current", False, signed=True)
PRESENT_VELOCITY = Register(128, 4, "Present Velocity", False, signed=True)
PRESENT_POSITION = Register(132, 4, "Present Position", False, signed=True)
VELOCITY_TRAJECTORY = Register(136, 4, "Velocity Trajectory", False, signed=True)
POSITION_TRAJECTORY = Register(140, 4, "Position Trajectory", False, signed=True)
PRESENT_INPUT_VOLTAGE = Register(144, 2, "Present Input Voltage", False)
PRESENT_TEMPERATURE = Register(146, 1, "Present Temperature", False)

REGISTERS = (
    MODEL_NUMBER_REG,
    MODEL_INFORMATION,
    FIRMWARE_VERSION,
    ID,
    BAUD,
    RETURN_DELAY_TIME,
    DRIVE_MODE,
    OPERATING_MODE,
    SECONDARY_ID,
    PROTOCOL_TYPE,
    HOMING_OFFSET,
    MOVING_THRESHOLD,
    TEMPERATURE_LIMIT,
    MAX_VOLTAGE_LIMIT,
    MIN_VOLTAGE_LIMIT,
    PWM_LIMIT,
    CURRENT_LIMIT,
    ACCELERATION_LIMIT,
    VELOCITY_LIMIT,
    MAX_POSITION_LIMIT,
    MIN_POSITION_LIMIT,
    SHUTDOWN,
    TORQUE_ENABLE,
    LED,
    STATUS_RETURN_LEVEL,
    REGISTERED_INSTRUCTION,
    HARDWARE_ERROR_STATUS,
    VELOCITY_I_GAIN,
    VELOCITY_P_GAIN,
    POSITION_D_GAIN,
    POSITION_I_GAIN,
    POSITION_P_GAIN,
    FEEDFORWARD_2ND_GAIN,
    FEEDFORWARD_1ST_GAIN,
    BUS_WATCHDOG,
    GOAL_PWM,
    GOAL_CURRENT,
    GOAL_VELOCITY,
    PROFILE_ACCELERATION,
    PROFILE_VELOCITY,
    GOAL_POSITION,
    REALTIME_TICK,
    MOVING,
    MOVING_STATUS,
    PRESENT_PWM,
    PRESENT_CURRENT,
    PRESENT_VELOCITY,
    PRESENT_POSITION,
    VELOCITY_TRAJECTORY,
    POSITION_TRAJECTORY,
    PRESENT_INPUT_VOLTAGE,
    PRESENT_TEMPERATURE,
)

# indirect addressing (RAM 64..661 may be mapped)
INDIRECT_RAM_RANGE = (64, 661)
INDIRECT_BLOCKS = (
    (168, 224, 28),
    (578, 634, 28),
)  # (first Indirect Address, first Indirect Data, entries)
CONTROL_TABLE_SIZE = 662  # addresses 0..661

OPERATING_MODE_CURRENT = 0  # Current Control Mode
OPERATING_MODES = {
    0: "current",
    1: "velocity",
    3: "position",
    4: "extended position",
    5: "current-based position",
    16: "PWM",
}

# status-packet error field (Protocol 2.0)
ERROR_ALERT = 0x80
(
    ERROR_RESULT_FAIL,
    ERROR_INSTRUCTION,
    ERROR_CRC,
    ERROR_DATA_RANGE,
    ERROR_DATA_LENGTH,
    ERROR_DATA_LIMIT,
    ERROR_ACCESS,
) = range(1, 8)

# Hardware Error Status (70) bits
HARDWARE_ERROR_BITS = {
    0x01: "input voltage",
    0x04: "overheating",
    0x08: "motor encoder",
    0x10: "electrical shock",
    0x20: "overload",
}
SHUTDOWN_DEFAULT = 0x34  # overheating, electrical shock, overload (e-Manual initial value 52)

VELOCITY_UNIT_RAD_S = (
    0.229 * 2.0 * 3.141592653589793 / 60.0
)  # 0.229 rpm per unit of Present Velocity


def hardware_error_text(bits: int) -> str:
    """Hardware Error Status bits as words."""
    names = [name for bit, name in HARDWARE_ERROR_BITS.items() if bits & bit]
    return ", ".join(names) if names else f"0x{bits:02x}"


# ---------------------------------------------------------------- the recorder's sync read, through
# indirect data
#
# Present Current (126, 2), Present Velocity (128, 4) and Present Position (132, 4) are contiguous,
# but the Hardware Error Status the watchdog needs every cycle sits at 70: reading 70..135 directly
# would cost 66 bytes per servo and status packet. Mapped through Indirect Address 1..11 the cycle
# reads 11 bytes per servo: the hardware error byte, then current, velocity, position.

CYCLE_READ_REGISTERS = (HARDWARE_ERROR_STATUS, PRESENT_CURRENT, PRESENT_VELOCITY, PRESENT_POSITION)
CYCLE_READ_LENGTH = sum(r.size for r in CYCLE_READ_REGISTERS)  # 11 bytes
CYCLE_READ_ADDRESS = INDIRECT_BLOCKS[0][1]  # Indirect Data 1 (224)
CYCLE_READ_OFFSETS = {}
_offset = 0
for _register in CYCLE_READ_REGISTERS:
    CYCLE_READ_OFFSETS[_register.name] = _offset
    _offset += _register.size
del _offset, _register


def cycle_read_map() -> list[tuple[int, int]]:
    """(Indirect Address register, target address) pairs that map the cycle's read block."""
    pairs = []
    slot = 0
    for register in CYCLE_READ_REGISTERS:
        for byte in range(register.size):
            pairs.append((INDIRECT_BLOCKS[0][0] + 2 * slot, register.address + byte))
            slot += 1
    return pairs


def axis_of_id(dxl_id: int) -> int:
    """1-based axis of a CRANE-X7 servo ID."""
    return AXIS_IDS.index(dxl_id) + 1
