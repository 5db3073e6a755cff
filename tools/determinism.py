"""Determinism check: build the quick profile's results twice from clean clones and list every
file that differs.

    python tools/determinism.py [--profile quick] [--jobs 2] [--work DIR] [--shared-cache DIR]

Each build is a fresh `git clone` of this repository's HEAD (so uncommitted changes are not
tested) with its own, empty results folder. In each clone the tool runs the main job's data
steps (`python -m crane_book.pipeline --profile quick`: the twin's recordings, the
OLS/SDP and CLIE sweeps and their records) and then `crane-id identify` with the fast refinement
on AG02 at 40 ms (a model file written by the tools a user runs). It then compares the two
results folders file by file and prints

  - every result record, model file, recording, bundle or manifest that differs (these must be
    byte-identical: DESIGN.md section 8), and every file only one build has;
  - the executed sweep notebooks separately: papermill stamps them with start and end times, so
    they are compared after removing those stamps.

The generated model code of crane_lib.model.codegen is content-keyed; `--shared-cache DIR`
lets both builds use an existing cache (faster), otherwise each build generates its own.
Exit status 0 when no result file differs, 1 otherwise.

    python tools/determinism.py --rebuild [--profile quick]

checks the other promise instead: one clean build, then the main job's data steps run again on
that built tree with nothing changed; every result file rewritten (its bytes or its modification
time changed) is listed, the build's own timings aside (results/timings). Exit status 0 when
none was, 1 otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script from anywhere: the book's option checks

from crane_book import options  # noqa: E402

NOTEBOOK_SUFFIX = ".ipynb"
TIMINGS_FOLDER = "timings"  # results/timings: the build's own step times
# papermill's and nbclient's timing stamps: the only fields of an executed notebook that must differ
TIMING_KEYS = (
    "start_time",
    "end_time",
    "duration",
    "iopub.execute_input",
    "iopub.status.busy",
    "iopub.status.idle",
    "shell.execute_reply",
    "shell.execute_request",
    "execution",
)


def _run(command: list[str], cwd: Path, env: dict, log) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    subprocess.run(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)


def build(
    index: int, work: Path, profile: str, jobs: int, shared_cache: Path | None
) -> tuple[Path, float]:
    """One clean build; returns (its results folder, seconds)."""
    clone = work / f"build{index}"
    results = clone / "results"
    cache = shared_cache or (clone / ".cache")
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(clone),
        CRANE_RESULTS_DIR=str(results),
        CRANE_CACHE_DIR=str(cache),
        CRANE_PROFILE=profile,
        PYTHONHASHSEED="0",
    )
    start = time.perf_counter()
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)], check=True)
    with open(work / f"build{index}.log", "w", encoding="utf-8") as log:
        python = sys.executable
        _run([python, "-m", "crane_lib.model.dynamics"], clone, env, log)
        _run(
            [python, "-m", "crane_book.pipeline", "--profile", profile, "--jobs", str(jobs)],
            clone,
            env,
            log,
        )
        models = results / "models"
        models.mkdir(parents=True, exist_ok=True)
        _run(
            [
                python,
                "-m",
                "crane_lib.cli",
                "identify",
                str(results / "recordings" / "AG02_run1.npz"),
                "--trajectory",
                str(clone / "trajectories" / "AG02.txt"),
                "--ts",
                "0.04",
                "--refine",
                "fast",
                "--out",
                str(models / "AG02_040ms_fast.csv"),
            ],
            clone,
            env,
            log,
        )
    return results, time.perf_counter() - start


def rebuild(work: Path, profile: str, jobs: int) -> None:
    """The main job's data steps run again in build 1's clone, nothing changed."""
    clone = work / "build1"
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(clone),
        CRANE_RESULTS_DIR=str(clone / "results"),
        CRANE_CACHE_DIR=str(clone / ".cache"),
        CRANE_PROFILE=profile,
        PYTHONHASHSEED="0",
    )
    with open(work / "rebuild.log", "w", encoding="utf-8") as log:
        _run(
            [
                sys.executable,
                "-m",
                "crane_book.pipeline",
                "--profile",
                profile,
                "--jobs",
                str(jobs),
            ],
            clone,
            env,
            log,
        )


def snapshot(results: Path) -> dict[str, tuple[int, str]]:
    """Every result file but the build's timings: relative path -> (mtime in ns, sha256)."""
    return {
        str(p.relative_to(results)): (p.stat().st_mtime_ns, _digest(p))
        for p in sorted(results.rglob("*"))
        if p.is_file() and not _timing_record(p, results)
    }


