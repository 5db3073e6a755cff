"""One identification condition, before CLIE: OLS -> routing test -> conditional SDP projection
(paper Algorithm 1, Sec. IV-B, Table V and the first four panels of Table XII).

The routing test asks whether M(theta; beta_OLS) is positive definite at every configuration
the record visits (the samples of the condition's bundle). Positive definite: route O-C,
CLIE starts from the OLS estimate. Otherwise route O-S-C: the estimate is projected (sdp)
with the smallest epsilon of the ladder whose projection is PD on the whole record, and CLIE
starts from the projection. A condition that cannot be identified (rank, solver) is reported
with its reason rather than raised, so a sweep goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import sdp
from .dynamics import DynamicModel
from .errors import atomic_write
from .ols import IdentificationError, OLSResult, ols, stack
from .parameters import ParameterSet, save_parameters

ROUTE_DIRECT = "O-C"
ROUTE_PROJECTED = "O-S-C"


@dataclass
class ConditionResult:
    trajectory: str
    ts: float
    run: int = 1
    ols: OLSResult | None = None
    lambda_min_visited: float = float("nan")
    route: str | None = None
    projection: sdp.ConditionalProjection | None = None
    failure: str | None = None
    provenance: dict = field(default_factory=dict)

    @property
    def pd_visited(self) -> bool:
        return bool(self.lambda_min_visited > 0)

    @property
    def start(self) -> ParameterSet | None:
        """The starting point of CLIE: the projection on route O-S-C, else the OLS estimate."""
        if self.route == ROUTE_PROJECTED and self.projection is not None and self.projection.chosen is not None:
            return self.projection.chosen.parameters
        return None if self.ols is None else self.ols.parameters

    def record(self) -> dict:
        """JSON-serializable summary (one row of Table XII's first panels, plus the estimates)."""
        out = {
            "trajectory": self.trajectory,
            "ts": self.ts,
            "run": self.run,
            "failure": self.failure,
            "route": self.route,
            "pd_visited": None if self.ols is None else self.pd_visited,
            "lambda_min_visited": None if self.ols is None else self.lambda_min_visited,
            "epsilon": None if self.projection is None else self.projection.epsilon,
            "provenance": self.provenance,
        }
        if self.ols is not None:
            out.update(
                kappa=self.ols.kappa,
                n_samples=self.ols.n_samples,
                residual_rms=self.ols.residual_rms,
                names=self.ols.parameters.names,
                ols=self.ols.parameters.values.tolist(),
                std_errors=self.ols.parameters.std_errors.tolist(),
            )
        if self.projection is not None:
            out["projection_attempts"] = [
                {k: v for k, v in a.items() if k != "result"} for a in self.projection.attempts
            ]
            if self.projection.chosen is not None:
                out["projected"] = self.projection.chosen.parameters.values.tolist()
                out["projection_change_norm"] = self.projection.chosen.change_norm
            if self.projection.failure:
                out["failure"] = self.projection.failure
        return out


def recording_path(trajectory: str, run: int = 1) -> Path:
    """The default data set's raw log of one execution (built by `python -m crane_lib.dataset`)."""
    from .dataset import RECORDINGS_DIR

    return RECORDINGS_DIR / f"{trajectory}_run{run}.npz"


def condition_bundle(trajectory: str, ts: float, run: int = 1):
    """The bundle of one condition (trajectory, interval, execution), preprocessed once and cached."""
    from .preprocessing import cached_bundles

    path = recording_path(trajectory, run)
    if not path.exists():
        raise IdentificationError(f"{path}: no recording; build the data set first (python -m crane_lib.dataset)")
    return cached_bundles(path)[float(ts)]


def condition_record_path(trajectory: str, ts: float, run: int = 1) -> Path:
    from .paths import RESULTS_DIR

    return RESULTS_DIR / "conditions" / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms.json"


def identify_condition(bundle, trajectory: str, model: DynamicModel | None = None, run: int = 1) -> ConditionResult:
    """OLS, the routing test and, on route O-S-C, the projection, for one bundle."""
    model = DynamicModel("reduced") if model is None else model
    result = ConditionResult(trajectory=trajectory, ts=float(bundle.ts), run=run, provenance=dict(getattr(bundle, "provenance", {}) or {}))
    try:
        w_all, y = stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau)
        result.ols = ols(w_all, y, model.names)
    except IdentificationError as err:
        result.failure = str(err)
        return result
    result.lambda_min_visited = float(model.arm_min_eigenvalue(bundle.theta, result.ols.parameters.values).min())
    if result.pd_visited:
        result.route = ROUTE_DIRECT
        return result
    result.route = ROUTE_PROJECTED
    result.projection = sdp.conditional_projection(model, result.ols.parameters.values, bundle.theta, bundle.dtheta)
    if result.projection.chosen is None:
        result.failure = result.projection.failure
    return result


