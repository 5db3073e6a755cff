"""Run the benchmarks: `python -m benchmarks [--smoke] [names]`.

Every benchmarks/bench_*.py runs as its own module, one after the other (names select by
substring). `--smoke` runs each at its smallest size, in seconds, on data recorded into a
temporary results folder (see benchmarks/_smoke.py); `make benchmarks SMOKE=1` does the same
through tests/test_benchmarks.py.

`--targets` measures the build's decided targets in one run on this machine, one after the other
(about 60 minutes on 2 cores), after timing Pinocchio's loop over the dense audit's poses
(bench_audit --machine: how fast the machine runs code the project does not touch, which the
table states at the run's start and end against the idle targets run's): the full book from a
fresh clone of HEAD (bench_build, wall time and CPU-minutes by step), `.ci/run` from another
fresh clone (bench_build --ci, each of its steps), the fast CLIE route against the same route at
the paper's 0.25 ms over the 160 conditions of the full sweep on that build's recordings, the
exact route against the fast one on AG02 at 40 ms and on EXACT_SWEEP_CONDITIONS of the sweep
(its end points there, one step and 0.25 ms), and `crane-id accept` of a new AG02 recording in
fresh processes, end to end and by stage (bench_clie), the cached model load in fresh processes
(bench_model) and the dense audit against Pinocchio's loop (bench_audit); then one table of each
target, what was measured and their ratio, kept with every benchmark's JSON in
results/benchmarks/targets.json. `--keep DIR` builds in DIR and keeps it (its results: the full
data set). With `--smoke` the same runs at smoke size (seconds; the table's numbers are not
measurements; it builds nothing to keep).

Every option is checked before any work: an empty or unknown benchmark name, `--keep` that is not
an empty or new folder in a writable place, or `--keep` without `--targets` or with `--smoke` is
refused in one line, exit status 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(selected=()) -> list[Path]:
    """The benchmark scripts whose names contain one of `selected` (all when empty)."""
    found = sorted(HERE.glob("bench_*.py"))
    return [s for s in found if not selected or any(name in s.stem for name in selected)]


def known_names() -> list[str]:
    """The benchmarks' names as `names` selects them (their file names without `bench_`)."""
    return [script.stem.removeprefix("bench_") for script in scripts()]


def _keep_problem(keep: Path) -> str | None:
    """What is wrong with `keep` as the folder the full build is cloned into (None: nothing)."""
    if keep.exists() and not keep.is_dir():
        return "not a folder"
    if keep.is_dir():
        if any(keep.iterdir()):
            return "not empty; the build is cloned into a new folder"
        place = keep
    else:
        place = next(parent for parent in keep.absolute().parents if parent.exists())
        if not place.is_dir():
            return f"{place} is not a folder"
    if not os.access(place, os.W_OK | os.X_OK):
        return f"{place} is not writable"
    return None


def main(argv=None) -> int:
    """Run the selected benchmarks (or measure the targets) and print their results."""
    from benchmarks._smoke import ISOLATED_ENV
    from crane_book.options import Parser, shown

    parser = Parser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="smallest size, seconds each, into a temporary results folder",
    )
    parser.add_argument(
        "--targets",
        action="store_true",
        help="the decided targets, measured in one run, then their table",
    )
    parser.add_argument(
        "--keep", type=Path, help="with --targets: build in this folder (created) and keep it"
    )
    parser.add_argument(
        "names", nargs="*", help="run only the benchmarks whose file name contains one of these"
    )
    args = parser.parse_args(argv)
    if args.keep is not None and not args.targets:
        parser.error("--keep DIR: only with --targets (the folder of the full build it measures)")
    if args.keep is not None and args.smoke:
        parser.error("--keep DIR: not with --smoke (a smoke run builds no full book to keep)")
    if args.keep is not None and (problem := _keep_problem(args.keep)) is not None:
        parser.error(f"--keep {shown(args.keep)}: {problem}")
    if args.targets:
        if args.names:
            parser.error("--targets runs its own four benchmarks: give no names")
        return measure_targets(args.smoke, args.keep)
    for name in args.names:
        if not name.strip() or not scripts([name]):
            parser.error(
                f"benchmark {shown(name)}: expected (a part of) a benchmark's name, one of "
                f"{', '.join(known_names())}"
            )
    chosen = scripts(args.names)
    failed = []
    for script in chosen:
        print(f"\n=== {script.stem}{' (smoke)' if args.smoke else ''} ===", flush=True)
        command = [
            sys.executable,
            "-m",
            f"benchmarks.{script.stem}",
            *(["--smoke"] if args.smoke else []),
        ]
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


