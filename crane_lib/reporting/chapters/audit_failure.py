"""The chapter "What makes an estimate fail the audit" as tables and figures: the nonideality
study's records (`acceptance.nonideality`) as frames, the ladder's map, the magnitude and
spread plots, the mechanism's split, the field rule and Table V on the build's data set.

The study itself (its conditions, one point's recording, identification, audit and mechanism,
the records it writes, the Rayleigh shares) is `acceptance.nonideality`; this module only
reads what it wrote.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from crane_lib.acceptance import folded
from crane_lib.acceptance.nonideality import INTERVALS_S, number_text, rayleigh_shares
from crane_lib.model.parameters import N_LINKS
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import (
    Comparison,
    ComparisonTable,
    ResultTable,
    Why,
    comparison_table,
    joined,
    numbered,
    significant,
)
from crane_lib.twin import effects as twin_effects

# AG02's OLS estimate over Θ at 10, 20, 40, 80 ms (Sec. VII-D): PD only at the coarsest
PAPER_PATTERN = (False, False, False, True)
INTERVALS_MS = tuple(round(ts * 1e3) for ts in INTERVALS_S)
INTERVAL_LABELS = tuple(str(ms) + " ms" for ms in INTERVALS_MS)
COLOUR_LIMIT = 6.0  # 10⁻³ kg·m²: beyond the twin's true margin (4.9), so PD cells keep their shades
# the register's field-rule candidates at their nominal magnitudes
FIELD_CANDIDATES = (("backlash", 0.25), ("encoder_error", 0.5), ("encoder_noise", 0.34))
# the effects whose magnitude the study scales alone on today's twin
SCALED_EFFECTS = (
    "backlash",
    "encoder_error",
    "encoder_noise",
    "dead_time",
    "kt_error",
    "compliance",
)
MECHANISM_TS_MS = min(INTERVALS_MS)  # the mechanism figure's interval: the finest
UNIFORM = "uniform"  # a record's key for the audit's uniform draw (Sec. VI-E)


def rung_label(name: str, value: float, base: str = "default") -> str:
    """The label of the rung that sets effect `name` to `value` on `base`."""
    return f"{base} + {name} {number_text(value)}"


def interval_list(values) -> str:
    """Intervals in ms as prose ("10 ms, 20 ms and 40 ms")."""
    return joined([str(v) + " ms" for v in values])


# ---------------------------------------------------------------- the records as frames


def points_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (condition, interval) of the study's records: verdicts, margins, mechanism."""
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
                    "violations_uniform": point["violations"].get(UNIFORM, 0),
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


def ladder(frame: pd.DataFrame, trajectory: str = "AG02") -> pd.DataFrame:
    """Per rung and interval, over the seeds: the smallest margin over Θ, how many seeds find the
    estimate non-PD over Θ, how many of those are PD at the visited configurations."""
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


def interval_patterns(frame: pd.DataFrame, trajectory: str = "AG02") -> pd.DataFrame:
    """Per rung and seed, the verdict over Θ at each interval and whether it is the paper's."""
    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()].sort_values("ts_ms")
    table = part.pivot_table(
        index=["label", "seed"], columns="ts_ms", values="pd_theta", aggfunc="first"
    )
    table["paper_pattern"] = [
        tuple(bool(v) for v in row) == PAPER_PATTERN for row in table[[10, 20, 40, 80]].to_numpy()
    ]
    return table


def pattern_rungs(frame: pd.DataFrame, trajectory: str = "AG02") -> tuple[list, list]:
    """The rungs that show the paper's interval pattern in every execution, and the single
    executions (rung, seed) that show it."""
    patterns = interval_patterns(frame, trajectory)
    if not len(patterns):
        return [], []
    flat = patterns.reset_index()
    every = [label for label, part in flat.groupby("label") if part["paper_pattern"].all()]
    hits = [(h.label, int(h.seed)) for h in flat[flat["paper_pattern"]].itertuples()]
    return every, hits


def rung_order(labels) -> list[str]:
    """Rungs in reading order: today's twin, the ideal twin, ideal + one effect, today's twin minus
    one, today's twin plus a candidate or a larger magnitude, the field profile."""

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


def removal_rungs(labels) -> list[str]:
    """Today's twin, the rungs that remove one effect from it, the ideal twin and the ideal twin
    with the effects the interaction rungs put together (reading order)."""
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


