"""Build time: `make book` from a fresh clone, wall time and CPU-minutes by step; or CI's run.

Targets on 2 cores: the full profile from scratch in at most 20 minutes (the ratio printed is the
build's wall time over it); CPU-minutes by step let the figure be read for any core count.
`--ci`: `.ci/run` from a fresh clone (the suite, the quick book, the numbers, the claims on the
build's records, the browser step) in at most 12 minutes, with each of its steps' seconds.

Run from the repository root: `.venv/bin/python -m benchmarks.bench_build [--profile quick|full]
[--jobs 2] [--keep DIR]` (the full profile takes most of an hour on 2 cores).

How: this repository's HEAD is cloned into a temporary folder (uncommitted changes are not
measured) and `make book` runs there with make's shell replaced by benchmarks/_timed_shell.py,
which records every recipe line: the virtual environment, the model kernels, the pipeline, the
pages and Sphinx. The pipeline records its own steps (crane_book.build_clock,
results/timings/pipeline_<profile>.json), printed indented under it.

`--smoke`: the same machinery on a two-line makefile, in seconds; its numbers are not measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._smoke import add_smoke_argument, isolated  # noqa: E402
from crane_lib.paths import REPO_ROOT, RESULTS_DIR  # noqa: E402

TIMED_SHELL = Path(__file__).resolve().with_name("_timed_shell.py")
TARGET_FULL_MIN = 20.0
TARGET_CI_MIN = 12.0
# .ci/run prints "ci: '<command>' took <s> s (total <s> s)" after each step
CI_STEP = re.compile(r"^ci: '(?P<command>.*)' took (?P<seconds>\d+) s \(total \d+ s\)$")
SMOKE_MAKEFILE = """all:
\tpython3 -c "sum(i * i for i in range(10**6))"
\tsleep 0.2
"""


def timed_make(folder: Path, target: list[str], times: Path, env: dict | None = None) -> int:
    """`make TARGET` in `folder` with every recipe line timed into `times` (JSON lines)."""
    environment = dict(os.environ if env is None else env, CRANE_BUILD_TIMES=str(times))
    command = [
        "make",
        "-C",
        str(folder),
        f"SHELL={sys.executable}",
        f".SHELLFLAGS={TIMED_SHELL} -c",
        *target,
    ]
    return subprocess.call(command, env=environment)


def read_times(times: Path) -> list[dict]:
    """The recipe lines make ran, in order (the makefile's own $(shell ...) calls left out)."""
    lines = [json.loads(line) for line in times.read_text(encoding="utf-8").splitlines() if line]
    return [line for line in lines if "arithmetic.py" not in line["command"]]


def step_name(command: str) -> str:
    """A recipe line in a few words: the module or program it runs."""
    for marker, name in (
        ("-m venv", "virtual environment"),
        ("uv pip install", "install packages"),
        ("crane_lib.model.dynamics", "model kernels"),
        ("crane_book.pipeline", "pipeline"),
        ("crane_book.pages", "pages"),
        ("jupyter-book build", "Sphinx (jupyter-book)"),
    ):
        if marker in command:
            return name
    return command.strip().split("\n")[0][:60]


def report(lines: list[dict], pipeline_steps: list[dict], target_min: float | None) -> dict:
    """Print the steps' wall and CPU minutes and shares; return the summary."""
    total_wall = sum(line["wall_s"] for line in lines)
    total_cpu = sum(line["cpu_s"] for line in lines)

    def row(name: str, wall_s: float, cpu_s: float) -> str:
        return f"{name[:58]:58s} {wall_s / 60:8.2f} {cpu_s / 60:8.2f} {wall_s / total_wall:6.1%}"

    print(f"{'step':58s} {'wall min':>8s} {'CPU min':>8s} {'share':>6s}")
    for line in lines:
        name = step_name(line["command"])
        print(row(name, line["wall_s"], line["cpu_s"]))
        if name == "pipeline":
            for step in pipeline_steps:
                print(row(f"  {step['step']}", step["wall_s"], step["cpu_s"]))
    print(f"{'build':58s} {total_wall / 60:8.2f} {total_cpu / 60:8.2f}")
    summary = {
        "wall_s": total_wall,
        "cpu_s": total_cpu,
        "steps": [{**line, "step": step_name(line["command"])} for line in lines],
        "pipeline_steps": pipeline_steps,
    }
    if target_min is not None:
        summary["target_min"] = target_min
        summary["ratio_to_target"] = total_wall / 60 / target_min
        ratio = summary["ratio_to_target"]
        print(f"build wall time / target: {total_wall / 60:.1f} / {target_min:g} min = {ratio:.2f}")
    return summary


def ci_steps(output: str) -> list[dict]:
    """The steps .ci/run reported in `output`, each {"step", "wall_s"}, in order."""
    steps = []
    for line in output.splitlines():
        if match := CI_STEP.match(line.strip()):
            command = match["command"]
            name = "claims on the build's records" if "test_claims" in command else command
            name = "browser step" if "test_browser" in command else name
            steps.append({"step": name, "wall_s": float(match["seconds"])})
    return steps


def ci_run(folder: Path) -> dict:
    """`.ci/run` in a fresh clone of HEAD at `folder`: its wall time and each step's seconds."""
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(folder)], check=True)
    started = time.perf_counter()
    run = subprocess.run(
        ["bash", ".ci/run"],
        cwd=folder,
        env=dict(os.environ, CI="true"),
        capture_output=True,
        text=True,
    )
    wall_s = time.perf_counter() - started
    steps = ci_steps(run.stdout)
    print(f"{'.ci/run step':58s} {'wall min':>8s}")
    for step in steps:
        print(f"{step['step'][:58]:58s} {step['wall_s'] / 60:8.2f}")
    print(f"{'.ci/run':58s} {wall_s / 60:8.2f}")
    ratio = wall_s / 60 / TARGET_CI_MIN
    print(f".ci/run wall time / target: {wall_s / 60:.1f} / {TARGET_CI_MIN:g} min = {ratio:.2f}")
    if run.returncode:
        print(run.stdout[-3000:], run.stderr[-3000:], file=sys.stderr)
    return {
        "wall_s": wall_s,
        "steps": steps,
        "target_min": TARGET_CI_MIN,
        "ratio_to_target": ratio,
        "returncode": run.returncode,
    }


