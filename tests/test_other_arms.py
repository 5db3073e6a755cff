"""The chapter "Other arms": its records (acceptance.other_arms), its data step and its views."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from crane_book import pipeline
from crane_lib.acceptance import other_arms
from crane_lib.errors import InputError
from crane_lib.excitation import arms as arm_excitation
from crane_lib.formatting import DASH
from crane_lib.model import dynamics
from crane_lib.model.arm_description import load_arm
from crane_lib.paths import RESULTS_DIR
from crane_lib.reporting.chapters import other_arms as view


def _fake_algorithm1(key, *args, **kwargs):
    """Algorithm 1's part of a record, stood in (test_algorithm1_arms runs the real one, and
    every book build runs this step)."""
    audits = [{"lambda_min": 1e-3, "passed": True, "seed": s} for s in (1, 2, 3, 4, 5)]
    accepted = {
        "names": ["ZZR1", "MXR2"],
        "ts": 0.04,
        "kappa": 50.0,
        "route": "O-C",
        "refinement": {"method": "fast"},
        "first_audits": audits,
        "final_audits": audits,
        "rescue": None,
        "accepted": True,
        "verdict": "ACCEPTED",
    }
    return {
        "identification": "PI_ALPHA",
        "held_out": ["PI_BETA"],
        "accepted": accepted,
        "held_out_rmse": 0.1,
        "held_out_mne": [0.02],
        "truth": {"names": ["ZZR1"], "relative": [0.05], "median": 0.05},
    }


_real_input_files = other_arms.input_files


@pytest.fixture
def stand_in(monkeypatch):
    """Algorithm 1 stood in; the key reads the shipped files only (no build results here)."""
    monkeypatch.setattr(other_arms, "algorithm1", _fake_algorithm1)
    monkeypatch.setattr(
        other_arms, "crane_x7_algorithm1", lambda profile, times=None: _fake_algorithm1("x")
    )
    monkeypatch.setattr(
        other_arms,
        "arm_record",
        lambda key, profile, directory=None, times=None: {"arm": key, "profile": profile},
    )
    monkeypatch.setattr(
        other_arms,
        "input_files",
        lambda key, profile: [
            f for f in _real_input_files(key, profile) if RESULTS_DIR not in f.parents
        ],
    )


@pytest.fixture(scope="module")
def timed_records():
    """(record, stage times) of the ViperX and the SO-101, Algorithm 1 stood in."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(other_arms, "algorithm1", _fake_algorithm1)
        # the CRANE-X7's record (its 40 files: half a minute) is built by every book build,
        # whose manifest checks its base-parameter count against the paper's
        timed = []
        for key in ("vx300s", "so101"):
            times = other_arms.StageTimes()
            timed.append((other_arms.arm_record(key, "quick", times=times), times.seconds))
        return timed


@pytest.fixture(scope="module")
def records(timed_records):
    return [record for record, _ in timed_records]


def test_the_stages_are_timed_in_order_and_kept_out_of_the_record(timed_records):
    for record, seconds in timed_records:
        assert list(seconds) == ["model and base parameters", "excitation: rank, κ, peak torque"]
        assert all(s > 0 for s in seconds.values())
        assert "seconds" not in json.dumps(record) and '_s"' not in json.dumps(record)


def test_stage_times_add_up_per_name_and_end_at_stop(monkeypatch):
    clock = iter([1.0, 3.0, 3.0, 4.5, 4.5, 10.0, 10.0, 10.25])
    monkeypatch.setattr(other_arms.accepted_stage.time, "perf_counter", lambda: next(clock))
    times = other_arms.StageTimes()
    times.start("identify")  # 1.0
    times.start("audit")  # identify 1.0-3.0, audit from 3.0
    times.start("identify")  # audit 3.0-4.5, identify again from 4.5
    times.stop()  # identify 4.5-10.0
    times.stop()  # nothing running: no clock read
    times.start("score")  # from 10.0
    times.stop()  # 10.0-10.25
    assert times.seconds == {"identify": 7.5, "audit": 1.5, "score": 0.25}


def test_each_record_is_computed_from_the_arm_and_its_files(records):
    by_arm = {r["arm"]: r for r in records}
    for key, record in by_arm.items():
        arm = load_arm(key)
        # the generated model's base parameters (grouping cached on disk), not the record's code
        assert record["model"]["base_names"] == dynamics.model("full", arm=arm).names
        assert record["model"]["n_standard"] == len(arm.standard_parameter_names())
        assert record["description"]["n_axes"] == arm.n_axes
        assert len(record["excitation"]["peak_torque_share"]) == arm.n_axes
        assert record["excitation"]["rank"] == record["model"]["n_base"]  # the blocks suffice
    for key in ("vx300s", "so101"):
        assert len(by_arm[key]["excitation"]["files"]) == len(arm_excitation.BLOCK_FILES)


def test_the_key_names_every_description_command_and_crane_x7_result_file():
    for key in other_arms.ARM_KEYS:
        files = _real_input_files(key, "quick")
        shipped = [f for f in files if RESULTS_DIR not in f.parents]
        assert all(f.is_file() for f in shipped), key
        assert len({f.name for f in shipped if f.suffix == ".txt"}) == (
            40 if key == "crane_x7" else len(arm_excitation.BLOCK_FILES)
        )
        results = {f.name for f in files if RESULTS_DIR in f.parents}
        # the CRANE-X7's row reads the accepted model's record and the V01-V03 recordings
        expected = {"AG02_run1_40ms.json", "V01_run1.npz", "V02_run1.npz", "V03_run1.npz"}
        assert results == (expected if key == "crane_x7" else set())


