"""The chapter "Beyond OLS": OLS, error-covariance WLS, dual-metric WLS and dual-metric WLS with
the rescue's Theta_r constraints, side by side on one condition, and the invariance test.

`compare_condition` fits the four estimators on one recording's bundle and scores each the way
the book scores every model: pooled held-out RMSE and mean MNE over the executions of V01-V03
(`identification.metrics`), the dense audit over Theta with seed 1 (`acceptance.audit`), and the
error against the twin's true base parameters on the inertial parameters OLS determines well
(t-ratio |beta| / SE >= WELL_DETERMINED_T on that condition; the viscous coefficients are left
out), and the size of the estimate's inertia matrix over the record against the truth's (mean trace). `invariance` fits OLS, WLS and the dual metric in three charts
of the same data. `beyond_ols_step` (the main job, `reporting.pipeline`) writes one record per
condition and one for the invariance test under results/beyond_ols/, cached by content.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import lru_cache
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from tqdm import tqdm

from crane_lib import fingerprint
from crane_lib.acceptance import audit, rescue
from crane_lib.errors import InputError
from crane_lib.export import consistent
from crane_lib.identification import metrics, weighted
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import RESULTS_DIR, recording_path
from crane_lib.records import read_json_record, write_json_record
from crane_lib.reporting import validation
from crane_lib.reporting.tables import significant
from crane_lib.twin.truth import load_truth

BEYOND_DIR = RESULTS_DIR / "beyond_ols"
TABLE_VIII = ("AG02", "AG01", "AP01", "AP02", "AP03", "AP04", "AP05", "PB07", "PC01")  # as chapter 07 (register)
TS = 0.040
LABELS = {"ols": "OLS", "wls": "error-covariance WLS", "dual-metric": "dual-metric WLS", "dual-metric+Theta_r": "dual-metric WLS + Θr",
          "dual-metric+consistent": "dual-metric WLS, consistent links"}
WELL_DETERMINED_T = 20.0  # |beta| / SE of OLS on the condition: relative standard error <= 5 %
# samples per dual-metric fit (evenly spaced): None = the whole record. The quick profile (CI)
# caps it; the benchmark measures what the cap costs in time and moves in the estimate.
MAX_SAMPLES = {"quick": 1000, "full": None}
INVARIANCE_SAMPLES = 600
AUDIT_SEED = 1


def record_path(trajectory: str, ts: float = TS, run: int = 1, directory=None) -> Path:
    return Path(directory or BEYOND_DIR) / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms.json"


def invariance_path(directory=None) -> Path:
    return Path(directory or BEYOND_DIR) / "invariance.json"


def trajectories(profile: str) -> list[str]:
    """The Table VIII trajectories the profile records (quick: a subset)."""
    recorded = set(validation.identification_executions(profile))
    return [t for t in TABLE_VIII if t in recorded]


def mean_trace(model: DynamicModel, beta, theta: np.ndarray) -> float:
    """Mean over the configurations of trace M(theta; beta) (8 x 8), kg·m^2: how large an estimate's inertia is."""
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


