"""The arm's path (bus, recorder, emulator) for another arm than the CRANE-X7: the ViperX 300 S,
whose shoulder (IDs 2+3) and elbow (IDs 4+5) are each driven by a primary servo and its shadow.

Everything runs against the Protocol 2.0 emulator on a pseudo-terminal started here (nothing
leaves the machine), in lockstep timing as tests/test_hardware_recorder.py does, on a short
command file (one move out and back, about 5 s of logged motion). The CRANE-X7's own path is
tested, unchanged, by tests/test_hardware_recorder.py and tests/test_hardware_protocol.py.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.cli.common import check_log_robot, robot_of
from crane_lib.errors import InputError
from crane_lib.excitation.commands import CommandFile, write_command_file
from crane_lib.hardware import bus as bus_module
from crane_lib.hardware import control_table as ct
from crane_lib.hardware.arm_bus import arm_bus
from crane_lib.hardware.emulated import start_posture_config
from crane_lib.hardware.emulator import EmulatorProcess
from crane_lib.hardware.recorder import (
    RecorderSettings,
    bus_wire_seconds,
    check_bus_speed,
    record_arm,
)
from crane_lib.hardware.timing import LOCKSTEP
from crane_lib.logs import raw_log
from crane_lib.model.arm_description import ARMS, crane_x7, load_arm
from crane_lib.paths import DATA_DIR
from crane_lib.twin import recorder as twin

ARM = "vx300s"
SEED = 1  # the emulator's and the twin's: the same run-to-run draw of the plant
# at the ViperX's stock 1 Mbit/s one cycle needs 2.56 ms on the wire: the recorder wants 3 Mbit/s
FAST_BAUD = 3_000_000
SHORT = dict(
    lead_s=0.2,
    tail_s=0.2,
    preroll_s=0.1,
    realtime=False,
    approach=False,
    timing=LOCKSTEP,
    arm=ARM,
    baud=FAST_BAUD,
)
BLOCK_S = 0.04  # torques compared as block means over the identification's sampling interval
# tolerances (see test_the_viperx_records_through_the_emulator_as_its_twin_does for why they
# differ); this file's recordings are deterministic (lockstep, fixed seeds): 3 % to 6 % seen
BLOCK_TORQUE_TOLERANCE = 0.10  # RMS difference of the block means, relative to the twin's RMS
PRESENT_CURRENT_TOLERANCE = 0.10  # shoulder/elbow present against commanded current, block means


def _short_command() -> CommandFile:
    """Waist, shoulder, elbow and wrist angle out and back at full speed, then q̄0 twice."""
    moves = [[0, 0, 0, 0, 0, 0, 0], [30, 30, -20, 0, 20, 0, 0], [0] * 7, [0] * 7]
    return CommandFile(
        "SHORT_VX300S",
        np.radians(moves),
        np.array([100.0, 100.0, 100.0, 20.0]),
        command_format=twin.command_format(ARM),
    )


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    folder = tmp_path_factory.mktemp("commands")
    return write_command_file(folder / "SHORT_VX300S.txt", _short_command())


@pytest.fixture(scope="module")
def emulator():
    with EmulatorProcess(start_posture_config(arm=ARM, seed=SEED)) as emu:
        yield emu


def _block_means(values: np.ndarray, rows: int) -> np.ndarray:
    n = len(values) // rows
    return values[: n * rows].reshape(n, rows, values.shape[1]).mean(axis=1)


def _motion(log: raw_log.RawLog) -> slice:
    return slice(int(log.metadata["motion_start_sample"]), int(log.metadata["motion_end_sample"]))


def _by_segment(ours: raw_log.RawLog, theirs: raw_log.RawLog) -> tuple[np.ndarray, np.ndarray]:
    """Both logs' torques, each segment (its move and in-position wait) cut to the shorter of
    the two and the segments put back together: the waits end a few cycles apart."""
    parts = [], []
    for segment in range(int(ours.segment.max()) + 1):
        a = ours.torque_logged[ours.segment == segment]
        b = theirs.torque_logged[theirs.segment == segment]
        n = min(len(a), len(b))
        parts[0].append(a[:n])
        parts[1].append(b[:n])
    return np.vstack(parts[0]), np.vstack(parts[1])


def test_the_bus_of_each_arm_comes_from_its_description():
    viperx = arm_bus(ARM)
    assert viperx.baud == load_arm(ARM).bus.baud == 1_000_000
    assert viperx.ids == (1, 2, 3, 4, 5, 6, 7, 8, 9) and viperx.primary_ids == (1, 2, 4, 6, 7, 8, 9)
    assert [(s.dxl_id, s.primary_id) for s in viperx.shadows] == [(3, 2), (5, 4)]
    assert [s.dxl_id for s in viperx.servos if s.reverse] == [2, 4, 7]  # Interbotix's Drive_Mode 1
    x7 = arm_bus()  # the CRANE-X7's, from control_table: the description agrees
    assert x7.ids == x7.primary_ids == ct.AXIS_IDS == tuple(i for (i,) in crane_x7().bus.ids)
    assert x7.baud == ct.BAUD_RATE == crane_x7().bus.baud and not x7.shadows
    assert tuple(s.model_number for s in x7.servos) == ct.EXPECTED_MODELS


def test_the_viperx_records_through_the_emulator_as_its_twin_does(
    emulator, short, tmp_path, capsys
):
    """The command line records the ViperX on the emulator; the log is the twin's format for
    that arm, and its torques agree with the twin's recording of the same file.

    They cannot agree sample by sample: the twin's host has a 0.9 ms read-and-dispatch latency
    and a jittered 1 ms cycle, the lockstep emulator's bus takes a fraction of that; the
    current-loop and sensor noise are other draws (the emulator draws one per servo, two on a
    shadowed joint); the in-position waits then end a few cycles apart and shift every later
    segment. Segment by segment, the 40 ms block means of every axis's torque agree."""
    emulator.reset(start_posture_config(arm=ARM, seed=SEED))
    log_path = tmp_path / "vx.npz"
    status = cli.main(
        [
            "record",
            str(short),
            "--robot",
            ARM,
            "--port",
            emulator.port,
            "--out",
            str(log_path),
            "--idle",
            "0.2",
            "--no-approach",
            "--timing",
            "lockstep",
            "--no-realtime",
            "--baud",
            str(FAST_BAUD),
        ]
    )
    assert status == 0, capsys.readouterr().err
    snapshot = emulator.snapshot()
    for dxl_id in ("2", "3", "4", "5"):  # the shadows were switched on and off with their primaries
        assert [e[1] for e in snapshot["servos"][dxl_id]["torque_events"]] == [1, 0]
    log = raw_log.read_raw_log(log_path)
    check_log_robot(log, robot_of(ARM))  # what `crane-id accept --robot vx300s` checks first
    meta = log.metadata
    assert log.arm == ARM and log.samples.shape[1] == raw_log.layout(ARM).n_columns == 2 + 13 * 7
    assert meta["fault"] == "none" and meta["servo_ids"] == "1 2 3 4 5 6 7 8 9"
    assert meta["servo_shadows"] == "3:2 5:4" and meta["baud_rate"] == str(FAST_BAUD)
    samples, twin_meta = twin.record(short, seed=SEED, arm=ARM)
    reference = raw_log.RawLog(samples, twin_meta)
    assert reference.arm == ARM and samples.shape[1] == log.samples.shape[1]
    last_segment = len(_short_command().waypoints) - 1
    assert int(log.segment.max()) == int(reference.segment.max()) == last_segment
    ours, theirs = _by_segment(log, reference)
    rows = round(BLOCK_S / 1e-3)
    difference = _block_means(ours, rows) - _block_means(theirs, rows)
    share = np.sqrt(np.mean(difference**2, axis=0)) / np.sqrt(np.mean(theirs**2, axis=0))
    assert np.all(share < BLOCK_TORQUE_TOLERANCE), f"block means apart by {np.round(share, 3)}"
    # the present current of a shadowed joint, both servos' torque over both torque constants,
    # follows the command (summed without the constants it would read twice the command)
    present = _block_means(log.column_group("current_present")[_motion(log)], rows)
    command = _block_means(log.current_command[_motion(log)], rows)
    for axis in (2, 3):
        k = axis - 1
        error = np.sqrt(np.mean((present[:, k] - command[:, k]) ** 2))
        share = error / np.sqrt(np.mean(command[:, k] ** 2))
        assert share < PRESENT_CURRENT_TOLERANCE, f"axis {axis}: present current {share:.0%} off"


