"""The nonideality study's views: its records as tables, figures and generated sentences for
the chapter "When the audit fails".

The study itself (its conditions, one point's recording, identification, audit and mechanism,
the records it writes) is `acceptance.nonideality`; this module only reads what it wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from crane_lib.acceptance import audit as audit_stage
from crane_lib.acceptance import folded
from crane_lib.acceptance.nonideality import (
    ACCEPT_INTERVAL_S,
    AUDIT_SEED,
    INTERVALS_S,
    StudyCondition,
    number_text,
    rayleigh_shares,
    read_study_conditions,
    study_conditions_path,
)
from crane_lib.errors import InputError
from crane_lib.model.parameters import N_LINKS
from crane_lib.records import read_json_record
from crane_lib.twin import dataset
from crane_lib.twin import effects as twin_effects

if TYPE_CHECKING:
    from crane_lib.reporting.tables import ResultTable

# ---------------------------------------------------------------- what the chapter shows

PAPER_PATTERN = (
    False,
    False,
    False,
    True,
)  # AG02's OLS estimate over Θ at 10, 20, 40, 80 ms (Sec. VII-D)


def points_frame(records: list[dict]):
    """One row per (condition, interval) of the study's records: the verdicts, the margin and the mechanism."""
    import pandas as pd

    rows = []
    for record in records:
        c = record["condition"]
        for point in record["intervals"]:
            row = {
                "label": record["label"],
                "base": c["base"],
                "effect": c["effect"],
                "magnitude": c["magnitude"],
                "trajectory": c["trajectory"],
                "seed": int(c["seed"]),
                "ts_ms": round(point["ts"] * 1e3),
            }
            if "failure" in point:
                rows.append({**row, "failure": point["failure"]})
                continue
            shares = point["shares"]
            rows.append(
                {
                    **row,
                    "failure": None,
                    "pd_visited": point["pd_visited"],
                    "pd_theta": point["pd_theta"],
                    "lambda_visited": point["lambda_min_visited"],
                    "lambda_theta": point["lambda_min_theta"],
                    "worst_component": point["worst_component"],
                    "worst_pose_deg": point["worst_pose_deg"],
                    "violations": sum(point["violations"].values()),
                    "violations_uniform": point["violations"].get(audit_stage.UNIFORM, 0),
                    "violations_uniform_in_folded": point.get("violations_uniform_in_folded"),
                    "kappa": point["kappa"],
                    "residual_rms": point["residual_rms"],
                    "error_in_se": point["error_in_std_errors_rms"],
                    "top_share": shares[0][0] if isinstance(shares, list) else None,
                    "eigenvector": point["eigenvector"],
                    "truth_quotient": point["truth_quotient"],
                }
            )
    return pd.DataFrame(rows)


def ladder(frame, trajectory: str = "AG02"):
    """Per rung (label) and interval, over the seeds: the smallest margin over Θ, how many seeds
    find the estimate non-PD over Θ, how many of those are PD at the visited configurations."""
    import pandas as pd

    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()]
    grouped = part.groupby(["label", "ts_ms"], sort=False)
    out = pd.DataFrame(
        {
            "margin_min": grouped["lambda_theta"].min(),
            "margin_max": grouped["lambda_theta"].max(),
            "seeds": grouped["seed"].nunique(),
            "non_pd_theta": grouped["pd_theta"].apply(lambda s: int((~s.astype(bool)).sum())),
            "pd_data_not_theta": grouped.apply(
                lambda g: int((g["pd_visited"].astype(bool) & ~g["pd_theta"].astype(bool)).sum()),
                include_groups=False,
            ),
        }
    )
    return out.reset_index()


def interval_patterns(frame, trajectory: str = "AG02"):
    """Per rung and seed, the verdict over Θ at each interval, and whether it is the paper's pattern."""
    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()].sort_values("ts_ms")
    table = part.pivot_table(
        index=["label", "seed"], columns="ts_ms", values="pd_theta", aggfunc="first"
    )
    table["paper_pattern"] = [
        tuple(bool(v) for v in row) == PAPER_PATTERN for row in table[[10, 20, 40, 80]].to_numpy()
    ]
    return table


def rung_order(labels) -> list[str]:
    """Rungs in reading order: today's twin, the ideal twin, ideal + one effect, today's twin minus one,
    today's twin plus a candidate or a larger magnitude, the field profile."""

    def key(label: str):
        base, _, rest = label.partition(" + ")
        group = {"default": 0 if not rest else 3, "ideal": 1 if not rest else 2, "field": 5}[base]
        if base == "default" and rest:
            name, _, value = rest.partition(" ")
            effect = twin_effects.BY_NAME.get(name)
            removes = effect is not None and " + " not in rest and _same(value, effect.off)
            group = 3 if removes else 4
        return (group, rest)

    return sorted(set(labels), key=key)


def _same(text: str, value: float) -> bool:
    try:
        return float(text) == value
    except ValueError:
        return False


def field_rule(frame, trajectory: str = "AG02"):
    """The register's rule, evaluated: per candidate and interval, the drop of the margin over Θ from
    today's twin in each execution, and twice the executions' difference on today's twin."""
    import pandas as pd

    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()]
    default = part[part["label"] == "default"].pivot_table(
        index="ts_ms", columns="seed", values="lambda_theta"
    )
    rows = []
    for name, value in FIELD_CANDIDATES:
        label = f"default + {name} {number_text(value)}"
        changed = part[part["label"] == label].pivot_table(
            index="ts_ms", columns="seed", values="lambda_theta"
        )
        for ts in default.index:
            seeds = [s for s in default.columns if s in changed.columns]
            if ts not in changed.index or len(seeds) < 2:
                continue
            drops = [float(default.loc[ts, s] - changed.loc[ts, s]) for s in seeds]
            spread = 2.0 * float(default.loc[ts, seeds].max() - default.loc[ts, seeds].min())
            rows.append(
                {
                    "candidate": label,
                    "ts_ms": ts,
                    "drop_min": min(drops),
                    "twice_spread": spread,
                    "passes": min(drops) > spread,
                }
            )
    table = pd.DataFrame(rows)
    chosen = sorted({r["candidate"] for r in rows if r["passes"]})
    return table, chosen


FIELD_CANDIDATES = (("backlash", 0.25), ("encoder_error", 0.5), ("encoder_noise", 0.34))


def population(frame, base: str):
    """Counts over the conditions of one base profile with no effect changed (every trajectory, one
    execution each, every interval): PD at the visited configurations, PD over Θ, the two mismatches,
    and where the uniform draw's violations lie (`counts`)."""
    part = frame[
        (frame["base"] == base)
        & (frame["effect"] == twin_effects.NO_EFFECT)
        & frame["failure"].isna()
    ]
    part = part.sort_values("seed").drop_duplicates(
        ["trajectory", "ts_ms"]
    )  # one execution per trajectory
    return {
        **counts(part),
        "failed": int(
            (
                (frame["base"] == base)
                & (frame["effect"] == twin_effects.NO_EFFECT)
                & frame["failure"].notna()
            ).sum()
        ),
    }


