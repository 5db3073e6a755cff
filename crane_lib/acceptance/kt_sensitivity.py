"""What an error of the torque constants does to the accepted condition's estimate (paper Sec.
VII-D, Appendix E-C).

The torque record is the commanded current times the logged constant Kt (catalogue x 1.3, never
calibrated against a torque). If the true constant of axis j is (1 + e_j) times the logged one,
the torque actually delivered is the logged torque of that axis times k_j = 1 + e_j, at every
sample. A draw therefore multiplies each axis's torque column by its k_j and refits. Scaling the
bundle's torque equals scaling the raw log's: preprocessing is linear in the torque (linear
interpolation, a zero-phase filter, decimation).

What a draw costs, and what it reuses:

* the regressor W of the condition does not depend on the torque, so W and its QR factors are
  computed once per study; a draw is one product Q^T (k * y) and one triangular solve, exactly
  the OLS of `identification.ols` on the scaled record;
* the routing test (lambda_min of M at the visited configurations) and the dense all-pose audit
  over Theta (seed 1, 221,875 poses) run per draw; the audit through `acceptance.screen`, which
  gives the audit's exact verdict and margin while computing eigenvalues only where they can
  matter, probing first at the nominal estimate's worst poses;
* held-out records V01-V03: their regressors are computed once; the same factors scale their
  torque too (one arm, one set of constants logs every record), and the mean normalized error
  (MNE) is compared with the unperturbed estimate's. The MNE against the unscaled held-out
  torque is kept beside it.

A uniform error (every k_j = c) scales the least-squares solution by c exactly, M(theta; c beta) =
c M(theta; beta) keeps the sign of every eigenvalue, and predicted and measured held-out torque
scale alike, so the MNE is unchanged; `uniform_scaling` shows it numerically.

Beyond the paper: the twin's truth is known, so each draw's estimate is also compared with the
true base parameters. The distance is taken in torque on the held-out motions, over the
rigid-body columns only (the viscous coefficients FV are left out: on the twin they absorb the
Coulomb and load-dependent gear friction the 39-parameter model lacks, so their "true" viscous
value is not what any fit should return); the distance over all columns is kept beside it. The
twin's own drive settings (`data/twin_plant.csv`) give the corrections to try: its true Kt, and
its true Kt times the gear train's driving efficiency (the share of the motor's torque that
reaches the link when the motor drives it).

Every draw takes an explicit seed: k = 1 + default_rng(seed).uniform(-h, h, 8) with h from the
paper's range (`kt_perturbation_range`). A draw that fails is a record with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.linalg

from crane_lib import fingerprint
from crane_lib.acceptance import audit, screen
from crane_lib.acceptance.reproducibility import AUDIT_SEED, HELDOUT, HELDOUT_TS
from crane_lib.constants import N_AXES
from crane_lib.errors import InputError
from crane_lib.identification.condition import ROUTE_DIRECT, ROUTE_PROJECTED, condition_bundle
from crane_lib.identification.ols import IdentificationError, stack
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.paper_numbers import paper
from crane_lib.paths import RESULTS_DIR, recording_path
from crane_lib.records import read_json_records, write_json_record
from crane_lib.twin.truth import load_plant_settings, load_truth

KT_DIR = RESULTS_DIR / "kt_draws"
TRUE_KT, TRUE_KT_EFFICIENCY = (
    "the twin's true Kt",
    "true Kt × gear efficiency",
)  # the twin's corrections, by label
PROBE_POSES = 64  # the nominal estimate's worst poses, probed first by every draw's audit


def half_width() -> float:
    """The draws' half-width as a fraction (paper: independent per-axis errors within +-10 %)."""
    number = paper("kt_perturbation_range")
    if number.value_hi is None or not np.isclose(-number.value, number.value_hi):
        raise ValueError(f"kt_perturbation_range {number.text()}: expected a symmetric range")
    return number.value_hi / 100.0


