"""The views of the paper items completed late: Table VI's substitute SDP row, Table XVII,
Table XIX with the twin's Joint-7 fit, and the twin-vs-arm note's sizes read from data."""

from __future__ import annotations

import numpy as np
import pandas as pd

from crane_lib.model.controller import JointModel
from crane_lib.reporting.chapters import clie, ols_sdp, preprocessing, validation
from crane_lib.twin.truth import load_plant_settings


def test_a_substitute_stage_goes_between_ols_and_clie():
    vectors = {"OLS": np.zeros(2), "CLIE": np.ones(2), "rescue": np.full(2, 2.0)}
    out = clie.with_stage(vectors, "SDP on AP01 at 80 ms, run 1", [5.0, 6.0])
    assert list(out) == ["OLS", "SDP on AP01 at 80 ms, run 1", "CLIE", "rescue"]
    np.testing.assert_array_equal(out["SDP on AP01 at 80 ms, run 1"], [5.0, 6.0])


def test_table_xvii_holds_ap01_and_ag02_at_40_ms_of_the_first_execution():
    rows = [
        ("AG02", 1, 40, 33.8, "O-C", "—"),
        ("AP01", 1, 40, 57.6, "O-S-C", "0.002"),
        ("AP01", 2, 40, 60.0, "O-C", "—"),
        ("AP01", 1, 80, 58.5, "O-S-C", "0.001"),
        ("PB01", 1, 40, 97.5, "O-C", "—"),
    ]
    table = pd.DataFrame(rows, columns=["trajectory", "run", "Ts (ms)", "κ", "route", "ε"])
    frame = ols_sdp.table_xvii(table).frame
    assert list(frame.index) == ["AP01", "AG02"]
    assert frame.loc["AP01", "κ"] == 57.6 and frame.loc["AP01", "ε (kg·m²)"] == "0.002"
    assert frame.loc["AG02", "route"] == "O-C"


def test_table_xix_shows_every_axis_and_the_twins_joint_seven_fit():
    fitted = JointModel(gain=40.0, time_constant=0.2, dead_time=0.002)
    frame = preprocessing.table_xix(fitted).frame
    assert list(frame.index) == [str(j) for j in range(1, 9)] + ["7 (twin)"]
    assert frame.loc["7 (twin)", "K_p ((rad/s)/(N·m))"] == 40.0
    np.testing.assert_allclose(frame.loc["7 (twin)", "M̂ (N·m·s²/rad)"], 0.2 / 40.0)
    assert len(preprocessing.table_xix().frame) == 8


def test_the_twin_note_carries_the_torque_constant_error_read_from_data():
    plant = load_plant_settings()
    off = 100 * np.abs(plant.kt_true / plant.kt_logged - 1)
    text = str(validation.twin_records())
    assert format(off.max(), ".2g") in text and "N·m per axis" in text