def audited_condition_records(records: list[dict]):
    """The main job's OLS/SDP condition records (results/conditions) with each OLS estimate
    audited over Θ (seed 1, the screen), as the main job's audits step recorded it
    (results/audits): the population of the data set the build ran on."""
    import pandas as pd

    path = audit_stage.OLS_AUDITS_PATH
    if not path.is_file():
        raise InputError(
            str(path),
            "no record of the OLS estimates audited over Θ",
            "the record written by `make book` (crane_book.pipeline)",
        )
    audited = read_json_record(path)
    by_condition = {(a["trajectory"], a["ts"], a["run"]): a for a in audited["audits"]}
    rows = []
    for record in records:
        if record.get("ols") is None:
            continue
        found = by_condition.get((record["trajectory"], record["ts"], record["run"]))
        if found is None or audited["seed"] != AUDIT_SEED:
            raise InputError(
                str(path),
                f"no audit (seed {AUDIT_SEED}) of {record['trajectory']} "
                f"run {record['run']} at {record['ts'] * 1e3:g} ms",
                "the record of this build's conditions (`make book`)",
            )
        rows.append(
            {
                "trajectory": record["trajectory"],
                "ts_ms": round(record["ts"] * 1e3),
                "run": record["run"],
                "pd_visited": bool(record["pd_visited"]),
                "pd_theta": found["passed"],
                "lambda_theta": found["lambda_min"],
                "violations_uniform": found["violations"].get(audit_stage.UNIFORM, 0),
                "violations_uniform_in_folded": found["in_folded_region"],
            }
        )
    frame = pd.DataFrame(rows)
    return frame[frame["run"] == 1] if len(frame) else frame


def counts(frame) -> dict:
    """Population counts of a frame with pd_visited, pd_theta and the uniform violations (see `population`)."""
    visited, theta = frame["pd_visited"].astype(bool), frame["pd_theta"].astype(bool)
    return {
        "conditions": int(len(frame)),
        "pd_visited": int(visited.sum()),
        "non_pd_visited": int((~visited).sum()),
        "pd_theta": int(theta.sum()),
        "pd_visited_not_theta": int((visited & ~theta).sum()),
        "pd_theta_not_visited": int((theta & ~visited).sum()),
        "violations_uniform": int(frame["violations_uniform"].sum()),
        "violations_uniform_in_folded": int(frame["violations_uniform_in_folded"].fillna(0).sum()),
    }


def effects_table():
    """The effects with today's value, the value that removes them, the study's nominal and range, the source."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "effect": e.name,
                "kind": "candidate" if e.candidate else "the twin had it",
                "unit": e.unit,
                "today": number_text(e.default),
                "off": number_text(e.off),
                "nominal": number_text(e.nominal),
                "admitted": "on/off"
                if e.discrete
                else f"{number_text(e.low)} to {number_text(e.high)}",
                "source": e.source,
            }
            for e in twin_effects.EFFECTS
        ]
    ).set_index("effect")


# ---------------------------------------------------------------- figures (every title names its data)

INTERVALS_MS = tuple(round(ts * 1e3) for ts in INTERVALS_S)
COLOUR_LIMIT = 6.0  # 10⁻³ kg·m²: beyond the twin's true margin (4.9), so PD cells keep their shades
DATA_NOTE = "twin data: the study's recordings"


def plot_ladder(table, order: list[str], ax, trajectory: str = "AG02"):
    """Heat map: rows = rungs, columns = intervals; colour = the smallest margin λmin over Θ over the
    seeds (red below zero); text = the verdict over Θ and, marked †, PD at the data but not over Θ."""
    from matplotlib.colors import TwoSlopeNorm

    grid = np.full((len(order), len(INTERVALS_MS)), np.nan)
    text = [["" for _ in INTERVALS_MS] for _ in order]
    for row in table.itertuples(index=False):
        if row.label not in order or row.ts_ms not in INTERVALS_MS:
            continue
        i, j = order.index(row.label), INTERVALS_MS.index(row.ts_ms)
        grid[i, j] = row.margin_min * 1e3
        verdict = (
            "PD"
            if row.non_pd_theta == 0
            else (f"non-PD {row.non_pd_theta}/{row.seeds}" if row.seeds > 1 else "non-PD")
        )
        text[i][j] = verdict + (" †" if row.pd_data_not_theta else "")
    # the colour saturates at ±COLOUR_LIMIT (10⁻³ kg·m²): the text carries the verdict of the cells beyond
    image = ax.imshow(
        np.clip(grid, -COLOUR_LIMIT, COLOUR_LIMIT),
        cmap="RdBu",
        norm=TwoSlopeNorm(vmin=-COLOUR_LIMIT, vcenter=0.0, vmax=COLOUR_LIMIT),
        aspect="auto",
    )
    for i in range(len(order)):
        for j in range(len(INTERVALS_MS)):
            if text[i][j]:
                # white on the dark ends of the scale, black on the pale middle
                dark = abs(grid[i, j]) > 0.55 * COLOUR_LIMIT
                ax.text(
                    j,
                    i,
                    text[i][j],
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="w" if dark else "k",
                )
    ax.set_xticks(range(len(INTERVALS_MS)), [f"{ms} ms" for ms in INTERVALS_MS])
    ax.set_yticks(range(len(order)), order, fontsize=7.5)
    ax.set_title(
        f"{DATA_NOTE}: {trajectory}'s OLS estimate over Θ by rung and interval\n"
        "(colour: smallest λmin over the seeds, 10⁻³ kg·m²; †: PD at the visited configurations, not over Θ)",
        fontsize=9,
    )
    return image


def short_unit(effect: str) -> str:
    """The unit of an effect without its explanation ("deg", "counts rms", "Hz")."""
    return twin_effects.BY_NAME[effect].unit.split(" (")[0]


def magnitude_series(frame, effect: str, trajectory: str = "AG02"):
    """Margin over Θ against the magnitude of one effect changed alone on today's twin (today's value
    from the "default" rung), per interval and seed."""
    import pandas as pd

    part = frame[
        (frame["trajectory"] == trajectory) & frame["failure"].isna() & (frame["base"] == "default")
    ]
    today = part[part["effect"] == twin_effects.NO_EFFECT].assign(
        value=twin_effects.BY_NAME[effect].default
    )
    changed = part[part["effect"] == effect].assign(value=lambda f: f["magnitude"].astype(float))
    return pd.concat([changed, today]).sort_values("value")[
        ["value", "ts_ms", "seed", "lambda_theta", "pd_visited", "pd_theta"]
    ]


def plot_magnitudes(frame, effects: list[str], axes, trajectory: str = "AG02"):
    colors = dict(zip(INTERVALS_MS, ("C0", "C1", "C2", "C3")))
    for ax, effect in zip(np.ravel(axes), effects):
        series = magnitude_series(frame, effect, trajectory)
        for (ts, seed), part in series.groupby(["ts_ms", "seed"]):
            ax.plot(
                part["value"],
                part["lambda_theta"] * 1e3,
                marker="o" if seed == series["seed"].min() else "s",
                ms=3.5,
                lw=1.0,
                color=colors.get(ts, "k"),
                label=f"{ts} ms" if seed == series["seed"].min() else None,
            )
        ax.axhline(0.0, color="k", lw=0.8)
        ax.axvline(twin_effects.BY_NAME[effect].default, color="0.6", lw=0.8, ls=":")
        ax.set_xlabel(f"{effect} ({short_unit(effect)})", fontsize=8)
        ax.set_ylabel("λmin over Θ (10⁻³ kg·m²)", fontsize=8)
        ax.tick_params(labelsize=7.5)
    np.ravel(axes)[0].legend(fontsize=7, title="interval (○ seed 1, □ seed 2)", title_fontsize=7)


def plot_mechanism(point: dict, names: list[str], truth, axes, title: str):
    """Left: each base parameter's exact share of λmin − vᵀM(θ*; truth)v at the worst pose (the most
    negative shares, recomputed from the stored estimate); right: the worst eigenvector by joint."""
    shares = rayleigh_shares(
        np.asarray(point["estimate"]), np.asarray(truth), np.radians(point["worst_pose_deg"])
    )
    order = np.argsort(shares["shares"])[:8]
    axes[0].barh([names[k] for k in order][::-1], shares["shares"][order][::-1] * 1e3, color="C3")
    axes[0].set_xlabel("share of the drop (10⁻³ kg·m²)", fontsize=8)
    axes[0].set_title(title, fontsize=8.5)
    axes[1].bar([f"J{j}" for j in range(1, N_LINKS + 1)], shares["vector"], color="C0")
    axes[1].axhline(0.0, color="k", lw=0.6)
    axes[1].set_title("worst eigenvector v", fontsize=8.5)
    for ax in axes:
        ax.tick_params(labelsize=7.5)
    return shares


# ---------------------------------------------------------------- the chapter's assembly

POINT_COLUMNS = [
    "ts_ms",
    "pd_visited",
    "lambda_visited",
    "pd_theta",
    "lambda_theta",
    "worst_component",
]
# the effects whose magnitude the study scales alone on today's twin (chapter: "How much of it does it take")
SCALED_EFFECTS = (
    "backlash",
    "encoder_error",
    "encoder_noise",
    "dead_time",
    "kt_error",
    "compliance",
)
MECHANISM_TS_MS = min(INTERVALS_MS)  # the mechanism figure's interval: the finest


def record_sentence(path: Path, condition: StudyCondition) -> str:
    """Which record the chapter shows for the rung its parameters name."""
    return (
        f"The record `{path.name}` ({condition.label()}, seed {condition.seed}): recorded on the twin, "
        f"identified and audited at {len(INTERVALS_S)} intervals by the study's sweep."
    )


def summary_sentence(profile: str, records: list[dict], frame, trajectory: str = "AG02") -> str:
    """How much study this build has: records, rungs, executions of the trajectory."""
    executions = frame[frame["trajectory"] == trajectory]["seed"].nunique()
    return (
        f"Profile **{profile}**: {len(records)} study records, {frame['label'].nunique()} rungs, "
        f"{executions} executions of {trajectory}."
    )


def scaled_effects(frame, trajectory: str = "AG02") -> list[str]:
    """The effects of SCALED_EFFECTS that this build's study ran at more than one magnitude."""
    return [
        n for n in SCALED_EFFECTS if magnitude_series(frame, n, trajectory)["value"].nunique() > 1
    ]


