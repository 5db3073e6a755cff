"""A full disk: every command that writes ends in one line naming its output file, exit status 2,
and leaves nothing half-written (the output absent, no temporary or partial file beside it).

Each test mounts a small tmpfs (root only: CI runs as root; elsewhere the tests skip with the
reason), writes the inputs outside it and points the output into it, filled so that the output
cannot fit. The report "Your own arm" is refused before its computation (a probe of the model
file's size), not after it.
"""

from __future__ import annotations

import errno
import gc
import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from crane_book import corpus, numbers
from crane_lib import cli

TMPFS_SIZE = "256k"


@contextmanager
def _tmpfs(folder: Path, size: str = TMPFS_SIZE):
    """A tmpfs of `size` mounted on `folder`, unmounted afterwards (skip when not allowed)."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def disk(tmp_path):
    """An empty small tmpfs."""
    with _tmpfs(tmp_path / "disk") as folder:
        yield folder


def fill(folder: Path, leave: int = 0) -> None:
    """Fill the file system of `folder` until at most `leave` bytes are free (a file `filler`)."""
    with open(folder / "filler", "wb") as handle:
        block = b"\0" * 4096
        try:
            while os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize > leave:
                handle.write(block)
                handle.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC


def left_over(folder: Path) -> list[str]:
    """What lies on the disk besides the filler."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.name != "filler")


def refused(run, capsys, output: Path) -> str:
    """Run `run()` (a command's main), and check: exit 2, one line on stderr naming `output` and
    the full disk as the cause."""
    status = run()
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert output.name in lines[0], lines[0]
    assert "ENOSPC" in lines[0] or "no room" in lines[0], lines[0]
    return lines[0]


def test_record_on_a_full_disk(tmp_path, disk, capsys):
    """The twin's log of AP01 (3 MB) on a 256 KiB disk: refused, no log and no partial file."""
    (tmp_path / "AP01.txt").write_bytes(corpus.command_file_bytes())
    out = disk / "x.npz"
    refused(
        lambda: cli.main(["record", str(tmp_path / "AP01.txt"), "--out", str(out)]), capsys, out
    )
    assert left_over(disk) == []


def test_arm_recording_stopped_by_a_full_disk_keeps_its_samples(tmp_path):
    """`record --port` over the emulator on a 64 MiB disk that the test fills once the arm moves:
    the recorder (its rows file allocated in full at the start, so no memory-mapped write can
    fail) finds no room for the log, stops with torque off on every servo, exit 2 and one line
    naming the log, ENOSPC and the partial file keeping the samples, which `recover_partial`
    turns into a log once there is room."""

    import numpy as np

    from crane_lib.excitation.commands import write_command_file
    from crane_lib.hardware.emulated import start_posture_config
    from crane_lib.hardware.emulator import EmulatorProcess
    from crane_lib.hardware.recorder import recover_partial
    from crane_lib.logs import raw_log

    from .hardware_cases import recording_process, short_command

    write_command_file(tmp_path / "SHORT.txt", short_command())
    with (
        _tmpfs(tmp_path / "disk", "64m") as disk,
        EmulatorProcess(start_posture_config(realtime=True)) as emulator,
    ):
        out = disk / "arm.npz"
        argv = ["record", str(tmp_path / "SHORT.txt"), "--out", str(out), "--port", emulator.port]
        argv += ["--idle", "1.0", "--no-approach", "--timing", "lockstep"]
        with recording_process(argv) as run:
            fill(disk)
            _, err = run.communicate(timeout=60)
        lines = err.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1, err
        assert lines[0].startswith(f"crane-id record: {out}: ") and "(ENOSPC)" in lines[0], err
        partial = disk / f"arm.npz.{run.pid}.partial.npy"
        assert f"kept in {partial} (recover_partial" in lines[0], err
        servos = emulator.snapshot()["servos"]
        assert all(servo["torque_enable"] == 0 for servo in servos.values()), servos
        samples = int(lines[0].split("torque off, the ")[1].split(" samples")[0])
        assert samples > 0 and not out.exists()
        (disk / "filler").unlink()
        log = raw_log.read_raw_log(recover_partial(out))
        assert log.n_samples == samples
        assert np.all(np.diff(log.t) > 0)
        assert left_over(disk) == ["arm.npz"]


