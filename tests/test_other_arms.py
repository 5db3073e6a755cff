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
from crane_lib.model.arm_description import load_arm
from crane_lib.model.chain_model import derive_grouping
from crane_lib.reporting import other_arms as view


@pytest.fixture(scope="module")
def records():
    return [other_arms.arm_record(key) for key in other_arms.ARM_KEYS]


def test_each_record_is_computed_from_the_arm_and_its_files(records):
    by_arm = {r["arm"]: r for r in records}
    for key, record in by_arm.items():
        arm = load_arm(key)
        grouping = derive_grouping(arm)
        assert record["model"]["base_names"] == list(grouping.base_names)
        assert record["model"]["n_standard"] == len(arm.standard_parameter_names())
        assert record["description"]["n_axes"] == arm.n_axes
        assert len(record["excitation"]["peak_torque_share"]) == arm.n_axes
        assert record["excitation"]["rank"] == record["model"]["n_base"]  # the blocks suffice
    assert len(by_arm["crane_x7"]["excitation"]["files"]) == 40
    assert by_arm["crane_x7"]["model"]["n_base"] == 65
    for key in ("vx300s", "so101"):
        assert len(by_arm[key]["excitation"]["files"]) == len(arm_excitation.BLOCK_FILES)


def test_the_key_names_every_description_and_command_file():
    for key in other_arms.ARM_KEYS:
        files = other_arms.input_files(key)
        assert all(f.is_file() for f in files), key
        assert len({f.name for f in files if f.suffix == ".txt"}) == (
            40 if key == "crane_x7" else len(arm_excitation.BLOCK_FILES)
        )


def test_the_step_writes_each_record_once_and_the_same_bytes(tmp_path):
    folder = tmp_path / "other_arms"
    first = pipeline.other_arms_step(folder)
    assert (first.recomputed, first.reused) == (3, 0)
    written = {p.name: p.read_bytes() for p in folder.glob("*.json")}
    assert sorted(written) == [f"{k}.json" for k in sorted(other_arms.ARM_KEYS)]
    again = pipeline.other_arms_step(folder)
    assert (again.recomputed, again.reused) == (0, 3)
    (folder / "so101.json").unlink()
    third = pipeline.other_arms_step(folder)
    assert (third.recomputed, third.reused) == (1, 2)
    assert (folder / "so101.json").read_bytes() == written["so101.json"]
    json.loads(written["vx300s.json"])


def test_views_read_the_records_and_name_a_missing_one(tmp_path, records):
    for record in records:
        (tmp_path / f"{record['arm']}.json").write_text(json.dumps(record))
    loaded = view.load_records(tmp_path)
    frame = view.arms_frame(loaded)
    assert list(frame.index) == [r["description"]["name"] for r in records]
    assert "Every arm's base parameters are all excited" in view.rank_sentence(loaded)
    (tmp_path / "so101.json").unlink()
    with pytest.raises(InputError, match="so101.json"):
        view.load_records(tmp_path)


def test_a_rank_deficit_and_a_torque_beyond_the_limit_are_said(records):
    changed = copy.deepcopy(records)
    excitation = changed[1]["excitation"]
    excitation["rank"] -= 1
    excitation["unexcited"] = ["MXR4"]
    excitation["peak_torque_share"] = list(np.array(excitation["peak_torque_share"]) * 3)
    assert "Not full rank" in view.rank_sentence(changed)
    assert "MXR4" in view.rank_sentence(changed)
    assert "exceed a servo" in view.torque_sentence(changed)
    assert "stay within" in view.torque_sentence(records)
