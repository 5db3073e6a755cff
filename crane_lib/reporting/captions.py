"""How a table or figure of the book is captioned and numbered: the one helper every view and
chapter uses.

The book numbers its own tables and figures per chapter ("Table 6.2", "Fig. 11.4"); a table or
figure that regenerates one of the paper's carries the paper's numeral instead ("Table IX",
"Fig. 3(b)"), so no number of the book can be read as the paper's. Sphinx assigns the numbers
and the book's extension `crane_book.numbering` rewrites them; what marks a table or figure as
the paper's is the class `paper_class(numeral)` on it:

    comparison_table(rows, caption="on the twin, beside the paper's values", paper="XI")
    numbered(frame, caption="the ramp-sample criterion per interval")       # Table 9.3
    # a figure cell of a chapter:
    # %% mystnb={"figure": {"name": "fig-x", "caption": "…", "classes": "paper-3b"}}

A caption says what to look at; it never starts with a number of its own (`caption` refuses
one, so that "Table XI" is not printed twice).
"""

from __future__ import annotations

import re

_NUMERAL = re.compile(r"^(?:(?P<roman>[IVXLC]+)|(?P<number>\d+)(?:\((?P<sub>[a-z])\))?)$")
_NUMBERED = re.compile(r"^(Table|Fig\.|Figure)\s+[IVXLC\d]+\b")


def paper_class(numeral: str) -> str:
    """The class marking a table or figure that regenerates the paper's `numeral` ('IX', '3(b)')."""
    match = _NUMERAL.match(numeral.strip())
    if not match:
        raise ValueError(
            f"{numeral!r} is not a numeral of the paper's tables or figures ('IX', '3', '3(b)')"
        )
    if match["roman"]:
        return f"paper-{match['roman'].lower()}"
    return f"paper-{match['number']}{match['sub'] or ''}"


def caption(text: str | None) -> str:
    """The caption text as a table or figure shows it: one line, and no number of its own."""
    text = " ".join(str(text or "").split())
    if not text:
        raise ValueError("a table or figure needs a caption that says what to look at")
    if _NUMBERED.match(text):
        raise ValueError(
            f"caption {text!r} starts with a number: the number is assigned, pass paper= instead"
        )
    return text
