"""Claims at a glance, as the pages show them: each of the paper's main claims with this build's
verdict on the twin, the number behind it and a link to the section that computes it.

The verdicts are computed by the main job (`crane_book.claims`, one record per claim in
results/claims/, written before any page runs); this module only reads those records.

    from crane_lib.reporting import claims
    claims.page()                      # the claims page's table
    claims.show("audit_margin_seeds")  # one claim's verdict box, for the chapter that computes it
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


def _escape(text) -> str:
    return html_module.escape(str(text), quote=False)


def verdict_badge(verdict: str) -> str:
    return f'<span class="verdict verdict-{_VERDICT_CLASS[verdict]}">{_escape(verdict)}</span>'


def _href(record: dict, from_docname: str) -> str | None:
    if not record.get("chapter"):
        return None
    depth = from_docname.count("/")
    target = "../" * depth + record["chapter"] + ".html"
    return target + (f"#{record['anchor']}" if record.get("anchor") else "")


def _reason_html(record: dict, from_docname: str) -> str:
    """A link to the register entry that says why the build differs from the paper, if any."""
    reason = record.get("reason")
    if not reason:
        return ""
    href = "../" * from_docname.count("/") + f"{reason['docname']}.html#{reason['anchor']}"
    return (
        f' <a class="reference internal claim-reason" href="{html_module.escape(href)}">'
        f"Why: {_escape(reason['section'])}</a>"
    )


class ClaimsTable:
    """The page's table (HTML in a notebook; a plain frame in a terminal)."""

    def __init__(self, records: list[dict], from_docname: str = PAGE_DOCNAME):
        self.records = records
        self.from_docname = from_docname

    def counts(self) -> dict[str, int]:
        return {v: sum(r["verdict"] == v for r in self.records) for v in VERDICTS}

    def _repr_html_(self) -> str:
        out = [
            '<table class="claims">',
            "<caption>The paper's claims, each beside this book's number on the twin and its "
            "verdict; "
            "the last column links to where the book computes it</caption>",
            "<thead><tr><th>the paper's claim</th><th>paper</th><th>this book, on the twin</th>"
            "<th>verdict</th><th>computed in</th></tr></thead><tbody>",
        ]
        for r in self.records:
            href = _href(r, self.from_docname)
            where = (
                f'<a class="reference internal" href="{html_module.escape(href)}">{_escape(r["section"] or r["chapter"])}</a>'
                if href
                else "—"
            )
            out.append(
                f'<tr id="claim-{_escape(r["id"])}"><td class="claim-paper"><strong>{_escape(r["where"])}.</strong> {_escape(r["statement"])}</td>'
                f'<td class="claim-number">{_escape(r["paper"])}</td>'
                f'<td class="claim-book"><span class="claim-number">{_escape(r["number"])}</span>'
                "<br>"
                f"{_escape(r['detail'])}{_reason_html(r, self.from_docname)}</td>"
                f"<td>{verdict_badge(r['verdict'])}</td><td>{where}</td></tr>"
            )
        out.append("</tbody></table>")
        return "\n".join(out)

    def __repr__(self) -> str:
        return "\n".join(f"{r['id']}: {r['verdict']}: {r['number']}" for r in self.records)


class ClaimBox:
    """One claim's verdict, for the chapter section that computes it."""

    def __init__(self, record: dict, from_docname: str = PAGE_DOCNAME):
        self.record = record
        self.from_docname = from_docname  # every chapter and the claims page sit one folder deep

    def _repr_html_(self) -> str:
        r = self.record
        return (
            f'<p class="claim-box">{verdict_badge(r["verdict"])} <strong>Claim ({_escape(r["where"])}):</strong> '
            f"{_escape(r['statement'])} <em>Paper:</em> {_escape(r['paper'])}. <em>This book:</em> {_escape(r['number'])}. "
            f"{_escape(r['detail'])}{_reason_html(r, self.from_docname)}</p>"
        )

    def __repr__(self) -> str:
        r = self.record
        return f"[{r['verdict']}] {r['where']}: {r['statement']} Paper: {r['paper']}. This book: {r['number']}. {r['detail']}"


def page(profile: str | None = None) -> ClaimsTable:
    """Every claim in the paper's order, from this build's records."""
    return ClaimsTable(records())


def show(claim_id: str, profile: str | None = None) -> ClaimBox:
    """One claim's verdict box."""
    return ClaimBox(current(claim_id, profile))


def summary_sentence(table: ClaimsTable) -> str:
    """A sentence counting the verdicts (generated, so the page's prose cannot go stale)."""
    counts = table.counts()
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
    return (
        f"Of the {len(table.records)} claims listed, "
        + ", ".join(parts)
        + f" (profile `{build_profile()}`)."
    )
