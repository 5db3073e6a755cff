"""The claims chapter 10 (the torque constants) computes: independent per-axis and uniform
errors in the torque constants (Sec. VII-D).

Each function is one claim (`registry.claim`); the verdict's rule is in its docstring.
"""

from __future__ import annotations

import numpy as np

from crane_book.claims.registry import Outcome, claim, reason_of
from crane_book.claims.results import (
    AG02_FILES,
    KT_FILES,
    REPRESENTATIVE,
    Results,
    current_profile,
    num,
    pct,
)
from crane_lib.paper_numbers import paper
from crane_lib.parameter_sets import read_conditions
from crane_lib.verdicts import CONTRADICTED, REPRODUCED


def _kt_draws() -> list[dict]:
    """The Kt draws of this profile on the accepted condition that did not fail."""
    from crane_lib.acceptance import kt_sensitivity as kt

    seeds = kt.seeds_of(read_conditions(f"kt_draws_{current_profile()}.csv"))
    records, _ = kt.load_draws(*REPRESENTATIVE, seeds)
    return [r for r in records if "failure" not in r]


def _mne_decomposition(good: list[dict]) -> str:
    """The computed part of the Kt reason: the MNE change fitted linearly on the eight factors."""
    good = [r for r in good if "factors" in r]
    if len(good) < 10:  # eight factors and an offset need more draws than that
        return ""
    factors = np.array([r["factors"] for r in good], dtype=float) - 1.0
    change = 100.0 * np.array([r["mne_change"] for r in good], dtype=float)
    design = np.c_[factors, np.ones(len(good))]
    coef, *_ = np.linalg.lstsq(design, change, rcond=None)
    fitted = design @ coef
    r2 = 1.0 - np.sum((change - fitted) ** 2) / np.sum((change - change.mean()) ** 2)
    top = np.argsort(-np.abs(coef[:-1]))[:2]
    return (
        " A linear fit on the eight factors explains "
        f"{num(100 * r2, 2)} % of the MNE change; it is "
        "carried by "
        + " and ".join(f"axis {j + 1} ({num(coef[j] / 100, 2)} % per 1 % error)" for j in top)
        + "."
    )


@claim(
    "kt_sensitivity",
    "Sec. VII-D and Conclusion",
    "Independent per-axis perturbations of the uncalibrated torque constants barely change "
    "held-out MNE.",
    ("kt_perturbation_range", "kt_perturbation_draws", "kt_mne_change_max"),
    "chapters/10_kt_sensitivity",
    "kt-independent-per-axis-errors",
    KT_FILES,
    reason=("book/register_reproducibility", "reg-repro-why-kt-errors-move-held-out"),
)
def _kt_sensitivity(results: Results) -> Outcome:
    """The Kt draws of this profile on the accepted condition (results/kt_draws): the largest
    change of held-out MNE relative to the unperturbed estimate. Reproduced when it is within the
    paper's bound (kt_mne_change_max); contradicted otherwise."""
    good = _kt_draws()
    if not good:
        return Outcome.missing(
            f"this build has no Kt draws of {REPRESENTATIVE[0]} (results/kt_draws)"
        )
    mne = 100.0 * max(abs(r["mne_change"]) for r in good)
    small = mne <= paper("kt_mne_change_max").value
    return Outcome(
        REPRODUCED if small else CONTRADICTED,
        f"MNE changes by at most {pct(mne)} over {len(good)} draws",
        f"The largest held-out MNE change is {'within' if small else 'above'} the paper's "
        f"{paper('kt_mne_change_max').text()}.",
        "" if small else reason_of(_mne_decomposition, good).strip(),
    )


@claim(
    "kt_uniform_scales",
    "Sec. VII-D",
    "A uniform error in the torque constants scales the least-squares solution by the same factor "
    "and nothing else.",
    ("kt_correction_factor", "kt_perturbation_range"),
    "chapters/10_kt_sensitivity",
    "kt-a-uniform-error-the-exact-argument",
    (AG02_FILES,),
)
def _kt_uniform_scales(results: Results) -> Outcome:
    """OLS of AG02 at 40 ms on its torque and on the torque scaled by 1 ± the draws' half-width
    (`identification.ols`): reproduced when each estimate equals the factor times the unscaled one
    to 10⁻⁹ of its largest entry, contradicted otherwise."""
    from crane_lib.acceptance import kt_sensitivity as kt
    from crane_lib.identification import condition
    from crane_lib.identification.ols import ols, stack

    if not condition.recording_path("AG02").exists():
        return Outcome.missing("this build has no recording of AG02")
    bundle = condition.condition_bundle("AG02", 0.040)
    regressor = results.model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)
    w_all, y = stack(regressor, bundle.tau)
    nominal = ols(w_all, y, list(results.model.names)).parameters.values
    deviations = []
    for factor in (1 - kt.half_width(), 1 + kt.half_width()):
        w_k, y_k = stack(regressor, factor * np.asarray(bundle.tau))
        scaled = ols(w_k, y_k, list(results.model.names)).parameters.values
        deviations.append(
            float(np.max(np.abs(scaled - factor * nominal)) / np.max(np.abs(factor * nominal)))
        )
    worst = max(deviations)
    return Outcome(
        REPRODUCED if worst < 1e-9 else CONTRADICTED,
        f"largest deviation from factor × estimate: {num(worst, 2)} of the largest entry",
        "OLS is linear in the torque, so a uniform error is invisible to every check that is "
        "homogeneous in it; only an absolute calibration could reveal it.",
    )


@claim(
    "kt_verdict_flips",
    "Sec. VII-D and Conclusion",
    "Independent per-axis perturbations of the torque constants change the PD verdict of the OLS "
    "estimate in some trials, not in all.",
    ("kt_verdict_flip_count", "kt_perturbation_draws"),
    "chapters/10_kt_sensitivity",
    "kt-independent-per-axis-errors",
    KT_FILES,
)
def _kt_verdict_flips(results: Results) -> Outcome:
    """The Kt draws of this profile (results/kt_draws): reproduced when some, but not all, draws
    give the OLS estimate the other audit verdict over Θ; contradicted otherwise."""
    good = _kt_draws()
    if not good:
        return Outcome.missing(
            f"this build has no Kt draws of {REPRESENTATIVE[0]} (results/kt_draws)"
        )
    flips = sum(bool(r.get("verdict_flipped")) for r in good)
    some = 0 < flips < len(good)
    return Outcome(
        REPRODUCED if some else CONTRADICTED,
        f"{flips} of {len(good)} draws flip the verdict",
        f"{'Some but not all' if some else 'None' if flips == 0 else 'All'} of the draws change "
        "the audit verdict of the OLS estimate.",
    )
