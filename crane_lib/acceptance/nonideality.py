"""The nonideality study's computation: which effect of a real arm makes an identified M(θ)
indefinite away from the data, and how much of it does it take (chapter "When the audit fails";
its tables, figures and sentences are `reporting.nonideality`).

A study point is one condition of `papermill_params/nonideality_<profile>.csv`: a base twin
profile (twin/effects.py: "default" = today's twin, "ideal" = every effect off, "field"), the
effects changed on top of it with their magnitudes, a trajectory and a seed. The point records
the trajectory once on the twin so configured, preprocesses it at 10, 20, 40 and 80 ms, and for
each interval computes

* OLS on the 39-parameter model and the routing test (PD at the configurations the record
  visits, identification.condition without the projection),
* the dense audit over Θ (seed 1) through the Cholesky screen (acceptance/screen.py): verdict,
  margin λmin, worst pose and component, violations per component,
* the mechanism at the worst pose θ*: with v the eigenvector of λmin of M(θ*; β̂) and M linear
  in β, vᵀM(θ*; β̂)v − vᵀM(θ*; β)v = Σ_k g_k (β̂_k − β_k), g_k = vᵀ B_k(θ*) v, so each base
  parameter's share of the drop from the truth's Rayleigh quotient to λmin is exact
  (`rayleigh_shares`),
* the parameter error against the twin's truth (per parameter, and in OLS standard errors).

A condition may also ask for Algorithm 1 on its record at 40 ms (`accept`): identify, refine
(fast route), audit on seeds 1-5, rescue if needed, re-audit (acceptance.accepted.accept_recording).

`write_condition` computes one condition (`run_condition`) and writes its JSON record under
RESULTS_DIR/nonideality/<profile>/; the sweep runs it once per row of the conditions file, every
row checked before anything is recorded (`read_study_conditions`).
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
from crane_lib.acceptance import folded, screen
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
        """The twin's effects for this condition: the base profile with the changes applied."""
        return twin_effects.profile(self.base).changed(**dict(self.changes))

    @property
    def effect(self) -> str:
        """The changed effects' names joined by "+" ("none" when nothing is changed)."""
        return "+".join(n for n, _ in self.changes) or twin_effects.NO_EFFECT

    @property
    def magnitude(self) -> str:
        """The changed effects' magnitudes joined by "+" ("0" when nothing is changed)."""
        return "+".join(number_text(v) for _, v in self.changes) or "0"

    def label(self) -> str:
        """The condition's name in text, e.g. "default + backlash 0.25", "ideal"."""
        return " + ".join([self.base] + [f"{n} {number_text(v)}" for n, v in self.changes])

    def parameters(self) -> dict:
        """The condition notebook's papermill parameters for this condition."""
        return {
            "base": self.base,
            "effect": self.effect,
            "magnitude": self.magnitude,
            "trajectory": self.trajectory,
            "seed": self.seed,
            "accept": self.accept,
        }

    def name(self) -> str:
        """The condition's file-name stem (its record's name)."""
        name = f"{self.trajectory}_s{self.seed}_{self.base}_{self.effect}-{self.magnitude}"
        return name.replace("+", "_").replace("/", "-")


def number_text(value: float) -> str:
    """A magnitude as labels and record names write it: "inf", else the shortest %g form."""
    return "inf" if math.isinf(value) else f"{value:g}"


def parse_condition(
    base, effect, magnitude, trajectory, seed, accept="False", where: str = "study condition"
) -> StudyCondition:
    """One condition from its fields (strings or values); an InputError names `where` and what
    is allowed.

    `effect` is "none" or effect names joined by "+", `magnitude` as many numbers joined by "+"
    (ignored for "none", where it must be 0)."""
    base = str(base).strip()
    if base not in twin_effects.PROFILES:
        raise InputError(
            where, f"base profile {base!r}", f"one of {', '.join(twin_effects.PROFILES)}"
        )
    effect, magnitude = str(effect).strip(), str(magnitude).strip()
    changes: list[tuple[str, float]] = []
    if effect != twin_effects.NO_EFFECT:
        names, values = effect.split("+"), magnitude.split("+")
        if len(names) != len(values):
            raise InputError(
                where,
                f"{len(names)} effects ({effect}) but {len(values)} magnitudes ({magnitude})",
                "one magnitude per effect, joined by '+' like the effects",
            )
        for name, value in zip(names, values):
            changes.append(
                (name.strip(), twin_effects.check_value(name.strip(), value.strip(), where))
            )
        if len({n for n, _ in changes}) != len(changes):
            raise InputError(where, f"effect listed twice in {effect}", "each effect once")
    elif magnitude not in ("0", "0.0"):
        raise InputError(where, f"magnitude {magnitude!r} with effect 'none'", "0")
    trajectory = str(trajectory).strip()
    if not (TRAJECTORY_DIR / f"{trajectory}.txt").is_file():
        raise InputError(
            where,
            f"no command file {TRAJECTORY_DIR / (trajectory + '.txt')}",
            "a trajectory in trajectories/",
        )
    try:
        seed = int(str(seed).strip())
    except ValueError:
        raise InputError(
            where, f"seed {seed!r} is not an integer", "a non-negative integer"
        ) from None
    if seed < 0:
        raise InputError(where, f"seed {seed}", "a non-negative integer")
    flag = str(accept).strip()
    if flag not in ("True", "False"):
        raise InputError(where, f"accept {flag!r}", "True or False")
    condition = StudyCondition(base, tuple(changes), trajectory, seed, flag == "True")
    if condition.accept and condition.base == "ideal":
        raise InputError(
            where,
            "Algorithm 1 on the ideal twin",
            "accept = True only on the default or field profile",
        )
    try:
        twin_effects.realization(condition.effects, *_unit())
    except InputError as err:  # a combination the plant cannot take (backlash, rigid drive)
        raise InputError(where, err.problem, err.expected) from None
    return condition


