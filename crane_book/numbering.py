"""A Sphinx extension: the book's own tables and figures are numbered per chapter ("Table 6.2",
"Fig. 11.4"), and one that regenerates a table or figure of the paper carries the paper's
numeral instead ("Table IX", "Fig. 3(b)"), so that no number of the book reads as the paper's.
Display equations are numbered the same way: one labelled `eq-paper-8` is the paper's (8) and is
numbered "(8)" wherever it is shown or referenced ({eq}`eq-paper-8`); the book's own are "(4.1)".

A table or figure regenerates one of the paper's when it has the class `paper-<numeral>`
(`crane_lib.reporting.captions.paper_class`: "paper-ix", "paper-3b"); the views set it on their
tables, a chapter sets it on a figure cell (`mystnb: figure: classes`). The chapter's part of a
number is the leading number of its file name (chapters/06_audit -> 6), or the page's key in
`crane_chapter_keys` (book/_config.yml) for a page without one. Sphinx's numfig still assigns
the numbers (in document order), so {numref} and the captions agree; this extension only
rewrites them after Sphinx has assigned them.
"""

from __future__ import annotations

import re

from docutils import nodes

PAPER_CLASS = re.compile(r"^paper-(?:(?P<roman>[ivxlc]+)|(?P<number>\d+)(?P<sub>[a-z])?)$")
RENUMBERED = ("figure", "table", "displaymath")
# a display equation labelled `eq-paper-8` is the paper's (8), and carries that number
PAPER_EQUATION = re.compile(r"^equation-eq-paper-(?P<number>\d+)$")


def paper_numeral(classes) -> str | None:
    """The paper's numeral that a node's `paper-…` class names ("IX", "3(b)"), or None."""
    for name in classes:
        match = PAPER_CLASS.match(name)
        if match and match["roman"]:
            return match["roman"].upper()
        if match:
            return match["number"] + (f"({match['sub']})" if match["sub"] else "")
    return None


def chapter_key(docname: str, keys: dict) -> str:
    """The chapter's part of a number: the page's key in `keys`, else its file's leading number."""
    if docname in keys:
        return str(keys[docname])
    stem = docname.rsplit("/", 1)[-1]
    match = re.match(r"\d+", stem)
    return str(int(match.group(0))) if match else stem


def _paper_ids(doctree) -> dict[str, str]:
    """Each id of a table or figure of the page that regenerates one of the paper's -> numeral."""
    found = {}
    for node in doctree.findall(lambda n: isinstance(n, (nodes.table, nodes.figure))):
        numeral = paper_numeral(node.get("classes", []))
        if numeral and node["ids"]:
            found[node["ids"][0]] = numeral
    return found


def renumbered(docname: str, kinds: dict, paper_ids: dict, keys: dict) -> dict:
    """A page's numbers (figtype -> id -> tuple) per chapter, the paper's by their numeral."""
    out = {}
    chapter = chapter_key(docname, keys)
    for figtype, numbers in kinds.items():
        if figtype not in RENUMBERED:
            out[figtype] = numbers
            continue
        out[figtype], count = {}, 0
        # Sphinx numbered them in document order; keep that order, restart per chapter
        for figure_id in sorted(numbers, key=numbers.get):
            equation = PAPER_EQUATION.match(figure_id)
            if figtype == "displaymath" and equation:
                out[figtype][figure_id] = (int(equation["number"]),)
            elif figure_id in paper_ids:
                out[figtype][figure_id] = (paper_ids[figure_id],)
            else:
                count += 1
                out[figtype][figure_id] = (chapter, count)
    return out


def _restore(app, env):
    # Sphinx compares its fresh numbers with the previous ones to decide which pages to write
    # again: give it its own previous numbers, not ours, or every page would be written again
    if hasattr(env, "crane_sphinx_fignumbers"):
        env.toc_fignumbers = env.crane_sphinx_fignumbers
    return []


def _renumber(app, env):
    env.crane_sphinx_fignumbers = dict(env.toc_fignumbers)
    keys = app.config.crane_chapter_keys or {}
    env.toc_fignumbers = {
        docname: renumbered(docname, kinds, _paper_ids(env.get_doctree(docname)), keys)
        for docname, kinds in env.toc_fignumbers.items()
    }
    return []


def setup(app):
    """Register the renumbering around Sphinx's own figure numbering (priority 500)."""
    app.add_config_value("crane_chapter_keys", {}, "env")
    app.connect("env-get-updated", _restore, priority=400)
    app.connect("env-get-updated", _renumber, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
