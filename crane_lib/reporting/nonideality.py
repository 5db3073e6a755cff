"""The nonideality study of issue 14: which effect of a real arm makes an identified M(θ) indefinite
away from the data, and how much of it does it take.

A study point is one condition of `papermill_params/nonideality_<profile>.csv`: a base twin profile
(twin/effects.py: "default" = today's twin, "ideal" = every effect off, "field"), the effects changed
on top of it with their magnitudes, a trajectory and a seed. The point records the trajectory once on
the twin so configured, preprocesses it at 10, 20, 40 and 80 ms, and for each interval computes

* OLS on the 39-parameter model and the routing test (PD at the configurations the record visits,
  identification.condition without the projection),
* the dense audit over Θ (seed 1) through the Cholesky screen (acceptance/screened.py): verdict,
  margin λmin, worst pose and component, violations per component,
* the mechanism at the worst pose θ*: with v the eigenvector of λmin of M(θ*; β̂) and M linear in β,
  vᵀM(θ*; β̂)v − vᵀM(θ*; β)v = Σ_k g_k (β̂_k − β_k), g_k = vᵀ B_k(θ*) v, so each base parameter's
  share of the drop from the truth's Rayleigh quotient to λmin is exact (`rayleigh_shares`),
* the parameter error against the twin's truth (per parameter, and in OLS standard errors).

A condition may also ask for Algorithm 1 on its record at 40 ms (`accept`): identify, refine (fast
route), audit on seeds 1-5, rescue if needed, re-audit (acceptance.accepted.accept_recording).

The sweep runs chapters/11_audit_failure.py once per condition (papermill, `reporting.sweep`), which
calls `run_condition` and writes one JSON record per condition under RESULTS_DIR/nonideality/<profile>/.
Every row of the conditions file is checked before anything is recorded (`read_study_conditions`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.acceptance import audit as audit_stage
from crane_lib.acceptance import screened
from crane_lib.errors import InputError, checked_csv_rows
from crane_lib.identification.condition import ROUTE_DIRECT, identify_condition
from crane_lib.logs import preprocessing
from crane_lib.logs.raw_log import RawLog, group
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import N_LINKS
from crane_lib.paths import PAPERMILL_PARAMS_DIR, RESULTS_DIR, TRAJECTORY_DIR
from crane_lib.records import read_json_records, write_json_record
from crane_lib.twin import effects as twin_effects
from crane_lib.twin import recorder as twin
from crane_lib.twin.truth import TWIN_PLANT_CSV, TWIN_TRUTH_CSV, load_plant_settings, load_truth

INTERVALS_S = (0.010, 0.020, 0.040, 0.080)
AUDIT_SEED = 1
ACCEPT_INTERVAL_S = 0.040  # the representative condition's interval (Algorithm 1 on `accept` rows)
STUDY_COLUMNS = ["base", "effect", "magnitude", "trajectory", "seed", "accept"]
STUDY_DIR = RESULTS_DIR / "nonideality"
CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "11_audit_failure.py"
TOP_SHARES = 6  # parameters listed per interval in the mechanism


@dataclass(frozen=True)
class StudyCondition:
    """One row of a study conditions file, checked."""

    base: str
    changes: tuple[tuple[str, float], ...]  # (effect, magnitude) set on top of the base profile
    trajectory: str
    seed: int
    accept: bool = False

    @property
    def effects(self) -> twin_effects.TwinEffects:
        return twin_effects.profile(self.base).changed(**dict(self.changes))

    @property
    def effect(self) -> str:
        return "+".join(n for n, _ in self.changes) or twin_effects.NO_EFFECT

    @property
    def magnitude(self) -> str:
        return "+".join(_number(v) for _, v in self.changes) or "0"

    def label(self) -> str:
        """e.g. "default + backlash 0.25", "ideal", "ideal + compliance 100 + gear_friction 0.97"."""
        return " + ".join([self.base] + [f"{n} {_number(v)}" for n, v in self.changes])

    def parameters(self) -> dict:
        """The chapter's papermill parameters for this condition."""
        return {"base": self.base, "effect": self.effect, "magnitude": self.magnitude, "trajectory": self.trajectory,
                "seed": self.seed, "accept": self.accept, "summary": False}

    def name(self) -> str:
        return f"{self.trajectory}_s{self.seed}_{self.base}_{self.effect}-{self.magnitude}".replace("+", "_").replace("/", "-")