def compare_condition(bundle, model: DynamicModel, heldout: list, truth: np.ndarray, condition: str,
                      max_samples: int | None = None, theta_r: np.ndarray | None = None, epsilon: float = rescue.RESCUE_EPSILON,
                      consistency: weighted.Consistency | None = None) -> dict:
    """The four estimators on one bundle, each scored; JSON-ready.

    Dual-metric WLS + Theta_r: the plain dual-metric estimate is checked on Theta_r first; when it
    already has M >= eps I there, it *is* the constrained solution (the constrained problem's
    relaxation has a feasible optimum) and is reported with "constraints inactive"; otherwise
    the constrained SDP is solved. With `consistency`, a fifth row: the dual-metric WLS whose
    estimate must be the base parameters of physically consistent links."""
    theta_r = rescue.initial_theta_r() if theta_r is None else theta_r
    data = weighted.idim_data(bundle, model, max_samples=max_samples)
    full = weighted.idim_data(bundle, model)
    fits = {"ols": weighted.ols_fit(bundle, model, data=full), "wls": weighted.error_covariance_wls(bundle, model, data=full)}
    reference = fits["ols"] if max_samples is None else weighted.ols_fit(bundle, model, data=data)
    fits["dual-metric"] = weighted.dual_metric_wls(bundle, model, data=data, reference=reference, condition=condition)
    started = time.perf_counter()
    lam = model.arm_min_eigenvalue(theta_r, fits["dual-metric"].values)
    inactive = bool(lam.min() >= epsilon)
    if inactive:  # its time: the plain solve and the check on Theta_r
        plain = fits["dual-metric"]
        seconds = plain.solve_time_s + time.perf_counter() - started
        fits["dual-metric+Theta_r"] = weighted.WeightedFit("dual-metric+Theta_r", plain.parameters, plain.residual, plain.status, seconds,
                                                           plain.n_samples, plain.n_rows, {**plain.info, "constraints_inactive": True})
    else:
        fits["dual-metric+Theta_r"] = weighted.dual_metric_wls(bundle, model, data=data, reference=reference, condition=condition,
                                                               poses=theta_r, epsilon=epsilon)
    if consistency is not None:  # a fifth estimator: the base parameters of physically consistent links
        fits["dual-metric+consistent"] = weighted.dual_metric_wls(bundle, model, data=data, reference=reference, condition=condition,
                                                                 consistency=consistency)
    ols_se = fits["ols"].parameters.std_errors
    # the viscous coefficients are left out: they absorb the twin's Coulomb and gear friction,
    # which the model lacks, so their "truth" is not what any estimator here can recover
    inertial = np.array([not n.startswith("FV") for n in model.names])
    well = np.flatnonzero((np.abs(fits["ols"].values) / ols_se >= WELL_DETERMINED_T) & inertial)
    truth_trace = mean_trace(model, truth, full.theta)
    rows = []
    for key, f in fits.items():
        row = {"method": LABELS[key], "status": f.status, "solve_time_s": f.solve_time_s, "samples": f.n_samples}
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


def invariance(bundle, model: DynamicModel, max_samples: int = INVARIANCE_SAMPLES, condition: str = "") -> dict:
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
            change = float(np.linalg.norm(fitted.values - base[method]) / np.linalg.norm(base[method]))
            residual = data0.regressor @ fitted.values - data0.torque
            rows.append({"chart": chart_name, "method": LABELS[method], "relative change": change,
                         "RMSE in radians (N·m)": float(np.sqrt(np.mean(residual**2)))})
    return {"condition": condition, "samples": len(data0.samples), "rows": rows}


def _cache_key(log_path: Path, *parts) -> str:
    return fingerprint.digest(fingerprint.file_digest(log_path), *map(str, parts), fingerprint.package_digest())


def _cached(path: Path, key: str) -> bool:
    if not path.is_file():
        return False
    try:
        return read_json_record(path).get("cache_key") == key
    except InputError:
        return False


INVARIANCE = "invariance"


def _job_key(job: str, representative: str, profile: str, directory=None) -> tuple[Path, str]:
    """(record path, cache key) of one job: a trajectory's comparison or the invariance test."""
    if job == INVARIANCE:
        return invariance_path(directory), _cache_key(recording_path(representative, 1), INVARIANCE, INVARIANCE_SAMPLES, TS)
    return record_path(job, directory=directory), _cache_key(recording_path(job, 1), profile, MAX_SAMPLES[profile], TS)


@lru_cache(maxsize=2)
def _references(profile: str) -> tuple[DynamicModel, np.ndarray, list]:
    """What every comparison of a process scores against: the model, the twin's true base
    parameters and the held-out bundles (read once per process, not once per record)."""
    model = DynamicModel("reduced")
    truth = model.base_from_standard(load_truth()).values
    heldout = [b for (_, run), b in validation.heldout_bundles(profile, TS).items() if run == 1]
    return model, truth, heldout


