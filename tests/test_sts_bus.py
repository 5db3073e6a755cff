"""The SO-101's recorder over feetech-servo-sdk against the Feetech STS emulator on a
pseudo-terminal (started here, nothing leaves the machine): the framing against the SDK's own,
a recording end to end through the servos' position loop, every fault, every bad input, and
the signals. Every recording runs in lockstep timing (crane_lib/hardware/timing.py), so the same
packets, checks, faults and log run deterministically however loaded the host is."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
import scservo_sdk as scs

from crane_lib import cli
from crane_lib.errors import InputError
from crane_lib.excitation.commands import write_command_file
from crane_lib.hardware import sts_bus
from crane_lib.hardware import sts_control_table as sts
from crane_lib.hardware import sts_protocol as p
from crane_lib.hardware.emulator import Fault
from crane_lib.hardware.recorder import cycles_path
from crane_lib.hardware.sts_emulator import StsEmulatorConfig, emulator_process
from crane_lib.hardware.sts_recorder import goal_ticks, record_so101, settings_for
from crane_lib.logs import raw_log
from crane_lib.logs.preprocessing import preprocess
from crane_lib.paths import REPO_ROOT, TRAJECTORY_DIR

from .hardware_cases import recording_process, short_so101_command

SHORT = dict(lead_s=0.2, tail_s=0.2, preroll_s=0.1, approach=False, realtime=False)
FAULT_AT_S = 0.6  # after the first torque enable: logging began at 0.1 s (preroll)
LONG = TRAJECTORY_DIR / "so101" / "S_A.txt"  # long enough that no signal test can end first
IDS = (1, 2, 3, 4, 5, 6)


def _config(**fields) -> StsEmulatorConfig:
    """The SO-101 as LeRobot leaves it, held at its command files' start posture until torque
    is on, in lockstep."""
    start = tuple(np.radians(short_so101_command().command_format.start_posture_deg))
    return StsEmulatorConfig(
        **{"start_posture": start, "held_until_torque": True, "lockstep": True, **fields}
    )


@pytest.fixture(scope="module")
def emulator():
    with emulator_process(_config()) as emu:
        yield emu


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    return write_command_file(tmp_path_factory.mktemp("commands") / "SO.txt", short_so101_command())


def _torque(snapshot) -> list[int]:
    return [servo["torque_enable"] for servo in snapshot["servos"].values()]


def _record(emulator, out, config, command, **fields):
    emulator.reset(config)
    recording = record_so101(
        command, emulator.port, out, settings_for("lockstep", **SHORT, **fields)
    )
    return recording, emulator.snapshot()


class _Wire:
    """A port that keeps what the SDK writes."""

    def __init__(self):
        self.is_using = False
        self.written = b""

    def clearPort(self):  # noqa: N802
        pass

    def writePort(self, packet):  # noqa: N802
        self.written += bytes(packet)
        return len(packet)

    def setPacketTimeout(self, length):  # noqa: N802
        pass


def test_the_framing_and_the_signs_are_the_sdks():
    """The emulator's packets are the ones scservo_sdk frames; its sign-magnitude words decode as
    the SDK's SCS_TOHOST does; the status checksum is the one the SDK verifies."""
    handler = sts_bus.CheckedStsPacketHandler()
    wire = _Wire()
    handler.write2ByteTxOnly(wire, 3, sts.GOAL_POSITION.address, 2100)
    assert wire.written == p.instruction_packet(3, p.INST_WRITE, bytes((42, 0x34, 0x08)))
    wire = _Wire()
    group = scs.GroupSyncRead(wire, handler, sts.CYCLE_READ_ADDRESS, sts.CYCLE_READ_LENGTH)
    for sts_id in IDS:
        group.addParam(sts_id)
    group.txPacket()
    assert wire.written == p.instruction_packet(
        p.BROADCAST_ID, p.INST_SYNC_READ, bytes((56, 15, *IDS))
    )
    for value in (0, 1, -1, 1000, -1000, 2047, -2047):
        for bit in (10, 11, 15):
            if abs(value) < 1 << bit:
                raw = sts.encode_sign_magnitude(value, bit)
                assert scs.SCS_TOHOST(raw, bit) == value == sts.decode_sign_magnitude(raw, bit)
                assert scs.SCS_TOSCS(value, bit) == raw
    status = p.status_packet(5, 0x20, bytes((1, 2)))
    assert status[-1] == ~sum(status[2:-1]) & 0xFF and status[4] == 0x20
    reader = p.PacketReader()
    packets = reader.feed(b"\x00\xff" + status + status[:-1] + bytes((status[-1] ^ 1,)))
    assert [(k.sts_id, k.instruction, k.checksum_ok) for k in packets] == [
        (5, 0x20, True),
        (5, 0x20, False),
    ]


