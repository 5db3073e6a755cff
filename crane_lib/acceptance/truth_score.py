"""A model identified on a twin recording, scored against the twin's truth in base parameters.

The rule is the one the CRANE-X7's chapters use (`export.beyond_ols`): the truth is the twin's
standard parameters mapped to the model's base parameters (`DynamicModel.base_from_standard`);
a parameter is well determined when its OLS estimate is at least WELL_DETERMINED_T standard
errors from zero (relative standard error at most 5 %); the viscous coefficients FVj are left
out, because they absorb the twin's Coulomb and gear friction, which the model lacks. The score
is the relative error |estimate - truth| / |truth| of each well-determined parameter.

`score_accepted` scores Algorithm 1's result (`acceptance.accepted.AcceptedModel`) on any arm's
twin: the CRANE-X7's (its truth file) and the other shipped arms' (`twin.truth.truth_parameters`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet

WELL_DETERMINED_T = 20.0  # |beta_OLS| / SE: relative standard error <= 5 %
UNSCORED_PREFIXES = ("FV",)  # absorb friction the model lacks (see the module text)


@dataclass
class TruthScore:
    """Well-determined base parameters of a model against the twin's truth.

    names     the well-determined base parameters, in the model's order
    estimate  their identified values (SI)
    truth     the twin's truth in the same base parameters (SI)
    t_ratio   |OLS estimate| / OLS standard error of each
    relative  |estimate - truth| / |truth| of each
    """

    names: list[str]
    estimate: np.ndarray
    truth: np.ndarray
    t_ratio: np.ndarray
    relative: np.ndarray

    @property
    def median(self) -> float:
        """Median relative error (NaN when nothing is well determined)."""
        return float(np.median(self.relative)) if len(self.relative) else float("nan")

    @property
    def worst(self) -> tuple[str, float]:
        """The well-determined parameter farthest from the truth and its relative error."""
        i = int(np.argmax(self.relative))
        return self.names[i], float(self.relative[i])

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "names": list(self.names),
            "estimate": self.estimate.tolist(),
            "truth": self.truth.tolist(),
            "t_ratio": self.t_ratio.tolist(),
            "relative": self.relative.tolist(),
            "median": self.median,
        }


def well_determined(
    names, ols_values, std_errors, threshold: float = WELL_DETERMINED_T
) -> np.ndarray:
    """Indices of the parameters whose OLS t-ratio reaches `threshold`, FVj left out."""
    t_ratio = np.abs(np.asarray(ols_values, dtype=float)) / np.asarray(std_errors, dtype=float)
    scored = np.array([not n.startswith(UNSCORED_PREFIXES) for n in names])
    return np.flatnonzero((t_ratio >= threshold) & scored)


def twin_truth_base(
    model: DynamicModel, arm: str, truth: ParameterSet | None = None
) -> ParameterSet:
    """The twin's truth of shipped arm `arm` (a key of `arm_description.ARMS`; `truth`: a truth
    file's parameters instead) in the model's base parameters."""
    from crane_lib.twin.truth import CRANE_X7, load_truth, truth_parameters

    if truth is None:
        truth = load_truth() if arm == CRANE_X7 else truth_parameters(arm)
    return model.base_from_standard(truth)


def truth_score(
    parameters: ParameterSet,
    ols: ParameterSet,
    truth_base: ParameterSet,
    threshold: float = WELL_DETERMINED_T,
) -> TruthScore:
    """Score `parameters` against `truth_base` on the parameters `ols` (values with standard
    errors, same names) determines well."""
    names = list(parameters.names)
    truth = truth_base.ordered(names, source="truth base parameters")
    ols_values = ols.ordered(names, source="OLS estimate")
    errors = np.asarray(ols.std_errors, dtype=float)[[list(ols.names).index(n) for n in names]]
    well = well_determined(names, ols_values, errors, threshold)
    estimate = np.asarray(parameters.values, dtype=float)[well]
    return TruthScore(
        [names[i] for i in well],
        estimate,
        truth[well],
        np.abs(ols_values[well]) / errors[well],
        np.abs(estimate - truth[well]) / np.abs(truth[well]),
    )


def score_accepted(
    accepted,
    model: DynamicModel,
    arm: str,
    truth: ParameterSet | None = None,
    threshold: float = WELL_DETERMINED_T,
) -> TruthScore:
    """Algorithm 1's model (an `AcceptedModel`) of a twin recording of `arm` against its truth."""
    return truth_score(
        accepted.parameters,
        accepted.condition.ols.parameters,
        twin_truth_base(model, arm, truth),
        threshold,
    )