def test_the_shadow_follows_its_primarys_goal(emulator):
    """A goal written to the primary alone drives the shadow too; the shadow's current, read by its
    own ID, counts in the joint's. The emulated shadow also takes a goal written to its own ID (the
    e-Manual forbids it nothing there; the recorder never does it): here, to make its current
    differ from the primary's, so that the joint's current shows both."""
    emulator.reset(start_posture_config(arm=ARM, seed=SEED))
    servos = bus_module.ServoBus(emulator.port, arm=arm_bus(ARM), timing=LOCKSTEP)
    servos.open()
    try:
        servos.discover()
        limits = np.array([s.current_limit_units for s in arm_bus(ARM).servos if not s.shadow])
        servos.configure(limits)
        servos.enable_torque(0)
        goal = np.zeros(7, dtype=np.int64)
        goal[1] = 200  # the shoulder: 0.54 A per servo
        read = servos.new_cycle_read()
        for _ in range(3):
            servos.read_cycle(read)
            servos.write_goal_current(goal)
        servos.read_cycle(read)
        shadow_units = servos.read(3, ct.PRESENT_CURRENT)
        assert servos.read(3, ct.GOAL_CURRENT) == 200 and servos.read(2, ct.GOAL_CURRENT) == 200
        assert abs(shadow_units - 200) < 15  # the twin's current-loop and register noise
        assert abs(read.current_units[1] - 200) < 15
        assert read.current_units[0] == pytest.approx(0, abs=15)
        servos.write_checked(3, ct.GOAL_CURRENT, 100, "the shadow's own goal")
        servos.read_cycle(read)
        assert abs(servos.read(3, ct.PRESENT_CURRENT) - 100) < 15
        assert abs(servos.read(2, ct.PRESENT_CURRENT) - 200) < 15
        assert abs(read.current_units[1] - 150) < 15  # the mean: the primary alone would be 200
    finally:
        servos.torque_off()
        servos.close()