def test_an_arm_recordings_rows_that_cannot_grow_stay_whole(disk):
    """The rows file of an arm recording is allocated in full (a memory-mapped write never meets
    a full disk); when doubling it finds no room, an OSError names the growth file, which is
    removed, and the rows logged so far stay in the rows file."""
    import numpy as np

    from crane_lib.hardware.recorder import LoggedRows

    rows = LoggedRows(disk / "r.npy", 1000, 10)  # 80 kB, allocated: the disk's free space drops
    assert os.statvfs(disk).f_bfree * os.statvfs(disk).f_frsize < 256 * 1024 - 80_000
    fill(disk)
    for i in range(1000):
        rows.next_row()[:] = i
    with pytest.raises(OSError) as raised:
        rows.next_row()
    assert raised.value.errno == errno.ENOSPC and raised.value.filename.endswith("r.grow.npy")
    assert rows.n == 1000 and left_over(disk) == ["r.npy"]
    assert np.array_equal(np.load(disk / "r.npy")[:, 0], np.arange(1000.0))
    del rows, raised  # the memory map holds the file open: the disk could not be unmounted
    gc.collect()


def test_preprocess_on_a_full_disk(tmp_path, disk, capsys):
    """Three bundles of a 16 s log do not fit: refused, no bundle folder (all or none)."""
    (tmp_path / "log.npz").write_bytes(corpus.log_npz())
    out = disk / "b"
    argv = ["preprocess", str(tmp_path / "log.npz"), "--out", str(out), "--intervals", "10", "20"]
    refused(lambda: cli.main(argv), capsys, out)
    assert left_over(disk) == []


def test_accept_on_a_full_disk(tmp_path, disk, capsys):
    """The model file does not fit: refused before the computation, no model file."""
    (tmp_path / "log.npz").write_bytes(corpus.log_npz())
    (tmp_path / "AP01.txt").write_bytes(corpus.command_file_bytes())
    fill(disk)
    out = disk / "m.csv"
    argv = ["accept", str(tmp_path / "log.npz"), "--trajectory", str(tmp_path / "AP01.txt")]
    started = time.perf_counter()
    line = refused(lambda: cli.main([*argv, "--out", str(out)]), capsys, out)
    assert "no room for the model file" in line  # the probe's, before the minute of computation
    assert time.perf_counter() - started < 20
    assert left_over(disk) == []


def test_export_on_a_full_disk(tmp_path, disk, capsys):
    """URDF and MJCF of a consistent model on a full disk: refused, neither file written."""
    (tmp_path / "model.csv").write_bytes(corpus.model_bytes())
    fill(disk)
    urdf, mjcf = disk / "arm.urdf", disk / "arm.xml"
    argv = ["export", str(tmp_path / "model.csv"), "--urdf", str(urdf), "--mjcf", str(mjcf)]
    refused(lambda: cli.main(argv), capsys, urdf)  # the first file written
    assert left_over(disk) == []


def test_numbers_write_on_a_full_disk(tmp_path, disk, capsys):
    """The printed-numbers manifest on a full disk: refused naming it, nothing written."""
    html = tmp_path / "html"
    (html / "chapters").mkdir(parents=True)
    (html / "index.html").write_text("<html></html>", encoding="utf-8")
    (html / "chapters" / "02_excitation.html").write_text(
        "<html><body><table><caption>Counts</caption><thead><tr><th>quantity</th>"
        "<th>this book</th></tr></thead><tbody><tr><td>files</td><td>21 of 40</td></tr>"
        "</tbody></table></body></html>",
        encoding="utf-8",
    )
    fill(disk)
    manifest = disk / "numbers.csv"
    argv = ["write", "--html", str(html), "--manifest", str(manifest)]
    refused(lambda: numbers.main(argv), capsys, manifest)
    assert left_over(disk) == []


def test_the_report_on_a_full_disk_is_refused_before_its_computation(tmp_path, disk):
    """papermill with `out` on a full disk: one error line naming `out` within seconds (the
    computation took 37 s before the write failed), and no model file."""
    fill(disk)
    out = disk / "m.csv"
    case = corpus.NotebookCase(
        "report-out-on-full-disk",
        "output path",
        (("log", corpus.LOG), ("trajectory", corpus.CMD), ("refine", "none"), ("out", str(out))),
        "has no room for the model file",
        (
            corpus._w(corpus.LOG, lambda: corpus.log_npz()),
            corpus._w(corpus.CMD, lambda: corpus.command_file_bytes()),
        ),
    )
    started = time.perf_counter()
    outcome = corpus.run_notebook_case(case, tmp_path / "scratch", tmp_path / "report.ipynb")
    assert corpus.notebook_problems(case, outcome) == [], outcome.stderr[-2000:]
    assert "m.csv" in outcome.stdout
    assert time.perf_counter() - started < 30
    assert left_over(disk) == []