def main(argv=None) -> int:
    """Build the book from a fresh clone and record every step's wall and CPU minutes."""
    from benchmarks._out import json_out

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=("quick", "full"), help="the book's (default quick)")
    parser.add_argument("--jobs", help="the book's processes (default 2)")
    parser.add_argument("--keep", type=Path, help="build in this folder (created) and keep it")
    parser.add_argument(
        "--out", type=Path, help="the summary's JSON (default results/benchmarks/bench_build.json)"
    )
    parser.add_argument("--ci", action="store_true", help=".ci/run from a fresh clone, timed")
    add_smoke_argument(parser, help="the machinery on a two-line makefile, seconds")
    args = parser.parse_args(argv)
    if args.ci and args.smoke:
        parser.error("--ci runs the whole of .ci/run: no smoke size")
    if args.ci and (args.profile or args.jobs):  # .ci/run builds its own quick profile
        parser.error("--ci times .ci/run as it is: no --profile or --jobs")
    args.profile, args.jobs = args.profile or "quick", args.jobs or "2"
    given_out = [] if args.out is None else ["--out", str(args.out.absolute())]
    args.out = args.out or RESULTS_DIR / "benchmarks" / "bench_build.json"
    if args.ci:
        with json_out(parser, args.out) as write:  # checked first: a bad --out builds nothing
            with tempfile.TemporaryDirectory(prefix="crane-bench-ci-") as scratch:
                summary = {**ci_run(args.keep or Path(scratch) / "clone"), "profile": "ci"}
            write(summary)
        return 1 if summary["returncode"] else 0
    if args.smoke:  # in a throwaway results folder, unless this process runs in one
        if (code := isolated("benchmarks.bench_build", ["--smoke", *given_out])) is not None:
            return code
    with (
        json_out(parser, args.out) as write,
        tempfile.TemporaryDirectory(prefix="crane-bench-build-") as scratch,
    ):
        folder = args.keep or Path(scratch) / "clone"
        times = Path(scratch) / "times.jsonl"
        times.touch()
        if args.smoke:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "Makefile").write_text(SMOKE_MAKEFILE, encoding="utf-8")
            status, target_min = timed_make(folder, ["all"], times), None
            pipeline_steps: list[dict] = []
        else:
            subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(folder)], check=True)
            status = timed_make(
                folder, ["book", f"PROFILE={args.profile}", f"JOBS={args.jobs}"], times
            )
            target_min = TARGET_FULL_MIN if args.profile == "full" else None
            record = folder / "results" / "timings" / f"pipeline_{args.profile}.json"
            pipeline_steps = (
                json.loads(record.read_text(encoding="utf-8"))["steps"] if record.is_file() else []
            )
        if status:
            print(f"make exited with status {status}", file=sys.stderr)
            return 1
        summary = report(read_times(times), pipeline_steps, target_min)
        write({**summary, "profile": "smoke" if args.smoke else args.profile})
    return 0


if __name__ == "__main__":
    sys.exit(main())
