"""Benchmarks of the arm's recorder against the Protocol 2.0 emulator.

1. The 1 ms loop: a command file recorded through the emulator in real time (the recorder,
   dynamixel-sdk, a pseudo-terminal, the emulated servos and the twin's plant). Target: median
   cycle <= 1.2 ms; the 99th percentile and the late cycles are reported. References measured
   in the same run: the bare bus round trip (one sync read + one sync write through the same
   emulator and dynamixel-sdk, no controller, no log) and the wake-up latency of a 1 ms sleep
   loop on this host (what the scheduler alone costs). Then the same recording with the
   emulator adding each packet's time on a 3 Mbit/s bus, which a real arm cannot avoid.
2. Recording -> accepted model through the notebook (chapters/your_arm.py under papermill,
   refine "fast", audit seeds 1-5, rescue if needed). Target: at most 5 min on 2 cores for AG02.

    python -m benchmarks.bench_hardware [--trajectory AG02] [--no-notebook] [--smoke]

--smoke: the smallest case (a 2 s move through the emulator, no notebook), for the tests.
The host's load average is printed with every timing: the emulator and the recorder run in
real time, and a loaded host shows in their cycle times.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np


def _load() -> str:
    try:
        return "load average " + " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "load average unknown"


def _percentiles(values_ms: np.ndarray) -> str:
    if len(values_ms) == 0:
        return "no complete cycle"
    return (
        f"median {np.median(values_ms):.3f} ms, 99th percentile {np.percentile(values_ms, 99):.3f} "
        "ms, "
        f"max {values_ms.max():.2f} ms"
    )


@contextmanager
def scheduled(realtime: bool = True):
    """The scheduling class the recorder asks for (SCHED_FIFO where allowed), restored
    afterwards."""
    from crane_lib.hardware.recorder import current_scheduling, request_realtime, restore_scheduling

    previous = current_scheduling()
    got = request_realtime(realtime)
    try:
        yield got
    finally:
        restore_scheduling(previous)


def sleep_loop_latency(cycles: int = 2000) -> np.ndarray:
    """Lateness (ms) of a 1 ms sleep loop on this host."""
    late = np.empty(cycles)
    start = time.perf_counter()
    for k in range(cycles):
        deadline = start + (k + 1) * 1e-3
        now = time.perf_counter()
        if deadline > now:
            time.sleep(deadline - now)
        late[k] = time.perf_counter() - deadline
    return late * 1e3


def bare_round_trip(emulator, cycles: int = 2000) -> np.ndarray:
    """One sync read + one sync write per cycle through the emulator, back to back (ms)."""
    from crane_lib.hardware.bus import CycleRead, ServoBus
    from crane_lib.model.controller import CURRENT_LIMIT_UNITS

    emulator.reset(_config())
    servos = ServoBus(emulator.port)
    servos.open()
    try:
        servos.discover()
        servos.configure(CURRENT_LIMIT_UNITS)
        read = CycleRead(*(np.zeros(8, dtype=np.int64) for _ in range(4)))
        zeros = np.zeros(8)
        times = np.empty(cycles)
        for k in range(cycles):
            start = time.perf_counter()
            servos.read_cycle(read)
            servos.write_goal_current(zeros)
            times[k] = time.perf_counter() - start
    finally:
        servos.close()
    return times * 1e3


def _config(**overrides):
    """The emulator in real time (not the tests' lockstep): this benchmark measures the 1 ms
    loop."""
    from crane_lib.hardware.emulated import start_posture_config

    return start_posture_config(realtime=True, lockstep=False, **overrides)


def bench_loop(
    command,
    folder: Path,
    emulator,
    wire_baud: float = 0.0,
    label: str = "",
    idle_s: float = 0.5,
    attempts: int = 3,
) -> dict:
    """Record `command` on the emulator in real time and return the loop's cycle statistics."""
    from crane_lib.hardware.emulated import record_on_emulator
    from crane_lib.hardware.recorder import RecorderSettings

    out = folder / f"{getattr(command, 'stem', 'command')}{'_wire' if wire_baud else ''}.npz"
    settings = RecorderSettings(
        lead_s=idle_s, tail_s=idle_s, preroll_s=idle_s, realtime=True
    )  # timing: REALTIME, the arm's
    result = record_on_emulator(
        command, out, _config(wire_baud=wire_baud), settings, attempts=attempts, emulator=emulator
    )
    cycle_ms = result.recording.cycle_times_ms()
    meta = result.recording.metadata
    status = "complete" if result.complete else f"stopped: {result.attempts[-1]}"
    print(
        f"recorder loop{label}: {len(cycle_ms) + 1} cycles ({status}, {len(result.attempts)} "
        f"attempt(s)): {_percentiles(cycle_ms)}; "
        f"{meta.get('cycles_late', '?')} late (> 1.5 ms), {meta.get('cycles_missed', '?')} grid "
        "points missed; "
        f"{meta.get('scheduling', '?')}; {_load()}"
    )
    return {"result": result, "cycle_ms": cycle_ms, "path": out if result.complete else None}


def bench_notebook(log: Path, trajectory: str, folder: Path) -> float:
    """Seconds to execute the "Your own arm" report on one recording with papermill."""
    import jupytext
    import papermill

    from crane_lib.paths import REPO_ROOT

    notebook = jupytext.read(REPO_ROOT / "chapters" / "your_arm.py")
    notebook.metadata.setdefault(
        "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"}
    )
    source = folder / "your_arm.ipynb"
    jupytext.write(notebook, source, fmt="ipynb")
    start = time.perf_counter()
    papermill.execute_notebook(
        str(source),
        str(folder / "report.ipynb"),
        kernel_name="python3",
        progress_bar=False,
        parameters={
            "log": str(log),
            "trajectory": trajectory,
            "ts": 0.04,
            "refine": "fast",
            "out": str(folder / "model.csv"),
        },
        cwd=str(REPO_ROOT / "chapters"),
    )
    elapsed = time.perf_counter() - start
    header = [
        line
        for line in (folder / "model.csv").read_text().splitlines()
        if line.startswith("#") and "accepted" in line
    ]
    print(
        f"recording -> model through the notebook ({trajectory}, refine fast, seeds 1-5): "
        f"{elapsed:6.1f} s "
        f"(target <= 300 s); {header[0] if header else ''}; {_load()}"
    )
    return elapsed


