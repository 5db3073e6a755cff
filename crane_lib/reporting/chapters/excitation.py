"""Chapter "Excitation" (paper Sec. V-A, Appendix B), its tables and figures: the command
format, Tables IV and XIII-XV as reconstructed, the overview of the set, the commanded angles
(Fig. 8, Fig. 9), the counts of Appendix B against the paper, and the identifiability checks on
the commanded states. Everything here is computed from the generated command files; the
chapter's Markdown holds the prose."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.constants import VELOCITY_CEILING_DEG_S
from crane_lib.excitation import design as ex
from crane_lib.excitation.commands import (
    ACCEL_TIME_S,
    commanded_duration,
    interpolate,
    segment_statistics,
)
from crane_lib.model import identifiability
from crane_lib.model.dynamics import DynamicModel, regressor
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import (
    Comparison,
    Count,
    Why,
    comparison_table,
    numbered,
    significant,
)

HEADER_FACTOR = 0.90  # the speed factor at which B-B quotes the peak velocities
HEADER_ROW = "peak velocity at factor " + format(HEADER_FACTOR, ".2f")
KAPPA_IDS = {
    "AP01": "ap01_kappa_40ms",
    "AP02": "ap02_kappa_40ms",
    "AP03": "ap03_kappa_40ms",
    "AG02": "ag02_kappa_40ms",
}


@dataclass(frozen=True)
class ExcitationSet:
    """The generated command files and their statistics (computed once per chapter)."""

    identification: dict
    validation: dict
    stats: dict
    counts: object  # design.SetCounts


@lru_cache(maxsize=1)
def excitation_set() -> ExcitationSet:
    """The identification and validation command files, generated once, with their counts."""
    identification, validation = ex.generate_identification(), ex.generate_validation()
    stats = {name: segment_statistics(cmd) for name, cmd in identification.items()}
    return ExcitationSet(
        identification, validation, stats, ex.set_counts(identification, stats=stats)
    )


def header_table() -> object:
    """The per-axis velocity ceilings and nominal acceleration times every file carries."""
    frame = pd.DataFrame(
        {
            "velocity ceiling (°/s)": VELOCITY_CEILING_DEG_S,
            "nominal acceleration time (s)": ACCEL_TIME_S,
        },
        index=pd.Index(range(1, 9), name="axis"),
    )
    return numbered(
        frame,
        "The header every command file carries (Appendix B-B)",
        "tab-excitation-header",
        digits=4,
    )


def header_against_paper() -> object:
    """The header's ceilings at the speed factor B-B quotes, against B-B's velocities."""
    rows = [
        Comparison(
            HEADER_ROW + ", axis 2",
            "vel_at_090_axis2",
            HEADER_FACTOR * VELOCITY_CEILING_DEG_S[1],
        ),
        Comparison(
            HEADER_ROW + ", axes 1, 3–8",
            "vel_at_090_axes_1_3to8",
            HEADER_FACTOR * VELOCITY_CEILING_DEG_S[[0, 2, 3, 4, 5, 6, 7]],
        ),
    ]
    return comparison_table(
        rows, "The header's ceilings at the factor B-B quotes", name="tab-excitation-header-paper"
    )


def families_table() -> object:
    """Table IV: the five families and their members, counted from the specifications."""
    names = list(ex.trajectory_specs())
    content = {
        "PA": "S(q̄A), then the pair blocks of that row of Table XV",
        "PB": "S(q̄B), then the same pair blocks",
        "PC": "S(q̄C), then the same pair blocks",
        "AP": "pair blocks alone (Πα, Πγ, Πβ; Πγ at two reduced levels)",
        "AG": "the three pair blocks; the second adds S at all three postures first",
    }
    rows = []
    for family, text in content.items():
        members = [n for n in names if n.startswith(family)]
        rows.append(
            {
                "family": members[0] + "–" + members[-1],
                "content": text,
                "trajectories": len(members),
            }
        )
    frame = pd.DataFrame(rows).set_index("family")
    if frame["trajectories"].sum() != len(names):
        raise AssertionError("the families do not cover the identification set")
    return numbered(frame, "The trajectory families", "tab-excitation-families", paper="IV")


def postures_table() -> object:
    """The nominal postures and the wrist offset (degrees)."""
    frame = pd.DataFrame(
        {
            name: q
            for name, q in (("q̄0", ex.Q0), ("q̄A", ex.QA), ("q̄B", ex.QB), ("q̄C", ex.QC), ("w", ex.W))
        },
        index=["θ" + str(j) + " (deg)" for j in range(1, 8)] + ["hand (deg)"],
    ).T
    frame.index.name = "posture"
    return numbered(
        frame,
        "The nominal postures and the wrist offset w (register E-4)",
        "tab-excitation-postures",
        digits=3,
    )


def single_joint_table() -> object:
    """Table XIII as reconstructed: the single-joint block per posture."""
    return numbered(
        ex.table_single_joint_block(),
        "Reconstructed: the single-joint block, the angles "
        "(deg) each primitive visits from its start, per posture",
        "tab-excitation-table-xiii",
        paper="XIII",
    )


def pair_blocks_table() -> object:
    """Table XIV as reconstructed: the three pair blocks."""
    return numbered(
        ex.table_pair_blocks(),
        "Reconstructed: home posture and direction s of each pair "
        "primitive, and its speed factor at the normal level",
        "tab-excitation-table-xiv",
        digits=2,
        paper="XIV",
    )


def composition_table() -> object:
    """Table XV as reconstructed: the block sequence of every identification trajectory."""
    return numbered(
        ex.table_composition(),
        "Reconstructed: the block sequence of every identification "
        "trajectory; PX stands for PA, PB and PC",
        "tab-excitation-table-xv",
        paper="XV",
    )


def overview_figure():
    """Fig. 5 style: commanded duration and segments moving one, two or three arm joints."""
    data = excitation_set()
    names = list(data.stats)
    durations = [data.stats[n].commanded_duration_s for n in names]
    fig, (ax_t, ax_k) = plt.subplots(2, 1, figsize=(11, 5.5), sharex=True)
    x = np.arange(len(names))
    colours = [
        "C0"
        if n.startswith("PA")
        else "C1"
        if n.startswith("PB")
        else "C2"
        if n.startswith("PC")
        else "C3"
        for n in names
    ]
    ax_t.bar(x, durations, color=colours)
    ax_t.set_ylabel("commanded duration (s)")
    bottom = np.zeros(len(names))
    legend = ("1 arm joint", "2 arm joints", "3 arm joints")
    for k, colour, label in zip((1, 2, 3), ("0.75", "0.45", "k"), legend):
        segments = np.array(
            [int((data.stats[n].segments.n_moving_arm_joints == k).sum()) for n in names]
        )
        ax_k.bar(x, segments, bottom=bottom, color=colour, label=label)
        bottom += segments
    ax_k.set_ylabel("segments")
    ax_k.legend(ncol=3, fontsize=8)
    ax_k.set_xticks(x, names, rotation=90, fontsize=7)
    fig.suptitle(
        "The identification command files (PA blue, PB orange, PC green, AP/AG red); "
        "no recorded data"
    )
    fig.tight_layout()
    return fig


def commands_figure(name: str):
    """The commanded angles of all eight axes of one command file (degrees)."""
    data = excitation_set()
    ref = interpolate({**data.identification, **data.validation}[name], dt=0.01)
    fig, axes = plt.subplots(8, 1, figsize=(11, 9), sharex=True)
    for j, ax in enumerate(axes):
        ax.plot(ref.t, np.degrees(ref.q[:, j]), lw=0.9)
        ax.set_ylabel("θ" + str(j + 1) if j < 7 else "hand", rotation=0, labelpad=18, fontsize=8)
        ax.tick_params(labelsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(name + ": commanded angles (degrees), from the command file")
    fig.tight_layout()
    return fig


def single_joint_share(name: str = "AG02") -> float:
    """Share of a trajectory's commanded duration in its single-joint blocks and their transits."""
    spec = ex.trajectory_specs()[name]
    singles = ex.TrajectorySpec("S only", tuple(b for b in spec.blocks if b.kind == "S"))
    if not singles.blocks:
        return 0.0
    return commanded_duration(ex.build(singles)) / commanded_duration(ex.build(spec))


