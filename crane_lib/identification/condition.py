"""One identification condition, before CLIE: OLS -> routing test -> conditional SDP projection
(paper Algorithm 1, Sec. IV-B, Table V and the first four panels of Table XII).

The routing test asks whether M(theta; beta_OLS) is positive definite at every configuration
the record visits (the samples of the condition's bundle). Positive definite: route O-C,
CLIE starts from the OLS estimate. Otherwise route O-S-C: the estimate is projected
(identification.projection)
with the smallest epsilon of the ladder whose projection is PD on the whole record, and CLIE
starts from the projection. A condition that cannot be identified (rank, solver) is reported
with its reason rather than raised, so a sweep goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crane_lib import parameter_sets
from crane_lib.identification.ols import IdentificationError, OLSResult, ols, stack
from crane_lib.identification.projection import ConditionalProjection, conditional_projection
from crane_lib.identification.weighted import METHODS, WeightedFit, fit, idim_data
from crane_lib.logs.preprocessing import cached_bundles
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet, save_parameters
from crane_lib.paths import RESULTS_DIR, recording_path
from crane_lib.records import read_json_records, write_json_record

# where the OLS/SDP sweep (`record_condition`, once per condition) writes one record per condition
CONDITIONS_DIR = RESULTS_DIR / "conditions"
SWEEP = "ols_sdp"  # the sweep that writes these records (papermill_params/ols_sdp_<profile>.csv)

ROUTE_DIRECT = "O-C"
ROUTE_PROJECTED = "O-S-C"


@dataclass
class ConditionResult:
    """What OLS/SDP hands to CLIE for one condition (trajectory, interval, execution).

    trajectory          name of the command file the record executed (e.g. "AG02")
    ts                  sampling interval of the bundle, s
    run                 execution number of the trajectory (1 unless repeated, Table XI)
    ols                 the OLS fit (parameters with standard errors, kappa, residual); None when
                        the condition could not be identified (see `failure`)
    lambda_min_visited  smallest eigenvalue of the 7x7 arm block of M(theta; beta_OLS) over the
                        configurations the bundle visits, kg·m^2 (the routing test of Table V)
    route               "O-C" (PD at the visited configurations: CLIE starts from OLS) or "O-S-C"
                        (projected first); None when OLS failed
    projection          the conditional SDP projection on route O-S-C (the epsilon ladder's
                        attempts and the chosen one); None on route O-C
    failure             why the condition has no start (rank, solver, no PD projection), else None
    provenance          where the bundle came from (log file, its digest, preprocessing settings)
    estimate            the start's estimator when it is not OLS (weighted.WeightedFit: WLS or the
                        dual metric); the routing test and the projection then see it, not OLS
    """

    trajectory: str
    ts: float
    run: int = 1
    ols: OLSResult | None = None
    lambda_min_visited: float = float("nan")
    route: str | None = None
    projection: ConditionalProjection | None = None
    failure: str | None = None
    provenance: dict = field(default_factory=dict)
    estimate: WeightedFit | None = (
        None  # the start's estimator when it is not OLS (--method wls | dual-metric)
    )

    @property
    def method(self) -> str:
        """How the start point was made: OLS, or the projection's method."""
        return "ols" if self.estimate is None else self.estimate.method

    @property
    def pd_visited(self) -> bool:
        """Whether M is PD at every configuration the record visits."""
        return bool(self.lambda_min_visited > 0)

    @property
    def start(self) -> ParameterSet | None:
        """The starting point of CLIE: the projection on route O-S-C, else the OLS estimate."""
        if (
            self.route == ROUTE_PROJECTED
            and self.projection is not None
            and self.projection.chosen is not None
        ):
            return self.projection.chosen.parameters
        if self.estimate is not None:
            return self.estimate.parameters
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
            "method": self.method,
        }
        if self.estimate is not None:
            out.update(
                estimate=self.estimate.values.tolist(),
                estimate_status=self.estimate.status,
                estimate_time_s=self.estimate.solve_time_s,
            )
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


def condition_bundle(trajectory: str, ts: float, run: int = 1):
    """The bundle of one condition (trajectory, interval, execution), preprocessed once and
    cached."""
    path = recording_path(trajectory, run)
    if not path.exists():
        raise IdentificationError(
            f"{path}: no recording; build the data set first (python -m crane_lib.twin.dataset, or "
            "make book)"
        )
    return cached_bundles(path)[float(ts)]


def condition_record_path(trajectory: str, ts: float, run: int = 1) -> Path:
    """The record of one condition of the OLS/SDP sweep."""
    return CONDITIONS_DIR / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms.json"


