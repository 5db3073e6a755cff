"""Process pools whose workers do not outlive the process that started them.

A `ProcessPoolExecutor` worker runs its task to the end when its parent is killed outright
(SIGKILL, or SIGTERM where no handler is installed): it notices only when it next asks for
work. A CLIE condition or a book page can take tens of minutes, so a killed `make book` or
benchmark would leave its workers computing beside the next run. Each worker here watches its
parent and ends itself within `PARENT_POLL_S` of the parent's death.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PARENT_POLL_S = 0.5  # how often a worker checks that its parent is still there
ORPHANED_EXIT_STATUS = 143  # as if it had received the SIGTERM its parent did: 128 + 15


def worker_pool(jobs: int, start_method: str | None = "spawn") -> ProcessPoolExecutor:
    """A pool of `jobs` processes (started by `start_method`; None: the platform's default)
    whose workers end themselves when this process is gone."""
    context = None if start_method is None else multiprocessing.get_context(start_method)
    return ProcessPoolExecutor(
        max(1, jobs), mp_context=context, initializer=end_with_parent, initargs=(os.getpid(),)
    )


def end_with_parent(parent_pid: int) -> None:
    """In a worker: a daemon thread that ends this process once `parent_pid` is no longer its
    parent (the parent died and the worker was handed to another process)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        print(
            f"worker {os.getpid()}: the process that started it ({parent_pid}) is gone; "
            "stopping its task",
            file=sys.stderr,
            flush=True,
        )
        os._exit(ORPHANED_EXIT_STATUS)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()