@lru_cache(maxsize=1)
def _unit():
    """The twin unit's truth and drive settings (read once per process)."""
    return load_truth(), load_plant_settings()


def study_conditions_path(profile: str) -> Path:
    """The conditions file of the study of `profile`."""
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
            raise InputError(
                where, f"the condition of {seen[condition.name()]} again", "each condition once"
            )
        seen[condition.name()] = where
        conditions.append(condition)
    return conditions


def record_path(condition: StudyCondition, profile: str) -> Path:
    """Where the study of `profile` writes the record of `condition`."""
    return STUDY_DIR / profile / f"{condition.name()}.json"


# ---------------------------------------------------------------- one point


def rayleigh_shares(beta_hat, beta_true, pose, model: DynamicModel | None = None) -> dict:
    """The exact decomposition of λmin(M(θ*; β̂)) against the truth along its eigenvector v.

    Returns v (7,), λmin, the truth's Rayleigh quotient vᵀM(θ*; β)v and, per base parameter,
    g_k = vᵀ B_k v (the sensitivity) and the share g_k (β̂_k − β_k); the shares sum to
    λmin − truth's quotient."""
    model = shared_model("reduced") if model is None else model
    beta_hat, beta_true = model.parameter_vector(beta_hat), model.parameter_vector(beta_true)
    pose = np.asarray(pose, dtype=float).reshape(1, -1)
    arm = slice(0, N_LINKS)
    values, vectors = np.linalg.eigh(model.inertia_matrix(pose, beta_hat)[0, arm, arm])
    # sign: largest entry positive
    v = vectors[:, 0] * (1.0 if vectors[np.argmax(np.abs(vectors[:, 0])), 0] > 0 else -1.0)
    g = np.empty(model.n_parameters)
    for k in range(model.n_parameters):
        unit = np.zeros(model.n_parameters)
        unit[k] = 1.0
        g[k] = v @ model.inertia_matrix(pose, unit)[0, arm, arm] @ v
    truth_quotient = float(v @ model.inertia_matrix(pose, beta_true)[0, arm, arm] @ v)
    return {
        "vector": v,
        "lambda_min": float(values[0]),
        "truth_quotient": truth_quotient,
        "sensitivity": g,
        "shares": g * (beta_hat - beta_true),
    }


@dataclass
class StudyContext:
    """What every study point of a process scores against, built once (`study_context`)."""

    model: DynamicModel
    truth: np.ndarray
    poses: screen.PreparedPoses  # the dense audit's poses (seed 1), prepared once for all


_CONTEXT: StudyContext | None = None


def study_context() -> StudyContext:
    """The reduced model, the twin's true base parameters and the audit's prepared poses."""
    global _CONTEXT
    if _CONTEXT is None:
        model = shared_model("reduced")
        poses = screen.prepare(audit_stage.audit_poses(AUDIT_SEED), model)
        _CONTEXT = StudyContext(model, model.base_from_standard(load_truth()).values, poses)
    return _CONTEXT


def truth_margin(context: StudyContext) -> float:
    """λmin of the twin's true M over the study's audit poses (kg·m²): where every estimate
    starts from."""
    return screen.screened_audit(context.truth, context.poses, context.model).lambda_min