# a target measured by another benchmark's mode: its result's name -> the benchmark that runs it
TARGET_MODULES = {"bench_ci": "bench_build", "machine": "bench_audit"}
# the sweep's conditions the exact route also refines in a targets run: the four of the CLIE
# register's table of the exact route's end points (all 160 would take hours; the table says)
EXACT_SWEEP_CONDITIONS = "AP01:40,AP01:80,AP03:40,AP03:80"


def target_runs(folder: Path, smoke: bool, clone: Path) -> list[tuple[str, list[str], dict]]:
    """(result name, its benchmark's arguments, extra environment) of each target measurement,
    in order; each writes its JSON into `folder`; the full build is made in `clone`; the
    benchmark is TARGET_MODULES' entry for the name, else the name."""
    if smoke:
        build = ["--smoke"]
        clie = ["--smoke", "--skip-faithful", "--accept-record", "901", "--accept-runs", "1"]
    else:
        build = ["--profile", "full", "--jobs", "2", "--keep", str(clone)]
        clie = [
            "--skip-faithful",
            *("--sweep", "full", "--jobs", "2", "--exact-conditions", EXACT_SWEEP_CONDITIONS),
            *("--accept-record", "901"),
        ]
    # the sweep runs on the recordings the build just made (this checkout's code, HEAD's data);
    # in smoke mode every run records into one throwaway results folder
    from benchmarks._smoke import ISOLATED_ENV

    env = {"CRANE_RESULTS_DIR": str(folder / "results"), ISOLATED_ENV: "1"} if smoke else {}
    clie_env = env if smoke else {"CRANE_RESULTS_DIR": str(clone / "results")}
    smoke_flag = ["--smoke"] if smoke else []
    return [
        # this machine's speed before the first time is taken (the dense audit's loop, last,
        # gives it at the end): the table states it beside the idle run's
        ("machine", [*smoke_flag, "--machine", "--out", str(folder / "machine.json")], env),
        ("bench_build", [*build, "--out", str(folder / "bench_build.json")], env),
        *(
            []  # .ci/run has no smoke size
            if smoke
            else [("bench_ci", ["--ci", "--out", str(folder / "bench_ci.json")], env)]
        ),
        ("bench_clie", [*clie, "--out", str(folder / "bench_clie.json")], clie_env),
        (
            "bench_model",
            [*smoke_flag, "--cached-load", "--out", str(folder / "bench_model.json")],
            env,
        ),
        ("bench_audit", [*smoke_flag, "--dense", "--out", str(folder / "bench_audit.json")], env),
    ]


def targets_table(results: dict) -> list[str]:
    """The decided targets beside what `results` (benchmark name: its JSON) measured, as lines."""
    rows = _machine_rows(results.get("machine"), results.get("bench_audit"))
    build = results.get("bench_build")
    if build:
        minutes, target = build["wall_s"] / 60, build.get("target_min")  # none in smoke mode
        steps = [f"{s['step']} {s['cpu_s'] / 60:.1f}" for s in build["pipeline_steps"]]
        rows.append(
            (
                "full book from a fresh clone"
                + (f" <= {target:g} min" if target else " (no target)"),
                f"{minutes:.1f} min, {build['cpu_s'] / 60:.0f} CPU-min "
                f"({build['profile']} profile)",
                f"{minutes / target:.2f}" if target else "",
                minutes <= target if target else None,
            )
        )
        rows.extend(_wrapped_rows("  pipeline CPU-min by step", steps))
    ci = results.get("bench_ci")
    if ci:
        minutes = ci["wall_s"] / 60
        rows.append(
            (
                f".ci/run from a fresh clone <= {ci['target_min']:g} min",
                f"{minutes:.1f} min" + ("" if ci["returncode"] == 0 else " (failed)"),
                f"{minutes / ci['target_min']:.2f}",
                minutes <= ci["target_min"] and ci["returncode"] == 0,
            )
        )
        parts = [f"{step['step']} {step['wall_s']:.0f} s" for step in ci["steps"]]
        rows.extend(_wrapped_rows("  .ci/run steps", parts))
    sweep = (results.get("bench_clie") or {}).get("sweep")
    if sweep and sweep.get("conditions"):
        n = len(sweep["conditions"])
        largest = sweep["one step"]
        rows.append(
            (
                f"fast CLIE sweep >= {sweep['speedup_target']:g}x the 0.25 ms route",
                f"{sweep['speedup']:.2f}x over {n} conditions",
                f"{sweep['speedup'] / sweep['speedup_target']:.2f}",
                sweep["speedup"] >= sweep["speedup_target"],
            )
        )
        rows.append(
            (
                "  same end point (0.1 %, 0.1 SE)",
                f"{sweep['within_tolerance']} of {n}; largest "
                f"{100 * largest['largest_objective_change']:.2f} %, "
                f"{largest['largest_parameter_change_se']:.2f} SE; "
                f"{sweep['refined_again']} refined again",
                "",
                sweep["within_tolerance"] == n,
            )
        )
        rows.extend(_earlier_sweep_rows(sweep))
    rows.extend(_exact_rows(results.get("bench_clie") or {}))
    accept = ((results.get("bench_clie") or {}).get("accept") or {}).get("fast")
    if accept:
        rows.extend(_accept_rows(accept))
    load = results.get("bench_model")
    if load:
        rows.append(
            (
                f"cached model load <= {load['target_s']:g} s",
                f"{load['best_s']:.2f} s",
                f"{load['best_s'] / load['target_s']:.2f}",
                load["best_s"] <= load["target_s"],
            )
        )
    dense = results.get("bench_audit")
    if dense:
        rows.append(
            (
                f"dense audit >= {dense['ratio_target']:g}x Pinocchio's loop",
                f"{dense['ours_s']:.2f} s against {dense['pinocchio_s']:.2f} s "
                f"({dense['poses']:,} poses): {dense['ratio']:.1f}x",
                f"{dense['ratio'] / dense['ratio_target']:.2f}",
                dense["ratio"] >= dense["ratio_target"],
            )
        )
    verdict = {True: "met", False: "not met", None: ""}
    width = max(len(row[0]) for row in rows) if rows else 0
    return [
        f"{target:{width}s}  {ratio:>5s}  {verdict[met]:7s}  {measured}"
        for target, measured, ratio, met in rows
    ]


