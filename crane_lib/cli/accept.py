"""`crane-id accept LOG --trajectory COMMAND_FILE --out MODEL [--ts 0.04] [--refine fast]
[--validation LOG ...] [--timings]`: Algorithm 1 for one recording
(acceptance.accepted.accept_recording, the path of the main job and of the new-recording
notebook): preprocess, OLS, routing test, projection, refinement, the all-pose PD audit on seeds
1-5, the rescue if a seed fails, the re-audit. Prints the verdict and writes the model file
either way (its header says whether it was accepted). Exit status: 0 accepted, 1 rejected (the
audit's witness pose is printed), 2 bad input.

With --validation, the model is scored on each held-out recording, and replayed in MuJoCo on the
first (export.replay): its nearest consistent MJCF and the description's prior under the
controller the recording used, angle and torque RMSE per axis (the book's replay adds the twin's
truth; left out here, it would add half again to the time).

`--robot vx300s|so101|FOLDER`: the same stages on another arm (its kernels, its Theta); the log
must be of that arm, and so must every held-out recording given with --validation.

`--timings`: one line per stage at the end, `timing: STAGE: W s wall, C s CPU` (CPU of every
thread of the process, so C above W is work on both cores); the first stage is the process's
start and imports, up to the command's first line."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from crane_lib.acceptance.accepted import AUDIT_SEEDS, StageTimes, accept_recording, save_accepted
from crane_lib.cli.common import (
    accept_inputs,
    add_force,
    add_robot,
    interval_seconds,
    robot_model,
    robot_of,
)
from crane_lib.cli.identify import REFINE_HELP
from crane_lib.cli.report_parameters import check_room
from crane_lib.errors import InputError
from crane_lib.identification.refinement import (
    DEFAULT_REFINE,
    REFINE_CHOICES,
    stopped_at_start_note,
)


def register(subparsers) -> None:
    """Add the `accept` subcommand and its options."""
    parser = subparsers.add_parser(
        "accept",
        help="a recording to an accepted model (or a rejection): identify, refine, audit, rescue, "
        "re-audit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "log",
        metavar="LOG",
        type=Path,
        help="raw log (.npz, .csv or .csv.gz) of the arm or the twin",
    )
    parser.add_argument(
        "--trajectory",
        required=True,
        type=Path,
        metavar="COMMAND_FILE",
        help="the command file the recording executed",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="MODEL",
        help="model file to write (CSV: name, value, unit, std_error)",
    )
    parser.add_argument(
        "--ts",
        type=interval_seconds,
        default=0.04,
        help="sampling interval in seconds, whole ms from 0.001 to 0.1 (default 0.04)",
    )
    parser.add_argument(
        "--refine", choices=REFINE_CHOICES, default=DEFAULT_REFINE, help=REFINE_HELP
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="repair a truncated last line or repeated stamps (reported)",
    )
    parser.add_argument(
        "--validation",
        type=Path,
        nargs="+",
        default=[],
        metavar="LOG",
        help="held-out recordings to score the model on",
    )
    parser.add_argument(
        "--torque-scale",
        type=Path,
        default=None,
        metavar="GAINS",
        help="per-axis current-to-torque gains of `crane-id calibrate`: the torque records of the "
        "recording and the held-out ones are scaled by them first",
    )
    parser.add_argument(
        "--timings",
        action="store_true",
        help="print each stage's wall and CPU seconds at the end (process start and imports, "
        "reading the log, checks, identification, refinement, audit, ...)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def process_age() -> float:
    """Seconds since this process started (Linux: /proc/self/stat against the boot clock, to the
    kernel's 10 ms ticks); NaN where there is no /proc."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of stat(5), starttime, counted after the ')'
        return time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return float("nan")


