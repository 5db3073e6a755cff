"""The default data set: the profiles (Table XI repeats), content caching, bad profile files."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.paper_numbers import paper
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import dataset


def test_full_profile_holds_every_file_and_the_repeats_of_table_xi():
    runs = Counter(e.trajectory for e in dataset.executions("full"))
    identification = sorted(
        p.stem for p in TRAJECTORY_DIR.glob("*.txt") if not p.stem.startswith("V")
    )
    assert len(identification) == 40 and all(runs[name] >= 1 for name in identification)
    assert runs["PB01"] == paper("pb01_execution_count").value
    assert runs["AP03"] == paper("ap03_execution_count").value
    assert runs["AG02"] == paper("ag02_execution_count").value
    assert sum(1 for name in identification if runs[name] > 1) == paper("repeated_traj_count").value
    assert all(runs[v] == paper("validation_exec_per_traj").value for v in ("V01", "V02", "V03"))
    seeds = [e.seed for e in dataset.executions("full")]
    assert len(set(seeds)) == len(seeds)  # every execution its own draw
    quick = {(e.trajectory, e.run): e.seed for e in dataset.executions("quick")}
    full = {(e.trajectory, e.run): e.seed for e in dataset.executions("full")}
    assert all(full[key] == seed for key, seed in quick.items())


def test_recordings_are_cached_by_content(tmp_path, monkeypatch):
    params = tmp_path / "params"
    params.mkdir()
    (params / "recordings_quick.csv").write_text("trajectory,run,seed\nAP01,1,5\n")
    monkeypatch.setattr(dataset, "PAPERMILL_PARAMS_DIR", params)
    out = tmp_path / "recordings"
    manifest = dataset.build("quick", jobs=1, directory=out, progress=False)
    log = out / "AP01_run1.npz"
    first = log.stat().st_mtime_ns
    text = manifest.read_text()
    assert "AP01,1,5,AP01_run1.npz" in text
    dataset.build("quick", jobs=1, directory=out, progress=False)
    assert log.stat().st_mtime_ns == first and manifest.read_text() == text  # nothing redone
    (params / "recordings_quick.csv").write_text("trajectory,run,seed\nAP01,1,6\n")
    dataset.build("quick", jobs=1, directory=out, progress=False)
    assert log.stat().st_mtime_ns != first  # the seed changed: recorded again
    assert dataset.stored_metadata(log)["seed"] == "6"
    assert np.load(log)["samples"].shape[1] == 106


def test_bad_profile_file_names_the_line(tmp_path, monkeypatch):
    params = tmp_path / "params"
    params.mkdir()
    (params / "recordings_quick.csv").write_text(
        "# comment\ntrajectory,run,seed\nAP01,1,5\nNOPE,1,6\n"
    )
    monkeypatch.setattr(dataset, "PAPERMILL_PARAMS_DIR", params)
    with pytest.raises(InputError, match=r"recordings_quick.csv:4.*NOPE"):
        dataset.executions("quick")
    (params / "recordings_quick.csv").write_text("trajectory,run,seed\nAP01,x,5\n")
    with pytest.raises(InputError, match=r"recordings_quick.csv:2"):
        dataset.executions("quick")
