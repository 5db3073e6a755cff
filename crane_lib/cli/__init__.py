"""The command-line tool `crane-id`: one module per subcommand, one error boundary.

    crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N]
    crane-id record COMMAND_FILE --out LOG --port /dev/ttyUSB0 [--idle S] [--no-approach]
    crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...]
    crane-id identify LOG --trajectory COMMAND_FILE --ts 0.04 --out MODEL [--repair] [--refine fast|clie|didim|none] [--method ols|wls|dual-metric]
    crane-id audit MODEL [--seed N] [--sparse] [--box manufacturer] [--certify] [--json]
    crane-id rescue MODEL --out MODEL [--epsilon 1e-3]
    crane-id accept LOG --trajectory COMMAND_FILE --out MODEL [--ts 0.04] [--refine fast] [--validation LOG ...]
    crane-id export MODEL --urdf OUT.urdf --mjcf OUT.xml [--nearest] [--distance bregman|euclidean] [--standard OUT.csv]

Each subcommand module exposes `register(subparsers)`, which adds its parser and sets its
handler; a handler returns the exit status. Bad input (a missing or malformed file, an option
out of range, an output path that would replace an input) raises InputError, which `main`
turns into one line naming the file and what was wrong, exit status 2, with nothing written.
Options are range-checked by the parser, output paths before any computation
(`cli.common`). SIGINT (Ctrl-C) and SIGTERM end the command with one line and exit status 130
or 143; atomic writes leave nothing partial behind.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from crane_lib.cli.common import EXIT_BAD_INPUT, Parser
from crane_lib.errors import InputError, Interrupted, interrupt_pending, interruptible

# the subcommand modules of crane_lib.cli, in pipeline order; imported by `build_parser`, inside
# the interrupt handling of `main` (they pull in numpy, scipy, cvxpy and numba: seconds)
SUBCOMMANDS = ("record", "preprocess", "identify", "audit", "rescue", "accept", "export")

__all__ = ["EXIT_BAD_INPUT", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="crane-id", description="CRANE-X7 dynamic identification tools.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"crane_lib.cli.{name}").register(subparsers)
    return parser


def _interrupted(command: str, signum: int) -> int:
    name = {2: "SIGINT", 15: "SIGTERM"}.get(signum, f"signal {signum}")
    prog = f"crane-id {command}" if command else "crane-id"
    print(f"{prog}: interrupted ({name}); no output was written", file=sys.stderr)
    return 128 + signum


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; returns its exit status (2: bad input, 130/143: interrupted)."""
    with interruptible():
        try:
            args = build_parser().parse_args(argv)
        except Interrupted as stop:
            return _interrupted("", stop.signum)
        except SystemExit as done:  # --help (0) or a refused option (2, its one line already printed)
            return done.code if isinstance(done.code, int) else EXIT_BAD_INPUT
        try:
            return args.handler(args)
        except Interrupted as stop:
            return _interrupted(args.command, stop.signum)
        except KeyboardInterrupt:  # a native library re-raised the Ctrl-C itself
            return _interrupted(args.command, 2)
        except InputError as error:
            if interrupt_pending():  # a solver turned the interrupt into a failure of its own
                return _interrupted(args.command, interrupt_pending())
            one_line = str(error).replace("\r", "\\r").replace("\n", "\\n")
            print(f"crane-id {args.command}: {one_line}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except OSError as error:  # the disk filled, a file vanished mid-run: atomic writes left nothing partial
            if interrupt_pending():
                return _interrupted(args.command, interrupt_pending())
            where = f"{error.filename}: " if error.filename else ""
            print(f"crane-id {args.command}: {where}{error.strerror or error}; no output was written", file=sys.stderr)
            return EXIT_BAD_INPUT
        except Exception:
            if interrupt_pending():
                return _interrupted(args.command, interrupt_pending())
            raise


if __name__ == "__main__":
    sys.exit(main())