def test_a_recording_end_to_end(emulator, short, tmp_path, capsys):
    """`crane-id record --robot so101 --port` through the emulator, to a log the preprocessing
    reads."""
    log_path = tmp_path / "SO.npz"
    emulator.reset(_config())
    argv = ["record", str(short), "--robot", "so101", "--out", str(log_path), "--port"]
    options = ["--idle", "0.2", "--no-approach", "--timing", "lockstep", "--no-realtime"]
    assert cli.main([*argv, emulator.port, *options]) == 0, capsys.readouterr().err
    assert "logging: torque on" in capsys.readouterr().out
    snapshot = emulator.snapshot()
    assert _torque(snapshot) == [0] * 6
    assert all([e[1] for e in s["torque_events"]] == [1, 0] for s in snapshot["servos"].values())
    assert all(s["acceleration"] == sts.ACCELERATION_SETTING for s in snapshot["servos"].values())
    log = raw_log.read_raw_log(log_path)
    meta = log.metadata
    assert log.n_axes == 6 and log.samples.shape[1] == 2 + 13 * 6 and meta["arm"] == "so101"
    assert (
        meta["servo_models"] == " ".join(["777:STS3215"] * 6) and meta["drive_mode"] == "position"
    )
    assert meta["servo_pid_coefficients"] == " ".join(["16/0/32"] * 6)
    assert meta["torque_off_read_back"] == " ".join(f"{i}:0" for i in IDS)
    ticks = log.column_group("position_ticks")
    np.testing.assert_allclose(log.theta, (ticks - 2048) * sts.RAD_PER_COUNT, atol=1e-12)
    np.testing.assert_allclose(
        log.current_command, log.column_group("goal_current_units") * 0.0065, atol=1e-12
    )
    np.testing.assert_allclose(np.diff(log.t), 4e-3, atol=1e-12)  # the STS period's grid
    # the goal sent every cycle is the reference in counts; the servos' loop follows it
    cycles = np.load(cycles_path(log_path))
    logged = np.isin(cycles["phase"], (2, 3, 4, 5, 6))
    np.testing.assert_array_equal(cycles["goal_ticks"][logged], goal_ticks(log.theta_ref))
    assert np.all(cycles["voltage"] == 120) and np.all(cycles["temperature"] == 35)
    assert np.abs(log.theta[-1] - log.theta_ref[-1]).max() < np.radians(6.0)
    moving = log.segment >= 0
    assert np.abs(log.current_command[moving]).max() > 0.1  # the servos carried the arm
    duty = log.column_group("u_feedback")  # Present_Load / 1000, the loop's output
    assert np.abs(duty).max() <= 1.0 and np.abs(duty[moving]).max() > 0.1
    assert meta["drive_mode"] == "position" and int(meta["in_position_timeouts"]) == 0
    # the preprocessing of every other log reads it
    bundle = preprocess(log, 0.04)
    assert bundle.theta.shape[1] == 6 and np.isfinite(bundle.tau).all()


FAULTS = {
    "drop": (Fault("drop", 3, FAULT_AT_S, count=3), "timeout", {}),  # the stop reaches it again
    "corrupt_crc": (Fault("corrupt_crc", 4, FAULT_AT_S), "crc", {}),
    "overload": (
        Fault("hardware_error", 2, FAULT_AT_S, bits=sts.ERROR_OVERLOAD),
        "hardware_error",
        {},
    ),
    "late": (Fault("late", 5, FAULT_AT_S, delay_ms=750.0, count=1), "timeout", {}),
    "stuck": (Fault("stuck", 1, FAULT_AT_S), "clamp", {"clamp_hold_s": 0.2}),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_every_fault_stops_the_arm_and_keeps_the_log(emulator, short, tmp_path, name):
    fault, kind, extra = FAULTS[name]
    log_path = tmp_path / f"{name}.npz"
    recording, snapshot = _record(emulator, log_path, _config(faults=(fault,)), short, **extra)
    assert recording.fault is not None and recording.fault.kind == kind, recording.fault
    assert recording.exit_status == 1
    assert _torque(snapshot) == [0] * 6  # read back from the emulator's memory tables
    log = raw_log.read_raw_log(log_path)
    assert log.n_samples == recording.fault.sample > 0
    assert log.metadata["fault"].startswith(kind)
    assert not list(tmp_path.glob(f"{log_path.name}.*partial*"))
    if name != "stuck":  # seen in the sync read of the cycle it starts in (4 ms cycles)
        assert abs(recording.fault.cycle - FAULT_AT_S / 4e-3) <= 3, recording.fault.cycle
    if name == "overload":
        assert "ID 2 (axis 2): status 0x20 (overload)" in log.metadata["fault"]
    if name in ("late", "drop"):  # the late reply dropped: every servo read back Torque_Enable 0
        assert recording.torque_off == {i: 0 for i in IDS}


def test_ctrl_c_stops_the_arm(emulator, tmp_path):
    log_path = tmp_path / "interrupted.npz"
    emulator.reset(_config())
    logging, done = threading.Event(), threading.Event()

    def interrupt_once_logging():
        logging.wait()
        if not done.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=interrupt_once_logging, daemon=True)
    watcher.start()
    try:
        recording = record_so101(
            LONG,
            emulator.port,
            log_path,
            settings_for("lockstep", **SHORT),
            on_logging=lambda cycle: logging.set(),
        )
    finally:
        done.set()
        logging.set()
        watcher.join()
    assert recording.fault is not None and recording.fault.kind == "signal", recording.fault
    assert recording.exit_status == 128 + signal.SIGINT
    assert _torque(emulator.snapshot()) == [0] * 6
    log = raw_log.read_raw_log(log_path)
    assert (
        log.metadata["fault"] == "signal: SIGINT 2" and log.n_samples == recording.fault.sample > 0
    )