SINGLE_JOINT_LEVELS = (0.30, 0.60, 0.75, 0.90)  # the levels the set uses anywhere (register E-6)


def single_joint_levels() -> pd.DataFrame:
    """Register E-6's evidence: AG02 with its single-joint blocks at each level the set uses, the
    pair blocks unchanged (waypoints, commanded duration in s, whether the level is ours)."""
    spec = ex.trajectory_specs()["AG02"]
    rows = []
    for level in SINGLE_JOINT_LEVELS:
        blocks = tuple(ex.Block("S", b.posture, level) if b.kind == "S" else b for b in spec.blocks)
        cmd = ex.build(ex.TrajectorySpec("AG02", blocks))
        rows.append(
            {
                "single-joint level": format(level, ".2f"),
                "AG02 waypoints": cmd.n_waypoints,
                "AG02 commanded duration (s)": commanded_duration(cmd),
                "chosen": "yes" if level == ex.SINGLE_JOINT_SPEED else "",
            }
        )
    return pd.DataFrame(rows).set_index("single-joint level")


def single_joint_level_table(levels: pd.DataFrame) -> object:
    """`single_joint_levels` as a numbered table."""
    return numbered(
        levels,
        "AG02 with its single-joint blocks at each level of the set (register E-6's evidence)",
        "tab-excitation-single-joint-level",
        digits=4,
    )