@pytest.mark.parametrize(
    "override, found, expected",
    [
        (
            dict(secondary_ids=((3, 255),)),
            "ID 3 (axis 2, shadow of ID 2): Secondary(Shadow) ID(12) is 255",
            "expected 2, the ID of the joint's primary servo",
        ),
        (
            dict(drive_modes=((5, 1),)),
            "ID 5: Drive Mode(10) is 1: bit 0 (reverse direction) is set",
            "bit 0 clear",
        ),
        (
            dict(drive_modes=((4, 0),)),
            "ID 4: Drive Mode(10) is 0: bit 0 (reverse direction) is clear",
            "bit 0 set",
        ),
    ],
    ids=["shadow's secondary ID", "shadow reversed", "primary not reversed"],
)
def test_a_misconfigured_shadowed_joint_is_refused_before_torque(
    emulator, short, tmp_path, override, found, expected
):
    config = start_posture_config(arm=ARM, seed=SEED, **override)
    emulator.reset(config)
    settings = RecorderSettings(**SHORT)
    with pytest.raises(InputError) as refused:
        record_arm(short, emulator.port, tmp_path / "log.npz", settings)
    message = str(refused.value)
    assert f"{emulator.port}, {found}" in message and expected in message, message
    snapshot = emulator.snapshot()
    assert all(s["torque_events"] == [] for s in snapshot["servos"].values())  # never enabled
    assert not (tmp_path / "log.npz").exists()


def test_a_bus_too_slow_for_the_control_period_is_refused_before_the_port_opens(
    short, tmp_path, capsys
):
    """One cycle's packets at the ViperX's stock 1 Mbit/s take 2.56 ms, more than the 1 ms
    period: refused with the rate that fits; the CRANE-X7's 3 Mbit/s fits (0.79 ms)."""
    assert bus_wire_seconds(arm_bus(ARM)) == pytest.approx(2.56e-3)
    assert bus_wire_seconds(arm_bus("crane_x7")) < 0.8e-3
    status = cli.main(
        [
            "record",
            str(short),
            "--robot",
            ARM,
            "--port",
            "/dev/no-such-port",
            "--out",
            str(tmp_path / "log.npz"),
            "--timing",
            "lockstep",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert "/dev/no-such-port at 1 Mbit/s: one cycle's packets take 2.56 ms on the wire" in err[0]
    assert "Baud Rate(8) set to 3 Mbit/s (value 5" in err[0] and "--baud 3000000" in err[0]
    assert not (tmp_path / "log.npz").exists()
    with pytest.raises(InputError, match="1 Mbit/s"):
        check_bus_speed(arm_bus("crane_x7"), 1_000_000, 1e-3, "port")
    check_bus_speed(arm_bus("crane_x7"), 3_000_000, 1e-3, "port")  # the manufacturer's rate


def test_the_so101_goes_to_its_sts_recorder_not_to_the_dynamixel_one(tmp_path, capsys):
    """The DYNAMIXEL bus refuses the SO-101's Feetech bus; `record --port` takes it to the STS
    recorder (tests/test_sts_bus.py), which refuses a missing port naming its adapter."""
    with pytest.raises(InputError, match="Feetech STS .SCS., not DYNAMIXEL Protocol 2.0"):
        arm_bus("so101")
    status = cli.main(
        [
            "record",
            str(DATA_DIR.parent / "trajectories" / "so101" / "S_A.txt"),
            "--robot",
            "so101",
            "--port",
            "/dev/no-such-port",
            "--out",
            str(tmp_path / "log.npz"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert "/dev/no-such-port: no such port" in err[0] and "bus servo adapter" in err[0]
    assert not (tmp_path / "log.npz").exists()


def test_a_folder_arm_is_refused_on_a_port_unless_it_is_a_shipped_one(tmp_path, capsys):
    """A folder holding another arm than a shipped one has no key its raw log could name."""
    folder = tmp_path / "my_arm"
    shutil.copytree(DATA_DIR / ARMS[ARM], folder)
    toml = folder / "arm.toml"
    toml.write_text(toml.read_text().replace('name = "ViperX 300 S"', 'name = "My arm"', 1))
    status = cli.main(
        [
            "record",
            str(tmp_path / "any.txt"),
            "--robot",
            str(folder),
            "--port",
            "/dev/null",
            "--out",
            str(tmp_path / "log.npz"),
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and f"--robot {folder}: is no shipped arm" in err
    assert robot_of(str(folder)).key is None  # the renamed arm is no shipped one
    assert not (tmp_path / "log.npz").exists()
