"""The pipeline's stages on the three shipped arms: the CRANE-X7, the ViperX 300 S and the SO-101.

One record per arm (results/other_arms/<arm>.json), written by the book's pipeline and read by
the chapter "Other arms". Every field is computed from the arm's description
(`model.arm_description`) and its identification command files; a stage that does not yet run
on an arm leaves its field out, and the chapter says so, so the table never shows a number
that was not computed.

What a record holds today:

* the description: joints, gripper axis, actuators, where the numbers come from;
* the model (`model.chain_model`): standard and base-parameter counts, the base parameters'
  names in canonical order;
* the excitation (`excitation.arms`): rank and κ of the base regressor stacked over the commanded
  states of the arm's identification files (the CRANE-X7's 40, the other arms' six blocks), and
  each axis's peak torque of that motion over its torque limit (link inertials only);
* Algorithm 1 (`algorithm1`): for the ViperX and the SO-101, their PI_ALPHA block recorded on
  their twin (one block reaches full rank alone on both arms) and taken through
  `accepted.accept_recording` at 40 ms, the path `crane-id accept --robot` runs; held out, the
  PI_BETA block (quick profile) or the other five blocks (full profile), recorded with other
  seeds; the well-determined parameters against the twin's truth (`truth_score`). For the
  CRANE-X7, the book's accepted model (AG02 at 40 ms) with its held-out error on the profile's
  V01-V03 recordings and the same truth score.
* Drive modes (`algorithm1` in the arm's own mode, `algorithm1_other_mode` in the other): an arm
  whose description has a `[position_loop]` is taken through Algorithm 1 in both modes, on the
  same command files and seeds: the SO-101 in position mode (its servos have no current mode;
  current mode is the twin's counterfactual), the ViperX 300 S in current mode (the book's
  numbers) and in position mode (Interbotix's stock setup). A position-mode entry adds what the
  servos' loop did: the commanded speed and acceleration over the servos' profile
  (`excitation.arms.profile_share`) and the tracking error of the identification recording.

The wall time of each stage is measured as the record is computed and written apart from it
(results/timings/other_arms_<arm>.json): it differs at every run, the record does not.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import held_out as held_out_stage
from crane_lib.acceptance import truth_score
from crane_lib.acceptance.accepted import StageTimes
from crane_lib.excitation import arms as arm_excitation
from crane_lib.excitation.commands import SUFFIX, CommandFile, read_command_file
from crane_lib.excitation.design import IDENTIFICATION_NAMES
from crane_lib.identification.metrics import pooled_rmse, prediction_error
from crane_lib.logs.raw_log import read_raw_log, write_raw_log
from crane_lib.model import robot_description
from crane_lib.model.arm_description import ARMS, CRANE_X7_ARM_TOML, ArmDescription, load_arm
from crane_lib.model.chain_model import ChainModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import PAPER_NUMBERS_CSV
from crane_lib.paths import DATA_DIR, RESULTS_DIR, TIMINGS_DIR, TRAJECTORY_DIR, recording_path
from crane_lib.records import read_json_record, write_json_record
from crane_lib.twin import recorder as twin

OTHER_ARMS_DIR = RESULTS_DIR / "other_arms"
ARM_KEYS = tuple(ARMS)  # the CRANE-X7 first, then the other shipped arms
TS = 0.040  # the representative interval (the CRANE-X7's accepted model is AG02 at 40 ms)
IDENTIFICATION_BLOCK = "PI_ALPHA"
HELD_OUT_BLOCKS = {"quick": ("PI_BETA",), "full": ("S_A", "S_B", "S_C", "PI_BETA", "PI_GAMMA")}
IDENTIFICATION_SEED = 1  # the twin's seed of the identification recording; held out: 2, 3, ...
CRANE_X7_ACCEPTED = ("AG02", TS, 1)  # the book's accepted model: trajectory, interval, run


def record_path(key: str, directory: Path | None = None) -> Path:
    """Where the record of one shipped arm lives."""
    return Path(directory or OTHER_ARMS_DIR) / f"{key}.json"


def identification_commands(key: str, root: Path = TRAJECTORY_DIR) -> dict[str, CommandFile]:
    """The arm's identification command files: the paper's 40 or the arm's generated blocks."""
    if key == "crane_x7":
        return {n: read_command_file(Path(root) / f"{n}{SUFFIX}") for n in IDENTIFICATION_NAMES}
    return arm_excitation.read_arm(key, root)


