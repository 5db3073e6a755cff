"""Chapter "Modeling" (paper Sec. III-A, III-C, Appendix A), its tables and figure: Table I,
the geometry against the manufacturer's description, the base parameters and Table II, the
ranks of the numeric model and the platform constants. The chapter's Markdown holds the prose;
the functions here return tables, figures and the values the prose glues."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import sympy

from crane_lib import constants
from crane_lib.model import identifiability, robot_description
from crane_lib.model.base_parameters import PARAMETER_SET_LABELS, PARAMETER_SETS, grouping
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import CATEGORIES, category, split_name, unit_of
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import Comparison, Why, comparison_table, numbered

LINK_TERMS = CATEGORIES[:2]  # the link-side categories the description gives values for


def table_i(table) -> object:
    """Table I as this book reads it (the signs of alpha are our choice, register)."""
    frame = pd.DataFrame(
        [
            {
                "j": row.j,
                "a(j)": row.ant,
                "σ": row.sigma,
                "α (deg)": float(row.alpha) * 180 / np.pi,
                "d (m)": float(row.d),
                "θ": f"θ{row.j}",
                "r (m)": float(row.r),
            }
            for row in table
        ]
    ).set_index("j")
    return numbered(
        frame,
        "Modified DH parameters (OpenSYMORO convention), as this book reads them",
        "tab-modeling-mdh",
        digits=3,
        paper="I",
    )


def table_i_against_paper(table) -> object:
    """What the text of Sec. III-A states about Table I, against the file."""
    rows = [
        Comparison("RL3", "dh_offset_rl3", float(table[2].r)),
        Comparison("RL5", "dh_offset_rl5", float(table[4].r)),
        Comparison(
            "nonzero link offsets",
            "nonzero_dh_offset_count",
            sum(1 for row in table if row.r != 0 or row.d != 0),
        ),
    ]
    return comparison_table(
        rows, "What the text of Sec. III-A states about Table I", name="tab-modeling-mdh-paper"
    )


@lru_cache(maxsize=2)
def geometry(table) -> pd.DataFrame:
    """Each MDH axis against the description's (`geometry_check`); raises if one does not match."""
    frame = pd.DataFrame(robot_description.geometry_check(table)).set_index("joint")
    worst_angle, worst_distance = frame["axis_angle_deg"].max(), frame["line_distance_m"].max()
    if worst_angle > 1e-9 or worst_distance > 1e-12:  # degrees, metres: rounding only
        raise AssertionError(
            "the MDH axes do not match the description (deg, m)", worst_angle, worst_distance
        )
    return frame


def geometry_table(table) -> object:
    """The geometry check as a table: angle between axes, origin off and along the axis."""
    shown = geometry(table)[
        ["axis_angle_deg", "line_distance_m", "origin_offset_m", "mdh_origin_height_m"]
    ]
    shown = shown.rename(
        columns={
            "axis_angle_deg": "angle between axes (deg)",
            "line_distance_m": "origin off the MDH axis (m)",
            "origin_offset_m": "origin along the axis from O_j (m)",
            "mdh_origin_height_m": "height of O_j (m)",
        }
    )
    return numbered(
        shown,
        "Each MDH joint axis against the description's joint axis at the zero pose "
        "(data: the manufacturer's description)",
        "tab-modeling-geometry",
        digits=4,
    )


def offsets_against_paper(table) -> object:
    """The description's offsets against Table I and the two offsets the text places."""
    frame, placement = geometry(table), robot_description.place_mdh_frames(table)
    heights = frame["mdh_origin_height_m"]
    rows = [
        Comparison(
            "joint spacing J2 → J4, the RL3 of Table I",
            "dh_offset_rl3",
            heights[4] - heights[2],
            unit="m",
        ),
        Comparison(
            "joint spacing J4 → J6, the RL5 of Table I",
            "dh_offset_rl5",
            heights[6] - heights[4],
            unit="m",
        ),
        Comparison(
            "rise of O0 above base_link along the joint-1 axis",
            "urdf_joint1_rise",
            placement.base_in_description[2, 3],
            unit="m",
        ),
        Comparison(
            "offset of the description's joint-7 frame along z7",
            "urdf_z7_offset",
            frame.loc[7, "origin_offset_m"],
            unit="m",
        ),
    ]
    return comparison_table(
        rows,
        "The description's offsets and where they go in the model",
        name="tab-modeling-offsets",
    )


