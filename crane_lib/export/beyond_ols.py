"""The records of the chapter "Beyond OLS": OLS, error-covariance WLS, dual-metric WLS and
dual-metric WLS with the rescue's Theta_r constraints, side by side on one condition, and the
invariance test (the chapter's tables and figure are `reporting.chapters.beyond_ols`).

`compare_condition` fits the four estimators on one recording's bundle and scores each the way
the book scores every model: pooled held-out RMSE and mean MNE over the executions of V01-V03
(`identification.metrics`), the dense audit over Theta with seed 1 (`acceptance.audit`), the
error against the twin's true base parameters on the inertial parameters OLS determines well
(t-ratio |beta| / SE >= WELL_DETERMINED_T on that condition; the viscous coefficients are left
out), and the size of the estimate's inertia matrix over the record against the truth's (mean
trace). On the representative condition a fifth estimator asks for physically consistent links
(`export.consistent`, which is why this module is in export/). `invariance` fits OLS, WLS and
the dual metric in three charts of the same data. `write_job` computes one record (a
trajectory's comparison or the invariance test) and writes it under results/beyond_ols/;
`job_inputs` names what decides it besides this module's code.
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib.acceptance import audit, held_out, rescue
from crane_lib.acceptance.selection import TABLE_VIII_TRAJECTORIES
from crane_lib.export import consistent
from crane_lib.identification import metrics, weighted
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import RESULTS_DIR, recording_path
from crane_lib.records import write_json_record
from crane_lib.twin.truth import load_truth

BEYOND_DIR = RESULTS_DIR / "beyond_ols"
TABLE_VIII = TABLE_VIII_TRAJECTORIES
TS = 0.040
LABELS = {
    "ols": "OLS",
    "wls": "error-covariance WLS",
    "dual-metric": "dual-metric WLS",
    "dual-metric+Theta_r": "dual-metric WLS + Θr",
    "dual-metric+consistent": "dual-metric WLS, consistent links",
}
WELL_DETERMINED_T = 20.0  # |beta| / SE of OLS on the condition: relative standard error <= 5 %
# samples per dual-metric fit (evenly spaced): None = the whole record. The quick profile (CI)
# caps it; the benchmark measures what the cap costs in time and moves in the estimate.
MAX_SAMPLES = {"quick": 1000, "full": None}
INVARIANCE_SAMPLES = 600
AUDIT_SEED = 1
INVARIANCE = "invariance"


def record_path(trajectory: str, ts: float = TS, run: int = 1, directory=None) -> Path:
    """Where the comparison record of one condition is written."""
    return Path(directory or BEYOND_DIR) / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms.json"


def invariance_path(directory=None) -> Path:
    """Where the invariance test's record is written."""
    return Path(directory or BEYOND_DIR) / "invariance.json"


def trajectories(profile: str) -> list[str]:
    """The Table VIII trajectories the profile records (quick: a subset)."""
    recorded = set(held_out.identification_executions(profile))
    return [t for t in TABLE_VIII if t in recorded]


def mean_trace(model: DynamicModel, beta, theta: np.ndarray) -> float:
    """Mean over the configurations of trace M(theta; beta) (8 x 8), kg·m^2: how large an
    estimate's inertia is."""
    return float(np.trace(model.inertia_matrix(theta, beta), axis1=1, axis2=2).mean())


def _score(model, beta, heldout: list, truth: np.ndarray, well: np.ndarray) -> dict:
    errors = [metrics.prediction_error(model, beta, b) for b in heldout]
    checked = audit.audit(beta, AUDIT_SEED, "dense", model)
    relative = np.abs(beta[well] - truth[well]) / np.abs(truth[well])
    return {
        "heldout_rmse": metrics.pooled_rmse(model, beta, heldout),
        "heldout_mne": float(np.mean([e.mne for e in errors])),
        "audit_passed": bool(checked.passed),
        "audit_lambda_min": float(checked.lambda_min),
        "audit_violations": int(checked.n_violations),
        "parameter_error_median": float(np.median(relative)) if len(relative) else float("nan"),
    }


