"""The command-line tool `crane-id`: one function per subcommand, a small dispatcher.

    crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N]
    crane-id preprocess LOG --out DIR [--repair] [--intervals MS ...]
    crane-id identify LOG --trajectory COMMAND_FILE --ts 0.04 --out MODEL [--repair] [--refine clie|fast|didim|none]
    crane-id audit MODEL [--seed N] [--sparse] [--box manufacturer] [--certify] [--json]
    crane-id rescue MODEL --out MODEL [--epsilon 1e-3]

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


def cmd_identify(args: argparse.Namespace) -> int:
    """Preprocess one recording, identify it (OLS, routing, projection, refinement), write the model file."""
    from .cli_clie import refine_model
    from .commands import read_command_file
    from .identify import identify_condition, save_model
    from .parameters import save_parameters
    from .preprocessing import grid_step, preprocess
    from .raw_log import read_raw_log

    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(str(out), "its folder does not exist", "an existing folder")
    cmd = read_command_file(args.trajectory)  # the command file the recording executed
    try:
        grid_step(args.ts)
    except ValueError as err:
        raise InputError(f"--ts {args.ts:g}", str(err), "a whole number of milliseconds, in seconds (e.g. 0.04)") from None
    log = read_raw_log(args.log, repair=args.repair)
    result = identify_condition(preprocess(log, args.ts), cmd.name)
    result.provenance.update({"log": str(args.log), "command_file": str(args.trajectory)})
    if result.start is None:
        raise InputError(str(args.log), f"not identifiable at {args.ts * 1e3:g} ms: {result.failure}")
    eps = "" if result.projection is None else f", projected with eps = {result.projection.epsilon:g}"
    print(f"{cmd.name} at {args.ts * 1e3:g} ms: kappa {result.ols.kappa:.1f}, route {result.route}{eps}"
          f" (lambda_min over the visited configurations {result.lambda_min_visited:.3g} kg·m^2 for OLS)")
    if args.refine == "none":
        save_model(out, result)
    else:
        refined, report = refine_model(args.log, result, args.refine, workers=args.refine_workers, log=log)
        refined.meta.update({k: v for k, v in _model_meta(result).items() if k not in refined.meta})
        save_parameters(out, refined, comment=f"CRANE-X7 39-parameter model after {args.refine}; std_error is the OLS standard error")
        print(f"{args.refine}: objective {report.get('objective_start', float('nan')):.6g} -> {report.get('objective_final', float('nan')):.6g}, "
              f"{report.get('iterations')} iterations, {report.get('wall_time_s', float('nan')):.1f} s")
    print(f"{out}: written")
    return 0


def _model_meta(result) -> dict[str, str]:
    return {"trajectory": result.trajectory, "ts_s": f"{result.ts:g}", "kappa": f"{result.ols.kappa:.6g}",
            "epsilon": "" if result.projection is None else f"{result.projection.epsilon}",
            **{f"provenance.{k}": v for k, v in result.provenance.items()}}


def cmd_rescue(args: argparse.Namespace) -> int:
    """The rescue SDP (12) over Theta, then the acceptance audit on seeds 1-5."""
    from .audit import audit_seeds
    from .dynamics import model as shared_model
    from .parameters import ParameterSet, load_parameters, save_parameters
    from .sdp import rescue_over_theta

    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(str(out), "its folder does not exist", "an existing folder")
    model = shared_model("reduced")
    params = load_parameters(args.model, expected_names=model.names)
    outcome = rescue_over_theta(model, params.values, epsilon=args.epsilon)
    for p in outcome.passes:
        print(f"pass {p['pass']}: {p['constraint_poses']} constraint poses ({p['active_poses']} active), "
              f"{p['violators']} violators with lambda_min <= eps/2 on the check draw, {p['appended']} appended")
    rescued = outcome.result.parameters
    audits = audit_seeds(rescued.values, model=model)
    accepted = outcome.converged and all(a.passed for a in audits)
    margins = ", ".join(f"{a.lambda_min:.3g}" for a in audits)
    meta = dict(params.meta)
    meta.update(stage="rescued", rescue_epsilon=f"{args.epsilon:g}", rescue_passes=str(len(outcome.passes)),
                audit_seeds_1_5_lambda_min=margins, accepted=str(accepted))
    save_parameters(out, ParameterSet(rescued.names, rescued.values, params.std_errors, meta),
                    comment=f"rescued from {args.model} (nearest PD in the Euclidean norm, eps = {args.epsilon:g} on Theta_r)")
    print(f"{out}: |change| = {outcome.result.change_norm:.3g}; audit seeds 1-5 lambda_min {margins}; "
          f"{'ACCEPTED' if accepted else 'NOT accepted'}")
    return 0 if accepted else 1


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

    from .cli_preprocess import add_preprocess_parser

    preprocess = add_preprocess_parser(sub)
    preprocess.set_defaults(handler=lambda args: args.func(args))

    identify = sub.add_parser("identify", help="identify a model from one recording: OLS, routing test, SDP projection")
    identify.add_argument("log", metavar="LOG", type=Path, help="raw log (.npz, .csv or .csv.gz)")
    identify.add_argument("--trajectory", required=True, type=Path, metavar="COMMAND_FILE", help="the command file the recording executed")
    identify.add_argument("--ts", type=float, default=0.04, help="sampling interval in seconds (default 0.04)")
    identify.add_argument("--out", required=True, metavar="MODEL", help="model file to write (CSV: name, value, unit, std_error)")
    identify.add_argument("--repair", action="store_true", help="repair a truncated last line or repeated stamps (reported)")
    from .cli_clie import add_refine_option

    add_refine_option(identify, default="clie")
    identify.set_defaults(handler=cmd_identify)

    from .cli_audit import add_audit_arguments, cmd_audit

    audit = sub.add_parser("audit", help="all-pose PD audit of a model's inertia matrix (paper Sec. VI-E)")
    add_audit_arguments(audit)
    audit.set_defaults(handler=cmd_audit)

    rescue = sub.add_parser("rescue", help="nearest model PD over Theta (rescue SDP with constraint generation), then the audit")
    rescue.add_argument("model", metavar="MODEL", type=Path, help="parameter file of the reduced 39-parameter set")
    rescue.add_argument("--out", required=True, metavar="MODEL", help="rescued model file to write")
    rescue.add_argument("--epsilon", type=float, default=1e-3, help="margin on the constraint set, kg·m^2 (default 1e-3)")
    rescue.set_defaults(handler=cmd_rescue)
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
