"""What every `crane-id` subcommand shares: exit statuses, the argument parser, range-checked
argument types, and the output-path policy.

The output-path policy (one for every command, checked before any computation)
------------------------------------------------------------------------------
A subcommand's handler calls, first thing,

    out = output_path(args.out, inputs=[args.log, args.trajectory], force=args.force)

(`output_folder` for a command that writes a folder of files) and writes through
`errors.atomic_write` afterwards. The call raises InputError (exit 2, nothing written) unless

1. the target is none of the inputs: not the same resolved path, not the same file by device
   and inode (a hard link or another spelling of the same file);
2. the target does not exist, or is a regular file: a folder, FIFO, socket or device is never
   replaced, and a symbolic link is refused (replacing it would cut the link, not write through);
3. an existing target is replaced only with `--force`;
4. its folder exists, is a folder, and is writable;
5. its folder is on no pseudo-filesystem: not under /proc, /sys or /dev, nor on a mount of the
   kernel's own kinds (proc, sysfs, devtmpfs, cgroup, ...). Root passes the writable check
   there, and the write would fail (or write into the kernel) only after the computation;
6. its name ends in one of `suffixes`, when the command names them.

Without `--force` the target is also created exclusively at the end (`errors.declare_output`):
when two runs race to the same new name, the later one finds it there, writes nothing, and
exits 2. Declaring an output also removes the temporary files a killed run of it left
(`errors.remove_stale_temporaries`: named after their writer's process, removed only once that
process has ended, with one line on stderr).

Register the flag with `add_force(parser)`. Every new subcommand (record --port, accept,
export, identify --method) follows the same two lines.

A new recording's inputs
------------------------
`accept_inputs` is the one check of `crane-id accept` and of the new-recording report (the
papermill notebook of chapter "Your own arm"), run before any computation: the output-path
policy above, the recording's command-file sha256 against the command file, the
identifiability gate (`identification.gate`), and held-out recordings that are long enough
to score and none of them the training recording.

Argument types
--------------
`bounded_float(low, high, unit, ...)`, `bounded_int(low, high, ...)`, `seed`,
`interval_seconds` and `interval_ms` reject a value outside its physical or logical range in the
parser, with the allowed range in the message (exit 2, before anything is read).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from crane_lib.errors import InputError, declare_output, remove_stale_temporaries, shown

if TYPE_CHECKING:  # imported where used: a refusal of an option or a path needs neither
    from crane_lib.excitation.commands import CommandFile
    from crane_lib.logs.raw_log import RawLog

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = {2: 130, 15: 143}  # SIGINT, SIGTERM: 128 + signal number, as shells report them
EXIT_BROKEN_PIPE = 141  # stdout's reader went away: 128 + SIGPIPE, as a shell reports `cat`
SEED_MAX = 2**63 - 1  # numpy's generators take any non-negative integer; a 64-bit one is plenty


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error: `crane-id identify: --ts ...: ... (see crane-id identify
    --help)`."""

    def error(self, message: str):
        """Exit with the bad-input status and a one-line message."""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message} (see {self.prog} --help)\n")


# --------------------------------------------------------------------------------------------
# argument types: each says its allowed range when it refuses


def _number_text(text: str) -> str:
    token = text.strip()
    if len(token) > 40:
        raise argparse.ArgumentTypeError(f"{shown(token)} is not a number")
    return token


def _finite_float(text: str, allowed: str) -> float:
    token = _number_text(text)
    try:
        value = float(token)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{shown(token)} is not a number; expected {allowed}"
        ) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{token} is not finite; expected {allowed}")
    return value


def bounded_float(
    low: float,
    high: float,
    unit: str = "",
    low_open: bool = False,
    high_open: bool = False,
    why: str = "",
):
    """argparse type: a finite float in [low, high] (an open end excludes it); the message gives the
    range."""
    lo_bracket, hi_bracket = ("(" if low_open else "["), (")" if high_open else "]")
    unit_text = f" {unit}" if unit else ""
    allowed = f"a number in {lo_bracket}{low:g}, {high:g}{hi_bracket}{unit_text}" + (
        f" ({why})" if why else ""
    )

    def parse(text: str) -> float:
        value = _finite_float(text, allowed)
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if below or above:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range; expected {allowed}")
        return value

    parse.allowed = allowed
    return parse


