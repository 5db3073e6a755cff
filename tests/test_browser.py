"""The book as a reader sees it: its pages in headless Chromium with the network cut.

Two kinds of test:

- fixture pages built here (a page of raw TeX, a page wider than the viewport, a broken link,
  a page that asks the network for a script, two pages that would share session storage in the
  reader's one tab, and a good page with a wide table in a scrolling box) show that each check
  fails when it should and passes when it should; they run in
  `make test` wherever Chromium is installed (.ci/run installs Debian's package);
- the built book: every page of CRANE_BOOK_HTML (set by .ci/run to _build/html after the
  quick book) must render its math, fit the viewport, fetch nothing from the network, link
  only to things that exist, and show no paper-number id in its running text; screenshots of
  two pages go to _build/screenshots/ (a CI artefact). Without CRANE_BOOK_HTML these are
  skipped: `make test` runs before the book exists.

    CRANE_BOOK_HTML=_build/html .venv/bin/python -m pytest -q tests/test_browser.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.book_browser import (
    BookServer,
    Reader,
    book_pages,
    broken_links,
    caption_problems,
    chromium_path,
    placeholder_problems,
)

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package drives Chromium (pip install -e .[test])"
)

# the pages whose screenshots CI keeps
SCREENSHOT_PAGES = ("book/claims.html", "chapters/06_audit.html")


@pytest.fixture(scope="module")
def playwright():
    if chromium_path() is None:
        pytest.skip(
            "Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)"
        )
    with playwright_api.sync_playwright() as p:
        yield p


# ----------------------------------------------------------------------------- the checks on
# fixture pages

MATHJAX_STUB = "<script>window.MathJax = undefined;</script>"


def _write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(
        "<!doctype html><html><head><meta "
        f"charset='utf-8'><title>{name}</title></head><body>{body}</body></html>",
        encoding="utf-8",
    )
    return path


_SHOWS_LEFT_STORAGE = (
    "<p id='left'></p><script>if (sessionStorage.getItem('left')) "
    "document.getElementById('left').textContent = 'left by a page before $\\\\kappa';</script>"
)


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "sub").mkdir()
    pages = {
        # MathJax never typesets this: the math element keeps its raw TeX
        "raw_math": _write(
            site,
            "raw_math.html",
            '<p>The inertia matrix <span class="math notranslate nohighlight">\\(\\mathbf '
            "M(\\theta)\\)</span>.</p>",
        ),
        # raw TeX written into prose (an output rendered as plain text)
        "raw_tex": _write(
            site, "raw_tex.html", "<p>an estimate of $\\boldsymbol{\\beta}$ from the record</p>"
        ),
        "raw_dollar": _write(
            site, "raw_dollar.html", "<p>the condition number $\\kappa$ of the regressor</p>"
        ),
        # a table that widens the page
        "wide": _write(
            site,
            "wide.html",
            "<table><tr><td style='min-width:3000px'>a column far too wide</td></tr></table>",
        ),
        # a script from the network
        "network": _write(
            site,
            "network.html",
            "<script src='https://cdn.example.invalid/tex-chtml.js'></script><p>text</p>",
        ),
        # links: one good, one to a missing page, one to a missing fragment
        "links": _write(
            site,
            "links.html",
            "<a href='sub/good.html#here'>good</a> <a href='missing.html'>missing</a> "
            "<a href='sub/good.html#nowhere'>bad fragment</a>",
        ),
        # session storage: the first page leaves a value there, and each page that finds one
        # writes raw TeX into its text (the reader's tab is shared, a new tab's storage is empty)
        "session_set": _write(
            site,
            "session_set.html",
            "<script>sessionStorage.setItem('left', '1');</script>" + _SHOWS_LEFT_STORAGE,
        ),
        "session_read": _write(site, "session_read.html", _SHOWS_LEFT_STORAGE),
        # a good page: a wide table inside a scrolling box, code with a backslash-paren that is
        # code, not math
        "good": _write(
            site / "sub",
            "good.html",
            "<div id='here' style='overflow-x:auto;max-width:100%'>"
            "<table><tr><td style='min-width:3000px'>wide, in its own box</td></tr></table></div>"
            "<pre><code>re.compile(r'\\(')</code></pre>",
        ),
    }
    return site, pages


@pytest.fixture(scope="module")
def fixture_reader(playwright, fixture_site):
    site, _ = fixture_site
    with BookServer(site) as server:
        reader = Reader(server, playwright)
        yield reader
        reader.close()


def test_raw_math_is_caught(fixture_reader, fixture_site):
    report = fixture_reader.check(fixture_site[1]["raw_math"], mathjax_timeout_ms=1500)
    assert report.n_math == 1
    assert report.math and any("MathJax did not start" in e for e in report.errors), report
    assert any("\\(" in r or "\\mathbf{" in r or "\\mathbf" in r for r in report.raw), report


def test_raw_tex_in_prose_is_caught(fixture_reader, fixture_site):
    report = fixture_reader.check(fixture_site[1]["raw_tex"])
    assert any("\\boldsymbol{" in r for r in report.raw), report


def test_raw_dollar_math_in_prose_is_caught(fixture_reader, fixture_site):
    report = fixture_reader.check(fixture_site[1]["raw_dollar"])
    assert any("$\\kappa" in r for r in report.raw), report


def test_overflow_is_caught(fixture_reader, fixture_site):
    report = fixture_reader.check(fixture_site[1]["wide"])
    assert report.wide and "scrolls sideways" in report.wide[0], report


def test_network_request_is_blocked_and_caught(fixture_reader, fixture_site):
    report = fixture_reader.check(fixture_site[1]["network"])
    assert report.blocked == ["https://cdn.example.invalid/tex-chtml.js"], report


def test_each_page_starts_with_the_session_storage_of_a_new_tab(fixture_reader, fixture_site):
    """The reader opens every page in one tab, but no page sees what an earlier one stored."""
    own = fixture_reader.check(fixture_site[1]["session_set"])
    assert any("$\\kappa" in r for r in own.raw), own  # a page sees its own value
    after = fixture_reader.check(fixture_site[1]["session_read"])
    assert after.raw == [], after


def test_good_page_passes(fixture_reader, fixture_site):
    report = fixture_reader.check(fixture_site[1]["good"])
    assert report.problems() == []


# what a chapter's HTML looks like: a figure and a table as Sphinx writes them, with a number
_FIGURE = (
    '<figure class="align-default{cls}" id="fig-{n}">'
    '<div class="cell_output"><img src="_images/x.png"></div>'
    '<figcaption><p><span class="caption-number">{number} </span>'
    '<span class="caption-text">{text}</span>'
    "</p></figcaption></figure>"
)
_TABLE = (
    '<table class="table results{cls}" id="tab-{n}">'
    '<caption><span class="caption-number">{number} </span>'
    '<span class="caption-text">{text}</span></caption><tr><td>1</td></tr></table>'
)


def test_missing_captions_and_numbers_that_read_as_the_papers_are_caught(tmp_path):
    bad = _write(
        tmp_path,
        "bad.html",
        "".join(
            [
                # a figure with no caption
                '<figure id="fig-a"><div class="cell_output">'
                '<img src="_images/a.png"></div></figure>',
                # a table with no caption
                '<table class="dataframe"><tr><td>1</td></tr></table>',
                # an output image outside a figure
                '<div class="cell_output"><img src="_images/b.png"></div>',
                _TABLE.format(
                    cls="", n="b", number="Table 5", text="a book table numbered book-wide"
                ),
                _FIGURE.format(
                    cls="", n="c", number="Fig. 3(b)", text="the paper's numeral, not marked"
                ),
                # a number and nothing to read
                _TABLE.format(cls="", n="d", number="Table 6.1", text=""),
            ]
        ),
    )
    problems = caption_problems(tmp_path, [bad])
    assert len(problems) == 6, problems
    assert sum("no caption" in p for p in problems) == 3
    assert sum("outside a captioned figure" in p for p in problems) == 1
    assert any("'Table 5' is not a per-chapter number" in p for p in problems)
    assert any("'Fig. 3(b)' reads as the paper's" in p for p in problems)
    good = _write(
        tmp_path,
        "good.html",
        "".join(
            [
                _TABLE.format(
                    cls="", n="a", number="Table 6.2", text="the book's own, per chapter"
                ),
                _TABLE.format(
                    cls=" paper-ix", n="b", number="Table IX", text="the paper's, marked"
                ),
                _FIGURE.format(
                    cls=" paper-3b", n="c", number="Fig. 3(b)", text="the paper's, marked"
                ),
                _FIGURE.format(cls="", n="d", number="Fig. Arm.1", text="a page keyed by name"),
                # a raw HTML table of a page that is not a chapter: captioned, not numbered
                '<table class="comparison"><caption>a reference table</caption></table>',
                # code, not content
                '<div class="highlight"><table '
                'class="highlighttable"><tr><td>1</td></tr></table></div>',
            ]
        ),
    )
    assert caption_problems(tmp_path, [good]) == []


def _paper_ids() -> list[str]:
    from crane_lib.paper_numbers import table

    return list(table().index)


def test_placeholders_in_the_text_are_caught(tmp_path):
    """A paper-number id or an unrendered role in the running text is caught; the same id in a
    hover title, a code cell's source, a file name or a role's name in a code span is not."""
    ids = ["clie_solution_violations", "ag02_peak_velocity", "raw_log_columns"]
    bad = _write(
        tmp_path,
        "bad.html",
        # the id as prose, as inline code, in a table cell, and a role parsed as CommonMark
        "<p>the solution violates clie_solution_violations times</p>"
        '<p>AG02 peaks at <code class="docutils literal"><span class="pre">ag02_peak_velocity'
        "</span></code></p><table><tr><td>clie_solution_violations</td></tr></table>"
        '<p>(paper: {paper}<code class="docutils literal">x</code>) and a file '
        '<code class="docutils literal">{glue:text}</code>name`` here</p>',
    )
    problems = placeholder_problems(tmp_path, [bad], ids)
    assert len(problems) == 5, problems
    assert sum("clie_solution_violations" in p for p in problems) == 2
    assert any("'ag02_peak_velocity'" in p for p in problems)
    assert any("'{paper}'" in p for p in problems) and any("'``'" in p for p in problems)
    good = _write(
        tmp_path,
        "good.html",
        '<p>AG02 peaks at <abbr class="paper-number" title="paper_numbers.csv: '
        'ag02_peak_velocity (Sec. B-G)">4.41 rad/s</abbr></p>'
        '<table><tr><td><span class="paper-number" title="paper_numbers.csv: '
        'clie_solution_violations">3</span></td></tr></table>'
        '<div class="cell_input"><div class="highlight-ipython3"><pre>paper("ag02_peak_velocity")'
        "</pre></div></div>"
        '<p>the columns of <code class="docutils literal">data/raw_log_columns.csv</code>, '
        'cited with the role <code class="docutils literal">{paper}</code>; '
        "\\(\\theta_\\mathrm{ref}\\)</p>",
    )
    assert placeholder_problems(tmp_path, [good], ids) == []


def test_broken_links_are_caught(fixture_site):
    site, pages = fixture_site
    problems = broken_links(site, [pages["links"]])
    assert len(problems) == 2, problems
    assert any("missing.html" in p for p in problems) and any("'nowhere'" in p for p in problems)


# ----------------------------------------------------------------------------- the built book


def _book_dir() -> Path:
    value = os.environ.get("CRANE_BOOK_HTML")
    if not value:
        pytest.skip(
            "the built book is checked after `make book` (CRANE_BOOK_HTML=_build/html; .ci/run "
            "does this)"
        )
    path = Path(value).resolve()
    if not (path / "index.html").exists():
        pytest.fail(
            f"CRANE_BOOK_HTML={value}: no index.html there; build the book first (make book "
            "PROFILE=quick)"
        )
    return path


@pytest.fixture(scope="module")
def book():
    return _book_dir()


def test_book_pages_in_the_browser(playwright, book):
    pages = book_pages(book)
    assert len(pages) >= 10, f"only {len(pages)} pages in {book}"
    shots = book.parent / "screenshots"
    problems, typeset = [], 0
    with BookServer(book) as server:
        reader = Reader(server, playwright)
        try:
            for page in pages:
                rel = page.relative_to(book).as_posix()
                shot = (
                    shots / (rel.replace("/", "__").replace(".html", ".png"))
                    if rel in SCREENSHOT_PAGES
                    else None
                )
                report = reader.check(page, screenshot=shot)
                typeset += report.n_math
                problems += report.problems()
        finally:
            reader.close()
    assert not problems, "\n".join(
        [f"{len(problems)} problem(s) on {len(pages)} pages:"] + problems
    )
    assert typeset > 0, "no math element on any page: the check would pass vacuously"
    for rel in SCREENSHOT_PAGES:
        assert (shots / rel.replace("/", "__").replace(".html", ".png")).exists(), (
            f"no screenshot of {rel}"
        )


def test_book_internal_links_resolve(book):
    pages = book_pages(book)
    problems = broken_links(book, pages)
    assert not problems, "\n".join([f"{len(problems)} broken internal link(s):"] + problems[:40])


def test_book_tables_and_figures_are_captioned_and_numbered_apart_from_the_paper(book):
    """Every figure and table has a caption; a number is the book's per chapter ('Table 6.2') or
    the paper's numeral on a table or figure marked as regenerating it ('Table IX')."""
    problems = caption_problems(book, book_pages(book))
    assert not problems, "\n".join([f"{len(problems)} caption problem(s):"] + problems[:60])