def input_files(key: str, profile: str, root: Path = TRAJECTORY_DIR) -> list[Path]:
    """The files whose content decides one arm's record: its description and command files, and
    for the CRANE-X7 the accepted model's record and the profile's V01-V03 recordings."""
    if key == "crane_x7":
        description = [
            robot_description.MDH_TABLE_CSV,
            robot_description.DESCRIPTION_DIR / "joints.csv",
            robot_description.DESCRIPTION_DIR / "links.csv",
            CRANE_X7_ARM_TOML,
            PAPER_NUMBERS_CSV,
        ]
    else:
        folder = DATA_DIR / ARMS[key]
        description = [folder / n for n in ("joints.csv", "links.csv", "actuators.csv", "arm.toml")]
    commands = [Path(root) / f"{n}{SUFFIX}" for n in identification_commands_names(key, root)]
    if key != "crane_x7":
        return description + commands
    _, accepted_json = accepted_stage.accepted_paths(*CRANE_X7_ACCEPTED)
    executions = held_out_stage.validation_executions(profile)
    validation = [recording_path(v, run) for v, run in executions]
    return description + commands + [accepted_json] + validation


def identification_commands_names(key: str, root: Path = TRAJECTORY_DIR) -> list[str]:
    """Names of the arm's identification command files (without the suffix)."""
    if key == "crane_x7":
        return list(IDENTIFICATION_NAMES)
    folder = arm_excitation.arm_directory(key, root).relative_to(Path(root))
    return [f"{folder}/{n}" for n in arm_excitation.BLOCK_FILES]


def description_facts(arm: ArmDescription) -> dict:
    """Joints, gripper, actuators and sources of one arm, as the record stores them."""
    return {
        "name": arm.name,
        "source": arm.source,
        "n_joints": arm.n_joints,
        "n_axes": arm.n_axes,
        "gripper": arm.gripper,
        "actuators": [a.model for a in arm.actuators],
        "torque_limit": [a.torque_limit for a in arm.actuators],
        "snapped": list(arm.snapped),
    }


def arm_record(
    key: str,
    profile: str,
    root: Path = TRAJECTORY_DIR,
    directory: Path | None = None,
    times: StageTimes | None = None,
) -> dict:
    """Every stage's result on one shipped arm that the pipeline computes today (each stage's
    wall time into `times`)."""
    times = StageTimes() if times is None else times
    times.start("model and base parameters")
    arm = load_arm(key)
    model = ChainModel(arm)
    times.start("excitation: rank, κ, peak torque")
    commands = identification_commands(key, root)
    rank = arm_excitation.excitation_rank(arm, commands.values(), model=model)
    share = arm_excitation.peak_torque_share(arm, commands.values())
    algorithm = (
        crane_x7_algorithm1(profile, times)
        if key == "crane_x7"
        else algorithm1(key, profile, root, directory, times)
    )
    other_mode = None
    if key != "crane_x7" and arm.position_loop is not None:
        mode = "current" if arm.drive_mode == "position" else "position"
        other_mode = algorithm1(key, profile, root, directory, times, drive_mode=mode)
    times.stop()
    extra = {} if other_mode is None else {"algorithm1_other_mode": other_mode}
    return {
        "arm": key,
        "profile": profile,
        "description": description_facts(arm),
        "model": {
            "n_standard": len(model.standard_names),
            "n_base": len(model.base_names),
            "base_names": model.base_names,
        },
        "excitation": {
            "files": sorted(commands),
            "samples": rank.n_samples,
            "rank": rank.rank,
            "n_base": rank.n_base,
            "condition_number": rank.condition_number,
            "scaled_condition_number": rank.scaled_condition_number,
            "unexcited": list(rank.unexcited),
            "peak_torque_share": [float(s) for s in share],
        },
        "algorithm1": algorithm,
        **extra,
    }


def _scores(record: dict, model, key: str, logs_or_bundles, bundles: bool) -> dict:
    """Held-out error and truth score of an accepted record's model, as the record keeps them."""
    names = record["names"]
    values = np.asarray(record["parameters"])
    if bundles:
        errors = [prediction_error(model, values, b) for b in logs_or_bundles]
        pooled = pooled_rmse(model, values, logs_or_bundles)
    else:
        scored = held_out_stage.held_out(values, logs_or_bundles, TS, model)
        errors, pooled = scored.errors, scored.pooled_rmse
    score = truth_score.truth_score(
        ParameterSet(names, values),
        ParameterSet(names, np.asarray(record["ols"]), np.asarray(record["std_errors"])),
        truth_score.twin_truth_base(model, key),
    )
    return {
        "held_out_rmse": pooled,
        "held_out_mne": [e.mne for e in errors],
        "truth": score.to_dict(),
    }


def crane_x7_algorithm1(profile: str, times: StageTimes | None = None) -> dict:
    """The book's accepted CRANE-X7 model, its held-out error on V01-V03 and its truth score
    (its recording, refinement and audits are the book's own steps, not timed here)."""
    times = StageTimes() if times is None else times
    times.start("held-out error, truth score")
    _, path = accepted_stage.accepted_paths(*CRANE_X7_ACCEPTED)
    record = read_json_record(path)
    bundles = list(held_out_stage.heldout_bundles(profile, TS).values())
    held_out = [f"{v} run {run}" for v, run in held_out_stage.validation_executions(profile)]
    return {
        "identification": record["trajectory"],
        "held_out": held_out,
        "accepted": record,
        **_scores(record, shared_model("reduced"), "crane_x7", bundles, bundles=True),
    }


