"""Run the benchmarks: `python -m benchmarks [--smoke] [names]`.

Every benchmarks/bench_*.py runs as its own module, one after the other (names select by
substring). `--smoke` runs each at its smallest size, in seconds, on data recorded into a
temporary results folder (see benchmarks/_smoke.py); the test suite does the same.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(selected=()) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    return [s for s in found if not selected or any(name in s.stem for name in selected)]


def main(argv=None) -> int:
    from benchmarks._smoke import ISOLATED_ENV

    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="smallest size, seconds each, into a temporary results folder")
    parser.add_argument("names", nargs="*", help="run only the benchmarks whose file name contains one of these")
    args = parser.parse_args(argv)
    chosen = scripts(args.names)
    if not chosen:
        print(f"no benchmark matches {args.names}", file=sys.stderr)
        return 2
    failed = []
    for script in chosen:
        print(f"\n=== {script.stem}{' (smoke)' if args.smoke else ''} ===", flush=True)
        command = [sys.executable, "-m", f"benchmarks.{script.stem}", *(["--smoke"] if args.smoke else [])]
        if args.smoke:
            with tempfile.TemporaryDirectory(prefix="crane-bench-smoke-") as folder:
                env = dict(os.environ, CRANE_RESULTS_DIR=folder, **{ISOLATED_ENV: "1"})
                code = subprocess.run(command, cwd=HERE.parent, env=env).returncode
        else:
            code = subprocess.run(command, cwd=HERE.parent).returncode
        if code:
            failed.append(script.stem)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