def identify_condition(
    bundle,
    trajectory: str,
    model: DynamicModel | None = None,
    run: int = 1,
    method: str = "ols",
    project: bool = True,
) -> ConditionResult:
    """OLS, the routing test and, on route O-S-C, the projection, for one bundle (`project=False`:
    the route is decided but not taken, for studies that need only OLS and the routing test).

    `method` ("ols", "wls", "dual-metric"; `weighted.METHODS`) replaces the OLS estimate as the
    start that the routing test, the projection and CLIE see; OLS still runs first (kappa,
    standard errors, the weighted methods' first pass). A dual-metric failure raises
    weighted.DualMetricFailure (status and condition), never falls back to OLS."""
    model = DynamicModel("reduced") if model is None else model
    if method not in METHODS:
        raise ValueError(f"method {method!r}: expected one of {', '.join(METHODS)}")
    result = ConditionResult(
        trajectory=trajectory,
        ts=float(bundle.ts),
        run=run,
        provenance=dict(getattr(bundle, "provenance", {}) or {}),
    )
    try:
        data = idim_data(bundle, model)
        w_all, y = stack(data.regressor, data.torque)
        result.ols = ols(w_all, y, model.names)
    except IdentificationError as err:
        result.failure = str(err)
        return result
    if method != "ols":
        reference = WeightedFit(
            "ols",
            result.ols.parameters,
            -result.ols.residual,
            "QR",
            0.0,
            result.ols.n_samples,
            result.ols.n_rows,
        )
        options = (
            {"condition": f"{trajectory} at {result.ts * 1e3:g} ms", "reference": reference}
            if method == "dual-metric"
            else {}
        )
        result.estimate = fit(method, bundle, model, data=data, **options)
    beta = result.start.values
    result.lambda_min_visited = float(model.arm_min_eigenvalue(bundle.theta, beta).min())
    if result.pd_visited:
        result.route = ROUTE_DIRECT
        return result
    result.route = ROUTE_PROJECTED
    if not project:
        return result
    result.projection = conditional_projection(model, beta, bundle.theta, bundle.dtheta)
    if result.projection.chosen is None:
        result.failure = result.projection.failure
    return result


def record_condition(trajectory: str, ts: float, run: int = 1) -> ConditionResult:
    """OLS, routing test and projection of one condition of the data set, written as its record
    (what the OLS/SDP sweep computes per condition); raises when OLS itself fails."""
    result = identify_condition(condition_bundle(trajectory, ts, run), trajectory, run=run)
    write_condition_record(condition_record_path(trajectory, ts, run), result)
    if result.ols is None:
        raise IdentificationError(
            f"{trajectory} at {ts * 1e3:g} ms could not be identified: {result.failure}"
        )
    return result


def write_condition_record(path, result: ConditionResult) -> Path:
    """Write one condition's record atomically."""
    return write_json_record(path, result.record())


def model_file_meta(result: ConditionResult, stage: str = "start") -> dict[str, str]:
    """The metadata of a model file that come from its condition: trajectory, interval, stage,
    route, epsilon, kappa, the routing test's lambda_min and the bundle's provenance."""
    return {
        "trajectory": result.trajectory,
        "ts_s": f"{result.ts:g}",
        "stage": stage,
        "method": result.method,
        "route": result.route,
        "epsilon": "" if result.projection is None else f"{result.projection.epsilon}",
        "kappa": f"{result.ols.kappa:.6g}",
        "lambda_min_visited_ols": f"{result.lambda_min_visited:.6g}",
        **{f"provenance.{k}": v for k, v in result.provenance.items()},
    }


def save_model(path, result: ConditionResult, stage: str = "start") -> Path:
    """The model file: names, values, units, OLS standard errors, route, epsilon, provenance."""
    parameters = result.start
    if parameters is None:
        raise IdentificationError(
            f"{result.trajectory} at {result.ts * 1e3:g} ms has no model: {result.failure}"
        )
    out = ParameterSet(
        parameters.names,
        parameters.values,
        result.ols.parameters.std_errors,
        model_file_meta(result, stage),
    )
    save_parameters(
        path,
        out,
        comment="CRANE-X7 base-parameter model (39-parameter reduced set); std_error is the OLS "
        "standard error",
    )
    return Path(path)


def profile_record_paths(profile: str | None = None) -> list[Path]:
    """The condition records present in results/conditions: those of the conditions `profile`
    lists (all when None), in file-name order."""
    if profile is None:
        return sorted(CONDITIONS_DIR.glob("*.json"))
    listed = parameter_sets.profile_conditions(SWEEP, profile)
    found = [condition_record_path(t, ms / 1e3, run) for t, ms, run in listed]
    return sorted(p for p in found if p.is_file())


def load_condition_records(directory=None, profile: str | None = None) -> list[dict]:
    """The OLS/SDP sweep's condition records (default: results/conditions); with a profile, only
    those of the conditions its sweep lists (the folder may hold the other profile's too)."""
    records = read_json_records(CONDITIONS_DIR if directory is None else directory)
    return parameter_sets.in_profile(records, SWEEP, profile)