def uniform_violations_in_folded(
    found: screen.ScreenedAudit, prepared: screen.PreparedPoses
) -> int:
    """How many of the uniform draw's violating poses lie in the folded-arm region (Sec. VI-E)."""
    return folded.count(prepared.pose_set, found.violating_indices).in_region


def _interval_result(bundle, condition: StudyCondition, context: StudyContext) -> dict:
    model, truth = context.model, context.truth
    result = identify_condition(bundle, condition.trajectory, model, project=False)
    out = {"ts": float(bundle.ts), "n_samples": int(bundle.n_samples)}
    if result.ols is None:
        out["failure"] = result.failure
        return out
    beta = result.ols.parameters.values
    se = result.ols.parameters.std_errors
    found = screen.screened_audit(beta, context.poses, model)
    shares = rayleigh_shares(beta, truth, found.worst_pose, model)
    # the most negative shares: what pulled λmin down
    order = np.argsort(shares["shares"])[:TOP_SHARES]
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
        violations_uniform_in_folded=uniform_violations_in_folded(found, context.poses),
        pose_counts=context.poses.pose_set.counts(),
        screen_exact_poses=found.n_exact,
        eigenvector=shares["vector"].tolist(),
        truth_quotient=shares["truth_quotient"],
        # most negative first
        shares=[[model.names[k], float(shares["shares"][k])] for k in order],
        share_sum=float(shares["shares"].sum()),
        estimate=beta.tolist(),
        std_errors=se.tolist(),
        error_in_std_errors_rms=float(np.sqrt(np.mean((error / se) ** 2))),
        relative_error_median=float(np.median(np.abs(error) / np.maximum(np.abs(truth), 1e-12))),
    )
    return out


def run_condition(condition: StudyCondition, intervals=INTERVALS_S) -> tuple[dict, dict]:
    """Record, preprocess, identify and audit one condition at every interval: (the record to
    write, the wall time of its stages, which is kept out of the record so that reruns are
    byte-identical)."""
    context = study_context()
    started = time.perf_counter()
    samples, metadata = twin.record(
        TRAJECTORY_DIR / f"{condition.trajectory}.txt", condition.seed, effects=condition.effects
    )
    recorded = time.perf_counter()
    log = RawLog(samples, metadata)
    bundles = preprocessing.preprocess_all(log, intervals)
    recording = (
        "realized_motion_s",
        "record_duration_s",
        "in_position_timeouts",
        "kt_true_this_run",
    )
    record = {
        "condition": condition.parameters(),
        "label": condition.label(),
        "name": condition.name(),
        "profile": condition.effects.describe(),
        "recording": {k: metadata[k] for k in recording},
        "clamp_share_percent": float(100.0 * samples[:, group("clamped")].any(axis=1).mean()),
        "samples_sha256": fingerprint.digest(samples.tobytes()),
        "truth": context.truth.tolist(),
        "names": list(context.model.names),
        "intervals": [_interval_result(bundles[float(ts)], condition, context) for ts in intervals],
    }
    timing = {
        "record_s": recorded - started,
        "identify_and_audit_s": time.perf_counter() - recorded,
    }
    if condition.accept:
        record["accepted"] = _accept(log, condition)
    return record, timing


def _accept(log: RawLog, condition: StudyCondition) -> dict:
    from crane_lib.acceptance.accepted import accept_recording

    accepted = accept_recording(log, condition.trajectory, ACCEPT_INTERVAL_S, refine="fast")
    first, final = accepted.first_audits, accepted.final_audits
    summary = lambda audits: [  # noqa: E731
        {
            "seed": a.seed,
            "passed": a.passed,
            "lambda_min": a.lambda_min,
            "violations": a.violations,
            "worst_pose_deg": np.degrees(a.worst_pose).tolist(),
            "worst_component": a.worst_component,
        }
        for a in audits
    ]
    scalar = (int, float, str, bool)
    return {
        "ts": ACCEPT_INTERVAL_S,
        "route": accepted.condition.route,
        "refinement": {
            k: v for k, v in accepted.refinement.items() if isinstance(v, scalar) or v is None
        },
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
    """Compute one condition and write its record: (the record's path, the stages' wall time)."""
    record, timing = run_condition(condition)
    return write_json_record(record_path(condition, profile), record), timing


def read_study(profile: str) -> list[dict]:
    """Every record the study of `profile` wrote (file-name order)."""
    return read_json_records(STUDY_DIR / profile)


def twin_inputs() -> list[Path]:
    """The data files a study point reads besides crane_lib's source (for the sweep's cache key)."""
    from crane_lib.model.controller import REALIZATION_CONSTANTS_CSV

    return [TWIN_TRUTH_CSV, TWIN_PLANT_CSV, REALIZATION_CONSTANTS_CSV]
