"""Every benchmark runs in smoke mode (smallest size, on data it records itself), so none can rot.

Each benchmarks/bench_*.py runs as `python -m benchmarks.<name> --smoke` in a subprocess whose
results folder is this test's temporary folder, exactly as `python -m benchmarks --smoke` runs it.
These runs are benchmarks, not tests of the library (about 150 s of the suite's time): they carry
the mark `benchmark_smoke`, which the suite deselects and `make benchmarks SMOKE=1` selects.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import scripts
from benchmarks._smoke import ISOLATED_ENV

REPO_ROOT = Path(__file__).resolve().parent.parent
SMOKE_TIMEOUT_S = (
    900  # far above a smoke run's seconds: a hang fails, a slow shared machine does not
)


@pytest.mark.benchmark_smoke
@pytest.mark.parametrize("script", scripts(), ids=lambda s: s.stem)
def test_benchmark_smoke(script, tmp_path):
    env = dict(os.environ, CRANE_RESULTS_DIR=str(tmp_path), **{ISOLATED_ENV: "1"})
    run = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{script.stem}", "--smoke"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=SMOKE_TIMEOUT_S,
    )
    assert run.returncode == 0, (
        f"{script.stem} --smoke failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    )
    assert run.stdout.strip(), f"{script.stem} --smoke printed nothing"


def test_every_benchmark_has_a_smoke_mode():
    for script in scripts():
        text = script.read_text(encoding="utf-8")
        assert "def main(argv" in text and "add_smoke_argument" in text, (
            f"{script.name}: main(argv) with --smoke expected"
        )


def test_smoke_refuses_the_real_results_folder(monkeypatch):
    from benchmarks import _smoke

    monkeypatch.delenv(ISOLATED_ENV, raising=False)
    with pytest.raises(RuntimeError, match="throwaway"):
        _smoke.smoke_recordings()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--faithful-shortest", "0", "--faithful"], "--faithful-shortest N"),
        (["--executors-profile", "full", "--smoke"], "--executors-profile full"),
        (["--executors-profile", "full"], "AG01_run1.npz: no recording"),
    ],
)
def test_bench_sweep_refuses_bad_options_and_a_missing_data_set_before_any_work(
    argv, says, tmp_path
):
    env = dict(os.environ, CRANE_RESULTS_DIR=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_sweep", *argv],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [line for line in run.stderr.splitlines() if line.startswith("bench_sweep.py: error:")]
    assert run.returncode == 2 and len(errors) == 1 and says in errors[0], run.stderr
    assert not any(tmp_path.iterdir())  # nothing recorded, no sweep, no result file


def test_targets_table_says_met_on_the_right_side_of_each_target():
    from benchmarks.__main__ import targets_table, unmet_pointer

    def table(minutes, speedup, within, load_s, ratio):
        conditions = [{}] * 160
        return targets_table(
            {
                "bench_build": {
                    "wall_s": 60 * minutes,
                    "cpu_s": 3000.0,
                    "profile": "full",
                    "target_min": 30.0,
                    "pipeline_steps": [{"step": f"step {i}", "cpu_s": 600.0} for i in range(12)],
                },
                "bench_clie": {
                    "sweep": {
                        "conditions": conditions,
                        "speedup": speedup,
                        "speedup_target": 2.5,
                        "within_tolerance": within,
                        "refined_again": 3,
                        "one step": {
                            "largest_objective_change": 0.02,
                            "largest_parameter_change_se": 1.5,
                        },
                    }
                },
                "bench_model": {"best_s": load_s, "target_s": 1.0},
                "bench_audit": {
                    "ours_s": 0.1,
                    "pinocchio_s": 0.1 * ratio,
                    "poses": 221_875,
                    "ratio": ratio,
                    "ratio_target": 20.0,
                },
            }
        )

    met = table(29.0, 2.6, 160, 0.9, 21.0)
    missed = table(31.0, 2.4, 159, 1.1, 19.0)
    assert len(met) == len(missed) == 8  # the twelve steps' CPU-minutes wrap onto three lines
    # under a table with an unmet target, where what remains and what would close it are read
    assert unmet_pointer(met) == [] and unmet_pointer(missed)[0].startswith("not met: what remains")
    verdict = "  met "  # "not met" has one space before "met"
    judged = [line for line in met if "=" in line.split("  ")[0] or "same end point" in line]
    assert len(judged) == 5 and all(verdict in line for line in judged), met
    assert not any(verdict in line for line in missed), missed
    assert "1.03" in missed[0] and "0.96" in missed[4] and "2.00 %, 1.50 SE" in missed[5]
    assert all(f"step {i} 10.0" in "".join(met[1:4]) for i in range(12))


def test_targets_table_judges_the_full_sweep_against_the_fast_route_before_the_exact_jacobian():
    from benchmarks.__main__ import targets_table

    def table(one_step_s, earlier=True):
        sweep = {
            "conditions": [{}] * 160,
            "speedup": 1.7,
            "speedup_target": 2.5,
            "within_tolerance": 151,
            "refined_again": 16,
            "one step": {"largest_objective_change": 0.02, "largest_parameter_change_se": 1.5},
            "one_step_s": one_step_s,
            "one_step_simulations": 3_400,
            "one_step_jacobians": 1_500,
            "refined_again_s": 90.0,
        }
        if earlier:
            sweep["earlier_fast_s"] = 1177.0
            sweep["speedup_over_earlier"] = 1177.0 / one_step_s
            sweep["speedup_over_earlier_target"] = 3.0
        return targets_table({"bench_clie": {"sweep": sweep}})

    slow, fast = table(470.0), table(390.0)
    row = next(line for line in slow if "before the exact Jacobian" in line)
    assert "2.50x (470 s summed against 1,177 s, an earlier run's)" in row
    assert "0.83" in row and "not met" in row
    assert "3,400 simulations, 1,500 DIDIM Jacobians; 16 refined again (90 s)" in "".join(slow)
    row = next(line for line in fast if "before the exact Jacobian" in line)
    assert "3.02x" in row and "  met " in row
    # a sweep other than the full one (no earlier time to compare with) has no such row
    assert not any("before the exact Jacobian" in line for line in table(470.0, earlier=False))


def test_targets_table_judges_the_exact_route_by_its_speed_and_its_end_points():
    from benchmarks.__main__ import EXACT_SWEEP_CONDITIONS, target_runs, targets_table

    def rows(exact_s, within):
        route = {"simulations": 22, "jacobian_evaluations": 10}
        ag02 = {
            "fast": {**route, "wall_time_s": 12.0},
            "exact": {**route, "wall_time_s": 150.0},
            "exact_vs_fast": {
                "speedup": 0.08,
                "simulations": [22, 47],
                "jacobians": [10, 15],
                "speedup_target": 3.0,
            },
        }
        exact = {
            "conditions": ["AP01:40", "AP01:80", "AP03:40", "AP03:80"],
            "within_tolerance": within,
            "fast_within_tolerance": 1,
            "exact_one_step_s": exact_s,
            "exact_paper_step_s": 360.0,
            "fast_one_step_s": 40.0,
            "speedup_over_fast": 40.0 / exact_s,
            "speedup_over_fast_target": 3.0,
        }
        return targets_table({"bench_clie": {"AG02": ag02, "sweep": {"exact": exact}}})

    slow, fast = rows(240.0, 3), rows(12.0, 4)
    assert "not met" in slow[0] and "0.06" in slow[0] and "4 sweep conditions 0.17x" in slow[0]
    assert "(240 s against 40 s)" in slow[0]
    assert "AG02 40 ms 0.08x (150.0 s against 12.0 s)" in slow[1]
    assert "47 simulations, 15 with sensitivities, against 22 and 10 DIDIM" in slow[1]
    assert "not met" in slow[-1] and "3 of 4" in slow[-1] and "fast route 1 of them" in slow[-1]
    assert "about 6.7 h" in slow[-1]  # 160 conditions at (240 + 360) / 4 s each
    assert "  met " in fast[0] and "1.11" in fast[0] and "  met " in fast[-1]
    # the targets run refines those four conditions by the exact route
    runs = {name: arguments for name, arguments, _ in target_runs(Path("f"), False, Path("c"))}
    assert EXACT_SWEEP_CONDITIONS in runs["bench_clie"]


def test_targets_table_judges_the_ci_run_by_its_time_and_its_exit_status():
    from benchmarks.__main__ import TARGET_MODULES, target_runs, targets_table

    def rows(minutes, returncode):
        steps = [{"step": "make test", "wall_s": 400.0}, {"step": "browser step", "wall_s": 30.0}]
        ci = {"wall_s": 60 * minutes, "steps": steps, "target_min": 12.0, "returncode": returncode}
        return targets_table({"bench_ci": ci})

    assert "  met " in rows(11.5, 0)[0] and "0.96" in rows(11.5, 0)[0]
    assert "not met" in rows(12.5, 0)[0] and "not met" in rows(11.5, 1)[0]
    assert "(failed)" in rows(11.5, 1)[0] and "make test 400 s; browser step 30 s" in rows(9, 0)[1]
    # the full run measures it with bench_build's --ci mode; the smoke run has no such size
    runs = {name: arguments for name, arguments, _ in target_runs(Path("f"), False, Path("c"))}
    assert TARGET_MODULES["bench_ci"] == "bench_build" and "--ci" in runs["bench_ci"]
    assert "bench_ci" not in {name for name, _, _ in target_runs(Path("f"), True, Path("c"))}


def test_targets_table_states_the_machine_speed_at_the_run_start_and_end():
    from benchmarks.__main__ import TARGET_MODULES, target_runs, targets_table
    from benchmarks.bench_audit import IDLE_PINOCCHIO_POSES, IDLE_PINOCCHIO_S

    def first_row(start_s, end_s, poses=IDLE_PINOCCHIO_POSES):
        idle = IDLE_PINOCCHIO_S if poses == IDLE_PINOCCHIO_POSES else None
        start = {"poses": poses, "pinocchio_s": start_s, "idle_pinocchio_s": idle}
        dense = {"ours_s": 0.3, "pinocchio_s": end_s, "poses": poses, "ratio": end_s / 0.3}
        return targets_table({"machine": start, "bench_audit": {**dense, "ratio_target": 20.0}})[0]

    slow = first_row(3 * IDLE_PINOCCHIO_S, 4 * IDLE_PINOCCHIO_S)
    assert slow.startswith("machine: Pinocchio's loop") and " met " not in slow  # unjudged
    assert "at the start (3.0x), " in slow and "at the end (4.0x) against" in slow
    assert f"idle targets run's {IDLE_PINOCCHIO_S:g} s" in slow
    # at smoke size no factor: the idle run timed the full pose set
    smoke = first_row(0.02, 0.03, poses=2_000)
    assert "0.02 s at the start, 0.03 s at the end" in smoke and "x" not in smoke.split(":")[1]
    # a run without the start's measurement prints no machine row
    dense = {"ours_s": 0.3, "pinocchio_s": 9.0, "poses": 9, "ratio": 30.0, "ratio_target": 20.0}
    assert not targets_table({"bench_audit": dense})[0].startswith("machine")
    # the targets run times the machine first, with bench_audit's --machine mode
    for smoke_run in (False, True):
        name, arguments, _ = target_runs(Path("f"), smoke_run, Path("c"))[0]
        assert name == "machine" and "--machine" in arguments
    assert TARGET_MODULES["machine"] == "bench_audit"


def test_a_benchmarks_json_appears_whole_at_the_end_or_not_at_all(tmp_path, capsys):
    import argparse
    import json

    from benchmarks._out import json_out

    parser = argparse.ArgumentParser()
    out = tmp_path / "deep" / "result.json"
    with json_out(parser, out) as write:
        write({"seconds": 1.5})
        # nothing on disk while the measurement runs, so a killed benchmark leaves nothing
        assert list(out.parent.iterdir()) == []
    assert json.loads(out.read_text(encoding="utf-8")) == {"seconds": 1.5}
    assert f"written {out}" in capsys.readouterr().out
    # a measurement that fails, or ends without a result, leaves nothing behind
    failed, empty = tmp_path / "failed.json", tmp_path / "empty.json"
    with pytest.raises(RuntimeError), json_out(parser, failed) as write:
        raise RuntimeError("the build failed")
    with json_out(parser, empty) as write:
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep"]
    assert [p.name for p in out.parent.iterdir()] == ["result.json"]  # no temporary file left
    with json_out(parser, None) as write:  # no --out: nothing written
        write({"seconds": 1.5})
    assert "written" not in capsys.readouterr().out


def test_a_smoke_runs_own_process_checks_the_given_out(tmp_path):
    # a smoke run measures in a child process with a throwaway results folder: the --out given
    # reaches it and is checked there before the smoke
    (tmp_path / "already.txt").write_text("here", encoding="utf-8")
    out = tmp_path / "already.txt" / "build.json"
    command = [sys.executable, "-m", "benchmarks.bench_build", "--smoke", "--out", str(out)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "already.txt is not a folder" in done.stderr, done.stderr
    assert "written" not in done.stdout and sorted(tmp_path.iterdir()) == [tmp_path / "already.txt"]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["-m", "benchmarks", "--keep", "{tmp}/kept"], "--keep DIR: only with --targets"),
        (["-m", "benchmarks", "--targets", "--keep", "{tmp}"], "not empty"),
        (["-m", "benchmarks", "--targets", "bench_model"], "give no names"),
        (["-m", "benchmarks.bench_model", "--out", "{tmp}/load.json"], "only with --cached-load"),
        (["-m", "benchmarks.bench_audit", "--dense", "--machine"], "--dense and --machine"),
        # a benchmark's --out is checked before its minutes or hours of measurement
        (["-m", "benchmarks.bench_audit", "--dense", "--out", "/proc/a.json"], "cannot be written"),
        (["-m", "benchmarks.bench_build", "--out", "{tmp}"], "a folder; expected a JSON file"),
        (
            ["-m", "benchmarks.bench_clie", "--sweep-only", "--out", "{tmp}/already.txt/c.json"],
            "already.txt is not a folder",
        ),
        (
            ["-m", "benchmarks.bench_model", "--cached-load", "--out", "/proc/load.json"],
            "--out /proc/load.json: cannot be written",
        ),
        (
            ["-m", "benchmarks.bench_model", "--cached-load", "--out", "{tmp}/already.txt/l.json"],
            "already.txt is not a folder",
        ),
        (["-m", "benchmarks.bench_model", "--cached-load", "--out", "{tmp}"], "a folder"),
        (
            ["-m", "benchmarks.bench_build", "--ci", "--keep", "{tmp}/c", "--profile", "full"],
            "--ci times .ci/run as it is: no --profile or --jobs",
        ),
        (["-m", "benchmarks.bench_build", "--ci", "--jobs", "4"], "no --profile or --jobs"),
        (["-m", "benchmarks.bench_build", "--ci", "--smoke"], "--ci runs the whole of .ci/run"),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "quick", "--exact-conditions", "AP01:30"],
            "--exact-conditions AP01:30: expected TRAJECTORY:MS of the sweep's conditions",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "full", "--conditions", "AP01:40,ZZ9:40"],
            "--conditions ZZ9:40: expected",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "full", "--examine", "PC08:10,PC08:15"],
            "--examine PC08:15: expected TRAJECTORY:MS of the sweep's conditions",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "none", "--examine", "PC08:10"],
            "--examine: name conditions of a sweep (--sweep quick or full, not none)",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "none", "--census"],
            "--census: with a sweep (--sweep quick or full), not --examine or --smoke",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "quick", "--census", "--rows", "{tmp}/r"],
            "--rows FILE: only with a sweep comparison (--sweep quick or full)",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "none", "--rows", "{tmp}/rows.jsonl"],
            "--rows FILE: only with a sweep comparison (--sweep quick or full)",
        ),
        (
            ["-m", "benchmarks.bench_clie", "--sweep", "quick", "--rows", "{tmp}"],
            ": not a file",
        ),
    ],
)
def test_target_options_are_refused_in_one_line_before_any_work(
    argv, says, tmp_path, monkeypatch, capsys
):
    # run in this process through the module's main(), as `python -m` runs it (an interpreter per
    # case cost about 1.4 s of imports); the status is what main returns or exits with
    (tmp_path / "already.txt").write_text("here", encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    flag, module_name, *arguments = argv
    assert flag == "-m"
    module = importlib.import_module(
        module_name + (".__main__" if module_name == "benchmarks" else "")
    )

    def ran(*args, **kwargs):
        raise AssertionError(f"a command ran: {args}")

    monkeypatch.setattr(subprocess, "run", ran)  # a refusal comes before any benchmark runs
    monkeypatch.setattr(subprocess, "Popen", ran)
    monkeypatch.chdir(REPO_ROOT)
    try:
        status = module.main([a.format(tmp=tmp_path) for a in arguments])
    except SystemExit as refused:
        status = refused.code
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error:" in line]
    assert status == 2 and len(errors) == 1 and says in errors[0], captured.err
    assert not captured.out.strip(), captured.out  # refused before a measurement was printed
    assert sorted(tmp_path.rglob("*")) == before  # nothing cloned, measured or written


@pytest.mark.parametrize(
    "argv, says",
    [
        ([""], "benchmark '': expected"),
        (["model", "no_such"], "benchmark no_such: expected"),
        (["--smoke", "--targets", "--keep", "{tmp}/kept"], "--keep DIR: not with --smoke"),
        (["--targets", "--keep", "{tmp}/already.txt"], "already.txt: not a folder"),
        (["--targets", "--keep", "{tmp}/already.txt/kept"], "already.txt is not a folder"),
    ],
)
def test_names_and_keep_are_refused_before_any_benchmark_runs(
    argv, says, tmp_path, monkeypatch, capsys
):
    from benchmarks import __main__ as bench

    (tmp_path / "already.txt").write_text("here", encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))

    def ran(*args, **kwargs):
        raise AssertionError(f"a benchmark ran: {args}")

    monkeypatch.setattr(bench.subprocess, "run", ran)  # a refusal must come before any of them
    monkeypatch.setattr(bench, "measure_targets", ran)
    # relative paths: a long temporary folder would be cut short in the message
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as refused:
        bench.main([a.format(tmp=".") for a in argv])
    errors = capsys.readouterr().err.splitlines()
    assert refused.value.code == 2 and len(errors) == 1 and says in errors[0], errors
    if says.startswith("benchmark"):  # the known names are named
        assert all(name in errors[0] for name in bench.known_names()), errors
        assert "arithmetic" in bench.known_names() and "model" in bench.known_names()
    assert sorted(tmp_path.rglob("*")) == before  # nothing cloned, measured or written


def test_the_ci_benchmark_reads_every_step_ci_run_reports():
    from benchmarks.bench_build import ci_steps

    # .ci/run's own step function, run on three commands: the benchmark must read its lines
    ci_run = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    step = next(line for line in ci_run.splitlines() if line.startswith("step() {"))
    script = "\n".join(
        [
            "started=$SECONDS",
            step,
            "step true",
            "step env A=1 true -m pytest tests/test_claims.py",  # true ignores its arguments
            "step true -m pytest tests/test_browser.py",
        ]
    )
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    steps = ci_steps("noise\n" + run.stdout + "ci: not a step line\n")
    assert [s["step"] for s in steps] == ["true", "claims on the build's records", "browser step"]
    assert all(s["wall_s"] == 0.0 for s in steps)
