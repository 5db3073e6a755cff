"""The parameter clouds and the representative candidate (paper Sec. VI-A, VI-B, Appendix D-H).

A *cloud* is the set of 39-parameter vectors one stage (OLS, SDP, CLIE) produced over the
identification conditions of the study. This module gives

* `StageClouds`: the clouds of the three stages over the same conditions, read from the CLIE
  sweep's records (each holds the OLS estimate, the CLIE start, which is the SDP projection on
  route O-S-C and the OLS estimate on O-C, and the CLIE solution);
* the cloud measures of Sec. VI-A, taken in all 39 dimensions: total variance and the median
  distance of the points from their own cloud's centre, on coordinates standardized with one
  common centre and scale (the OLS cloud's), and a PCA basis common to the three stages
  (Fig. 6);
* centrality (Sec. VI-B): ranks under a Euclidean metric on the standardized 39 dimensions,
  d_i = ||(phi_i - mean) / sigma||_2, and under Mahalanobis metrics on the first k principal
  components of the same standardized cloud;
* the structural selection rule of Sec. VI-B / D-H, which needs no estimate: the trajectory
  whose block sequence contains every block of the design, at the coarsest interval at which
  every acceleration ramp still carries at least three samples;
* the two checks of D-H: kappa(W_all) within the lowest decile of the conditions and the
  candidate within the central quintile of the cloud. The checks do not select;
* Sec. VII-B's test of whether conditioning orders held-out prediction: the Spearman rank
  correlation of kappa against held-out RMSE over the candidates (scipy.stats.spearmanr),
  and a candidate's rank and gap by held-out prediction.

The reconstruction choices (common standardization, pooled PCA basis, the CLIE cloud for
centrality, the five Mahalanobis component counts) are argued in book/register_selection.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.stats

from crane_lib.identification import metrics
from crane_lib.identification.condition import ROUTE_PROJECTED
from crane_lib.paper_numbers import paper

STAGES = ("OLS", "SDP", "CLIE")
# Table VIII's trajectories: the text lists none; our choice (register "selection")
TABLE_VIII_TRAJECTORIES = ("AG02", "AG01", "AP01", "AP02", "AP03", "AP04", "AP05", "PB07", "PC01")
CENTRAL_FRACTION = paper("centrality_quintile").value / 100.0  # the central fifth
KAPPA_FRACTION = 0.10  # "within the lowest decile of the 160 conditions" (D-H)
MIN_RAMP_SAMPLES = int(paper("min_samples_per_ramp").value)
# the five Mahalanobis metrics beside the Euclidean one (six metrics, Sec. VI-B); the text gives
# only the range 2..39 (register_selection.md)
MAHALANOBIS_COMPONENTS = (2, 5, 10, 20, 39)


@dataclass(frozen=True)
class StageClouds:
    """The three stages' parameter vectors over the same conditions (Sec. VI-A), one row per
    condition in `labels` order (sorted by trajectory, then interval), built from CLIE records.

    names    the base parameters, the columns of every cloud
    labels   (trajectory, ts in s) of each row
    routes   "O-C" or "O-S-C" of each row
    kappas   kappa(W_all) of each condition's OLS regressor, (n,)
    vectors  stage ("OLS", "SDP", "CLIE") -> (n, p) parameter vectors; the SDP cloud holds every
             condition's CLIE start, so on route O-C its row is the OLS estimate
    """

    names: list[str]
    labels: list[tuple[str, float]]
    routes: list[str]
    kappas: np.ndarray
    vectors: dict[str, np.ndarray]

    @classmethod
    def from_records(cls, records: list[dict]) -> "StageClouds":
        """The OLS, SDP and CLIE clouds of the sweep's records, one row per condition."""
        if not records:
            raise ValueError(
                "no CLIE records: run the CLIE sweep first (python -m crane_book.pipeline)"
            )
        names = list(records[0]["names"])
        for r in records:
            if list(r["names"]) != names:
                raise ValueError(
                    f"record {r['trajectory']} at {r['ts']} s has other parameter names than the "
                    "first"
                )
        records = sorted(records, key=lambda r: (r["trajectory"], r["ts"]))
        return cls(
            names=names,
            labels=[(r["trajectory"], float(r["ts"])) for r in records],
            routes=[r["route"] for r in records],
            kappas=np.array([r["kappa"] for r in records], dtype=float),
            vectors={
                "OLS": np.array([r["ols"] for r in records]),
                "SDP": np.array([r["start"] for r in records]),
                "CLIE": np.array([r["clie_x"] for r in records]),
            },
        )

    def index_of(self, trajectory: str, ts: float) -> int:
        """The row of `trajectory` at interval `ts` (s) in the cloud."""
        for i, (name, interval) in enumerate(self.labels):
            if name == trajectory and math.isclose(interval, ts):
                return i
        raise KeyError(f"{trajectory} at {ts * 1e3:g} ms is not among the cloud's conditions")

    def without(self, trajectory: str) -> "StageClouds":
        """The clouds without the conditions of `trajectory`."""
        keep = [i for i, (name, _) in enumerate(self.labels) if name != trajectory]
        return StageClouds(
            self.names,
            [self.labels[i] for i in keep],
            [self.routes[i] for i in keep],
            self.kappas[keep],
            {s: v[keep] for s, v in self.vectors.items()},
        )

    def standardized(self, reference: str = "OLS") -> dict[str, np.ndarray]:
        """Every stage in the reference stage's standardized coordinates (its mean and standard
        deviation per parameter), so the three clouds are measured on one scale."""
        base = self.vectors[reference]
        if np.any(base.std(axis=0, ddof=1) == 0):
            raise ValueError(
                f"parameter {self.names[int(np.argmin(base.std(axis=0, ddof=1)))]} is constant "
                f"over the {reference} cloud"
            )
        return {s: standardize(v, base) for s, v in self.vectors.items()}