def _number(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def parse_condition(base, effect, magnitude, trajectory, seed, accept="False", where: str = "study condition") -> StudyCondition:
    """One condition from its fields (strings or values); an InputError names `where` and what is allowed.

    `effect` is "none" or effect names joined by "+", `magnitude` as many numbers joined by "+"
    (ignored for "none", where it must be 0)."""
    base = str(base).strip()
    if base not in twin_effects.PROFILES:
        raise InputError(where, f"base profile {base!r}", f"one of {', '.join(twin_effects.PROFILES)}")
    effect, magnitude = str(effect).strip(), str(magnitude).strip()
    changes: list[tuple[str, float]] = []
    if effect != twin_effects.NO_EFFECT:
        names, values = effect.split("+"), magnitude.split("+")
        if len(names) != len(values):
            raise InputError(where, f"{len(names)} effects ({effect}) but {len(values)} magnitudes ({magnitude})",
                             "one magnitude per effect, joined by '+' like the effects")
        for name, value in zip(names, values):
            changes.append((name.strip(), twin_effects.check_value(name.strip(), value.strip(), where)))
        if len({n for n, _ in changes}) != len(changes):
            raise InputError(where, f"effect listed twice in {effect}", "each effect once")
    elif magnitude not in ("0", "0.0"):
        raise InputError(where, f"magnitude {magnitude!r} with effect 'none'", "0")
    trajectory = str(trajectory).strip()
    if not (TRAJECTORY_DIR / f"{trajectory}.txt").is_file():
        raise InputError(where, f"no command file {TRAJECTORY_DIR / (trajectory + '.txt')}", "a trajectory in trajectories/")
    try:
        seed = int(str(seed).strip())
    except ValueError:
        raise InputError(where, f"seed {seed!r} is not an integer", "a non-negative integer") from None
    if seed < 0:
        raise InputError(where, f"seed {seed}", "a non-negative integer")
    flag = str(accept).strip()
    if flag not in ("True", "False"):
        raise InputError(where, f"accept {flag!r}", "True or False")
    condition = StudyCondition(base, tuple(changes), trajectory, seed, flag == "True")
    if condition.accept and condition.base == "ideal":
        raise InputError(where, "Algorithm 1 on the ideal twin", "accept = True only on the default or field profile")
    try:
        twin_effects.realization(condition.effects, *_unit())
    except InputError as err:  # a combination the plant cannot take (e.g. backlash on a rigid drivetrain)
        raise InputError(where, err.problem, err.expected) from None
    return condition


@lru_cache(maxsize=1)
def _unit():
    """The twin unit's truth and drive settings (read once per process)."""
    return load_truth(), load_plant_settings()


def study_conditions_path(profile: str) -> Path:
    return PAPERMILL_PARAMS_DIR / f"nonideality_{profile}.csv"


def read_study_conditions(path) -> list[StudyCondition]:
    """Every row of a study conditions file, each checked (errors name the file and line)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = PAPERMILL_PARAMS_DIR / path
    rows = checked_csv_rows(path, STUDY_COLUMNS, "the conditions of the nonideality study")
    if not rows:
        raise InputError(str(path), "no conditions", "at least one row")
    conditions, seen = [], {}
    for where, fields in rows:
        condition = parse_condition(*fields, where=where)
        if condition.name() in seen:
            raise InputError(where, f"the condition of {seen[condition.name()]} again", "each condition once")
        seen[condition.name()] = where
        conditions.append(condition)
    return conditions


def record_path(condition: StudyCondition, profile: str) -> Path:
    return STUDY_DIR / profile / f"{condition.name()}.json"


# ---------------------------------------------------------------- one point


def rayleigh_shares(beta_hat, beta_true, pose, model: DynamicModel | None = None) -> dict:
    """The exact decomposition of λmin(M(θ*; β̂)) against the truth along its eigenvector v.

    Returns v (7,), λmin, the truth's Rayleigh quotient vᵀM(θ*; β)v and, per base parameter,
    g_k = vᵀ B_k v (the sensitivity) and the share g_k (β̂_k − β_k); the shares sum to λmin − truth's quotient."""
    model = shared_model("reduced") if model is None else model
    beta_hat, beta_true = model.parameter_vector(beta_hat), model.parameter_vector(beta_true)
    pose = np.asarray(pose, dtype=float).reshape(1, -1)
    values, vectors = np.linalg.eigh(model.inertia_matrix(pose, beta_hat)[0, :N_LINKS, :N_LINKS])
    v = vectors[:, 0] * (1.0 if vectors[np.argmax(np.abs(vectors[:, 0])), 0] > 0 else -1.0)  # sign: largest entry positive
    g = np.empty(model.n_parameters)
    for k in range(model.n_parameters):
        unit = np.zeros(model.n_parameters)
        unit[k] = 1.0
        g[k] = v @ model.inertia_matrix(pose, unit)[0, :N_LINKS, :N_LINKS] @ v
    truth_quotient = float(v @ model.inertia_matrix(pose, beta_true)[0, :N_LINKS, :N_LINKS] @ v)
    return {"vector": v, "lambda_min": float(values[0]), "truth_quotient": truth_quotient, "sensitivity": g,
            "shares": g * (beta_hat - beta_true)}


@dataclass
class _Context:
    model: DynamicModel
    truth: np.ndarray
    trig: screened.TrigPoses


_CONTEXT: _Context | None = None


def _context() -> _Context:
    global _CONTEXT
    if _CONTEXT is None:
        model = shared_model("reduced")
        _CONTEXT = _Context(model, model.base_from_standard(load_truth()).values, screened.trig_poses(audit_stage.audit_poses(AUDIT_SEED)))
    return _CONTEXT


def _in_box(poses: np.ndarray, box: np.ndarray) -> np.ndarray:
    return np.all((poses >= box[:, 0]) & (poses <= box[:, 1]), axis=1)


def _interval_result(bundle, condition: StudyCondition, context: _Context) -> dict:
    model, truth = context.model, context.truth
    result = identify_condition(bundle, condition.trajectory, model, project=False)
    out = {"ts": float(bundle.ts), "n_samples": int(bundle.n_samples)}
    if result.ols is None:
        out["failure"] = result.failure
        return out
    beta = result.ols.parameters.values
    se = result.ols.parameters.std_errors
    found = screened.screened_audit(beta, context.trig, model)
    shares = rayleigh_shares(beta, truth, found.worst_pose, model)
    order = np.argsort(shares["shares"])[:TOP_SHARES]  # the most negative shares: what pulled λmin down
    error = beta - truth
    out.update(
        kappa=result.ols.kappa,
        residual_rms=result.ols.residual_rms,
        route=result.route,
        pd_visited=bool(result.route == ROUTE_DIRECT),
        lambda_min_visited=result.lambda_min_visited,
        pd_theta=found.passed,
        lambda_min_theta=found.lambda_min,
        worst_pose_deg=np.degrees(found.worst_pose).tolist(),
        worst_component=found.worst_component,
        violations=found.violations,
        violations_uniform_in_folded=int(np.count_nonzero(_in_box(found.uniform_violating_poses, audit_stage.folded_region()))),
        pose_counts=found.pose_counts,
        screen_threshold=found.threshold,
        eigenvector=shares["vector"].tolist(),
        truth_quotient=shares["truth_quotient"],
        shares=[[model.names[k], float(shares["shares"][k])] for k in order],  # most negative first
        share_sum=float(shares["shares"].sum()),
        estimate=beta.tolist(),
        std_errors=se.tolist(),
        error_in_std_errors_rms=float(np.sqrt(np.mean((error / se) ** 2))),
        relative_error_median=float(np.median(np.abs(error) / np.maximum(np.abs(truth), 1e-12))),
    )
    return out


def run_condition(condition: StudyCondition, intervals=INTERVALS_S) -> tuple[dict, dict]:
    """Record, preprocess, identify and audit one condition at every interval: (the record to write,
    the wall time of its stages, which is kept out of the record so that reruns are byte-identical)."""
    context = _context()
    started = time.perf_counter()
    samples, metadata = twin.record(TRAJECTORY_DIR / f"{condition.trajectory}.txt", condition.seed, effects=condition.effects)
    recorded = time.perf_counter()
    log = RawLog(samples, metadata)
    bundles = preprocessing.preprocess_all(log, intervals)
    record = {
        "condition": condition.parameters(),
        "label": condition.label(),
        "name": condition.name(),
        "profile": condition.effects.describe(),
        "recording": {k: metadata[k] for k in ("realized_motion_s", "record_duration_s", "in_position_timeouts", "kt_true_this_run")},
        "clamp_share_percent": float(100.0 * samples[:, group("clamped")].any(axis=1).mean()),
        "samples_sha256": fingerprint.digest(samples.tobytes()),
        "truth": context.truth.tolist(),
        "names": list(context.model.names),
        "intervals": [_interval_result(bundles[float(ts)], condition, context) for ts in intervals],
    }
    timing = {"record_s": recorded - started, "identify_and_audit_s": time.perf_counter() - recorded}
    if condition.accept:
        record["accepted"] = _accept(log, condition)
    return record, timing


def _accept(log: RawLog, condition: StudyCondition) -> dict:
    from crane_lib.acceptance.accepted import accept_recording

    accepted = accept_recording(log, condition.trajectory, ACCEPT_INTERVAL_S, refine="fast")
    first, final = accepted.first_audits, accepted.final_audits
    summary = lambda audits: [  # noqa: E731
        {"seed": a.seed, "passed": a.passed, "lambda_min": a.lambda_min, "violations": a.violations,
         "worst_pose_deg": np.degrees(a.worst_pose).tolist(), "worst_component": a.worst_component} for a in audits
    ]
    return {
        "ts": ACCEPT_INTERVAL_S,
        "route": accepted.condition.route,
        "refinement": {k: v for k, v in accepted.refinement.items() if isinstance(v, (int, float, str, bool)) or v is None},
        "first_audits": summary(first),
        "rescued": accepted.rescue is not None,
        "rescue_passes": None if accepted.rescue is None else len(accepted.rescue.passes),
        "final_audits": summary(final),
        "accepted": accepted.accepted,
        "verdict": accepted.verdict(),
        "refined": accepted.refined.values.tolist(),
        "parameters": accepted.parameters.values.tolist(),
    }


def write_condition(condition: StudyCondition, profile: str) -> tuple[Path, dict]:
    record, timing = run_condition(condition)
    return write_json_record(record_path(condition, profile), record), timing


def read_study(profile: str) -> list[dict]:
    """Every record the study of `profile` wrote (file-name order)."""
    return read_json_records(STUDY_DIR / profile)


# ---------------------------------------------------------------- the sweep


def twin_inputs() -> list[Path]:
    """The data files a study point reads besides crane_lib's source (for the sweep's cache key)."""
    from crane_lib.model.controller import REALIZATION_CONSTANTS_CSV

    return [TWIN_TRUTH_CSV, TWIN_PLANT_CSV, REALIZATION_CONSTANTS_CSV]


def run_study(profile: str, jobs: int = 2, scheduler=None):
    """Check every condition of the profile's study, then run the chapter once per condition (cached).
    `scheduler`: a Dask scheduler address (default: $CRANE_SCHEDULER, else a local pool of `jobs` processes)."""
    from crane_lib.reporting import sweep

    conditions = read_study_conditions(study_conditions_path(profile))  # every row checked before anything is recorded
    return sweep.run_sweep(
        CHAPTER,
        [c.parameters() for c in conditions],
        f"nonideality_{profile}",
        inputs_of=lambda p: twin_inputs() + [TRAJECTORY_DIR / f"{p['trajectory']}.txt"],
        workers=jobs,
        scheduler=scheduler,
    )


# ---------------------------------------------------------------- what the chapter shows

PAPER_PATTERN = (False, False, False, True)  # AG02's OLS estimate over Θ at 10, 20, 40, 80 ms (Sec. VII-D)


def points_frame(records: list[dict]):
    """One row per (condition, interval) of the study's records: the verdicts, the margin and the mechanism."""
    import pandas as pd

    rows = []
    for record in records:
        c = record["condition"]
        for point in record["intervals"]:
            row = {"label": record["label"], "base": c["base"], "effect": c["effect"], "magnitude": c["magnitude"],
                   "trajectory": c["trajectory"], "seed": int(c["seed"]), "ts_ms": round(point["ts"] * 1e3)}
            if "failure" in point:
                rows.append({**row, "failure": point["failure"]})
                continue
            shares = point["shares"]
            rows.append({
                **row, "failure": None, "pd_visited": point["pd_visited"], "pd_theta": point["pd_theta"],
                "lambda_visited": point["lambda_min_visited"], "lambda_theta": point["lambda_min_theta"],
                "worst_component": point["worst_component"], "worst_pose_deg": point["worst_pose_deg"],
                "violations": sum(point["violations"].values()), "violations_uniform": point["violations"].get(audit_stage.UNIFORM, 0),
                "violations_uniform_in_folded": point.get("violations_uniform_in_folded"),
                "kappa": point["kappa"], "residual_rms": point["residual_rms"], "error_in_se": point["error_in_std_errors_rms"],
                "top_share": shares[0][0] if isinstance(shares, list) else None,
                "eigenvector": point["eigenvector"], "truth_quotient": point["truth_quotient"],
            })
    return pd.DataFrame(rows)


def ladder(frame, trajectory: str = "AG02"):
    """Per rung (label) and interval, over the seeds: the smallest margin over Θ, how many seeds
    find the estimate non-PD over Θ, how many of those are PD at the visited configurations."""
    import pandas as pd

    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()]
    grouped = part.groupby(["label", "ts_ms"], sort=False)
    out = pd.DataFrame({
        "margin_min": grouped["lambda_theta"].min(),
        "margin_max": grouped["lambda_theta"].max(),
        "seeds": grouped["seed"].nunique(),
        "non_pd_theta": grouped["pd_theta"].apply(lambda s: int((~s.astype(bool)).sum())),
        "pd_data_not_theta": grouped.apply(lambda g: int((g["pd_visited"].astype(bool) & ~g["pd_theta"].astype(bool)).sum()), include_groups=False),
    })
    return out.reset_index()


