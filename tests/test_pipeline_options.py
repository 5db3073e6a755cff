"""The book's commands refuse a bad option before any work: one line, exit status 2, no traceback.

The pipeline runs as a subprocess with its results folder under tmp_path, as `make book` runs it;
a refused value must leave that folder absent (no recording, no sweep). The scheduler checks
include peers that accept connections but are not Dask schedulers, started here on 127.0.0.1.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from crane_book import options, pages, sweep

REPO = Path(__file__).resolve().parent.parent
# the environment variables of a surrounding make or shell that would change what is tested
FOREIGN = ("CRANE_SCHEDULER", "JOBS", "SCHEDULER", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")


def clean_env(tmp_path, **extra) -> dict:
    """This process's environment with the results folder under tmp_path, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN}
    return {**env, "CRANE_RESULTS_DIR": str(tmp_path / "results"), **extra}


def run_pipeline(tmp_path, *arguments, limit_s=120, **extra):
    """Run the pipeline (quick profile) with `arguments`; (completed run, wall seconds)."""
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "crane_book.pipeline", "--profile", "quick", *arguments],
        capture_output=True,
        text=True,
        env=clean_env(tmp_path, **extra),
        timeout=limit_s,
    )
    return run, time.monotonic() - started


def refusal(run, tmp_path) -> str:
    """The one line of a refusal, after checking exit status 2, no traceback, nothing written."""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stdout.strip() == ""
    assert not (tmp_path / "results").exists()  # no recording, no sweep, no key
    return lines[0]


EXPECT_JOBS = "expected a whole number of processes from 1 to 256"
EXPECT_ADDRESS = "expected a Dask scheduler address tcp://HOST:PORT"
EXPECT_SECONDS = "expected a number of seconds above 0 and at most 600"