def field_rule(frame: pd.DataFrame, trajectory: str = "AG02"):
    """The register's rule, evaluated: per candidate and interval, the drop of the margin over Θ
    from today's twin in each execution, and twice the executions' difference on today's twin."""
    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()]
    default = part[part["label"] == "default"].pivot_table(
        index="ts_ms", columns="seed", values="lambda_theta"
    )
    rows = []
    for name, value in FIELD_CANDIDATES:
        label = rung_label(name, value)
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
    chosen = sorted({r["candidate"] for r in rows if r["passes"]})
    return pd.DataFrame(rows), chosen


def field_check(frame: pd.DataFrame):
    """The rule's table, the candidates it selects and the committed field profile's; a committed
    profile the rule does not select is an error."""
    rule, chosen = field_rule(frame)
    committed = sorted(rung_label(n, v) for n, v in twin_effects.FIELD_CHANGES.items())
    if len(rule) and chosen != committed:
        raise RuntimeError(
            "the committed field profile (effects.FIELD_CHANGES) is not what the register's rule "
            "selects: update effects.FIELD_CHANGES and the register, or the rule"
        )
    return rule, chosen, committed


def counts(frame: pd.DataFrame) -> dict:
    """Population counts of a frame with pd_visited, pd_theta and the uniform violations."""
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


def population(frame: pd.DataFrame, base: str) -> dict:
    """Counts over the conditions of one base profile with no effect changed (one execution per
    trajectory, every interval), with the number of conditions that failed."""
    mine = (frame["base"] == base) & (frame["effect"] == twin_effects.NO_EFFECT)
    part = frame[mine & frame["failure"].isna()]
    part = part.sort_values("seed").drop_duplicates(["trajectory", "ts_ms"])
    return {**counts(part), "failed": int((mine & frame["failure"].notna()).sum())}


def population_frame(rows: list[dict]) -> pd.DataFrame:
    """The audits step's rows (`acceptance.all_pose.sweep_rows`) as the population the counts
    read: the first execution of every condition, its verdicts and uniform-draw violations."""
    frame = pd.DataFrame(rows).rename(
        columns={
            "Ts (ms)": "ts_ms",
            "PD visited": "pd_visited",
            "PD over Θ": "pd_theta",
            "λmin over Θ": "lambda_theta",
            "uniform_violations": "violations_uniform",
            "in_folded_region": "violations_uniform_in_folded",
        }
    )
    return frame[frame["run"] == 1] if len(frame) else frame


def magnitude_series(frame: pd.DataFrame, effect: str, trajectory: str = "AG02") -> pd.DataFrame:
    """Margin over Θ against the magnitude of one effect changed alone on today's twin (today's
    value from the "default" rung), per interval and seed."""
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


def first_indefinite(frame: pd.DataFrame, effect: str, trajectory: str = "AG02") -> dict | None:
    """Where an effect changed alone on today's twin first gives an estimate indefinite over Θ:
    the value, whether it is the value that removes the effect and today's, the intervals, and
    the executions failing there of those run; None when PD at every magnitude tried."""
    series = magnitude_series(frame, effect, trajectory)
    bad = series[~series["pd_theta"].astype(bool)]
    if bad.empty:
        return None
    e, first = twin_effects.BY_NAME[effect], float(bad["value"].min())
    at = bad[bad["value"] == first]
    return {
        "value": first,
        "off": first == e.off,
        "today": first == e.default,
        "intervals": sorted(int(ms) for ms in at["ts_ms"].unique()),
        "failing": int(at["seed"].nunique()),
        "executions": int(series[series["value"] == first]["seed"].nunique()),
    }


def scaled_effects(frame: pd.DataFrame, trajectory: str = "AG02") -> list[str]:
    """The effects of SCALED_EFFECTS that this build's study ran at more than one magnitude."""
    return [
        n for n in SCALED_EFFECTS if magnitude_series(frame, n, trajectory)["value"].nunique() > 1
    ]


def seed_spread(frame: pd.DataFrame, min_seeds: int = 3, trajectory: str = "AG02"):
    """Rungs run on at least `min_seeds` executions: per interval, the median and range of the
    margin over Θ and how many executions fail over Θ."""
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


def share_frame(records: list[dict], trajectory: str = "AG02"):
    """Every point's exact shares of the drop at its worst pose, all 39 parameters, one row per
    point, from the estimate and pose its record stored; and the parameters' names."""
    truth = np.asarray(records[0]["truth"]) if records else None
    names = records[0]["names"] if records else []
    rows = []
    for record in {r["name"]: r for r in records}.values():
        if record["condition"]["trajectory"] != trajectory:
            continue
        for point in record["intervals"]:
            if "failure" in point:
                continue
            pose = np.radians(point["worst_pose_deg"])
            shares = rayleigh_shares(np.asarray(point["estimate"]), truth, pose)
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
    """The parameters whose errors pull λmin down most, over the points that lost at least half
    of the truth's margin over Θ (mean share, most negative first)."""
    lost = shares[shares["lambda_theta"] < 0.5 * truth_margin]
    if lost.empty:
        return []
    mean = lost[names].mean()
    return [name for name in mean.sort_values().index[:count] if mean[name] < 0]


