"""The paper's constants are computed from their sources and agree with its rounded text."""

import math

import numpy as np
import pytest

from crane_lib import constants
from crane_lib.paper_numbers import paper


@pytest.mark.parametrize(
    "number_id, computed, decimals",
    [
        ("kt_effective_xm430", constants.XM430_W350.kt, 4),
        ("kt_effective_xm540", constants.XM540_W270.kt, 4),
        ("clamp_torque_xm430", constants.XM430_W350.clamp_torque, 4),
        ("clamp_torque_xm540", constants.XM540_W270.clamp_torque, 4),
        ("realization_bandwidth_rad", constants.REALIZATION_BANDWIDTH_RAD_S, 1),
        ("realization_bandwidth_hz", constants.REALIZATION_BANDWIDTH_HZ, 2),
    ],
)
def test_constant_matches_paper_to_its_printed_digits(number_id, computed, decimals):
    assert round(computed, decimals) == pytest.approx(
        paper(number_id).value, abs=10 ** (-decimals) / 10
    )


def test_velocity_ceilings_from_register_units():
    np.testing.assert_allclose(
        constants.VELOCITY_CEILING_DEG_S[[0, 1]], [274.8, 175.872], rtol=0, atol=1e-9
    )
    assert constants.ACTUATORS[1].model == "XM540-W270"
    assert all(a.model == "XM430-W350" for i, a in enumerate(constants.ACTUATORS) if i != 1)


def test_kt_is_catalogue_times_correction():
    assert constants.XM430_W350.kt == pytest.approx(
        paper("kt_catalogue_xm430").value * paper("kt_correction_factor").value, rel=1e-12
    )
    assert math.isclose(constants.ENCODER_COUNTS, 2 ** paper("encoder_resolution").value)
