"""Excitation for an arm without the paper's 40 trajectories, checked for rank before recording.

The paper's argument (Appendix B-A) is that single-joint sweeps at a few postures and motions of
adjacent joint pairs excite every base parameter: the Coriolis and centrifugal part of the
regressor is quadratic in the joint velocities, so no column needs three joints moving at once.
This module builds those blocks for any `ArmDescription` through `design.build`, the code that
writes the CRANE-X7's files, and checks the claim on the arm's own base regressor
(`chain_model.ChainModel`) before anything is written.

The CRANE-X7 keeps the paper's reconstructed tables (`design.CRANE_X7_DESIGN`). For any other
arm, `block_design` derives the same structure from the description:

* q̄0: every axis at zero (every file ends there, as B-B requires); an axis whose range excludes
  zero (the Panda's joint 4) at its range's midpoint, the whole degree towards zero
  (`commands.end_posture_deg`, where the command reader expects every file to end).
* The elbow: the first joint after joint 2 whose axis is parallel to joint 2's at q̄0 (the
  CRANE-X7's axis 4; the ViperX's and the SO-101's joint 3). It folds towards its longer side.
  q̄B folds it to FOLD_MARGIN_DEG inside that limit (the CRANE-X7's -150° is 9° inside -159°),
  q̄A halfway (the start posture of every file), q̄C is q̄B with joint 2 at +δ (or -δ if +δ
  is outside its range), as the CRANE-X7's shoulder-up Posture C.
* S(q̄): one two-sided ±δ sweep per arm joint (one-sided about the nominal angle for a joint
  whose zero lies within δ of a limit, as axis 4), then the gripper to +δ, at q̄A, q̄B, q̄C.
* Πα, Πβ, Πγ: every adjacent pair (j, j+1) moved together by δ from q̄0, q̄B and q̄C, then
  the gripper; both joints in the same direction when the range allows (+ first), else each
  joint to the side inside its range. Pairs up to the elbow run at the proximal speed.
* No wrist offset and no held-joint primitives: those are the CRANE-X7's answer to its own
  collinear wrist axes at θ6 = 0 (B-D); the rank check below says whether another arm needs one.
* Command format: the arm's own velocity limits as the ceilings, ACCEL_TIME_S on every axis.

The files are one per block (S_A, S_B, S_C, PI_ALPHA, PI_BETA, PI_GAMMA) under
trajectories/<arm>/; `python -m crane_lib.excitation.arms` regenerates them; `crane-id excite
--robot FOLDER` writes them for any described arm (`block_texts`). Self-collision is
not checked (nor is it for the CRANE-X7's postures, which come from the paper).

Rank check (`excitation_rank`, `check_excitation`): every file is interpolated (the 4-1-4
profile of `commands`) at RANK_SAMPLING_S, the commanded q, q̇, q̈ of all files stacked, and
the base regressor W evaluated there, all axes stacked. The rank is that of W with each column
scaled to unit norm (scaling changes no rank, only rounding) at numpy's tolerance; κ is given for
W as it is (as the excitation chapter reports it, E-17) and for the column-scaled W. A rank
deficit is refused naming the base parameters of the unexcited directions. For an arm in
position mode the files are goal positions streamed to the servos' own loops: their commanded
speed and acceleration are checked against the servos' profile (`check_profile`) first.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib.errors import InputError
from crane_lib.excitation import design as ex
from crane_lib.excitation.commands import (
    SUFFIX,
    CommandFile,
    CommandFormat,
    check_command,
    end_posture_deg,
    format_command_file,
    interpolate,
    read_command_file,
    write_command_file,
)
from crane_lib.model.arm_description import ARMS, ArmDescription, as_float_matrix, load_arm
from crane_lib.model.chain_model import ChainModel
from crane_lib.model.dynamics import model as dynamic_model
from crane_lib.model.identifiability import singular_values, stack
from crane_lib.paths import TRAJECTORY_DIR, portable

FOLD_MARGIN_DEG = 9.0  # q̄B's elbow inside its limit: the CRANE-X7's -150° against -159°
ACCEL_TIME_S = 0.20  # every axis: the CRANE-X7's value on five of its eight axes
RANK_SAMPLING_S = 0.04  # the sampling of the excitation chapter's rank check (E-17)
NULL_COMPONENT = 0.1  # a base parameter is named when its share of an unexcited direction is above
PARALLEL_TOLERANCE = 1e-9
BLOCK_FILES = {
    "S_A": (ex.Block("S", "A"),),
    "S_B": (ex.Block("S", "B"),),
    "S_C": (ex.Block("S", "C"),),
    "PI_ALPHA": (ex.Block("alpha"),),
    "PI_BETA": (ex.Block("beta"),),
    "PI_GAMMA": (ex.Block("gamma"),),
}


def format_tag(arm: ArmDescription) -> str:
    """The arm's name as the FORMAT line spells it: 'ViperX 300 S' -> 'VIPERX-300-S'."""
    return re.sub(r"[^A-Z0-9]+", "-", arm.name.upper()).strip("-")


