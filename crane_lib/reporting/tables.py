"""The one "paper / this book / why they differ" table builder, and the number formatting every
chapter uses.

A comparison is a list of rows, each naming a quantity, the paper's number (by its id in
`data/paper_numbers.csv`, never retyped), this book's value and, where they differ, why. The
verdict of agreement is computed, not typed: a book value that rounds to the paper's value at
the paper's significant digits (or lies inside the paper's stated range) "agrees"; any other
row must carry a reason, and a table whose rows differ without one is refused. Reasons fall
into the kinds the project distinguishes (twin vs real arm, reconstruction choice, a real
finding, a profile that runs a subset); a reason shared by every differing row is shown once
under the table instead of on each row.

    rows = [
        Comparison("offset RL3", "dh_offset_rl3", table[2].r, unit="m"),
        Comparison("κ of AG02 at 40 ms", "kappa_ag02_40", kappa, why=Why.twin("the twin's noise floor is lower")),
    ]
    comparison_table(rows, caption="Table I: ...")   # displays as HTML in a notebook

The HTML wraps long reasons instead of cutting them, gives the paper's id as a hover title,
and formats every number of a column the same way.
"""

from __future__ import annotations

import html as html_module
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from crane_lib.paper_numbers import PaperNumber, paper

DASH = "—"


# ----------------------------------------------------------------------------- numbers


def significant(value, digits: int = 4) -> str:
    """A number to `digits` significant digits (trailing zeros kept: they state the precision),
    in exponent form only below 1e-3 or from 1e6; an int stays an int (thin-space thousands)."""
    if value is None or isinstance(value, str):
        return DASH if value is None else value
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}".replace(",", "\u2009")
    value = float(value)
    if math.isnan(value):
        return DASH
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude < 1e-3 or magnitude >= 1e6:
        return f"{value:.{max(digits - 1, 0)}e}"
    decimals = digits - 1 - math.floor(math.log10(magnitude))
    if decimals < 0:  # round the integer part itself: 5526.7 to 3 digits is 5530
        return f"{round(value, decimals):.0f}"
    return f"{value:.{decimals}f}"


