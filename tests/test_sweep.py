"""The papermill sweep driver: runs each condition, caches by content, isolates failures."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from crane_book import kernels, sweep
from crane_lib.errors import InputError

CHAPTER = """# %% tags=["parameters"]
value = 1
fail = 0
out = ""

# %%
import json, pathlib
if fail:
    raise RuntimeError("deliberate failure of this condition")
pathlib.Path(out).write_text(json.dumps({"square": value * value}))
"""


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep, "RESULTS_DIR", tmp_path / "results")
    # the code digest is pinned so edits elsewhere in crane_lib while the test runs cannot interfere
    monkeypatch.setattr(sweep, "code_parts", lambda notebook: {"code crane_lib/x.py": "v1"})
    path = tmp_path / "tiny_chapter.py"
    path.write_text(CHAPTER)
    return path


def test_runs_caches_and_reruns_on_change(chapter, tmp_path):
    conditions = [{"value": v, "fail": 0, "out": str(tmp_path / f"r{v}.json")} for v in (2, 3)]
    first = sweep.run_sweep(chapter, conditions, "tiny", workers=2, show_progress=False)
    assert [o.status for o in first] == ["ran", "ran"]
    assert json.loads((tmp_path / "r3.json").read_text()) == {"square": 9}
    second = sweep.run_sweep(chapter, conditions, "tiny", workers=2, show_progress=False)
    assert [o.status for o in second] == ["cached", "cached"]
    # an input file the condition names changes -> that condition reruns
    data = tmp_path / "input.txt"
    data.write_text("a")
    third = sweep.run_sweep(
        chapter,
        conditions,
        "tiny",
        inputs_of=lambda p: [data] if p["value"] == 2 else [],
        show_progress=False,
    )
    assert [o.status for o in third] == ["ran", "cached"]
    data.write_text("b")
    fourth = sweep.run_sweep(
        chapter,
        conditions,
        "tiny",
        inputs_of=lambda p: [data] if p["value"] == 2 else [],
        show_progress=False,
    )
    assert [o.status for o in fourth] == ["ran", "cached"]


def test_a_change_of_the_code_it_imports_reruns_every_condition_and_says_which(
    chapter, tmp_path, monkeypatch
):
    conditions = [{"value": 6, "fail": 0, "out": str(tmp_path / "r6.json")}]
    assert sweep.run_sweep(chapter, conditions, "tiny_code", show_progress=False)[0].status == "ran"
    assert (
        sweep.run_sweep(chapter, conditions, "tiny_code", show_progress=False)[0].status == "cached"
    )
    monkeypatch.setattr(sweep, "code_parts", lambda notebook: {"code crane_lib/x.py": "v2"})
    report = sweep.run_sweep(chapter, conditions, "tiny_code", show_progress=False)
    assert report[0].status == "ran"
    assert report.log.recomputed == 1 and dict(report.log.reasons) == {"crane_lib/x.py changed": 1}


def test_a_failing_condition_does_not_stop_the_others(chapter, tmp_path):
    conditions = [
        {"value": 4, "fail": 1, "out": str(tmp_path / "r4.json")},
        {"value": 5, "fail": 0, "out": str(tmp_path / "r5.json")},
    ]
    outcomes = sweep.run_sweep(chapter, conditions, "tiny_fail", workers=2, show_progress=False)
    assert outcomes[0].status == "failed" and "deliberate failure" in outcomes[0].error
    assert outcomes[1].status == "ran"
    # a failed condition is not cached: it runs again next time
    again = sweep.run_sweep(chapter, conditions, "tiny_fail", show_progress=False)
    assert [o.status for o in again] == ["failed", "cached"]


def test_conditions_file_errors(tmp_path):
    bad = tmp_path / "c.csv"
    bad.write_text("trajectory,ts\nAG02,0.04\nAP01,\n")
    with pytest.raises(InputError, match="condition 2"):
        sweep.read_conditions(bad)
    with pytest.raises(InputError, match="no such"):
        sweep.read_conditions(tmp_path / "missing.csv")


# ----------------------------------------------------------------------------- batches


def test_a_batch_runs_each_condition_in_one_kernel_and_keeps_a_notebook_per_condition(
    chapter, tmp_path
):
    import nbformat

    conditions = [{"value": v, "fail": 0, "out": str(tmp_path / f"b{v}.json")} for v in (2, 3, 4)]
    outcomes = sweep.run_sweep(chapter, conditions, "tiny_batch", batch_size=3, show_progress=False)
    assert [o.status for o in outcomes] == ["ran"] * 3 and outcomes.batches == [3]
    for v in (2, 3, 4):
        assert json.loads((tmp_path / f"b{v}.json").read_text()) == {"square": v * v}
        notebook = nbformat.read(
            sweep.RESULTS_DIR
            / "sweeps"
            / "tiny_batch"
            / "notebooks"
            / f"value-{v}_fail-0_out-{str(tmp_path / f'b{v}.json').replace('/', '-')}.ipynb",
            as_version=4,
        )
        injected = [
            c for c in notebook.cells if "injected-parameters" in c.metadata.get("tags", [])
        ]
        assert (
            len(injected) == 1 and f"value = {v}" in injected[0].source
        )  # this condition's parameters only
        assert not any("%reset" in c.source for c in notebook.cells)
    assert not (sweep.RESULTS_DIR / "sweeps" / "tiny_batch" / ".work").exists()


def test_a_failure_inside_a_batch_does_not_stop_the_rest_of_the_batch(chapter, tmp_path):
    conditions = [
        {"value": v, "fail": int(v == 3), "out": str(tmp_path / f"f{v}.json")} for v in (2, 3, 4)
    ]
    outcomes = sweep.run_sweep(
        chapter, conditions, "tiny_batch_fail", batch_size=3, show_progress=False
    )
    assert [o.status for o in outcomes] == ["ran", "failed", "ran"]
    assert "deliberate failure" in outcomes[1].error
    assert (tmp_path / "f4.json").exists() and not (tmp_path / "f3.json").exists()


KERNEL_CHAPTER = """# %% tags=["parameters"]
value = 1
die = 0
out = ""

