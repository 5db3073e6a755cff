"""The Jupyter kernels the sweeps and the pages run notebooks in.

Each kernel talks to its client over Unix sockets of its own, not TCP ports: a TCP port is
picked by binding and releasing it, and another process's kernel can bind it in between
("Address already in use ... Kernel died before replying"); parallel sweeps and pages lost
kernels so. A socket path named after a fresh random token cannot be taken by anyone else.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path


def kernel_manager(kernel_name: str = "python3"):
    """A kernel manager (not yet started) whose kernel listens on sockets of its own."""
    from jupyter_client.manager import AsyncKernelManager

    sockets = Path(tempfile.gettempdir()) / f"crane-kernel-{uuid.uuid4().hex[:16]}"
    return AsyncKernelManager(kernel_name=kernel_name, transport="ipc", ip=str(sockets))


def shut_down(manager) -> None:
    """Stop the manager's kernel if it runs (its socket files go with it)."""
    from jupyter_core.utils import run_sync

    if manager is not None and manager.has_kernel:
        run_sync(manager.shutdown_kernel)(now=True)
