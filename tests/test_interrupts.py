"""A signal that arrives while Python runs inside a callback from native code must still stop the
command: ctypes drops an exception raised in a callback (it can only print it), so
`errors.interruptible` delivers the signal again once the callback has returned."""

from __future__ import annotations

import subprocess
import sys

import pytest

from crane_lib.errors import REDELIVERY_DELAY_S
from crane_lib.paths import REPO_ROOT

# a ctypes callback (as numba's LLVM object cache calls back into Python) receives SIGINT
PROGRAM = r"""
import ctypes, os, signal, sys, time
import crane_lib.errors
from crane_lib.errors import Interrupted, interruptible
crane_lib.errors.REDELIVERY_DELAY_S = {delay_s}

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


# at no delay the signal is delivered again while the hook is still starting its thread: it
# must be owed again, not raised inside the hook (where it would be dropped as well)
@pytest.mark.parametrize("delay_s", [REDELIVERY_DELAY_S, 0.0])
def test_an_interrupt_inside_a_native_callback_is_raised_after_it(delay_s):
    program = PROGRAM.replace("{delay_s}", repr(delay_s))
    run = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.stdout.strip() == "interrupted 2", (run.stdout, run.stderr)
    assert "Exception ignored" not in run.stderr and "Traceback" not in run.stderr, run.stderr
