"""`crane-id record COMMAND_FILE --out LOG [--truth PARAMS] [--seed N] [--robot ARM] [--force]`:
execute a command file on the digital twin and write its raw log (Appendix D-C). `--robot vx300s`
or `--robot so101` runs the twin of that arm (its command files are under trajectories/<arm>/);
`--robot FOLDER` (a description folder, `crane-id describe`) runs the twin of that arm: its own
inertials, the drive magnitudes of its servos from the servo catalogue, and a log naming the
folder, its fingerprint and axis count (a folder of a shipped arm's kinematics logs that arm).

`crane-id record COMMAND_FILE --out LOG --port /dev/ttyUSB0 [--robot vx300s] [--baud BIT_S]
[--force]`: execute it on a real CRANE-X7 or ViperX 300 S (or the Protocol 2.0 emulator
answering as that arm, `python -m crane_lib.hardware.emulator [--arm vx300s]`) over
dynamixel-sdk, with the shared FF+FB controller (2) at a 1 ms target cycle
(crane_lib.hardware.recorder). The servo IDs, models, baud rate and the ViperX's shadow servos
come from the arm's description (its [bus] section); a baud rate at which one cycle's packets
do not fit in the 1 ms period (the ViperX's stock 1 Mbit/s) is refused, naming the rate that
fits. `--robot so101 --port /dev/ttyACM0` records the SO-101 over its Feetech STS bus
(feetech-servo-sdk, crane_lib.hardware.sts_recorder; its emulator: `python -m
crane_lib.hardware.sts_emulator`) in position mode: goal positions every 4 ms, the servos' own
position loop, the logged torque from their Present_Current.
Exit status: 0 when the recording ran to its end; 2 for bad input found before torque was
enabled (the port, a servo, the command file); 1 when a fault stopped the arm (torque off on
every servo, the log kept with the fault in its metadata); 128 + N when signal N stopped it.
Once the first row is logged it prints a line starting "logging:" (torque on; from then on
Ctrl-C or SIGTERM stop the arm and keep the log).

`--timing lockstep` is for the emulator started with `--lockstep` only (tests, demonstrations):
the device's clock is driven by the bus and the log is stamped on the 1 ms grid, so a loaded
host cannot stall the recording (crane_lib/hardware/timing.py). The recorder refuses it on a
real arm.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from crane_lib.cli.common import add_force, add_robot, bounded_float, output_path, robot_of, seed
from crane_lib.constants import CONTROL_PERIOD_S
from crane_lib.errors import InputError, process_ended, remove_stale_temporaries, temporaries_of
from crane_lib.excitation.commands import CRANE_X7_FORMAT, commanded_duration, read_command_file
from crane_lib.hardware.arm_bus import BAUD_REGISTER
from crane_lib.hardware.timing import REALTIME, TIMINGS
from crane_lib.logs.raw_log import LOG_SUFFIXES, MAX_STAMP_GAP_S, write_raw_log
from crane_lib.twin import recorder
from crane_lib.twin.truth import CRANE_X7, load_truth

idle_seconds = bounded_float(0.0, 60.0, unit="s", why="logged idle before and after the motion")
# the widest any timing allows; _run_on_arm narrows it to the chosen timing's (real time: the log's
# largest gap)
watchdog_ms = bounded_float(
    1.0,
    max(t.watchdog_ms for t in TIMINGS.values()),
    unit="ms",
    why="encoder reads further apart stop the arm",
)


def register(subparsers) -> None:
    """Add the `record` subcommand and its options."""
    parser = subparsers.add_parser(
        "record",
        help="run a command file on the digital twin, or on the arm with --port, and write its raw "
        "log",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "command_file", metavar="COMMAND_FILE", type=Path, help="command file (Appendix B-B format)"
    )
    parser.add_argument(
        "--out", required=True, metavar="LOG", help="raw log to write (.npz, .csv or .csv.gz)"
    )
    twin_options = parser.add_argument_group("on the digital twin (default)")
    twin_options.add_argument(
        "--truth",
        type=Path,
        default=None,
        metavar="PARAMS_FILE",
        help="truth parameter file (default data/twin_truth.csv)",
    )
    twin_options.add_argument(
        "--seed", type=seed, default=None, metavar="N", help="seed of this execution (default 1)"
    )
    arm = parser.add_argument_group("on the arm")
    arm.add_argument(
        "--port",
        default=None,
        help="serial port of the arm's U2D2 (e.g. /dev/ttyUSB0) or the emulator's terminal",
    )
    arm.add_argument(
        "--idle",
        type=idle_seconds,
        default=None,
        metavar="S",
        help="logged idle before and after the motion, s (default 3)",
    )
    arm.add_argument(
        "--no-approach",
        action="store_true",
        help="do not move to the start posture first (the arm is already there)",
    )
    arm.add_argument(
        "--watchdog-ms",
        type=watchdog_ms,
        default=None,
        metavar="MS",
        help="fault when two encoder reads are further apart (default 20 ms, the log's largest "
        "accepted gap)",
    )
    arm.add_argument(
        "--timing",
        choices=sorted(TIMINGS),
        default=None,
        help="realtime (default: 1 ms cycles on the host clock) or lockstep (the emulator with "
        "--lockstep only: "
        "tests and demonstrations, deterministic on a loaded host)",
    )
    arm.add_argument(
        "--no-realtime", action="store_true", help="do not ask for SCHED_FIFO scheduling"
    )
    arm.add_argument(
        "--baud",
        type=int,
        choices=sorted(BAUD_REGISTER),
        default=None,
        metavar="BIT_S",
        help="the bus's baud rate, one of the DYNAMIXEL rates "
        "(default: the arm's, 3000000 for the CRANE-X7, 1000000 for the ViperX 300 S; "
        "one cycle's packets must take less than the 1 ms period on the wire)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def _refuse_killed_recording(out) -> None:
    """Refuse to record over the partial files of a killed arm recording of `out` (the only copy
    of that arm's samples; without --force the next run would remove them)."""
    left = [p for p, pid in temporaries_of(out) if ".partial" in p.name and process_ended(pid)]
    if left:
        raise InputError(
            str(out),
            f"a killed recording's samples are in {', '.join(str(p) for p in left)}",
            'them recovered first (python -c "from crane_lib.hardware.recorder import '
            f"recover_partial; recover_partial('{out}')\"), or --force to discard them",
        )


def run(args: argparse.Namespace) -> int:
    """Record a command file on the twin (or on the arm with --port) into a raw log."""
    robot = robot_of(args.robot)
    if args.port is not None:
        _check_arm_bus(robot)
    if not args.force:
        _refuse_killed_recording(args.out)
    out = output_path(
        args.out, inputs=[args.command_file, args.truth], force=args.force, suffixes=LOG_SUFFIXES
    )
    if args.port is not None:
        return _run_on_arm(args, out, robot.key)
    arm_only = [
        name
        for name, value in (
            ("--idle", args.idle),
            ("--watchdog-ms", args.watchdog_ms),
            ("--timing", args.timing),
            ("--baud", args.baud),
        )
        if value is not None
    ]
    arm_only += [
        name
        for name, value in (
            ("--no-approach", args.no_approach),
            ("--no-realtime", args.no_realtime),
        )
        if value
    ]
    if arm_only:
        raise InputError(
            " ".join(arm_only), "given without --port", "--port for a recording on the arm"
        )
    twin_arm = robot.twin  # a folder arm: the folder's own inertials, actuators and gains
    fmt = recorder.command_format(twin_arm) if twin_arm != CRANE_X7 else CRANE_X7_FORMAT
    cmd = read_command_file(args.command_file, fmt)  # checked before any simulation
    truth = load_truth(args.truth, twin_arm) if args.truth is not None else None
    run_seed = 1 if args.seed is None else args.seed
    seconds = commanded_duration(cmd) + sum(
        recorder.IDLE_RANGE_S
    )  # the idle stretches average half their range each
    print(
        f"{args.command_file}: recording {commanded_duration(cmd):.1f} s of commanded motion on "
        f"the twin (seed {run_seed})",
        flush=True,
    )
    bar = tqdm(
        total=round(seconds), unit="s", desc="recording", disable=None
    )  # shown on a terminal only
    try:
        samples, metadata = recorder.record(
            cmd,
            seed=run_seed,
            truth=truth,
            arm=twin_arm,
            progress=lambda rows: bar.update(round(rows * CONTROL_PERIOD_S) - bar.n),
        )
    except (recorder.PlantNotPositiveDefinite, recorder.SimulationDiverged) as error:
        source = str(args.truth) if args.truth is not None else "the default truth"
        raise InputError(
            source,
            f"the twin cannot run this truth: {error}",
            "a truth file of physical bodies the twin can simulate",
        ) from None
    finally:
        bar.close()
    metadata["command_file"] = str(args.command_file)
    metadata["command_sha256"] = cmd.sha256
    metadata["truth_file"] = str(args.truth) if args.truth is not None else metadata["truth_file"]
    write_raw_log(out, samples, metadata)
    print(
        f"{out}: {len(samples)} samples, {metadata['record_duration_s']} s (motion "
        f"{metadata['realized_motion_s']} s of {metadata['commanded_duration_s']} s commanded)"
    )
    return 0


def _check_arm_bus(robot) -> None:
    """InputError unless the arm's servos speak DYNAMIXEL Protocol 2.0 or Feetech STS and its log
    can name it."""
    from crane_lib.hardware.arm_bus import arm_bus, sts_arm_bus

    if robot.key is None:
        raise InputError(
            f"--robot {robot.label}",
            "is no shipped arm: the bus recorders (DYNAMIXEL Protocol 2.0, Feetech STS) run the "
            "shipped arms' bus layouts, checked against their emulators",
            "crane_x7, vx300s or so101 (or a folder holding one of them) for --port; a described "
            "arm records on the twin without --port",
        )
    if _is_sts(robot.key):
        sts_arm_bus(robot.key)  # the SO-101's Feetech STS bus (sts_recorder)
        return
    arm_bus(robot.key)  # the description's [bus] section: refused unless DYNAMIXEL Protocol 2.0


def _is_sts(key: str) -> bool:
    """Whether the shipped arm `key` has a Feetech STS bus."""
    from crane_lib.hardware.sts_control_table import PROTOCOL
    from crane_lib.model.arm_description import load_arm

    return key != CRANE_X7 and getattr(load_arm(key).bus, "protocol", None) == PROTOCOL


def _run_on_arm(args: argparse.Namespace, out: Path, arm_key: str) -> int:
    from crane_lib.hardware import recorder as arm

    twin_options = (("--truth", args.truth), ("--seed", args.seed))
    twin_only = [name for name, value in twin_options if value is not None]
    if twin_only:
        raise InputError(
            " ".join(twin_only), "given with --port", "twin options only without --port"
        )
    timing = TIMINGS[args.timing] if args.timing else REALTIME
    sts = _is_sts(arm_key)
    if sts:  # the SO-101: position mode over its Feetech STS bus, at the STS period
        from crane_lib.hardware import sts_recorder

        fields = {} if args.baud is None else {"baud": args.baud}
        settings = sts_recorder.settings_for(
            timing.name, approach=not args.no_approach, realtime=not args.no_realtime, **fields
        )
        timing = settings.timing
    else:
        settings = arm.RecorderSettings(
            approach=not args.no_approach,
            realtime=not args.no_realtime,
            timing=timing,
            arm=arm_key,
            baud=args.baud,
        )
    if args.idle is not None:
        settings.lead_s = settings.tail_s = args.idle
    if args.watchdog_ms is not None:
        # in real time a longer gap would make the log unreadable; in lockstep the log is stamped on
        # the grid
        longest = timing.watchdog_ms if timing.lockstep else 1000 * MAX_STAMP_GAP_S
        if not 1.0 <= args.watchdog_ms <= longest:
            raise InputError(
                f"--watchdog-ms {args.watchdog_ms:g}",
                "out of range",
                f"1 ms to {longest:g} ms"
                + ("" if timing.lockstep else " (a longer gap would make the log unreadable)"),
            )
        settings.watchdog_ms = args.watchdog_ms

    def progress(cycle: int, phase: str) -> None:
        if cycle % 5000 == 0:
            print(f"  cycle {cycle}: {phase}", flush=True)

    def logging(cycle: int) -> None:
        print(
            f"logging: torque on, first row at cycle {cycle} ({timing.name} timing); Ctrl-C or "
            "SIGTERM stops the arm and keeps the log",
            flush=True,
        )

    remove_stale_temporaries(arm.cycles_path(out))  # a killed run's temporary cycle timings
    record = sts_recorder.record_so101 if sts else arm.record_arm
    recording = record(
        args.command_file, args.port, out, settings, progress=progress, on_logging=logging
    )
    meta = recording.metadata
    where = (
        f"{out}: {meta['samples']} samples"
        if recording.path is not None
        else f"{out}: not written (no sample was logged)"
    )
    print(
        f"{where}; cycle median {meta.get('cycle_ms_median', '?')} ms, 99th percentile "
        f"{meta.get('cycle_ms_p99', '?')} ms, "
        f"max {meta.get('cycle_ms_max', '?')} ms, {meta.get('cycles_late', '?')} late of "
        f"{meta.get('cycles', '?')} ({meta['scheduling']})"
    )
    if recording.fault is not None:
        print(
            f"FAULT at cycle {recording.fault.cycle}: {recording.fault.text()}; torque off: "
            f"{meta['torque_off_read_back']}",
            file=sys.stderr,
        )
    return recording.exit_status
