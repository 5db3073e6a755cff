"""The book's numbering: its own tables and figures per chapter, the paper's by their numeral.

A two-page Sphinx project built here with the book's extension (crane_book.numbering) shows
the numbers in captions and in {numref} references; the caption helper refuses captions that
would print a number twice."""

from __future__ import annotations

import re

import pytest

from crane_book.numbering import chapter_key, paper_numeral
from crane_lib.reporting import captions
from crane_lib.reporting.tables import Comparison, comparison_table, numbered

CHAPTER = """# Audit

See {numref}`tab-a`, {numref}`tab-p`, {numref}`fig-p` and {numref}`tab-b`; the audit
{eq}`eq-paper-11` and our own {eq}`eq-own`, with the paper's ladder {paper}`eps_pd_ladder`.

$$ \\lambda_\\min > 0 $$ (eq-own)

$$ \\lambda_\\min(\\mathbf M) > 0 $$ (eq-paper-11)

:::{table} the book's first
:name: tab-a

| a | b |
|---|---|
| 1 | 2 |
:::

:::{table} the paper's ninth
:name: tab-p
:class: results paper-ix

| a | b |
|---|---|
| 1 | 2 |
:::

:::{table} the book's second, no name

| a | b |
|---|---|
| 1 | 2 |
:::

```{figure} x.png
:name: fig-p
:figclass: paper-3b

the paper's Fig. 3(b)
```

:::{table} the book's third
:name: tab-b

| a | b |
|---|---|
| 1 | 2 |
:::
"""

ARM = """# Arm

:::{table} the arm's first

| a | b |
|---|---|
| 1 | 2 |
:::

Back to {numref}`tab-p`.
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    sphinx = pytest.importorskip("sphinx.application")
    src = tmp_path_factory.mktemp("src")
    (src / "chapters").mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_parser", "crane_book.numbering", "crane_book.paper_role"]\n'
        'myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath"]\n'
        'numfig = True\ncrane_chapter_keys = {"chapters/your_arm": "Arm"}\n',
        encoding="utf-8",
    )
    (src / "index.md").write_text(
        "# Book\n\n```{toctree}\nchapters/06_audit\nchapters/your_arm\n```\n", encoding="utf-8"
    )
    (src / "chapters" / "06_audit.md").write_text(CHAPTER, encoding="utf-8")
    (src / "chapters" / "your_arm.md").write_text(ARM, encoding="utf-8")
    (src / "chapters" / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    out = src.parent / (src.name + "_html")
    app = sphinx.Sphinx(
        str(src),
        str(src),
        str(out),
        str(out / ".doctrees"),
        "html",
        status=None,
        warning=None,
        freshenv=True,
        warningiserror=True,
    )
    app.build()
    return out


def _numbers(page: str) -> tuple[list[str], list[str]]:
    captions_ = re.findall(r'caption-number">([^<]*?)\s*<', page)
    refs = re.findall(r'std-numref">([^<]*)<', page)
    return captions_, refs


def test_the_book_numbers_per_chapter_and_the_paper_by_its_numeral(built):
    shown, refs = _numbers((built / "chapters" / "06_audit.html").read_text(encoding="utf-8"))
    assert shown == ["Table 6.1", "Table IX", "Table 6.2", "Fig. 3(b)", "Table 6.3"]
    assert refs == ["Table 6.1", "Table IX", "Fig. 3(b)", "Table 6.3"]


def test_a_paper_equation_carries_the_papers_number_and_ours_the_chapters(built):
    page = (built / "chapters" / "06_audit.html").read_text(encoding="utf-8")
    shown = re.findall(r'class="eqno">\((\S+?)\)', page)
    assert shown == ["6.1", "11"]
    cited = re.findall(r'href="#equation-[^"]*">\((\S+?)\)<', page)
    assert cited == ["11", "6.1"]


def test_the_paper_role_prints_the_number_with_its_source(built):
    page = (built / "chapters" / "06_audit.html").read_text(encoding="utf-8")
    abbr = re.search(r'<abbr class="paper-number" title="([^"]*)">([^<]*)</abbr>', page)
    assert abbr is not None and "eps_pd_ladder" in abbr[1]
    assert "0.001" in abbr[2] and "0.01" in abbr[2]


def test_a_page_without_a_chapter_number_uses_its_key(built):
    shown, refs = _numbers((built / "chapters" / "your_arm.html").read_text(encoding="utf-8"))
    assert shown == ["Table Arm.1"] and refs == ["Table IX"]


def test_paper_classes_and_numerals_round_trip():
    for numeral in ("IX", "XVIII", "3", "3(b)", "10"):
        assert paper_numeral([captions.paper_class(numeral)]) == numeral
    assert paper_numeral(["results", "comparison"]) is None
    assert chapter_key("chapters/11_audit_failure", {}) == "11"
    with pytest.raises(ValueError):
        captions.paper_class("Table IX")


def test_a_caption_says_something_and_carries_no_number_of_its_own():
    assert captions.caption("  the audit,\n per seed ") == "the audit, per seed"
    for bad in ("", "Table XI against the paper", "Fig. 10 beside ours"):
        with pytest.raises(ValueError):
            captions.caption(bad)


def test_views_mark_the_paper_tables_they_regenerate():
    import pandas as pd

    table = numbered(pd.DataFrame({"x": [1.0]}), "per seed", "tab-x", paper="IX").markdown()
    assert ":class: results paper-ix" in table
    rows = [Comparison("Joint 7 gain", None, "1", paper_text="1")]
    html = comparison_table(rows, "on the twin", paper="XI").html()
    assert (
        'class="comparison paper-xi"' in html and "<caption>Table XI: on the twin</caption>" in html
    )


def test_every_figure_cell_of_a_chapter_has_a_caption_and_a_valid_paper_mark():
    """The figure cells' metadata, read from the sources: a caption with no number of its own,
    a unique name, and a paper mark that names a numeral ('paper-3b'), nothing else."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    names = []
    for source in sorted((root / "chapters").glob("*.py")) + sorted((root / "book").glob("*.py")):
        for line in source.read_text(encoding="utf-8").splitlines():
            if not line.startswith("# %%") or "mystnb=" not in line:
                continue
            figure = json.loads(line.split("mystnb=", 1)[1])["figure"]
            where = f"{source.name}: {figure.get('name')}"
            assert captions.caption(figure.get("caption")), where
            marks = str(figure.get("classes", "")).split()
            assert all(paper_numeral([m]) for m in marks if m.startswith("paper-")), where
            names.append(figure["name"])
    assert len(names) >= 20 and len(set(names)) == len(names)