def compare_condition(
    bundle,
    model: DynamicModel,
    heldout: list,
    truth: np.ndarray,
    condition: str,
    max_samples: int | None = None,
    theta_r: np.ndarray | None = None,
    epsilon: float = rescue.RESCUE_EPSILON,
    consistency: weighted.Consistency | None = None,
) -> dict:
    """The four estimators on one bundle, each scored; JSON-ready.

    Dual-metric WLS + Theta_r: the plain dual-metric estimate is checked on Theta_r first; when it
    already has M >= eps I there, it *is* the constrained solution (the constrained problem's
    relaxation has a feasible optimum) and is reported with "constraints inactive"; otherwise
    the constrained SDP is solved. With `consistency`, a fifth row: the dual-metric WLS whose
    estimate must be the base parameters of physically consistent links."""
    theta_r = rescue.initial_theta_r() if theta_r is None else theta_r
    data = weighted.idim_data(bundle, model, max_samples=max_samples)
    full = weighted.idim_data(bundle, model)
    fits = {
        "ols": weighted.ols_fit(bundle, model, data=full),
        "wls": weighted.error_covariance_wls(bundle, model, data=full),
    }
    reference = fits["ols"] if max_samples is None else weighted.ols_fit(bundle, model, data=data)
    fits["dual-metric"] = weighted.dual_metric_wls(
        bundle, model, data=data, reference=reference, condition=condition
    )
    started = time.perf_counter()
    lam = model.arm_min_eigenvalue(theta_r, fits["dual-metric"].values)
    inactive = bool(lam.min() >= epsilon)
    if inactive:  # its time: the plain solve and the check on Theta_r
        plain = fits["dual-metric"]
        seconds = plain.solve_time_s + time.perf_counter() - started
        fits["dual-metric+Theta_r"] = weighted.WeightedFit(
            "dual-metric+Theta_r",
            plain.parameters,
            plain.residual,
            plain.status,
            seconds,
            plain.n_samples,
            plain.n_rows,
            {**plain.info, "constraints_inactive": True},
        )
    else:
        fits["dual-metric+Theta_r"] = weighted.dual_metric_wls(
            bundle,
            model,
            data=data,
            reference=reference,
            condition=condition,
            poses=theta_r,
            epsilon=epsilon,
        )
    if consistency is not None:  # a fifth estimator: the base parameters of consistent links
        fits["dual-metric+consistent"] = weighted.dual_metric_wls(
            bundle,
            model,
            data=data,
            reference=reference,
            condition=condition,
            consistency=consistency,
        )
    ols_se = fits["ols"].parameters.std_errors
    # the viscous coefficients are left out: they absorb the twin's Coulomb and gear friction,
    # which the model lacks, so their "truth" is not what any estimator here can recover
    inertial = np.array([not n.startswith("FV") for n in model.names])
    well = np.flatnonzero((np.abs(fits["ols"].values) / ols_se >= WELL_DETERMINED_T) & inertial)
    truth_trace = mean_trace(model, truth, full.theta)
    rows = []
    for key, f in fits.items():
        row = {
            "method": LABELS[key],
            "status": f.status,
            "solve_time_s": f.solve_time_s,
            "samples": f.n_samples,
        }
        row.update(_score(model, f.values, heldout, truth, well))
        row["lambda_min_data"] = float(model.arm_min_eigenvalue(full.theta, f.values).min())
        row["theta_r_lambda_min"] = float(model.arm_min_eigenvalue(theta_r, f.values).min())
        row["trace_ratio"] = mean_trace(model, f.values, full.theta) / truth_trace
        if "link_margins" in f.info:
            row["link_margin_min"] = min(f.info["link_margins"])
            row["base_mismatch"] = f.info["base_mismatch"]
        rows.append(row)
    return {
        "condition": condition,
        "samples_record": len(full.samples),
        "samples_dual_metric": len(data.samples),
        "theta_r_poses": len(theta_r),
        "epsilon": epsilon,
        "theta_r_inactive": inactive,
        "well_determined": [model.names[i] for i in well],
        "names": model.names,
        "rows": rows,
        "values": {LABELS[k]: f.values.tolist() for k, f in fits.items()},
    }