def span(values, digits: int = 3) -> str:
    """'a' when all values round alike, else 'min to max' (both to `digits` significant digits)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return DASH
    low, high = significant(values.min(), digits), significant(values.max(), digits)
    return low if low == high else f"{low} to {high}"


def percent(fraction: float, digits: int = 2) -> str:
    return DASH if fraction is None or np.isnan(fraction) else f"{significant(100.0 * fraction, digits)} %"


def count_of(part: int, whole: int) -> str:
    """'69 of 160'."""
    return f"{int(part)} of {int(whole)}"


# ----------------------------------------------------------------------------- why they differ


@dataclass(frozen=True)
class Why:
    """Why this book's number differs from the paper's: a kind and the reason in words."""

    kind: str
    text: str

    TWIN = "twin vs real arm"
    RECONSTRUCTION = "reconstruction choice"
    FINDING = "a real finding"
    PROFILE = "profile runs a subset"
    NOT_COMPARABLE = "not comparable"

    # Why.twin("..."), Why.reconstruction("..."), Why.finding("..."), Why.profile("...")
    twin = classmethod(lambda cls, text: cls(cls.TWIN, text))
    reconstruction = classmethod(lambda cls, text: cls(cls.RECONSTRUCTION, text))
    finding = classmethod(lambda cls, text: cls(cls.FINDING, text))
    profile = classmethod(lambda cls, text: cls(cls.PROFILE, text))

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}" if self.text else self.kind


AGREES = "agrees to the paper's digits"
IN_RANGE = "inside the paper's range"
WITHIN_BOUND = "within the paper's bound"


# ----------------------------------------------------------------------------- one row


@dataclass
class Comparison:
    """One row: `quantity` (with `unit`), the paper's number `paper_id` (or None when the paper
    states none for it, `paper_text` then says what it does state), this book's `book` value
    (a number, or a text such as "3 of 7"), and `why` they differ (a Why, or None when the
    computed verdict is agreement)."""

    quantity: str
    paper_id: str | None
    book: object
    unit: str | None = None
    why: Why | None = None
    paper_text: str | None = None
    digits: int | None = None  # significant digits of the book value (default: the paper's, at least 3)
    rtol: float | None = None  # agreement tolerance instead of the paper's rounding

    number: PaperNumber | None = field(init=False, default=None)

    def __post_init__(self):
        if self.paper_id is not None:
            self.number = paper(self.paper_id)
            if self.unit is None and self.number.unit not in ("", "1", "count"):
                self.unit = self.number.unit

    # the paper's side
    def paper_cell(self) -> str:
        if self.paper_text is not None:
            return self.paper_text
        if self.number is None:
            return DASH
        n = self.number
        low = n.value_text or significant(n.value)
        if n.value_hi is None:
            return low
        # the upper end keeps at least its own digits ("0.45 to 3.55", not "0.45 to 3.5")
        own = len(f"{n.value_hi:g}".lower().split("e")[0].lstrip("+-").replace(".", "").lstrip("0")) or 1
        return f"{low} to {significant(n.value_hi, max(n.significant_digits, own))}"

    def book_cell(self) -> str:
        if isinstance(self.book, str) or self.book is None:
            return self.book if self.book is not None else DASH
        digits = self.digits or max(self.number.significant_digits if self.number else 4, 3)
        return significant(self.book, digits)

    def agreement(self) -> str | None:
        """AGREES, IN_RANGE or WITHIN_BOUND (the paper's note marks its number an upper or lower bound)
        when computed so, else None (then a reason is needed)."""
        if self.number is None or self.paper_text is not None or isinstance(self.book, str) or self.book is None:
            return None
        book = float(self.book)
        if math.isnan(book):
            return None
        n = self.number
        if n.value_hi is not None:
            return IN_RANGE if min(n.value, n.value_hi) <= book <= max(n.value, n.value_hi) else None
        if self.rtol is not None:
            return AGREES if math.isclose(book, n.value, rel_tol=self.rtol, abs_tol=0.0) else None
        if n.value == 0:
            return AGREES if book == 0 else None
        digits = n.significant_digits
        scale = 10 ** (math.floor(math.log10(abs(n.value))) - digits + 1)
        if abs(book - n.value) <= 0.5 * scale * (1 + 1e-9):
            return AGREES
        # the paper states a bound ("less than 1 %", "at most 1.26 %"): its note in paper_numbers.csv says which
        bound = n.note.strip().lower()
        if bound.startswith("upper bound") and book <= n.value or bound.startswith("lower bound") and book >= n.value:
            return WITHIN_BOUND
        return None

    def verdict(self) -> str:
        agreed = self.agreement()
        if agreed is not None:
            return agreed if self.why is None else f"{agreed}; {self.why}"
        if self.why is None:
            raise ValueError(f"row {self.quantity!r}: this book's {self.book_cell()} differs from the paper's "
                             f"{self.paper_cell()} ({self.paper_id}) and no reason is given")
        return str(self.why)


# ----------------------------------------------------------------------------- the table


@dataclass
class ComparisonTable:
    rows: list[Comparison]
    caption: str | None = None
    label: str = "quantity"

    @property
    def frame(self) -> pd.DataFrame:
        """The table as data: quantity, unit, paper, this book, why they differ, paper id."""
        return pd.DataFrame(
            {
                self.label: [r.quantity for r in self.rows],
                "unit": [r.unit or "" for r in self.rows],
                "paper": [r.paper_cell() for r in self.rows],
                "this book": [r.book_cell() for r in self.rows],
                "why they differ": [r.verdict() for r in self.rows],
                "paper id": [r.paper_id or "" for r in self.rows],
            }
        )

    def shared_reason(self) -> str | None:
        """The reason every differing row gives, when they all give the same one (shown once)."""
        reasons = {str(r.why) for r in self.rows if r.agreement() is None}
        return reasons.pop() if len(reasons) == 1 and sum(r.agreement() is None for r in self.rows) > 1 else None

    def _repr_html_(self) -> str:
        frame = self.frame
        shared = self.shared_reason()
        units = set(frame["unit"])
        common_unit = units.pop() if len(units) == 1 else None
        head = self.label + (f" ({common_unit})" if common_unit else "")
        out = ['<table class="comparison">']
        if self.caption:
            out.append(f"<caption>{_text(self.caption)}</caption>")
        out.append(f"<thead><tr><th>{_text(head)}</th><th>paper</th><th>this book</th><th>why they differ</th></tr></thead><tbody>")
        for row, record in zip(self.rows, frame.itertuples(index=False)):
            label = record[0] + (f" ({record.unit})" if record.unit and not common_unit else "")
            title = ""
            if row.number is not None:
                title = f' title="{_attribute(f"paper_numbers.csv: {row.paper_id} (Sec. {row.number.section}" + (f", {row.number.reproduces}" if row.number.reproduces else "") + ")")}"'
            reason = record[4]
            if shared is not None and reason == shared:
                reason = "see note"
            out.append(
                f"<tr><td>{_text(label)}</td><td{title}>{_text(record.paper)}</td>"
                f"<td>{_text(record[3])}</td><td class=\"why\">{_text(reason)}</td></tr>"
            )
        out.append("</tbody></table>")
        if shared is not None:
            out.append(f'<p class="comparison-reason"><em>Note, why they differ:</em> {_text(shared)}</p>')
        return "\n".join(out)

    def __repr__(self) -> str:
        return self.frame.to_string(index=False)


def _text(value) -> str:
    return html_module.escape(str(value), quote=False)


def _attribute(value) -> str:
    return html_module.escape(str(value), quote=True)


def comparison_table(rows: list[Comparison], caption: str | None = None, label: str = "quantity") -> ComparisonTable:
    """Build the table; every differing row must say why (a ValueError names the row otherwise)."""
    table = ComparisonTable(list(rows), caption, label)
    table.frame  # noqa: B018 (computes every verdict now, so a missing reason fails where the table is built)
    return table


def formatted(frame: pd.DataFrame, digits: int | dict[str, int] = 4) -> pd.DataFrame:
    """A results table (not a comparison) with every number to `digits` significant digits (per
    column when a dict), the same format in every cell of a column, NaN as a dash."""
    out = frame.copy()
    for column in out.columns:
        d = digits.get(column, 4) if isinstance(digits, dict) else digits
        if pd.api.types.is_numeric_dtype(out[column]) or out[column].map(lambda v: isinstance(v, (int, float, np.number))).all():
            out[column] = [significant(v, d) for v in out[column]]
    return out