def draw_factors(seed: int, width: float | None = None) -> np.ndarray:
    """The per-axis factors k_j = 1 + U(-width, +width) of draw `seed` (8 axes, hand included)."""
    width = half_width() if width is None else float(width)
    return 1.0 + np.random.default_rng(int(seed)).uniform(-width, width, N_AXES)


def twin_kt_factors() -> np.ndarray:
    """kt_true / kt_logged of the twin's eight drives: by how much the logged torque misstates the
    torque
    each motor delivers (the gear train then takes its share before the link,
    `twin_corrections`)."""
    settings = load_plant_settings()
    return np.asarray(settings.kt_true, dtype=float) / np.asarray(settings.kt_logged, dtype=float)


def twin_corrections() -> dict[str, np.ndarray]:
    """Factors from the twin's drive settings: its true Kt, and its true Kt times the driving
    efficiency
    of each arm axis's gear train (the hand has no gear loss in the twin)."""
    settings = load_plant_settings()
    efficiency = np.ones(N_AXES)
    efficiency[: len(settings.efficiency_driving)] = np.asarray(
        settings.efficiency_driving, dtype=float
    )
    true_kt = twin_kt_factors()
    return {TRUE_KT: true_kt, TRUE_KT_EFFICIENCY: true_kt * efficiency}


def check_factors(factors) -> np.ndarray:
    """The per-axis Kt factors as an array, refused unless finite, positive and one per axis."""
    factors = np.asarray(factors, dtype=float)
    if factors.shape != (N_AXES,):
        raise InputError(
            "Kt factors", f"shape {factors.shape}", f"({N_AXES},), one factor per axis"
        )
    if not np.all(np.isfinite(factors)) or np.any(factors <= 0.0):
        axis = int(np.argmax(~np.isfinite(factors) | (factors <= 0.0)))
        raise InputError(
            f"Kt factor of axis {axis + 1}", f"{factors[axis]!r}", "a finite positive number"
        )
    return factors


@dataclass
class HeldOut:
    name: str
    regressor: np.ndarray  # (n, 8, p)
    tau: np.ndarray  # (n, 8), the logged torque


@dataclass
class KtStudy:
    """One condition prepared for many draws: its regressor's QR factors, the held-out regressors,
    the audit's pose set, the truth, and the unperturbed result `nominal`."""

    trajectory: str
    ts: float
    run: int
    names: list[str]
    model: DynamicModel
    w_all: np.ndarray  # (8n, p)
    y: np.ndarray  # (8n,), logged torque stacked sample by sample
    q_factor: np.ndarray
    r_factor: np.ndarray
    theta: np.ndarray  # (n, 8) visited configurations (the routing test)
    heldout: list[HeldOut]
    poses: screen.PreparedPoses
    truth: np.ndarray  # (p,) the twin's true base parameters
    rigid: np.ndarray  # (p,) bool, the columns that are not viscous friction (the truth distance's)
    provenance: dict = field(default_factory=dict)
    nominal: dict | None = None
    probes: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """The number of samples of the bundle."""
        return len(self.theta)


def kt_study(
    trajectory: str = "AG02",
    ts: float = 0.040,
    run: int = 1,
    model: DynamicModel | None = None,
    audit_seed: int = AUDIT_SEED,
) -> KtStudy:
    """Prepare the study of one recorded condition (default: the accepted condition, AG02 at 40 ms,
    execution 1) with the held-out records V01-V03 and the dense audit's pose set."""
    model = shared_model("reduced") if model is None else model
    study = prepare_study(
        condition_bundle(trajectory, ts, run),
        {name: condition_bundle(name, HELDOUT_TS, 1) for name in HELDOUT},
        audit.audit_poses(audit_seed),
        model.base_from_standard(load_truth()).values,
        model,
        trajectory=trajectory,
        ts=ts,
        run=run,
    )
    study.provenance.update(
        log_sha256=fingerprint.file_digest(recording_path(trajectory, run)), audit_seed=audit_seed
    )
    return study


