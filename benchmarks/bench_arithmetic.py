"""The cost of the reference arithmetic (crane_lib/arithmetic.py), and what it changes.

Each variant runs in a fresh process, so that the kernels are chosen when the libraries load:

- `host`: numpy imported before crane_lib, so the pin comes too late: OpenBLAS's and numpy's
  kernels for this CPU (the reference every ratio is against);
- `reference`: crane_lib first: OpenBLAS Haswell on one thread, numpy's dispatch capped at X86_V3;
- `reference + numba haswell` and `reference + numba generic` (full run only; each compiles the
  kernels once for that target, outside the timing): what pinning numba's target would cost.

Timed in each, after a warm-up, the fastest of REPEATS runs: a twin recording (AG02; --smoke: a
few seconds' command file), the closed loop of numba kernels and numpy calls that every record
starts from; and a batch of 7x7 eigenvalue problems (numpy's LAPACK over OpenBLAS, the dense audit's
inner operation).
Target: the reference costs at most 15 % on each. The recording's sha256 says whether the
variant changes the data (it does between host and reference on an AVX-512 CPU).

    python -m benchmarks.bench_arithmetic [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time, hashlib, tempfile
from pathlib import Path
if sys.argv[1] == "host":
    import numpy, scipy.linalg  # before crane_lib: its pin comes too late for both OpenBLAS copies
import crane_lib
import numpy as np
from crane_lib import arithmetic
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import recorder
scratch = tempfile.TemporaryDirectory()  # removed when this process exits
folder = Path(scratch.name)
if sys.argv[2] == "smoke":
    from benchmarks._smoke import smoke_command_file
    command = smoke_command_file("SMOKE01", folder)
else:
    command = TRAJECTORY_DIR / "AG02.txt"
repeats = int(sys.argv[3])
recorder.record_to_file(command, folder / "warm.npz", seed=1)
twin_s = []
for _ in range(repeats):
    start = time.perf_counter()
    log = recorder.record_to_file(command, folder / "timed.npz", seed=1)
    twin_s.append(time.perf_counter() - start)
rng = np.random.default_rng(0)
a = rng.normal(size=(20000, 7, 7))
spd = a @ a.transpose(0, 2, 1) + 7 * np.eye(7)
np.linalg.eigvalsh(spd[:100])
lapack_s = []
for _ in range(repeats):
    start = time.perf_counter()
    np.linalg.eigvalsh(spd)
    lapack_s.append(time.perf_counter() - start)
twin_s, lapack_s = min(twin_s), min(lapack_s)
print(json.dumps({"twin_s": twin_s, "lapack_s": lapack_s, "signature": arithmetic.signature(),
                  "sha": hashlib.sha256(log.read_bytes()).hexdigest()[:12]}))
"""

# timed runs per item in each variant; the fastest counts (the host's other load only adds time)
REPEATS = 3
PINNED = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "OPENBLAS_NUM_THREADS", "NUMBA_CPU_NAME")


def run_variant(variant: str, smoke: bool, numba_cpu: str | None = None) -> dict:
    """Time one variant in a fresh process; its timings, signature and recording digest."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED}
    env["NUMBA_NUM_THREADS"] = "1"
    if numba_cpu:
        env["NUMBA_CPU_NAME"] = numba_cpu
    # numba keeps a cached kernel per target CPU, so the variants do not overwrite each other's
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            variant,
            "smoke" if smoke else "full",
            "1" if smoke else str(REPEATS),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    """Print each variant's timings as ratios against the host arithmetic measured in this run."""
    from benchmarks._smoke import add_smoke_argument

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser, help="a few seconds' recording, no numba variants")
    args = parser.parse_args(argv)
    variants = [("host", "host", None), ("reference", "reference", None)]
    if not args.smoke:
        variants += [
            ("reference + numba haswell", "reference", "haswell"),
            ("reference + numba generic", "reference", "generic"),
        ]
    rows = [(label, run_variant(kind, args.smoke, cpu)) for label, kind, cpu in variants]
    host = rows[0][1]
    print(
        f"{'variant':<28} {'twin s':>8} {'ratio':>6} {'LAPACK s':>9} {'ratio':>6}  "
        "recording  arithmetic"
    )
    for label, row in rows:
        print(
            f"{label:<28} {row['twin_s']:8.2f} {row['twin_s'] / host['twin_s']:6.2f} "
            f"{row['lapack_s']:9.2f} {row['lapack_s'] / host['lapack_s']:6.2f}  {row['sha']}  "
            f"{row['signature']}"
        )
    worst = max(
        max(r["twin_s"] / host["twin_s"], r["lapack_s"] / host["lapack_s"])
        for label, r in rows
        if label == "reference"
    )
    print(
        f"reference arithmetic costs {100 * (worst - 1):+.0f} % on its slower item "
        "(target: at most +15 %)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
