"""`crane-id SUBCOMMAND` imports that subcommand's module only, and `crane-id accept` on the
CRANE-X7 starts without the libraries its stages do not use (sympy, cvxpy, the twin): each costs
a fraction of a second at every start (benchmarks/bench_clie.py --accept)."""

from __future__ import annotations

import subprocess
import sys

from crane_lib import cli


def _subparser(parser, name):
    return parser._subparsers._group_actions[0].choices[name]


def test_a_named_subcommand_parses_and_helps_as_in_the_full_parser():
    full, alone = cli.build_parser(), cli.build_parser("accept")
    assert set(_subparser(full, "accept")._option_string_actions) == set(
        _subparser(alone, "accept")._option_string_actions
    )
    assert _subparser(full, "accept").format_help() == _subparser(alone, "accept").format_help()
    argv = ["accept", "log.csv", "--trajectory", "AG02.txt", "--out", "m.csv", "--timings"]
    assert vars(full.parse_args(argv)) == vars(alone.parse_args(argv))
    assert cli._named_subcommand(argv) == "accept"
    assert cli._named_subcommand(["--help"]) is None and cli._named_subcommand(["acept"]) is None
    assert cli._named_subcommand([]) is None


def test_accept_starts_without_sympy_cvxpy_or_the_twin():
    code = (
        "import sys\n"
        "from crane_lib import cli\n"
        "cli.build_parser('accept')\n"
        "unused = ['sympy', 'cvxpy', 'crane_lib.twin.recorder', 'crane_lib.cli.excite',"
        " 'crane_lib.model.chain_model', 'crane_lib.acceptance.torque_scale']\n"
        "print([name for name in unused if name in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def _program(code: str, *args: str) -> subprocess.CompletedProcess:
    """`code` run as a program with `args` as its sys.argv[1:]."""
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )


def test_the_program_ends_with_its_status_its_output_and_its_exit_handlers():
    code = (
        "import atexit, sys\n"
        "from crane_lib import cli\n"
        "atexit.register(lambda: print('exit handler ran', flush=True))\n"
        "sys.exit(cli.main())\n"
    )
    helped = _program(code, "accept", "--help")
    assert helped.returncode == 0
    assert helped.stdout.rstrip().endswith("exit handler ran") and "--timings" in helped.stdout
    refused = _program(code, "accept", "missing.csv", "--trajectory", "x.txt", "--out", "m.csv")
    assert refused.returncode == 2 and "exit handler ran" in refused.stdout
    assert refused.stderr.count("\n") == 1 and "missing.csv" in refused.stderr


def test_the_program_waits_for_a_thread_that_is_still_running(tmp_path):
    done = tmp_path / "thread finished"
    code = (
        "import sys, threading, time\n"
        "from pathlib import Path\n"
        "from crane_lib import cli\n"
        "def work():\n"
        "    time.sleep(3.0)\n"
        f"    Path({str(done)!r}).write_text('yes')\n"
        "threading.Thread(target=work).start()\n"
        "sys.exit(cli.main())\n"
    )
    ran = _program(code, "accept", "--help")
    assert ran.returncode == 0 and done.read_text() == "yes"
