"""`crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N] [--force]`: execute a
command file on the digital twin and write its raw log (Appendix D-C)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from crane_lib.cli.common import add_force, output_path, seed
from crane_lib.constants import CONTROL_PERIOD_S
from crane_lib.errors import InputError
from crane_lib.excitation.commands import commanded_duration, read_command_file
from crane_lib.logs.raw_log import LOG_SUFFIXES, write_raw_log
from crane_lib.twin import recorder
from crane_lib.twin.truth import load_truth


def register(subparsers) -> None:
    parser = subparsers.add_parser("record", help="run a command file on the digital twin and write its raw log")
    parser.add_argument("command_file", metavar="COMMAND_FILE", type=Path, help="command file (Appendix B-B format)")
    parser.add_argument("--out", required=True, metavar="LOG", help="raw log to write (.npz, .csv or .csv.gz)")
    parser.add_argument("--truth", type=Path, default=None, metavar="PARAMS_FILE", help="truth parameter file (default data/twin_truth.csv)")
    parser.add_argument("--seed", type=seed, default=1, metavar="N", help="seed of this execution (default 1)")
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    out = output_path(args.out, inputs=[args.command_file, args.truth], force=args.force, suffixes=LOG_SUFFIXES)
    cmd = read_command_file(args.command_file)  # checked before any simulation
    truth = load_truth(args.truth) if args.truth is not None else None
    seconds = commanded_duration(cmd) + sum(recorder.IDLE_RANGE_S)  # the idle stretches average half their range each
    print(f"{args.command_file}: recording {commanded_duration(cmd):.1f} s of commanded motion on the twin (seed {args.seed})", flush=True)
    bar = tqdm(total=round(seconds), unit="s", desc="recording", disable=None)  # shown on a terminal only
    try:
        samples, metadata = recorder.record(cmd, seed=args.seed, truth=truth,
                                            progress=lambda rows: bar.update(round(rows * CONTROL_PERIOD_S) - bar.n))
    except (recorder.PlantNotPositiveDefinite, recorder.SimulationDiverged) as error:
        source = str(args.truth) if args.truth is not None else "the default truth"
        raise InputError(source, f"the twin cannot run this truth: {error}", "a truth file of physical bodies the twin can simulate") from None
    finally:
        bar.close()
    metadata["command_file"] = str(args.command_file)
    metadata["command_sha256"] = cmd.sha256
    metadata["truth_file"] = str(args.truth) if args.truth is not None else metadata["truth_file"]
    write_raw_log(out, samples, metadata)
    print(f"{out}: {len(samples)} samples, {metadata['record_duration_s']} s (motion {metadata['realized_motion_s']} s of {metadata['commanded_duration_s']} s commanded)")
    return 0
