"""The demonstration of the report "Your own arm" (acceptance.demonstration): its data step's
bookkeeping, and the page's reader naming the step when a file is missing."""

from __future__ import annotations

import json

import pytest

from crane_book import pipeline
from crane_lib.acceptance import demonstration
from crane_lib.errors import InputError


def _stand_in(calls):
    """Writes the three files the real step writes, and counts its calls."""

    def write(trajectory=demonstration.DEMO_TRAJECTORY, ts=0.04, refine="fast", directory=None):
        calls.append(trajectory)
        paths = demonstration.demonstration_paths(trajectory, directory)
        paths["log"].parent.mkdir(parents=True, exist_ok=True)
        paths["log"].write_bytes(b"log")
        paths["model"].write_text("name,value\n", encoding="utf-8")
        record = {"verdict": "ACCEPTED", "final_audits": []}
        paths["record"].write_text(json.dumps(record), encoding="utf-8")
        return record

    return write


def test_the_step_records_the_demonstration_once(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(demonstration, "write_demonstration", _stand_in(calls))
    folder = tmp_path / "your_arm"
    first = pipeline.your_arm_step(folder)
    assert (first.recomputed, first.reused) == (1, 0) and calls == ["AP01"]
    again = pipeline.your_arm_step(folder)
    assert (again.recomputed, again.reused) == (0, 1) and len(calls) == 1
    demonstration.demonstration_paths(directory=folder)["model"].unlink()
    third = pipeline.your_arm_step(folder)  # a missing output is recomputed
    assert third.recomputed == 1 and len(calls) == 2
    record, paths = demonstration.load_demonstration(directory=folder)
    assert record["verdict"] == "ACCEPTED" and paths["log"].name == "AP01_emulator.csv.gz"


def test_a_missing_demonstration_names_the_file_and_the_step(tmp_path):
    with pytest.raises(InputError, match="AP01_emulator.csv.gz.*your arm"):
        demonstration.load_demonstration(directory=tmp_path)