def counts_against_paper() -> object:
    """The counts of Appendix B (and VII-D, D-I) computed from the generated files."""
    data = excitation_set()
    counts, ag02 = data.counts, data.stats["AG02"]
    paper_rows, paper_s = paper("ag02_waypoints").value, paper("ag02_commanded_duration").value
    per_row_ours = counts.n_segments / ag02.n_waypoints
    per_row_paper = paper("commanded_segment_count").value / paper_rows
    shares_80 = counts.undersampled_by_file[0.080]
    band = paper("ramps_undersampled_80ms")
    outside = {n: v for n, v in shares_80.items() if not band.value <= 100 * v <= band.value_hi}
    validation_s = sum(commanded_duration(c) for c in data.validation.values())
    scaled_total = paper("id_motion_total").value * ag02.commanded_duration_s / paper_s
    worst_fine = max(counts.undersampled_share[ts][1] for ts in (0.010, 0.020, 0.040))
    fine_ramps = (
        "none" if worst_fine == 0 else f"up to {significant(100 * worst_fine, 2)} % of a file's"
    )
    rows = [
        Comparison("identification files", "id_candidate_count", counts.n_files),
        Comparison(
            "commanded segments",
            "commanded_segment_count",
            counts.n_segments,
            why=Why.reconstruction(
                f"per AG02 waypoint {per_row_ours:.2f} against the paper's {per_row_paper:.2f}: "
                "the gap follows AG02's missing rows (E-9, E-11)"
            ),
        ),
        Comparison(
            "segments moving three arm joints",
            "three_joint_segment_count",
            counts.n_three_joint_segments,
        ),
        Comparison(
            "most arm joints moving in one segment",
            "max_commanded_joints_together",
            counts.max_moving_arm_joints,
        ),
        Comparison(
            "files without a three-joint segment",
            "traj_without_three_joint",
            Count(len(counts.files_without_three_joint), counts.n_files),
            paper_whole="id_candidate_count",
        ),
        Comparison(
            "AG02 waypoints",
            "ag02_waypoints",
            ag02.n_waypoints,
            why=Why.reconstruction(
                "posture-change rows the text does not place (E-8, E-9; counted under the table)"
            ),
        ),
        Comparison(
            "AG02 commanded duration",
            "ag02_commanded_duration",
            ag02.commanded_duration_s,
            why=Why.reconstruction(
                "the single-joint blocks' level (E-6) and AG02's missing rows (E-9)"
            ),
        ),
        Comparison(
            "40 files, total commanded",
            "id_motion_total",
            counts.total_duration_s / 60,
            unit="min",
            digits=3,
            why=Why.reconstruction(
                f"the paper's total scaled by our AG02 duration over its own is {scaled_total:.1f} "
                "min; the paper's figure may also be realized rather than commanded time (E-11)"
            ),
        ),
        Comparison(
            "slowest trajectory (lowest mean commanded speed)",
            None,
            counts.slowest,
            paper_text="PA07",
        ),
        Comparison(
            "V01–V03 total commanded",
            "validation_motion_total",
            validation_s,
            why=Why.reconstruction(
                "the cycle counts are chosen to come closest: matched by construction (E-14)"
            ),
        ),
        Comparison("effective ramp, median", "ramp_duration_median", counts.ramp_median_s),
        Comparison(
            "effective ramp, minimum",
            "ramp_duration_min",
            counts.ramp_min_s,
            why=Why.reconstruction(
                "no move of ours is short enough to shorten a ramp below the nominal "
                "acceleration time (E-3)"
            ),
        ),
        Comparison(
            "ramps with fewer than three samples at 80 ms, per file",
            "ramps_undersampled_80ms",
            100 * np.array(list(shares_80.values())),
            digits=2,
            why=None
            if not outside
            else Why.reconstruction(
                f"{len(shares_80) - len(outside)} of {len(shares_80)} files inside the paper's "
                "range; outside: "
                + ", ".join(f"{n} {100 * v:.0f} %" for n, v in sorted(outside.items()))
            ),
        ),
        Comparison(
            "ramps with fewer than three samples at 10, 20 and 40 ms",
            None,
            fine_ramps,
            paper_text="none",
            why=None if fine_ramps == "none" else Why.reconstruction("the ramps of E-3"),
        ),
    ]
    return comparison_table(
        rows,
        "The counts of Appendix B, computed from the generated files, against the paper's",
        name="tab-excitation-counts",
    )