DEGREE_AXES = (2, 4, 6)  # the constant rescaling: these axes measured in degrees
WARP_AMPLITUDE = 0.5  # the configuration-dependent chart q' = q + a sin q on every axis
DEGREE_CHART = f"degrees on axes {', '.join(map(str, DEGREE_AXES))}"
WARPED_CHART = f"warped chart q + {WARP_AMPLITUDE:g} sin q"
CHARTS = {
    "joint radians": None,
    DEGREE_CHART: lambda theta: weighted.degrees_chart(DEGREE_AXES),
    WARPED_CHART: lambda theta: weighted.warped_chart(theta, WARP_AMPLITUDE),
}


def invariance(
    bundle, model: DynamicModel, max_samples: int = INVARIANCE_SAMPLES, condition: str = ""
) -> dict:
    """OLS, WLS and dual-metric WLS on the same samples in three charts: each estimate's relative
    change |beta_chart - beta_radians| / |beta_radians| and its held-in RMSE in N·m (radians)."""
    data0 = weighted.idim_data(bundle, model, max_samples=max_samples)
    rows, base = [], {}
    for chart_name, make in CHARTS.items():
        jac = None if make is None else make(np.asarray(bundle.theta))
        data = weighted.idim_data(bundle, model, chart=jac, max_samples=max_samples)
        for method in weighted.METHODS:
            options = {"condition": f"{condition}, {chart_name}"} if method == "dual-metric" else {}
            fitted = weighted.fit(method, bundle, model, data=data, **options)
            base.setdefault(method, fitted.values)
            change = float(
                np.linalg.norm(fitted.values - base[method]) / np.linalg.norm(base[method])
            )
            residual = data0.regressor @ fitted.values - data0.torque
            rows.append(
                {
                    "chart": chart_name,
                    "method": LABELS[method],
                    "relative change": change,
                    "RMSE in radians (N·m)": float(np.sqrt(np.mean(residual**2))),
                }
            )
    return {"condition": condition, "samples": len(data0.samples), "rows": rows}


def job_inputs(
    job: str, representative: str, profile: str, directory=None
) -> tuple[Path, Path, dict]:
    """(record path, recording, parameters) of one job: a trajectory's comparison or the
    invariance test; with the source of this module's imports, what decides its record."""
    if job == INVARIANCE:
        return (
            invariance_path(directory),
            recording_path(representative, 1),
            {"job": INVARIANCE, "samples": INVARIANCE_SAMPLES, "ts": TS},
        )
    return (
        record_path(job, directory=directory),
        recording_path(job, 1),
        {
            "job": job,
            "representative": job == representative,
            "profile": profile,
            "samples": MAX_SAMPLES[profile],
            "ts": TS,
        },
    )


@lru_cache(maxsize=2)
def _references(profile: str) -> tuple[DynamicModel, np.ndarray, list]:
    """What every comparison of a process scores against: the model, the twin's true base
    parameters and the held-out bundles (read once per process, not once per record)."""
    model = DynamicModel("reduced")
    truth = model.base_from_standard(load_truth()).values
    heldout = [b for (_, run), b in held_out.heldout_bundles(profile, TS).items() if run == 1]
    return model, truth, heldout


def write_job(job: str, representative: str, profile: str, path: Path) -> str:
    """Compute one job's record and write it to `path` (in a worker process of the Beyond OLS
    step)."""
    model, truth, heldout = _references(profile)
    if job == INVARIANCE:
        bundle = held_out.recorded_bundle(representative, 1, TS, profile)
        out = invariance(bundle, model, condition=f"{representative} at {TS * 1e3:g} ms")
        out.update(trajectory=representative)
        write_json_record(path, out)
        return job
    started = time.perf_counter()
    bundle = held_out.recorded_bundle(job, 1, TS, profile)
    # the consistent-links variant on the representative condition only (the build's time)
    consistency = (
        consistent.consistency_constraints(model.parameter_set) if job == representative else None
    )
    out = compare_condition(
        bundle,
        model,
        heldout,
        truth,
        f"{job} at {TS * 1e3:g} ms",
        max_samples=MAX_SAMPLES[profile],
        consistency=consistency,
    )
    out.update(trajectory=job, ts=TS, run=1, profile=profile, wall_s=time.perf_counter() - started)
    write_json_record(path, out)
    return job
