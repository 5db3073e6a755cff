"""The book's pages executed side by side before Sphinx (crane_book.pages): the notebook
cached for a page is the one myst-nb reads from it (same reader, same hash), so Sphinx renders
it instead of executing the page again; a page runs again only when its text, its code or the
records changed; a failing page is named and nothing of it is cached."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from crane_book import pages

PAGE = """# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A page

# %% tags=["hide-input"]
import os
print(6 * 7, os.path.basename(os.getcwd()))
"""


def _myst_nb_notebook(path):
    """The notebook myst-nb's Sphinx parser reads from `path` with the book's settings."""
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    formats = yaml.safe_load(pages.CONFIG.read_text(encoding="utf-8"))["sphinx"]["config"][
        "nb_custom_formats"
    ]
    custom = {suffix: (reader, kwargs, False) for suffix, (reader, kwargs) in formats.items()}
    text = path.read_text(encoding="utf-8")
    return create_nb_reader(
        str(path), MdParserConfig(), NbParserConfig(custom_formats=custom), text
    ).read(text)


def test_a_cached_page_is_the_notebook_sphinx_reads(tmp_path):
    from jupyter_cache import get_cache

    folder = tmp_path / "chapter_folder"
    folder.mkdir()
    page = folder / "page.py"
    page.write_text(PAGE, encoding="utf-8")
    seconds = pages.execute_pages(
        1, [page], cache_dir=tmp_path / "cache", seconds_file=tmp_path / "seconds.json"
    )
    assert list(seconds) == [page.as_posix()]
    record = get_cache(str(tmp_path / "cache")).match_cache_notebook(_myst_nb_notebook(page))
    cached = get_cache(str(tmp_path / "cache")).get_cache_bundle(record.pk).nb
    outputs = [o for c in cached.cells if c.cell_type == "code" for o in c.outputs]
    assert (
        outputs and outputs[0]["text"].strip() == "42 chapter_folder"
    )  # run in the page's folder, as myst-nb does


def test_a_page_runs_again_only_when_its_text_its_code_or_the_records_change(tmp_path, monkeypatch):
    results = tmp_path / "results"
    (results / "conditions").mkdir(parents=True)
    record = results / "conditions" / "a.json"
    record.write_text('{"value": 1}', encoding="utf-8")
    monkeypatch.setattr(pages, "RESULTS_DIR", results)
    page = tmp_path / "page.py"
    page.write_text(PAGE, encoding="utf-8")

    def run():
        return list(
            pages.execute_pages(
                1, [page], cache_dir=tmp_path / "cache", seconds_file=tmp_path / "s.json"
            )
        )

    assert run() == [page.as_posix()]
    assert run() == []  # nothing changed
    (results / "recordings").mkdir()
    (results / "recordings" / "big.npz").write_bytes(b"a recording is not a record")
    assert run() == []  # not a record
    record.write_text('{"value": 2}', encoding="utf-8")
    assert run() == [page.as_posix()]
    page.write_text(PAGE.replace("# # A page", "# # A page, its prose corrected"), encoding="utf-8")
    assert run() == [page.as_posix()]
    page.write_text(
        PAGE.replace("import os", "import os\nfrom crane_lib import formatting"), encoding="utf-8"
    )
    assert run() == [page.as_posix()]
    key = pages.page_key(page, "r", "d")
    assert "code crane_lib/formatting.py" in key.parts and "source" in " ".join(key.parts)


def test_a_page_that_writes_under_results_fails_the_step_and_names_the_file(tmp_path, monkeypatch):
    results = tmp_path / "results"
    (results / "conditions").mkdir(parents=True)
    (results / "conditions" / "a.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(pages, "RESULTS_DIR", results)
    reader, writer = tmp_path / "reader.py", tmp_path / "writer.py"
    reader.write_text(PAGE, encoding="utf-8")
    writer.write_text(
        PAGE + f"open({str(results / 'conditions' / 'a.json')!r}, 'w').write('{{}}')\n",
        encoding="utf-8",
    )
    assert list(
        pages.execute_pages(
            1, [reader], cache_dir=tmp_path / "cache", seconds_file=tmp_path / "s.json"
        )
    )
    with pytest.raises(RuntimeError, match=r"pages wrote under .*conditions/a\.json \(rewritten\)"):
        pages.execute_pages(
            1, [reader, writer], cache_dir=tmp_path / "cache", seconds_file=tmp_path / "s.json"
        )
    assert pages.written_under_results({"a": (1, 1)}, {"a": (1, 2), "b": (0, 0)}) == [
        "a (rewritten)",
        "b (created)",
    ]


def test_a_failing_page_is_named_and_not_cached(tmp_path):
    from jupyter_cache import get_cache

    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(PAGE, encoding="utf-8")
    bad.write_text(
        PAGE.replace("print(6 * 7", "raise ValueError('no data for this page'); print(6 * 7"),
        encoding="utf-8",
    )
    with pytest.raises(
        RuntimeError,
        match=r"1 of 2 pages failed:\n.*bad\.py: cell 2 \(of 2\) raised ValueError: no data for "
        r"this page$",
    ):
        pages.execute_pages(
            2, [bad, good], cache_dir=tmp_path / "cache", seconds_file=tmp_path / "seconds.json"
        )
    cache = get_cache(str(tmp_path / "cache"))
    assert cache.match_cache_notebook(_myst_nb_notebook(good)) is not None
    with pytest.raises(KeyError):
        cache.match_cache_notebook(_myst_nb_notebook(bad))


def test_every_jupytext_page_of_the_toc_is_executed_and_the_cache_is_sphinxs():
    listed = [p.relative_to(pages.REPO_ROOT).as_posix() for p in pages.toc_pages()]
    assert (
        "chapters/05_clie.py" in listed
        and "chapters/your_arm.py" in listed
        and "book/bad_input.py" in listed
    )
    assert len(listed) == len(set(listed))
    settings = pages.execution_settings()
    assert (
        settings["cache"] == pages.REPO_ROOT / "_build" / ".jupyter_cache"
        and not settings["allow_errors"]
    )
    assert settings["format"] == "py:percent"  # the chapters' jupytext header says percent


def test_the_slowest_pages_start_first(tmp_path, monkeypatch):
    """Order of submission: the last build's seconds, slowest first; without a last build, the
    pages named in SLOWEST_FIRST, then the table of contents' order."""
    started = []
    monkeypatch.setattr(
        pages,
        "execute_page",
        lambda page, fmt, timeout, allow_errors: (
            started.append(page) or (page, None, "skipped", 0.0)
        ),
    )
    monkeypatch.setattr(pages, "worker_pool", _InlinePool)
    toc = pages.toc_pages()
    with pytest.raises(RuntimeError):
        pages.execute_pages(
            2, toc, cache_dir=tmp_path / "cache", seconds_file=tmp_path / "none.json"
        )
    names = [pages._name(p) for p in started]
    first = len(pages.SLOWEST_FIRST)
    assert names[:first] == list(pages.SLOWEST_FIRST)
    assert names[first:] == [n for n in map(pages._name, toc) if n not in pages.SLOWEST_FIRST]
    (tmp_path / "last.json").write_text(
        '{"chapters/your_arm.py": 40.0, "chapters/03_preprocessing.py": 20.0}', encoding="utf-8"
    )
    started.clear()
    with pytest.raises(RuntimeError):
        pages.execute_pages(
            2, toc, cache_dir=tmp_path / "cache", seconds_file=tmp_path / "last.json"
        )
    assert [pages._name(p) for p in started[:2]] == [
        "chapters/your_arm.py",
        "chapters/03_preprocessing.py",
    ]


