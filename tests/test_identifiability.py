"""Appendix B-A's two checks on the regressor itself: no entry needs three moving joints
(polarization identity of the velocity part), and two-joint motions give full rank. Each check
is shown to fail on a made-up regressor that breaks it."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.model import identifiability
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import CATEGORIES, category


class _ThreeJointTerm:
    """A regressor whose last column is qd1*qd2*qd3 (cubic: needs three joints moving) and whose
    other columns are the joints' squared velocities and accelerations."""

    n_parameters = 9
    names = [f"X{k}" for k in range(9)]

    def regressor(self, q, qd, qdd, gravity=True):
        q, qd, qdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
        out = np.zeros((len(q), 8, self.n_parameters))
        out[:, 0, :7] = qd[:, :7] ** 2 + qdd[:, :7]
        out[:, 1, 7] = qdd[:, 7]
        out[:, 2, 8] = qd[:, 0] * qd[:, 1] * qd[:, 2]
        return out


@pytest.mark.parametrize("parameter_set", ["reduced"])
def test_the_arms_regressor_meets_mayedas_condition(parameter_set):
    model = DynamicModel(parameter_set)
    assert identifiability.polarization_violation(model, n_states=200) < 1e-9
    assert identifiability.rank_with_two_joints_moving(model, n_states=1500) == model.n_parameters


def test_a_three_joint_term_is_caught_by_both_checks():
    fake = _ThreeJointTerm()
    assert identifiability.polarization_violation(fake, n_states=200) > 1e-3
    assert identifiability.rank_with_two_joints_moving(fake, n_states=500) == fake.n_parameters - 1


def test_table_ii_categories():
    assert [category(n) for n in ("ZZR1", "XXR2", "MYR7", "XY3", "IA3", "FS1", "FV7", "IA8")] == [
        CATEGORIES[0],
        CATEGORIES[0],
        CATEGORIES[1],
        CATEGORIES[2],
        CATEGORIES[3],
        CATEGORIES[4],
        CATEGORIES[5],
        CATEGORIES[5],
    ]
    with pytest.raises(ValueError, match="no Table II category"):
        category("M3")