def interval_patterns(frame, trajectory: str = "AG02"):
    """Per rung and seed, the verdict over Θ at each interval, and whether it is the paper's pattern."""
    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna()].sort_values("ts_ms")
    table = part.pivot_table(index=["label", "seed"], columns="ts_ms", values="pd_theta", aggfunc="first")
    table["paper_pattern"] = [tuple(bool(v) for v in row) == PAPER_PATTERN for row in table[[10, 20, 40, 80]].to_numpy()]
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
    default = part[part["label"] == "default"].pivot_table(index="ts_ms", columns="seed", values="lambda_theta")
    rows = []
    for name, value in FIELD_CANDIDATES:
        label = f"default + {name} {_number(value)}"
        changed = part[part["label"] == label].pivot_table(index="ts_ms", columns="seed", values="lambda_theta")
        for ts in default.index:
            seeds = [s for s in default.columns if s in changed.columns]
            if ts not in changed.index or len(seeds) < 2:
                continue
            drops = [float(default.loc[ts, s] - changed.loc[ts, s]) for s in seeds]
            spread = 2.0 * float(default.loc[ts, seeds].max() - default.loc[ts, seeds].min())
            rows.append({"candidate": label, "ts_ms": ts, "drop_min": min(drops), "twice_spread": spread,
                         "passes": min(drops) > spread})
    table = pd.DataFrame(rows)
    chosen = sorted({r["candidate"] for r in rows if r["passes"]})
    return table, chosen


