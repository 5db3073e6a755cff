"""The Feetech STS facts the SO-101's recorder and its emulator share: the STS3215's memory
table, its model number, the sign-magnitude encoding of its signed registers, its units, and
the recorder's sync-read block.

Sources (cited, not guessed; the project holds no Feetech datasheet, so what only a
datasheet could settle is marked unverified):

* Addresses and sizes: LeRobot, `src/lerobot/motors/feetech/tables.py`
  (STS_SMS_SERIES_CONTROL_TABLE, citing Feetech's STS/SMS memory table,
  doc.feetech.cn "FT-SMS-STS-emanual"); the same addresses as Feetech's SCServo library
  (`SMS_STS.h`: SMS_STS_MODEL_L 3, SMS_STS_ID 5, SMS_STS_MODE 33, SMS_STS_TORQUE_ENABLE 40,
  SMS_STS_ACC 41, SMS_STS_GOAL_POSITION_L 42, SMS_STS_PRESENT_POSITION_L 56,
  SMS_STS_PRESENT_CURRENT_L 69).
* Model number 777 of the STS3215 and protocol_end 0 (little-endian words) of the STS series:
  LeRobot tables.py (MODEL_NUMBER_TABLE, MODEL_PROTOCOL). The SDK's `ping` reads the model
  number from address 3 after the PING (scservo_sdk protocol_packet_handler.ping).
* Operating modes 0 position, 1 velocity, 2 PWM (open loop), 3 step: LeRobot feetech.py
  (OperatingMode). There is no current or torque mode.
* Sign-magnitude encoding: bit 11 of Homing_Offset, bit 15 of Goal_Velocity and
  Present_Velocity (LeRobot tables.py, STS_SMS_SERIES_ENCODINGS_TABLE; `encode_sign_magnitude`);
  bit 10 of Present_Load and bit 15 of Present_Current and Present_Position as Feetech's
  SMS_STS library decodes them (ReadLoad, ReadCurrent, ReadPos). Position is 0..4095 in
  position mode, so its sign bit never shows there.
* Status-packet error bits: scservo_sdk protocol_packet_handler (ERRBIT_VOLTAGE 1, ERRBIT_ANGLE
  2, ERRBIT_OVERHEAT 4, ERRBIT_OVERELE 8, ERRBIT_OVERLOAD 32); the Status register (65) holds
  the same bits.
* Return_Delay_Time in units of 2 us, factory 250 (500 us): LeRobot feetech.py
  (configure_motors, which writes 0, and Acceleration/Maximum_Acceleration 254 "to speed up
  acceleration and deceleration"). P/I/D coefficients 16/0/32 as LeRobot's SO-101 follower
  writes them on every connect (Feetech's default P is 32).
* Units: Present_Position 4096 counts per turn (LeRobot MODEL_RESOLUTION), 2048 at the middle;
  Present_Velocity counts/s; Present_Load 0.1 % of the maximum torque (0..1000);
  Present_Voltage 0.1 V; Present_Temperature deg C; Present_Current 6.5 mA per unit
  (data/so101_description/actuators.csv, unverified there); Acceleration 100 counts/s^2 per unit
  (Feetech memory table as third-party drivers convert it, unverified).
"""

from __future__ import annotations

import math

from crane_lib.hardware.control_table import Register

PROTOCOL = "Feetech STS (SCS)"  # the [bus] protocol of an arm description on this bus
PROTOCOL_END = 0  # scservo_sdk.PacketHandler(0): STS/SMS words are little-endian
MODEL_NUMBER = {"STS3215-C018": 777}  # actuators.csv model -> Model_Number(3)
MODEL_NAME = {777: "STS3215", 2825: "STS3250", 11272: "SM8512BL", 1284: "SCS0009"}
BAUD_REGISTER = {1_000_000: 0, 500_000: 1, 250_000: 2, 128_000: 3, 115_200: 4, 57_600: 5}
ENCODER_COUNTS = 4096
POSITION_CENTRE = 2048  # counts at 0 rad (the twin's convention, as the DYNAMIXEL servos')
RAD_PER_COUNT = 2.0 * math.pi / ENCODER_COUNTS
ACCELERATION_UNIT = 100.0  # counts/s^2 per unit of Acceleration(41), unverified
LOAD_UNIT = 1e-3  # fraction of the maximum torque per unit of Present_Load
VOLTAGE_UNIT = 0.1  # V per unit of Present_Voltage