def test_sigterm_stops_the_command_line_recorder(emulator, tmp_path):
    """`crane-id record --robot so101 --port`: the test waits for the recorder's "logging:" line
    (torque on, handler in place), then sends SIGTERM."""
    log_path = tmp_path / "terminated.npz"
    emulator.reset(_config())
    argv = ["record", str(LONG), "--robot", "so101", "--out", str(log_path)]
    argv += ["--port", emulator.port, "--idle", "0.2", "--no-approach", "--no-realtime"]
    with recording_process([*argv, "--timing", "lockstep"], cwd=REPO_ROOT) as process:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "FAULT" in err and "SIGTERM" in err
    assert _torque(emulator.snapshot()) == [0] * 6
    log = raw_log.read_raw_log(log_path)
    assert log.n_samples > 0 and log.metadata["fault"] == "signal: SIGTERM 15"
    assert log.metadata["arm"] == "so101"


BAD_INPUT = {
    "no STS servo": (
        {"absent": IDS},
        "no STS servo answers a ping at 1 Mbit/s on IDs 1, 2, 3, 4, 5, 6 (IDs answering a "
        "broadcast ping: none)",
    ),
    "wrong model": (
        {"models": (777, 777, 1284, 777, 777, 777)},
        "ID 3 (axis 3), Model_Number(3): 1284 (SCS0009) (expected 777 (STS3215",
    ),
    "wrong ID": (
        {"ids": (1, 2, 3, 4, 5, 9)},
        "ID 6 (axis 6): no answer to a ping (timeout (no status packet); IDs answering a "
        "broadcast ping: 1, 2, 3, 4, 5, 9)",
    ),
    "operating mode": (
        {"operating_mode": 2},
        "ID 1 (axis 1), Operating_Mode(33): 2 (PWM (open loop) mode) (expected 0 (position mode",
    ),
    "loop gain": (
        {"pid": (32, 0, 32)},
        "ID 1 (axis 1), P_Coefficient(21): 32 (expected 16, the description's [position_loop]",
    ),
    "return delay": (
        {"return_delay": sts.RETURN_DELAY_FACTORY},
        "ID 1 (axis 1), Return_Delay_Time(7): 250 x 2 us (the factory value)",
    ),
}


@pytest.mark.parametrize("name", list(BAD_INPUT))
def test_bad_input_is_refused_before_torque(emulator, short, tmp_path, capsys, name):
    """Through the command line: one line naming the servo, the register and what was expected,
    exit 2, no log, and no servo's torque ever enabled."""
    fields, expected = BAD_INPUT[name]
    emulator.reset(_config(**fields))
    out = tmp_path / "log.npz"
    argv = ["record", str(short), "--robot", "so101", "--out", str(out), "--port", emulator.port]
    assert cli.main([*argv, "--timing", "lockstep", "--no-realtime"]) == cli.EXIT_BAD_INPUT
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and expected in message, message
    assert f"record: {emulator.port}" in message
    assert not out.exists() and not list(tmp_path.glob("log*"))
    assert all(not s["torque_events"] for s in emulator.snapshot()["servos"].values())


def test_a_period_the_bus_cannot_keep_is_refused_before_the_port_is_opened(short):
    """At 1 Mbit/s one cycle's packets take 1.66 ms: a 1 ms period is refused, naming both."""
    settings = settings_for("realtime", period_s=1e-3)
    with pytest.raises(InputError, match=r"1\.66 ms on the wire .*longer than that \(not 1 ms\)"):
        record_so101(short, "/dev/no-such-port", None, settings)