FIELD_CANDIDATES = (("backlash", 0.25), ("encoder_error", 0.5), ("encoder_noise", 0.34))


def population(frame, base: str):
    """Counts over the conditions of one base profile with no effect changed (every trajectory, one
    execution each, every interval): PD at the visited configurations, PD over Θ, the two mismatches,
    and where the uniform draw's violations lie (`counts`)."""
    part = frame[(frame["base"] == base) & (frame["effect"] == twin_effects.NO_EFFECT) & frame["failure"].isna()]
    part = part.sort_values("seed").drop_duplicates(["trajectory", "ts_ms"])  # one execution per trajectory
    return {**counts(part), "failed": int(((frame["base"] == base) & (frame["effect"] == twin_effects.NO_EFFECT) & frame["failure"].notna()).sum())}


def audited_condition_records(records: list[dict]):
    """The main job's OLS/SDP condition records (results/conditions) with each OLS estimate audited over
    Θ (seed 1, the screen): the population of the data set the build ran on."""
    import pandas as pd

    context = _context()
    rows = []
    for record in records:
        if record.get("ols") is None:
            continue
        found = screened.screened_audit(np.asarray(record["ols"]), context.trig, context.model)
        rows.append({"trajectory": record["trajectory"], "ts_ms": round(record["ts"] * 1e3), "run": record["run"],
                     "pd_visited": bool(record["pd_visited"]), "pd_theta": found.passed, "lambda_theta": found.lambda_min,
                     "violations_uniform": found.violations.get(audit_stage.UNIFORM, 0),
                     "violations_uniform_in_folded": int(np.count_nonzero(_in_box(found.uniform_violating_poses, audit_stage.folded_region())))})
    frame = pd.DataFrame(rows)
    return frame[frame["run"] == 1] if len(frame) else frame