def run(args: argparse.Namespace) -> int:
    # the same checks as the new-recording report, all before any computation
    """Identify, refine, audit and (if needed) rescue one recording; write the accepted model."""
    clock = StageTimes()
    clock.add("process start, imports", process_age(), time.process_time())  # its age, its CPU
    clock("arm, model")
    robot = robot_of(args.robot)
    model = robot_model(robot)
    scale = None
    if args.torque_scale is not None:  # the gains file first: its refusal costs nothing
        scale = _torque_scale(args.torque_scale, robot, Path(args.out))
    inputs = accept_inputs(
        args.log,
        args.trajectory,
        args.out,
        args.validation,
        args.ts,
        args.force,
        repair=args.repair,
        refine=args.refine,
        model=model,
        robot=robot,
        progress=clock,
    )
    out, cmd, validation = inputs.out, inputs.command, inputs.validation
    if scale is not None:
        from crane_lib.acceptance.torque_scale import scaled_log

        validation = [scaled_log(v, scale) for v in validation]
    check_room(out, "--out")  # a full disk named before the computation, not after it
    for repair in inputs.log.repairs:
        print(f"repaired: {repair}")
    start = time.perf_counter()

    def progress(stage: str) -> None:
        print(f"  {stage} ({time.perf_counter() - start:.0f} s)", flush=True)

    result = accept_recording(
        inputs.log,
        cmd.name,
        args.ts,
        refine=args.refine,
        seeds=AUDIT_SEEDS,
        model=model,
        torque_scale=scale,
        progress=progress,
        bundle=inputs.bundle,
        timing=clock,
        grid=inputs.grid,
    )
    clock("report")
    condition = result.condition
    eps = (
        ""
        if condition.projection is None
        else f", projected with eps = {condition.projection.epsilon:g}"
    )
    print(
        f"{cmd.name} at {args.ts * 1e3:g} ms: kappa {condition.ols.kappa:.1f}, route "
        f"{condition.route}{eps}"
    )
    if args.refine != "none":
        report = result.refinement
        print(
            f"{args.refine}: objective {report.get('objective_start', float('nan')):.6g} -> "
            f"{report.get('objective_final', float('nan')):.6g}, "
            f"{report.get('iterations')} iterations"
        )
        note = stopped_at_start_note(report)
        if note is not None:
            print(note)
    if validation:
        clock("held out, replay")
        # loads the twin: imported only when there are held-out logs
        from crane_lib.acceptance.held_out import held_out

        scores = held_out(result.parameters.values, validation, args.ts, model)
        for row in scores.rows():
            print(
                f"held out {row['recording']}: RMSE {row['RMSE [N·m]']:.4f} N·m, MNE "
                f"{row['MNE']:.4f}"
            )
        print(f"held out, pooled: RMSE {scores.pooled_rmse:.4f} N·m")
        _replay(result.parameters, validation[0], robot, args.ts)
    clock("write the model")
    save_accepted(out, result, new=not args.force)
    clock(None)
    print(result.verdict())
    print(
        f"{out}: written ({'accepted' if result.accepted else 'NOT accepted'}) in "
        f"{time.perf_counter() - start:.0f} s"
    )
    if args.timings:
        for line in clock.lines():
            print(line)
    return 0 if result.accepted else 1


def _torque_scale(path: Path, robot, out: Path):
    """The gains file, checked (its arm, its axes; not the output), its gains printed."""
    # imported here: the module loads sympy (the chain model), which no other stage of accept needs
    from crane_lib.acceptance.torque_scale import STATUS_UNLOADED, read_torque_scale

    if Path(path).resolve() == Path(out).resolve():
        raise InputError(f"--out {out}", f"is the input {path}", "a file that is no input")
    if robot.crane_x7:
        from crane_lib.model.arm_description import crane_x7

        arm = crane_x7()
    else:
        arm = robot.arm
    scale = read_torque_scale(path, arm, robot.label)
    for j, (gain, error, status) in enumerate(zip(scale.gain, scale.std_error, scale.status)):
        shown = "" if status == STATUS_UNLOADED else f" ± {error:.4f}"
        print(f"torque scale axis {j + 1}: gain {gain:.4f}{shown} ({status})")
    return scale


def _replay(parameters, log, robot, ts: float) -> None:
    """Replay verification on the first held-out recording (`export.replay`): the model's nearest
    consistent MJCF and the description's prior, simulated in MuJoCo under the controller the
    recording used; their per-axis RMSE printed."""
    import tempfile

    from crane_lib.export import replay
    from crane_lib.twin.recorder import arm_constants

    started = time.perf_counter()
    key = "crane_x7" if robot.crane_x7 else (robot.twin or robot.label)
    with tempfile.TemporaryDirectory() as folder:
        mode = replay.drive_mode_of(log)
        paths = replay.model_files(key, parameters, folder, twin=False, drive_mode=mode)
        replays = replay.replay_models(paths, log, constants=arm_constants(key), ts=ts)
    name = log.metadata.get("trajectory") or log.path
    loop = "the servos' position loop" if mode == "position" else "controller (2)"
    print(
        f"replay in MuJoCo under {loop}, held out {name} "
        f"({time.perf_counter() - started:.0f} s; angle and {ts * 1e3:g} ms low-passed torque RMSE "
        "per axis):"
    )
    for line in replay.table_lines(replays):
        print(line)