def main(argv=None) -> int:
    """Time the recorder's loop on the emulator (and the report) and print the ratios."""
    from benchmarks._smoke import add_smoke_argument

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trajectory", default="AG02")
    parser.add_argument("--no-notebook", action="store_true")
    add_smoke_argument(parser, "smallest case: a 2 s move, no notebook (seconds)")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    from crane_lib.excitation.commands import CommandFile
    from crane_lib.hardware.emulator import EmulatorProcess
    from crane_lib.paths import TRAJECTORY_DIR

    if args.smoke:
        command = CommandFile("TO_ZERO", np.zeros((2, 8)), np.array([60.0, 20.0]))
    else:
        command = TRAJECTORY_DIR / f"{args.trajectory}.txt"
    with tempfile.TemporaryDirectory() as folder, EmulatorProcess(_config()) as emulator:
        folder = Path(folder)
        with scheduled() as scheduling:
            wake = sleep_loop_latency(500 if args.smoke else 3000)
            bare = bare_round_trip(emulator, 200 if args.smoke else 3000)
        print(
            f"reference, 1 ms sleep loop on this host ({scheduling}): lateness "
            f"{_percentiles(wake)}; {_load()}"
        )
        print(
            f"reference, bare sync read + sync write through the emulator ({scheduling}): "
            f"{_percentiles(bare)}"
        )
        loop = bench_loop(
            command,
            folder,
            emulator,
            idle_s=0.1 if args.smoke else 0.5,
            attempts=1 if args.smoke else 3,
        )
        cycle_ms = loop["cycle_ms"]
        stamps = loop["result"].recording.stamps
        round_trip_ms = (stamps["write_end"] - stamps["read_start"]) * 1e3
        if len(cycle_ms):
            print(
                f"median cycle / 1.2 ms target: {np.median(cycle_ms) / 1.2:.2f}; median of "
                "(read..write) / bare round trip: "
                f"{np.median(round_trip_ms) / np.median(bare):.2f}"
            )
        if not args.smoke:
            bench_loop(command, folder, emulator, wire_baud=3e6, label=" with 3 Mbit/s wire time")
            if not args.no_notebook:
                log = loop["path"]
                if log is None:  # the notebook's time does not depend on where the log came from
                    from crane_lib.logs.raw_log import write_raw_log
                    from crane_lib.twin import recorder as twin

                    log = write_raw_log(
                        folder / f"{args.trajectory}_twin.npz", *twin.record(command, seed=1)
                    )
                    print(
                        f"notebook on the twin's own recording of {args.trajectory}: no emulator "
                        "recording completed on this host"
                    )
                bench_notebook(log, args.trajectory, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
