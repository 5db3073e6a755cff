"""Claims at a glance, as the pages show them: each of the paper's main claims with this build's
verdict on the twin, the number behind it and a link to the section that computes it.

The verdicts are computed by the main job (`crane_book.claims`, one record per claim in
results/claims/, written before any page runs); this module only reads those records.

    from crane_lib.reporting import claims
    claims.page()                      # the claims page's table (its counts(): verdicts)
    claims.show("audit_margin_seeds")  # one claim's verdict box, for the chapter that computes it

A claim links the section that computes it by the MyST label above that section's heading,
`<chapter>.html#<label>`, and its register reason likewise.
"""

from __future__ import annotations

import html as html_module

from crane_lib.records import read_json_record, read_json_records
from crane_lib.reporting.chapters import profile as build_profile
from crane_lib.verdicts import (  # noqa: F401 (the verdicts, for the pages)
    CLAIMS_DIR,
    CONTRADICTED,
    NOT_COMPUTED,
    NOT_TESTABLE,
    REPRODUCED,
    VERDICTS,
    record_path,
)

_VERDICT_CLASS = {
    REPRODUCED: "reproduced",
    CONTRADICTED: "contradicted",
    NOT_TESTABLE: "not-testable",
    NOT_COMPUTED: "not-computed",
}

# the page that shows them (book/claims.md), for relative links
PAGE_DOCNAME = "book/claims"
MAKE_STEP = "the main job writes it: make book, or python -m crane_book.pipeline"


def records() -> list[dict]:
    """Every claim record of this build, in the paper's order (the order the main job gave them)."""
    found = read_json_records(CLAIMS_DIR) if CLAIMS_DIR.is_dir() else []
    return sorted(found, key=lambda r: (r.get("order", 0), r["id"]))


def current(claim_id: str, profile: str | None = None) -> dict:
    """The claim's record in this build, or a not-yet-computed stand-in saying that none exists."""
    path = record_path(claim_id)
    if path.is_file():
        return read_json_record(path)
    return {
        "id": claim_id,
        "where": "",
        "statement": claim_id,
        "paper": "—",
        "chapter": None,
        "section": None,
        "anchor": None,
        "profile": profile or build_profile(),
        "number": "—",
        "verdict": NOT_COMPUTED,
        "detail": f"No record in this build ({MAKE_STEP}).",
    }


# ----------------------------------------------------------------------------- display

_BADGE = '<span class="verdict verdict-{cls}">{text}</span>'
_LINK = '<a class="reference internal{extra}" href="{href}">{text}</a>'
_CAPTION = (
    "<caption>The paper's claims, each beside this book's number on the twin and its verdict; "
    "the last column links to where the book computes it</caption>"
)
_HEAD = (
    "<thead><tr><th>the paper's claim</th><th>paper</th><th>this book, on the twin</th>"
    "<th>verdict</th><th>computed in</th></tr></thead><tbody>"
)
_ROW = (
    '<tr id="claim-{id}"><td class="claim-paper"><strong>{where}.</strong> {statement}</td>'
    '<td class="claim-number">{paper}</td>'
    '<td class="claim-book"><span class="claim-number">{number}</span><br>{detail}{reason}</td>'
    "<td>{badge}</td><td>{link}</td></tr>"
)
_BOX = (
    '<p class="claim-box">{badge} <strong>Claim ({where}):</strong> {statement} '
    "<em>Paper:</em> {paper}. <em>This book:</em> {number}. {detail}{reason}</p>"
)
_TEXT_BOX = "[{verdict}] {where}: {statement} Paper: {paper}. This book: {number}. {detail}"


def _escape(text) -> str:
    return html_module.escape(str(text), quote=False)


def verdict_badge(verdict: str) -> str:
    """The verdict as a coloured badge (HTML)."""
    return _BADGE.format(cls=_VERDICT_CLASS[verdict], text=_escape(verdict))


def _up(from_docname: str) -> str:
    return "../" * from_docname.count("/")


def _href(record: dict, from_docname: str) -> str | None:
    """The section that computes the claim: `<chapter>.html#<label>`, relative to the page."""
    if not record.get("chapter"):
        return None
    anchor = "#" + record["anchor"] if record.get("anchor") else ""
    return _up(from_docname) + record["chapter"] + ".html" + anchor


def _reason_html(record: dict, from_docname: str) -> str:
    """A link to the register entry that says why the build differs from the paper, if any."""
    reason = record.get("reason")
    if not reason:
        return ""
    href = _up(from_docname) + reason["docname"] + ".html#" + reason["anchor"]
    text = "Why: " + _escape(reason["section"])
    return " " + _LINK.format(extra=" claim-reason", href=html_module.escape(href), text=text)


def _fields(record: dict, from_docname: str) -> dict:
    """The record's texts, escaped for HTML, with its badge and reason link."""
    return {
        **{k: _escape(record[k]) for k in ("id", "where", "statement", "paper", "number")},
        "detail": _escape(record["detail"]),
        "badge": verdict_badge(record["verdict"]),
        "reason": _reason_html(record, from_docname),
    }


class ClaimsTable:
    """The page's table (HTML in a notebook; a plain frame in a terminal)."""

    def __init__(self, records: list[dict], from_docname: str = PAGE_DOCNAME):
        self.records = records
        self.from_docname = from_docname

    def counts(self) -> dict[str, int]:
        """How many claims have each verdict."""
        return {v: sum(r["verdict"] == v for r in self.records) for v in VERDICTS}

    def _repr_html_(self) -> str:
        out = ['<table class="claims">', _CAPTION, _HEAD]
        for r in self.records:
            href = _href(r, self.from_docname)
            link = (
                _LINK.format(
                    extra="",
                    href=html_module.escape(href),
                    text=_escape(r["section"] or r["chapter"]),
                )
                if href
                else "—"
            )
            out.append(_ROW.format(**_fields(r, self.from_docname), link=link))
        out.append("</tbody></table>")
        return "\n".join(out)

    def __repr__(self) -> str:
        return "\n".join(": ".join((r["id"], r["verdict"], r["number"])) for r in self.records)


class ClaimBox:
    """One claim's verdict, for the chapter section that computes it."""

    def __init__(self, record: dict, from_docname: str = PAGE_DOCNAME):
        self.record = record
        self.from_docname = from_docname  # every chapter and the claims page sit one folder deep

    def _repr_html_(self) -> str:
        return _BOX.format(**_fields(self.record, self.from_docname))

    def __repr__(self) -> str:
        return _TEXT_BOX.format(**self.record)


def page(profile: str | None = None) -> ClaimsTable:
    """Every claim in the paper's order, from this build's records."""
    return ClaimsTable(records())


def show(claim_id: str, profile: str | None = None) -> ClaimBox:
    """One claim's verdict box."""
    return ClaimBox(current(claim_id, profile))