def magnitudes_title(trajectory: str = "AG02") -> str:
    return f"{DATA_NOTE}: {trajectory}'s margin over Θ against each effect's magnitude, alone on today's twin"


def mechanism_point(
    records: list[dict], seed: int, label: str = "default", ts_ms: int = MECHANISM_TS_MS
) -> dict:
    """The interval result the mechanism figure splits: rung `label`, execution `seed`, `ts_ms`."""
    return next(
        p
        for r in records
        if r["label"] == label and r["condition"]["seed"] == seed
        for p in r["intervals"]
        if round(p["ts"] * 1e3) == ts_ms
    )


def mechanism_title(point: dict, seed: int, profile: str, trajectory: str = "AG02") -> str:
    """The mechanism figure's title: data, interval, the execution (its run in the profile's data
    set, else its seed) and the worst pose."""
    run = next(
        (
            e.run
            for e in dataset.executions(profile)
            if e.trajectory == trajectory and e.seed == seed
        ),
        None,
    )
    execution = f"execution {run}" if run is not None else f"seed {seed}"
    pose = np.round(point["worst_pose_deg"]).astype(int).tolist()
    return (
        f"{DATA_NOTE}: today's twin, {trajectory} at {round(point['ts'] * 1e3)} ms, {execution}\n"
        f"shares of λmin − vᵀM(θ*; truth)v at θ* = {pose} deg"
    )


# ---------------------------------------------------------------- the chapter's generated sentences


def _e3(value: float) -> str:
    return f"{value * 1e3:+.2f}" if value < 0 else f"{value * 1e3:.2f}"


