"""How `crane-id` puts its outputs in place: never on a pseudo-filesystem, never over a file
another run wrote meanwhile (without --force), a signal that comes once an output is in place
does not report it as unwritten, and a reader of stdout that goes away is no bad input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from crane_book import corpus
from crane_lib import cli
from crane_lib.cli import common
from crane_lib.paths import REPO_ROOT


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A folder with the corpus's model, log and command file; the working folder of the test."""
    (tmp_path / "model.csv").write_bytes(corpus.model_bytes())
    (tmp_path / "log.npz").write_bytes(corpus.log_npz())
    (tmp_path / "AP01.txt").write_bytes(corpus.command_file_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


IDENTIFY = ["identify", "log.npz", "--trajectory", "AP01.txt", "--refine", "none", "--out", "m.csv"]


def _command(*argv) -> list[str]:
    return [sys.executable, "-m", "crane_lib.cli", *argv]


def _environment() -> dict:
    """This process's environment with the worktree first on the import path."""
    path = str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=path)


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# ----------------------------------------------------------------------------- pseudo-filesystems


def test_a_mount_of_a_kernel_filesystem_is_refused_wherever_it_is(tmp_path, monkeypatch):
    """Outside /proc, /sys and /dev the mount table decides: a proc mount at any path is refused,
    the deepest mount holding the folder counts, an ordinary one passes."""
    mounted, plain = tmp_path / "kernel view", tmp_path / "disk"
    (mounted / "sub").mkdir(parents=True)
    plain.mkdir()
    table = tmp_path / "mountinfo"
    table.write_text(
        f"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
        f"2 1 0:5 / {str(mounted).replace(' ', chr(92) + '040')} rw - proc proc rw\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(common, "MOUNT_TABLE", table)
    assert common.pseudo_filesystem(mounted / "sub") == "a proc mount"
    assert common.pseudo_filesystem(plain) is None
    assert common.pseudo_filesystem("/proc/self") == "under /proc"
    with pytest.raises(common.InputError, match="pseudo-filesystem"):
        common.output_path(mounted / "sub" / "m.csv")
    assert common.output_path(plain / "m.csv") == plain / "m.csv"


# ----------------------------------------------------------------------------- two runs, one name


def test_a_file_that_appears_while_identify_runs_is_not_replaced(scratch, monkeypatch, capsys):
    """Another run writes m.csv while this one computes: this one refuses (exit 2, one line) and
    leaves the other's file as it is; with --force it replaces it."""
    from crane_lib.cli import identify

    original = identify.identify_recording

    def racing(*args, **kwargs):
        (scratch / "m.csv").write_text("the other run's model\n", encoding="utf-8")
        return original(*args, **kwargs)

    monkeypatch.setattr(identify, "identify_recording", racing)
    assert cli.main(IDENTIFY) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "m.csv: appeared while this command ran" in err, err
    assert (scratch / "m.csv").read_text(encoding="utf-8") == "the other run's model\n"
    assert _leftovers(scratch) == []
    (scratch / "m.csv").unlink()
    assert cli.main([*IDENTIFY, "--force"]) == 0
    assert (scratch / "m.csv").read_text(encoding="utf-8").startswith("#")


def test_a_bundle_that_appears_while_preprocess_runs_leaves_the_folder_as_before(
    scratch, monkeypatch, capsys
):
    """All bundles or none: one appeared meanwhile, so the new ones this run had put in place are
    taken back and the other run's bundle stays."""
    from crane_lib.cli import preprocess

    original = preprocess.preprocessing.preprocess_all

    def racing(*args, **kwargs):
        (scratch / "b").mkdir()
        (scratch / "b" / "bundle_020ms.npz").write_bytes(b"the other run's bundle")
        return original(*args, **kwargs)

    monkeypatch.setattr(preprocess.preprocessing, "preprocess_all", racing)
    assert cli.main(["preprocess", "log.npz", "--out", "b", "--intervals", "10", "20"]) == 2
    assert "appeared while this command ran" in capsys.readouterr().err
    assert sorted(p.name for p in (scratch / "b").iterdir()) == ["bundle_020ms.npz"]
    assert (scratch / "b" / "bundle_020ms.npz").read_bytes() == b"the other run's bundle"


def test_two_identify_runs_to_one_new_name_write_it_once(scratch):
    """Started together: one writes m.csv (exit 0); the other refuses with one line (exit 2),
    whether it finds the name up front or at the end."""
    runs = [
        subprocess.Popen(
            _command(*IDENTIFY),
            cwd=scratch,
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    done = [(run.returncode, out, err) for run, (out, err) in zip(runs, outputs)]
    assert sorted(status for status, _, _ in done) == [0, 2], done
    refused = next(err for status, _, err in done if status == 2)
    assert len(refused.strip().splitlines()) == 1 and "m.csv" in refused, refused
    assert "Traceback" not in refused and _leftovers(scratch) == []


# ----------------------------------------------------------------------------- a signal at the end


def test_a_signal_once_the_output_is_in_place_lets_the_command_finish(scratch, monkeypatch, capsys):
    """SIGINT right as the model file is put in place: exit 0 with the file complete and a line
    saying the signal came after it (not 130, 'no output was written', beside a written file)."""
    real_replace, real_link = os.replace, os.link

    def then_interrupt(real):
        def call(source, destination, *args, **kwargs):
            real(source, destination, *args, **kwargs)
            if str(destination).endswith("arm.urdf"):  # not a cache file written on the way
                os.kill(os.getpid(), signal.SIGINT)

        return call

    monkeypatch.setattr(os, "replace", then_interrupt(real_replace))
    monkeypatch.setattr(os, "link", then_interrupt(real_link))
    argv = ["export", "model.csv", "--urdf", "arm.urdf", "--mjcf", "arm.xml"]
    status = cli.main(argv)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "SIGINT came after arm.urdf" in captured.err
    assert "wrote arm.urdf, arm.xml" in captured.out
    assert (scratch / "arm.urdf").read_text(encoding="utf-8").rstrip().endswith("</robot>")
    assert (scratch / "arm.xml").read_text(encoding="utf-8").rstrip().endswith("</mujoco>")
    assert _leftovers(scratch) == []


def test_a_signal_after_a_cache_file_was_written_still_stops_the_command(
    scratch, monkeypatch, capsys
):
    """A file written on the way (a kernel cache) is no output: SIGINT after it still ends the
    command with 130 and nothing written."""
    from crane_lib.errors import atomic_write
    from crane_lib.export import consistent

    original = consistent.reconstruct

    def caching(*args, **kwargs):
        with atomic_write(scratch / "cache.txt") as handle:
            handle.write("a cache\n")
        os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(consistent, "reconstruct", caching)
    assert cli.main(["export", "model.csv", "--urdf", "arm.urdf"]) == 130
    assert "interrupted (SIGINT); no output was written" in capsys.readouterr().err
    assert not (scratch / "arm.urdf").exists() and _leftovers(scratch) == []


# ----------------------------------------------------------------------------- stdout's reader goes


@pytest.mark.parametrize("json", [False, True], ids=["report", "json"])
def test_audit_into_a_closed_pipe_stops_quietly(scratch, json):
    """`crane-id audit MODEL | head -1` where head has gone: exit 141 (as a shell reports `cat`
    killed by SIGPIPE), never 2, no traceback, nothing on stderr."""
    argv = _command("audit", "model.csv", *(["--json"] if json else []))
    run = subprocess.Popen(
        argv,
        cwd=scratch,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run.stdout.close()  # the only reader is gone before the command writes anything
    err = run.stderr.read()
    run.stderr.close()
    assert run.wait(timeout=600) == common.EXIT_BROKEN_PIPE, err
    assert err == "", err