def standardize(points: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """Points centred and scaled per dimension by the reference cloud's mean and standard
    deviation (ddof 1); by default the points' own."""
    reference = points if reference is None else reference
    return (points - reference.mean(axis=0)) / reference.std(axis=0, ddof=1)


def total_variance(points: np.ndarray) -> float:
    """Trace of the sample covariance: the sum of the per-dimension variances (ddof 1)."""
    return float(points.var(axis=0, ddof=1).sum())


def median_distance(points: np.ndarray) -> float:
    """Median Euclidean distance of the points from their own centre (mean)."""
    return float(np.median(np.linalg.norm(points - points.mean(axis=0), axis=1)))


def cloud_measures(clouds: StageClouds, reference: str = "OLS") -> dict[str, dict[str, float]]:
    """Total variance and median distance of each stage's cloud, standardized by `reference`."""
    z = clouds.standardized(reference)
    return {
        s: {"total variance": total_variance(z[s]), "median distance": median_distance(z[s])}
        for s in STAGES
    }


@dataclass(frozen=True)
class PCABasis:
    """Principal directions of a set of points (Fig. 6's common basis).

    mean       the points' mean, (p,)
    axes       principal directions as rows, (k, p), in decreasing variance
    variances  the sample variance (ddof 1) along each direction, (k,)
    """

    mean: np.ndarray
    axes: np.ndarray
    variances: np.ndarray

    def project(self, points: np.ndarray, n: int = 2) -> np.ndarray:
        """The points' coordinates on the first `n` principal axes."""
        return (points - self.mean) @ self.axes[:n].T

    def share(self, n: int = 2) -> float:
        """The share of the total variance the first `n` principal axes carry."""
        return float(self.variances[:n].sum() / self.variances.sum())


def pca(points: np.ndarray) -> PCABasis:
    """Principal directions by SVD of the centred points (no scaling beyond what the caller did)."""
    mean = points.mean(axis=0)
    _, singular, vt = np.linalg.svd(points - mean, full_matrices=False)
    return PCABasis(mean, vt, singular**2 / (len(points) - 1))


def common_pca(
    clouds: StageClouds, reference: str = "OLS"
) -> tuple[PCABasis, dict[str, np.ndarray]]:
    """One PCA basis for the three stages: fitted to their pooled standardized points."""
    z = clouds.standardized(reference)
    return pca(np.vstack([z[s] for s in STAGES])), z


# ------------------------------------------------------------------ centrality


def euclidean_distances(points: np.ndarray) -> np.ndarray:
    """d_i = ||(phi_i - mean) / sigma||_2 on the cloud's own standardized dimensions (D-H)."""
    return np.linalg.norm(standardize(points), axis=1)


def mahalanobis_distances(points: np.ndarray, components: int) -> np.ndarray:
    """Mahalanobis distance on the first `components` principal components of the standardized
    cloud: sqrt(sum_m s_im^2 / lambda_m). A cloud of n points has at most n - 1 nonzero
    variances, so `components` must not exceed n - 1."""
    n = len(points)
    if not 1 <= components <= min(points.shape[1], n - 1):
        raise ValueError(
            f"{components} components: a cloud of {n} points in {points.shape[1]} dimensions "
            f"supports 1..{min(points.shape[1], n - 1)}"
        )
    z = standardize(points)
    basis = pca(z)
    scores = basis.project(z, components)
    return np.sqrt((scores**2 / basis.variances[:components]).sum(axis=1))


def rank_of(distances: np.ndarray, index: int) -> int:
    """1-based centrality rank (1 = most central); ties share the better rank."""
    return int((distances < distances[index]).sum()) + 1


def centrality_metrics(n_points: int, dimensions: int = 39) -> list[tuple[str, int | None]]:
    """The six metrics: Euclidean, then Mahalanobis with the component counts the cloud supports
    (capped at n - 1: a small profile's cloud cannot carry 39 components)."""
    cap = min(dimensions, n_points - 1)
    metrics = [("Euclidean, 39 standardized dimensions", None)]
    for k in MAHALANOBIS_COMPONENTS:
        used = min(k, cap)
        label = f"Mahalanobis, {used} components" + (
            "" if used == k else f" (of {k}: {n_points} points)"
        )
        metrics.append((label, used))
    return metrics


def distances_under(points: np.ndarray, components: int | None) -> np.ndarray:
    """Pairwise distances: Euclidean, or Mahalanobis on `components` principal axes."""
    return (
        euclidean_distances(points)
        if components is None
        else mahalanobis_distances(points, components)
    )


def centrality_table(points: np.ndarray, index: int, labels: list) -> list[dict]:
    """For each of the six metrics: the candidate's rank, whether it is in the central fifth,
    and the most central condition."""
    n = len(points)
    rows = []
    for label, components in centrality_metrics(n, points.shape[1]):
        d = distances_under(points, components)
        rank = rank_of(d, index)
        rows.append(
            {
                "metric": label,
                "rank": rank,
                "of": n,
                "central fifth": rank <= CENTRAL_FRACTION * n,
                "most central": labels[int(np.argmin(d))],
            }
        )
    return rows


def mahalanobis_rank_range(points: np.ndarray, index: int) -> tuple[int, int, int]:
    """(best rank, worst rank, largest component count) over Mahalanobis metrics with 2 up to
    min(39, n - 1) components."""
    top = min(points.shape[1], len(points) - 1)
    ranks = [rank_of(mahalanobis_distances(points, k), index) for k in range(2, top + 1)]
    return min(ranks), max(ranks), top


# ------------------------------------------------------------------ the structural rule and the
# checks


def blocks_of_design(specs: dict) -> set[tuple[str, str]]:
    """Every block of the design, by kind and posture (speed levels are not separate blocks):
    the single-joint block at each posture and each adjacent-pair block."""
    return {(b.kind, b.posture) for spec in specs.values() for b in spec.blocks}


def structural_candidates(specs: dict) -> list[str]:
    """The trajectories whose block sequence contains every block of the design (Sec. VI-B)."""
    design = blocks_of_design(specs)
    return [
        name for name, spec in specs.items() if {(b.kind, b.posture) for b in spec.blocks} >= design
    ]


def coarsest_adequate_interval(
    ramp_durations_s: np.ndarray, intervals, min_samples: int = MIN_RAMP_SAMPLES
) -> float | None:
    """The coarsest interval at which every acceleration ramp carries at least `min_samples`
    samples (floor(ramp / ts), the intervals a ramp spans; as `commands.SegmentStatistics`)."""
    shortest = float(np.min(ramp_durations_s))
    adequate = [ts for ts in intervals if math.floor(shortest / ts + 1e-9) >= min_samples]
    return max(adequate) if adequate else None


def kappa_check(kappas: np.ndarray, index: int) -> dict:
    """Is the candidate's kappa(W_all) within the lowest decile of the conditions?"""
    rank = rank_of(np.asarray(kappas, dtype=float), index)
    return {
        "rank": rank,
        "of": len(kappas),
        "cut-off rank": KAPPA_FRACTION * len(kappas),
        "passes": rank <= KAPPA_FRACTION * len(kappas),
    }


# ----------------------------------------------------------------------------- Sec. VII-B

# "two-digit conditioning" (Sec. VII-B): kappa below 100
TWO_DIGIT_KAPPA = 100.0
MIN_RANK_CORRELATION_POINTS = 3  # fewer points give a correlation of +-1 that tests nothing


@dataclass(frozen=True)
class RankCorrelation:
    rho: float
    p_value: float  # two-sided, scipy.stats.spearmanr's
    n: int


def rank_correlation(x, y) -> RankCorrelation | None:
    """Spearman's rho of x against y with its two-sided p-value; None below three points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"rank correlation of {x.shape} against {y.shape} values")
    if x.size < MIN_RANK_CORRELATION_POINTS:
        return None
    result = scipy.stats.spearmanr(x, y)
    return RankCorrelation(float(result.statistic), float(result.pvalue), int(x.size))


def heldout_standing(errors, index: int) -> dict:
    """A candidate's rank by held-out error among all (1 = best, ties share the better rank),
    the best candidate's index and the candidate's gap to it, relative to the best's error."""
    errors = np.asarray(errors, dtype=float)
    best = int(np.argmin(errors))
    return {
        "rank": rank_of(errors, index),
        "of": int(errors.size),
        "best": best,
        "gap": float(errors[index] / errors[best] - 1.0),
    }


def stage_scores(record: dict, model, heldout: list) -> dict:
    """One row of Table VIII from a CLIE record: pooled held-out RMSE of each stage (NaN where a
    stage does not occur) and CLIE's gain over its start, %; chapter 07 and the claims read it."""
    projected = record["route"] == ROUTE_PROJECTED
    row = {
        "trajectory": record["trajectory"],
        "route": record["route"],
        "OLS": metrics.pooled_rmse(model, record["ols"], heldout),
        "SDP": metrics.pooled_rmse(model, record["start"], heldout) if projected else np.nan,
        "CLIE": metrics.pooled_rmse(model, record["clie_x"], heldout),
        "rescue": np.nan,
    }
    start = row["SDP"] if projected else row["OLS"]
    row["CLIE gain over its start (%)"] = 100 * (1 - row["CLIE"] / start)
    return row