def _interval_list(values) -> str:
    values = [f"{v} ms" for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def ladder_sentences(frame, table, truth_margin: float, trajectory: str = "AG02") -> str:
    """What the ladder shows, in sentences computed from it."""
    out = []
    by = {(r.label, r.ts_ms): r for r in table.itertuples(index=False)}
    for label, words in (
        ("ideal", "On the ideal twin (every effect off)"),
        ("default", "On today's twin"),
    ):
        if all((label, ms) in by for ms in INTERVALS_MS):
            margins = [by[(label, ms)].margin_min for ms in INTERVALS_MS]
            failing = [ms for ms in INTERVALS_MS if by[(label, ms)].non_pd_theta]
            out.append(
                f"{words} the smallest margin over Θ is {', '.join(_e3(m) for m in margins)} × 10⁻³ kg·m² at "
                f"{_interval_list(INTERVALS_MS)}, against {_e3(truth_margin)} × 10⁻³ kg·m² for the twin's true parameters; "
                + (
                    f"the estimate fails over Θ at {_interval_list(failing)} in some execution."
                    if failing
                    else "every execution's estimate is PD over Θ at every interval."
                )
            )
    failing = table[table["non_pd_theta"] > 0]
    rungs = failing["label"].unique().tolist()
    dagger = failing[failing["pd_data_not_theta"] > 0]["label"].unique().tolist()
    out.append(
        f"Of the {table['label'].nunique()} rungs, {len(rungs)} give an estimate indefinite over Θ at some interval in some "
        f"execution, and in {len(dagger)} of them that estimate passed the routing test (†)"
        + (
            ": "
            + "; ".join(
                f"{label} ({_interval_list(failing[failing['label'] == label]['ts_ms'].tolist())})"
                for label in dagger
            )
            if dagger
            else ""
        )
        + "."
    )
    patterns = interval_patterns(frame, trajectory)
    if len(patterns):
        hits = patterns[patterns["paper_pattern"]].reset_index()
        every = [
            label
            for label, part in patterns.reset_index().groupby("label")
            if part["paper_pattern"].all()
        ]
        if every:
            out.append(
                f"The paper's pattern for {trajectory} (indefinite at 10, 20 and 40 ms, PD at 80 ms, in every execution) "
                f"appears on {len(every)} rung{'s' if len(every) > 1 else ''}: {'; '.join(every)}."
            )
        elif len(hits):
            out.append(
                f"The paper's pattern for {trajectory} (indefinite at 10, 20 and 40 ms, PD at 80 ms) appears in "
                f"{len(hits)} single execution{'s' if len(hits) > 1 else ''} ({'; '.join(f'{h.label}, seed {h.seed}' for h in hits.itertuples())}) "
                "but on no rung in every execution."
            )
        else:
            out.append(
                f"**No rung reproduces the paper's pattern** for {trajectory} (indefinite at 10, 20 and 40 ms, PD at 80 ms) "
                "in any execution."
            )
    return " ".join(out)


def magnitude_sentences(frame, effect_names, trajectory: str = "AG02") -> str:
    """Per effect scaled alone on today's twin: the smallest magnitude with an estimate indefinite over Θ."""
    out = []
    for name in effect_names:
        series = magnitude_series(frame, name, trajectory)
        if series.empty or series["value"].nunique() < 2:
            continue
        effect = twin_effects.BY_NAME[name]
        bad = series[~series["pd_theta"].astype(bool)]
        lowest = series.groupby("value")["lambda_theta"].min()
        if bad.empty:
            tried = ", ".join(number_text(v) for v in lowest.index)
            out.append(
                f"{name}: PD over Θ at every magnitude tried ({tried} {short_unit(name)}); "
                f"smallest margin {_e3(lowest.min())} × 10⁻³ kg·m²."
            )
        else:
            first = bad["value"].min()
            at = bad[bad["value"] == first]
            out.append(
                f"{name}: {_first_indefinite(effect, first)}, at "
                f"{_interval_list(sorted(at['ts_ms'].unique()))} in {at['seed'].nunique()} of "
                f"{series[series['value'] == first]['seed'].nunique()} executions."
            )
    return "\n".join(f"- {line}" for line in out)


def _first_indefinite(effect, value: float) -> str:
    """Where an effect's ladder first gives an indefinite estimate, said so that a value that
    switches the effect off is not read as a magnitude of it."""
    unit = short_unit(effect.name)
    today = (
        "off today"
        if effect.default == effect.off
        else f"today {number_text(effect.default)} {unit}"
    )
    if value == effect.off and value == effect.default:
        return (
            f"indefinite already on today's twin, where this effect is off "
            f"({number_text(value)} {unit})"
        )
    if value == effect.off:
        return f"indefinite already with this effect off ({number_text(value)} {unit}; {today})"
    if value == effect.default:
        return f"first indefinite at today's value ({number_text(value)} {unit})"
    return f"first indefinite at {number_text(value)} {unit} ({today})"


def seed_spread(frame, min_seeds: int = 3, trajectory: str = "AG02"):
    """Rungs run on at least `min_seeds` executions: per interval, the median and range of the margin
    over Θ and how many executions fail over Θ."""
    import pandas as pd

    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()]
    seeds = part.groupby("label")["seed"].nunique()
    part = part[part["label"].isin(seeds[seeds >= min_seeds].index)]
    rows = []
    for (label, ts), cell in part.groupby(["label", "ts_ms"], sort=False):
        values = cell["lambda_theta"].to_numpy()
        rows.append(
            {
                "rung": label,
                "ts_ms": ts,
                "executions": len(values),
                "median": float(np.median(values)),
                "min": float(values.min()),
                "max": float(values.max()),
                "non_pd_theta": int((~cell["pd_theta"].astype(bool)).sum()),
            }
        )
    return pd.DataFrame(rows)


def share_frame(frame, records, trajectory: str = "AG02"):
    """Every point's exact shares of the drop at its worst pose, for all 39 parameters (one row per point)."""
    import pandas as pd

    truth = np.asarray(records[0]["truth"]) if records else None
    names = records[0]["names"] if records else []
    by_name = {r["name"]: r for r in records}
    rows = []
    for record in by_name.values():
        if record["condition"]["trajectory"] != trajectory:
            continue
        for point in record["intervals"]:
            if "failure" in point:
                continue
            shares = rayleigh_shares(
                np.asarray(point["estimate"]), truth, np.radians(point["worst_pose_deg"])
            )
            rows.append(
                {
                    "label": record["label"],
                    "seed": int(record["condition"]["seed"]),
                    "ts_ms": round(point["ts"] * 1e3),
                    "lambda_theta": point["lambda_min_theta"],
                    **dict(zip(names, shares["shares"])),
                }
            )
    return pd.DataFrame(rows), names


def dominant_parameters(shares, names, truth_margin: float, count: int = 3) -> list[str]:
    """The parameters whose errors pull λmin down most, over the points that lost at least half of the
    truth's margin over Θ (mean share, most negative first)."""
    lost = shares[shares["lambda_theta"] < 0.5 * truth_margin]
    if lost.empty:
        return []
    mean = lost[names].mean()
    return [name for name in mean.sort_values().index[:count] if mean[name] < 0]


def error_table(records, labels, parameters, ts_ms: int = 40, trajectory: str = "AG02"):
    """Mean over the executions of each rung's estimate error (estimate − truth) in `parameters` at one
    interval, with the margin over Θ (kg·m², and the parameters' own units)."""
    import pandas as pd

    parameters = [name for name in dict.fromkeys(parameters) if name]
    rows = []
    for label in labels:
        points = [
            (r, p)
            for r in records
            if r["label"] == label and r["condition"]["trajectory"] == trajectory
            for p in r["intervals"]
            if round(p["ts"] * 1e3) == ts_ms and "failure" not in p
        ]
        if not points:
            continue
        names, truth = points[0][0]["names"], np.asarray(points[0][0]["truth"])
        errors = np.array([np.asarray(p["estimate"]) - truth for _, p in points])
        row = {"rung": label, "executions": len(points)}
        row.update(
            {f"error of {name}": float(errors[:, names.index(name)].mean()) for name in parameters}
        )
        row["smallest λmin over Θ"] = float(min(p["lambda_min_theta"] for _, p in points))
        rows.append(row)
    return pd.DataFrame(rows).set_index("rung") if rows else pd.DataFrame()