def bounded_int(low: int, high: int, why: str = "", name: str = "an integer"):
    """argparse type: an integer in [low, high]; the message gives the range."""
    allowed = f"{name} in [{low}, {high}]" + (f" ({why})" if why else "")

    def parse(text: str) -> int:
        token = _number_text(text)
        if not re.fullmatch(r"[+-]?[0-9]+", token):
            raise argparse.ArgumentTypeError(
                f"{shown(token)} is not an integer; expected {allowed}"
            )
        value = int(token)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range; expected {allowed}")
        return value

    parse.allowed = allowed
    return parse


seed = bounded_int(0, SEED_MAX, "a seed of numpy's generator", "a non-negative integer")
seed.__name__ = "seed"

# sampling intervals: whole milliseconds of the 1 ms grid, up to 100 ms. At 100 ms the
# anti-alias corner (0.45 x Nyquist) is 2.25 Hz, below the position loop's 5.03 Hz; longer
# intervals filter away the motion the regressor has to explain. The paper uses 10-80 ms.
INTERVAL_MS_MIN, INTERVAL_MS_MAX = 1, 100


def interval_ms(text: str) -> int:
    """argparse type: a sampling interval in whole milliseconds, 1 to 100."""
    return _interval_ms_parser(text)


_interval_ms_parser = bounded_int(
    INTERVAL_MS_MIN,
    INTERVAL_MS_MAX,
    "whole milliseconds of the 1 ms grid; the paper uses 10-80",
    "a sampling interval in ms",
)


def interval_seconds(text: str) -> float:
    """argparse type: a sampling interval in seconds that is a whole number of ms, 0.001 to 0.1."""
    allowed = interval_seconds_allowed()
    value = _finite_float(text, allowed)
    ms = round(value * 1e3)
    if abs(ms - value * 1e3) > 1e-6:
        raise argparse.ArgumentTypeError(
            f"{value:g} s is not a whole number of milliseconds; expected {allowed}"
        )
    if not INTERVAL_MS_MIN <= ms <= INTERVAL_MS_MAX:
        raise argparse.ArgumentTypeError(f"{value:g} s is out of range; expected {allowed}")
    return ms / 1e3


def add_force(parser: argparse.ArgumentParser) -> None:
    """Add the `--force` option (replace an existing output file)."""
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output file (never an input, a folder or a special file)",
    )


# --------------------------------------------------------------------------------------------
# the output-path policy


def _identity(path: Path):
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _check_not_an_input(target: Path, inputs, option: str, label: str) -> None:
    resolved = target.resolve(strict=False)
    identity = _identity(target)
    for given in inputs:
        if given is None:
            continue
        source = Path(given)
        same = source.resolve(strict=False) == resolved
        if not same and identity is not None:
            same = _identity(source) == identity
        if same:
            raise InputError(
                f"{option} {target}",
                f"is the input {source}",
                f"a {label} that is none of the command's inputs",
            )


# the kernel's views and device nodes: no output file belongs there
PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
PSEUDO_TYPES = frozenset(
    {
        "proc",
        "sysfs",
        "devtmpfs",
        "devpts",
        "cgroup",
        "cgroup2",
        "securityfs",
        "debugfs",
        "tracefs",
        "configfs",
        "pstore",
        "bpf",
        "mqueue",
        "hugetlbfs",
        "fusectl",
        "binfmt_misc",
        "efivarfs",
        "autofs",
        "nsfs",
        "rpc_pipefs",
    }
)
MOUNT_TABLE = Path("/proc/self/mountinfo")


