"""The recorder against the Protocol 2.0 emulator on a pseudo-terminal (started here, nothing
leaves the machine): a recording end to end, every fault, every bad input.

The emulator and the recorder run in real time. A host stall longer than the recorder's
20 ms watchdog stops a recording with a timing fault, as it must; on a loaded machine that can
happen without an injected fault, so `_record` records again (at most three times) when the
fault it got is a timing fault that nobody injected, and says so in the test's output."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.errors import InputError
from crane_lib.constants import CURRENT_UNIT_A, ENCODER_RESOLUTION_RAD
from crane_lib.excitation.commands import CommandFile, read_command_file, write_command_file
from crane_lib.hardware import bus as bus_module
from crane_lib.hardware.emulated import TIMING_FAULTS, start_posture_config
from crane_lib.hardware.emulator import EmulatorProcess, Fault, open_pty
from crane_lib.hardware.recorder import RecorderSettings, cycles_path, record_arm
from crane_lib.logs import raw_log
from crane_lib.paths import REPO_ROOT, TRAJECTORY_DIR

from .hardware_cases import short_command

AP01 = TRAJECTORY_DIR / "AP01.txt"
SHORT = dict(lead_s=0.2, tail_s=0.2, preroll_s=0.1, realtime=True, approach=False)  # held at the start posture: no approach
FAULT_AT_S = 0.8  # after the first torque enable: the log has begun (preroll 0.1 s, lead 0.2 s)


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    return write_command_file(tmp_path_factory.mktemp("commands") / "SHORT.txt", short_command())


@pytest.fixture(scope="module")
def emulator():
    with EmulatorProcess(start_posture_config(realtime=True)) as emu:
        yield emu


def _torque(snapshot) -> list[int]:
    return [servo["torque_enable"] for servo in snapshot["servos"].values()]


def _record(emulator, out, config, settings, command, expect=None, attempts=3):
    """record_arm through the emulator reset to `config`; again on a timing fault nobody injected,
    and a skip when the host stalls on every attempt (it cannot keep a 1 ms loop)."""
    stalls = []
    for attempt in range(attempts):
        emulator.reset(config)
        recording = record_arm(command, emulator.port, out, settings)
        snapshot = emulator.snapshot()
        injected_started = any(" fault " in line for line in snapshot["log"])
        fault = recording.fault
        spurious = fault is not None and fault.kind in TIMING_FAULTS and (expect not in TIMING_FAULTS or not injected_started) and fault.kind != expect
        spurious = spurious or (fault is not None and fault.kind in TIMING_FAULTS and config.faults and not injected_started)
        if not spurious:
            return recording, snapshot
        stalls.append(fault.text())
        print(f"attempt {attempt + 1}: the host stalled ({fault.text()}); recording again")
    pytest.skip(f"the host stalled beyond the 20 ms watchdog on all {attempts} attempts: {'; '.join(stalls)}")


def test_a_recording_end_to_end(emulator, short, tmp_path, capsys):
    log_path = tmp_path / "SHORT.csv"
    recording, snapshot = _record(emulator, log_path, start_posture_config(realtime=True), RecorderSettings(**SHORT), short)
    assert recording.fault is None, recording.fault
    assert _torque(snapshot) == [0] * 8 and all([e[1] for e in s["torque_events"]] == [1, 0] for s in snapshot["servos"].values())
    log = raw_log.read_raw_log(log_path)
    meta = log.metadata
    assert meta["fault"] == "none" and meta["servo_models"].split()[1] == "1120:XM540-W270" and meta["servo_ids"] == "2 3 4 5 6 7 8 9"
    assert int(meta["samples"]) == log.n_samples and meta["trajectory"] == "SHORT"
    # the columns the twin fills, filled the same way
    ticks = log.column_group("position_ticks")
    np.testing.assert_allclose(log.theta, ticks * ENCODER_RESOLUTION_RAD - math.pi, atol=1e-12)
    np.testing.assert_allclose(log.current_command, log.column_group("goal_current_units") * CURRENT_UNIT_A)
    assert log.segment.max() == len(read_command_file(short).waypoints) - 1 and log.segment[0] == -1
    # every cycle's stamps: the log's t is the read stamp of each logged cycle
    stamps = np.load(cycles_path(log_path))
    reads = stamps["read_start"][np.isin(stamps["phase"], (2, 3, 4, 5, 6))]
    np.testing.assert_allclose(np.diff(log.t), np.diff(reads), atol=1e-9)
    cycle_ms = np.diff(stamps["read_start"]) * 1e3
    assert float(meta["cycle_ms_median"]) == pytest.approx(np.median(cycle_ms), abs=1e-4)
    with capsys.disabled():
        print(f"\nSHORT through the emulator: {len(cycle_ms) + 1} cycles, median {np.median(cycle_ms):.3f} ms, "
              f"99th percentile {np.percentile(cycle_ms, 99):.3f} ms, max {cycle_ms.max():.3f} ms, "
              f"{meta['cycles_late']} late, {meta['cycles_missed']} grid points missed ({meta['scheduling']})")
    # identify accepts it
    model = tmp_path / "model.csv"
    assert cli.main(["identify", str(log_path), "--trajectory", str(short), "--ts", "0.04", "--refine", "none", "--out", str(model)]) == 0
    assert model.is_file()


FAULTS = {
    "drop": (Fault("drop", 5, FAULT_AT_S), "timeout", {}),
    "corrupt_crc": (Fault("corrupt_crc", 4, FAULT_AT_S), "crc", {}),
    "hardware_error": (Fault("hardware_error", 6, FAULT_AT_S, bits=0x20), "hardware_error", {}),
    "stuck": (Fault("stuck", 2, FAULT_AT_S), "clamp", {"clamp_hold_s": 0.3}),
    "late": (Fault("late", 3, FAULT_AT_S, delay_ms=60.0), "timeout", {}),
    "joint_limit": (None, "joint_limit", {"joint_margin_deg": -4.0}),  # limits tightened by 4 deg: the move to 0 crosses joint 4's
}
TO_ZERO = CommandFile("TO_ZERO", np.zeros((2, 8)), np.array([60.0, 20.0]))  # q̄A -> q̄0: joint 4 from -90 deg to its limit at 0


@pytest.mark.parametrize("name", list(FAULTS))
def test_every_fault_stops_the_arm_and_keeps_the_log(emulator, short, tmp_path, name):
    fault, kind, extra = FAULTS[name]
    config = start_posture_config(realtime=True, faults=() if fault is None else (fault,))
    log_path = tmp_path / f"{name}.npz"
    command = TO_ZERO if name == "joint_limit" else short
    recording, snapshot = _record(emulator, log_path, config, RecorderSettings(**SHORT, **extra), command, expect=kind)
    assert recording.fault is not None and recording.fault.kind == kind, recording.fault
    assert recording.exit_status == 1
    assert _torque(snapshot) == [0] * 8  # read back from the emulator's control tables
    assert all(s["goal_current"] == 0 or s["hardware_error"] for s in snapshot["servos"].values())
    log = raw_log.read_raw_log(log_path)
    assert log.n_samples == recording.fault.sample > 0
    assert log.metadata["fault"].startswith(kind) and int(log.metadata["fault_cycle"]) == recording.fault.cycle
    assert not log_path.with_name(log_path.name + ".partial.npy").exists()


def test_ctrl_c_stops_the_arm(emulator, short, tmp_path):
    log_path = tmp_path / "interrupted.csv"
    partial = log_path.with_name(log_path.name + ".partial.npy")
    done = threading.Event()

    def interrupt_once_logging():
        while not done.is_set() and not _logging(partial):
            time.sleep(0.02)
        if not done.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    emulator.reset(start_posture_config(realtime=True))
    watcher = threading.Thread(target=interrupt_once_logging, daemon=True)
    watcher.start()
    try:
        recording = record_arm(short, emulator.port, log_path, RecorderSettings(**SHORT))
    finally:
        done.set()
        watcher.join()
    if recording.fault is not None and recording.fault.kind in TIMING_FAULTS:
        pytest.skip(f"the host stalled before the interrupt ({recording.fault.text()})")
    assert recording.fault.kind == "signal" and recording.exit_status == 128 + signal.SIGINT
    assert _torque(emulator.snapshot()) == [0] * 8
    assert raw_log.read_raw_log(log_path).metadata["fault"] == "signal: SIGINT 2"


def test_sigterm_stops_the_command_line_recorder(emulator, short, tmp_path):
    log_path = tmp_path / "terminated.csv.gz"
    emulator.reset(start_posture_config(realtime=True))
    process = subprocess.Popen([sys.executable, "-c", "import sys; from crane_lib.cli import main; sys.exit(main())", "record", str(short), "--out", str(log_path), "--port", emulator.port,
                                "--idle", "0.2"], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = log_path.with_name(log_path.name + ".partial.npy")
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline and not _logging(partial):
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    if process.returncode == 1 and ("watchdog" in err or "timeout" in err):
        pytest.skip(f"the host stalled before SIGTERM: {err.strip()}")
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "FAULT" in err and "SIGTERM" in err
    assert _torque(emulator.snapshot()) == [0] * 8
    log = raw_log.read_raw_log(log_path)
    assert log.n_samples > 0 and log.metadata["fault"] == "signal: SIGTERM 15" and not partial.exists()


def _logging(partial) -> bool:
    """True once the recorder has logged a few rows into its memory-mapped partial file."""
    try:
        return bool(np.load(partial, mmap_mode="r")[20, 0] > 0)  # row 20's stamp: 20 ms into the log
    except (OSError, ValueError, IndexError):
        return False


def _bad_input(emulator, capsys, config, argv) -> str:
    if config is not None:
        emulator.reset(config)
    assert cli.main(["record", *argv]) == cli.EXIT_BAD_INPUT
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1, message
    if config is not None:
        assert all(not s["torque_events"] for s in emulator.snapshot()["servos"].values()), "torque was enabled"
    return message


def test_bad_input_never_enables_torque(emulator, tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "log.csv")
    arm = [str(AP01), "--out", out, "--port", emulator.port, "--idle", "0.2"]
    message = _bad_input(emulator, capsys, None, [str(AP01), "--out", out, "--port", "/dev/no-such-port"])
    assert "/dev/no-such-port: no such port" in message
    master, slave, silent = open_pty()  # a terminal nobody answers on
    try:
        message = _bad_input(emulator, capsys, None, [str(AP01), "--out", out, "--port", silent])
    finally:
        os.close(master)
        os.close(slave)
    assert f"{silent}: no servo answers" in message
    assert "ID 5 (axis 4): no answer to a ping" in _bad_input(emulator, capsys, start_posture_config(absent=(5,)), arm)
    models = list(start_posture_config().models)
    models[1] = 1020
    assert "ID 3 (axis 2): model number 1020 (XM430-W350)" in _bad_input(emulator, capsys, start_posture_config(models=tuple(models)), arm)
    message = _bad_input(emulator, capsys, start_posture_config(operating_mode_locked=True), arm)
    assert "ID 2: Operating Mode(11) is 3" in message and "access error" in message
    beyond = tmp_path / "beyond.txt"
    beyond.write_text(AP01.read_text().replace("\n60.000 60.000 0.000 0.000 ", "\n60.000 60.000 0.000 10.000 ", 1))
    assert beyond.read_text() != AP01.read_text()
    message = _bad_input(emulator, capsys, start_posture_config(), [str(beyond), *arm[1:]])
    assert str(beyond) in message and "outside the joint limits" in message
    # a USB adapter at the FTDI default latency timer: refused, with the fix
    device = tmp_path / "sysfs" / os.path.basename(os.path.realpath(emulator.port))
    device.mkdir(parents=True)
    (device / "latency_timer").write_text("16\n")
    monkeypatch.setattr(bus_module, "SYSFS_USB_SERIAL", tmp_path / "sysfs")
    message = _bad_input(emulator, capsys, start_posture_config(), arm)
    assert "USB latency timer 16 ms" in message and "latency_timer" in message and "at most 1 ms" in message


def test_the_caller_gets_its_scheduling_back(emulator, short, tmp_path):
    """The recorder runs at SCHED_FIFO where allowed; the process that called it (a test worker, a
    notebook kernel) must not go on at real-time priority, whatever the outcome."""
    before = os.sched_getscheduler(0)
    emulator.reset(start_posture_config(absent=(4,)))
    with pytest.raises(InputError):
        record_arm(short, emulator.port, tmp_path / "x.csv", RecorderSettings(**SHORT))
    emulator.reset(start_posture_config(faults=(Fault("hardware_error", 2, 0.3),)))
    recording = record_arm(short, emulator.port, tmp_path / "y.csv", RecorderSettings(**SHORT))
    assert recording.fault is not None and recording.metadata["scheduling"] != "off"
    assert os.sched_getscheduler(0) == before
