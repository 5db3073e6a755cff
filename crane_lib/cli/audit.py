"""`crane-id audit MODEL [--seed N] [--sparse] [--box manufacturer] [--certify] [--json]`: the
all-pose PD audit of a model's inertia matrix (paper Sec. VI-E), and optionally its certified
version over the continuous box.

MODEL is a parameter file of the reduced base-parameter set (`parameters.load_parameters`) of
the arm `--robot` names (the CRANE-X7 by default); another arm is audited over its own Theta
(`acceptance.audit`), with --box manufacturer over its joint limits; --sparse and --certify are
the CRANE-X7's only.
Exit status: 0 when the audit passes (and, with --certify, the certificate holds), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from crane_lib.acceptance import audit as audit_module
from crane_lib.acceptance.certified import CERTIFIED, certify
from crane_lib.cli.common import add_robot, bounded_float, bounded_int, robot_model, robot_of, seed
from crane_lib.model.parameters import load_parameters

MAX_WORST = 1000  # configurations listed
MAX_MARGIN = (
    0.01  # kg·m^2: the largest epsilon of the paper's ladder; no arm model is PD by much more
)
MAX_BOXES = (
    10**9
)  # the branch and bound keeps its open boxes in memory: 1e9 is far beyond any finished run
MAX_TIME_S = 7 * 24 * 3600.0


def register(subparsers) -> None:
    """Add the `audit` subcommand and its options."""
    parser = subparsers.add_parser(
        "audit", help="all-pose PD audit of a model's inertia matrix (paper Sec. VI-E)"
    )
    parser.add_argument(
        "model", help="parameter file (name,value,unit) of the reduced 39-parameter set"
    )
    parser.add_argument(
        "--seed", type=seed, default=1, help="seed of the random pose draws (paper: 1-5; default 1)"
    )
    parser.add_argument(
        "--sparse",
        action="store_true",
        help="the earlier version's sparse audit instead of the dense one",
    )
    parser.add_argument(
        "--box",
        choices=["theta", "manufacturer"],
        default="theta",
        help="pose domain: the paper's Theta or the manufacturer's joint limits",
    )
    parser.add_argument(
        "--worst",
        type=bounded_int(1, MAX_WORST, name="a count"),
        default=10,
        help=f"how many worst configurations to list (1-{MAX_WORST})",
    )
    parser.add_argument(
        "--certify",
        action="store_true",
        help="also prove PD over the whole continuous box (branch and bound)",
    )
    parser.add_argument(
        "--margin",
        type=bounded_float(
            0.0, MAX_MARGIN, "kg·m^2", why="the arm's own lambda_min is of the order of 5e-3"
        ),
        default=0.0,
        help=f"with --certify: prove M >= margin*I, 0 to {MAX_MARGIN:g} kg·m^2",
    )
    parser.add_argument(
        "--max-boxes",
        type=bounded_int(1, MAX_BOXES, name="a box count"),
        default=5_000_000,
        help=f"with --certify: budget of boxes before 'undecided' (1 to {MAX_BOXES:.0e})",
    )
    parser.add_argument(
        "--time-limit",
        type=bounded_float(0.0, MAX_TIME_S, "s", low_open=True, why="a week at most"),
        default=None,
        help="with --certify: budget in seconds (at most a week)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of the report"
    )
    add_robot(parser)
    parser.set_defaults(handler=run)


def _degrees(pose) -> str:
    return "[" + ", ".join(f"{v:7.2f}" for v in np.rad2deg(pose)) + "]"


def audit_report(result: audit_module.AuditResult, worst: int) -> str:
    """The audit's verdict and its `worst` poses as printed lines."""
    verdict = (
        "PASS: positive definite at every configuration"
        if result.passed
        else f"FAIL: {result.n_violations:,} configurations with lambda_min <= {result.threshold:g}"
    )
    lines = [
        f"PD audit over {result.domain}, seed {result.seed}: {result.n_poses:,} configurations",
        f"  {verdict}",
        f"  lambda_min = {result.lambda_min:.4e} kg·m^2 ({result.worst_component}) at theta = "
        f"{_degrees(result.worst_pose)} deg",
        "  component      poses   violations   lambda_min [kg·m^2]",
    ]
    for name, count in result.pose_counts.items():
        lines.append(
            f"  {name:<10} {count:>9,} {result.violations[name]:>12,}   "
            f"{result.component_lambda_min[name]:.4e}"
        )
    if result.non_pd_fraction_uniform is not None:
        lines.append(
            f"  non-PD share of the uniform draw: {100 * result.non_pd_fraction_uniform:.4f} %"
        )
    lines.append(
        f"  worst {min(worst, len(result.worst_lambdas))} configurations "
        f"(deg, joints 1-{len(result.worst_pose)}):"
    )
    for lam, pose, comp in list(
        zip(result.worst_lambdas, result.worst_poses, result.worst_components)
    )[:worst]:
        lines.append(f"    {lam: .4e}  {_degrees(pose)}  {comp}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Audit a model's inertia matrix over the domain and print the verdict."""
    robot = robot_of(args.robot)
    if args.sparse:
        robot.refuse("the earlier version's sparse audit (--sparse)")
    if args.certify:
        robot.refuse("the certified audit (--certify)")
    model = robot_model(robot)
    params = load_parameters(args.model, expected_names=model.names)
    if args.sparse:
        if args.box != "theta":
            print("--sparse has its own domain; --box is ignored", file=sys.stderr)
        kind = "sparse"
    else:
        kind = "manufacturer" if args.box == "manufacturer" else "dense"
    result = audit_module.audit(
        params, seed=args.seed, kind=kind, model=model, worst_k=max(args.worst, 1)
    )
    ok = result.passed
    certificate = None
    if args.certify:
        box = {
            "sparse": audit_module.sparse_domain,
            "manufacturer": audit_module.manufacturer_box,
            "dense": audit_module.audit_domain,
        }[kind]()
        certificate = certify(
            params,
            margin=args.margin,
            box=box,
            model=model,
            max_boxes=args.max_boxes,
            time_limit_s=args.time_limit,
        )
        ok = ok and certificate.status == CERTIFIED
    if args.json:
        out = {"model": str(args.model), "audit": result.to_dict()}
        if certificate is not None:
            out["certificate"] = certificate.to_dict()
        print(json.dumps(out, indent=1))
    else:
        print(audit_report(result, args.worst))
        if certificate is not None:
            print(f"Certificate over the continuous box: {certificate.summary()}")
    return 0 if ok else 1