def unmet_pointer(table: list[str]) -> list[str]:
    """The line printed under a targets table with an unmet target: where what remains of each
    and what would close it are read (none when every target is met)."""
    if not any("  not met  " in line for line in table):
        return []
    return [
        "not met: what remains of each, and what would close it: benchmarks/README.md, "
        '"What remains, and what would close it"'
    ]


def _machine_rows(start: dict | None, dense: dict | None) -> list[tuple[str, str, str, None]]:
    """How fast the machine ran, unjudged: Pinocchio's loop over the dense audit's poses at the
    run's start (bench_audit --machine) and at its end (the dense audit's reference), each as a
    factor of the idle targets run's where measured at that size; none without the start's."""
    if not start:
        return []
    idle = start.get("idle_pinocchio_s")
    parts = []
    for when, run in (("start", start), ("end", dense)):
        if not run or "pinocchio_s" not in run:
            continue
        factor = idle and run["poses"] == start["poses"]  # idle: None at smoke size
        parts.append(
            f"{run['pinocchio_s']:.2f} s at the {when}"
            + (f" ({run['pinocchio_s'] / idle:.1f}x)" if factor else "")
        )
    against = f" against the idle targets run's {idle:g} s" if idle else ""
    return [("machine: Pinocchio's loop", ", ".join(parts) + against, "", None)]


def _earlier_sweep_rows(sweep: dict) -> list[tuple[str, str, str, bool | None]]:
    """The full sweep's one-step refinements against the same route's time in the targets run
    before the exact Jacobian (bench_clie's EARLIER_FAST_SWEEP_S, another run), with what that
    time is made of; none for a smaller sweep."""
    if "speedup_over_earlier" not in sweep:
        return []
    target = sweep["speedup_over_earlier_target"]
    speedup = sweep["speedup_over_earlier"]
    return [
        (
            f"CLIE sweep >= {target:g}x the fast route before the exact Jacobian",
            f"{speedup:.2f}x ({sweep['one_step_s']:.0f} s summed against "
            f"{sweep['earlier_fast_s']:,.0f} s, an earlier run's)",
            f"{speedup / target:.2f}",
            speedup >= target,
        ),
        (
            "  one step per cycle, summed",
            f"{sweep['one_step_simulations']:,} simulations, {sweep['one_step_jacobians']:,} DIDIM "
            f"Jacobians; {sweep['refined_again']} refined again ({sweep['refined_again_s']:.0f} s)",
            "",
            None,
        ),
    ]


