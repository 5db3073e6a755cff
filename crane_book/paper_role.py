"""A Sphinx extension: the role {paper}`id` prints the paper's number `id` in prose.

Chapters and register pages cite the paper's numbers by id, never retyped:
``{paper}`eps_pd_ladder``` renders the value (or range) with its unit as the paper writes it,
and the id and section as a hover title, exactly as the tables' "paper" cells do
(`crane_lib.reporting.tables.cite`). ``{paper}`kt_xm430_logged:.3f``` takes a format
specification for the value, as Python's `format` does. An unknown id is a build error naming
the id and the page, so no placeholder reaches a page.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst.states import Inliner

from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import paper_number_text, paper_number_title


def paper_role(name, rawtext, text, lineno, inliner: Inliner, options=None, content=None):
    """The paper's number `text` ("id" or "id:format") as an abbreviation with its source."""
    number_id, _, fmt = text.partition(":")
    try:
        number = paper(number_id.strip())
        shown = paper_number_text(number, "{:" + fmt + "}" if fmt else None)
    except (KeyError, ValueError) as error:
        message = inliner.reporter.error(f"{{paper}}`{text}`: {error}", line=lineno)
        problem = inliner.problematic(rawtext, rawtext, message)
        return [problem], [message]
    node = nodes.abbreviation(shown, shown, explanation=paper_number_title(number))
    node["classes"].append("paper-number")
    return [node], []


def setup(app):
    """Register the role {paper}."""
    app.add_role("paper", paper_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