def test_claims_page_is_near_the_front(book):
    """In the book's navigation the claims page comes before the first chapter."""
    intro = (book / "book" / "intro.html").read_text(encoding="utf-8")
    claims, first_chapter = intro.find("claims.html"), intro.find("01_modeling.html")
    assert claims != -1 and first_chapter != -1 and claims < first_chapter


def test_the_book_speaks_of_itself_only(book):
    """No tracker vocabulary, no path of the build machine and no warning in any page."""
    import re

    tracker = re.compile(r"\b[Ii]ssues? #?\d+\b")
    # a cell's text output (stream, stderr, plain text) that carries a Python warning
    output = re.compile(r'class="output (?:stderr|stream|text_plain).*?</pre>', re.S)
    warned = re.compile(r"\b\w*Warning\b|warnings\.warn\(")
    # the tree these tests run from and the tree the book was built in (CRANE_BOOK_HTML's root)
    machines = {str(Path(__file__).resolve().parents[1]), str(book.resolve().parents[1])}
    problems = []
    for page in book_pages(book):
        text = page.read_text(encoding="utf-8")
        problems += [f"{page.relative_to(book)}: {m.group(0)!r}" for m in tracker.finditer(text)]
        problems += [
            f"{page.relative_to(book)}: the build tree's path {machine}"
            for machine in machines
            if machine in text
        ]
        problems += [
            f"{page.relative_to(book)}: a warning in a cell's output: {w.group(0)!r}"
            for m in output.finditer(text)
            for w in [warned.search(m.group(0))]
            if w
        ]
    assert not problems, "\n".join(problems[:40])


def test_no_placeholder_reaches_a_page(book):
    """No paper-number id of data/paper_numbers.csv stands in the running text of a page where
    the number should be, and no role is left unrendered (tests.book_browser.placeholder_problems
    says what counts as running text)."""
    problems = placeholder_problems(book, book_pages(book), _paper_ids())
    assert not problems, "\n".join([f"{len(problems)} placeholder(s) in the text:"] + problems)
