"""The Protocol 2.0 emulator's pieces without a terminal: framing against dynamixel-sdk's own
code, the control-table rules of one servo, the bus's answers, the recorder's checks before
torque, and the arm's reference sequencer against the twin's."""

from __future__ import annotations

import numpy as np
import pytest
from dynamixel_sdk import protocol2_packet_handler as sdk_protocol

from crane_lib.errors import InputError
from crane_lib.excitation.commands import (
    FINAL_POSTURE_DEG,
    START_POSTURE_DEG,
    CommandFile,
    read_command_file,
)
from crane_lib.hardware import control_table as ct
from crane_lib.hardware import protocol as p
from crane_lib.hardware.emulator import EmulatorConfig, Fault, Servo, ServoBus
from crane_lib.hardware.recorder import check_before_torque
from crane_lib.hardware.sequencer import Sequencer
from crane_lib.logs import raw_log
from crane_lib.model.controller import load_realization_constants
from crane_lib.paths import TRAJECTORY_DIR

SDK = sdk_protocol.Protocol2PacketHandler()


def test_crc_is_dynamixel_sdks():
    rng = np.random.default_rng(7)
    assert p.CRC_TABLE[:8] == (0x0000, 0x8005, 0x800F, 0x000A, 0x801B, 0x001E, 0x0014, 0x8011)
    for n in (0, 1, 14, 97):
        data = rng.integers(0, 256, n).tolist()
        assert p.crc16(bytes(data)) == SDK.updateCRC(0, data, n)


def test_stuffing_round_trips_and_matches_the_sdk():
    parameters = bytes([0x74, 0x00, 0xFF, 0xFF, 0xFD, 0x01, 0xFF, 0xFF, 0xFD, 0xFD])
    packet = p.instruction_packet(3, p.INST_WRITE, parameters)
    # the SDK's own framing of the same instruction (its txPacket stuffs, then adds the CRC)
    tx = [0] * (len(parameters) + 10) + [0] * 8
    tx[4], tx[5], tx[6], tx[7] = 3, (len(parameters) + 3) & 0xFF, 0, p.INST_WRITE
    tx[8 : 8 + len(parameters)] = parameters
    tx = SDK.addStuffing(tx)
    length = tx[5] | (tx[6] << 8)
    tx[0:4] = [0xFF, 0xFF, 0xFD, 0x00]
    crc = SDK.updateCRC(0, tx, length + 5)
    tx[length + 5], tx[length + 6] = crc & 0xFF, crc >> 8
    assert packet == bytes(tx[: length + 7])
    [parsed] = p.PacketReader().feed(packet)
    assert (
        parsed.crc_ok
        and parsed.dxl_id == 3
        and parsed.instruction == p.INST_WRITE
        and parsed.parameters == parameters
    )


def test_the_reader_splits_a_stream_and_flags_a_bad_crc():
    first = p.instruction_packet(2, p.INST_PING)
    second = bytearray(p.instruction_packet(4, p.INST_READ, bytes([132, 0, 4, 0])))
    second[-1] ^= 0x01
    reader = p.PacketReader()
    stream = b"\x00\x13" + first + bytes(second)
    packets = [
        packet for k in range(0, len(stream), 5) for packet in reader.feed(stream[k : k + 5])
    ]
    assert [(q.dxl_id, q.instruction, q.crc_ok) for q in packets] == [
        (2, p.INST_PING, True),
        (4, p.INST_READ, False),
    ]
    assert reader.dropped_bytes == 2


def _servo(axis=1, **config):
    return Servo(
        ct.AXIS_IDS[axis - 1], ct.EXPECTED_MODELS[axis - 1], axis, EmulatorConfig(**config)
    )