def _exact_rows(clie: dict) -> list[tuple[str, str, str, bool | None]]:
    """The targets table's rows of the exact route (bench_clie's AG02 comparison and its sweep
    conditions refined by the exact route): speed against the fast route, then end points."""
    exact = (clie.get("sweep") or {}).get("exact")
    ag02 = (clie.get("AG02") or {}).get("exact_vs_fast")
    if not exact and not ag02:
        return []
    target = (exact or ag02)["speedup_over_fast_target" if exact else "speedup_target"]
    parts = []
    if exact:
        parts.append(
            f"{len(exact['conditions'])} sweep conditions {exact['speedup_over_fast']:.2f}x "
            f"({exact['exact_one_step_s']:.0f} s against {exact['fast_one_step_s']:.0f} s)"
        )
    if ag02:
        fast, slow = clie["AG02"]["fast"], clie["AG02"]["exact"]
        (fast_sims, exact_sims), (fast_jacobians, exact_jacobians) = (
            ag02["simulations"],
            ag02["jacobians"],
        )
        parts.append(
            f"AG02 40 ms {ag02['speedup']:.2f}x ({slow['wall_time_s']:.1f} s against "
            f"{fast['wall_time_s']:.1f} s): {exact_sims} simulations, {exact_jacobians} with "
            f"sensitivities, against {fast_sims} and {fast_jacobians} DIDIM Jacobians"
        )
    speedup = exact["speedup_over_fast"] if exact else ag02["speedup"]
    rows = [
        (
            f"CLIE on the exact Jacobian >= {target:g}x the fast route",
            parts[0],
            f"{speedup / target:.2f}",
            speedup >= target,
        ),
        *[("", part, "", None) for part in parts[1:]],
    ]
    if exact:
        n = len(exact["conditions"])
        per_condition = (exact["exact_one_step_s"] + exact["exact_paper_step_s"]) / n
        rows.append(
            (
                "  exact: one step, 0.25 ms same end point",
                f"{exact['within_tolerance']} of {n} ({', '.join(exact['conditions'])}; fast "
                f"route {exact['fast_within_tolerance']} of them); all 160 about "
                f"{160 * per_condition / 3600:.1f} h of refinement",
                "",
                exact["within_tolerance"] == n,
            )
        )
    return rows


def _accept_rows(accept: dict) -> list[tuple[str, str, str, bool | None]]:
    """The targets table's rows of `crane-id accept` (bench_clie's `accept_breakdown` summary of
    the fast route): end to end against its target, then the median wall seconds by stage."""
    low, high = accept["end_to_end_range_s"]
    rows = [
        (
            f"crane-id accept, new AG02 recording <= {accept['target_s']:g} s",
            f"{accept['end_to_end_s']:.1f} s end to end ({low:.1f}-{high:.1f} s, median of "
            f"{accept['runs']}), {accept['cpu_s']:.1f} s CPU",
            f"{accept['ratio']:.2f}",
            accept["end_to_end_s"] <= accept["target_s"],
        )
    ]
    parts = [f"{name} {stage['wall_s']:.1f}" for name, stage in accept["stages"].items()]
    return rows + _wrapped_rows("  accept wall s by stage", parts)


def _wrapped_rows(label: str, parts: list[str]) -> list[tuple[str, str, str, None]]:
    """`parts` joined by "; " into lines of about 70 characters (whole parts per line: their
    names hold commas), as table rows under `label` (on the first line only), unjudged."""
    lines = [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(part) > 70:
            lines.append("")
        lines[-1] += f"{'; ' if lines[-1] else ''}{part}"
    return [(label if i == 0 else "", line, "", None) for i, line in enumerate(lines) if line]


def measure_targets(smoke: bool, keep: Path | None = None) -> int:
    """Run the target benchmarks one after the other; print their table."""
    results, failed = {}, []
    with tempfile.TemporaryDirectory(prefix="crane-bench-targets-") as scratch:
        folder = Path(scratch)
        for name, arguments, env in target_runs(folder, smoke, keep or folder / "clone"):
            print(f"\n=== {name} {' '.join(arguments)} ===", flush=True)
            module = TARGET_MODULES.get(name, name)
            command = [sys.executable, "-m", f"benchmarks.{module}", *arguments]
            code = subprocess.run(command, cwd=HERE.parent, env=dict(os.environ, **env)).returncode
            out = folder / f"{name}.json"
            if code or not out.is_file():
                failed.append(name)
                continue
            results[name] = json.loads(out.read_text(encoding="utf-8"))
    print(
        "\n=== targets, one run on this machine (ratio: measured / target; a time is met at"
        " <= 1, a speed-up at >= 1) ==="
    )
    table = targets_table(results)
    print("\n".join([*table, *unmet_pointer(table)]))
    if not smoke:  # every benchmark's JSON of the run, kept beside the other benchmarks' output
        from crane_lib.paths import RESULTS_DIR

        out = RESULTS_DIR / "benchmarks" / "targets.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"table": table, **results}, indent=1), encoding="utf-8")
        print(f"written {out}")
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
