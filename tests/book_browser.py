"""Open the built book the way a reader does: headless Chromium (Debian's package), no network.

Used by tests/test_browser.py. The book is served from its build folder on a loopback port;
every request that is not for that folder is aborted and recorded (the page needs the network
for it), and Chromium resolves no host name but the loopback address on top of that. Per page:

- math: every math element the build wrote (span.math, div.math) was typeset by MathJax, and
  no raw TeX (\\( \\) \\[ \\] $$, a \\command{ or $\\command) is left in the visible text outside
  code;
- width: the page does not scroll sideways and no visible element reaches past the viewport
  unless a clipping or scrolling box that itself fits holds it (a wide table scrolls inside
  its own box);
- requests: none leaves the build folder;

and, from the HTML files alone, every internal link resolves to an existing file and, when it
names a fragment, to an element with that id, and no paper-number id or unrendered role stands in
a page's running text where a number should be (`placeholder_problems`).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    # no name resolves except the loopback address the book is served on, and every other
    # address goes to a proxy that is not there (Chromium never proxies loopback): the network
    # is cut
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--proxy-server=http://127.0.0.1:9",
]
VIEWPORT = {"width": 1280, "height": 900}
# pages of the build that are not pages of the book
SKIP_PAGES = {"genindex.html", "search.html", "py-modindex.html"}


def chromium_path() -> str | None:
    return (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )


def book_pages(html_dir: Path) -> list[Path]:
    """Every page of the book (not Sphinx's own index and search pages, not _static or _sources)."""
    html_dir = Path(html_dir)
    return sorted(
        p
        for p in html_dir.rglob("*.html")
        if not any(part.startswith("_") for part in p.relative_to(html_dir).parts)
        and p.name not in SKIP_PAGES
        and not _is_redirect(p)
    )


def _is_redirect(page: Path) -> bool:
    """jupyter-book's root index.html only forwards to the first page (meta refresh)."""
    return (
        'http-equiv="refresh"' in page.read_text(encoding="utf-8", errors="replace")[:2000].lower()
    )


# ----------------------------------------------------------------------------- serving


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class BookServer:
    """The build folder on 127.0.0.1 (a free port), in a thread; a context manager."""

    def __init__(self, root: Path):
        self.root = Path(root)
        handler = functools.partial(_QuietHandler, directory=str(self.root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, page: Path) -> str:
        return f"{self.origin}/{Path(page).relative_to(self.root).as_posix()}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


# ----------------------------------------------------------------------------- in the browser

# runs in the page; returns {math: [...], raw: [...], wide: [...], n_math: int}
_CHECKS_JS = r"""
() => {
  const vw = document.documentElement.clientWidth;
  const describe = (e) => {
    let s = e.tagName.toLowerCase();
    if (e.id) s += '#' + e.id;
    if (e.classList.length) s += '.' + [...e.classList].slice(0, 3).join('.');
    const t = (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
    return t ? `${s} "${t}"` : s;
  };
  // math elements the build wrote, and whether MathJax typeset them
  const mathEls = [...document.querySelectorAll('span.math, div.math')];
  const math = mathEls.filter(e => !e.querySelector('mjx-container')).map(describe).slice(0, 10);
  // raw TeX in the visible text, outside code, scripts and typeset math
  const skip = new Set(['PRE', 'CODE', 'SCRIPT', 'STYLE', 'TEXTAREA', 'MJX-CONTAINER', 'NOSCRIPT']);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let a = node.parentElement; a; a = a.parentElement) {
        if (skip.has(a.tagName)) return NodeFilter.FILTER_REJECT;
      }
      const p = node.parentElement;
      if (!p || p.getClientRects().length === 0) return NodeFilter.FILTER_REJECT;  // not rendered
      return NodeFilter.FILTER_ACCEPT;
    }
  });
  // \( \) \[ \] $$, a \command{ and $\command: TeX that MathJax never saw
  const rawPattern = /\\[()\[\]]|\$\$|\\[A-Za-z]+\{|\$\\[A-Za-z]/;
  const raw = [];
  for (let n = walker.nextNode(); n && raw.length < 10; n = walker.nextNode()) {
    const m = rawPattern.exec(n.textContent);
    if (m) {
      const around = n.textContent.slice(Math.max(0, m.index - 30), m.index + 50);
      raw.push(around.replace(/\s+/g, ' '));
    }
  }
  // width
  const wide = [];
  const root = document.documentElement;
  if (root.scrollWidth > vw + 1) {
    wide.push(`the page scrolls sideways: ${root.scrollWidth} px wide in a ${vw} px viewport`);
  }
  for (const e of document.body.querySelectorAll('*')) {
    if (wide.length >= 10) break;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= vw + 1) continue;
    const style = getComputedStyle(e);
    if (style.visibility === 'hidden' || style.position === 'fixed') continue;
    let held = false;
    for (let a = e.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      const clips = ['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX);
      if (clips && a.getBoundingClientRect().right <= vw + 1) { held = true; break; }
    }
    if (!held) wide.push(`${describe(e)} reaches ${Math.round(r.right)} px in a ${vw} px viewport`);
  }
  return {math, raw, wide, n_math: mathEls.length};
}
"""


@dataclass
class PageReport:
    page: str
    n_math: int = 0
    math: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    wide: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        out = [f"math not typeset: {m}" for m in self.math]
        out += [f"raw TeX in the text: {r!r}" for r in self.raw]
        out += [f"too wide: {w}" for w in self.wide]
        out += [f"request leaves the build: {b}" for b in self.blocked]
        out += self.errors
        return [f"{self.page}: {p}" for p in out]


class Reader:
    """A headless Chromium with the network cut, opening pages of one served folder."""

    def __init__(
        self, server: BookServer, playwright, viewport=VIEWPORT, executable: str | None = None
    ):
        self.server = server
        self.browser = playwright.chromium.launch(
            executable_path=executable or chromium_path(), args=CHROMIUM_FLAGS
        )
        # (Playwright's offline mode would cut the loopback server too; the flags cut everything
        # else). Requests are watched, not routed: routing sends each one through Python and
        # turns the browser's cache off, which made every page load a third slower.
        self.context = self.browser.new_context(viewport=viewport, service_workers="block")
        self.blocked: list[str] = []
        self.context.on("request", self._watch)
        # one tab for every page: a new tab per page started a new renderer, which parsed the
        # theme's scripts again (46 s and 63 CPU-s for the quick book's 33 pages, 18 s and 20
        # CPU-s in one tab). Each page is still a new document: goto loads it, check ends it; and
        # each starts with the tab's session storage empty, as in a new tab (the theme keeps the
        # sidebar's scroll there for the tab's next page)
        self.tab = self.context.new_page()
        self.tab.add_init_script("try { sessionStorage.clear(); } catch (error) {}")

    def _watch(self, request):
        url = request.url
        if not (
            url.startswith(self.server.origin + "/")
            or url.startswith("data:")
            or url.startswith("blob:")
        ):
            self.blocked.append(url)

    def check(
        self, page_path: Path, screenshot: Path | None = None, mathjax_timeout_ms: int = 20000
    ) -> PageReport:
        report = PageReport(str(Path(page_path).relative_to(self.server.root)))
        self.blocked.clear()
        page = self.tab
        try:
            page.goto(self.server.url(page_path), wait_until="load")
            has_math = page.evaluate("() => document.querySelector('span.math, div.math') !== null")
            if has_math:
                try:
                    page.wait_for_function(
                        "() => window.MathJax && window.MathJax.startup && "
                        "window.MathJax.startup.promise",
                        timeout=mathjax_timeout_ms,
                    )
                    page.evaluate("() => window.MathJax.startup.promise")
                except (
                    Exception
                ) as error:  # a timeout: MathJax never started (not served, or blocked)
                    report.errors.append(f"MathJax did not start: {str(error).splitlines()[0]}")
            result = page.evaluate(_CHECKS_JS)
            report.n_math, report.math, report.raw, report.wide = (
                result["n_math"],
                result["math"],
                result["raw"],
                result["wide"],
            )
            if screenshot is not None:
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(screenshot), full_page=False)
        finally:
            # the page's document ends here, so a request it makes late is still its own
            page.goto("about:blank")
        report.blocked = list(dict.fromkeys(self.blocked))
        return report

    def close(self):
        self.context.close()
        self.browser.close()


# ----------------------------------------------------------------------------- links, from the
# files


class _LinksAndIds(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> _LinksAndIds:
    parser = _LinksAndIds()
    parser.feed(Path(path).read_text(encoding="utf-8", errors="replace"))
    return parser


def broken_links(html_dir: Path, pages: list[Path]) -> list[str]:
    """Every internal link of `pages` that does not resolve: a missing file, or a fragment with no
    element of that id in the target page."""
    html_dir = Path(html_dir).resolve()
    problems = []
    for page in pages:
        page = Path(page).resolve()
        for href in _parse(page).hrefs:
            parsed = urlparse(href)
            if parsed.scheme or parsed.netloc or href.startswith(("mailto:", "javascript:")):
                continue  # external: not part of the book (and never fetched by the browser test)
            target_path, fragment = urldefrag(href)
            target = page if not target_path else (page.parent / unquote(target_path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(html_dir)}: link {href!r}"
            if not target.exists():
                problems.append(f"{where}: no file {target}")
                continue
            if (
                fragment
                and target.suffix == ".html"
                and unquote(fragment) not in _parse(target).ids
            ):
                problems.append(
                    f"{where}: no element with id {unquote(fragment)!r} in "
                    f"{target.relative_to(html_dir) if target.is_relative_to(html_dir) else target}"
                )
    return problems


# ------------------------------------------------ captions and numbers, from the files

# a caption's number: the book's per chapter ("Table 6.2", "Fig. Arm.1") or the paper's numeral
# ("Table IX", "Fig. 3(b)"), which only a table or figure marked as the paper's carries
# (class paper-…)
BOOK_NUMBER = re.compile(r"^(Table|Fig\.) [A-Za-z0-9]+\.\d+$")
PAPER_NUMBER = re.compile(r"^(Table [IVXLC]+|Fig\. \d+(\([a-z]\))?)$")
# tables that are layout, not content: Sphinx's line-numbered code
LAYOUT_TABLES = {"highlighttable"}


@dataclass
class _Box:
    """An open <figure> or <table> while the page is read: its classes and what its caption says."""

    tag: str
    classes: set[str]
    line: int
    caption: str = ""
    number: str = ""


class _Captions(HTMLParser):
    """Every figure and table of a page with its caption and number, and every output image that
    no figure holds."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.boxes: list[_Box] = []
        self.done: list[_Box] = []
        self.loose_images: list[int] = []
        self._open: list[str] = []  # the tag stack, to know where a caption and an output end
        self._outputs: list[int] = []  # depths of the open cell outputs
        self._in: list[tuple[str, int]] = []  # (caption | number, depth) being read

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag in _VOID:
            if tag == "img" and self._outputs and not any(b.tag == "figure" for b in self.boxes):
                self.loose_images.append(self.getpos()[0])
            return
        self._open.append(tag)
        depth = len(self._open)
        if tag in ("figure", "table") and not classes & LAYOUT_TABLES:
            self.boxes.append(_Box(tag, classes, self.getpos()[0]))
            self._open[-1] = f"{tag}#box"
        if "cell_output" in classes:
            self._outputs.append(depth)
        if tag in ("figcaption", "caption") and self.boxes:
            self._in.append(("caption", depth))
        if tag == "span" and "caption-number" in classes and self.boxes:
            self._in.append(("number", depth))

    def handle_endtag(self, tag):
        if tag in _VOID or tag not in {t.split("#")[0] for t in self._open}:
            return  # a stray end tag: HTML forgives it, so does this reader
        while self._open:
            closed, depth = self._open.pop(), len(self._open) + 1
            self._in = [(kind, d) for kind, d in self._in if d < depth]
            self._outputs = [d for d in self._outputs if d < depth]
            if closed.endswith("#box"):
                self.done.append(self.boxes.pop())
            if closed.split("#")[0] == tag:
                break

    def handle_data(self, data):
        if not self.boxes:
            return
        for kind, _ in self._in:
            if kind == "caption":
                self.boxes[-1].caption += data
            else:
                self.boxes[-1].number += data


_VOID = {
    "img",
    "br",
    "hr",
    "meta",
    "link",
    "input",
    "source",
    "col",
    "area",
    "base",
    "wbr",
    "embed",
    "track",
}


def caption_problems(html_dir: Path, pages: list[Path]) -> list[str]:
    """Every figure and table of `pages` without a caption, every output image outside a figure,
    and every number that is neither the book's per chapter nor a marked paper numeral."""
    html_dir = Path(html_dir).resolve()
    problems = []
    for page in pages:
        page = Path(page).resolve()
        reader = _Captions()
        reader.feed(page.read_text(encoding="utf-8", errors="replace"))
        where = page.relative_to(html_dir) if page.is_relative_to(html_dir) else page
        for box in reader.done:
            number = " ".join(box.number.split())
            text = " ".join(box.caption.split())
            if not text or text == number:
                problems.append(f"{where}:{box.line}: a <{box.tag}> with no caption")
            elif not number:
                continue  # a raw HTML table of a page that is not a chapter: not numbered
            elif PAPER_NUMBER.match(number):
                if not any(c.startswith("paper-") for c in box.classes):
                    problems.append(
                        f"{where}:{box.line}: {number!r} reads as the paper's but the {box.tag} is "
                        "not marked as regenerating it"
                    )
            elif not BOOK_NUMBER.match(number):
                problems.append(f"{where}:{box.line}: {number!r} is not a per-chapter number")
        problems += [
            f"{where}:{line}: an output image outside a captioned figure"
            for line in reader.loose_images
        ]
    return problems


# ------------------------------------------------ placeholders in the running text, from the files

# what the build leaves as text when a MyST role or code span did not render (a fragment parsed
# as CommonMark, a role inside a code span): the role's name as plain text, or a stray pair of
# backticks; a role's name inside a code span is prose naming the role ("the role `{paper}`")
UNRENDERED = re.compile(r"(?<![\w\\])\{(?:paper|glue(?::\w+)?|numref|ref|eq|doc)\}|``")
# tags whose content a reader never sees as text
_UNSEEN = {"script", "style", "template", "head"}


class _RunningText(HTMLParser):
    """The text a reader reads on a page, chunk by chunk with its line and whether it is code:
    everything under <body> but scripts and styles, a code cell's source (div.cell_input) and a
    literal code block (div.highlight-… outside a cell's output). Attributes are never text, so
    a hover title (the "paper" cells' and the {paper} role's `title`) and a table's hidden
    attributes are not read; a cell's output, a table's cells and inline code in prose are."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.chunks: list[tuple[int, str, bool]] = []
        self._open: list[tuple[str, bool, bool]] = []  # (tag, hides its text, is an output)

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        in_output = any(output for _, _, output in self._open)
        hides = (
            tag in _UNSEEN
            or "cell_input" in classes
            or (tag == "div" and not in_output and any(c.startswith("highlight-") for c in classes))
        )
        self._open.append((tag, hides, "cell_output" in classes))

    def handle_endtag(self, tag):
        if tag in _VOID or tag not in {t for t, _, _ in self._open}:
            return  # a stray end tag: HTML forgives it, so does this reader
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if data.strip() and not any(hides for _, hides, _ in self._open):
            code = any(t in ("code", "pre") for t, _, _ in self._open)
            self.chunks.append((self.getpos()[0], data, code))


def id_pattern(ids) -> re.Pattern:
    """An id as a token of its own: not part of a longer name, a dotted name or a path
    (`data/raw_log_columns.csv` names a file, not the number `raw_log_columns`)."""
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    return re.compile(rf"(?<![\w./-])({alternatives})(?![\w/]|\.\w)")


def placeholder_problems(html_dir: Path, pages: list[Path], ids) -> list[str]:
    """Every paper-number id (`ids`) in the running text of `pages`, code spans and outputs
    included, and every unrendered role or stray backtick pair outside code: what a reader
    would see in place of a number."""
    html_dir = Path(html_dir).resolve()
    pattern = id_pattern(ids)
    problems = []
    for page in pages:
        page = Path(page).resolve()
        reader = _RunningText()
        reader.feed(page.read_text(encoding="utf-8", errors="replace"))
        where = page.relative_to(html_dir) if page.is_relative_to(html_dir) else page
        for line, text, code in reader.chunks:
            found = [*pattern.finditer(text), *([] if code else UNRENDERED.finditer(text))]
            for match in found:
                context = " ".join(text[max(0, match.start() - 60) : match.end() + 30].split())
                problems.append(f"{where}:{line}: {match.group(0)!r} in the text: …{context}…")
    return problems
