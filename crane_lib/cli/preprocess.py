"""`crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...]`: a raw log to one bundle
file per sampling interval (paper Appendix D-C)."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.errors import InputError
from crane_lib.logs import preprocessing
from crane_lib.logs.raw_log import read_raw_log


def register(subparsers) -> None:
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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    intervals = [ms / 1000.0 for ms in args.intervals]
    for ts in intervals:  # reject a bad interval before anything is read or written
        try:
            preprocessing.grid_step(ts)
        except ValueError as error:
            raise InputError(f"--intervals {ts * 1e3:g}", str(error), "whole milliseconds, at least 1") from None
    log = read_raw_log(args.log, repair=args.repair)
    bundles = preprocessing.preprocess_all(log, intervals)
    for repair in log.repairs:
        print(f"repaired: {repair}")
    for ts, bundle in bundles.items():
        path = preprocessing.write_bundle(Path(args.out) / preprocessing.bundle_filename(ts), bundle)
        masked = bundle.clamp_mask.mean() * 100
        print(f"{path}: {bundle.n_samples} samples at {bundle.interval_ms} ms, {masked:.2f} % clamp-masked")
    return 0