def zero_pose_axes(arm: ArmDescription) -> np.ndarray:
    """(n_joints, 3) unit axis of every arm joint in frame 0 at zero joint angles."""
    rotation, axes = np.eye(3), []
    for joint in arm.joints:
        rotation = rotation @ as_float_matrix(joint.rotation)
        axes.append(rotation[:, 2])
    return np.array(axes)


def elbow_joint(arm: ArmDescription) -> int:
    """First joint after joint 2 (1-based) whose axis is parallel to joint 2's at zero angles."""
    axes = zero_pose_axes(arm)
    for j in range(3, arm.n_joints + 1):
        if np.linalg.norm(np.cross(axes[1], axes[j - 1])) < PARALLEL_TOLERANCE:
            return j
    return min(3, arm.n_joints)


def command_format(arm: ArmDescription, start_posture_deg: np.ndarray) -> CommandFormat:
    """Header constants of the arm's command files: its velocity limits, ramps, start, limits."""
    ceilings = np.round(np.degrees([a.velocity_limit for a in arm.actuators]), 3)
    return CommandFormat(
        format_tag(arm),
        ceilings,
        np.full(arm.n_axes, ACCEL_TIME_S),
        np.asarray(start_posture_deg, dtype=float),
        arm.n_joints,
        arm.joint_limits(),
    )


def _inside(value: float, limits: np.ndarray) -> bool:
    return bool(limits[0] <= value <= limits[1])


def _pair(first: int, home: np.ndarray, limits: np.ndarray) -> ex.PairPrimitive:
    """Pair (first, first + 1) at `home`: a common direction if both fit, else each its own."""
    a, b = first - 1, first
    for sign in (+1, -1):
        step = sign * ex.DELTA_DEG
        if _inside(home[a] + step, limits[a]) and _inside(home[b] + step, limits[b]):
            return ex.PairPrimitive(first, tuple(home), sign)
    signs = [+1 if _inside(home[k] + ex.DELTA_DEG, limits[k]) else -1 for k in (a, b)]
    return ex.PairPrimitive(first, tuple(home), signs[0], second_sign=signs[1])


def block_design(arm: ArmDescription) -> ex.BlockDesign:
    """The single-joint and pair blocks of `arm` (module docstring); the paper's for a CRANE-X7."""
    if arm.name == "CRANE-X7":
        return ex.CRANE_X7_DESIGN
    limits = np.degrees(arm.joint_limits())
    elbow = elbow_joint(arm)
    lo, hi = limits[elbow - 1]
    # whole degrees, towards zero, as the CRANE-X7's postures
    fold = float(np.trunc(lo + FOLD_MARGIN_DEG if -lo >= hi else hi - FOLD_MARGIN_DEG))
    q0 = end_posture_deg(limits)  # where the command reader expects every file to end
    qb = q0.copy()
    qb[elbow - 1] = fold
    qa = q0.copy()
    qa[elbow - 1] = np.trunc((q0[elbow - 1] + fold) / 2)  # halfway from q̄0 (zero: fold / 2)
    qc = qb.copy()
    qc[1] = ex.DELTA_DEG if _inside(ex.DELTA_DEG, limits[1]) else -ex.DELTA_DEG
    hand = arm.n_axes if arm.gripper is not None else None
    one_sided = tuple(
        j
        for j in range(1, arm.n_joints + 1)
        if not (_inside(-ex.DELTA_DEG, limits[j - 1]) and _inside(ex.DELTA_DEG, limits[j - 1]))
    )
    primitives = tuple(ex.SingleJointPrimitive(j, j) for j in range(1, arm.n_joints + 1))
    if hand is not None:
        primitives += (ex.SingleJointPrimitive(hand, hand),)
    blocks = {
        key: ex.PairBlock(
            ex.PAIR_BLOCKS[key].name,
            tuple(_pair(j, home, limits) for j in range(1, arm.n_joints)),
            tuple(home),
        )
        for key, home in (("alpha", q0), ("beta", qb), ("gamma", qc))
    }
    return ex.BlockDesign(
        postures={"0": q0, "A": qa, "B": qb, "C": qc},
        single_joint_primitives=primitives,
        pair_blocks=blocks,
        limits_deg=limits,
        one_sided_axes=one_sided,
        last_proximal_axis=elbow - 1,
        wrist_axis=None,
        hand_axis=hand,
        command_format=command_format(arm, qa),
        generator=f"crane_lib.excitation.arms for the {arm.name} (paper Appendix B blocks)",
    )


