"""The faithful CLIE study beside the fast: pairing by condition, its numbers, none if absent."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import paths
from crane_lib.identification import clie
from crane_lib.records import write_json_record
from crane_lib.reporting.chapters import clie as clie_study


def _record(trajectory, ts, x, objective, wall, start, ols, route="O-C"):
    return {
        "trajectory": trajectory,
        "ts": ts,
        "run": 1,
        "route": route,
        "kappa": 10.0,
        "names": ["A", "B", "C"],
        "ols": list(ols),
        "start": list(start),
        "clie_x": list(x),
        "clie_objective_final": objective,
        "clie_iterations": 3,
        "clie_wall_time_s": wall,
    }


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    return tmp_path


def test_no_faithful_records_gives_no_numbers(results):
    write_json_record(
        clie.record_path("AP01", 0.04, 1, "fast"),
        _record("AP01", 0.04, [1, 2, 3], 1.0, 1.0, [1, 2, 3], [1, 2, 3]),
    )
    study = clie_study.faithful_beside_fast()
    assert study.empty and study.n_fast == 1 and study.n_faithful == 0
    assert study.summary() == {}


def test_pairs_conditions_and_computes_gaps_and_distances(results):
    ols = {
        ("AP01", 0.04): [1.0, 2.0, 3.0],
        ("AG02", 0.04): [2.0, 1.0, 5.0],
        ("PB01", 0.08): [0.0, 3.0, 4.0],
    }
    for (name, ts), o in ols.items():
        write_json_record(
            clie.record_path(name, ts, 1, "fast"),
            _record(name, ts, np.add(o, 0.1), 2.02, 1.0, o, o),
        )
        if name != "PB01":  # PB01 has no faithful record: not paired
            write_json_record(
                clie.record_path(name, ts, 1, "clie"),
                _record(name, ts, np.add(o, 0.2), 2.0, 10.0, o, o),
            )
    study = clie_study.faithful_beside_fast()
    assert len(study.table) == 2 and study.n_fast == 3 and study.n_faithful == 2
    assert np.allclose(study.table["objective gap (%)"], 1.0)
    scale = np.std([ols[("AG02", 0.04)], ols[("AP01", 0.04)]], axis=0, ddof=1)
    assert np.allclose(study.table["|fast - faithful|"], np.linalg.norm(0.1 / scale))
    assert np.allclose(study.table["|faithful - start|"], np.linalg.norm(0.2 / scale))
    summary = study.summary()
    assert summary["conditions"] == 2 and summary["tolerance_percent"] == 0.5
    assert summary["within"] == 0 and summary["lower"] == 0  # the fast route 1 % above
    assert np.isclose(summary["gap_median"], 1.0) and np.isclose(summary["wall_time_ratio"], 10.0)
    assert np.isclose(summary["distance_share_median"], 0.5)
    import matplotlib

    matplotlib.use("Agg")
    assert clie_study.plot_clouds(study) is not None
