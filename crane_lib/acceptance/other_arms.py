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
  each axis's peak torque of that motion over its torque limit (link inertials only).
"""

from __future__ import annotations

from pathlib import Path

from crane_lib.excitation import arms as arm_excitation
from crane_lib.excitation.commands import SUFFIX, CommandFile, read_command_file
from crane_lib.excitation.design import IDENTIFICATION_NAMES
from crane_lib.model import robot_description
from crane_lib.model.arm_description import ARMS, CRANE_X7_ARM_TOML, ArmDescription, load_arm
from crane_lib.model.chain_model import ChainModel
from crane_lib.paper_numbers import PAPER_NUMBERS_CSV
from crane_lib.paths import DATA_DIR, RESULTS_DIR, TRAJECTORY_DIR
from crane_lib.records import read_json_record, write_json_record

OTHER_ARMS_DIR = RESULTS_DIR / "other_arms"
ARM_KEYS = tuple(ARMS)  # the CRANE-X7 first, then the other shipped arms


def record_path(key: str, directory: Path | None = None) -> Path:
    """Where the record of one shipped arm lives."""
    return Path(directory or OTHER_ARMS_DIR) / f"{key}.json"


def identification_commands(key: str, root: Path = TRAJECTORY_DIR) -> dict[str, CommandFile]:
    """The arm's identification command files: the paper's 40 or the arm's generated blocks."""
    if key == "crane_x7":
        return {n: read_command_file(Path(root) / f"{n}{SUFFIX}") for n in IDENTIFICATION_NAMES}
    return arm_excitation.read_arm(key, root)


def input_files(key: str, root: Path = TRAJECTORY_DIR) -> list[Path]:
    """The files whose content decides one arm's record: its description and command files."""
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
    return description + commands


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


def arm_record(key: str, root: Path = TRAJECTORY_DIR) -> dict:
    """Every stage's result on one shipped arm that the pipeline computes today."""
    arm = load_arm(key)
    model = ChainModel(arm)
    commands = identification_commands(key, root)
    rank = arm_excitation.excitation_rank(arm, commands.values(), model=model)
    share = arm_excitation.peak_torque_share(arm, commands.values())
    return {
        "arm": key,
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
    }


def write_arm_record(key: str, directory: Path | None = None) -> Path:
    """Compute one arm's record and write it atomically."""
    return write_json_record(record_path(key, directory), arm_record(key))


def read_arm_records(directory: Path | None = None) -> list[dict]:
    """The records of the shipped arms that exist, the CRANE-X7 first."""
    paths = [record_path(key, directory) for key in ARM_KEYS]
    return [read_json_record(p) for p in paths if p.is_file()]
