"""`crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...] [--force]`: a raw log to one
bundle file per sampling interval (paper Appendix D-C). `--robot`: the arm the log must be of
(the CRANE-X7 by default); the bundles are sized from the log."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.cli.common import (
    add_force,
    add_robot,
    check_log_robot,
    interval_ms,
    output_folder,
    robot_of,
)
from crane_lib.errors import atomic_write_folder
from crane_lib.logs import npz_io, preprocessing
from crane_lib.logs.raw_log import read_raw_log


def register(subparsers) -> None:
    """Add the `preprocess` subcommand and its options."""
    parser = subparsers.add_parser(
        "preprocess",
        help="resample, filter and difference a raw log into bundles (paper D-C)",
        description="Write one bundle file per sampling interval (bundle_010ms.npz, ...) from a "
        "raw log "
        "(.csv, .csv.gz or .npz). Bad input stops with the file and line or sample named.",
    )
    parser.add_argument("log", type=Path, help="raw log file")
    parser.add_argument(
        "--out", type=Path, required=True, help="folder for the bundle files (created if absent)"
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="drop a truncated last line and repeated time stamps instead of stopping (reported)",
    )
    parser.add_argument(
        "--intervals",
        type=interval_ms,
        nargs="+",
        metavar="MS",
        default=[round(ts * 1000) for ts in preprocessing.INTERVALS_S],
        help="sampling intervals in whole ms, 1 to 100 (default: 1 10 20 40 80)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Preprocess a raw log into one bundle per sampling interval."""
    robot = robot_of(args.robot)
    intervals = [ms / 1000.0 for ms in sorted(set(args.intervals))]
    names = {ts: preprocessing.bundle_filename(ts) for ts in intervals}
    folder = output_folder(args.out, names.values(), inputs=[args.log], force=args.force)
    log = read_raw_log(args.log, repair=args.repair)
    check_log_robot(log, robot)
    bundles = preprocessing.preprocess_all(log, intervals)
    for repair in log.repairs:
        print(f"repaired: {repair}")
    # all bundles, or none: a new folder is filled as a temporary sibling and renamed at the end
    # (a failure leaves no folder); in an existing one each bundle goes to a temporary file first
    atomic_write_folder(
        folder,
        {
            names[ts]: npz_io.npz_bytes(preprocessing.bundle_arrays(bundle), compress=False)
            for ts, bundle in bundles.items()
        },
    )
    for ts, bundle in bundles.items():
        masked = bundle.clamp_mask.mean() * 100
        print(
            f"{folder / names[ts]}: {bundle.n_samples} samples at {bundle.interval_ms} ms, "
            f"{masked:.2f} % clamp-masked"
        )
    return 0