def prepare_study(
    bundle,
    heldout: dict,
    pose_set: audit.PoseSet,
    truth,
    model: DynamicModel | None = None,
    trajectory: str = "",
    ts: float | None = None,
    run: int = 1,
) -> KtStudy:
    """The study of one bundle: regressor and QR once, held-out regressors once, the unperturbed
    estimate audited over `pose_set` (its worst poses become every draw's probes)."""
    model = shared_model("reduced") if model is None else model
    w_all, y = stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau)
    if w_all.shape[0] <= w_all.shape[1]:
        raise IdentificationError(
            f"{w_all.shape[0]} regressor rows for {w_all.shape[1]} parameters: record too short"
        )
    q_factor, r_factor = scipy.linalg.qr(w_all, mode="economic")
    held = [
        HeldOut(name, model.regressor(b.theta, b.dtheta, b.ddtheta), np.asarray(b.tau, dtype=float))
        for name, b in heldout.items()
    ]
    study = KtStudy(
        trajectory=trajectory,
        ts=float(bundle.ts if ts is None else ts),
        run=int(run),
        names=list(model.names),
        model=model,
        w_all=w_all,
        y=y,
        q_factor=q_factor,
        r_factor=r_factor,
        theta=np.asarray(bundle.theta),
        heldout=held,
        poses=screen.prepare(pose_set, model),
        truth=np.asarray(truth, dtype=float),
        rigid=np.array([not name.startswith("FV") for name in model.names]),
    )
    study.nominal = evaluate(study, np.ones(N_AXES), label="nominal")
    lam = model.arm_min_eigenvalue(pose_set.poses, study.nominal["ols"])
    study.probes = np.argsort(lam, kind="stable")[:PROBE_POSES]
    study.nominal["audit"] = screen.screened_audit(
        study.nominal["ols"], study.poses, model, study.probes
    ).to_dict()
    return study


def _mne(predicted: np.ndarray, measured: np.ndarray) -> float:
    per_axis = np.sqrt(np.mean((measured - predicted) ** 2, axis=0))
    return float(np.mean(per_axis / np.ptp(measured, axis=0)))


def ols_scaled(study: KtStudy, factors) -> np.ndarray:
    """The OLS estimate on the record with each axis's torque scaled by its factor (QR reused)."""
    factors = check_factors(factors)
    scaled = study.y * np.tile(factors, study.n_samples)
    beta = scipy.linalg.solve_triangular(study.r_factor, study.q_factor.T @ scaled)
    if not np.all(np.isfinite(beta)):
        raise IdentificationError("the scaled record gives a non-finite estimate")
    return beta


def evaluate(study: KtStudy, factors, label: str | int = "draw") -> dict:
    """One draw: OLS on the scaled record, routing test and route, the dense audit over Theta (after
    the study is prepared), held-out MNE and RMSE, and the distance to the twin's truth."""
    model = study.model
    factors = check_factors(factors)
    beta = ols_scaled(study, factors)
    residual = study.y * np.tile(factors, study.n_samples) - study.w_all @ beta
    lam_visited = float(model.arm_min_eigenvalue(study.theta, beta).min())
    mne, mne_unscaled, squared, truth_sq, rigid_sq, count = [], [], 0.0, 0.0, 0.0, 0
    difference = beta - study.truth
    for h in study.heldout:
        predicted = h.regressor @ beta
        measured = h.tau * factors
        mne.append(_mne(predicted, measured))
        mne_unscaled.append(_mne(predicted, h.tau))
        squared += float(np.sum((measured - predicted) ** 2))
        truth_sq += float(np.sum((h.regressor @ difference) ** 2))
        rigid_sq += float(np.sum((h.regressor @ np.where(study.rigid, difference, 0.0)) ** 2))
        count += predicted.size
    record = {
        "label": label,
        "trajectory": study.trajectory,
        "ts": study.ts,
        "run": study.run,
        "factors": factors.tolist(),
        "names": study.names,
        "ols": beta.tolist(),
        "residual_rms": float(np.sqrt(np.mean(residual**2))),
        "lambda_min_visited": lam_visited,
        "route": ROUTE_DIRECT if lam_visited > 0 else ROUTE_PROJECTED,
        "heldout_mne": float(np.mean(mne)),
        "heldout_mne_unscaled": float(np.mean(mne_unscaled)),
        "heldout_rmse": float(np.sqrt(squared / count)),
        "truth_distance": float(np.sqrt(rigid_sq / count)),
        "truth_distance_all_columns": float(np.sqrt(truth_sq / count)),
        "provenance": dict(study.provenance),
    }
    if study.probes is not None:
        record["audit"] = screen.screened_audit(beta, study.poses, model, study.probes).to_dict()
    if study.nominal is not None:
        nominal = np.array(study.nominal["ols"])
        change = np.abs(beta - nominal) / np.abs(nominal)
        record["relative_change"] = change.tolist()
        record["median_relative_change"] = float(np.median(change))
        record["mne_change"] = record["heldout_mne"] / study.nominal["heldout_mne"] - 1.0
        record["truth_distance_change"] = (
            record["truth_distance"] / study.nominal["truth_distance"] - 1.0
        )
        if "audit" in record and "audit" in study.nominal:
            record["verdict_flipped"] = (
                record["audit"]["passed"] != study.nominal["audit"]["passed"]
            )
        record["route_changed"] = record["route"] != study.nominal["route"]
    return record


