"""The build's step clock: wall and CPU seconds per step, the CPU of reaped child processes
included, recorded even when a step fails, and left out of the determinism comparison."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from crane_book import build_clock

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"


def test_a_step_counts_the_cpu_of_the_processes_it_ran(tmp_path, monkeypatch):
    monkeypatch.setattr(build_clock, "TIMINGS_DIR", tmp_path / "timings")
    clock = build_clock.BuildClock("quick", 2)
    with clock.step("child"):
        subprocess.run([sys.executable, "-c", BURN], check=True)
    with pytest.raises(RuntimeError):
        with clock.step("failing"):
            raise RuntimeError("a step that fails")
    path = clock.write()
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    assert path == tmp_path / "timings" / "pipeline_quick.json"
    assert [s["step"] for s in record["steps"]] == ["child", "failing"]
    child = record["steps"][0]
    assert child["cpu_s"] >= 0.35 and child["wall_s"] >= 0.35
    assert record["cpu_s"] >= child["cpu_s"] and record["jobs"] == 2


def _determinism():
    spec = importlib.util.spec_from_file_location(
        "determinism", Path(__file__).resolve().parent.parent / "tools" / "determinism.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_determinism_check_leaves_the_timings_out_and_nothing_else(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for root, seconds in ((first, 1.0), (second, 2.0)):
        (root / "timings").mkdir(parents=True)
        (root / "timings" / "pipeline_quick.json").write_text(json.dumps({"wall_s": seconds}))
        (root / "clie").mkdir()
        (root / "clie" / "AG02.json").write_text(json.dumps({"x": seconds}))
    verdict = _determinism().compare(first, second)
    assert verdict["differ"] == ["clie/AG02.json"]
    assert not any("timings" in name for names in verdict.values() for name in names)


def test_the_step_times_do_not_decide_the_pages(tmp_path):
    from crane_book import pages

    (tmp_path / "clie").mkdir()
    (tmp_path / "clie" / "AG02.json").write_text("{}")
    before = pages.results_digest(tmp_path)
    (tmp_path / "timings").mkdir()
    (tmp_path / "timings" / "pipeline_quick.json").write_text(json.dumps({"wall_s": 1.0}))
    assert pages.results_digest(tmp_path) == before
    (tmp_path / "clie" / "AG02.json").write_text('{"x": 1}')
    assert pages.results_digest(tmp_path) != before
