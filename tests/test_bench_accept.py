"""The accept benchmark's reading of `crane-id accept --timings` and its rows in the targets
table (the run itself is `benchmarks/bench_clie.py --accept-record SEED`, too slow for the suite;
its smoke form runs with `make benchmarks SMOKE=1`)."""

from __future__ import annotations

import pytest

from benchmarks import bench_clie
from benchmarks.__main__ import targets_table
from crane_lib.acceptance.accepted import StageTimes


def _summary(walls, stages=None):
    stages = stages or {
        "process start, imports": {"wall_s": 1.0, "wall_range_s": [0.9, 1.2], "cpu_s": 0.95},
        "refine (fast)": {"wall_s": 6.6, "wall_range_s": [6.5, 7.0], "cpu_s": 6.5},
        "audit over Theta": {"wall_s": 0.8, "wall_range_s": [0.7, 0.9], "cpu_s": 1.5},
    }
    median = sorted(walls)[len(walls) // 2]
    return {
        "route": "fast",
        "runs": len(walls),
        "end_to_end_s": median,
        "end_to_end_range_s": [min(walls), max(walls)],
        "cpu_s": 10.5,
        "stages": stages,
        "target_s": bench_clie.ACCEPT_TARGET_S,
        "ratio": median / bench_clie.ACCEPT_TARGET_S,
        "verdict": "ACCEPTED: ...",
    }


def test_the_command_s_timing_lines_are_what_the_benchmark_reads():
    clock = StageTimes()
    clock.add("process start, imports", 0.8, 0.7)
    for stage in ("read the log", "refine (fast)", "audit over Theta", None):
        clock(stage)
    printed = "\n".join(["AG02 at 40 ms: kappa 34.7", *clock.lines(), "ACCEPTED: PD"])
    found = bench_clie.TIMING_LINE.findall(printed)
    assert [name for name, _, _ in found] == [
        "process start, imports",
        "read the log",
        "refine (fast)",
        "audit over Theta",
    ]
    assert all(float(cpu) >= 0 for _, _, cpu in found)


@pytest.mark.parametrize("walls, met", [([9.1, 9.6, 11.0], True), ([9.9, 10.4, 10.2], False)])
def test_the_targets_table_judges_the_median_end_to_end_time(walls, met):
    rows = targets_table({"bench_clie": {"accept": {"fast": _summary(walls)}}})
    assert rows[0].startswith("crane-id accept, new AG02 recording <= 10 s")
    assert ("  met " in rows[0]) is met and ("not met" in rows[0]) is (not met)
    median = sorted(walls)[1]
    span = f"({min(walls):.1f}-{max(walls):.1f} s, median of 3)"
    assert f"{median:.1f} s end to end {span}" in rows[0]
    assert f"{median / 10:.2f}" in rows[0]
    breakdown = " ".join(rows[1:])
    assert "process start, imports 1.0" in breakdown and "refine (fast) 6.6" in breakdown
    assert "audit over Theta 0.8" in breakdown


def test_no_accept_run_adds_no_row():
    assert targets_table({"bench_clie": {"accept": {}}}) == []