def uniform_scaling(study: KtStudy, factor: float) -> dict:
    """The exact argument, numerically: every axis scaled by `factor`. Returns the largest deviation
    of
    the estimate from factor x the unperturbed one (relative to the largest entry: rounding, not a
    parameter near zero, sets it), the ratios of the routing and audit margins, and whether route,
    verdict and MNE stay as they were."""
    scaled = evaluate(study, np.full(N_AXES, float(factor)), label=f"uniform x{factor:g}")
    nominal = study.nominal
    expected = float(factor) * np.array(nominal["ols"])
    return {
        "factor": float(factor),
        "max |beta - factor x beta_nominal| / max |factor x beta_nominal|": float(
            np.max(np.abs(np.array(scaled["ols"]) - expected)) / np.max(np.abs(expected))
        ),
        "routing lambda_min ratio": scaled["lambda_min_visited"] / nominal["lambda_min_visited"],
        "audit lambda_min ratio": scaled["audit"]["lambda_min"] / nominal["audit"]["lambda_min"],
        "route unchanged": scaled["route"] == nominal["route"],
        "verdict unchanged": scaled["audit"]["passed"] == nominal["audit"]["passed"],
        "held-out MNE change": scaled["mne_change"],
        "scaled": scaled,
    }


# ----------------------------------------------------------------------------- the sweep's records


def study_directory(trajectory: str, ts: float, run: int) -> Path:
    """The folder of one condition's Kt draws."""
    return KT_DIR / f"{trajectory}_run{int(run)}_{round(ts * 1e3):02d}ms"


def draw_record_path(trajectory: str, ts: float, run: int, seed: int) -> Path:
    """The record of one Kt draw of one condition."""
    return study_directory(trajectory, ts, run) / f"draw_{int(seed):05d}.json"


def run_draws(study: KtStudy, seeds, directory=None, progress: bool = True) -> list[dict]:
    """Evaluate and write one record per seed; a draw that fails is written with its reason and the
    others go on. Returns the records in seed order."""
    from tqdm.auto import tqdm

    directory = (
        study_directory(study.trajectory, study.ts, study.run)
        if directory is None
        else Path(directory)
    )
    out = []
    for seed in tqdm(list(seeds), desc="Kt draws", unit="draw", disable=not progress):
        try:
            record = evaluate(study, draw_factors(seed), label=int(seed))
        except (IdentificationError, InputError, np.linalg.LinAlgError, ValueError) as error:
            record = {
                "label": int(seed),
                "trajectory": study.trajectory,
                "ts": study.ts,
                "run": study.run,
                "failure": f"{type(error).__name__}: {error}",
            }
        record["seed"] = int(seed)
        write_json_record(directory / f"draw_{int(seed):05d}.json", record)
        out.append(record)
    return out


