"""The demonstration of the report "Your own arm": a command file recorded on the twin through
the Protocol 2.0 emulator in lockstep timing, then Algorithm 1 on that recording.

The book has no arm. Its data step records the demonstration once (`write_demonstration`) into
results/your_arm/ (the raw log, its cycle stamps, the model file and one JSON record: the
accepted model's record, `accepted.accepted_record`, with the emulator's metadata), and the page
reads it (`load_demonstration`). A practitioner's own recording goes through the same calls
(`cli.common.accept_inputs`, `accepted.accept_recording`) in the page itself.
"""

from __future__ import annotations

import time
from pathlib import Path

from crane_lib.acceptance.accepted import accept_recording, accepted_record, save_accepted
from crane_lib.errors import InputError
from crane_lib.paths import RESULTS_DIR, TRAJECTORY_DIR
from crane_lib.records import read_json_record, write_json_record

DEMO_DIR = RESULTS_DIR / "your_arm"
# the shortest identification trajectory, so that the book builds in minutes
DEMO_TRAJECTORY = "AP01"
DEMO_TS = 0.04  # s, the interval of the identification
DEMO_REFINE = "fast"
LEAD_S = TAIL_S = 1.0  # s of rest logged before and after the command file
MAKE_STEP = "the record written by `make book` (crane_book.pipeline, step 'your arm')"


def demonstration_paths(trajectory: str = DEMO_TRAJECTORY, directory=None) -> dict[str, Path]:
    """The demonstration's files: raw log, model file and record."""
    folder = DEMO_DIR if directory is None else Path(directory)
    return {
        "log": folder / (trajectory + "_emulator.csv.gz"),
        "model": folder / (trajectory + "_model.csv"),
        "record": folder / (trajectory + ".json"),
    }


def command_file(trajectory: str = DEMO_TRAJECTORY) -> Path:
    """The command file the demonstration records."""
    return TRAJECTORY_DIR / (trajectory + ".txt")


def write_demonstration(
    trajectory: str = DEMO_TRAJECTORY,
    ts: float = DEMO_TS,
    refine: str = DEMO_REFINE,
    directory=None,
) -> dict:
    """Record `trajectory` on the emulator (lockstep), run Algorithm 1 on it, write the files of
    `demonstration_paths` and return the record."""
    # imported here: the emulator and the recorder are needed by this step only
    from crane_lib.excitation.commands import read_command_file
    from crane_lib.hardware.emulated import demo_config, record_on_emulator
    from crane_lib.identification import gate
    from crane_lib.logs.raw_log import read_raw_log

    paths = demonstration_paths(trajectory, directory)
    paths["log"].parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    emulated = record_on_emulator(
        command_file(trajectory),
        paths["log"],
        config=demo_config(lockstep=True),
        lead_s=LEAD_S,
        tail_s=TAIL_S,
    )
    emulated.require_complete()
    # the recording read and gated as `crane-id accept` reads it (its CLI checks of options and
    # paths aside: this step names its own files)
    log = read_raw_log(paths["log"], repair=True)
    command = read_command_file(command_file(trajectory))
    gate.check_command_file(log, command_file(trajectory), command.sha256)
    accepted = accept_recording(log, command.name, ts, refine=refine)
    save_accepted(paths["model"], accepted)
    record = {
        **accepted_record(accepted, ts),
        "refine": refine,
        "log": paths["log"].name,
        "model_file": paths["model"].name,
        "emulator": {
            "metadata": dict(emulated.recording.metadata),
            "attempts": list(emulated.attempts),
            "wall_s": emulated.wall_s,
        },
        "wall_s": time.perf_counter() - started,
    }
    write_json_record(paths["record"], record)
    return record


def load_demonstration(trajectory: str = DEMO_TRAJECTORY, directory=None) -> tuple[dict, dict]:
    """(record, paths) of the demonstration; a missing one is an InputError naming the step."""
    paths = demonstration_paths(trajectory, directory)
    for path in paths.values():
        if not path.is_file():
            raise InputError(str(path), "no demonstration of the report", MAKE_STEP)
    return read_json_record(paths["record"]), paths