def _mount_type(folder: Path) -> str | None:
    """The filesystem type of the mount holding `folder` (resolved), from the mount table; None
    where there is no table to read."""
    try:
        lines = MOUNT_TABLE.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    best, kind = -1, None
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        point = Path(fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\"))
        fstype = line.split(" - ", 1)[1].split()[0]
        if (folder == point or point in folder.parents) and len(point.parts) > best:
            best, kind = len(point.parts), fstype
    return kind


def pseudo_filesystem(folder) -> str | None:
    """What makes `folder` a pseudo-filesystem ('under /proc', 'a sysfs mount', ...), or None."""
    resolved = Path(folder).resolve()
    for root in PSEUDO_ROOTS:
        if resolved == root or root in resolved.parents:
            return f"under {root}"
    kind = _mount_type(resolved)
    return f"a {kind} mount" if kind in PSEUDO_TYPES else None


def _check_folder(folder: Path, option: str, target: Path) -> None:
    if not folder.exists():
        raise InputError(
            f"{option} {target}",
            f"its folder {folder} does not exist",
            "an existing, writable folder",
        )
    if not folder.is_dir():
        raise InputError(
            f"{option} {target}", f"{folder} is not a folder", "an existing, writable folder"
        )
    pseudo = pseudo_filesystem(folder)
    if pseudo is not None:
        raise InputError(
            f"{option} {target}",
            f"its folder {folder} is on a pseudo-filesystem "
            f"({pseudo}), which holds no output files",
            "a folder on a disk",
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(
            f"{option} {target}",
            f"its folder {folder} is not writable",
            "an existing, writable folder",
        )


def output_path(
    path,
    inputs=(),
    force: bool = False,
    option: str = "--out",
    suffixes: tuple[str, ...] | None = None,
    force_option: str = "--force",
) -> Path:
    """The output file of a command, checked before any computation (the policy in the module text).

    `inputs`: every file the command reads (None entries are skipped). `suffixes`: allowed name
    endings, e.g. (".npz", ".csv", ".csv.gz"). `force_option`: how the refusal of an existing
    file names the way to replace it. Returns the path as given."""
    target = Path(path)
    if str(path) == "" or target.name in ("", ".", ".."):
        raise InputError(f"{option} {shown(str(path))}", "names no file", "a file name")
    _check_not_an_input(target, inputs, option, "file")
    if suffixes is not None and not any(target.name.endswith(s) for s in suffixes):
        raise InputError(
            f"{option} {target}", "unknown file type", f"a name ending in {' or '.join(suffixes)}"
        )
    if target.is_symlink():
        raise InputError(
            f"{option} {target}",
            "is a symbolic link",
            "a regular file or a new name (give the link's target itself)",
        )
    try:
        info = target.stat()
    except (FileNotFoundError, NotADirectoryError):  # the folder check below names the cause
        info = None
    except OSError as error:
        raise InputError(
            f"{option} {target}",
            f"cannot be inspected ({error.strerror or error})",
            "a writable file name",
        ) from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise InputError(
                f"{option} {target}", "is a folder", "a file name (the folder is not replaced)"
            )
        if not stat.S_ISREG(info.st_mode):
            raise InputError(
                f"{option} {target}", "is a FIFO, socket or device", "a regular file or a new name"
            )
        if not force:
            raise InputError(
                f"{option} {target}", "exists", f"a new file name, or {force_option} to replace it"
            )
    _check_folder(target.parent, option, target)
    declare_output(target, new=not force)  # created exclusively at the end unless forced
    return target


def output_folder(path, file_names, inputs=(), force: bool = False, option: str = "--out") -> Path:
    """A folder a command writes `file_names` into, checked before any computation: it is not an
    input, exists as a folder or can be created in an existing writable folder, and every file it
    will write passes `output_path` (existing ones only with --force). A temporary sibling
    folder that a killed run left (`errors.atomic_write_folder`) is removed."""
    folder = Path(path)
    if str(path) == "":
        raise InputError(f"{option} ''", "names no folder", "a folder")
    _check_not_an_input(folder, inputs, option, "folder")
    remove_stale_temporaries(folder)
    if folder.is_symlink() and not folder.is_dir():
        raise InputError(f"{option} {folder}", "is a symbolic link to no folder", "a folder")
    if folder.exists():
        if not folder.is_dir():
            raise InputError(
                f"{option} {folder}", "is a file, not a folder", "a folder (existing or new)"
            )
        _check_folder(folder, option, folder)
        for name in file_names:
            output_path(folder / name, inputs=inputs, force=force, option=option)
    else:
        _check_folder(folder.parent if str(folder.parent) else Path("."), option, folder)
        for name in file_names:
            declare_output(folder / name, new=not force)
    return folder


# --------------------------------------------------------------------------------------------
# a new recording's inputs: the one check of `crane-id accept` and the new-recording report

# A held-out score over fewer samples than the model has parameters says nothing about the
# model's prediction, and the MNE divides each axis's RMSE by the axis's peak-to-peak torque
MIN_VALIDATION_SAMPLES_PER_PARAMETER = 1
VALIDATION_EXAMPLE = 'a list such as ["V01.csv", "V02.csv"] or one path'


@dataclass
class AcceptInputs:
    """The checked inputs of Algorithm 1 on one recording (what `accept_inputs` read)."""

    out: Path
    command: CommandFile
    log: RawLog
    validation: list[RawLog]
    force: bool
    bundle: object = None  # the log preprocessed at ts for the gate (preprocessing.Bundle)
    grid: object = None  # the even grid it was made from (preprocessing.EvenGrid), for CLIE


def validation_paths(value, option: str = "--validation") -> list[Path]:
    """The held-out recordings `value` names: a list of paths, or a papermill string (a JSON list
    of paths, or one path; "" names none)."""
    if isinstance(value, (str, Path)):
        text = str(value).strip()
        if not text:
            return []
        if not text.startswith("["):
            return [Path(text)]
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(
                f"{option} {shown(text)}",
                f"is not a JSON list ({error.msg} at character {error.pos})",
                VALIDATION_EXAMPLE,
            ) from None
    if not isinstance(value, (list, tuple)):
        raise InputError(
            f"{option} {shown(repr(value))}", "is neither a list nor a path", VALIDATION_EXAMPLE
        )
    for item in value:
        if not isinstance(item, (str, Path)) or not str(item).strip():
            raise InputError(
                f"{option} {shown(repr(item))}", "names no file", "a path of a recording"
            )
    return [Path(item) for item in value]


def _checked_flag(value, option: str) -> bool:
    # papermill passes `-p force true` as the text 'true', which is truthy whatever it says
    if not isinstance(value, bool):
        raise InputError(f"{option} {shown(repr(value))}", "is not a yes/no value", "True or False")
    return value


def _checked_interval(value, option: str) -> float:
    try:
        return interval_seconds(str(value))
    except argparse.ArgumentTypeError as error:
        problem = str(error).split("; expected ")[0]
        raise InputError(
            f"{option} {shown(str(value))}", problem, interval_seconds_allowed()
        ) from None


def interval_seconds_allowed() -> str:
    """What `interval_seconds` accepts, as a refusal states it."""
    return (
        f"a sampling interval in seconds, a whole number of milliseconds from "
        f"{INTERVAL_MS_MIN * 1e-3:g} to {INTERVAL_MS_MAX * 1e-3:g} (the paper uses 0.01-0.08)"
    )


def _same_recording(one: RawLog, other: RawLog) -> bool:
    # the same file by path or inode, or a copy of it under another name
    if _identity(Path(one.path)) == _identity(Path(other.path)):
        return True
    return one.samples.shape == other.samples.shape and np.array_equal(one.samples, other.samples)


def _current_count(recording: RawLog) -> np.ndarray:
    """One count of each axis's current register as torque (N·m) on the recording's arm: one
    servo's torque constant times its current unit (a shadowed joint moves by one servo's)."""
    arm = getattr(recording, "arm", None) or CRANE_X7_ROBOT
    if arm == CRANE_X7_ROBOT:
        from crane_lib.constants import CURRENT_UNIT_A, KT

        return KT * CURRENT_UNIT_A
    from crane_lib.model.arm_description import load_arm

    return np.array([a.kt * a.current_unit for a in load_arm(arm).actuators])


def _check_validation(
    training: RawLog, held_out: list[RawLog], ts: float, n_parameters: int
) -> None:
    """Each held-out recording is not the training recording (by file or by samples), and is long
    enough, with torque varying on every axis, to be scored at `ts`."""
    from crane_lib.logs.preprocessing import preprocess

    needed = MIN_VALIDATION_SAMPLES_PER_PARAMETER * n_parameters
    count = _current_count(training)
    for recording in held_out:
        name = str(recording.path)
        if _same_recording(recording, training):
            raise InputError(
                name,
                f"holds the same samples as the training recording {training.path}",
                "a held-out recording: another execution, not the one identified",
            )
        bundle = preprocess(recording, ts)
        if bundle.n_samples < needed:
            raise InputError(
                name,
                f"{bundle.n_samples} samples at {ts * 1e3:g} ms, too short to "
                f"score a model of {n_parameters} parameters",
                f"at least {needed} samples at this interval",
            )
        # a range below one count of the current register is noise, not a torque to score
        flat = np.flatnonzero(np.ptp(bundle.tau, axis=0) < count)
        if flat.size:
            j = flat[0]
            raise InputError(
                name,
                f"the torque of axis {j + 1} does not vary by one current count "
                f"({count[j]:.2g} N·m) over samples 0 to {bundle.n_samples - 1}, and "
                "the MNE divides by its range",
                "a recording of motion on every axis",
            )


def accept_inputs(
    log,
    trajectory,
    out,
    validation=(),
    ts: float = 0.04,
    force: bool = False,
    repair: bool = False,
    refine: str | None = None,
    model=None,
    notebook: bool = False,
    robot: Robot | None = None,
    progress=None,
) -> AcceptInputs:
    """Every input of Algorithm 1 on one recording, read and checked before any computation (the
    module text lists the checks); an InputError names the first that fails.

    `notebook`: name the papermill parameters (`out`, `-p force True`) instead of the options.
    `robot`: the arm (`robot_of`; None: the CRANE-X7), whose `model` must be given with it; the
    recording must be of that arm. `progress(stage)` is told each stage (reading the log, the
    checks). The bundle the gate measured is returned with the inputs, for identification to
    use rather than preprocess the log again."""
    say = progress or (lambda stage: None)
    robot = Robot(CRANE_X7_ROBOT, CRANE_X7_ROBOT, None) if robot is None else robot
    # imported here: the report's refusals of a parameter, a path or a command file come before
    # the seconds of scipy, cvxpy and numba that identification needs
    from crane_lib.excitation.commands import read_command_file
    from crane_lib.identification import gate
    from crane_lib.logs.raw_log import read_raw_log

    def name(parameter: str) -> str:
        return parameter if notebook else f"--{parameter}"

    force = _checked_flag(force, name("force"))
    ts = _checked_interval(ts, name("ts"))
    if not str(log).strip():
        raise InputError(
            f"{'log' if notebook else 'LOG'} ''", "names no file", "the raw log of the recording"
        )
    held_out_paths = validation_paths(validation, name("validation"))
    target = output_path(
        out,
        inputs=[log, trajectory, *held_out_paths],
        force=force,
        option=name("out"),
        force_option="-p force True" if notebook else "--force",
    )
    say("read the log")
    recording = read_raw_log(log, repair=repair)
    say("check the inputs (command file, held out, preprocess, gate)")
    check_log_robot(recording, robot)  # before the command file: its format is the arm's
    command = read_command_file(trajectory, robot.command_format())
    held_out = [read_raw_log(path, repair=repair) for path in held_out_paths]
    for recording_held_out in held_out:  # scored by the same arm's model
        check_log_robot(recording_held_out, robot)
    # the identifiability gate, as identification.refinement.identify_recording runs it
    gate.check_command_file(recording, trajectory, command.sha256)
    from crane_lib.identification.refinement import REFINE_CHOICES, check_arm_options
    from crane_lib.logs.preprocessing import bundle_from_grid, to_even_grid
    from crane_lib.model.dynamics import model as shared_model

    if refine is not None and refine not in REFINE_CHOICES:
        raise InputError(
            f"{name('refine')} {shown(str(refine))}", "is no refinement", " | ".join(REFINE_CHOICES)
        )
    model = shared_model("reduced") if model is None else model
    if refine is not None:
        check_arm_options(model, refine)
    grid = to_even_grid(recording)
    bundle = bundle_from_grid(grid, ts)
    source = str(recording.path)
    gate.check_bundle(bundle, len(model.names), source)
    gate.check_kappa(gate.measure(bundle, model)["kappa"], source, ts)
    _check_validation(recording, held_out, ts, len(model.names))
    return AcceptInputs(target, command, recording, held_out, force, bundle, grid)


# --------------------------------------------------------------------------------------------
# the arm: `--robot NAME|FOLDER` on every subcommand, the CRANE-X7 by default

CRANE_X7_ROBOT = "crane_x7"
ROBOT_HELP = (
    "the arm: crane_x7 (default), vx300s, so101, or a folder of an arm's URDF numbers "
    "(arm.toml, joints.csv, links.csv, actuators.csv)"
)


def add_robot(parser: argparse.ArgumentParser) -> None:
    """Register `--robot NAME|FOLDER` (the one option every subcommand shares for the arm)."""
    parser.add_argument("--robot", default=None, metavar="NAME|FOLDER", help=ROBOT_HELP)


@dataclass
class Robot:
    """The arm a command runs on.

    label  how messages name it: the shipped arm's key, or the folder as given
    key    the shipped arm's key (arm_description.ARMS), also for a folder holding one of them;
           None for a folder of another arm
    arm    its ArmDescription; None for the CRANE-X7 (its own code path, byte for byte)
    """

    label: str
    key: str | None
    arm: object | None

    @property
    def crane_x7(self) -> bool:
        """Whether this is the CRANE-X7."""
        return self.arm is None

    @property
    def twin(self) -> str | None:
        """The arm the twin runs (`twin.recorder.record`'s `arm`): the shipped arm's key, or the
        folder as given for a folder holding a shipped arm's kinematics, whose own inertials,
        actuators and gains the twin then uses (its log names the shipped arm), or the folder of
        another arm (its log names the folder and its fingerprint)."""
        return self.label if self.arm is not None else self.key

    def command_format(self):
        """The format of this arm's command files (the CRANE-X7's, or `excitation.arms`')."""
        from crane_lib.excitation.commands import CRANE_X7_FORMAT

        if self.crane_x7:
            return CRANE_X7_FORMAT
        from crane_lib.excitation.arms import block_design  # loads sympy: only for other arms

        return block_design(self.arm).command_format

    def refuse(self, what: str) -> None:
        """InputError (exit 2) when `what` does not run on this arm yet; nothing on the CRANE-X7."""
        if not self.crane_x7:
            raise InputError(
                f"--robot {self.label}",
                f"{what} runs on the CRANE-X7 only so far",
                "--robot crane_x7",
            )


def robot_of(value) -> Robot:
    """The arm `--robot` names (None: the CRANE-X7), or an InputError naming the option."""
    text = CRANE_X7_ROBOT if value is None else str(value)
    if text == CRANE_X7_ROBOT:  # its own code path: no description to load
        return Robot(text, text, None)
    # imported here: the description loads pandas, which the CRANE-X7's commands do not need
    from crane_lib.model.arm_description import ARMS, load_arm, load_urdf_arm
    from crane_lib.model.dynamics import arm_key, is_crane_x7

    if not text.strip():  # Path('') is the working folder: an empty value names nothing
        raise InputError(
            f"--robot {shown(text)}",
            "names no arm and no folder",
            f"one of {', '.join(sorted(ARMS))} or a folder with arm.toml",
        )

    if text in ARMS:
        return Robot(text, text, load_arm(text))
    if not Path(text).is_dir():
        raise InputError(
            f"--robot {shown(text)}",
            "is neither a shipped arm nor a folder",
            f"one of {', '.join(sorted(ARMS))} or a folder with arm.toml",
        )
    arm = load_urdf_arm(text)
    if is_crane_x7(arm):
        return Robot(text, CRANE_X7_ROBOT, None)
    shipped = [k for k in ARMS if k != CRANE_X7_ROBOT and arm_key(load_arm(k)) == arm_key(arm)]
    return Robot(text, shipped[0] if shipped else None, arm)


def robot_model(robot: Robot, parameter_set: str = "reduced"):
    """The shared DynamicModel of the robot's arm (the CRANE-X7's own for the CRANE-X7)."""
    from crane_lib.model.dynamics import model as shared_model

    return shared_model(parameter_set, arm=robot.arm)


def check_log_robot(log: RawLog, robot: Robot) -> None:
    """A log recorded on another arm than --robot is refused, naming the file and both arms."""
    recorded = getattr(log, "arm", None) or CRANE_X7_ROBOT
    logged = log.metadata.get("arm_fingerprint")
    if robot.key is None or logged is not None:  # a described arm: the folder's content decides
        from crane_lib.logs.raw_log import folder_fingerprint

        if robot.key is None and logged == folder_fingerprint(robot.label):
            return
        content = "" if logged is None else f" (folder fingerprint {logged})"
        raise InputError(
            str(log.path),
            f"was recorded on the arm {recorded}{content}, not on --robot {robot.label}"
            + ("" if robot.key is not None else f" ({folder_fingerprint(robot.label)})"),
            f"a recording of {robot.label}'s arm as its four files are now, or --robot {recorded}",
        )
    if recorded != robot.key:
        raise InputError(
            str(log.path),
            f"was recorded on the arm {recorded}, not on --robot {robot.label}",
            f"a recording of {robot.label}, or --robot {recorded}",
        )