# %%
import json, os, pathlib, signal
assert "leftover" not in globals(), "a name from an earlier condition survived"
leftover = value
if die:
    os.kill(os.getpid(), signal.SIGKILL)  # this condition's kernel dies
pathlib.Path(out).write_text(json.dumps({"kernel": os.getpid()}))
"""


def test_a_worker_keeps_its_kernel_across_batches_with_a_clean_namespace_and_replaces_a_dead_one(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(sweep, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(sweep, "code_parts", lambda notebook: {"code crane_lib/x.py": "v1"})
    chapter = tmp_path / "kernel_chapter.py"
    chapter.write_text(KERNEL_CHAPTER)
    conditions = [
        {"value": v, "die": int(v == 3), "out": str(tmp_path / f"k{v}.json")} for v in (1, 2, 3, 4)
    ]
    outcomes = sweep.run_sweep(
        chapter, conditions, "kernels", workers=1, batch_size=1, show_progress=False
    )
    assert [o.status for o in outcomes] == ["ran", "ran", "failed", "ran"] and outcomes.batches == [
        1,
        1,
        1,
        1,
    ]
    assert "Dead" in outcomes[2].error or "died" in outcomes[2].error.lower(), outcomes[2].error
    kernel = {v: json.loads((tmp_path / f"k{v}.json").read_text())["kernel"] for v in (1, 2, 4)}
    assert kernel[1] == kernel[2]  # the second batch ran in the first one's kernel
    assert kernel[4] != kernel[1]  # the kernel that died was replaced
    # keep_kernels=False: a kernel of its own per batch (the driver before batching, bench_sweep's
    # reference)
    fresh = [{"value": v, "die": 0, "out": str(tmp_path / f"f{v}.json")} for v in (5, 6)]
    assert [
        o.status
        for o in sweep.run_sweep(
            chapter,
            fresh,
            "fresh",
            workers=1,
            batch_size=1,
            keep_kernels=False,
            show_progress=False,
        )
    ] == ["ran", "ran"]
    assert len({json.loads((tmp_path / f"f{v}.json").read_text())["kernel"] for v in (5, 6)}) == 2


# ----------------------------------------------------------------------------- Dask distributed

DASK_CHAPTER = """# %% tags=["parameters"]
value = 1
fail = 0
out = ""
kill_marker = ""