BAD_OPTIONS = [
    (["--jobs", "0"], "--jobs 0:", EXPECT_JOBS),
    (["--jobs", "-1"], "--jobs -1:", EXPECT_JOBS),
    (["--jobs", "100000"], "--jobs 100000:", EXPECT_JOBS),
    (["--jobs", "2.5"], "--jobs 2.5:", EXPECT_JOBS),
    (["--scheduler", "notaurl"], "--scheduler notaurl:", EXPECT_ADDRESS),
    (["--scheduler", "http://127.0.0.1:8786"], "http://127.0.0.1:8786:", EXPECT_ADDRESS),
    (["--scheduler", "tcp://127.0.0.1"], "--scheduler tcp://127.0.0.1:", EXPECT_ADDRESS),
    (["--scheduler", "tcp://127.0.0.1:70000"], "tcp://127.0.0.1:70000:", EXPECT_ADDRESS),
    (["--scheduler", ""], "--scheduler '':", EXPECT_ADDRESS),
    (["--scheduler", "tcp://a:1\nb"], "--scheduler 'tcp://a:1\\nb':", EXPECT_ADDRESS),
    (["--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "-1"], "-1:", EXPECT_SECONDS),
    (["--scheduler-timeout", "inf"], "--scheduler-timeout inf:", EXPECT_SECONDS),
    (["--scheduler-timeout", "nan"], "--scheduler-timeout nan:", EXPECT_SECONDS),
    (["--scheduler-timeout", "0"], "--scheduler-timeout 0:", EXPECT_SECONDS),
    (["--scheduler-timeout", "86400"], "--scheduler-timeout 86400:", EXPECT_SECONDS),
]

# Every bad option refused in turn by one process, through the function `python -m
# crane_book.pipeline` calls (main); the imports, seconds each, are paid once.
REFUSE_EACH = """
import contextlib, io, json, sys
from crane_book import pipeline
runs = []
for arguments in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = pipeline.main(["--profile", "quick", *arguments])
        except SystemExit as stop:
            code = stop.code
    runs.append({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(runs))
"""


@pytest.fixture(scope="module")
def bad_option_runs(tmp_path_factory):
    """(the results folder's parent, each bad option's run) from one pipeline process."""
    folder = tmp_path_factory.mktemp("bad-options")
    arguments = json.dumps([case[0] for case in BAD_OPTIONS])
    run = subprocess.run(
        [sys.executable, "-c", REFUSE_EACH, arguments],
        capture_output=True,
        text=True,
        env=clean_env(folder),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return folder, [SimpleNamespace(**r) for r in json.loads(run.stdout.splitlines()[-1])]


@pytest.mark.parametrize(
    "case", range(len(BAD_OPTIONS)), ids=[" ".join(case[0]) for case in BAD_OPTIONS]
)
def test_a_bad_option_is_one_line_and_exit_2_before_any_work(bad_option_runs, case):
    folder, runs = bad_option_runs
    _, shown, expected = BAD_OPTIONS[case]
    line = refusal(runs[case], folder)
    assert shown in line and expected in line


def test_a_bad_scheduler_in_the_environment_is_refused_naming_the_variable(tmp_path):
    run, _ = run_pipeline(tmp_path, CRANE_SCHEDULER="notaurl")
    line = refusal(run, tmp_path)
    assert "--scheduler notaurl (from $CRANE_SCHEDULER)" in line and EXPECT_ADDRESS in line


@pytest.fixture
def http_peer():
    """A plain HTTP server on a free loopback port (not Dask): its address; it stops with the
    test, or by itself after two minutes."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # the test's output stays the pipeline's
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    server.daemon_threads = True
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    serving.start()
    stop = threading.Timer(120, server.shutdown)  # a bound on its life whatever the test does
    stop.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.cancel()
        server.shutdown()
        server.server_close()
        serving.join(10)


def test_a_peer_that_is_not_dask_is_refused_within_the_timeout(tmp_path, http_peer):
    timeout_s = 3
    # what starting the pipeline costs on this machine now (the same imports, then a refusal of
    # a bad timeout before any connection), so that the bound below is on the wait alone: a
    # loaded 2-core machine took 14 s to refuse with the start included
    start, start_wall = run_pipeline(
        tmp_path, "--scheduler", http_peer, "--scheduler-timeout", "0", limit_s=60
    )
    assert EXPECT_SECONDS in refusal(start, tmp_path)
    run, wall = run_pipeline(
        tmp_path, "--scheduler", http_peer, "--scheduler-timeout", str(timeout_s), limit_s=60
    )
    line = refusal(run, tmp_path)
    assert http_peer in line and "no Dask scheduler answers" in line, line
    # the timeout, the abandoned client's grace and its close's, a few seconds for importing
    # distributed; a client left to the interpreter's exit would wait twice the timeout more
    waited = wall - start_wall
    bound = timeout_s + 2 * sweep.CLIENT_GRACE_S + 4
    assert waited < bound, f"refused {waited:.1f} s after the start ({wall:.1f} s in all)"


DASK_PEER = """
import asyncio, sys
from distributed.core import Server

async def main():
    server = Server({})  # speaks Dask's protocol, knows no scheduler operation
    await server.listen("tcp://127.0.0.1:0")
    print(server.address, flush=True)
    await asyncio.sleep(float(sys.argv[1]))  # stops by itself

asyncio.run(main())
"""


def test_a_dask_peer_that_is_no_scheduler_is_refused_without_a_stall_at_exit(tmp_path):
    pytest.importorskip("distributed")
    peer = subprocess.Popen(
        [sys.executable, "-c", DASK_PEER, "60"], stdout=subprocess.PIPE, text=True
    )
    try:
        address = peer.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), address
        run, wall = run_pipeline(
            tmp_path, "--scheduler", address, "--scheduler-timeout", "3", limit_s=60
        )
    finally:
        peer.kill()
        peer.wait(10)
    line = refusal(run, tmp_path)
    assert address in line and "no Dask scheduler answers" in line, line
    # a failed client left to the interpreter's exit used to wait twice its timeout there
    assert wall < 3 + 10, f"refused after {wall:.1f} s"


@pytest.mark.parametrize("value", ["1", "2", " 8 ", str(options.MAX_JOBS)])
def test_job_counts_from_1_to_the_bound_are_accepted(value):
    assert options.jobs(value) == int(value)


@pytest.mark.parametrize(
    "address",
    [
        "tcp://127.0.0.1:8786",
        "tcp://[::1]:8786",
        "tls://sched-1.example.org:8786",
        "inproc://10.0.0.1/4242/1",
    ],
)
def test_dask_addresses_are_accepted(address):
    assert options.scheduler_address(address) == address


@pytest.mark.parametrize(
    "address",
    [
        "tcp://[zz::1]:8786",
        "tcp://host:0",
        "tcp://user@host:1",
        "tcp://host:1/path",
        "TCP://host:1",
        "inproc://",
        "127.0.0.1:8786",
        "tcp://-host:1",
    ],
)
def test_malformed_addresses_are_refused_by_the_sweep_too(address):
    with pytest.raises(ValueError, match="expected a Dask scheduler address"):
        options.scheduler_address(address)
    with pytest.raises(sweep.SchedulerError, match="expected a Dask scheduler address"):
        sweep.connect(address)  # $CRANE_SCHEDULER reaches the sweeps without the pipeline


@pytest.mark.parametrize("value", ["0.5", "10", "600"])
def test_finite_positive_timeouts_up_to_the_bound_are_accepted(value):
    assert options.timeout_seconds(value) == float(value)


def test_a_long_or_multiline_value_is_shown_on_one_short_line():
    assert options.shown("x" * 1000) == "x" * options.SHOWN_CHARS + "..."
    assert "\n" not in options.shown("a\nb") and options.shown("") == "''"


@pytest.mark.parametrize("jobs", ["257", "100000", "1.5"])
def test_the_pages_refuse_more_jobs_than_the_bound_in_one_line(jobs, monkeypatch, capsys):
    monkeypatch.setattr(pages, "execute_pages", lambda *a, **k: pytest.fail("pages ran"))
    with pytest.raises(SystemExit) as exit_:
        pages.main(["--jobs", jobs])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert f"--jobs {jobs}: {EXPECT_JOBS}" in err


def test_the_pages_accept_the_bound(monkeypatch):
    ran = []
    monkeypatch.setattr(pages, "execute_pages", lambda jobs: ran.append(jobs) or {})
    assert pages.main(["--jobs", str(options.MAX_JOBS)]) == 0 and ran == [options.MAX_JOBS]


STUB = """#!{python}
import json, os, sys
with open(os.environ["ARGV_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit(2 if sys.argv[1:3] == ["-m", "crane_book.pipeline"] else 0)  # make stops there
"""


def test_make_passes_jobs_and_scheduler_as_one_argument_each(tmp_path):
    """`make book` hands JOBS and SCHEDULER to the pipeline verbatim, one argument each (no shell
    splitting or injection), for the pipeline's checks; a stand-in python records the calls."""
    stub, stamp, log = tmp_path / "python", tmp_path / "installed", tmp_path / "argv.jsonl"
    stub.write_text(STUB.format(python=sys.executable), encoding="utf-8")
    stub.chmod(0o755)
    stamp.touch()  # newer than pyproject.toml: no install
    hostile = f"tcp://h:1; touch {tmp_path / 'injected'}"
    for variables in (["JOBS=3 --study x", f"SCHEDULER={hostile}"], []):
        run = subprocess.run(
            [
                "make",
                "-C",
                str(REPO),
                "book",
                f"PY={stub}",
                f"STAMP={stamp}",
                "PROFILE=quick",
                *variables,
            ],
            capture_output=True,
            text=True,
            env=clean_env(tmp_path, ARGV_LOG=str(log)),
            timeout=60,
        )
        assert run.returncode != 0  # the stand-in refused, as the pipeline would
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    pipeline_calls = [c for c in calls if c[:2] == ["-m", "crane_book.pipeline"]]
    assert pipeline_calls == [
        [
            "-m",
            "crane_book.pipeline",
            "--profile",
            "quick",
            "--jobs",
            "3 --study x",
            "--scheduler",
            hostile,
        ],
        ["-m", "crane_book.pipeline", "--profile", "quick", "--jobs", "2"],
    ]
    assert not (tmp_path / "injected").exists()


def test_a_bad_twin_in_the_environment_is_refused_by_the_pipeline_before_any_work(tmp_path):
    run, _ = run_pipeline(tmp_path, CRANE_TWIN="field; rm -rf x")
    line = refusal(run, tmp_path)
    assert "$CRANE_TWIN 'field; rm -rf x':" in line and "expected a twin profile" in line


@pytest.mark.parametrize(
    "variable, value, expected",
    [
        ("CRANE_PROFILE", "quick full", "expected a book profile, quick or full"),
        ("CRANE_TWIN", "fields", "expected a twin profile, one of default, ideal, field"),
    ],
)
def test_the_pages_refuse_a_profile_they_do_not_know_in_one_line(
    variable, value, expected, monkeypatch, capsys
):
    monkeypatch.setattr(pages, "execute_pages", lambda *a, **k: pytest.fail("pages ran"))
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as exit_:
        pages.main([])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert f"${variable} {options.shown(value)}: {expected}" in err


@pytest.mark.parametrize("jobs", ["0", "257", "2; x", "1.5"])
def test_the_data_set_refuses_a_bad_job_count_in_one_line(jobs, monkeypatch, capsys):
    from crane_lib.twin import dataset

    monkeypatch.setattr(dataset, "build", lambda *a, **k: pytest.fail("the data set was recorded"))
    with pytest.raises(SystemExit) as exit_:
        dataset.main(["--profile", "quick", "--jobs", jobs])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "--jobs" in err and EXPECT_JOBS in err


def test_the_determinism_tool_refuses_a_bad_job_count_before_cloning(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "determinism.py"),
            "--jobs",
            "0",
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        timeout=60,
    )
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2 and len(lines) == 1 and f"--jobs 0: {EXPECT_JOBS}" in lines[0]
    assert not (tmp_path / "work").exists()


ENV_STUB = """#!{python}
import json, os, sys
names = ("CRANE_PROFILE", "CRANE_TWIN", "CRANE_RESULTS_DIR")
with open(os.environ["ARGV_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps([sys.argv[1:], {{n: os.environ.get(n) for n in names}}]) + "\\n")
sys.exit(2 if sys.argv[1:3] == ["-m", "crane_book.pipeline"] else 0)  # make stops there
"""


def test_make_passes_profile_and_twin_as_one_value_each(tmp_path):
    """`make book` hands PROFILE and TWIN to the pipeline verbatim (--profile, $CRANE_PROFILE,
    $CRANE_TWIN), one value each, for its checks; the default twin leaves the results folder
    unset and another one points it at results/twin-TWIN."""
    stub, stamp, log = tmp_path / "python", tmp_path / "installed", tmp_path / "argv.jsonl"
    stub.write_text(ENV_STUB.format(python=sys.executable), encoding="utf-8")
    stub.chmod(0o755)
    stamp.touch()  # newer than pyproject.toml: no install
    hostile = f"quick; touch {tmp_path / 'injected'}"
    twin = f"field `touch {tmp_path / 'twin'}`"
    for variables in ([f"PROFILE={hostile}", f"TWIN={twin}"], ["PROFILE=quick"]):
        run = subprocess.run(
            ["make", "-C", str(REPO), "book", f"PY={stub}", f"STAMP={stamp}", *variables],
            capture_output=True,
            text=True,
            env=clean_env(tmp_path, ARGV_LOG=str(log)),
            timeout=60,
        )
        assert run.returncode != 0  # the stand-in refused, as the pipeline would
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    pipeline_calls = [c for c in calls if c[0][:2] == ["-m", "crane_book.pipeline"]]
    results = str(tmp_path / "results")  # clean_env's, which the default twin leaves alone
    assert pipeline_calls == [
        [
            ["-m", "crane_book.pipeline", "--profile", hostile, "--jobs", "2"],
            {
                "CRANE_PROFILE": hostile,
                "CRANE_TWIN": twin,
                "CRANE_RESULTS_DIR": f"{REPO}/results/twin-{twin}",
            },
        ],
        [
            ["-m", "crane_book.pipeline", "--profile", "quick", "--jobs", "2"],
            {"CRANE_PROFILE": "quick", "CRANE_TWIN": "default", "CRANE_RESULTS_DIR": results},
        ],
    ]
    assert not (tmp_path / "injected").exists() and not (tmp_path / "twin").exists()
