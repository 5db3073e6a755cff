"""The two timings of the arm's loop: the paper's real time, and lockstep for tests and demos.

REALTIME (the default, and the only timing a real arm accepts): the recorder wakes on a 1 ms
grid of the host clock, stamps every row with the host time of its encoder read, and stops the
arm when no status packet comes within 20 ms or two encoder reads are more than 20 ms apart
(the log's own largest accepted gap, `logs.raw_log.MAX_STAMP_GAP_S`). The emulator advances the
twin's plant to the wall clock. A host that stalls longer than 20 ms stops such a recording,
exactly as it must on the arm; `benchmarks/bench_hardware.py` measures this loop.

LOCKSTEP (tests and the book's demonstration, emulator only): time on the device side is driven
by the bus instead of the wall clock. Every sync read starts the next 1 ms control period (the
emulator's clock jumps to the next whole millisecond and the plant is integrated up to it);
between two sync reads the clock advances by the time each packet would take on a 3 Mbit/s bus,
so a command written after the read acts from the moment it would have arrived there. The
recorder runs its cycles back to back without sleeping, stamps the log on the same 1 ms grid and
gives the controller the nominal period, so the recording is the one a host that never stalls
would make: the same controller, sequencer, packets, checks, faults and log as in real time, but
deterministic however loaded the host is. The wall-clock limits are relaxed (a status packet may
take 0.5 s, two reads may be 5 s apart) and stop only a recording whose other side has hung.
What lockstep cannot show is the loop's timing; its cycle stamps (`<log>.cycles.npz`) still
record the host's times, which then say how fast the host ran the cycles, not how punctual.

A real arm does not wait for the host: the recorder refuses LOCKSTEP on anything but a
pseudo-terminal whose servos' Realtime Tick stands still between cycles
(`bus.ServoBus.check_clock`), and refuses REALTIME on a device whose tick does.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from crane_lib.constants import CONTROL_PERIOD_S

# The SO-101's control period over its Feetech STS bus (sts_recorder; its emulator's lockstep
# period): at 1 Mbit/s one cycle's packets alone take 1.66 ms, so 1 ms cannot be kept
STS_PERIOD_S = 4e-3
LOCKSTEP_BUS_BAUD = (
    3_000_000  # the CRANE-X7's bus rate: the lockstep clock's time per byte (10 bits)
)


@dataclass(frozen=True)
class Timing:
    name: str
    lockstep: bool  # device time driven by the bus; log stamps on the nominal grid; no sleeping
    reply_timeout_ms: (
        float  # a status packet later than this is a timeout (a fault once torque is on)
    )
    watchdog_ms: float  # two encoder reads further apart than this (host clock) stop the arm
    settle_ms: float  # after a timeout the port is drained until it has been quiet this long
    period_s: float = CONTROL_PERIOD_S

    def describe(self) -> str:
        """The timing mode in words."""
        if self.lockstep:
            return (
                "lockstep (emulator only, tests and demonstrations): device time driven by the "
                "bus, "
                f"{self.period_s * 1e3:g} ms per cycle on the log's grid whatever the host's "
                "speed; "
                f"reply timeout {self.reply_timeout_ms:g} ms, watchdog {self.watchdog_ms:g} ms of "
                "host time"
            )
        return (
            f"realtime: {self.period_s * 1e3:g} ms cycles on the host clock, reply timeout "
            f"{self.reply_timeout_ms:g} ms, "
            f"watchdog {self.watchdog_ms:g} ms"
        )


# After a timeout on a real bus nothing can still be on its way after 2 ms: a servo answers within
# its Return Delay Time (0 after configuration, at most 508 us) and an FTDI adapter at the 1 ms
# latency timer forwards bytes within 1 ms.
REALTIME = Timing(
    "realtime", lockstep=False, reply_timeout_ms=20.0, watchdog_ms=20.0, settle_ms=2.0
)
LOCKSTEP = Timing(
    "lockstep", lockstep=True, reply_timeout_ms=500.0, watchdog_ms=5000.0, settle_ms=20.0
)
TIMINGS = {timing.name: timing for timing in (REALTIME, LOCKSTEP)}


def next_cycle(t0: float, grid: int, period: float, clock=time.perf_counter) -> int:
    """Sleep until the next point t0 + grid x period of the cycle grid and return the grid index
    after it. After a late cycle the loop runs at once, but a cycle later than a whole period
    skips the grid points it missed instead of catching up in a burst."""
    deadline = t0 + grid * period
    now = clock()
    if now > deadline + period:
        grid = math.ceil((now - t0) / period)
        deadline = t0 + grid * period
    if deadline > now:
        time.sleep(deadline - now)
    return grid + 1