def recording_file(
    key: str, block: str, directory: Path | None = None, drive_mode: str | None = None
) -> Path:
    """Where one block's twin recording of another arm is kept (`drive_mode`: a mode other than
    the arm's own, kept beside it under its own name)."""
    suffix = "" if drive_mode is None else f"_{drive_mode}"
    return Path(directory or OTHER_ARMS_DIR) / "recordings" / f"{key}_{block}{suffix}.npz"


def algorithm1(
    key: str,
    profile: str,
    root: Path = TRAJECTORY_DIR,
    directory: Path | None = None,
    times: StageTimes | None = None,
    drive_mode: str | None = None,
) -> dict:
    """Another arm's PI_ALPHA recorded on its twin, through Algorithm 1, scored on held-out
    blocks and against the twin's truth (each stage's wall time into `times`). `drive_mode`:
    the twin's drive mode (None: the description's); another than the description's is timed
    and kept apart (stage names and recordings carry it)."""
    times = StageTimes() if times is None else times
    description = load_arm(key)
    mode = description.drive_mode if drive_mode is None else drive_mode
    own = mode == description.drive_mode
    tag = "" if own else f" ({mode} mode)"
    times.start("twin recordings" + tag)
    blocks = (IDENTIFICATION_BLOCK, *HELD_OUT_BLOCKS[profile])
    folder = arm_excitation.arm_directory(key, root)
    logs = []
    for seed, block in enumerate(blocks, start=IDENTIFICATION_SEED):
        samples, metadata = twin.record(
            folder / f"{block}{SUFFIX}", seed=seed, arm=key, drive_mode=mode
        )
        path = recording_file(key, block, directory, None if own else mode)
        logs.append(read_raw_log(write_raw_log(path, samples, metadata)))
    times.start("identify and refine" + tag)  # the generated kernels load here
    model = shared_model("reduced", arm=load_arm(key))
    accepted = accepted_stage.accept_recording(
        logs[0],
        IDENTIFICATION_BLOCK,
        TS,
        model=model,
        progress=(lambda name: times.start(name + tag)),
    )
    record = accepted_stage.accepted_record(accepted, TS)
    times.start("held-out error, truth score" + tag)
    result = {
        "identification": IDENTIFICATION_BLOCK,
        "held_out": list(blocks[1:]),
        "accepted": record,
        **_scores(record, model, key, logs[1:], bundles=False),
    }
    if mode == "position":
        result["drive_mode"] = mode
        result["position_loop"] = position_facts(description, root, key, logs[0])
    elif not own:  # a current-mode run of an arm described in position mode
        result["drive_mode"] = mode
    return result


def position_facts(description: ArmDescription, root: Path, key: str, log) -> dict:
    """What the servos' loop did on a position-mode run: the identification file's commanded
    speed and acceleration over the servos' profile (per axis), and the recording's tracking
    error (RMS while moving, largest) in degrees and its time at the PWM limit, per axis."""
    command = arm_excitation.read_arm(key, root)[IDENTIFICATION_BLOCK]
    share = arm_excitation.profile_share(description.in_drive_mode("position"), [command])
    moving = log.segment >= 0
    error = np.degrees(log.column_group("position_error")[moving])
    return {
        "profile_velocity_share": [float(v) for v in share[0]],
        "profile_acceleration_share": [float(v) for v in share[1]],
        "tracking_rms_deg": [float(v) for v in np.sqrt(np.mean(error**2, axis=0))],
        "tracking_max_deg": [float(v) for v in np.abs(error).max(axis=0)],
        "duty_limit_share": [float(v) for v in log.clamped.mean(axis=0)],
    }


def timing_path(key: str, directory: Path | None = None) -> Path:
    """Where the wall time of one arm's stages is kept (beside the build's own step times)."""
    folder = TIMINGS_DIR if directory is None else Path(directory).parent / TIMINGS_DIR.name
    return folder / f"other_arms_{key}.json"


def write_arm_record(key: str, profile: str, directory: Path | None = None) -> Path:
    """Compute one arm's record and write it atomically, its stages' wall time apart."""
    times = StageTimes()
    record = arm_record(key, profile, directory=directory, times=times)
    path = write_json_record(record_path(key, directory), record)
    write_json_record(
        timing_path(key, directory),
        {
            "arm": key,
            "profile": profile,
            "cpu_count": os.cpu_count(),
            "stages_s": times.seconds,
        },
    )
    return path


def read_stage_times(directory: Path | None = None) -> dict[str, dict]:
    """The stage times of each shipped arm whose record this results folder computed."""
    paths = {key: timing_path(key, directory) for key in ARM_KEYS}
    return {key: read_json_record(p) for key, p in paths.items() if p.is_file()}


def read_arm_records(directory: Path | None = None) -> list[dict]:
    """The records of the shipped arms that exist, the CRANE-X7 first."""
    paths = [record_path(key, directory) for key in ARM_KEYS]
    return [read_json_record(p) for p in paths if p.is_file()]