class _InlinePool:
    """A worker_pool stand-in that runs each submission at once, in order."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        from concurrent.futures import Future

        future = Future()
        future.set_result(fn(*args))
        return future


def test_an_unreadable_page_is_a_named_failure(tmp_path):
    """A page jupytext cannot even read is reported by name like a failing cell, after the
    others."""
    good, unreadable = tmp_path / "good.py", tmp_path / "unreadable.py"
    good.write_text(PAGE, encoding="utf-8")
    unreadable.write_bytes(b"\xff\xfe not text")
    with pytest.raises(
        RuntimeError, match=r"1 of 2 pages failed:\n.*unreadable\.py: UnicodeDecodeError"
    ):
        pages.execute_pages(
            2,
            [unreadable, good],
            cache_dir=tmp_path / "cache",
            seconds_file=tmp_path / "seconds.json",
        )


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_a_job_count_below_one_is_refused_before_any_page_runs(jobs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pages, "execute_pages", lambda *a, **k: pytest.fail("pages ran"))
    with pytest.raises(SystemExit) as exit_:
        pages.main(["--jobs", jobs])
    assert exit_.value.code == 2 and f"--jobs {jobs}" in capsys.readouterr().err


def _recordings_picked_by_the_folder(source: str) -> list[int]:
    """Lines where a comprehension keeps an item by whether its recording exists on disk."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.comprehension):
            for test in node.ifs:
                for call in ast.walk(test):
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr in ("exists", "is_file")
                        and "recording_path" in ast.unparse(call.func.value)
                    ):
                        found.append(node.target.lineno)
    return found