def accepted_summary(records):
    """The study's Algorithm 1 runs (rows with accept = True): verdicts, the rescue, the margins per seed."""
    out = []
    for record in records:
        accepted = record.get("accepted")
        if accepted is None:
            continue
        first = [a["lambda_min"] for a in accepted["first_audits"]]
        final = [a["lambda_min"] for a in accepted["final_audits"]]
        out.append(
            {
                "rung": record["label"],
                "seed": record["condition"]["seed"],
                "route": accepted["route"],
                "first audit: seeds failing": sum(
                    not a["passed"] for a in accepted["first_audits"]
                ),
                "first audit: violations (seed 1)": sum(
                    accepted["first_audits"][0]["violations"].values()
                ),
                "first audit: smallest λmin": min(first),
                "rescued": accepted["rescued"],
                "rescue passes": accepted["rescue_passes"],
                "accepted": accepted["accepted"],
                "final λmin, smallest": min(final),
                "final λmin, largest": max(final),
                "seed factor": max(final) / min(final) if min(final) > 0 else float("nan"),
                "final worst component": min(
                    accepted["final_audits"], key=lambda a: a["lambda_min"]
                )["worst_component"],
            }
        )
    return out


def accepted_sentence(run: dict, frame) -> str:
    """What Algorithm 1 did on the study's rung, set against the same recording's OLS estimate at its interval."""
    ms = round(ACCEPT_INTERVAL_S * 1e3)
    ols = frame[
        (frame["label"] == run["rung"])
        & (frame["seed"] == run["seed"])
        & (frame["ts_ms"] == ms)
        & frame["failure"].isna()
    ]
    head = f"On {run['rung']} (execution {run['seed']}, AG02 at {ms} ms)"
    if len(ols):
        o = ols.iloc[0]
        head += (
            f" the OLS estimate is {'PD' if o['pd_theta'] else 'indefinite'} over Θ (λmin {_e3(o['lambda_theta'])} × 10⁻³ kg·m²) "
            f"and {'PD' if o['pd_visited'] else 'not PD'} at the visited configurations (route {run['route']})"
        )
    if run["first audit: seeds failing"] == 0:
        return (
            head
            + f"; the refined model passes the first audit on all five seeds (smallest λmin {_e3(run['first audit: smallest λmin'])} "
            "× 10⁻³ kg·m²), so no rescue runs"
            + (
                ": on this estimate the refinement, not the rescue, restores PD over Θ."
                if len(ols) and not ols.iloc[0]["pd_theta"]
                else "."
            )
        )
    return (
        head
        + f"; the refined model fails the first audit on {run['first audit: seeds failing']} of five seeds "
        f"({run['first audit: violations (seed 1)']:,} violating configurations on seed 1), "
        + (
            f"the rescue takes {run['rescue passes']} pass{'es' if run['rescue passes'] != 1 else ''} and the re-audit "
            f"{'accepts' if run['accepted'] else 'still rejects'} it (λmin {_e3(run['final λmin, smallest'])} to "
            f"{_e3(run['final λmin, largest'])} × 10⁻³ kg·m² over the five seeds)."
            if run["rescued"]
            else "and no rescue ran."
        )
    )


def accepted_missing(profile: str) -> str:
    """Why the chapter shows no Algorithm 1 run: the profile's conditions have no such row, or it has not run."""
    rows = [c for c in read_study_conditions(study_conditions_path(profile)) if c.accept]
    if not rows:
        return f"The {profile} profile's study has no Algorithm 1 row; the full profile runs it ({_accept_rows('full')})."
    return (
        f"The {profile} profile's study has an Algorithm 1 row ({rows[0].label()}, seed {rows[0].seed}) but no record of it yet: "
        "the pipeline's nonideality step has not run it in this build."
    )


def _accept_rows(profile: str) -> str:
    rows = [c for c in read_study_conditions(study_conditions_path(profile)) if c.accept]
    return "; ".join(f"{c.label()}, seed {c.seed}" for c in rows) or "none"


def removal_rungs(labels) -> list[str]:
    """Today's twin, the rungs that remove one effect from it, the ideal twin and the ideal twin with
    the effects the interaction rungs put together (reading order)."""
    keep = []
    for label in rung_order(labels):
        base, _, rest = label.partition(" + ")
        if label in ("default", "ideal"):
            keep.append(label)
        elif base == "default" and " + " not in rest:
            name, _, value = rest.partition(" ")
            if name in twin_effects.BY_NAME and _same(value, twin_effects.BY_NAME[name].off):
                keep.append(label)
        elif base == "ideal" and (
            rest.startswith("encoder_quantization") or rest.startswith("voltage_limit")
        ):
            keep.append(label)
    return keep


def spread_sentences(spread) -> str:
    """The executions' spread of today's twin and how the other replicated rungs sit against it."""
    out = []
    today = spread[spread["rung"] == "default"]
    if len(today):
        n = int(today["executions"].max())
        parts = [
            f"{r.ts_ms} ms: {_e3(r.min)} to {_e3(r.max)} (median {_e3(r.median)})"
            for r in today.itertuples()
        ]
        failing = int(today["non_pd_theta"].sum())
        out.append(
            f"Over {n} executions of today's twin the margin over Θ spans, in 10⁻³ kg·m², "
            + "; ".join(parts)
            + ". "
            + (
                f"{failing} of the {n * len(today)} estimates fail over Θ."
                if failing
                else "Every estimate is PD over Θ."
            )
        )
        medians = today.set_index("ts_ms")["median"]
        for rung, part in spread[spread["rung"] != "default"].groupby("rung", sort=False):
            part = part.set_index("ts_ms")
            lower = [
                ms
                for ms in part.index
                if ms in medians.index and part.loc[ms, "median"] < medians[ms]
            ]
            fails = int(part["non_pd_theta"].sum())
            out.append(
                f"{rung}: median below today's twin's at {len(lower)} of {len(part)} intervals"
                + (f" ({_interval_list(lower)})" if lower else "")
                + f"; {fails} of {int(part['executions'].sum())} estimates indefinite over Θ"
                + (
                    f" (at {_interval_list(sorted(part[part['non_pd_theta'] > 0].index))})"
                    if fails
                    else ""
                )
                + "."
            )
    return "\n".join(f"- {line}" for line in out)


