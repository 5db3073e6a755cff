"""The notebook kernels' files (crane_book/kernels.py): a kernel whose managing process was
killed leaves its socket and connection files behind; the next manager removes them, and only
them."""

from __future__ import annotations

import os
import subprocess
import sys

from crane_book import kernels


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_the_sockets_of_a_manager_that_no_longer_runs_are_removed_and_no_others(tmp_path):
    dead, alive = _dead_pid(), os.getpid()
    token = "0123456789abcdef"
    orphans = [tmp_path / f"crane-kernel-{dead}-{token}-{channel}" for channel in range(1, 6)]
    orphans.append(tmp_path / f"crane-kernel-{dead}-{token}.json")
    live = [tmp_path / f"crane-kernel-{alive}-{token}-{channel}" for channel in range(1, 6)]
    live.append(tmp_path / f"crane-kernel-{alive}-{token}.json")
    unnamed = [
        tmp_path / f"crane-kernel-{token}-1",  # the earlier naming: no process
        tmp_path / "crane-kernel-0123456789012345-1",  # the same, its token all digits
        tmp_path / f"crane-kernel-{dead}-{token}.json.bak",
        tmp_path / "crane-kernelish-1-2-3",
    ]
    for path in orphans + live + unnamed:
        path.write_text("")
    assert sorted(kernels.remove_orphaned_kernel_files(tmp_path)) == sorted(orphans)
    assert not any(p.exists() for p in orphans)
    assert all(p.exists() for p in live + unnamed)


def test_a_new_manager_names_its_process_and_clears_a_killed_managers_files(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(kernels.tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    dead = _dead_pid()
    orphans = [tmp_path / f"crane-kernel-{dead}-0123456789abcdef{end}" for end in ("-1", ".json")]
    for orphan in orphans:
        orphan.write_text("")
    manager = kernels.kernel_manager()
    assert manager.transport == "ipc"
    assert manager.ip.startswith(str(tmp_path / f"crane-kernel-{os.getpid()}-"))
    assert manager.connection_file == f"{manager.ip}.json"
    assert not any(orphan.exists() for orphan in orphans)