def counts(frame) -> dict:
    """Population counts of a frame with pd_visited, pd_theta and the uniform violations (see `population`)."""
    visited, theta = frame["pd_visited"].astype(bool), frame["pd_theta"].astype(bool)
    return {"conditions": int(len(frame)), "pd_visited": int(visited.sum()), "non_pd_visited": int((~visited).sum()),
            "pd_theta": int(theta.sum()), "pd_visited_not_theta": int((visited & ~theta).sum()),
            "pd_theta_not_visited": int((theta & ~visited).sum()), "violations_uniform": int(frame["violations_uniform"].sum()),
            "violations_uniform_in_folded": int(frame["violations_uniform_in_folded"].fillna(0).sum())}


def effects_table():
    """The effects with today's value, the value that removes them, the study's nominal and range, the source."""
    import pandas as pd

    return pd.DataFrame([
        {"effect": e.name, "kind": "candidate (issue 14)" if e.candidate else "the twin had it", "unit": e.unit,
         "today": _number(e.default), "off": _number(e.off), "nominal": _number(e.nominal),
         "admitted": "on/off" if e.discrete else f"{_number(e.low)} to {_number(e.high)}", "source": e.source}
        for e in twin_effects.EFFECTS
    ]).set_index("effect")


# ---------------------------------------------------------------- figures (every title names its data)

