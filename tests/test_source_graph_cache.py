"""The import graph kept on disk (`source_graph.stored_graph`): read back while the sources are
unchanged, recomputed when they changed, and never trusted when the file is damaged."""

from __future__ import annotations

import json

from crane_lib import source_graph


def test_the_stored_graph_is_the_computed_one_and_is_read_back(tmp_path):
    file = tmp_path / "graph.json"
    computed = source_graph.import_graph()
    assert source_graph.stored_graph(file) == computed  # computed and written
    stored = json.loads(file.read_text(encoding="utf-8"))
    assert stored["key"] == source_graph.sources_key()
    # read back, not recomputed: an entry planted under the current key comes back
    stored["graph"]["crane_lib.planted"] = ["crane_lib.paths"]
    file.write_text(json.dumps(stored), encoding="utf-8")
    assert source_graph.stored_graph(file)["crane_lib.planted"] == {"crane_lib.paths"}


def test_a_graph_of_other_sources_or_a_damaged_file_is_recomputed(tmp_path):
    file = tmp_path / "graph.json"
    computed = source_graph.import_graph()
    file.write_text(json.dumps({"key": "other sources", "graph": {"a": ["b"]}}), encoding="utf-8")
    assert source_graph.stored_graph(file) == computed
    assert json.loads(file.read_text(encoding="utf-8"))["key"] == source_graph.sources_key()
    for damaged in ("{not json", "[]", json.dumps({"key": source_graph.sources_key()})):
        file.write_text(damaged, encoding="utf-8")
        assert source_graph.stored_graph(file) == computed


def test_the_key_changes_with_any_source_file(tmp_path, monkeypatch):
    package = tmp_path / "crane_lib"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n", encoding="utf-8")
    (package / "sub" / "b.py").write_text("y = 2\n", encoding="utf-8")
    monkeypatch.setattr(source_graph, "PACKAGE_DIR", package)
    first = source_graph.sources_key()
    (package / "sub" / "b.py").write_text("y = 3\n", encoding="utf-8")
    assert source_graph.sources_key() != first


def test_an_unwritable_cache_folder_still_gives_the_graph(tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("", encoding="utf-8")
    assert source_graph.stored_graph(blocker / "graph.json") == source_graph.import_graph()
    assert list(tmp_path.iterdir()) == [blocker]
