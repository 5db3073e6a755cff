"""Which model class the data support: the nested base-parameter sets fitted side by side
(Table III) and the contributions of the full model's terms to the torque (Sec. III-D)."""

from __future__ import annotations

import numpy as np

from crane_lib.identification.metrics import pooled_rmse
from crane_lib.identification.ols import ols, stack
from crane_lib.model.base_parameters import PARAMETER_SETS, PRODUCT_KINDS
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import split_name

# ------------------------------------------------------------------ Table III

# the seven identification trajectories of Table III: the text names none; our choice spans the
# five families (register "identification")
TABLE_III_TRAJECTORIES = ("PA01", "PB01", "PC01", "AP01", "AP03", "AG01", "AG02")


def compare_model_classes(
    fit_bundles: dict, heldout_bundles: list, parameter_sets=PARAMETER_SETS
) -> list[dict]:
    """Fit each nested model class by OLS on each trajectory; predict the held-out records.

    One row per (trajectory, parameter set): kappa, in-sample residual RMS and pooled
    held-out RMSE (Table III).
    """
    rows = []
    for set_name in parameter_sets:
        model = DynamicModel(set_name)
        for trajectory, bundle in fit_bundles.items():
            fit = ols(
                *stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau),
                model.names,
            )
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
    products = np.array([split_name(n)[0] in PRODUCT_KINDS for n in full.names])
    retained = np.array([n in reduced_names for n in full.names])

    def share(columns):
        return (
            100.0
            * float(np.sqrt(np.mean((regressor[:, :, columns] @ beta[columns]) ** 2)))
            / torque_rms
        )

    return {
        "products": share(products),
        "retained": share(retained),
        "residual": 100.0 * fit.residual_rms / torque_rms,
    }