def write_json_record(path, record: dict) -> Path:
    """One result record as JSON, written atomically (sorted keys: byte-identical on reruns)."""
    path = Path(path)
    with atomic_write(path, encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    return path


def write_condition_record(path, result: ConditionResult) -> Path:
    return write_json_record(path, result.record())


def save_model(path, result: ConditionResult, stage: str = "start") -> Path:
    """The model file: names, values, units, OLS standard errors, route, epsilon, provenance."""
    parameters = result.start
    if parameters is None:
        raise IdentificationError(f"{result.trajectory} at {result.ts * 1e3:g} ms has no model: {result.failure}")
    meta = {
        "trajectory": result.trajectory,
        "ts_s": f"{result.ts:g}",
        "stage": stage,
        "route": result.route,
        "epsilon": "" if result.projection is None else f"{result.projection.epsilon}",
        "kappa": f"{result.ols.kappa:.6g}",
        "lambda_min_visited_ols": f"{result.lambda_min_visited:.6g}",
        **{f"provenance.{k}": v for k, v in result.provenance.items()},
    }
    out = ParameterSet(parameters.names, parameters.values, result.ols.parameters.std_errors, meta)
    save_parameters(path, out, comment="CRANE-X7 base-parameter model (39-parameter reduced set); std_error is the OLS standard error")
    return Path(path)


def load_condition_records(directory) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(directory).glob("*.json"))]


# ------------------------------------------------------------------ Table III


def compare_model_classes(fit_bundles: dict, heldout_bundles: list, parameter_sets=("reduced", "reduced+poi", "reduced+coulomb", "full")) -> list[dict]:
    """Fit each nested model class by OLS on each trajectory; predict the held-out records.

    One row per (trajectory, parameter set): kappa, in-sample residual RMS and pooled
    held-out RMSE (Table III).
    """
    from .metrics import pooled_rmse

    rows = []
    for set_name in parameter_sets:
        model = DynamicModel(set_name)
        for trajectory, bundle in fit_bundles.items():
            fit = ols(*stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau), model.names)
            rows.append(
                {
                    "trajectory": trajectory,
                    "parameter set": set_name,
                    "parameters": model.n_parameters,
                    "kappa": fit.kappa,
                    "in-sample RMS": fit.residual_rms,
                    "held-out RMSE": pooled_rmse(model, fit.parameters.values, heldout_bundles),
                }
            )
    return rows


# ------------------------------------------------------------------ Sec. III-D


def full_model_torque_shares(bundle) -> dict[str, float]:
    """Fit the full 65-parameter model by OLS; RMS of each contribution over the torque RMS (%).

    'products': the 18 products of inertia; 'retained': the 39 terms of the reduced set;
    'residual': what the fit leaves. Shares of non-orthogonal parts need not add to 100.
    """
    full = DynamicModel("full")
    reduced_names = set(DynamicModel("reduced").names)
    regressor = full.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)
    fit = ols(*stack(regressor, bundle.tau), full.names)
    beta = fit.parameters.values
    torque_rms = float(np.sqrt(np.mean(bundle.tau**2)))
    products = np.array([n.rstrip("0123456789") in ("XY", "XZ", "YZ") for n in full.names])
    retained = np.array([n in reduced_names for n in full.names])

    def share(columns):
        return 100.0 * float(np.sqrt(np.mean((regressor[:, :, columns] @ beta[columns]) ** 2))) / torque_rms

    return {"products": share(products), "retained": share(retained), "residual": 100.0 * fit.residual_rms / torque_rms}