def test_the_step_writes_each_record_once_and_the_same_bytes(tmp_path, stand_in):
    """The step's bookkeeping (the record's content is the tests above)."""
    folder = tmp_path / "other_arms"
    first = pipeline.other_arms_step("quick", folder)
    assert (first.recomputed, first.reused) == (3, 0)
    written = {p.name: p.read_bytes() for p in folder.glob("*.json")}
    assert sorted(written) == [f"{k}.json" for k in sorted(other_arms.ARM_KEYS)]
    again = pipeline.other_arms_step("quick", folder)
    assert (again.recomputed, again.reused) == (0, 3)
    (folder / "so101.json").unlink()
    third = pipeline.other_arms_step("quick", folder)
    assert (third.recomputed, third.reused) == (1, 2)
    assert (folder / "so101.json").read_bytes() == written["so101.json"]
    full = pipeline.other_arms_step("full", folder)  # the profile decides the held-out blocks
    assert (full.recomputed, full.reused) == (3, 0)
    json.loads(written["vx300s.json"])
    # each computation's stage times, beside the build's own step times, not in the records
    timed = {p.name for p in (tmp_path / "timings").glob("*.json")}
    assert timed == {f"other_arms_{k}.json" for k in other_arms.ARM_KEYS}
    assert set(other_arms.read_stage_times(folder)) == set(other_arms.ARM_KEYS)


@pytest.fixture(scope="module")
def three(records):
    """The views' input: a CRANE-X7 record stood in by the ViperX's under its name, then the two."""
    crane = copy.deepcopy(records[0])
    crane["arm"], crane["description"]["name"] = "crane_x7", "CRANE-X7"
    return [crane, *records]


def test_views_read_the_records_and_name_a_missing_one(tmp_path, three):
    records = three
    for record in records:
        (tmp_path / f"{record['arm']}.json").write_text(json.dumps(record))
    loaded = view.load_records(tmp_path)
    frame = view.arms_frame(loaded)
    assert list(frame.index) == [r["description"]["name"] for r in records]
    assert view.excitation_frame(loaded)["full rank"].all()  # every arm's base parameters
    (tmp_path / "so101.json").unlink()
    with pytest.raises(InputError, match="so101.json"):
        view.load_records(tmp_path)


def test_a_rank_deficit_and_a_torque_beyond_the_limit_are_found(three):
    records = three
    changed = copy.deepcopy(records)
    excitation = changed[1]["excitation"]
    excitation["rank"] -= 1
    excitation["unexcited"] = ["MXR4"]
    excitation["peak_torque_share"] = list(np.array(excitation["peak_torque_share"]) * 3)
    excited = view.excitation_frame(changed)
    name = changed[1]["description"]["name"]
    assert list(excited.index[~excited["full rank"]]) == [name]
    assert excited.loc[name, "unexcited"] == "MXR4"
    torque, within = view.torque_frame(changed), view.torque_frame(records)
    assert torque["peak / limit"].max() > 1 and torque["peak / limit"].idxmax() == name
    assert (within["peak / limit"] <= 1).all()
    share = np.asarray(excitation["peak_torque_share"])
    assert torque.loc[name, "axis"] == int(share.argmax()) + 1


def test_the_algorithm1_views_say_accepted_rescued_and_rejected(three):
    changed = copy.deepcopy(three)
    vx, so = changed[1]["algorithm1"]["accepted"], changed[2]["algorithm1"]["accepted"]
    vx["rescue"] = {"converged": True}
    so["accepted"], so["verdict"] = False, "REJECTED: not PD on seed 2"
    said = view.verdicts(changed)
    assert said.loc["ViperX 300 S", "accepted"] and said.loc["ViperX 300 S", "rescued"]
    assert not said.loc["SO-101", "accepted"]
    assert said.loc["SO-101", "verdict"] == "REJECTED: not PD on seed 2"
    assert said.loc["CRANE-X7", "accepted"] and not said.loc["CRANE-X7", "rescued"]
    frame = view.algorithm1_frame(changed)
    assert list(frame["rescued"]) == ["no", "yes", "no"]
    assert list(frame["accepted"]) == ["yes", "yes", "no"]


def test_the_time_table_shows_each_arms_stages_and_the_cores(three):
    timings = {
        "crane_x7": {"cpu_count": 2, "stages_s": {"held-out error, truth score": 1.234}},
        "vx300s": {
            "cpu_count": 2,
            "stages_s": {"twin recordings": 12.0, "rescue": 3.0, "audit over Theta": 4.0},
        },
    }
    table = view.stage_times_table(three, timings)
    frame = table.frame
    assert frame.loc["held-out error, truth score", "CRANE-X7"] == "1.2"
    assert frame.loc["audit over Θ", "ViperX 300 S"] == "4.0"
    assert frame.loc["rescue", "CRANE-X7"] == DASH and frame.loc["rescue", "ViperX 300 S"] == "3.0"
    assert (frame["SO-101"] == DASH).all()  # no times for it: its record was not computed here
    assert "2 cores" in table.caption
    assert "none here" in view.stage_times_table(three, {}).caption