def _run_job(job: str, representative: str, profile: str, path: Path, key: str) -> str:
    """Compute one job's record and write it to `path` with its cache key (in a worker process
    of `beyond_ols_step`, which computed both)."""
    model, truth, heldout = _references(profile)
    if job == INVARIANCE:
        bundle = validation.recorded_bundle(representative, 1, TS, profile)
        out = invariance(bundle, model, condition=f"{representative} at {TS * 1e3:g} ms")
        out.update(trajectory=representative, cache_key=key)
        write_json_record(path, out)
        return job
    started = time.perf_counter()
    bundle = validation.recorded_bundle(job, 1, TS, profile)
    # the consistent-links variant on the representative condition only (the build's time)
    consistency = consistent.consistency_constraints(model.parameter_set) if job == representative else None
    out = compare_condition(bundle, model, heldout, truth, f"{job} at {TS * 1e3:g} ms", max_samples=MAX_SAMPLES[profile],
                            consistency=consistency)
    out.update(trajectory=job, ts=TS, run=1, profile=profile, cache_key=key, wall_s=time.perf_counter() - started)
    write_json_record(path, out)
    return job


def beyond_ols_step(profile: str, directory=None, jobs: int = 1, run_job=_run_job) -> dict[str, str]:
    """The chapter's records: one per Table VIII trajectory the profile records (first execution,
    40 ms) and the invariance test on the representative condition; each "cached" or "ran".

    The records that are missing or stale are computed on `jobs` processes (each fit is one
    solver on one core), the representative condition first (it also fits the consistent-links
    variant, the longest); each worker writes its own record. `run_job(job, representative,
    profile, path, key)`: what computes one record and writes it to `path` with `key` (a
    module-level function: it is pickled)."""
    names = trajectories(profile)
    representative = names[0] if names else "AG02"
    statuses, pending = {}, []
    for job in [*names, INVARIANCE]:
        path, key = _job_key(job, representative, profile, directory)
        statuses[job] = "cached" if _cached(path, key) else "ran"
        if statuses[job] == "ran":
            pending.append((job, representative, profile, path, key))
    if len(pending) > 1 and jobs > 1:
        with ProcessPoolExecutor(min(jobs, len(pending)), mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(run_job, *arguments) for arguments in pending]
            for future in tqdm(as_completed(futures), total=len(futures), desc="beyond OLS", unit="record"):
                future.result()  # a failure stops the step, as in one process
    else:
        for arguments in tqdm(pending, desc="beyond OLS", unit="record"):
            run_job(*arguments)
    return statuses


# ----------------------------------------------------------------------------- the chapter's views


def load_records(profile: str, directory=None) -> list[dict]:
    """The condition records of the profile's Table VIII trajectories, in Table VIII order."""
    out = []
    for trajectory in trajectories(profile):
        path = record_path(trajectory, directory=directory)
        if not path.is_file():
            raise InputError(str(path), "no Beyond-OLS record", "the record written by `make book` (reporting.pipeline, step 'beyond OLS')")
        out.append(read_json_record(path))
    return out