def error_table(records, labels, parameters, ts_ms: int = 40, trajectory: str = "AG02"):
    """Mean over the executions of each rung's estimate error (estimate − truth) in `parameters`
    at one interval, with the margin over Θ (kg·m², and the parameters' own units)."""
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
        row.update({"error of " + n: float(errors[:, names.index(n)].mean()) for n in parameters})
        row["smallest λmin over Θ"] = float(min(p["lambda_min_theta"] for _, p in points))
        rows.append(row)
    return pd.DataFrame(rows).set_index("rung") if rows else pd.DataFrame()


def removal_effects(errors: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """Per rung that removes one effect from today's twin: the parameter's error and its size
    against today's (|removal| / |today|), smallest first; empty without today's row."""
    key = "error of " + parameter
    if "default" not in errors.index or key not in errors.columns:
        return pd.DataFrame(columns=["error", "ratio"])
    today = errors.loc["default", key]
    removals = errors[[i.startswith("default + ") for i in errors.index]][key]
    out = pd.DataFrame({"error": removals, "ratio": removals.abs() / abs(today)})
    out.index = [i.removeprefix("default + ") for i in out.index]
    return out.sort_values("ratio")


def friction_direction(errors: pd.DataFrame, removals: list[str]) -> tuple[str, str] | None:
    """The first viscous parameter's error under `removals` (effect labels without "default +")
    against today's twin's: ("FV…", "cut" | "raise" | "move"); None without such a column."""
    friction = [c for c in errors.columns if c.startswith("error of FV")]
    if not friction or "default" not in errors.index:
        return None
    today = abs(errors.loc["default", friction[0]])
    values = [abs(errors.loc["default + " + r, friction[0]]) for r in removals]
    verb = (
        "cut"
        if all(v < today for v in values)
        else "raise"
        if all(v > today for v in values)
        else "move"
    )
    return friction[0].removeprefix("error of "), verb


def accepted_ols(run: dict, frame: pd.DataFrame, ts_ms: int = 40) -> dict | None:
    """The OLS estimate of Algorithm 1's recording at its interval: PD over Θ, its margin and PD
    at the visited configurations (None when the study has no such point)."""
    ols = frame[
        (frame["label"] == run["rung"])
        & (frame["seed"] == run["seed"])
        & (frame["ts_ms"] == ts_ms)
        & frame["failure"].isna()
    ]
    if not len(ols):
        return None
    o = ols.iloc[0]
    return {
        "pd_theta": bool(o["pd_theta"]),
        "lambda_theta": float(o["lambda_theta"]),
        "pd_visited": bool(o["pd_visited"]),
    }


def largest_standardized_error(
    records, label: str = "default", trajectory: str = "AG02"
) -> str | None:
    """The parameter whose OLS error, in its own standard errors, is largest on average over a
    rung's points."""
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


def accepted_summary(records) -> list[dict]:
    """The study's Algorithm 1 runs (rows with accept = True): verdicts, the rescue, the margins
    per seed."""
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


def effects_table() -> pd.DataFrame:
    """The effects with today's value, the value that removes them, the study's nominal and
    range, and the source."""
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
                else " to ".join((number_text(e.low), number_text(e.high))),
                "source": e.source,
            }
            for e in twin_effects.EFFECTS
        ]
    ).set_index("effect")


# ---------------------------------------------------------------- comparisons with the paper


def _share_why(part: int, whole: int, paper_id: str, profile: str, twin_name: str) -> Why:
    total = paper("identification_condition_count").value
    ours = 100.0 * part / whole if whole else float("nan")
    theirs = 100.0 * paper(paper_id).value / total
    direction = "fewer" if ours < theirs else "more"
    text = (
        f"{ours:.0f} % of this build's conditions against {theirs:.0f} % of the paper's "
        f"({direction} on the twin)"
    )
    if whole < total:
        return Why.profile(
            f"the {profile} profile has {whole} of the paper's {total:g} conditions; {text}"
        )
    return Why.twin("the " + twin_name + " twin against the arm: " + text)