FIRMWARE_MAJOR = Register(0, 1, "Firmware_Major_Version", False, True)
FIRMWARE_MINOR = Register(1, 1, "Firmware_Minor_Version", False, True)
MODEL_NUMBER_REG = Register(3, 2, "Model_Number", False, True)
ID = Register(5, 1, "ID", True, True)
BAUD = Register(6, 1, "Baud_Rate", True, True)
RETURN_DELAY_TIME = Register(7, 1, "Return_Delay_Time", True, True)
STATUS_RETURN_LEVEL = Register(8, 1, "Response_Status_Level", True, True)
MIN_POSITION_LIMIT = Register(9, 2, "Min_Position_Limit", True, True)
MAX_POSITION_LIMIT = Register(11, 2, "Max_Position_Limit", True, True)
MAX_TEMPERATURE_LIMIT = Register(13, 1, "Max_Temperature_Limit", True, True)
MAX_VOLTAGE_LIMIT = Register(14, 1, "Max_Voltage_Limit", True, True)
MIN_VOLTAGE_LIMIT = Register(15, 1, "Min_Voltage_Limit", True, True)
MAX_TORQUE_LIMIT = Register(16, 2, "Max_Torque_Limit", True, True)
PHASE = Register(18, 1, "Phase", True, True)
UNLOADING_CONDITION = Register(19, 1, "Unloading_Condition", True, True)
LED_ALARM_CONDITION = Register(20, 1, "LED_Alarm_Condition", True, True)
P_COEFFICIENT = Register(21, 1, "P_Coefficient", True, True)
D_COEFFICIENT = Register(22, 1, "D_Coefficient", True, True)
I_COEFFICIENT = Register(23, 1, "I_Coefficient", True, True)
MINIMUM_STARTUP_FORCE = Register(24, 2, "Minimum_Startup_Force", True, True)
CW_DEAD_ZONE = Register(26, 1, "CW_Dead_Zone", True, True)
CCW_DEAD_ZONE = Register(27, 1, "CCW_Dead_Zone", True, True)
PROTECTION_CURRENT = Register(28, 2, "Protection_Current", True, True)
ANGULAR_RESOLUTION = Register(30, 1, "Angular_Resolution", True, True)
HOMING_OFFSET = Register(31, 2, "Homing_Offset", True, True)
OPERATING_MODE = Register(33, 1, "Operating_Mode", True, True)
PROTECTIVE_TORQUE = Register(34, 1, "Protective_Torque", True, True)
PROTECTION_TIME = Register(35, 1, "Protection_Time", True, True)
OVERLOAD_TORQUE = Register(36, 1, "Overload_Torque", True, True)
TORQUE_ENABLE = Register(40, 1, "Torque_Enable", True)
ACCELERATION = Register(41, 1, "Acceleration", True)
GOAL_POSITION = Register(42, 2, "Goal_Position", True)
GOAL_TIME = Register(44, 2, "Goal_Time", True)
GOAL_VELOCITY = Register(46, 2, "Goal_Velocity", True)
TORQUE_LIMIT = Register(48, 2, "Torque_Limit", True)
LOCK = Register(55, 1, "Lock", True)
PRESENT_POSITION = Register(56, 2, "Present_Position", False)
PRESENT_VELOCITY = Register(58, 2, "Present_Velocity", False)
PRESENT_LOAD = Register(60, 2, "Present_Load", False)
PRESENT_VOLTAGE = Register(62, 1, "Present_Voltage", False)
PRESENT_TEMPERATURE = Register(63, 1, "Present_Temperature", False)
STATUS = Register(65, 1, "Status", False)
MOVING = Register(66, 1, "Moving", False)
PRESENT_CURRENT = Register(69, 2, "Present_Current", False)

