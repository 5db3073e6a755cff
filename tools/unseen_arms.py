"""Arms nobody here described, through the command line alone: describe -> excite -> record (the
twin) -> accept -> export, with the described model's M(q) and inverse dynamics checked against
Pinocchio (URDF) or MuJoCo (MJCF) on random states.

    .venv/bin/python tools/unseen_arms.py [ARM ...] [--keep DIR]

Per arm it prints the base-parameter count, the excitation's rank and condition number, the
check's relative errors, and each later stage's exit status and time with its last line (the
accept verdict, or the refusal that stops the arm). The twin runs any described arm: its own
inertials, its servos' drive magnitudes from the servo catalogue, a log naming the folder and its
fingerprint. The low-cost arm as tests/test_describe.py describes it (XM430-W350 and XL330-M288,
12 V and 5 V) is refused at `record` (the twin has one supply); `koch_xl330` is the same arm on
six XL330-M288. Minutes per arm; the test suite runs the fast part (tests/test_describe.py,
tests/test_cli_excite.py, tests/test_unseen_arms.py).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.test_describe import SOURCES, UNSEEN, check_errors  # noqa: E402

SO101 = {
    "so101": (
        SOURCES["so101"],
        {"gripper": "gripper", "servos": ["STS3215-C018"] * 6, "name": "SO-101"},
    )
}
# the low-cost arm on one servo type: one supply voltage and one current register unit, which the
# twin's drive and the realization controller need
LOW_COST = {
    "koch_xl330": (
        UNSEEN["low_cost_robot_arm"][0],
        {"gripper": "gripper", "servos": ["XL330-M288"] * 6},
    ),
}
ARMS = {**UNSEEN, **LOW_COST, **SO101}
SEED = 20261205


def crane_id(*args) -> tuple[int, str, float]:
    """Run `crane-id ARGS` (this checkout's); exit status, its last output line, seconds."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "crane_lib.cli", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode, lines[-1] if lines else "", time.perf_counter() - start


def run_arm(key: str, work: Path) -> None:
    """One arm through every stage, printed as it goes."""
    path, options = ARMS[key]
    folder, traj = work / key / "description", work / key / "trajectories"
    (work / key).mkdir(parents=True, exist_ok=True)
    args = [path, "--out", folder, "--servos", ",".join(options["servos"])]
    for option in ("gripper", "tip", "name"):
        if option in options:
            args += [f"--{option}", options[option]]
    steps = [("describe", ["describe", *args])]
    steps.append(("excite", ["excite", "--robot", folder, "--out", traj]))
    log, held_out, model = (
        work / key / "pi_alpha.npz",
        work / key / "pi_beta.npz",
        work / key / "m.csv",
    )
    steps += [
        ("record", ["record", traj / "PI_ALPHA.txt", "--out", log, "--robot", folder]),
        (
            "record held-out",
            ["record", traj / "PI_BETA.txt", "--out", held_out, "--robot", folder, "--seed", "2"],
        ),
        (
            "accept",
            [
                "accept",
                log,
                "--trajectory",
                traj / "PI_ALPHA.txt",
                "--out",
                model,
                "--robot",
                folder,
                "--validation",
                held_out,
            ],
        ),
        (
            "export",
            [
                "export",
                model,
                "--urdf",
                work / key / "m.urdf",
                "--mjcf",
                work / key / "m.xml",
                "--robot",
                folder,
                "--nearest",
            ],
        ),
    ]
    for name, argv in steps:
        status, last, seconds = crane_id(*argv)
        print(f"  {name}: exit {status} in {seconds:.1f} s: {last}", flush=True)
        if name == "describe" and status == 0:
            errors = check_errors(key, folder, np.random.default_rng(SEED), source=path)
            print(
                f"  check: relative error M {errors['M']:.2e}, inverse dynamics {errors['ID']:.2e}",
                flush=True,
            )
        if name == "excite" and status == 0:
            rank = re.search(r"base rank (\d+)/(\d+), kappa (\S+)", last)
            if rank:
                print(f"  base parameters {rank[2]}, rank {rank[1]}, kappa {rank[3]}", flush=True)
        if status not in (0, 1):
            return


def main(argv=None) -> int:
    """Run the chosen arms (default all) and print what each stage gave."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("arms", nargs="*", metavar="ARM", help=f"any of {list(ARMS)}")
    parser.add_argument("--keep", type=Path, help="folder to keep the outputs in")
    args = parser.parse_args(argv)
    unknown = [k for k in args.arms if k not in ARMS]
    if unknown:
        parser.error(f"unknown arms {unknown}; expected some of {list(ARMS)}")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        for key in args.arms or ARMS:
            print(f"{key} ({ARMS[key][0].name})", flush=True)
            run_arm(key, work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