def test_a_servo_keeps_the_e_manuals_rules():
    servo = _servo(axis=2)
    assert (
        servo.get(ct.MODEL_NUMBER_REG) == 1120
        and servo.get(ct.CURRENT_LIMIT) == 2047
        and servo.get(ct.RETURN_DELAY_TIME) == 250
    )
    assert (
        servo.write(ct.PRESENT_POSITION.address, b"\x00\x00\x00\x00", 0.0) == ct.ERROR_ACCESS
    )  # read-only
    assert servo.write(ct.OPERATING_MODE.address, b"\x02", 0.0) == ct.ERROR_DATA_RANGE  # no mode 2
    assert servo.write(ct.OPERATING_MODE.address, b"\x00", 0.0) == 0
    assert (
        servo.write(ct.GOAL_CURRENT.address, (2048).to_bytes(2, "little"), 0.0)
        == ct.ERROR_DATA_LIMIT
    )
    assert (
        servo.write(ct.GOAL_CURRENT.address, (-2047).to_bytes(2, "little", signed=True), 0.0) == 0
    )
    assert (
        servo.write(ct.TORQUE_ENABLE.address, b"\x01", 1.0) == 0
        and servo.delivered_units() == -2047
    )
    assert (
        servo.write(ct.OPERATING_MODE.address, b"\x03", 0.0) == ct.ERROR_ACCESS
    )  # EEPROM locked under torque
    assert servo.get(ct.OPERATING_MODE) == 0


def test_indirect_data_reads_and_writes_its_target():
    servo = _servo()
    for pointer, target in ct.cycle_read_map():
        assert servo.write(pointer, target.to_bytes(2, "little"), 0.0) == 0
    servo.set(ct.HARDWARE_ERROR_STATUS, 0x04)
    servo.set(ct.PRESENT_CURRENT, -123)
    servo.set(ct.PRESENT_VELOCITY, 77)
    servo.set(ct.PRESENT_POSITION, 3000)
    error, data = servo.read(ct.CYCLE_READ_ADDRESS, ct.CYCLE_READ_LENGTH)
    assert error == 0 and data == bytes([0x04]) + (-123).to_bytes(2, "little", signed=True) + (
        77
    ).to_bytes(4, "little") + (3000).to_bytes(4, "little")
    assert servo.write(ct.INDIRECT_BLOCKS[0][0], (ct.LED.address).to_bytes(2, "little"), 0.0) == 0
    assert servo.write(ct.INDIRECT_BLOCKS[0][1], b"\x01", 0.0) == 0 and servo.get(ct.LED) == 1
    assert (
        servo.write(ct.INDIRECT_BLOCKS[0][0], (10).to_bytes(2, "little"), 0.0)
        == ct.ERROR_DATA_RANGE
    )  # EEPROM cannot be mapped


def test_a_shutdown_error_clears_the_torque_until_a_reboot():
    servo = _servo()
    servo.write(ct.OPERATING_MODE.address, b"\x00", 0.0)
    servo.write(ct.TORQUE_ENABLE.address, b"\x01", 0.0)
    servo.raise_hardware_error(0x20, 1.0)  # overload is in Shutdown's default bits
    assert not servo.torque_on and servo.error_byte() & ct.ERROR_ALERT
    servo.write(ct.TORQUE_ENABLE.address, b"\x01", 2.0)
    assert not servo.torque_on
    servo.reboot(3.0)
    assert servo.get(ct.HARDWARE_ERROR_STATUS) == 0 and servo.error_byte() == 0
    assert servo.torque_events == [(0.0, 1), (1.0, 0)]


def _status(replies):
    return [q for _, raw in replies for q in p.PacketReader().feed(raw)]