REGISTERS = (
    FIRMWARE_MAJOR,
    FIRMWARE_MINOR,
    MODEL_NUMBER_REG,
    ID,
    BAUD,
    RETURN_DELAY_TIME,
    STATUS_RETURN_LEVEL,
    MIN_POSITION_LIMIT,
    MAX_POSITION_LIMIT,
    MAX_TEMPERATURE_LIMIT,
    MAX_VOLTAGE_LIMIT,
    MIN_VOLTAGE_LIMIT,
    MAX_TORQUE_LIMIT,
    PHASE,
    UNLOADING_CONDITION,
    LED_ALARM_CONDITION,
    P_COEFFICIENT,
    D_COEFFICIENT,
    I_COEFFICIENT,
    MINIMUM_STARTUP_FORCE,
    CW_DEAD_ZONE,
    CCW_DEAD_ZONE,
    PROTECTION_CURRENT,
    ANGULAR_RESOLUTION,
    HOMING_OFFSET,
    OPERATING_MODE,
    PROTECTIVE_TORQUE,
    PROTECTION_TIME,
    OVERLOAD_TORQUE,
    TORQUE_ENABLE,
    ACCELERATION,
    GOAL_POSITION,
    GOAL_TIME,
    GOAL_VELOCITY,
    TORQUE_LIMIT,
    LOCK,
    PRESENT_POSITION,
    PRESENT_VELOCITY,
    PRESENT_LOAD,
    PRESENT_VOLTAGE,
    PRESENT_TEMPERATURE,
    STATUS,
    MOVING,
    PRESENT_CURRENT,
)
CONTROL_TABLE_SIZE = 87  # addresses 0..86 (the last factory register, 86)

# the bit that carries the sign of each sign-magnitude register
SIGN_BIT = {
    HOMING_OFFSET.address: 11,
    GOAL_VELOCITY.address: 15,
    PRESENT_VELOCITY.address: 15,
    PRESENT_LOAD.address: 10,
    PRESENT_CURRENT.address: 15,
    PRESENT_POSITION.address: 15,
    GOAL_POSITION.address: 15,
}

OPERATING_MODE_POSITION = 0
OPERATING_MODES = {0: "position", 1: "velocity", 2: "PWM (open loop)", 3: "step"}
RETURN_DELAY_FACTORY = 250  # 500 us
ACCELERATION_SETTING = 254  # LeRobot's configure_motors
PID_LEROBOT = (16, 0, 32)  # P, I, D as LeRobot's SO-101 follower writes them

# status-packet error byte and Status(65)
ERROR_BITS = {
    0x01: "input voltage",
    0x02: "angle sensor",
    0x04: "overheating",
    0x08: "overcurrent",
    0x20: "overload",
}
ERROR_OVERLOAD = 0x20


def error_text(bits: int) -> str:
    """A status packet's error bits as words."""
    names = [name for bit, name in ERROR_BITS.items() if bits & bit]
    return ", ".join(names) if names else f"0x{bits:02x}"


def encode_sign_magnitude(value: int, sign_bit: int) -> int:
    """`value` as the register holds it: |value| below `sign_bit`, the sign in that bit."""
    magnitude = abs(int(value))
    if magnitude >= 1 << sign_bit:
        raise ValueError(f"{value} does not fit in {sign_bit} bits and a sign bit")
    return magnitude | ((1 << sign_bit) if value < 0 else 0)


def decode_sign_magnitude(raw: int, sign_bit: int) -> int:
    """The signed value of a sign-magnitude register word."""
    magnitude = raw & ((1 << sign_bit) - 1)
    return -magnitude if raw & (1 << sign_bit) else magnitude


# ---------------------------------------------------------------- the recorder's sync read
# Present_Position (56) to Present_Current (69, 70) are one block of 15 bytes: position,
# velocity, load, voltage, temperature, (64: async write flag), Status, Moving, (67, 68),
# current. One sync read of it gives everything the cycle logs and checks.

CYCLE_READ_ADDRESS = PRESENT_POSITION.address
CYCLE_READ_LENGTH = PRESENT_CURRENT.address + PRESENT_CURRENT.size - CYCLE_READ_ADDRESS  # 15


def cycle_offset(register: Register) -> int:
    """Offset of `register` inside the cycle's read block."""
    return register.address - CYCLE_READ_ADDRESS


def unpack_cycle(raw) -> tuple[int, int, int, int, int, int, int, int]:
    """(position counts, velocity counts/s, load 0.1 %, voltage 0.1 V, temperature deg C,
    status bits, Moving, current units) of one servo's block, signs decoded."""

    def word(register: Register) -> int:
        k = cycle_offset(register)
        return raw[k] | (raw[k + 1] << 8)

    return (
        decode_sign_magnitude(word(PRESENT_POSITION), 15),
        decode_sign_magnitude(word(PRESENT_VELOCITY), 15),
        decode_sign_magnitude(word(PRESENT_LOAD), 10),
        raw[cycle_offset(PRESENT_VOLTAGE)],
        raw[cycle_offset(PRESENT_TEMPERATURE)],
        raw[cycle_offset(STATUS)],
        raw[cycle_offset(MOVING)],
        decode_sign_magnitude(word(PRESENT_CURRENT), 15),
    )
