"""`crane-id export MODEL --urdf OUT.urdf --mjcf OUT.xml [--nearest] [--distance bregman|euclidean]
[--prior PARAMS] [--margin 1e-6] [--mounting hanging|upright] [--standard OUT.csv]`: the physically
consistent link-level model behind a base-parameter model, as the files robotics tools read.

MODEL is a parameter file of one of the base-parameter sets (the 39 of `crane-id identify`, ...)
or of the 94 standard parameters. Without --nearest, a model that no consistent link-level model
reproduces is refused (exit 2, the nearest one's change named, nothing written); with it, the
nearest consistent model is exported and its change printed. Exit status 0 when written; the
files are written all or none (a full disk leaves none of them).
`--robot vx300s|so101|FOLDER`: a model of that arm (its parameter sets and description's prior),
exported in its chain frames with its own mounting unless --mounting names one."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.cli.common import add_force, add_robot, bounded_float, output_path, robot_of
from crane_lib.errors import InputError, atomic_write_files, complete_commits
from crane_lib.export import consistent, files
from crane_lib.model.dynamics import MOUNTINGS
from crane_lib.model.parameters import ParameterSet, load_parameters, parameters_text

# the margin the program can meet: above MARGIN_MAX the manufacturer's own link 6 fails it; below
# MARGIN_MIN the check's 0.1 % of it is finer than Clarabel reaches a link's smallest eigenvalue
# (to about 1e-12 kg·m^2: 9.93e-11 where 1e-10 was asked)
MARGIN_MIN = 1e-8  # kg·m^2
margin_type = bounded_float(
    MARGIN_MIN,
    consistent.MARGIN_MAX,
    unit="kg·m^2",
    why="every link's smallest pseudo-inertia eigenvalue: at most link 6's "
    "in the manufacturer's description, at least what the solver "
    "resolves",
)


def register(subparsers) -> None:
    """Add the `export` subcommand and its options."""
    parser = subparsers.add_parser(
        "export", help="consistent link-level model of a base model, as URDF and MJCF"
    )
    parser.add_argument(
        "model",
        metavar="MODEL",
        type=Path,
        help="parameter file: a base-parameter set (e.g. the 39) or the 94 standard parameters",
    )
    parser.add_argument("--urdf", metavar="OUT.urdf", help="URDF to write")
    parser.add_argument("--mjcf", metavar="OUT.xml", help="MJCF (MuJoCo) to write")
    parser.add_argument(
        "--standard", metavar="OUT.csv", help="the 94 standard parameters to write (parameter file)"
    )
    parser.add_argument(
        "--nearest",
        action="store_true",
        help="when no consistent link-level model reproduces MODEL, export the nearest consistent "
        "one (its base parameters change)",
    )
    parser.add_argument(
        "--distance",
        choices=consistent.DISTANCES,
        default=consistent.DEFAULT_DISTANCE,
        help="distance to the prior that decides what the base parameters leave free (default "
        "%(default)s)",
    )
    parser.add_argument(
        "--prior",
        metavar="PARAMS",
        type=Path,
        help="parameter file with the links' inertial parameters (default: the manufacturer's "
        "description)",
    )
    parser.add_argument(
        "--margin",
        type=margin_type,
        default=consistent.MARGIN,
        help=f"smallest eigenvalue of every link's pseudo-inertia, "
        f"{MARGIN_MIN:g} to {consistent.MARGIN_MAX:g} kg·m^2 "
        "(default %(default)g)",
    )
    parser.add_argument(
        "--mounting",
        choices=sorted(MOUNTINGS),
        default=None,
        help="where gravity points (default: the arm's own; the CRANE-X7 hangs)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Reconstruct a consistent link-level model and write it as URDF, MJCF and CSV."""
    robot = robot_of(args.robot)
    suffixes = {"urdf": (".urdf",), "mjcf": (".xml", ".mjcf"), "standard": (".csv",)}
    for path in (args.urdf, args.mjcf, args.standard):
        if path:  # a run killed between its renames: finished before the existing files are seen
            complete_commits(Path(path).parent)
    outputs = {
        option: output_path(
            path,
            inputs=[args.model, args.prior],
            force=args.force,
            option=f"--{option}",
            suffixes=suffixes[option],
        )
        for option, path in (("urdf", args.urdf), ("mjcf", args.mjcf), ("standard", args.standard))
        if path is not None
    }
    if not outputs:
        raise InputError(
            "crane-id export", "no output named", "at least one of --urdf, --mjcf, --standard"
        )
    base = load_parameters(args.model)
    prior = None
    if args.prior is not None:
        prior = load_parameters(args.prior)
        prior.meta["name"] = str(args.prior)
    result = consistent.reconstruct(
        base,
        prior=prior,
        distance=args.distance,
        margin=args.margin,
        source=str(args.model),
        arm=robot.arm,
    )
    if not args.nearest:
        consistent.require_exact(result, str(args.model))
    notes = [f"Model: {args.model.name}; {result.summary()}."]
    exported = files.exported_robot(result.standard, robot.arm, args.mounting, notes=notes)
    texts = {}
    if "urdf" in outputs:
        texts[outputs["urdf"]] = files.urdf_text(exported)
    if "mjcf" in outputs:
        texts[outputs["mjcf"]] = files.mjcf_text(exported)
    if "standard" in outputs:
        texts[outputs["standard"]] = parameters_text(
            ParameterSet(result.standard.names, result.standard.values),
            comment=f"{len(result.standard.names)} standard parameters behind "
            f"{args.model} (crane-id export): {result.summary()}",
        )
    # all the files or none: each to a temporary file first, the renames come last
    atomic_write_files({path: text.encode("utf-8") for path, text in texts.items()})
    if not result.exact:
        moved = ", ".join(f"{n} {x:+.3g}" for n, x in result.changed(5))
        advice = consistent.margin_advice(result.largest_margin, result.margin)
        print(
            f"{args.model}: no consistent link-level model reproduces it; exported the nearest, "
            f"whose base parameters change by {result.change_norm:.3g} ({result.change_metric}; "
            f"most: {moved}){advice}"
        )
    print(
        f"{args.model}: {result.summary()}; wrote {', '.join(str(p) for p in outputs.values())} in "
        f"{result.seconds:.1f} s of solver time"
    )
    return 0