def generate(arm: ArmDescription, design: ex.BlockDesign | None = None) -> dict[str, CommandFile]:
    """The arm's block files, name -> CommandFile (the paper's 40 and V01-V03 for the CRANE-X7)."""
    design = block_design(arm) if design is None else design
    if design is ex.CRANE_X7_DESIGN:
        specs = ex.trajectory_specs()
        return {name: ex.build(spec, design) for name, spec in specs.items()}
    return {
        name: ex.build(ex.TrajectorySpec(name, blocks), design)
        for name, blocks in BLOCK_FILES.items()
    }


# ------------------------------------------------------------------ rank before recording


@dataclass(frozen=True)
class ExcitationRank:
    """Rank and conditioning of an arm's base regressor stacked over commanded states."""

    arm: str
    n_base: int
    rank: int
    condition_number: float  # of W as it is
    scaled_condition_number: float  # of W with unit-norm columns
    n_samples: int
    unexcited: tuple[str, ...]  # base parameters in the directions W does not see

    @property
    def full_rank(self) -> bool:
        """Whether every base parameter is excited."""
        return self.rank == self.n_base


def commanded_states(commands, dt: float = RANK_SAMPLING_S):
    """q, q̇, q̈ (samples, n_axes) of every command file's interpolation at `dt`, stacked."""
    references = [interpolate(cmd, dt) for cmd in commands]
    return tuple(np.vstack([getattr(r, k) for r in references]) for k in ("q", "qd", "qdd"))


def excitation_rank(
    arm: ArmDescription, commands, dt: float = RANK_SAMPLING_S, model: ChainModel | None = None
) -> ExcitationRank:
    """Rank, κ and unexcited base parameters of `arm`'s base regressor over the commands."""
    model = ChainModel(arm) if model is None else model
    q, qd, qdd = commanded_states(list(commands), dt)
    w = stack(model.regressor(q, qd, qdd))
    names = model.base_names
    norms = np.linalg.norm(w, axis=0)
    zero = norms == 0.0
    scaled = w[:, ~zero] / norms[~zero]
    r = np.linalg.qr(scaled, mode="r")
    _, sv, vt = np.linalg.svd(r)
    tolerance = sv[0] * max(scaled.shape) * np.finfo(float).eps
    weak = vt[sv <= tolerance]
    kept = [n for n, z in zip(names, zero) if not z]
    shares = np.max(np.abs(weak), axis=0) if len(weak) else np.zeros(len(kept))
    unexcited = [n for n, z in zip(names, zero) if z]
    unexcited += [kept[i] for i in np.argsort(-shares) if shares[i] > NULL_COMPONENT]
    raw = singular_values(w)
    return ExcitationRank(
        arm=arm.name,
        n_base=len(names),
        rank=int(np.sum(sv > tolerance)),
        condition_number=float(raw[0] / raw[-1]) if raw[-1] > 0 else float("inf"),
        scaled_condition_number=float(sv[0] / sv[-1])
        if not zero.any() and sv[-1] > 0
        else float("inf"),
        n_samples=len(q),
        unexcited=tuple(unexcited),
    )


def check_excitation(arm: ArmDescription, commands, **options) -> ExcitationRank:
    """`excitation_rank`, refused with an InputError naming what is missing when not full rank;
    for an arm in position mode the servos' profile limits checked first (`check_profile`)."""
    commands = list(commands)
    if arm.drive_mode == "position":
        check_profile(arm, commands)
    result = excitation_rank(arm, commands, **options)
    if not result.full_rank:
        raise InputError(
            f"excitation of the {arm.name}",
            f"the base regressor over the commanded states has rank {result.rank} of "
            f"{result.n_base}; not excited: {', '.join(result.unexcited)}",
            "commands that move every axis and excite every base parameter (full rank)",
        )
    return result


def profile_share(arm: ArmDescription, commands, dt: float = 0.001) -> np.ndarray:
    """(2, n_axes): peak commanded |q̇| over the servos' profile velocity and peak |q̈| over
    their profile acceleration ([position_loop]; a limit of 0, none, gives 0). Above 1, a
    position-mode servo reshapes the streamed goal (model.position_loop)."""
    loop = arm.position_loop
    if loop is None:
        raise InputError(arm.name, "no [position_loop]", "an arm whose servos' loop is described")
    _, qd, qdd = commanded_states(list(commands), dt)
    peaks = np.vstack([np.abs(qd).max(axis=0), np.abs(qdd).max(axis=0)])
    limits = np.array([[loop.profile_velocity], [loop.profile_acceleration]])
    return np.divide(peaks, limits, out=np.zeros_like(peaks), where=limits > 0)


