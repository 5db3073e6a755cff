"""What the twin produces against the paper (`acceptance.twin_calibration`), and chapter 03's view
of it:
controller (2) re-run on logged cycles gives the logged commands, the calibration quantities
of a log, the spectrum's share above a corner, the bundles preprocessed again, and the tables
the view makes of the record."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crane_lib.acceptance import twin_calibration as calibration
from crane_lib.logs import preprocessing
from crane_lib.logs.raw_log import read_raw_log, write_raw_log
from crane_lib.model.controller import load_realization_constants
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.reporting.chapters import preprocessing as view
from crane_lib.twin import recorder as twin

AP01 = TRAJECTORY_DIR / "AP01.txt"


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    samples, metadata = twin.record(AP01, seed=11)
    return write_raw_log(tmp_path_factory.mktemp("logs") / "AP01.npz", samples, metadata)


@pytest.fixture(scope="module")
def log(log_path):
    return read_raw_log(log_path)


def _logged(log, replay, group):
    return log.column_group(group)[replay.samples]


def test_controller_2_rerun_on_logged_cycles_commands_what_the_log_holds(log):
    first = log.n_samples // 2
    replay = calibration.replay_law(log, first, 25)
    assert list(replay.samples) == list(range(first, first + 25))
    np.testing.assert_allclose(replay.feedforward, _logged(log, replay, "u_feedforward"))
    np.testing.assert_allclose(
        replay.feedback, _logged(log, replay, "u_feedback"), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_array_equal(replay.units, _logged(log, replay, "goal_current_units"))
    assert np.abs(replay.units).max() > 0  # the arm is moving: a real check, not zeros


def test_another_gain_commands_otherwise(log):
    other = load_realization_constants().with_gains(k_p=2000.0)
    replay = calibration.replay_law(log, log.n_samples // 2, 25, constants=other)
    assert not np.allclose(replay.feedback, _logged(log, replay, "u_feedback"))


def test_the_calibration_quantities_of_a_log(log):
    s = calibration.summary(log)
    assert s["realized_s"] >= s["commanded_s"] > 0 and s["record_s"] > s["realized_s"]
    assert 0 <= s["clamp_share_percent"] < 100 and s["peak_speed_rad_s"] > 0
    assert 0 < s["residual_share_percent"] < 100
    assert math.isnan(calibration.summary(log, with_residual=False)["residual_share_percent"])


def test_power_share_above_a_corner():
    f = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    density = np.array([[9.0, 1.0], [1.0, 1.0], [1.0, 1.0], [2.0, 1.0], [0.0, 1.0]])
    np.testing.assert_allclose(calibration.power_share_above(f, density, 2.5), [50.0, 50.0])


def test_the_residual_spectrum_of_a_bundle(log):
    spectrum = calibration.residual_spectrum(preprocessing.preprocess(log, 0.010), nperseg=256)
    assert spectrum.psd.shape == (spectrum.frequency_hz.size, 8)
    assert np.all((spectrum.above_percent >= 0) & (spectrum.above_percent <= 100))
    assert 0 < spectrum.share_percent < 100


def test_the_bundles_preprocessed_again_are_byte_identical(log_path, tmp_path, monkeypatch):
    monkeypatch.setattr(preprocessing, "BUNDLE_DIR", tmp_path / "bundles")
    digests = calibration.bundle_digests(log_path, reruns=1)
    assert set(digests) == {repr(ts) for ts in preprocessing.INTERVALS_S}
    assert all(len(d) == 2 and d[0] == d[1] for d in digests.values())


def _record():
    row = {
        "commanded_s": 100.0,
        "realized_s": 106.0,
        "record_s": 118.0,
        "clamp_share_percent": 0.9,
        "peak_speed_rad_s": 4.5,
    }
    return {
        "calibration": [
            {"trajectory": "AG02", "run": 1, **row, "residual_share_percent": 30.2},
            {"trajectory": "AG02", "run": 2, **row, "residual_share_percent": 30.6},
            {"trajectory": "V01", "run": 1, **row, "residual_share_percent": float("nan")},
        ],
        "realization": [
            {
                "trajectory": "AG02",
                "run": 1,
                "in_position_timeouts": 0,
                "realized_over_commanded": 1.06,
            },
        ],
        "closed_loop": {"measured_hz": 3.6, "nominal_hz": 3.8},
        "reproduced": {"trajectory": "AG02", "run": 1, "digests": {"0.04": ["a" * 64] * 3}},
    }


def test_the_view_reads_the_record_into_its_tables():
    record = _record()
    runs = view.calibration_runs(record)
    assert runs.loc[("AG02", 1), "realized / commanded"] == pytest.approx(1.06)
    assert view.realization_runs(record).loc[("AG02", 1), "in_position_timeouts"] == 0
    table = view.calibration_against_paper(runs, record["closed_loop"]).markdown()
    assert "30.20 to 30.60" in table and "| 3.60 |" in table
    assert "3.8" in view.gains_against_paper(record["closed_loop"]).markdown()


def test_the_reproduced_table_says_when_a_bundle_differs():
    reproduced = _record()["reproduced"]
    assert "yes" in view.reproduced_table(reproduced).markdown()
    reproduced["digests"]["0.04"][2] = "b" * 64
    assert "NO" in view.reproduced_table(reproduced).markdown()


def test_the_pipeline_step_writes_the_record_once_and_again_when_an_input_changes(
    tmp_path, monkeypatch
):
    from crane_book import pipeline

    recording = tmp_path / "AG02_run1.npz"
    recording.write_bytes(b"first")
    calls = []
    monkeypatch.setattr(calibration, "input_files", lambda profile: [recording])
    monkeypatch.setattr(
        calibration, "calibration_record", lambda profile: calls.append(profile) or {"n": 1}
    )
    folder = tmp_path / "results" / "realization"
    for _ in range(2):
        pipeline.twin_calibration_step("quick", directory=folder)
    assert calls == ["quick"] and (folder / "calibration_quick.json").is_file()
    recording.write_bytes(b"second")
    pipeline.twin_calibration_step("quick", directory=folder)
    assert calls == ["quick", "quick"]