def mechanism_sentences(shares, names, dominant, errors, truth_margin: float) -> str:
    """Which parameters carry the drop, and which effects put the error there, computed from the tables."""
    if not dominant:
        return "No estimate of the study lost half of the truth's margin over Θ; there is no drop to split."
    lost = shares[shares["lambda_theta"] < 0.5 * truth_margin]
    mean = lost[names].mean()
    out = [
        f"Over the {len(lost)} estimates that lost at least half of the truth's margin over Θ, the errors of "
        + ", ".join(f"{p} ({mean[p] * 1e3:+.1f})" for p in dominant)
        + " × 10⁻³ kg·m² carry the largest mean shares of the drop."
    ]
    key = f"error of {dominant[0]}"
    if "default" in errors.index and key in errors.columns:
        today = errors.loc["default", key]
        removals = errors[[i.startswith("default + ") for i in errors.index]][key]
        if len(removals):
            shrink = (removals.abs() / abs(today)).sort_values()
            best = shrink.index[:2].tolist()
            out.append(
                f"On today's twin at 40 ms the error of {dominant[0]} is {today * 1e3:+.1f} × 10⁻³ (mean over the executions); "
                + "; ".join(
                    f"{label.removeprefix('default + ')} leaves {removals[label] * 1e3:+.1f}"
                    for label in best
                )
                + (
                    f", the two removals that shrink it most (of {len(removals)})."
                    if (shrink[best] < 1).all()
                    else f", the two removals that leave it closest to zero (of {len(removals)}; not both smaller than today's)."
                )
            )
            singles = [
                i
                for i in errors.index
                if i.startswith("ideal + ") and "+" not in i.removeprefix("ideal + ")
            ]
            pairs = [
                i
                for i in errors.index
                if i.startswith("ideal + ") and "+" in i.removeprefix("ideal + ")
            ]
            if singles or pairs:
                out.append(
                    "On the ideal twin: "
                    + "; ".join(
                        f"{i.removeprefix('ideal + ')} gives {errors.loc[i, key] * 1e3:+.1f}"
                        for i in singles + pairs
                    )
                    + "."
                )
            removed = {label.removeprefix("default + ").split(" ")[0] for label in best}
            friction = [c for c in errors.columns if c.startswith("error of FV")]
            if removed == {"encoder_quantization", "voltage_limit"} and friction:
                f = friction[0]
                values = {
                    label.removeprefix("default + ").split(" ")[0]: errors.loc[label, f]
                    for label in best
                }
                today_f = abs(errors.loc["default", f])
                verb = (
                    "cut"
                    if all(abs(v) < today_f for v in values.values())
                    else "raise"
                    if all(abs(v) > today_f for v in values.values())
                    else "move"
                )
                out.append(
                    f"The same two removals {verb} the largest standardized error, that of {f.removeprefix('error of ')} "
                    f"({errors.loc['default', f]:+.3f} on today's twin; {values['encoder_quantization']:+.3f} without the rounding, "
                    f"{values['voltage_limit']:+.3f} without the supply limit, N·m·s/rad)."
                    + (
                        ""
                        if verb != "cut"
                        else " *A reading, not a measurement:* the "
                        "controller differentiates the 12-bit angle over 1 ms, so its velocity feedback, and the current it commands, "
                        "chatter by a count's worth of speed; at speed the supply cannot deliver that chatter symmetrically (the driving "
                        "bound falls with speed, the braking bound rises), so the delivered torque falls short of the logged one by an "
                        "amount that grows with speed. The regression books the shortfall as viscous friction and, through the "
                        f"centrifugal and Coriolis columns it shares with it, as an error in {dominant[0]}."
                    )
                )
    return " ".join(out)


def largest_standardized_error(
    records, label: str = "default", trajectory: str = "AG02"
) -> str | None:
    """The parameter whose OLS error, in its own standard errors, is largest on average over a rung's points."""
    points = [
        p
        for r in records
        if r["label"] == label and r["condition"]["trajectory"] == trajectory
        for p in r["intervals"]
        if "failure" not in p
    ]
    if not points:
        return None
    names, truth = records[0]["names"], np.asarray(records[0]["truth"])
    z = np.mean(
        [np.abs(np.asarray(p["estimate"]) - truth) / np.asarray(p["std_errors"]) for p in points],
        axis=0,
    )
    return names[int(np.argmax(z))]


def field_check(frame):
    """The register's rule evaluated, the candidates it selects and the committed field profile's; in
    a study with two executions per rung, a disagreement between the two is an error."""
    rule, chosen = field_rule(frame)
    committed = sorted(
        f"default + {name} {number_text(value)}"
        for name, value in twin_effects.FIELD_CHANGES.items()
    )
    if len(rule) and chosen != committed:
        raise RuntimeError(
            f"the committed field profile {committed or 'today’s twin'} is not what the register's rule selects "
            f"({chosen or 'no candidate'}): update effects.FIELD_CHANGES and the register, or the rule"
        )
    return rule, chosen, committed


def field_sentence(rule, chosen, committed) -> str:
    if not len(rule):
        return (
            f"The committed field profile is {'today’s twin' if not committed else ', '.join(committed)}; "
            "the rule that chose it is evaluated in the full profile."
        )
    if not chosen:
        worst = rule.loc[rule["drop_min"].idxmax()]
        head = "**No candidate passes**, so the field profile is today's twin: the study does not support a different one. "
        if worst["drop_min"] <= 0:
            return head + (
                "No candidate lowers the margin over Θ in both executions at any interval: at every interval at least "
                "one execution's margin is as high as or higher than on today's twin."
            )
        return head + (
            f"The largest drop any candidate makes in both executions is {_e3(worst['drop_min'])} × 10⁻³ kg·m² "
            f"({worst['candidate']}, {worst['ts_ms']} ms), against {_e3(worst['twice_spread'])} × 10⁻³ needed there."
        )
    return f"The rule selects {', '.join(chosen)}; the field profile is today's twin with {'them' if len(chosen) > 1 else 'it'}."


def _share_why(part: int, whole: int, paper_id: str, profile: str, twin_name: str) -> "object":
    from crane_lib.paper_numbers import paper
    from crane_lib.reporting.tables import Why

    total = paper("identification_condition_count").value
    ours, theirs = (
        100.0 * part / whole if whole else float("nan"),
        100.0 * paper(paper_id).value / total,
    )
    direction = "fewer" if ours < theirs else "more"
    text = f"{ours:.0f} % of this build's conditions against {theirs:.0f} % of the paper's ({direction} on the twin)"
    if whole < total:
        return Why.profile(
            f"the {profile} profile has {whole} of the paper's {total:g} conditions; {text}"
        )
    return Why.twin(f"the {twin_name} twin against the arm: {text}")


