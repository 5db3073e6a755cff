"""Which Table XV row compositions fit the paper's counts (register E-11).

Table XV's body is lost. Every PA/PB/PC row is S(X) followed by a non-empty ordered subset of
(Πα, Πβ, Πγ) at one level (normal, 0.60, 0.30): 21 options per row. Textual constraints: every
row has a pair block (V-A); exactly five rows contain Πγ, rows 05, 10, 11 among them (B-E),
with 10 and 11 the waypoints of 05 at 0.60 and 0.30 (the speed ladder of B-A, as AP05/AP04
repeat AP02); row 07 at 0.30 (PA07 the slowest); PB01 long (Table XI); the eleven rows
distinct. Totals are compared as ratios to AG02, so that the block-size deficit of our Tables
XIII/XIV (AG02 has fewer rows than the paper's) does not bias the rows: segments over AG02's
rows as the paper's segment count over its AG02 rows, and duration over AG02's duration between
the paper's total over AG02's realized and over its commanded duration, each within TOLERANCE.

The search enumerates every set of six distinct free rows with at most two Πγ rows once,
vectorized, and checks it against every choice of rows 01, 05 and 07: well under a second, so
the chapter "Excitation" runs it in every build. `python tools/table_xv_search.py` prints the same
summary.
"""

from __future__ import annotations

import collections
import itertools
from dataclasses import dataclass

import numpy as np

from crane_lib.excitation import design as ex
from crane_lib.excitation.commands import commanded_duration
from crane_lib.paper_numbers import paper

TOLERANCE = 0.02  # relative, on both totals
LEVELS = (ex.NORMAL, 0.60, 0.30)
# Our reading of "PB01 is one of the three long trajectories" of Table XI (at least 3124 samples per
# axis at 40 ms, 125 s recorded): after the idle ends and AG02's realized/commanded ratio, at least
# this much commanded time per family member (register E-11). A reconstruction bound, not a paper
# number.
PB01_MIN_COMMANDED_S = 95.0
FIXED = ("AP01", "AP02", "AP03", "AP04", "AP05", "AG01", "AG02")


@dataclass(frozen=True)
class SearchResult:
    """The compositions of the eleven rows that meet every constraint."""

    n_fits: int
    targets: dict  # segments, duration_low_s, duration_high_s (in our AG02's units)
    rows_at_level: dict  # level -> {rows at that level: number of fits}
    row01: dict  # (pair blocks, level) -> number of fits with that row 01
    row05: dict  # pair blocks -> number of fits with that row 05
    chosen_is_a_fit: bool  # design.FAMILY_ROWS is one of them
    n_options: int  # row options (pair-block subsets x levels)


def _options() -> dict:
    subsets = [s for k in (1, 2, 3) for s in itertools.combinations(("alpha", "beta", "gamma"), k)]
    options = {}
    for sub in subsets:
        for level in LEVELS:
            rows = duration = 0.0
            for family in "ABC":
                spec = ex.TrajectorySpec(
                    "x",
                    (ex.Block("S", family, level),) + tuple(ex.Block(p, "", level) for p in sub),
                )
                cmd = ex.build(spec)
                rows += cmd.n_waypoints
                duration += commanded_duration(cmd)
            options[(sub, level)] = (rows, duration)
    return options


def search() -> SearchResult:
    """The compositions of the families that meet the paper's counts (Table XV search)."""
    specs = ex.trajectory_specs()
    fixed = {n: ex.build(specs[n]) for n in FIXED}
    fixed_rows = sum(c.n_waypoints for c in fixed.values())
    fixed_s = sum(commanded_duration(c) for c in fixed.values())
    ag_rows, ag_s = fixed["AG02"].n_waypoints, commanded_duration(fixed["AG02"])
    total_s = paper("id_motion_total").value * 60.0
    segments = paper("commanded_segment_count").value / paper("ag02_waypoints").value * ag_rows
    low_s = total_s / paper("ag02_realized_duration").value * ag_s
    high_s = total_s / paper("ag02_commanded_duration").value * ag_s

    options = _options()
    keys = list(options)
    rows_of = np.array([options[k][0] for k in keys])
    seconds_of = np.array([options[k][1] for k in keys])
    gamma_of = np.array(["gamma" in k[0] for k in keys], dtype=int)
    free = np.array(
        list(itertools.combinations(range(len(keys)), 6)), dtype=np.int16
    )  # eleven distinct rows
    free = free[gamma_of[free].sum(1) <= 2]  # rows 05, 10, 11 hold three of the five Πγ rows
    free_rows, free_s, free_gamma = (
        rows_of[free].sum(1),
        seconds_of[free].sum(1),
        gamma_of[free].sum(1),
    )
    member = np.zeros((len(free), len(keys)), dtype=bool)
    member[np.arange(len(free))[:, None], free] = True

    fits = []
    for s5 in [s for s in dict.fromkeys(k[0] for k in keys) if "gamma" in s]:
        ladder = [keys.index((s5, level)) for level in LEVELS]
        for r1 in range(len(keys)):
            if seconds_of[r1] / 3 < PB01_MIN_COMMANDED_S:
                continue
            for r7 in [i for i, k in enumerate(keys) if k[1] == 0.30]:
                chosen = [r1, *ladder, r7]
                if len(set(chosen)) < 5:
                    continue
                rows = rows_of[chosen].sum() + free_rows + fixed_rows
                seconds = seconds_of[chosen].sum() + free_s + fixed_s
                ok = (
                    ~member[:, chosen].any(axis=1)
                    & (gamma_of[chosen].sum() + free_gamma == 5)
                    & (np.abs(rows - segments) <= TOLERANCE * segments)
                    & (seconds >= low_s * (1 - TOLERANCE))
                    & (seconds <= high_s * (1 + TOLERANCE))
                )
                fits += [[keys[i] for i in chosen] + [keys[i] for i in f] for f in free[ok]]

    rows_at_level = {
        level: dict(
            sorted(
                collections.Counter(sum(1 for r in rows if r[1] == level) for rows in fits).items()
            )
        )
        for level in LEVELS
    }
    target = sorted(ex.FAMILY_ROWS.values(), key=str)
    return SearchResult(
        n_fits=len(fits),
        targets={"segments": segments, "duration_low_s": low_s, "duration_high_s": high_s},
        rows_at_level=rows_at_level,
        row01=dict(collections.Counter(rows[0] for rows in fits)),
        row05=dict(collections.Counter(rows[1][0] for rows in fits)),
        chosen_is_a_fit=any(sorted(rows, key=str) == target for rows in fits),
        n_options=len(keys),
    )