def geometry_figure(table):
    """The paper's Fig. 1 on the model: zero pose and the nominal posture in the base x-z plane."""
    placement = robot_description.place_mdh_frames(table)
    rise = placement.base_in_description[2, 3]
    fig, axes = plt.subplots(1, 2, figsize=(9, 5), sharex=True, sharey=True)
    zero = np.array([f[:3, 3] for f in placement.frames])
    urdf = np.array(placement.description_joint_origins)
    axes[0].plot(
        np.r_[0, zero[:, 0]], np.r_[rise, zero[:, 2]], "-o", color="C0", label="MDH origins $O_j$"
    )
    axes[0].plot(urdf[:, 0], urdf[:, 2], "x", color="C3", ms=9, label="description joint frames")
    for j, (x, z) in enumerate(urdf[:, [0, 2]], start=1):
        axes[0].annotate(f"J{j}", (x, z), textcoords="offset points", xytext=(8, -3), fontsize=8)
    axes[0].set_title("zero pose (description coordinates)", fontsize=10)
    axes[0].set_ylabel("z (m)")
    axes[0].legend(fontsize=8, loc="center right")
    posture = np.zeros(7)
    posture[3] = np.deg2rad(paper("nominal_posture_theta4").value)
    bent = np.array([f[:3, 3] for f in robot_description.mdh_frames(table, posture)])
    axes[1].plot(np.r_[0, bent[:, 0]], np.r_[0, bent[:, 2]] + rise, "-o", color="C0")
    axes[1].set_title(
        rf"nominal posture, $\theta_4 = {paper('nominal_posture_theta4').value:g}°$", fontsize=10
    )
    for ax in axes:
        ax.set_xlabel("x (m)")
        ax.set_aspect("equal")
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))  # few ticks: the panels are narrow
        ax.grid(alpha=0.3)
    axes[0].set_xlim(-0.1, 0.35)
    axes[0].invert_yaxis()  # once, the axes are shared: +z (gravity) points down the page
    fig.suptitle("The paper's Fig. 1 on the model: frames against the description (no recording)")
    fig.tight_layout()
    return fig


def grouping_relations() -> str:
    """LaTeX (aligned) of every base parameter that is grouped or renamed with an R."""
    group = grouping()
    lines = [
        sympy.latex(sympy.Symbol(name)) + " &= " + sympy.latex(group.relation(name))
        for name, pivot, coefficients in zip(group.base_names, group.pivots, group.coefficients)
        if len(coefficients) > 1 or name != pivot
    ]
    return r"\begin{aligned}" + r"\\ ".join(lines) + r"\end{aligned}"


def _counts() -> pd.DataFrame:
    """Base parameters per category in the full grouped and the reduced set."""
    group = grouping()
    sets = {
        "full grouped set": group.parameter_set("full"),
        "reduced set": group.parameter_set("reduced"),
    }
    counts = pd.DataFrame(
        {
            label: pd.Series([category(n) for n in names]).value_counts()
            for label, names in sets.items()
        }
    )
    counts = counts.reindex(CATEGORIES).fillna(0).astype(int)
    counts.loc["total"] = counts.sum()
    counts.index.name = "category"
    return counts


def categories_table() -> object:
    """The counts per category of both sets (Appendix A-B)."""
    return numbered(
        _counts(),
        "Base parameters per category, full grouped set and reduced set (Appendix A-B)",
        "tab-modeling-categories",
    )


def bookkeeping_against_paper() -> object:
    """Appendix A-B's counts (Table II) against the derivation's."""
    group, counts = grouping(), _counts()
    full = group.parameter_set("full")
    inertial = sum(
        1 for n in full if split_name(n)[0] not in ("FV", "FS") and split_name(n)[2] <= 7
    )
    rows = [
        Comparison("parameters in the full grouped set", "full_model_param_count", len(full)),
        Comparison(
            "of which inertial terms of the seven links", "arm_inertial_term_count", inertial
        ),
        Comparison(
            "products of inertia removed",
            "removed_poi_count",
            int(counts.loc[CATEGORIES[2], "full grouped set"]),
        ),
        Comparison(
            "Coulomb coefficients removed",
            "removed_coulomb_count",
            int(counts.loc[CATEGORIES[4], "full grouped set"]),
        ),
        Comparison(
            "parameters in the reduced set",
            "reduced_model_param_count",
            len(group.parameter_set("reduced")),
        ),
        Comparison(
            "link-side terms",
            "link_side_term_count",
            int(counts.loc[list(LINK_TERMS), "reduced set"].sum()),
        ),
        Comparison(
            "of which inertia-related",
            "inertia_base_term_count",
            int(counts.loc[CATEGORIES[0], "reduced set"]),
        ),
        Comparison(
            "of which first-moment",
            "first_moment_term_count",
            int(counts.loc[CATEGORIES[1], "reduced set"]),
        ),
    ]
    return comparison_table(
        rows,
        "Appendix A-B's bookkeeping (Table II) against the derivation",
        name="tab-modeling-bookkeeping",
    )


def reduced_set_values(mounting: str = "hanging") -> object:
    """Table II's parameters with the values the description implies (link terms only)."""
    group = grouping()
    reduced = group.parameter_set("reduced")
    cad = robot_description.description_standard_parameters(robot_description.load_mdh_table())
    base = DynamicModel("full", mounting=mounting).base_from_standard(
        {n: cad.get(n, 0.0) for n in group.standard_names}
    )
    frame = pd.DataFrame(
        {
            "category": [category(n) for n in reduced],
            "unit": [unit_of(n) for n in reduced],
            "from the description": [
                base[n] if category(n) in LINK_TERMS else np.nan for n in reduced
            ],
        },
        index=pd.Index(reduced, name="parameter"),
    )
    return numbered(
        frame,
        "The reduced set in the paper's order, with the values the manufacturer's "
        "description implies (link-side terms; rotor inertias and friction are not in it)",
        "tab-modeling-table-ii",
        digits=4,
        paper="II",
    )