def comparison_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (trajectory, method): held-out RMSE and MNE, audit, parameter error, time."""
    rows = []
    for record in records:
        for row in record["rows"]:
            rows.append({"trajectory": record["trajectory"], "method": row["method"],
                         "held-out RMSE (N·m)": row["heldout_rmse"], "held-out MNE (%)": 100 * row["heldout_mne"],
                         "audit passed": row["audit_passed"], "audit λmin (kg·m²)": row["audit_lambda_min"],
                         "median parameter error (%)": 100 * row["parameter_error_median"],
                         "mean tr M / truth's": row["trace_ratio"],
                         "solve time (s)": row["solve_time_s"], "samples": row["samples"]})
    return pd.DataFrame(rows).set_index(["trajectory", "method"])


def load_invariance(directory=None) -> dict:
    path = invariance_path(directory)
    if not path.is_file():
        raise InputError(str(path), "no invariance record", "the record written by `make book` (reporting.pipeline, step 'beyond OLS')")
    return read_json_record(path)


def invariance_frame(record: dict) -> pd.DataFrame:
    return pd.DataFrame(record["rows"]).set_index(["chart", "method"])


def consistent_sentence(record: dict, rows: pd.DataFrame) -> str:
    """What the consistent-links variant did on this condition, from its record ("" when it did not run)."""
    row = next((r for r in record["rows"] if r["method"] == LABELS["dual-metric+consistent"]), None)
    if row is None:
        return ""
    plain = rows.loc[LABELS["dual-metric"], "held-out RMSE (N·m)"]
    binding = row["link_margin_min"] < 1.1 * consistent.MARGIN  # at the margin, to the solver's precision
    return (f"Requiring consistent links {'binds' if binding else 'does not bind'} (smallest link pseudo-inertia eigenvalue "
            f"{row['link_margin_min']:.2g} kg·m², margin {consistent.MARGIN:g}; β = Kφ to {row['base_mismatch']:.1g}); its held-out RMSE is "
            f"{row['heldout_rmse']:.4f} N·m against {plain:.4f} N·m for the plain dual-metric fit.")


def ranking(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per trajectory, the method with the smallest value of `column`."""
    return frame[column].unstack("method").idxmin(axis=1)


# ----------------------------------------------------------------------------- the chapter's sentences

# significant digits per column of the chapter's tables
DIGITS = {"held-out RMSE (N·m)": 4, "held-out MNE (%)": 3, "audit λmin (kg·m²)": 3, "median parameter error (%)": 3,
          "mean tr M / truth's": 3, "solve time (s)": 2}


def representative_sentence(record: dict, frame: pd.DataFrame, trajectory: str) -> str:
    """What the table of the representative condition shows, generated from its record: samples,
    held-out RMSE against OLS, audit verdicts, Theta_r and the consistent-links row."""
    rows = frame.loc[trajectory]
    rmse = rows["held-out RMSE (N·m)"]
    dm, ols = rows.loc[LABELS["dual-metric"]], rows.loc[LABELS["ols"]]
    dm_rmse, ols_rmse = dm["held-out RMSE (N·m)"], ols["held-out RMSE (N·m)"]
    failed = rows.index[~rows["audit passed"].astype(bool)]
    text = (
        f"On {trajectory} the dual-metric fit used {record['samples_dual_metric']:,} of the record's "
        f"{record['samples_record']:,} samples. Its held-out RMSE is {significant(dm_rmse)} N·m, "
        f"{'lower' if dm_rmse < ols_rmse else 'higher'} than OLS's {significant(ols_rmse)} N·m "
        f"({100 * (dm_rmse / ols_rmse - 1):+.1f} %); the lowest of the {len(rmse)} is {rmse.idxmin()}, "
        f"the highest {rmse.idxmax()}. The dual-metric SDP took {dm['solve time (s)']:.1f} s against "
        f"{ols['solve time (s)']:.2f} s for OLS. "
        + ("Every estimate passes the audit over Θ. " if not len(failed) else f"Audit failures: {', '.join(failed)}. ")
        + theta_r_sentence(record)
        + ("The plain dual-metric estimate already has M ⪰ εI on all of Θr, so the Θr constraints are inactive "
           "and the Θr row is the same solution. " if record["theta_r_inactive"] else
           "The plain dual-metric estimate falls below ε on Θr, and the constrained program moves it. ")
        + f"Well determined means an OLS t-ratio |β̂|/SE of at least {WELL_DETERMINED_T:g}: "
        f"{len(record['well_determined'])} of the {len(record['names'])} parameters on this record. "
        + consistent_sentence(record, rows))
    return text


