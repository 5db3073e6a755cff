"""The download zips are idempotent: a rebuild with the same records leaves their bytes and mtimes
alone; a changed record rewrites its zip."""

from __future__ import annotations

import os
import zipfile

import pytest

from crane_book import downloads

OLD_MTIME_NS = 1_000_000_000 * 10**9  # 2001: any rewrite by the test's bundle is far later


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A results folder of its own with one condition record."""
    folder = tmp_path / "results"
    monkeypatch.setattr(downloads, "RESULTS_DIR", folder)
    monkeypatch.setattr(downloads, "DOWNLOADS_DIR", folder / "downloads")
    record = folder / "conditions" / "one.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"value": 2}', encoding="utf-8")
    return folder


def _aged(path):
    """Set `path`'s mtime far in the past, so that a rewrite shows whatever the clock's grain."""
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    return path.stat()


def test_an_unchanged_rebuild_leaves_the_zips_bytes_and_mtimes_alone(results):
    made = downloads.bundle_all()
    assert set(made) == {"conditions", "all"}
    before = {kind: (_aged(path), path.read_bytes()) for kind, path in made.items()}
    again = downloads.bundle_all()
    assert again == made
    for kind, path in again.items():
        info, data = before[kind]
        after = path.stat()
        assert (after.st_mtime_ns, after.st_ino) == (info.st_mtime_ns, info.st_ino), kind
        assert path.read_bytes() == data
    assert not [p.name for p in downloads.DOWNLOADS_DIR.iterdir() if p.name.startswith(".")]


def test_a_changed_record_rewrites_its_zip(results):
    path = downloads.bundle("conditions")
    _aged(path)
    (results / "conditions" / "one.json").write_text('{"value": 3}', encoding="utf-8")
    assert downloads.bundle("conditions") == path
    assert path.stat().st_mtime_ns != OLD_MTIME_NS
    with zipfile.ZipFile(path) as archive:
        assert archive.read("conditions/one.json") == b'{"value": 3}'


def test_a_damaged_zip_of_the_same_size_is_rewritten(results):
    path = downloads.bundle("conditions")
    good = path.read_bytes()
    path.write_bytes(bytes(len(good)))  # same size, other bytes
    _aged(path)
    downloads.bundle("conditions")
    assert path.read_bytes() == good and path.stat().st_mtime_ns != OLD_MTIME_NS


def test_a_profiles_zips_hold_the_records_of_its_conditions(results, monkeypatch):
    """A folder may hold both profiles' records (a full build, then a quick one): a profile's
    zips hold the records its lists name; without a profile, every record of the folder."""
    import crane_lib.paths
    from crane_lib.identification import clie, condition

    monkeypatch.setattr(condition, "CONDITIONS_DIR", results / "conditions")
    monkeypatch.setattr(crane_lib.paths, "RESULTS_DIR", results)
    for trajectory in ("AG01", "AG02"):  # AG02 at 40 ms is in both profiles, AG01 in the full
        for path in (
            condition.condition_record_path(trajectory, 0.04),
            clie.record_path(trajectory, 0.04),
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}", encoding="utf-8")

    def names(kind, profile):
        with zipfile.ZipFile(downloads.bundle(kind, profile)) as archive:
            return sorted(n for n in archive.namelist() if n != "MANIFEST.txt")

    assert names("conditions", "quick") == ["conditions/AG02_run1_40ms.json"]
    assert names("clie", "quick") == ["clie/fast/AG02_run1_40ms.json"]
    assert names("all", "quick") == [
        "clie/fast/AG02_run1_40ms.json",
        "conditions/AG02_run1_40ms.json",
    ]
    full = ["conditions/AG01_run1_40ms.json", "conditions/AG02_run1_40ms.json"]
    assert names("conditions", "full") == full
    assert names("conditions", None) == [*full, "conditions/one.json"]  # the fixture's
