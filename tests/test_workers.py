"""crane_book.workers: a pool's workers end themselves when the process that started them is
killed outright, instead of running their task to its end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crane_book import workers
from crane_lib.paths import REPO_ROOT

# a parent that starts a pool, gives its one worker an hour's task, prints the worker's pid and
# waits; the test kills it
PARENT = """
import os, sys, time
from crane_book.workers import worker_pool
pool = worker_pool(1, start_method=sys.argv[1])
worker = pool.submit(os.getpid).result()
pool.submit(time.sleep, 3600)
print(worker, flush=True)
time.sleep(3600)
"""


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has ended)."""
    status = Path(f"/proc/{pid}/status")
    try:
        state = next(line for line in status.read_text().splitlines() if line.startswith("State"))
    except (FileNotFoundError, ProcessLookupError):
        return False
    return " Z " not in f" {state.split(':', 1)[1].strip()} "


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("start_method", "kill"), [("spawn", signal.SIGKILL), ("fork", signal.SIGTERM)]
)
def test_a_worker_ends_when_its_parent_is_killed(start_method, kill):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, start_method],
        cwd=REPO_ROOT,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    worker = None
    try:
        worker = int(parent.stdout.readline())
        assert _running(worker)
        parent.send_signal(kill)
        parent.wait(timeout=60)
        deadline = time.monotonic() + 20 * workers.PARENT_POLL_S + 10
        while _running(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(worker), f"worker {worker} still runs after its parent was killed"
    finally:
        if parent.poll() is None:
            parent.kill()
        if worker is not None and _running(worker):
            os.kill(worker, signal.SIGKILL)
    assert f"worker {worker}: the process that started it ({parent.pid}) is gone" in (
        parent.stderr.read()
    )


def test_a_pool_works_while_its_parent_lives():
    """The watch does not end a worker whose parent is alive: a pool's tasks complete."""
    with workers.worker_pool(2) as pool:
        assert sorted(pool.map(abs, [-3, -1, 2])) == [1, 2, 3]
