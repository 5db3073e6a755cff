"""Nothing lost under faults: temporary files carry their writer's process id and the next run
removes those of ended writers (never a live one's), a command that writes several files writes
them all or none (a full disk, a read-only or forbidden folder: one line naming the file, exit 2),
and `crane-id record`, `export` and `accept` killed with SIGKILL at random points leave every
output absent or whole, and the next run cleans up and succeeds."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from crane_book import corpus
from crane_lib import cli, errors
from crane_lib.cli import common
from crane_lib.excitation.commands import write_command_file
from crane_lib.logs import raw_log
from crane_lib.model.parameters import load_parameters
from crane_lib.paths import REPO_ROOT

from .hardware_cases import recording_process, short_command


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The corpus's model, log and command file and a short command file; the working folder."""
    (tmp_path / "model.csv").write_bytes(corpus.model_bytes())
    (tmp_path / "log.npz").write_bytes(corpus.log_npz())
    (tmp_path / "AP01.txt").write_bytes(corpus.command_file_bytes())
    write_command_file(tmp_path / "SHORT.txt", short_command())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ended_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if ".tmp" in p.name or "partial" in p.name)


# ----------------------------------------------------------------------------- stale temporaries


def test_the_next_run_removes_an_ended_writers_temporaries_and_keeps_a_live_ones(tmp_path, capsys):
    """Temporaries beside an output of a process that has ended (or is a zombie) go, with one line
    naming them; a running process's, another output's and this process's stay."""
    dead = _ended_pid()
    zombie = subprocess.Popen(["true"])  # ended, not yet waited for
    deadline = time.monotonic() + 10
    while not errors.process_ended(zombie.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    live = subprocess.Popen(["sleep", "60"])
    try:
        stale = [
            f".m.csv.{dead}.ab_12cd.tmp",
            f".m.csv.{zombie.pid}.x9.tmp",
            f".m.csv.{10**30}.x9.tmp",  # no process has that id
            f"m.csv.{dead}.partial.npy",
            f"m.csv.{dead}.partial.json",
        ]
        kept = [
            f".m.csv.{live.pid}.qq.tmp",
            f".m.csv.{os.getpid()}.mine.tmp",
            f".other.csv.{dead}.ab.tmp",
            f".m.csv.{dead}.tmp",  # no random part: no temporary of atomic_write
        ]
        for name in stale + kept:
            (tmp_path / name).write_bytes(b"half")
        (tmp_path / f".b.{dead}.zz.tmp").mkdir()  # a killed preprocess's folder
        (tmp_path / f".b.{dead}.zz.tmp" / "bundle_010ms.npz").write_bytes(b"half")
        with errors.interruptible():
            common.output_path(tmp_path / "m.csv")
            common.output_folder(tmp_path / "b", ["bundle_010ms.npz"])
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 2, err
        assert all(str(tmp_path / name) in err[0] for name in stale), err
        assert str(dead) in err[0] and str(zombie.pid) in err[0], err
        assert f".b.{dead}.zz.tmp" in err[1], err
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)
    finally:
        live.kill()
        live.wait()
        zombie.wait()
    with errors.atomic_write(tmp_path / "n.csv") as handle:  # the pid is in the name
        names = [p.name for p in tmp_path.iterdir() if p.name.startswith(".n.csv.")]
        assert len(names) == 1 and names[0].startswith(f".n.csv.{os.getpid()}."), names
        handle.write("x\n")