def population_table(
    population: pd.DataFrame, profile: str, twin: twin_effects.TwinEffects
) -> ComparisonTable:
    """Table V's and Sec. VI-E's counts for this build's data set beside the paper's."""
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
            else Why.profile("the " + profile + " profile's conditions"),
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
    volume = paper("folded_region_volume_share").text()
    rows.append(
        Comparison(
            "share of the uniform draw's violations inside the folded-arm region",
            "folded_region_volume_share",
            format(100 * conc.share, ".1f") + " %" if conc.measured else "no violation",
            unit="",  # the cells carry their % signs
            paper_text="'violations concentrate' there; the region is " + volume + " of Θ",
            why=Why.finding(
                conc.finding()
                if conc.measured
                else "no estimate of this build violates on the uniform draw"
            ),
        )
    )
    return comparison_table(
        rows,
        caption="Routing before CLIE and Sec. VI-E on the data set of this build "
        f"(twin profile {name}, {profile} profile)",
        paper="V",
    )


def accepted_table(run: dict, frame: pd.DataFrame) -> ComparisonTable:
    """Algorithm 1 on the study's rung beside the paper's accepted model."""
    label = run["rung"]
    factor = run["seed factor"]
    margins = run["final λmin, smallest"], run["final λmin, largest"]
    same = "every seed finds the same minimum (on the " + run["final worst component"]
    rows = [
        Comparison(
            "violating configurations of the refined model, first audit (seed 1)",
            "clie_solution_violations",
            run["first audit: violations (seed 1)"],
            why=Why.twin(
                "a different unit and estimate (" + label + "); the count depends on how far "
                "the estimate is from PD"
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
            " to ".join(significant(m, 3) for m in margins),
            why=Why.twin(
                "the rescue holds ε = 10⁻³ on Θr; how far below it the denser audit finds the "
                "margin depends on the model's worst region"
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
                else same
                + (
                    " component, identical for every seed)"
                    if run["final worst component"] == "grid"
                    else " component)"
                )
            ),
        ),
    ]
    part = frame[(frame["trajectory"] == "AG02") & frame["failure"].isna()]
    paper_pd = paper("ag02_ols_audit_pd_interval").text()
    for rung in ("default", label):
        verdicts = part[part["label"] == rung].groupby("ts_ms")["pd_theta"].all()
        passing = [ms for ms, ok in verdicts.items() if ok]
        rows.append(
            Comparison(
                "intervals at which AG02's OLS estimate is PD over Θ in every execution, " + rung,
                "ag02_ols_audit_pd_interval",
                interval_list(passing) if passing else "none",
                why=Why.finding(
                    "computed on this rung; the paper's: " + paper_pd + " only, in both executions"
                ),
            )
        )
    return comparison_table(
        rows, caption=f"Algorithm 1 on AG02 at 40 ms, {label}, beside the paper's accepted model"
    )


# ---------------------------------------------------------------- tables, captioned

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


def point_table(point: pd.DataFrame) -> ResultTable:
    """One rung's record per interval: the routing test's and the audit's verdicts and margins."""
    shown = point[list(POINT_HEADERS)].rename(columns=POINT_HEADERS).set_index("interval (ms)")
    return numbered(
        shown,
        "The rung the parameters name, per interval: compare the verdict at the "
        "visited configurations with the verdict over Θ (twin data: the study's recordings)",
    )


def errors_frame(errors: pd.DataFrame) -> ResultTable:
    """The followed parameters' errors per removal rung at 40 ms."""
    return numbered(
        errors,
        "The errors (estimate − truth, mean over the executions, 40 ms) of the parameters "
        "that carry the drop, per rung that removes one effect: look for the removal "
        "that shrinks them",
        digits=3,
    )


def rule_frame(rule: pd.DataFrame) -> ResultTable:
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
    # a seed is a name, not a quantity: no thousands spacing
    shown = pd.DataFrame(runs).astype({"seed": str}).set_index("rung").T
    shown.index.name = "Algorithm 1"
    return numbered(
        shown,
        "Algorithm 1 on the study's rungs: the first audit, the rescue and the re-audit "
        "on five seeds (λmin in kg·m²)",
        digits=3,
    )


# ---------------------------------------------------------------- figures


def ladder_figure(table: pd.DataFrame, order: list[str]):
    """Heat map: rows = rungs, columns = intervals; colour = the smallest margin over Θ over the
    seeds (red below zero); text = the verdict over Θ, † where PD at the data but not over Θ."""
    grid = np.full((len(order), len(INTERVALS_MS)), np.nan)
    text = [["" for _ in INTERVALS_MS] for _ in order]
    for row in table.itertuples(index=False):
        if row.label not in order or row.ts_ms not in INTERVALS_MS:
            continue
        i, j = order.index(row.label), INTERVALS_MS.index(row.ts_ms)
        grid[i, j] = row.margin_min * 1e3
        failing = "non-PD " + str(row.non_pd_theta) + "/" + str(row.seeds)
        verdict = "PD" if row.non_pd_theta == 0 else failing if row.seeds > 1 else "non-PD"
        text[i][j] = verdict + (" †" if row.pd_data_not_theta else "")
    with plt.rc_context({"font.size": 10}):
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(order) + 1.6))
        # the colour saturates at ±COLOUR_LIMIT: the text carries the verdict beyond
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
                        fontsize=9.5,
                        color="w" if dark else "k",
                    )
        ax.set_xticks(range(len(INTERVALS_MS)), INTERVAL_LABELS)
        ax.set_yticks(range(len(order)), order, fontsize=10)
        ax.set_title("The OLS estimate over Θ (twin data: the study's recordings)", fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.8, label="λmin over Θ (10⁻³ kg·m²)")
        fig.tight_layout()
    return fig