INTERVALS_MS = tuple(round(ts * 1e3) for ts in INTERVALS_S)
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
        verdict = "PD" if row.non_pd_theta == 0 else (f"non-PD {row.non_pd_theta}/{row.seeds}" if row.seeds > 1 else "non-PD")
        text[i][j] = verdict + (" †" if row.pd_data_not_theta else "")
    finite = grid[np.isfinite(grid)]
    low, high = (min(float(finite.min()), -0.5), max(float(finite.max()), 0.5)) if finite.size else (-1.0, 1.0)
    image = ax.imshow(grid, cmap="RdBu", norm=TwoSlopeNorm(vmin=low, vcenter=0.0, vmax=high), aspect="auto")
    for i in range(len(order)):
        for j in range(len(INTERVALS_MS)):
            if text[i][j]:
                ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7, color="k")
    ax.set_xticks(range(len(INTERVALS_MS)), [f"{ms} ms" for ms in INTERVALS_MS])
    ax.set_yticks(range(len(order)), order, fontsize=7.5)
    ax.set_title(f"{DATA_NOTE}: {trajectory}'s OLS estimate over Θ by rung and interval\n"
                 "(colour: smallest λmin over the seeds, 10⁻³ kg·m²; †: PD at the visited configurations, not over Θ)", fontsize=9)
    return image


def magnitude_series(frame, effect: str, trajectory: str = "AG02"):
    """Margin over Θ against the magnitude of one effect changed alone on today's twin (today's value
    from the "default" rung), per interval and seed."""
    import pandas as pd

    part = frame[(frame["trajectory"] == trajectory) & frame["failure"].isna() & (frame["base"] == "default")]
    today = part[part["effect"] == twin_effects.NO_EFFECT].assign(value=twin_effects.BY_NAME[effect].default)
    changed = part[part["effect"] == effect].assign(value=lambda f: f["magnitude"].astype(float))
    return pd.concat([changed, today]).sort_values("value")[["value", "ts_ms", "seed", "lambda_theta", "pd_visited", "pd_theta"]]


def plot_magnitudes(frame, effects: list[str], axes, trajectory: str = "AG02"):
    colors = dict(zip(INTERVALS_MS, ("C0", "C1", "C2", "C3")))
    for ax, effect in zip(np.ravel(axes), effects):
        series = magnitude_series(frame, effect, trajectory)
        for (ts, seed), part in series.groupby(["ts_ms", "seed"]):
            ax.plot(part["value"], part["lambda_theta"] * 1e3, marker="o" if seed == series["seed"].min() else "s", ms=3.5,
                    lw=1.0, color=colors.get(ts, "k"), label=f"{ts} ms" if seed == series["seed"].min() else None)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.axvline(twin_effects.BY_NAME[effect].default, color="0.6", lw=0.8, ls=":")
        ax.set_xlabel(f"{effect} ({twin_effects.BY_NAME[effect].unit})", fontsize=8)
        ax.set_ylabel("λmin over Θ (10⁻³ kg·m²)", fontsize=8)
        ax.tick_params(labelsize=7.5)
    np.ravel(axes)[0].legend(fontsize=7, title="interval (○ seed 1, □ seed 2)", title_fontsize=7)


def plot_mechanism(point: dict, names: list[str], truth, axes, title: str):
    """Left: each base parameter's exact share of λmin − vᵀM(θ*; truth)v at the worst pose (the most
    negative shares, recomputed from the stored estimate); right: the worst eigenvector by joint."""
    shares = rayleigh_shares(np.asarray(point["estimate"]), np.asarray(truth), np.radians(point["worst_pose_deg"]))
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
