"""A record's key is what decides it and nothing more (crane_book.keys): the source of the
modules its computing code imports, transitively, its inputs and parameters; and a stale record
says which of them changed."""

from __future__ import annotations

import json

import pytest

from crane_book import keys, pipeline
from crane_lib import arithmetic, source_graph
from crane_lib.paths import REPO_ROOT


@pytest.fixture(scope="module")
def step_code():
    return {
        step: {name.partition(" ")[2] for name in parts if name.startswith("code ")}
        for step, parts in pipeline.step_code().items()
    }


def test_every_data_step_has_code_and_none_reads_a_chapter_or_a_view(step_code):
    views = sorted(
        p.relative_to(REPO_ROOT).as_posix()
        for p in (REPO_ROOT / "crane_lib" / "reporting").rglob("*.py")
    )
    assert len(views) > 10
    for step, files in step_code.items():
        assert files, step
        assert not [f for f in files if f.startswith("chapters/")], step
        assert not set(views) & files, f"{step} is keyed by the views {sorted(set(views) & files)}"


def test_editing_clie_reruns_the_clie_sweep_and_its_readers_not_the_ols_sweep_or_the_recordings(
    step_code,
):
    clie = "crane_lib/identification/clie.py"
    for step in ("clie", "accepted", "claims"):
        assert clie in step_code[step], step
    for step in ("ols_sdp", "recordings"):
        assert clie not in step_code[step], step
    # and the OLS/SDP sweep is keyed by OLS itself
    assert "crane_lib/identification/ols.py" in step_code["ols_sdp"]


def test_the_closure_follows_imports_transitively_and_includes_the_packages():
    closure = source_graph.closure(["crane_lib.identification.condition"])
    assert "crane_lib.identification.ols" in closure  # imported directly
    assert "crane_lib.model.base_parameters" in closure  # through model.dynamics
    assert {"crane_lib", "crane_lib.identification"} <= set(closure)  # run by the import
    assert "crane_lib.identification.clie" not in closure


def test_a_notebook_outside_the_package_is_keyed_by_what_it_imports(tmp_path):
    notebook = tmp_path / "condition.py"
    notebook.write_text(
        "# %%\n%matplotlib inline\nfrom crane_lib.identification import ols\n", encoding="utf-8"
    )
    parts = keys.record_key(sources=[notebook], parameters={"ts": 0.04}).parts
    assert "code crane_lib/identification/ols.py" in parts
    assert "code crane_lib/identification/clie.py" not in parts
    assert parts["parameters"] == json.dumps({"ts": 0.04})


def test_a_stale_record_names_what_changed(tmp_path):
    data = tmp_path / "input.csv"
    data.write_text("1\n", encoding="utf-8")
    store = keys.KeyStore("step", tmp_path / "results")
    key = keys.record_key(
        inputs=[data], parameters={"a": 1}, modules=["crane_lib.identification.ols"]
    )
    assert store.stale("r", key) == ["new"]
    store.store("r", key)
    assert store.stale("r", key) == []
    assert store.stale("r", key, outputs=[tmp_path / "missing.json"]) == [
        f"{tmp_path / 'missing.json'} missing"
    ]
    edited = keys.Key({**key.parts, "code crane_lib/identification/ols.py": "other"})
    assert store.stale("r", edited) == ["crane_lib/identification/ols.py changed"]
    data.write_text("2\n", encoding="utf-8")
    moved = keys.record_key(
        inputs=[data], parameters={"a": 2}, modules=["crane_lib.identification.ols"]
    )
    assert sorted(store.stale("r", moved)) == sorted([f"{data} changed", "parameters changed"])
    # a record computed with other floating-point kernels is stale (the twin's loop amplifies them)
    host = keys.Key({**moved.parts, "arithmetic": "host (OpenBLAS SkylakeX; ...)"})
    store.store("r", moved)
    assert store.stale("r", host) == ["arithmetic changed"]
    assert moved.parts["arithmetic"] == arithmetic.signature()
    log = keys.StepLog("step")
    log.note([])
    log.note(["crane_lib/identification/ols.py changed"])
    assert log.line() == "step: 1 reused, 1 recomputed (crane_lib/identification/ols.py changed: 1)"


def test_the_digest_depends_on_every_part_and_on_nothing_else():
    a = keys.Key({"x": "1", "y": "2"})
    assert a.digest == keys.Key({"y": "2", "x": "1"}).digest
    assert a.digest != keys.Key({"x": "1", "y": "3"}).digest
    assert a.digest != keys.Key({"x": "1"}).digest