def test_a_killed_recorders_partial_files_carry_its_pid_and_are_removed_once_recovered(tmp_path):
    """recover_partial reads `<LOG>.<pid>.partial.npy` of an ended recorder and removes both
    partial files once the log is written."""
    from crane_lib.hardware.recorder import recover_partial

    dead = _ended_pid()
    rows = np.lib.format.open_memmap(
        tmp_path / f"killed.npz.{dead}.partial.npy",
        mode="w+",
        dtype=np.float64,
        shape=(20, raw_log.N_COLUMNS),
    )
    rows[:5, raw_log.COLUMN["t"]] = np.arange(5) * 1e-3
    rows.flush()
    del rows
    (tmp_path / f"killed.npz.{dead}.partial.json").write_text('{"port": "/dev/ttyUSB0"}')
    log = raw_log.read_raw_log(recover_partial(tmp_path / "killed.npz"))
    assert log.n_samples == 5 and log.metadata["fault"].startswith("killed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["killed.npz"]


# ----------------------------------------------------------------------------- all or nothing


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES], ids=errno.errorcode.get)
def test_export_writes_all_its_files_or_none(code, scratch, capsys, monkeypatch):
    """The disk fills while the MJCF is written (a real ENOSPC: its temporary file is /dev/full),
    or its folder refuses the temporary file: no URDF, no CSV either, one line naming the MJCF."""
    real = errors._temporary_file

    def failing(path):
        if path.name != "m.xml":
            return real(path)
        if code != errno.ENOSPC:  # as mkstemp fails in a read-only or forbidden folder
            raise OSError(code, os.strerror(code), str(path.parent / f".m.xml.{os.getpid()}.tmp"))
        fd, tmp = real(path)
        os.close(fd)
        return os.open("/dev/full", os.O_WRONLY), tmp

    monkeypatch.setattr(errors, "_temporary_file", failing)
    argv = ["export", "model.csv", "--urdf", "m.urdf", "--mjcf", "m.xml", "--standard", "m.csv"]
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    err = _one_line(capsys)
    assert err.startswith("crane-id export: m.xml: ") and errno.errorcode[code] in err, err
    assert err.endswith("no output was written"), err
    assert sorted(p.name for p in scratch.iterdir()) == [
        "AP01.txt",
        "SHORT.txt",
        "log.npz",
        "model.csv",
    ]


def test_preprocess_leaves_no_folder_when_the_disk_fills(scratch, capsys, monkeypatch):
    """The second bundle meets a full disk: the new folder is not left behind, empty or not."""
    real_open = open

    def full_disk(file, mode="r", *args, **kwargs):
        if str(file).endswith("bundle_020ms.npz"):
            return real_open("/dev/full", mode, *args, **kwargs)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(errors, "open", full_disk, raising=False)
    argv = ["preprocess", "log.npz", "--out", "b", "--intervals", "10", "20"]
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    err = _one_line(capsys)
    assert "b/bundle_020ms.npz: " in err and "ENOSPC" in err, err
    assert not (scratch / "b").exists() and _leftovers(scratch) == []
    monkeypatch.delattr(errors, "open")
    assert cli.main(argv) == 0
    assert sorted(p.name for p in (scratch / "b").iterdir()) == [
        "bundle_010ms.npz",
        "bundle_020ms.npz",
    ]


# ----------------------------------------------------------------------------- SIGKILL

# The child stalls at a chosen point of its writing (after creating its k-th temporary output
# file, half-written, or after putting its j-th output in place) and says so in a marker file;
# the test then kills it with SIGKILL after a random few milliseconds. Temporary files of other
# files (caches) do not count.
CHILD = """
import os, sys, time
from crane_lib import errors
outputs = set(os.environ["KILL_OUTPUTS"].split(","))
kind, at = os.environ["KILL_AT"].split(":")
count = {"temporary": 0, "placed": 0}

def stall(what, fd=None):
    count[what] += 1
    if what == kind and count[what] == int(at):
        if fd is not None:
            os.write(fd, b"half")
        open(os.environ["KILL_MARKER"], "w").close()
        time.sleep(600)

temporary, put = errors._temporary_file, errors._put_in_place

def temporary_file(path):
    fd, tmp = temporary(path)
    if path.name in outputs:
        stall("temporary", fd)
    return fd, tmp

def put_in_place(tmp, path, new=False):
    put(tmp, path, new)
    if path.name in outputs:
        stall("placed")

errors._temporary_file, errors._put_in_place = temporary_file, put_in_place
from crane_lib.cli import main
sys.exit(main(sys.argv[1:]))
"""

