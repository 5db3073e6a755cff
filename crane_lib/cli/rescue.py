"""`crane-id rescue MODEL --out MODEL [--epsilon 1e-3] [--force]`: the rescue SDP (12) over Theta,
then the acceptance audit on seeds 1-5 (paper Sec. IV-C, Appendix D-E). Exit status 0 when
accepted, 1 when not, 2 on bad input. `--robot`: the arm whose model it is and whose Theta the
rescue and the audit cover (the CRANE-X7 by default)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crane_lib.acceptance.audit import audit_seeds
from crane_lib.acceptance.rescue import RESCUE_EPSILON, rescue_over_theta
from crane_lib.cli.common import (
    add_force,
    add_robot,
    bounded_float,
    output_path,
    robot_model,
    robot_of,
)
from crane_lib.identification.projection import EPSILON_LADDER
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters

# The rescue's margin: positive (lambda_min >= 0 alone is not positive definite), at least 1e-6
# (the solvers' accuracy is about 1e-8), at most the largest epsilon of the paper's ladder. The
# arm's own smallest eigenvalue over Theta is of that order (joint 7's rotor inertia), so a
# larger margin would push any model away from the arm it describes.
EPSILON_RANGE = (1e-6, max(EPSILON_LADDER))
epsilon_type = bounded_float(
    *EPSILON_RANGE, unit="kg·m^2", why="the paper uses 1e-3; its ladder tops at 0.01"
)


def register(subparsers) -> None:
    """Add the `rescue` subcommand and its options."""
    parser = subparsers.add_parser(
        "rescue",
        help="nearest model PD over Theta (rescue SDP with constraint generation), then the audit",
    )
    parser.add_argument(
        "model", metavar="MODEL", type=Path, help="parameter file of the reduced 39-parameter set"
    )
    parser.add_argument("--out", required=True, metavar="MODEL", help="rescued model file to write")
    parser.add_argument(
        "--epsilon",
        type=epsilon_type,
        default=RESCUE_EPSILON,
        help=f"margin on the constraint set, kg·m^2, {EPSILON_RANGE[0]:g} to {EPSILON_RANGE[1]:g} "
        "(default %(default)g)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Rescue a model (nearest PD over Θ_r with constraint generation) and audit it."""
    robot = robot_of(args.robot)
    out = output_path(args.out, inputs=[args.model], force=args.force)
    model = robot_model(robot)
    params = load_parameters(args.model, expected_names=model.names)
    print(
        f"{args.model}: rescue SDP over Theta_r with eps = {args.epsilon:g} kg·m^2 (constraint "
        "generation, up to 5 passes)",
        flush=True,
    )
    outcome = rescue_over_theta(model, params.values, epsilon=args.epsilon)
    for p in outcome.passes:
        print(
            f"pass {p['pass']}: {p['constraint_poses']} constraint poses ({p['active_poses']} "
            "active), "
            f"{p['violators']} violators with lambda_min <= eps/2 on the check draw, "
            f"{p['appended']} appended"
        )
    if outcome.result is None:
        print(
            f"{args.model}: NOT accepted: the rescue found no model PD over Theta "
            f"({outcome.reason}); nothing written",
            file=sys.stderr,
        )
        return 1
    rescued = outcome.result.parameters
    audits = audit_seeds(rescued.values, model=model)
    accepted = outcome.converged and all(a.passed for a in audits)
    margins = ", ".join(f"{a.lambda_min:.3g}" for a in audits)
    meta = dict(params.meta)
    meta.update(
        stage="rescued",
        rescue_epsilon=f"{args.epsilon:g}",
        rescue_passes=str(len(outcome.passes)),
        audit_seeds_1_5_lambda_min=margins,
        accepted=str(accepted),
    )
    save_parameters(
        out,
        ParameterSet(rescued.names, rescued.values, params.std_errors, meta),
        comment=f"rescued from {args.model} (nearest PD in the Euclidean norm, eps = "
        f"{args.epsilon:g} on Theta_r)",
    )
    print(
        f"{out}: |change| = {outcome.result.change_norm:.3g}; audit seeds 1-5 lambda_min "
        f"{margins}; "
        f"{'ACCEPTED' if accepted else 'NOT accepted'}"
    )
    return 0 if accepted else 1