def rewritten(before: dict, after: dict) -> list[str]:
    """The files a rebuild wrote, changed, added or removed (relative paths)."""
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _without_timing(value):
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _notebook_digest(path: Path) -> str:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return hashlib.sha256(
        json.dumps(_without_timing(notebook), sort_keys=True).encode()
    ).hexdigest()


def _timing_record(path: Path, root: Path) -> bool:
    """The build's own wall and CPU times (crane_book.build_clock): they must differ."""
    return path.relative_to(root).parts[0] == TIMINGS_FOLDER


def compare(first: Path, second: Path) -> dict[str, list[str]]:
    """Relative paths by verdict: identical, differ, only_first, only_second, notebooks_identical,
    notebooks_differ_only_in_timing, notebooks_differ."""
    files = {
        p.relative_to(first)
        for p in first.rglob("*")
        if p.is_file() and not _timing_record(p, first)
    }
    others = {
        p.relative_to(second)
        for p in second.rglob("*")
        if p.is_file() and not _timing_record(p, second)
    }
    verdict: dict[str, list[str]] = {
        k: []
        for k in (
            "identical",
            "differ",
            "only_first",
            "only_second",
            "notebooks_identical",
            "notebooks_differ_only_in_timing",
            "notebooks_differ",
        )
    }
    for path in sorted(files | others):
        name = str(path)
        if path not in others:
            verdict["only_first"].append(name)
        elif path not in files:
            verdict["only_second"].append(name)
        elif path.suffix == NOTEBOOK_SUFFIX:
            if _digest(first / path) == _digest(second / path):
                verdict["notebooks_identical"].append(name)
            elif _notebook_digest(first / path) == _notebook_digest(second / path):
                verdict["notebooks_differ_only_in_timing"].append(name)
            else:
                verdict["notebooks_differ"].append(name)
        elif _digest(first / path) == _digest(second / path):
            verdict["identical"].append(name)
        else:
            verdict["differ"].append(name)
    return verdict


def main(argv=None) -> int:
    """Build the profile twice from clean clones and list every result file that differs."""
    parser = options.Parser(prog="python tools/determinism.py", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=("quick", "full"), default="quick")
    parser.add_argument("--jobs", default="2", help=f"processes per build, 1 to {options.MAX_JOBS}")
    parser.add_argument(
        "--work",
        type=Path,
        default=None,
        help="folder for the two clones (default: a new temporary folder, kept)",
    )
    parser.add_argument(
        "--shared-cache", type=Path, default=None, help="one generated-code cache for both builds"
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="one build, then its data steps again: list every result file rewritten",
    )
    args = parser.parse_args(argv)
    args.jobs = options.checked(parser, "--jobs", args.jobs, options.jobs)  # before any clone
    work = args.work or Path(tempfile.mkdtemp(prefix="crane-determinism-"))
    work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    print(f"determinism check of {commit[:12]}, profile {args.profile}, in {work}", flush=True)
    if args.rebuild:
        folder, seconds = build(1, work, args.profile, args.jobs, None)
        before = snapshot(folder)
        print(f"build: {seconds / 60:.1f} min, {len(before)} result files", flush=True)
        rebuild(work, args.profile, args.jobs)
        changed = rewritten(before, snapshot(folder))
        for name in changed:
            print(f"  REWRITTEN: {name}")
        print("UNCHANGED" if not changed else f"{len(changed)} result files rewritten")
        return 1 if changed else 0
    results = []
    for index in (1, 2):
        folder, seconds = build(index, work, args.profile, args.jobs, args.shared_cache)
        print(
            f"build {index}: {seconds / 60:.1f} min, "
            f"{sum(1 for p in folder.rglob('*') if p.is_file())} files",
            flush=True,
        )
        results.append(folder)
    verdict = compare(*results)
    print(f"{len(verdict['identical'])} result files byte-identical")
    for key, label in (
        ("differ", "DIFFER"),
        ("only_first", "only in build 1"),
        ("only_second", "only in build 2"),
        ("notebooks_differ", "executed notebooks that differ beyond their timing stamps"),
    ):
        for name in verdict[key]:
            print(f"  {label}: {name}")
    print(
        f"executed notebooks: {len(verdict['notebooks_identical'])} identical, "
        f"{len(verdict['notebooks_differ_only_in_timing'])} differ only in papermill's timing "
        "stamps, "
        f"{len(verdict['notebooks_differ'])} differ otherwise"
    )
    failed = (
        verdict["differ"]
        or verdict["only_first"]
        or verdict["only_second"]
        or verdict["notebooks_differ"]
    )
    print("DETERMINISTIC" if not failed else "NOT deterministic: see the files above")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
