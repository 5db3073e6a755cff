"""The command-line tool `crane-id`: one module per subcommand, one error boundary.

    crane-id describe FILE --out FOLDER --servos NAME,... [--base LINK] [--tip LINK]
        [--arm-joints J,...] [--gripper JOINT] [--name NAME] [--drive current|position]
        [--position-loop FILE]
    crane-id excite --robot FOLDER --out DIR
    crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N]
    crane-id record COMMAND_FILE --out LOG --port /dev/ttyUSB0 [--idle S] [--no-approach]
    crane-id calibrate --write-poses COMMAND_FILE [--poses N] [--point X Y Z]
    crane-id calibrate LOG LOG --trajectory COMMAND_FILE --mass KG --out GAINS [--point X Y Z]
    crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...]
    crane-id identify LOG --trajectory COMMAND_FILE --ts 0.04 --out MODEL [--repair] [--refine
    fast|clie|didim|none] [--method ols|wls|dual-metric]
    crane-id audit MODEL [--seed N] [--sparse] [--box manufacturer] [--certify] [--json]
    crane-id rescue MODEL --out MODEL [--epsilon 1e-3]
    crane-id accept LOG --trajectory COMMAND_FILE --out MODEL [--ts 0.04] [--refine fast]
        [--validation LOG ...] [--torque-scale GAINS] [--timings]
    crane-id payload LOG --model MODEL --trajectory COMMAND_FILE --out MODEL [--ts 0.04]
    crane-id export MODEL --urdf OUT.urdf --mjcf OUT.xml [--nearest] [--distance bregman|euclidean]
        [--standard OUT.csv]

Each subcommand module exposes `register(subparsers)`, which adds its parser and sets its
handler; a handler returns the exit status. Bad input (a missing or malformed file, an option
out of range, an output path that would replace an input) raises InputError, which `main`
turns into one line naming the file and what was wrong, exit status 2, with nothing written.
Options are range-checked by the parser, output paths before any computation
(`cli.common`). SIGINT (Ctrl-C) and SIGTERM end the command with one line and exit status 130
or 143 and nothing written; atomic writes leave nothing partial behind, and a signal that
comes once an output is in place lets the command finish (exit 0, a line says so). An OS error
while writing (a full disk, a read-only or forbidden folder) is one line naming the output file
and the error (ENOSPC, EROFS, EACCES), exit status 2; a command that writes several files
(export, preprocess) writes them all or none; killed between two of its renames, the next run
that writes there completes them from the journal left beside them (errors.complete_commits).
Temporary files carry their writer's process id:
a run removes those that a killed run left beside its outputs, with one line naming them; a killed
arm recording's partial files are refused instead (`record`, recover_partial, or --force), and a
disk that fills while the arm moves stops it with torque off, the samples kept, exit 2. When the
reader of stdout goes away (`crane-id audit MODEL | head -1`) the command stops quietly with
exit status 141, as a shell reports a `cat` killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import atexit
import errno
import importlib
import os
import sys
import threading

from crane_lib.cli.common import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, Parser
from crane_lib.errors import (
    InputError,
    Interrupted,
    interrupt_pending,
    interruptible,
    late_signal,
    name_command,
    written_outputs,
)

# the subcommand modules of crane_lib.cli, in pipeline order; imported by `build_parser`, inside
# the interrupt handling of `main` (they pull in numpy, scipy, cvxpy and numba: seconds), only
# the named one's when the arguments name one
SUBCOMMANDS = (
    "describe",
    "excite",
    "record",
    "calibrate",
    "preprocess",
    "identify",
    "audit",
    "rescue",
    "accept",
    "payload",
    "export",
)

__all__ = ["EXIT_BAD_INPUT", "build_parser", "main"]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `crane-id` parser with one subcommand per module of this package; `only`: with that
    subcommand alone, whose module is then the only one imported (each loads libraries the
    others do not need: sympy, cvxpy, the twin)."""
    parser = Parser(prog="crane-id", description="CRANE-X7 dynamic identification tools.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS if only is None else (only,):
        importlib.import_module(f"crane_lib.cli.{name}").register(subparsers)
    return parser


def _named_subcommand(argv: list[str] | None) -> str | None:
    """The subcommand the arguments start with, if they start with one (`crane-id accept ...`);
    else None (`crane-id --help`, a misspelt name: the full parser answers those)."""
    words = sys.argv[1:] if argv is None else argv
    return words[0] if words and words[0] in SUBCOMMANDS else None


def _signal_name(signum: int) -> str:
    return {2: "SIGINT", 15: "SIGTERM"}.get(signum, f"signal {signum}")


def _interrupted(command: str, signum: int) -> int:
    prog = f"crane-id {command}" if command else "crane-id"
    print(f"{prog}: interrupted ({_signal_name(signum)}); no output was written", file=sys.stderr)
    return 128 + signum


def _what_was_written() -> str:
    """'no output was written', or which outputs were (a later one failed)."""
    written = written_outputs()
    if not written:
        return "no output was written"
    return f"only {', '.join(str(p) for p in written)} was written"


def _stdout_gone() -> int:
    """stdout's reader has gone: point stdout at /dev/null (so that the flush at exit cannot fail
    again) and stop quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no file (redirected in-process)
        pass
    return EXIT_BROKEN_PIPE


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; returns its exit status (2: bad input, 130/143: interrupted). Run as
    the program (`argv` None: the arguments are sys.argv), the process ends here (`_end_now`)."""
    status = _main(argv)
    if argv is None:
        _end_now(status)
    return status


def _end_now(status) -> None:
    """End the process with `status` once stdout and stderr are flushed and the exit handlers have
    run, skipping the interpreter's teardown: freeing every module and array one by one takes
    0.3 s after `crane-id accept`, for memory the OS takes back at once. Returns (the normal exit
    follows) while another Python thread is alive, which the normal exit waits for, or when a
    flush fails, which it reports."""
    if not isinstance(status, int) or threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()  # what the normal exit runs first (temporary folders' cleanup, ...)
    os._exit(status)


def _main(argv: list[str] | None) -> int:
    """`main`'s work: parse, run the handler, turn its failures into an exit status."""
    with interruptible():
        try:
            args = build_parser(_named_subcommand(argv)).parse_args(argv)
        except Interrupted as stop:
            return _interrupted("", stop.signum)
        except (
            SystemExit
        ) as done:  # --help (0) or a refused option (2, its one line already printed)
            return done.code if isinstance(done.code, int) else EXIT_BAD_INPUT
        name_command(f"crane-id {args.command}")
        try:
            status = args.handler(args)
            sys.stdout.flush()  # a reader that has gone shows here, not in the flush at exit
        except BrokenPipeError:
            return _stdout_gone()
        except Interrupted as stop:
            return _interrupted(args.command, stop.signum)
        except KeyboardInterrupt:  # a native library re-raised the Ctrl-C itself
            return _interrupted(args.command, 2)
        except InputError as error:
            if interrupt_pending():  # a solver turned the interrupt into a failure of its own
                return _interrupted(args.command, interrupt_pending())
            one_line = str(error).replace("\r", "\\r").replace("\n", "\\n")
            if written_outputs():  # a later output failed (export writes up to three)
                one_line += f"; {_what_was_written()}"
            print(f"crane-id {args.command}: {one_line}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except (
            OSError
        ) as error:  # the disk filled, a file vanished mid-run: atomic writes left nothing partial
            if interrupt_pending():
                return _interrupted(args.command, interrupt_pending())
            where = f"{error.filename}: " if error.filename else ""
            problem = error.strerror or error
            if error.errno in errno.errorcode:  # the name a search finds: ENOSPC, EROFS, EACCES
                problem = f"{problem} ({errno.errorcode[error.errno]})"
            print(
                f"crane-id {args.command}: {where}{problem}; {_what_was_written()}", file=sys.stderr
            )
            return EXIT_BAD_INPUT
        except Exception:
            if interrupt_pending():
                return _interrupted(args.command, interrupt_pending())
            raise
        if late_signal():
            written = ", ".join(str(p) for p in written_outputs())
            name = _signal_name(late_signal())
            print(
                f"crane-id {args.command}: {name} came after {written} was written; the command "
                f"finished",
                file=sys.stderr,
            )
        return status


if __name__ == "__main__":
    sys.exit(main())
