"""`crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...]`: a raw log to its bundles.

Wire into `crane_lib/cli.py` with `add_preprocess_parser(subparsers)`; the parser's default
`func` is `cmd_preprocess`, which returns the process exit status (0 written, 2 bad input).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import preprocessing
from .errors import InputError
from .raw_log import read_raw_log

EXIT_BAD_INPUT = 2


def add_preprocess_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "preprocess",
        help="resample, filter and difference a raw log into bundles (paper D-C)",
        description="Write one bundle file per sampling interval (bundle_010ms.npz, ...) from a raw log "
                    "(.csv, .csv.gz or .npz). Bad input stops with the file and line or sample named.",
    )
    parser.add_argument("log", type=Path, help="raw log file")
    parser.add_argument("--out", type=Path, required=True, help="folder for the bundle files")
    parser.add_argument("--repair", action="store_true",
                        help="drop a truncated last line and repeated time stamps instead of stopping (reported)")
    parser.add_argument("--intervals", type=int, nargs="+", metavar="MS",
                        default=[round(ts * 1000) for ts in preprocessing.INTERVALS_S],
                        help="sampling intervals in ms (default: 1 10 20 40 80)")
    parser.set_defaults(func=cmd_preprocess)
    return parser


def cmd_preprocess(args) -> int:
    try:
        log = read_raw_log(args.log, repair=args.repair)
        intervals = [ms / 1000.0 for ms in args.intervals]
        for ts in intervals:
            preprocessing.grid_step(ts)  # reject a bad interval before anything is written
        bundles = preprocessing.preprocess_all(log, intervals)
    except (InputError, ValueError) as error:
        print(f"crane-id preprocess: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for repair in log.repairs:
        print(f"repaired: {repair}")
    for ts, bundle in bundles.items():
        path = preprocessing.write_bundle(Path(args.out) / preprocessing.bundle_filename(ts), bundle)
        masked = bundle.clamp_mask.mean() * 100
        print(f"{path}: {bundle.n_samples} samples at {bundle.interval_ms} ms, {masked:.2f} % clamp-masked")
    return 0


def main(argv=None) -> int:
    """Stand-alone entry, until the command is wired into `crane-id`."""
    parser = argparse.ArgumentParser(prog="crane-id")
    add_preprocess_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