def test_the_bus_answers_ping_sync_read_and_stops_on_its_watchdog():
    bus = ServoBus(
        EmulatorConfig(return_delay=0, faults=(Fault("hardware_error", 5, 0.0, bits=0x04),))
    )
    [pong] = _status(bus.receive(p.instruction_packet(3, p.INST_PING), 0.0))
    assert pong.parameters == bytes([0, 0x60, 0x04, 46])  # error 0, model 1120, firmware 46
    assert bus.receive(p.instruction_packet(200, p.INST_PING), 0.0) == []  # nobody has ID 200
    read = p.instruction_packet(
        p.BROADCAST_ID, p.INST_SYNC_READ, bytes([126, 0, 10, 0]) + bytes(ct.AXIS_IDS)
    )
    answers = _status(bus.receive(read, 0.0))
    assert [q.dxl_id for q in answers] == list(ct.AXIS_IDS) and all(
        len(q.parameters) == 11 for q in answers
    )
    position = [int.from_bytes(q.parameters[7:11], "little", signed=True) for q in answers]
    assert abs(position[0] - 2048) <= 2  # hanging at 0 rad: 2048 +- encoder noise
    # torque on in current mode with the servos' watchdog at 1 x 20 ms, then silence
    for dxl_id in ct.AXIS_IDS:
        for register, value in (
            (ct.OPERATING_MODE, 0),
            (ct.TORQUE_ENABLE, 1),
            (ct.BUS_WATCHDOG, 1),
        ):
            bus.receive(
                p.instruction_packet(dxl_id, p.INST_WRITE, bytes([register.address, 0, value])), 0.0
            )
    bus.tick(0.001)
    assert (
        bus.servos[5].error_byte() & ct.ERROR_ALERT and not bus.servos[5].torque_on
    )  # the injected shutdown
    bus.tick(0.030)
    servo = bus.servos[2]
    assert servo.get(ct.BUS_WATCHDOG) == -1
    [refused] = _status(
        bus.receive(p.instruction_packet(2, p.INST_WRITE, bytes([102, 0, 10, 0])), 0.031)
    )
    assert refused.parameters[0] == ct.ERROR_DATA_RANGE and servo.get(ct.GOAL_CURRENT) == 0


def test_the_lockstep_clock_is_driven_by_the_bus():
    """In lockstep each sync read starts the next 1 ms period, whatever the wall clock does (a
    burst 0.5 ms apart, a 150 s stall, quiet time in between): the servos' Realtime Tick and the
    plant's time count sync reads."""
    bus = ServoBus(EmulatorConfig(lockstep=True, return_delay=0))
    read_tick = p.instruction_packet(
        p.BROADCAST_ID,
        p.INST_SYNC_READ,
        bytes([ct.REALTIME_TICK.address, 0, 2, 0]) + bytes(ct.AXIS_IDS),
    )
    ticks = []
    for wall in (100.0, 100.0005, 250.0):
        answers = _status(bus.receive(read_tick, wall))
        ticks.append({int.from_bytes(q.parameters[1:3], "little") for q in answers})
        bus.idle(wall + 5.0)
    assert ticks == [{1}, {2}, {3}] and bus.plant.time == pytest.approx(3e-3)
    realtime = ServoBus(EmulatorConfig(return_delay=0))  # the default clock: the wall's
    realtime.receive(read_tick, realtime.plant.t0 + 0.25)
    assert realtime.plant.time == pytest.approx(0.25)


def test_a_servo_answers_in_order_and_a_late_reply_delays_only_its_own():
    bus = ServoBus(
        EmulatorConfig(return_delay=0, faults=(Fault("late", 3, 0.0, delay_ms=100.0, count=1),))
    )
    bus.receive(
        p.instruction_packet(2, p.INST_WRITE, bytes([ct.TORQUE_ENABLE.address, 0, 1])), 0.0
    )  # the faults start
    [(late, _)] = bus.receive(p.instruction_packet(3, p.INST_PING), 0.001)
    [(next_of_3, _)] = bus.receive(p.instruction_packet(3, p.INST_PING), 0.002)
    [(other, _)] = bus.receive(p.instruction_packet(4, p.INST_PING), 0.003)
    assert late == pytest.approx(0.101) and next_of_3 == late and other == pytest.approx(0.003)