def check_profile(arm: ArmDescription, commands) -> np.ndarray:
    """`profile_share`, refused with an InputError naming the axis and limit when the commands
    ask more than the servos' profile allows."""
    share = profile_share(arm, commands)
    for row, (what, limit, unit) in enumerate(
        (
            ("velocity", arm.position_loop.profile_velocity, "rad/s"),
            ("acceleration", arm.position_loop.profile_acceleration, "rad/s^2"),
        )
    ):
        over = np.flatnonzero(share[row] > 1.0)
        if over.size:
            axis = int(over[0])
            raise InputError(
                f"excitation of the {arm.name}",
                f"axis {axis + 1} commanded at {share[row, axis] * limit:.4g} {unit}",
                f"within the servos' profile {what} {limit:.4g} {unit} (arm.toml [position_loop])",
            )
    return share


def peak_torque_share(arm: ArmDescription, commands, dt: float = 0.005) -> np.ndarray:
    """Per axis: peak |torque| of the commanded motion over the axis's torque limit.

    Torques from the description's link inertials alone (no rotor inertia, no friction, no
    gripper load): a lower bound, to see that the blocks ask for torque the servos have.
    Evaluated by the arm's generated kernels in bounded chunks: the CRANE-X7's 40 files give
    half a million states, whose full regressor held at once would take gigabytes."""
    model = dynamic_model("full", arm=arm)
    q, qd, qdd = commanded_states(list(commands), dt)
    standard = {n: arm.inertial_prior.get(n, 0.0) for n in model.standard_names}
    torque = model.inverse_dynamics(q, qd, qdd, model.base_from_standard(standard))
    return np.abs(torque).max(axis=0) / np.array([a.torque_limit for a in arm.actuators])


# ------------------------------------------------------------------ files


def arm_directory(key: str, root: Path | str = TRAJECTORY_DIR) -> Path:
    """Where an arm's generated command files live: trajectories/<key>/."""
    return Path(root) / key


def block_texts(arm: ArmDescription) -> tuple[dict[str, str], ExcitationRank]:
    """Any described arm's block files as text, file name -> text, after the rank check (an
    InputError naming the unexcited base parameters when not full rank; nothing to write)."""
    commands = generate(arm)
    rank = check_excitation(arm, commands.values())
    texts = {}
    for name, cmd in commands.items():
        check_command(cmd, lambda i, name=name: f"{name}{SUFFIX}: waypoint {i + 1}")
        texts[f"{name}{SUFFIX}"] = format_command_file(cmd)
    return texts, rank


def write_arm(key: str, root: Path | str = TRAJECTORY_DIR) -> tuple[list[Path], ExcitationRank]:
    """Check the rank of a shipped arm's blocks, then write them to trajectories/<key>/."""
    arm = load_arm(key)
    commands = generate(arm)
    rank = check_excitation(arm, commands.values())
    directory = arm_directory(key, root)
    paths = [
        write_command_file(directory / f"{name}{SUFFIX}", cmd) for name, cmd in commands.items()
    ]
    return paths, rank


def read_arm(key: str, root: Path | str = TRAJECTORY_DIR) -> dict[str, CommandFile]:
    """The committed command files of a shipped arm, read with its format."""
    arm = load_arm(key)
    fmt = block_design(arm).command_format
    directory = arm_directory(key, root)
    return {name: read_command_file(directory / f"{name}{SUFFIX}", fmt) for name in BLOCK_FILES}


def main(argv=None) -> int:
    """Regenerate trajectories/<arm>/ for the other shipped arms, each checked for rank first."""
    others = [k for k in ARMS if k != "crane_x7"]
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("arms", nargs="*", metavar="ARM", help=f"any of {others} (default all)")
    parser.add_argument("--root", default=str(TRAJECTORY_DIR))
    args = parser.parse_args(argv)
    unknown = [k for k in args.arms if k not in others]
    if unknown:
        parser.error(f"unknown arms {unknown}; expected some of {others}")
    for key in args.arms or others:
        paths, rank = write_arm(key, args.root)
        print(
            f"{key}: {len(paths)} files in {portable(arm_directory(key, args.root))}; base rank "
            f"{rank.rank}/{rank.n_base}, kappa {rank.condition_number:.4g} "
            f"(column-scaled {rank.scaled_condition_number:.4g}), {rank.n_samples} samples"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