EXPORT = ["export", "model.csv", "--urdf", "m.urdf", "--mjcf", "m.xml", "--standard", "m.csv"]
COMMANDS = {  # argv, outputs
    "record": (["record", "SHORT.txt", "--out", "r.npz"], ["r.npz"]),
    "export": (EXPORT, ["m.urdf", "m.xml", "m.csv"]),
    "accept": (
        ["accept", "log.npz", "--trajectory", "AP01.txt", "--refine", "none", "--out", "a.csv"],
        ["a.csv"],
    ),
}
# the stall points and delays: any seed must pass (KILL_SEED=N picks another)
SEED = int(os.environ.get("KILL_SEED", "20261204"))


def _verify(path) -> None:
    """A complete output reads back: the log, the model files, the URDF and MJCF."""
    if path.suffix == ".npz":
        assert raw_log.read_raw_log(path).n_samples > 0
    elif path.suffix == ".csv":
        assert len(load_parameters(path).names) >= 39
    else:
        root = ElementTree.parse(path).getroot()
        assert root.tag == ("robot" if path.suffix == ".urdf" else "mujoco")
        if path.suffix == ".xml":
            try:
                import mujoco
            except ImportError:
                return
            assert mujoco.MjModel.from_xml_path(str(path)).nbody > 7


def _start(name, argv, outputs, folder, at):
    environment = dict(
        os.environ,
        PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        KILL_OUTPUTS=",".join(outputs),
        KILL_AT=at,
        KILL_MARKER=str(folder / f"{name}.stalled"),
    )
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *argv],
        cwd=folder,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_when_stalled(name, run, marker, rng) -> None:
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert run.poll() is None, f"{name} ended: {run.communicate()[1]}"
        assert time.monotonic() < deadline, f"{name} never reached its stall point"
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.02))
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert run.returncode == -signal.SIGKILL