def _records_read_without_a_profile(source: str) -> list[int]:
    """Lines that read the OLS/SDP or CLIE sweep's records without naming the build's profile
    (`load_condition_records(..., profile=...)`, `clie.load_records(method, profile)`)."""
    found = []
    for call in ast.walk(ast.parse(source)):
        if not isinstance(call, ast.Call):
            continue
        name = ast.unparse(call.func)
        named = any(k.arg == "profile" for k in call.keywords)
        if name.endswith("load_condition_records") and not named:
            found.append(call.lineno)
        if name in ("clie.load_records", "clie.load_failures") and len(call.args) < 2 and not named:
            found.append(call.lineno)
    return found


def test_pages_views_and_claims_read_the_sweeps_records_of_the_profile():
    """A page, view or claim reads the OLS/SDP and CLIE records of the conditions its profile
    lists: a results folder may hold both profiles' records (a key is a record's inputs), and a
    quick build there printed 59 of its numbers from the full profile's conditions."""
    old = "swept = identify.load_condition_records()\nfast = clie.load_records('fast')\n"
    assert _records_read_without_a_profile(old) == [1, 2]  # the rule catches what it forbids
    new = "a = identify.load_condition_records(profile=p)\nb = clie.load_records('fast', p)\n"
    assert _records_read_without_a_profile(new) == []
    root = Path(__file__).resolve().parents[1]
    sources = [
        *sorted((root / "chapters").glob("*.py")),
        *sorted((root / "book").glob("*.py")),
        *sorted((root / "crane_lib" / "reporting").rglob("*.py")),
        *sorted((root / "crane_book" / "claims").glob("*.py")),
    ]
    unnamed = {
        str(p.relative_to(root)): lines
        for p in sources
        if (lines := _records_read_without_a_profile(p.read_text(encoding="utf-8")))
    }
    assert unnamed == {}


def test_pages_views_and_claims_take_their_recordings_from_the_profile_not_the_folder():
    """A page, view or claim keeps the recordings its profile lists, not whatever the recordings
    folder holds: a quick build in a checkout that also holds the full profile's recordings
    preprocesses no execution the quick profile does not record (the pages' read-only guard
    above failed on V01-V03's runs 2 and 3 there)."""
    old = "runs = [r for r in (1, 2, 3) if identify.recording_path(v, r).exists()]\n"
    assert _recordings_picked_by_the_folder(old) == [1]  # the rule catches what it forbids
    root = Path(__file__).resolve().parents[1]
    sources = [
        *sorted((root / "chapters").glob("*.py")),
        *sorted((root / "book").glob("*.py")),
        *sorted((root / "crane_lib" / "reporting").rglob("*.py")),
        *sorted((root / "crane_book" / "claims").glob("*.py")),
    ]
    assert len(sources) > 30
    picked = {
        str(p.relative_to(root)): lines
        for p in sources
        if (lines := _recordings_picked_by_the_folder(p.read_text(encoding="utf-8")))
    }
    assert picked == {}