def magnitudes_figure(frame: pd.DataFrame, scaled: list[str], trajectory: str = "AG02"):
    """Each scaled effect's margin over Θ against its magnitude, one panel per effect."""
    fig, axes = plt.subplots(2, 3, figsize=(11, 6.2), constrained_layout=True)
    colors = dict(zip(INTERVALS_MS, ("C0", "C1", "C2", "C3")))
    for ax, effect in zip(np.ravel(axes), scaled):
        series = magnitude_series(frame, effect, trajectory)
        first = series["seed"].min()
        for (ts, seed), part in series.groupby(["ts_ms", "seed"]):
            ax.plot(
                part["value"],
                part["lambda_theta"] * 1e3,
                marker="o" if seed == first else "s",
                ms=3.5,
                lw=1.0,
                color=colors.get(ts, "k"),
                label=str(ts) + " ms" if seed == first else None,
            )
        ax.axhline(0.0, color="k", lw=0.8)
        ax.axvline(twin_effects.BY_NAME[effect].default, color="0.6", lw=0.8, ls=":")
        unit = twin_effects.BY_NAME[effect].unit.split(" (")[0]
        ax.set_xlabel(effect + " (" + unit + ")", fontsize=8)
        ax.set_ylabel("λmin over Θ (10⁻³ kg·m²)", fontsize=8)
        ax.tick_params(labelsize=7.5)
    np.ravel(axes)[0].legend(fontsize=7, title="interval (○ seed 1, □ seed 2)", title_fontsize=7)
    for ax in np.ravel(axes)[len(scaled) :]:
        ax.set_visible(False)  # fewer effects than panels: no empty axes
    fig.suptitle("The margin over Θ against each effect's magnitude, alone on today's twin")
    return fig


def spread_figure(spread: pd.DataFrame):
    """Per replicated rung and interval: the range (bar) and median (dot) of the margin over Θ."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    rungs = list(dict.fromkeys(spread["rung"]))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, rung in enumerate(rungs):
        color = colors[k % len(colors)]
        for j, row in enumerate(spread[spread["rung"] == rung].itertuples()):
            x = INTERVALS_MS.index(row.ts_ms) + (k - (len(rungs) - 1) / 2) * 0.1
            label = rung if j == 0 else None
            ax.plot([x, x], [row.min * 1e3, row.max * 1e3], color=color, lw=2, label=label)
            ax.plot(x, row.median * 1e3, "o", color=color, ms=4)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(INTERVALS_MS)), INTERVAL_LABELS)
    ax.set_ylabel("λmin over Θ (10⁻³ kg·m²)")
    ax.set_title("The margin over Θ, range (bar) and median (dot) over the executions", fontsize=10)
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    return fig


def mechanism_figure(shares: dict, names: list[str], title: str):
    """Each parameter's share of the margin's drop at the worst pose (the most negative eight),
    and the worst eigenvector by joint (`shares`: `acceptance.nonideality.rayleigh_shares`)."""
    fig, axes = plt.subplots(
        1, 2, figsize=(10, 3.2), constrained_layout=True, gridspec_kw={"width_ratios": [1.4, 1]}
    )
    order = np.argsort(shares["shares"])[:8]
    axes[0].barh([names[k] for k in order][::-1], shares["shares"][order][::-1] * 1e3, color="C3")
    axes[0].set_xlabel("share of the drop (10⁻³ kg·m²)", fontsize=8)
    axes[0].set_title(title, fontsize=8.5)
    axes[1].bar(["J" + str(j) for j in range(1, N_LINKS + 1)], shares["vector"], color="C0")
    axes[1].axhline(0.0, color="k", lw=0.6)
    axes[1].set_title("worst eigenvector v", fontsize=8.5)
    for ax in axes:
        ax.tick_params(labelsize=7.5)
    return fig
