"""The command-line tool `crane-id`: one function per subcommand, a small dispatcher.

    crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N]

Bad input (a missing or malformed command file, truth file or output path) ends with one
line naming the file and what was wrong, exit code 2, and nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import InputError

EXIT_BAD_INPUT = 2


def cmd_record(args: argparse.Namespace) -> int:
    """Execute a command file on the digital twin and write its raw log."""
    from . import twin
    from .commands import read_command_file
    from .twin_truth import load_truth

    out = Path(args.out)
    if out.suffix not in (".npz", ".csv", ".gz"):
        raise InputError(str(out), f"unknown log container {out.suffix!r}", "a .npz, .csv or .csv.gz file name")
    if not out.parent.exists():
        raise InputError(str(out), "its folder does not exist", "an existing folder")
    cmd = read_command_file(args.command_file)  # checked before any simulation
    truth = load_truth(args.truth) if args.truth is not None else None
    samples, metadata = twin.record(cmd, seed=args.seed, truth=truth)
    metadata["command_file"] = str(args.command_file)
    metadata["truth_file"] = str(args.truth) if args.truth is not None else metadata["truth_file"]
    from .raw_log import write_raw_log

    write_raw_log(out, samples, metadata)
    print(f"{out}: {len(samples)} samples, {metadata['record_duration_s']} s (motion {metadata['realized_motion_s']} s of {metadata['commanded_duration_s']} s commanded)")
    return 0


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed {text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed {value} is negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crane-id", description="CRANE-X7 dynamic identification tools.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    record = sub.add_parser("record", help="run a command file on the digital twin and write its raw log")
    record.add_argument("command_file", metavar="COMMAND_FILE", type=Path, help="command file (Appendix B-B format)")
    record.add_argument("--out", required=True, metavar="LOG", help="raw log to write (.npz, .csv or .csv.gz)")
    record.add_argument("--truth", type=Path, default=None, metavar="PARAMS_FILE", help="truth parameter file (default data/twin_truth.csv)")
    record.add_argument("--seed", type=_seed, default=1, metavar="N", help="seed of this execution (default 1)")
    record.set_defaults(handler=cmd_record)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except InputError as error:
        print(f"crane-id {args.command}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