def _poi_shares() -> pd.Series:
    """Largest product of inertia over the largest diagonal entry per description link, %."""
    _, inertials = robot_description.load_description()
    return pd.Series(
        {
            name: 100 * np.abs(i.inertia[np.triu_indices(3, 1)]).max() / np.diag(i.inertia).max()
            for name, i in inertials.items()
        },
        name="largest |product| / largest diagonal (%)",
    )


def poi_shares_table() -> object:
    """The products of inertia's share per description link."""
    frame = _poi_shares().to_frame()
    frame.index.name = "description link"
    return numbered(
        frame,
        "Products of inertia in the description, about each link's centre of mass",
        "tab-modeling-poi-share",
        digits=2,
    )


def poi_against_paper() -> object:
    """Sec. III-D's range for the products of inertia against the description."""
    shares = _poi_shares()
    row = Comparison(
        "largest product of inertia over the largest diagonal entry, per link",
        "poi_relative_size_design",
        shares.values,
        digits=2,
        why=Why.reconstruction(
            "the description's inertias about each link's centre of mass; the paper's range "
            "may be taken over a different frame or subset of links"
        ),
    )
    return comparison_table(
        [row], "Sec. III-D's check on the geometry", name="tab-modeling-poi-paper"
    )


@dataclass(frozen=True)
class NumericChecks:
    """The numeric model on random states: ranks per set and three invariants of M and g."""

    ranks: pd.DataFrame  # per set of Table III: columns and numerical rank
    theta1_change: float  # largest change of M when theta1 is redrawn, kg·m²
    gravity_joint1: float  # largest joint-1 entry of the gravity regressor, N·m
    asymmetry: float  # largest |M - M^T|, kg·m²

    @property
    def full_rank(self) -> bool:
        """Whether every set's stacked regressor has full column rank."""
        return bool((self.ranks["columns"] == self.ranks["numerical rank"]).all())


def numeric_checks(mounting: str, n_states: int, seed: int) -> NumericChecks:
    """Ranks of Table III's sets and the invariants of M on `n_states` random states."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (n_states, 8))
    qd, qdd = rng.normal(0, 2, (n_states, 8)), rng.normal(0, 5, (n_states, 8))
    rows = []
    for name in PARAMETER_SETS:
        m = DynamicModel(name, mounting=mounting)
        w_all = identifiability.stack(m.regressor(q, qd, qdd))
        rows.append(
            {
                "set": PARAMETER_SET_LABELS[name],
                "columns": m.n_parameters,
                "numerical rank": identifiability.numerical_rank(w_all),
            }
        )
    model = DynamicModel("reduced", mounting=mounting)
    cad = robot_description.description_standard_parameters(robot_description.load_mdh_table())
    standard = {n: cad.get(n, 0.0) for n in grouping().standard_names}
    beta = model.base_from_standard(standard).values + 0.01
    shifted = q.copy()
    shifted[:, 0] = rng.uniform(-np.pi, np.pi, n_states)
    mass = model.inertia_matrix(q, beta)
    return NumericChecks(
        ranks=pd.DataFrame(rows).set_index("set"),
        theta1_change=float(np.abs(mass - model.inertia_matrix(shifted, beta)).max()),
        gravity_joint1=float(np.abs(model.regressor(q, 0 * qd, 0 * qdd)[:, 0, :]).max()),
        asymmetry=float(np.abs(mass - mass.transpose(0, 2, 1)).max()),
    )


def rank_table(checks: NumericChecks, n_states: int) -> object:
    """The ranks of `numeric_checks` as a numbered table."""
    return numbered(
        checks.ranks,
        "Numerical rank of the stacked regressor of each set of Table III "
        f"({n_states} random states)",
        "tab-modeling-ranks",
    )


def constants_against_paper() -> object:
    """Kt, clamp torques and the closed-loop bandwidth, computed from their sources."""
    rows = [
        Comparison("Kt, XM430-W350", "kt_effective_xm430", constants.XM430_W350.kt),
        Comparison("Kt, XM540-W270", "kt_effective_xm540", constants.XM540_W270.kt),
        Comparison(
            "clamp torque, XM430-W350", "clamp_torque_xm430", constants.XM430_W350.clamp_torque
        ),
        Comparison(
            "clamp torque, XM540-W270", "clamp_torque_xm540", constants.XM540_W270.clamp_torque
        ),
        Comparison(
            "closed-loop bandwidth √K_P",
            "realization_bandwidth_rad",
            constants.REALIZATION_BANDWIDTH_RAD_S,
        ),
        Comparison(
            "closed-loop bandwidth", "realization_bandwidth_hz", constants.REALIZATION_BANDWIDTH_HZ
        ),
    ]
    return comparison_table(
        rows,
        "Constants of the platform, computed from their sources",
        name="tab-modeling-constants",
    )
