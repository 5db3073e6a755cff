"""A signal that arrives while Python runs inside a callback from native code must still stop the
command: ctypes drops an exception raised in a callback (it can only print it), so
`errors.interruptible` delivers the signal again once the callback has returned."""

from __future__ import annotations

import subprocess
import sys

from crane_lib.paths import REPO_ROOT

# a ctypes callback (as numba's LLVM object cache calls back into Python) receives SIGINT
PROGRAM = r"""
import ctypes, os, signal, sys, time
from crane_lib.errors import Interrupted, interruptible

libc = ctypes.CDLL(None)
COMPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
sent = []

def compare(a, b):
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGINT)  # arrives inside the callback
        for _ in range(1000):  # the handler runs here, inside the callback
            pass
    return 0

items = (ctypes.c_int * 4)(4, 3, 2, 1)
try:
    with interruptible():
        libc.qsort(items, 4, ctypes.sizeof(ctypes.c_int), COMPARE(compare))
        import time
        until = time.monotonic() + 5.0
        while time.monotonic() < until:  # back in Python: the signal is delivered again here
            pass
        print("not interrupted")
except Interrupted as stop:
    print(f"interrupted {stop.signum}")
"""


def test_an_interrupt_inside_a_native_callback_is_raised_after_it():
    run = subprocess.run(
        [sys.executable, "-c", PROGRAM], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.stdout.strip() == "interrupted 2", (run.stdout, run.stderr)
    assert "Exception ignored" not in run.stderr and "Traceback" not in run.stderr, run.stderr