# %%
import os, pathlib, signal
import numpy as np
from crane_lib.records import write_json_record
if kill_marker and not pathlib.Path(kill_marker).exists():
    pathlib.Path(kill_marker).write_text(str(os.getppid()))  # the worker killed once
    # the kernel's parent is the Dask worker: it dies mid-condition
    os.kill(os.getppid(), signal.SIGKILL)
if fail:
    raise RuntimeError("deliberate failure of this condition")
rng = np.random.default_rng(value)
write_json_record(out, {"value": value, "draws": rng.normal(size=5).tolist()})
"""


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_dashboard_address=None,
        # the scheduler's health routes on a free port: 8787 may be another worker's cluster's
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    ) as local:
        with distributed.Client(local, set_as_default=False) as client:
            yield client


@pytest.fixture
def dask_chapter(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(sweep, "code_parts", lambda notebook: {"code crane_lib/x.py": "v1"})
    path = tmp_path / "dask_chapter.py"
    path.write_text(DASK_CHAPTER)
    return path


def test_a_hung_worker_fails_the_check_within_its_timeout(cluster, tmp_path):
    """A worker whose event loop is blocked (a function run there that does not return) is a
    SchedulerError after the timeout, not a check that waits as long as the worker hangs."""
    import threading
    import time

    hang_s = 6.0
    # Client.run runs a plain function in the worker's event loop: both workers stop answering
    blocker = threading.Thread(target=cluster.run, args=(time.sleep, hang_s), daemon=True)
    blocker.start()
    time.sleep(0.5)
    started = time.monotonic()
    try:
        with pytest.raises(sweep.SchedulerError, match=r"did not answer the check within 1 s"):
            sweep.check_workers(cluster, tmp_path, timeout_s=1.0)
        assert time.monotonic() - started < hang_s - 2
    finally:
        blocker.join(hang_s + 10)  # the workers answer again before the next test
    assert list(tmp_path.iterdir()) == []  # the visibility token is removed either way


def test_workers_with_another_crane_lib_are_refused_with_both_versions(cluster, tmp_path):
    import crane_lib

    def pretend(version):
        import crane_lib as lib

        lib.__version__ = version

    cluster.run(pretend, "9.9.9-other")
    try:
        with pytest.raises(
            sweep.SchedulerError,
            match=rf"crane_lib 9\.9\.9-other .*this client crane_lib {crane_lib.__version__}",
        ):
            sweep.check_workers(cluster, tmp_path)
    finally:
        cluster.run(pretend, crane_lib.__version__)
    # the same workers pass once they run this client's crane_lib again (a worker killed by another
    # test may still be restarting)
    assert sweep.check_workers(cluster, tmp_path) == sorted(cluster.scheduler_info()["workers"])


def test_a_scheduler_address_connects_past_the_checks_that_refuse_other_peers(cluster):
    address = cluster.scheduler.address  # a real scheduler: knocked on, then a started client
    client = sweep.connect(address, 5)
    try:
        assert client.status == "running" and set(client.scheduler_info()["workers"])
    finally:
        client.close()


def test_dask_gives_byte_identical_records_to_the_local_run(cluster, dask_chapter, tmp_path):
    def conditions(where):
        return [
            {"value": v, "fail": 0, "out": str(tmp_path / where / f"r{v}.json"), "kill_marker": ""}
            for v in (1, 2, 3)
        ]

    local = sweep.run_sweep(
        dask_chapter, conditions("local"), "same_local", workers=2, show_progress=False
    )
    dask = sweep.run_sweep(
        dask_chapter,
        conditions("dask"),
        "same_dask",
        scheduler=cluster,
        show_progress=False,
        batch_size=2,
    )
    assert [o.status for o in local] == [o.status for o in dask] == ["ran"] * 3
    assert dask.executor.startswith("dask") and {o.worker for o in dask} <= set(
        cluster.scheduler_info()["workers"]
    )
    for v in (1, 2, 3):
        assert (tmp_path / "local" / f"r{v}.json").read_bytes() == (
            tmp_path / "dask" / f"r{v}.json"
        ).read_bytes()
    # the cache is shared through the results folder: a rerun on the other executor skips everything
    again = sweep.run_sweep(
        dask_chapter, conditions("dask"), "same_dask", workers=1, show_progress=False
    )
    assert [o.status for o in again] == ["cached"] * 3


def test_dask_retries_a_condition_whose_worker_died_and_leaves_nothing_half_written(
    cluster, dask_chapter, tmp_path
):
    marker = tmp_path / "killed"
    conditions = [
        {
            "value": v,
            "fail": 0,
            "out": str(tmp_path / f"k{v}.json"),
            "kill_marker": str(marker) if v == 5 else "",
        }
        for v in (4, 5)
    ]
    outcomes = sweep.run_sweep(
        dask_chapter, conditions, "killed", scheduler=cluster, show_progress=False, batch_size=1
    )
    assert marker.exists(), "the worker was not killed"
    assert [o.status for o in outcomes] == ["ran", "ran"]
    assert json.loads((tmp_path / "k5.json").read_text())["value"] == 5
    out_dir = sweep.RESULTS_DIR / "sweeps" / "killed"
    leftovers = [
        p
        for p in [*tmp_path.glob(".*.tmp"), *out_dir.rglob("*")]
        if p.name.startswith(".") or p.suffix == ".tmp"
    ]
    assert leftovers == [] and not (out_dir / ".work").exists()
    assert sorted(p.name for p in (out_dir / "keys").iterdir()) == sorted(
        f"{sweep.condition_name(c)}.json" for c in conditions
    )
    # the killed worker could not shut its kernel down; the next kernel manager removes its
    # sockets and connection file
    killed_worker_files = f"{kernels.SOCKET_PREFIX}{int(marker.read_text())}-*"
    temporary = Path(tempfile.gettempdir())
    kernels.kernel_manager()
    assert list(temporary.glob(killed_worker_files)) == []


def test_dask_reports_a_failing_condition_and_the_others_go_on(cluster, dask_chapter, tmp_path):
    conditions = [
        {"value": v, "fail": int(v == 7), "out": str(tmp_path / f"x{v}.json"), "kill_marker": ""}
        for v in (6, 7, 8)
    ]
    outcomes = sweep.run_sweep(
        dask_chapter, conditions, "dask_fail", scheduler=cluster, show_progress=False, batch_size=3
    )
    assert [o.status for o in outcomes] == [
        "ran",
        "failed",
        "ran",
    ] and "deliberate failure" in outcomes[1].error


def test_an_unreachable_scheduler_stops_the_pipeline_before_any_work(tmp_path):
    import subprocess
    import sys

    env = {**__import__("os").environ, "CRANE_RESULTS_DIR": str(tmp_path / "results")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "crane_book.pipeline",
            "--profile",
            "quick",
            "--scheduler",
            "tcp://127.0.0.1:9",
            "--scheduler-timeout",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 2
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "tcp://127.0.0.1:9" in lines[0] and "unreachable" in lines[0]
    assert not (tmp_path / "results").exists()  # no recording, no sweep


@pytest.mark.parametrize("layout", ["imports, parameters, work", "parameters, imports, work"])
def test_the_setup_cell_is_the_notebooks_imports_wherever_its_parameters_cell_is(layout):
    """The breakdown's setup (overhead) is the imports cell; the computation after the parameters
    cell is compute, whichever comes first."""
    import nbformat

    def code(source, seconds, tags=()):
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = list(tags)
        cell.metadata["papermill"] = {"duration": seconds}
        return cell

    imports = code("from crane_lib.identification import condition", 1.5, ["remove-cell"])
    parameters = [
        code("trajectory = 'AG02'", 0.01, ["parameters"]),
        code("trajectory = 'AP01'", 0.01, ["injected-parameters"]),
    ]
    work = code("result = condition.record_condition(trajectory, ts, run)", 3.0)
    chapter = (
        [imports, *parameters, work]
        if layout.startswith("imports")
        else [*parameters, imports, work]
    )
    cells = [
        nbformat.v4.new_markdown_cell("condition 1"),
        code("%reset -f", 0.02, [sweep.RESET_TAG]),
        *chapter,
    ]
    total, setup = sweep._cell_times(cells)
    assert setup == 1.5 and total == pytest.approx(1.5 + 0.02 + 0.02 + 3.0)
