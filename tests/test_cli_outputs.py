"""How `crane-id` puts its outputs in place: never on a pseudo-filesystem."""

from __future__ import annotations

import os
import sys

import pytest

from crane_book import corpus
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
    table.write_text(f"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                     f"2 1 0:5 / {str(mounted).replace(' ', chr(92) + '040')} rw - proc proc rw\n",
                     encoding="utf-8")
    monkeypatch.setattr(common, "MOUNT_TABLE", table)
    assert common.pseudo_filesystem(mounted / "sub") == "a proc mount"
    assert common.pseudo_filesystem(plain) is None
    assert common.pseudo_filesystem("/proc/self") == "under /proc"
    with pytest.raises(common.InputError, match="pseudo-filesystem"):
        common.output_path(mounted / "sub" / "m.csv")
    assert common.output_path(plain / "m.csv") == plain / "m.csv"
