"""`crane-id export MODEL --urdf OUT.urdf --mjcf OUT.xml [--nearest] [--distance bregman|euclidean]
[--prior PARAMS] [--margin 1e-6] [--mounting hanging|upright] [--standard OUT.csv]`: the physically
consistent link-level model behind a base-parameter model, as the files robotics tools read.

MODEL is a parameter file of one of the base-parameter sets (the 39 of `crane-id identify`, ...)
or of the 94 standard parameters. Without --nearest, a model that no consistent link-level model
reproduces is refused (exit 2, the nearest one's change named, nothing written); with it, the
nearest consistent model is exported and its change printed. Exit status 0 when written."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.cli.common import add_force, bounded_float, output_path
from crane_lib.errors import InputError
from crane_lib.export import consistent, files
from crane_lib.model.dynamics import MOUNTINGS
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters


# a link's smallest pseudo-inertia eigenvalue is of order 1e-5 kg·m^2 (the hand); a margin
# above 1e-2 kg·m^2 would exceed every link's own inertia
margin_type = bounded_float(0.0, 1e-2, unit="kg·m^2", low_open=True, why="smallest eigenvalue of every link's pseudo-inertia")


def register(subparsers) -> None:
    parser = subparsers.add_parser("export", help="consistent link-level model of a base model, as URDF and MJCF")
    parser.add_argument("model", metavar="MODEL", type=Path, help="parameter file: a base-parameter set (e.g. the 39) or the 94 standard parameters")
    parser.add_argument("--urdf", metavar="OUT.urdf", help="URDF to write")
    parser.add_argument("--mjcf", metavar="OUT.xml", help="MJCF (MuJoCo) to write")
    parser.add_argument("--standard", metavar="OUT.csv", help="the 94 standard parameters to write (parameter file)")
    parser.add_argument("--nearest", action="store_true",
                        help="when no consistent link-level model reproduces MODEL, export the nearest consistent one (its base parameters change)")
    parser.add_argument("--distance", choices=consistent.DISTANCES, default=consistent.DEFAULT_DISTANCE,
                        help="distance to the prior that decides what the base parameters leave free (default %(default)s)")
    parser.add_argument("--prior", metavar="PARAMS", type=Path, help="parameter file with the links' inertial parameters (default: the manufacturer's description)")
    parser.add_argument("--margin", type=margin_type, default=consistent.MARGIN, help="smallest eigenvalue of every link's pseudo-inertia, kg·m^2 (default %(default)g)")
    parser.add_argument("--mounting", choices=sorted(MOUNTINGS), default="hanging", help="where gravity points (default %(default)s: the arm hangs)")
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    suffixes = {"urdf": (".urdf",), "mjcf": (".xml", ".mjcf"), "standard": (".csv",)}
    outputs = {option: output_path(path, inputs=[args.model, args.prior], force=args.force, option=f"--{option}", suffixes=suffixes[option])
               for option, path in (("urdf", args.urdf), ("mjcf", args.mjcf), ("standard", args.standard)) if path is not None}
    if not outputs:
        raise InputError("crane-id export", "no output named", "at least one of --urdf, --mjcf, --standard")
    base = load_parameters(args.model)
    prior = None
    if args.prior is not None:
        prior = load_parameters(args.prior)
        prior.meta["name"] = str(args.prior)
    result = consistent.reconstruct(base, prior=prior, distance=args.distance, margin=args.margin, source=str(args.model))
    if not args.nearest:
        consistent.require_exact(result, str(args.model))
    notes = [f"Model: {args.model.name}; {result.summary()}."]
    robot = files.robot_model(result.standard, args.mounting, notes=notes)
    texts = {}
    if "urdf" in outputs:
        texts[outputs["urdf"]] = files.urdf_text(robot)
    if "mjcf" in outputs:
        texts[outputs["mjcf"]] = files.mjcf_text(robot)
    for path, text in texts.items():
        files.write_text(path, text)
    if "standard" in outputs:
        save_parameters(outputs["standard"], ParameterSet(result.standard.names, result.standard.values),
                        comment=f"94 standard parameters behind {args.model} (crane-id export): {result.summary()}")
    if not result.exact:
        moved = ", ".join(f"{n} {x:+.3g}" for n, x in result.changed(5))
        print(f"{args.model}: no consistent link-level model reproduces it; exported the nearest, whose base parameters change by "
              f"{result.change_norm:.3g} ({result.change_metric}; most: {moved})")
    print(f"{args.model}: {result.summary()}; wrote {', '.join(str(p) for p in outputs.values())} in {result.seconds:.1f} s of solver time")
    return 0