def population_table(population, profile: str, twin: twin_effects.TwinEffects):
    """Table V's and Sec. VI-E's counts for this build's data set beside the paper's, with computed reasons."""
    from crane_lib.paper_numbers import paper
    from crane_lib.reporting.tables import Comparison, Why, comparison_table

    if not len(population):
        return 'No condition records of the OLS/SDP sweep in this build (chapter "OLS and the conditional SDP projection").'
    c = counts(population)
    n = c["conditions"]
    name = "field (= today's)" if twin.name == "field" and twin.is_default else twin.name
    rows = [
        Comparison(
            "conditions audited",
            "identification_condition_count",
            n,
            why=None
            if n == paper("identification_condition_count").value
            else Why.profile(f"the {profile} profile's conditions"),
        )
    ]
    for quantity, paper_id, key in (
        (
            "OLS estimates non-PD at the visited configurations (route O-S-C, Table V)",
            "ols_nonpd_routing_count",
            "non_pd_visited",
        ),
        ("PD at the configurations their record visits", "ols_pd_trajectory_count", "pd_visited"),
        ("PD over Θ", "ols_pd_domain_count", "pd_theta"),
        (
            "pass the routing test, fail over Θ",
            "ols_pass_routing_fail_audit",
            "pd_visited_not_theta",
        ),
        (
            "PD over Θ but not on their own record",
            "ols_reverse_mismatch_count",
            "pd_theta_not_visited",
        ),
    ):
        row = Comparison(quantity, paper_id, c[key])
        if row.agreement() is None:
            row.why = _share_why(c[key], n, paper_id, profile, name)
        rows.append(row)
    conc = folded.Concentration(c["violations_uniform"], c["violations_uniform_in_folded"])
    rows.append(
        Comparison(
            "share of the uniform draw's violations inside the folded-arm region",
            "folded_region_volume_share",
            f"{100 * conc.share:.1f} %" if conc.measured else "no violation",
            unit="",  # the cells carry their % signs
            paper_text=f"'violations concentrate' there; the region is {paper('folded_region_volume_share').text()} of Θ",
            why=Why.finding(
                conc.finding()
                if conc.measured
                else "no estimate of this build violates on the uniform draw"
            ),
        )
    )
    return comparison_table(
        rows,
        caption=f"Routing before CLIE and Sec. VI-E on the data set of this build "
        f"(twin profile {name}, {profile} profile)",
        paper="V",
    )


def accepted_table(run: dict, frame):
    """Algorithm 1 on the study's rung beside the paper's accepted model, with computed reasons."""
    from crane_lib.paper_numbers import paper
    from crane_lib.reporting.tables import Comparison, Why, comparison_table

    label = run["rung"]
    factor = run["seed factor"]
    rows = [
        Comparison(
            "violating configurations of the refined model, first audit (seed 1)",
            "clie_solution_violations",
            run["first audit: violations (seed 1)"],
            why=Why.twin(
                f"a different unit and estimate ({label}); the count depends on how far the estimate is from PD"
            ),
        ),
        Comparison(
            "rescue passes",
            "rescue_passes_seeded",
            run["rescue passes"] if run["rescued"] else "no rescue",
            why=None
            if run["rescued"] and run["rescue passes"] == paper("rescue_passes_seeded").value
            else Why.twin(
                "the rescue ran from this rung's witnesses"
                if run["rescued"]
                else "its refined model passed the first audit"
            ),
        ),
        Comparison(
            "accepted model's λmin over Θ, five seeds",
            "audit_min_eig_accepted",
            f"{significant_range(run['final λmin, smallest'], run['final λmin, largest'])}",
            why=Why.twin(
                "the rescue holds ε = 10⁻³ on Θr; how far below it the denser audit finds the margin depends on the model's worst region"
                if run["rescued"]
                else "no rescue ran: this is the refined model's own margin, not one the rescue set"
            ),
        ),
        Comparison(
            "seed factor of that margin (largest / smallest)",
            "audit_margin_seed_factor",
            factor,
            why=None
            if abs(factor - paper("audit_margin_seed_factor").value) < 0.05
            else Why.finding(
                "the minimum sits where the five draws differ"
                if factor > 1.05
                else f"every seed finds the same minimum (on the {run['final worst component']} component"
                + (", identical for every seed)" if run["final worst component"] == "grid" else ")")
            ),
        ),
    ]
    part = frame[(frame["trajectory"] == "AG02") & frame["failure"].isna()]
    for rung in ("default", label):
        verdicts = part[part["label"] == rung].groupby("ts_ms")["pd_theta"].all()
        passing = [ms for ms, ok in verdicts.items() if ok]
        rows.append(
            Comparison(
                f"intervals at which AG02's OLS estimate is PD over Θ in every execution, {rung}",
                "ag02_ols_audit_pd_interval",
                _interval_list(passing) if passing else "none",
                why=Why.finding(
                    f"computed on this rung; the paper's: {paper('ag02_ols_audit_pd_interval').text()} "
                    "only, in both executions"
                ),
            )
        )
    return comparison_table(
        rows, caption=f"Algorithm 1 on AG02 at 40 ms, {label}, beside the paper's accepted model"
    )


def significant_range(low: float, high: float) -> str:
    from crane_lib.reporting.tables import significant

    return f"{significant(low, 3)} to {significant(high, 3)}"


def conclusion(
    frame,
    table,
    spread,
    dominant,
    errors,
    chosen,
    truth_margin: float,
    trajectory: str = "AG02",
    runs=(),
) -> str:
    """The chapter's answer in computed lines (`runs`: the study's Algorithm 1 runs, `accepted_summary`)."""
    failing = table[table["pd_data_not_theta"] > 0]["label"].unique().tolist()
    patterns = interval_patterns(frame, trajectory)
    every = (
        [
            label
            for label, part in patterns.reset_index().groupby("label")
            if part["paper_pattern"].all()
        ]
        if len(patterns)
        else []
    )
    hits = patterns[patterns["paper_pattern"]].reset_index() if len(patterns) else []
    lines = [
        f"**Indefinite over Θ while PD at the data:** on {len(failing)} of {table['label'].nunique()} rungs"
        + (f" ({'; '.join(failing)})." if failing else "."),
        "**The paper's interval pattern** (indefinite at 10, 20, 40 ms, PD at 80 ms, in every execution): "
        + (
            f"on {'; '.join(every)}."
            if every
            else "on no rung; no effect at its sourced magnitude, alone or in the combinations run, produces it on this twin"
            + (
                f" (it appears in single executions: {'; '.join(f'{h.label}, seed {h.seed}' for h in hits.itertuples())})."
                if len(hits)
                else "."
            )
        ),
    ]
    if dominant:
        key = f"error of {dominant[0]}"
        text = f"**What takes the margin:** the errors of {', '.join(dominant)} at the worst pose"
        if "default" in errors.index and key in errors.columns:
            removals = errors[[i.startswith("default + ") for i in errors.index]][key]
            if len(removals):
                ratio = (removals.abs() / abs(errors.loc["default", key])).sort_values()
                best = ratio.index[:2]
                text += (
                    f"; on today's twin the error of {dominant[0]} {'shrinks most' if (ratio[best] < 1).all() else 'stays closest to zero'} when "
                    + " or ".join(b.removeprefix("default + ") for b in best)
                    + " is applied"
                )
        lines.append(text + ".")
    today = spread[spread["rung"] == "default"] if len(spread) else spread
    if len(today):
        widths = today.set_index("ts_ms")
        lines.append(
            "**Executions:** today's twin's margin over Θ spans "
            + "; ".join(
                f"{_e3(r['max'] - r['min'])} × 10⁻³ kg·m² at {ms} ms" for ms, r in widths.iterrows()
            )
            + f" over {int(today['executions'].max())} executions."
        )
    for run in runs:
        lines.append("**Algorithm 1:** " + accepted_sentence(run, frame))
    lines.append(
        "**The field profile:** "
        + (
            f"today's twin with {', '.join(chosen)}."
            if chosen
            else "today's twin; by the rule fixed in advance the study supports no other."
        )
    )
    return "\n".join(f"- {line}" for line in lines)