def kappa_against_paper(ts: float) -> object:
    """Rank and κ of the 39-column regressor on the commanded references sampled at ts."""
    data = excitation_set()
    rows = []
    for name, number_id in KAPPA_IDS.items():
        ref = interpolate(data.identification[name], dt=ts)
        w_all = identifiability.stack(regressor(ref.q, ref.qd, ref.qdd, parameter_set="reduced"))
        rank, kappa = identifiability.rank_and_condition(w_all)
        rows.append(
            Comparison(
                f"κ of {name} (rank {rank} of {w_all.shape[1]}, {w_all.shape[0]} rows)",
                number_id,
                kappa,
                digits=3,
                why=Why.reconstruction(
                    "commanded references on the twin's model, not the arm's recorded states "
                    "(register E-17)"
                ),
            )
        )
    return comparison_table(
        rows,
        f"Rank and κ on the commanded states at {ts * 1e3:g} ms against the paper's recorded "
        "40 ms values",
        name="tab-excitation-kappa-commanded",
    )


def mayeda_checks() -> pd.DataFrame:
    """Appendix B-A's two checks per parameter set: the polarization identity's largest violation
    (N·m) on three moving joints and the rank reached with at most two arm joints moving."""
    rows = []
    for set_name in ("reduced", "full"):
        model = DynamicModel(set_name)
        rows.append(
            {
                "parameter set": set_name,
                "columns": model.n_parameters,
                "polarization violation, largest (N·m)": (
                    identifiability.polarization_violation(model)
                ),
                "rank with at most two arm joints moving": (
                    identifiability.rank_with_two_joints_moving(model)
                ),
            }
        )
    return pd.DataFrame(rows).set_index("parameter set")


def mayeda_table(checks: pd.DataFrame) -> object:
    """`mayeda_checks` as a numbered table."""
    return numbered(
        checks, "Appendix B-A's argument checked on the model", "tab-excitation-mayeda", digits=2
    )