def theta_r_sentence(record: dict) -> str:
    """The size of Theta_r and the margin epsilon the record's constrained fit used."""
    corners = len(audit.box_corners())
    total = record["theta_r_poses"]
    split = (f" ({rescue.RESCUE_RANDOM_POSES:,} uniform poses over Θ and its {corners} corners, the rescue's initial set)"
             if total == rescue.RESCUE_RANDOM_POSES + corners else "")
    return f"Θr has {total:,} poses{split} and ε = {record['epsilon']:g} kg·m². "


def across_sentence(frame: pd.DataFrame, records: list[dict]) -> str:
    """Which estimator wins where, across the profile's Table VIII trajectories."""
    wins = ranking(frame, "held-out RMSE (N·m)").value_counts()
    closest = ranking(frame, "median parameter error (%)").value_counts()
    inactive = sum(r["theta_r_inactive"] for r in records)
    return (f"Lowest held-out RMSE, per trajectory: {', '.join(f'{m} on {n}' for m, n in wins.items())} of {len(records)}. "
            f"Closest to the twin's truth on the well-determined parameters: "
            f"{', '.join(f'{m} on {n}' for m, n in closest.items())}. "
            f"The Θr constraints were inactive on {inactive} of {len(records)} trajectories. "
            f"{int(frame['audit passed'].sum())} of {len(frame)} estimates pass the audit.")


def rmse_figure(frame: pd.DataFrame, profile: str):
    """Held-out RMSE per trajectory and estimator, as bars."""
    figure, ax = plt.subplots(figsize=(7, 3))
    rmse_by = frame["held-out RMSE (N·m)"].unstack("method")
    rmse_by[[m for m in LABELS.values() if m in rmse_by]].plot.bar(ax=ax, rot=0)
    ax.set_ylabel("held-out RMSE on V01–V03 (N·m)")
    ax.set_title(f"Twin recordings ({profile} profile), {TS * 1e3:g} ms: held-out RMSE per estimator")
    ax.legend(fontsize=7)
    return figure


def size_sentence(frame: pd.DataFrame, records: list[dict]) -> str:
    """The estimates' inertia along the record against the truth's, OLS against the dual metric."""
    ratio = frame["mean tr M / truth's"].unstack("method")
    ols, dm = ratio[LABELS["ols"]], ratio[LABELS["dual-metric"]]
    return (f"Mean trace of M along each record over the truth's: OLS {significant(ols.min(), 3)}–"
            f"{significant(ols.max(), 3)}, dual-metric WLS {significant(dm.min(), 3)}–{significant(dm.max(), 3)} "
            f"across the {len(records)} trajectories; the dual-metric estimate's inertia is the larger on "
            f"{int((dm > ols).sum())} of them.")


def invariance_sentence(invariance: pd.DataFrame) -> str:
    """How far each estimate moved under the two charts, from the invariance record."""
    moved = invariance["relative change"].unstack("method").drop(index="joint radians")
    wls = moved[LABELS["wls"]]
    return (f"The warped chart's amplitude is a = {WARP_AMPLITUDE:g}. Across both charts the dual-metric estimate "
            f"moved at most {significant(moved[LABELS['dual-metric']].max(), 2)} (relative), the solver's tolerance; "
            f"OLS moved up to {significant(moved[LABELS['ols']].max(), 2)}. Error-covariance WLS moved "
            f"{significant(wls[DEGREE_CHART], 2)} under the constant rescaling (its per-axis weights undo it, "
            f"except through the OLS pass that sets them) and {significant(wls[WARPED_CHART], 2)} under the "
            "configuration-dependent chart, which no constant weight can undo. The same test, on synthetic "
            "data, is a unit test (`tests/test_dual_metric.py`).")


def cap_sentence() -> str:
    """The sample cap of the dual-metric fits per profile (MAX_SAMPLES)."""
    parts = [f"at most {n:,} evenly spaced samples of a record in the {p} profile" if n else f"every sample in the {p} profile"
             for p, n in MAX_SAMPLES.items()]
    return f"The dual-metric fits see {' and '.join(parts)}."
