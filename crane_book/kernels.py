"""The Jupyter kernels the sweeps and the pages run notebooks in.

Each kernel talks to its client over Unix sockets of its own, not TCP ports: a TCP port is
picked by binding and releasing it, and another process's kernel can bind it in between
("Address already in use ... Kernel died before replying"); parallel sweeps and pages lost
kernels so. A socket path named after a fresh random token cannot be taken by anyone else.

The path also names the process that manages the kernel, and so does the kernel's connection
file beside the sockets. A manager that shuts its kernel down removes both; one that is killed (a
Dask worker that died mid-condition) cannot, so each new manager removes the files of managers
that no longer run.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from pathlib import Path

SOCKET_PREFIX = "crane-kernel-"
# crane-kernel-<manager's pid>-<token>, then -<channel> (a socket) or .json (the connection file)
_KERNEL_FILE = re.compile(re.escape(SOCKET_PREFIX) + r"(\d+)-[0-9a-f]{16}(-\d+|\.json)")


def kernel_manager(kernel_name: str = "python3"):
    """A kernel manager (not yet started) whose kernel listens on sockets of its own, named
    crane-kernel-<this process's id>-<random token>-<channel> in the temporary folder, its
    connection file beside them (the same name, .json)."""
    from jupyter_client.manager import AsyncKernelManager

    folder = Path(tempfile.gettempdir())
    remove_orphaned_kernel_files(folder)
    sockets = folder / f"{SOCKET_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:16]}"
    return AsyncKernelManager(
        kernel_name=kernel_name,
        transport="ipc",
        ip=str(sockets),
        connection_file=f"{sockets}.json",
    )


def remove_orphaned_kernel_files(folder: Path) -> list[Path]:
    """Remove the kernel socket and connection files in `folder` whose managing process no longer
    runs; return the removed paths. (Files that name no process, of the earlier naming, are left
    alone.)"""
    removed = []
    for path in folder.glob(f"{SOCKET_PREFIX}*"):
        named = _KERNEL_FILE.fullmatch(path.name)
        if named is None or _running(int(named.group(1))):
            continue
        try:
            path.unlink()
        except OSError:  # another user's, or removed by another process meanwhile
            continue
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def shut_down(manager) -> None:
    """Stop the manager's kernel if it runs (its socket files go with it)."""
    from jupyter_core.utils import run_sync

    if manager is not None and manager.has_kernel:
        run_sync(manager.shutdown_kernel)(now=True)