def load_draws(trajectory: str, ts: float, run: int, seeds) -> tuple[list[dict], list[int]]:
    """The records of `seeds` (in seed order) and the seeds that have none."""
    directory = study_directory(trajectory, ts, run)
    found = {int(r["seed"]): r for r in read_json_records(directory, "draw_*.json")}
    seeds = [int(s) for s in seeds]
    return [found[s] for s in seeds if s in found], [s for s in seeds if s not in found]


def seeds_of(conditions: list[dict]) -> list[int]:
    """Every draw seed of a conditions file whose rows are blocks (first_seed, n_draws)."""
    seeds = []
    for c in conditions:
        first, count = int(c["first_seed"]), int(c["n_draws"])
        if count < 1:
            raise InputError(
                f"conditions block at seed {first}", f"n_draws {count}", "at least one draw"
            )
        seeds.extend(range(first, first + count))
    if len(set(seeds)) != len(seeds):
        raise InputError(
            "Kt draw conditions", "a seed appears in two blocks", "disjoint blocks of seeds"
        )
    return seeds


def summarize(records: list[dict], nominal: dict) -> dict:
    """The paper's four measures over the draws that did not fail: the median parameter change
    (pooled
    over parameters and draws), the largest held-out MNE change (absolute, relative to the nominal),
    verdict flips of the OLS estimate over Theta, and the routes; failures listed with their
    reason."""
    good = [r for r in records if "failure" not in r]
    failed = [(r["seed"], r["failure"]) for r in records if "failure" in r]
    changes = (
        np.array([r["relative_change"] for r in good])
        if good
        else np.zeros((0, len(nominal["ols"])))
    )
    routes = {}
    for r in good:
        routes[r["route"]] = routes.get(r["route"], 0) + 1
    return {
        "draws": len(good),
        "failed": failed,
        "median_parameter_change": float(np.median(changes)) if good else np.nan,
        "median_of_draw_medians": float(np.median([r["median_relative_change"] for r in good]))
        if good
        else np.nan,
        "mne_change_max": float(np.max(np.abs([r["mne_change"] for r in good])))
        if good
        else np.nan,
        # the same against held-out torque left as logged (register R-13)
        "mne_unscaled_change_max": float(
            np.max(
                np.abs(
                    [
                        r["heldout_mne_unscaled"] / nominal["heldout_mne_unscaled"] - 1.0
                        for r in good
                    ]
                )
            )
        )
        if good
        else np.nan,
        "verdict_flips": int(sum(bool(r.get("verdict_flipped")) for r in good)),
        "route_changes": int(sum(bool(r["route_changed"]) for r in good)),
        "routes": routes,
        "toward_truth": int(sum(r["truth_distance_change"] < 0 for r in good)),
        "nominal_passed": nominal["audit"]["passed"],
        "nominal_route": nominal["route"],
    }


def closeness_to(records: list[dict], reference) -> np.ndarray:
    """Per draw: how much closer its factors are to `reference` (e.g. the twin's true Kt ratios)
    than
    the logged constants are, (|k - ref| - |1 - ref|) / |1 - ref|; negative = closer."""
    reference = check_factors(reference)
    base = float(np.linalg.norm(1.0 - reference))
    return np.array(
        [(np.linalg.norm(np.array(r["factors"]) - reference) - base) / base for r in records]
    )


def axis_sensitivity(records: list[dict], key: str = "truth_distance_change") -> np.ndarray:
    """Least-squares slopes g (8,) of `key` on the per-axis errors, key ~ c + sum_j g_j (k_j - 1):
    which
    axes' errors move the quantity, and in which direction."""
    errors = np.array([np.array(r["factors"]) - 1.0 for r in records])
    values = np.array([r[key] for r in records])
    design = np.column_stack([np.ones(len(errors)), errors])
    if len(records) <= design.shape[1]:
        raise ValueError(
            f"{len(records)} draws for {design.shape[1]} coefficients: too few to fit per-axis "
            "slopes"
        )
    coefficients, *_ = np.linalg.lstsq(design, values, rcond=None)
    return coefficients[1:]