def test_commands_killed_at_random_points_leave_outputs_absent_or_whole(scratch, capsys):
    """record (the twin), export and accept run side by side, each killed with SIGKILL at a point
    drawn from its writing; every output is then absent or whole, the stale temporaries carry the
    killed process's id, and the next run removes them (one line per output naming them) and
    succeeds. Each command's next run starts as soon as it is killed, beside the others'."""
    rng = random.Random(SEED)
    points = {
        "record": rng.choice(["temporary:1", "placed:1"]),
        "export": rng.choice(["temporary:1", "temporary:2", "temporary:3", "placed:1", "placed:2"]),
        "accept": "temporary:1",  # the longest: its one interesting point
    }
    runs = {
        name: _start(name, argv, outputs, scratch, points[name])
        for name, (argv, outputs) in COMMANDS.items()
    }
    try:
        for name, (argv, outputs) in COMMANDS.items():
            killed = runs[name].pid
            _kill_when_stalled(name, runs[name], scratch / f"{name}.stalled", rng)
            for output in outputs:
                if (scratch / output).exists():
                    _verify(scratch / output)
            stale = [p.name for p in scratch.iterdir() if p.name.endswith(".tmp")]
            mine = sorted(n for n in stale if any(n.startswith(f".{o}.{killed}.") for o in outputs))
            kind, at = points[name].split(":")
            expected = int(at) if kind == "temporary" else len(outputs) - int(at)
            assert len(mine) == expected, (name, points[name], stale)
            capsys.readouterr()
            status = cli.main([*argv, "--force"])
            err = capsys.readouterr().err
            assert status in ((0, 1) if name == "accept" else (0,)), err
            if name == "export" and kind == "placed":  # killed between renames: completed
                assert f"completed the writing of {scratch / 'm.urdf'}" in err, err
                assert f"process {killed} had put {at} of 3 in place" in err, err
                mine = []
            # one line per output that had some, naming them and the killed process
            removed = [line for line in err.splitlines() if "removed " in line]
            assert all(line.startswith(f"crane-id {name}: removed ") for line in removed), err
            assert len(removed) == len({n.split(f".{killed}.")[0] for n in mine}), err
            assert all(f"left by ended process {killed}" in line for line in removed), err
            assert all(any(n in line for line in removed) for n in mine), (mine, err)
            for output in outputs:
                _verify(scratch / output)
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
                run.wait()
    assert not [p.name for p in scratch.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("at", [1, 2])
def test_export_killed_between_its_renames_is_completed_by_the_next_run(scratch, capsys, at):
    """`export` over three old files, killed with SIGKILL after its `at`-th rename: a mix of new
    and old files and the journal; the next export (even one refused for the existing files), or
    any writer into the folder (`remove_stale_temporaries`), first completes the renames, so
    every file is the killed run's new one."""
    outputs = ["m.urdf", "m.xml", "m.csv"]
    for output in outputs:
        (scratch / output).write_text("old\n")
    run = _start("export", [*EXPORT, "--force"], outputs, scratch, f"placed:{at}")
    try:
        _kill_when_stalled("export", run, scratch / "export.stalled", random.Random(SEED))
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    old = [o for o in outputs if (scratch / o).read_text() == "old\n"]
    assert len(old) == 3 - at, old  # the kill left a mix
    assert (scratch / f".crane-commit.{run.pid}.json").exists()
    capsys.readouterr()
    if at == 1:  # the next export, without --force: completes, then refuses the existing files
        assert cli.main(EXPORT) == 2
    else:  # any next writer into the folder
        errors.remove_stale_temporaries(scratch / "m.csv")
    err = capsys.readouterr().err
    assert f"ended process {run.pid} had put {at} of 3 in place" in err, err
    for output in outputs:
        _verify(scratch / output)
    assert not [p.name for p in scratch.iterdir() if p.name.startswith(".")]


def test_a_journal_not_wholly_written_removes_its_temporaries(tmp_path):
    """A writer killed while writing its journals (before any rename) left a half journal: the
    next run removes the temporaries and changes no target; a whole one is completed."""
    pid = _ended_pid()
    for half in (True, False):
        pairs = []
        for name in ("a.txt", "b.txt"):
            (tmp_path / name).write_text("old")
            tmp = tmp_path / f".{name}.{pid}.x1.tmp"
            tmp.write_text("new")
            pairs.append([str(tmp), str(tmp_path / name)])
        journal = tmp_path / f".crane-commit.{pid}.json"
        text = errors.json.dumps({"renames": pairs, "journals": [str(journal)]})
        journal.write_text(text[:20] if half else text)
        placed = errors.complete_commits(tmp_path)
        errors.remove_stale_temporaries(tmp_path / "a.txt")
        errors.remove_stale_temporaries(tmp_path / "b.txt")
        expected = "old" if half else "new"
        assert [(tmp_path / n).read_text() for n in ("a.txt", "b.txt")] == [expected] * 2
        assert len(placed) == (0 if half else 2)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


# a data step as the pipeline's are written: its key checked, its record written atomically, then
# its key stored; KILL_MARKER makes it stall (to be killed) between the record and the key
STEP = """
import os, sys, time
from pathlib import Path
from crane_book import keys
from crane_lib.records import write_json_record

def step(folder, value):
    store = keys.KeyStore("stand_in", folder)
    record = Path(folder) / "record.json"
    key = keys.record_key(parameters={"value": value})
    reasons = store.stale("record", key, outputs=[record])
    if reasons:
        write_json_record(record, {"value": value})
        if os.environ.get("KILL_MARKER"):
            open(os.environ["KILL_MARKER"], "w").close()
            time.sleep(600)
        store.store("record", key)
    return reasons

if __name__ == "__main__":
    step(sys.argv[1], int(sys.argv[2]))
"""


def test_a_step_killed_between_its_record_and_its_key_is_recomputed(tmp_path):
    """A data step stores its record's key after the record: killed with SIGKILL between the two
    (while recomputing for value 2 over value 1's record and key), the next run with value 1
    finds value 1's key matching but the record rewritten, and recomputes it instead of
    reusing value 2's record as value 1's; an undisturbed rerun reuses it."""
    import importlib.util

    (tmp_path / "stand_in_step.py").write_text(STEP)
    spec = importlib.util.spec_from_file_location("stand_in_step", tmp_path / "stand_in_step.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = tmp_path / "results"
    assert module.step(folder, 1) == ["new"]
    assert module.step(folder, 1) == []
    marker = tmp_path / "step.stalled"
    run = subprocess.Popen(
        [sys.executable, str(tmp_path / "stand_in_step.py"), str(folder), "2"],
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), KILL_MARKER=str(marker)),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _kill_when_stalled("step", run, marker, random.Random(SEED))
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert json.loads((folder / "record.json").read_text()) == {"value": 2}
    reasons = module.step(folder, 1)
    assert reasons and "written after its key" in reasons[0], reasons
    assert json.loads((folder / "record.json").read_text()) == {"value": 1}
    assert module.step(folder, 1) == []


def test_a_killed_arm_recording_keeps_its_rows_under_its_pid_and_the_next_run_clears_them(
    scratch, capsys
):
    """`crane-id record --port` on the emulator, killed with SIGKILL a random moment after its
    "logging:" line: no log, the rows so far in `<LOG>.<pid>.partial.npy` (they read back); the
    next run refuses (one line naming them and `recover_partial`), and with --force removes them
    (one line naming them) and records the whole log."""
    from crane_lib.hardware.emulated import start_posture_config
    from crane_lib.hardware.emulator import EmulatorProcess

    rng = random.Random(SEED)
    with EmulatorProcess(start_posture_config(realtime=True)) as emulator:
        argv = ["record", "SHORT.txt", "--out", "arm.npz", "--port", emulator.port]
        argv += ["--idle", "0.2", "--no-approach", "--timing", "lockstep"]
        with recording_process(argv, cwd=scratch, stderr=subprocess.DEVNULL) as run:
            time.sleep(rng.uniform(0.0, 0.3))
            run.send_signal(signal.SIGKILL)
            run.wait()
        partial = scratch / f"arm.npz.{run.pid}.partial.npy"
        assert not (scratch / "arm.npz").exists()
        assert np.load(partial, mmap_mode="r")[0, raw_log.COLUMN["t"]] >= 0.0
        left = sorted(p.name for p in scratch.iterdir() if f".{run.pid}." in p.name)
        assert f"arm.npz.{run.pid}.partial.json" in left, left
        emulator.reset(start_posture_config(realtime=True))
        capsys.readouterr()
        assert cli.main(argv) == 2  # the only copy of the arm's samples: refused, kept
        refusal = capsys.readouterr().err
        assert len(refusal.splitlines()) == 1 and "recover_partial('arm.npz')" in refusal, refusal
        assert f"arm.npz.{run.pid}.partial.npy" in refusal and "--force" in refusal, refusal
        assert partial.exists()
        assert cli.main([*argv, "--force"]) == 0
    err = capsys.readouterr().err
    removed = [line for line in err.splitlines() if "removed " in line]
    assert len(removed) == 1 and f"left by ended process {run.pid}" in removed[0], err
    assert removed[0].startswith("crane-id record: removed "), err
    assert all(name in removed[0] for name in left), (left, err)
    assert raw_log.read_raw_log(scratch / "arm.npz").metadata["fault"] == "none"
    assert _leftovers(scratch) == []
