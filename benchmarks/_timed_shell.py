"""A shell for make that times every recipe line: `make SHELL=python3 .SHELLFLAGS="<this> -c"`.

Runs the line with /bin/sh, then appends one JSON line to the file named by $CRANE_BUILD_TIMES:
the command, its wall seconds and the CPU seconds of everything it ran (its process tree, as
reaped), and its exit status, which it returns. Used by benchmarks/bench_build.py.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

TIMES_ENV = "CRANE_BUILD_TIMES"


def main(argv: list[str]) -> int:
    """Run `sh -c LINE` for argv == ["-c", LINE], record its times, return its status."""
    if len(argv) != 2 or argv[0] != "-c":
        print(f"{__file__}: expected -c COMMAND, got {argv}", file=sys.stderr)
        return 2
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    status = subprocess.call(["/bin/sh", "-c", argv[1]])
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if os.environ.get(TIMES_ENV):
        with open(os.environ[TIMES_ENV], "a", encoding="utf-8") as handle:
            handle.write(
                json.dumps({"command": argv[1], "wall_s": wall, "cpu_s": cpu, "status": status})
                + "\n"
            )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
