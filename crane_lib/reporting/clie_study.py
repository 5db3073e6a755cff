"""The faithful CLIE study beside the fast one: what the chapter "Parameter clouds" shows of it.

The main job refines every condition by the fast route (DIDIM Jacobian). The faithful route of
Appendix D-F (forward-difference Jacobian, one closed-loop simulation per parameter and
iteration) is the study the paper ran for 307 h; here it runs on request (`make clie-faithful`,
on a Dask scheduler when one is given) and writes its records beside the fast ones
(results/clie/clie/ against results/clie/fast/). `faithful_beside_fast()` pairs the two over the
conditions both hold and says, computed from the records, how far apart they end:

* per condition: route, iterations and wall time of each route, the final objectives and their
  relative gap (fast against faithful), and the distance between the two solutions in the OLS
  cloud's standardized coordinates, beside the distance the faithful route moved from its start;
* the two CLIE clouds on one PCA plane (`plot_clouds`), with the OLS cloud for reference.

When no faithful record exists it returns a note saying so and how to produce them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from crane_lib.acceptance.selection import standardize
from crane_lib.identification import clie

FAST, FAITHFUL = "fast", "clie"  # the record folders of the two routes (results/clie/<method>)
OBJECTIVE_TOLERANCE = (
    0.005  # "the same objective": the fast route within 0.5 % (bench_clie's criterion)
)
NO_RECORDS_NOTE = (
    "No faithful CLIE records in this build: the faithful study is not part of `make book` (about a minute per "
    "condition and two cores for the Jacobian, hours for the 160), so the clouds above are the fast route's. "
    "Run `make clie-faithful` (with `SCHEDULER=tcp://host:8786` to spread it over a Dask cluster's workers) "
    "and rebuild the book to see the faithful clouds here."
)


def _key(record: dict) -> tuple:
    return record["trajectory"], round(float(record["ts"]) * 1e3), int(record["run"])


@dataclass
class FaithfulBesideFast:
    """The conditions refined by both routes (rows of `table`, same order as the vectors)."""

    table: pd.DataFrame | None
    vectors: dict[str, np.ndarray]  # "OLS", "CLIE fast", "CLIE faithful" -> (n, 39)
    names: list[str]
    n_fast: int
    n_faithful: int

    @property
    def empty(self) -> bool:
        return self.table is None or self.table.empty

    def summary_text(self) -> str:
        """One paragraph, every number computed from the records."""
        if self.empty:
            return NO_RECORDS_NOTE + (
                f" ({self.n_faithful} faithful records exist, none for a condition the fast route also refined.)"
                if self.n_faithful
                else ""
            )
        t = self.table
        gap = t["objective gap (%)"]
        within = int((gap.abs() <= 100 * OBJECTIVE_TOLERANCE).sum())
        lower = int((gap < 0).sum())
        speed = t["wall time faithful (s)"].sum() / t["wall time fast (s)"].sum()
        ratio = (t["|fast - faithful|"] / t["|faithful - start|"]).replace([np.inf], np.nan)
        return (
            f"{len(t)} conditions were refined by both routes ({self.n_faithful} faithful records, {self.n_fast} fast). "
            f"The fast route ends within {100 * OBJECTIVE_TOLERANCE:g} % of the faithful route's objective in {within} of {len(t)}, "
            f"below it in {lower}; the gap runs from {gap.min():+.2f} % to {gap.max():+.2f} % (median {gap.median():+.2f} %). "
            f"The faithful route took {speed:.1f} times the fast route's wall time over these conditions. In the OLS cloud's "
            f"standardized coordinates the two solutions lie a median {t['|fast - faithful|'].median():.3g} apart, "
            f"{100 * ratio.median():.0f} % of the distance the faithful route moved from its start (median over the conditions)."
        )


def faithful_beside_fast(run: int = 1) -> FaithfulBesideFast:
    """Pair the fast and faithful CLIE records of execution `run` by condition."""
    fast = {_key(r): r for r in clie.load_records(FAST) if int(r["run"]) == run}
    faithful = {_key(r): r for r in clie.load_records(FAITHFUL) if int(r["run"]) == run}
    common = sorted(set(fast) & set(faithful))
    if not common:
        return FaithfulBesideFast(None, {}, [], len(fast), len(faithful))
    names = list(fast[common[0]]["names"])
    ols = np.array([fast[k]["ols"] for k in common])
    x_fast = np.array([fast[k]["clie_x"] for k in common])
    x_faithful = np.array([faithful[k]["clie_x"] for k in common])
    start = np.array([faithful[k]["start"] for k in common])
    # one scale for all: the OLS cloud's (a single condition has no spread: its own magnitudes)
    reference = ols if len(common) > 1 else np.vstack([ols, -ols])
    z = {
        name: standardize(v, reference)
        for name, v in (("fast", x_fast), ("faithful", x_faithful), ("start", start))
    }
    rows = []
    for i, k in enumerate(common):
        f, s = fast[k], faithful[k]
        rows.append(
            {
                "trajectory": k[0],
                "Ts (ms)": k[1],
                "route": f["route"],
                "iterations fast": f["clie_iterations"],
                "iterations faithful": s["clie_iterations"],
                "wall time fast (s)": f["clie_wall_time_s"],
                "wall time faithful (s)": s["clie_wall_time_s"],
                "objective fast": f["clie_objective_final"],
                "objective faithful": s["clie_objective_final"],
                "objective gap (%)": 100
                * (f["clie_objective_final"] / s["clie_objective_final"] - 1),
                "|fast - faithful|": float(np.linalg.norm(z["fast"][i] - z["faithful"][i])),
                "|faithful - start|": float(np.linalg.norm(z["faithful"][i] - z["start"][i])),
            }
        )
    table = pd.DataFrame(rows).set_index(["trajectory", "Ts (ms)"])
    return FaithfulBesideFast(
        table,
        {"OLS": ols, "CLIE fast": x_fast, "CLIE faithful": x_faithful},
        names,
        len(fast),
        len(faithful),
    )


def plot_clouds(study: FaithfulBesideFast, ax=None):
    """OLS, fast-CLIE and faithful-CLIE clouds on the first two principal directions of the three
    pooled (OLS-standardized), each fast solution joined to the faithful one of its condition."""
    import matplotlib.pyplot as plt

    if study.empty:
        raise ValueError("no condition refined by both routes")
    ax = ax or plt.subplots(figsize=(6.5, 5))[1]
    reference = (
        study.vectors["OLS"]
        if len(study.table) > 1
        else np.vstack([study.vectors["OLS"], -study.vectors["OLS"]])
    )
    z = {k: standardize(v, reference) for k, v in study.vectors.items()}
    pooled = np.vstack(list(z.values()))
    centre = pooled.mean(axis=0)
    _, _, axes = np.linalg.svd(pooled - centre, full_matrices=False)
    plane = {k: (v - centre) @ axes[:2].T for k, v in z.items()}
    for a, b in zip(plane["CLIE fast"], plane["CLIE faithful"]):
        ax.plot([a[0], b[0]], [a[1], b[1]], color="0.7", lw=0.6, zorder=1)
    for label, style in (
        ("OLS", dict(marker="o", color="tab:blue", alpha=0.4)),
        ("CLIE fast", dict(marker="^", color="tab:green")),
        ("CLIE faithful", dict(marker="v", color="tab:red")),
    ):
        ax.scatter(
            plane[label][:, 0],
            plane[label][:, 1],
            s=22,
            label=f"{label} ({len(plane[label])})",
            zorder=2,
            **style,
        )
    ax.set_xlabel("PC 1 (standardized)")
    ax.set_ylabel("PC 2 (standardized)")
    ax.set_title("twin recordings: CLIE by the fast and the faithful route")
    ax.legend(fontsize=8)
    return ax