def plot_spread(spread, ax):
    """Per replicated rung and interval: the range (bar) and median (dot) of the margin over Θ over the executions."""
    rungs = list(dict.fromkeys(spread["rung"]))
    for k, rung in enumerate(rungs):
        for j, row in enumerate(spread[spread["rung"] == rung].itertuples()):
            x = INTERVALS_MS.index(row.ts_ms) + (k - (len(rungs) - 1) / 2) * 0.1
            ax.plot(
                [x, x],
                [row.min * 1e3, row.max * 1e3],
                color=f"C{k}",
                lw=2,
                label=rung if j == 0 else None,
            )
            ax.plot(x, row.median * 1e3, "o", color=f"C{k}", ms=4)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(INTERVALS_MS)), [f"{ms} ms" for ms in INTERVALS_MS])
    ax.set_ylabel("λmin over Θ (10⁻³ kg·m²)")
    ax.set_title(
        f"{DATA_NOTE}: AG02's margin over Θ, range (bar) and median (dot) over the executions",
        fontsize=10,
    )
    ax.legend(fontsize=7, ncol=2, loc="lower left")


# -------------------------------------------------- the chapter's tables and figures, captioned


def numbered(*args, **options) -> "ResultTable":
    """`tables.numbered`, imported when a table is shown (this module loads without pandas)."""
    from crane_lib.reporting.tables import numbered as build

    return build(*args, **options)


EFFECT_COLUMNS = {
    "kind": "kind",
    "unit": "unit",
    "today": "today",
    "off": "off",
    "nominal": "nominal",
    "admitted": "admitted",
    "source": "source",
}
POINT_HEADERS = {
    "ts_ms": "interval (ms)",
    "pd_visited": "PD at the visited configurations",
    "lambda_visited": "λmin there (kg·m²)",
    "pd_theta": "PD over Θ",
    "lambda_theta": "λmin over Θ (kg·m²)",
    "worst_component": "worst pose from",
}
RULE_HEADERS = {
    "candidate": "candidate",
    "ts_ms": "interval (ms)",
    "drop_min": "smaller drop of the two executions (kg·m²)",
    "twice_spread": "twice the executions' difference on today's twin (kg·m²)",
    "passes": "joins",
}


def effects_frame() -> ResultTable:
    """The effects table, captioned, every source in full (a DataFrame's HTML cuts long cells)."""
    return numbered(
        effects_table(),
        "The twin's effects: today's value, the value that removes it, the "
        "study's nominal magnitude and admitted range; the source column says "
        "where each magnitude comes from",
    )


def point_table(point) -> ResultTable:
    """One rung's record per interval: the routing test's and the audit's verdicts and margins."""
    shown = point[list(POINT_HEADERS)].rename(columns=POINT_HEADERS).set_index("interval (ms)")
    return numbered(
        shown,
        "The rung the parameters name, per interval: compare the verdict at the "
        f"visited configurations with the verdict over Θ ({DATA_NOTE})",
    )


def ladder_figure(table, order: list[str], trajectory: str = "AG02"):
    """The ladder's heat map at a size whose labels read at page width."""
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": 10}):
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(order) + 1.6))
        image = plot_ladder(table, order, ax, trajectory)
        # the map's labels at the size of the page's text; the caption carries the key
        ax.set_yticks(range(len(order)), order, fontsize=10)
        ax.tick_params(axis="x", labelsize=10)
        for text in ax.texts:
            text.set_fontsize(9.5)
        ax.set_title(f"{DATA_NOTE}: {trajectory}'s OLS estimate over Θ", fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.8, label="λmin over Θ (10⁻³ kg·m²)")
        fig.tight_layout()
    return fig


def magnitudes_figure(frame, scaled: list[str], trajectory: str = "AG02"):
    """Each scaled effect's margin over Θ against its magnitude, one panel per effect."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(11, 6.2), constrained_layout=True)
    plot_magnitudes(frame, scaled, axes, trajectory)
    for ax in np.ravel(axes)[len(scaled) :]:
        ax.set_visible(False)  # fewer effects than panels: no empty axes
    fig.suptitle(magnitudes_title(trajectory), fontsize=10)
    return fig


def spread_figure(spread):
    """The margin's range and median over the executions of each replicated rung."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 3.6))
    plot_spread(spread, ax)
    return fig


def mechanism_figure(point: dict, names: list[str], truth, title: str):
    """Each parameter's share of the margin's drop at the worst pose, and the worst eigenvector."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, 2, figsize=(10, 3.2), constrained_layout=True, gridspec_kw={"width_ratios": [1.4, 1]}
    )
    plot_mechanism(point, names, truth, axes, title)
    return fig


def errors_frame(errors):
    """The followed parameters' errors per removal rung at 40 ms (a sentence when none)."""
    from crane_lib.reporting.tables import Prose

    if errors.empty:
        return Prose("No rung that removes one effect has a record at 40 ms in this build.")
    return numbered(
        errors,
        "The errors (estimate − truth, mean over the executions, 40 ms) of the parameters "
        "that carry the drop, per rung that removes one effect: look for the removal "
        "that shrinks them",
        digits=3,
    )


def rule_frame(rule) -> ResultTable:
    """The register's field rule per candidate and interval, captioned, readable headers."""
    shown = rule.rename(columns=RULE_HEADERS).set_index(["candidate", "interval (ms)"])
    return numbered(
        shown,
        "The field rule per candidate and interval: a candidate joins the field twin when "
        "its smaller drop exceeds twice the executions' difference",
        digits=3,
    )


def accepted_runs_frame(runs: list[dict]) -> ResultTable:
    """The study's Algorithm 1 runs, one column per rung, captioned."""
    import pandas as pd

    # a seed is a name, not a quantity: no thousands spacing
    shown = pd.DataFrame(runs).astype({"seed": str}).set_index("rung").T
    shown.index.name = "Algorithm 1"
    return numbered(
        shown,
        "Algorithm 1 on the study's rungs: the first audit, the rescue and the re-audit "
        "on five seeds (λmin in kg·m²)",
        digits=3,
    )