def test_the_command_file_is_checked_before_torque(tmp_path):
    constants = load_realization_constants()
    ap01 = read_command_file(TRAJECTORY_DIR / "AP01.txt")
    assert (
        float(check_before_torque(ap01, constants)["check_feedforward_current_max_share_of_clamp"])
        < 1.0
    )
    weak = constants.__class__(constants.models, constants.sources, limit_units=np.full(8, 5))
    with pytest.raises(InputError, match="feedforward current"):
        check_before_torque(ap01, weak)
    beyond = np.radians(
        np.vstack([[0, 0, 0, 10.0, 0, 0, 0, 0], FINAL_POSTURE_DEG, FINAL_POSTURE_DEG])
    )
    with pytest.raises(InputError, match="outside the joint limits"):
        check_before_torque(CommandFile("beyond", beyond, np.array([50.0, 50.0, 20.0])), constants)


def test_the_arms_reference_is_the_twins(tmp_path):
    """Fed a twin recording's measured angles, the sequencer gives the twin's reference columns
    and segment numbers, in-position waits included (one idea, two implementations)."""
    from crane_lib.twin import recorder as twin

    start = np.radians(START_POSTURE_DEG)
    waypoints = np.vstack(
        [start + np.radians([20, -15, 10, 30, 25, -20, 15, 10]), start, np.zeros(8), np.zeros(8)]
    )
    cmd = CommandFile("short", waypoints, np.array([90.0, 60.0, 80.0, 20.0]))
    samples, metadata = twin.record(cmd, seed=5)
    log = raw_log.RawLog(samples, metadata)
    motion_start, motion_end = (
        int(metadata["motion_start_sample"]),
        int(metadata["motion_end_sample"]),
    )
    sequencer = Sequencer(
        cmd, lead_cycles=motion_start, tail_cycles=len(samples) - motion_end, preroll_cycles=0
    )
    reference = np.zeros((len(samples), 3, 8))
    segment = np.zeros(len(samples))
    for k, theta in enumerate(log.theta):
        r = sequencer.reference()
        reference[k] = r.theta, r.dtheta, r.ddtheta
        segment[k] = r.segment
        sequencer.advance(theta)
    assert sequencer.done and float(metadata["in_position_wait_s"]) > 0
    np.testing.assert_array_equal(reference[:, 0], log.theta_ref)
    np.testing.assert_array_equal(reference[:, 1], log.dtheta_ref)
    np.testing.assert_array_equal(reference[:, 2], log.ddtheta_ref)
    np.testing.assert_array_equal(segment, samples[:, raw_log.COLUMN["segment"]])
    assert sequencer.wait_total == round(float(metadata["in_position_wait_s"]) * 1000)


def test_a_killed_recording_is_recovered_from_its_partial_file(tmp_path):
    """What a SIGKILL leaves: the memory-mapped rows written so far (zeros after them) and the
    metadata known at the start; recover_partial turns them into a readable raw log."""
    from crane_lib.hardware.recorder import recover_partial

    log_path = tmp_path / "killed.csv"
    rows = np.lib.format.open_memmap(
        tmp_path / "killed.csv.partial.npy",
        mode="w+",
        dtype=np.float64,
        shape=(50, raw_log.N_COLUMNS),
    )
    rows[:7, raw_log.COLUMN["t"]] = np.arange(7) * 1e-3
    rows[:7, raw_log.group("theta_logged")] = np.pi
    rows.flush()
    del rows
    (tmp_path / "killed.csv.partial.json").write_text(
        '{"trajectory": "AP01", "port": "/dev/ttyUSB0"}'
    )
    log = raw_log.read_raw_log(recover_partial(log_path))
    assert (
        log.n_samples == 7
        and log.metadata["port"] == "/dev/ttyUSB0"
        and log.metadata["fault"].startswith("killed")
    )
    with pytest.raises(InputError, match="partial"):
        recover_partial(tmp_path / "other.csv")
