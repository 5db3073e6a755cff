"""The one "paper / this book / why they differ" table builder, the results tables, and the number
formatting and wording every chapter uses.

A comparison is a list of rows, each naming a quantity, the paper's number (by its id in
`data/paper_numbers.csv`, never retyped), this book's value and, where they differ, why. The
verdict of agreement is computed, not typed: a book value that rounds to the paper's value at
the paper's significant digits (or lies inside the paper's stated range, or within its stated
bound) "agrees"; any other row must carry a reason, and a table whose rows differ without one is
refused. Reasons fall into the kinds the project distinguishes (twin vs real arm, reconstruction
choice, a real finding, a profile that runs a subset); a reason shared by every differing row is
shown once under the table instead of on each row.

    rows = [
        Comparison("offset RL3", "dh_offset_rl3", table[2].r, unit="m"),
        Comparison("κ of AG02 at 40 ms", "ag02_kappa_40ms", kappa, why=Why.twin("the twin's noise
        floor is lower")),
        Comparison("files without a three-joint segment", "traj_without_three_joint", Count(19, 40),
                   paper_whole="id_candidate_count"),
    ]
    comparison_table(rows, caption="The counts of Appendix B", name="tab-counts")

Displayed in a notebook, a table is MyST markdown: a `{table}` directive, numbered by Sphinx
when it has a `name` (so prose can say {numref}`tab-counts`), the paper's id as a hover title on
the paper's value, long reasons wrapped, never cut. Chapters set `render_markdown_format: myst`
in their notebook metadata so that myst-nb parses it (in Jupyter the pipe table still renders).
`numbered(frame, ...)` does the same for a results table that is not a comparison; `formatted`
gives every number of a column the same format.
"""

from __future__ import annotations

import html as html_module
import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from crane_lib.formatting import DASH, significant  # noqa: F401 (the chapters' formatter)
from crane_lib.paper_numbers import PaperNumber, paper
from crane_lib.reporting import captions

# ----------------------------------------------------------------------------- numbers


def span(values, digits: int = 3) -> str:
    """'a' when all values round alike, else 'min to max' (both to `digits` significant digits)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return DASH
    low, high = significant(values.min(), digits), significant(values.max(), digits)
    return low if low == high else f"{low} to {high}"


def percent(fraction: float, digits: int = 2) -> str:
    """A fraction printed as a percentage with `digits` significant digits."""
    return (
        DASH
        if fraction is None or np.isnan(fraction)
        else f"{significant(100.0 * fraction, digits)} %"
    )


def count_of(part: int, whole: int) -> str:
    """'69 of 160'."""
    return f"{int(part)} of {int(whole)}"


def signed_percent(change: float, digits: int = 3) -> str:
    """A relative change as '+1.23 %' or '−4.5 %' (the sign always shown)."""
    if change is None or np.isnan(change):
        return DASH
    text = significant(abs(100.0 * change), digits)
    return f"{'+' if change >= 0 else '−'}{text} %"


def joined(items, last: str = "and") -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """'1 pass', '3 passes' (the count and the noun agreeing)."""
    return f"{int(n)} {singular if int(n) == 1 else (plural_form or singular + 's')}"


def compared(
    ours: float,
    theirs: float,
    higher: str = "higher",
    lower: str = "lower",
    same: str = "the same as",
    rtol: float = 0.0,
) -> str:
    """The word that states how `ours` stands to `theirs`: computed, never typed ("higher" /
    "lower")."""
    if math.isclose(ours, theirs, rel_tol=rtol, abs_tol=0.0):
        return same
    return higher if ours > theirs else lower


def paper_number_text(n: PaperNumber, fmt: str | None = None, with_unit: bool = True) -> str:
    """The paper's number as printed in prose: its value or range as written, with its unit."""
    if fmt is not None:
        return n.text(fmt) if with_unit else n.text(fmt).removesuffix(f" {n.unit}")
    low = _written(n.value_text, n.value)
    dash = " to " if n.value < 0 else "–"
    text = low if n.value_hi is None else f"{low}{dash}{_written(n.value_hi_text, n.value_hi)}"
    if with_unit and n.unit not in ("", "1", "count"):
        text = f"{text} {pretty_unit(n.unit)}"
    return text


def paper_number_title(n: PaperNumber) -> str:
    """Where the paper's number comes from, for a hover title: id, section, table or figure."""
    return _source(n)


def cite(number_id: str, fmt: str | None = None, with_unit: bool = True) -> str:
    """The paper's number as inline HTML with its id and section as a hover title."""
    n = paper(number_id)
    text = paper_number_text(n, fmt, with_unit)
    return f'<span class="paper-number" title="{_attribute(_source(n))}">{escape(text)}</span>'


def _written(text: str, value: float) -> str:
    """The paper's number as written, integers with the same thousands spacing as ours."""
    if text.isdigit():
        return significant(int(text))
    return text or significant(value)


def pretty_unit(unit: str) -> str:
    """A unit as printed: powers as superscripts ("kg·m^2" -> "kg·m²", "1/s^2" -> "1/s²")."""
    for plain, sup in (("^-1", "⁻¹"), ("^-2", "⁻²"), ("^2", "²"), ("^3", "³")):
        unit = unit.replace(plain, sup)
    return unit


def _source(n: PaperNumber) -> str:
    return (
        f"paper_numbers.csv: {n.id} (Sec. {n.section}"
        + (f", {n.reproduces}" if n.reproduces else "")
        + ")"
    )


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
    BEYOND = "beyond the paper"

    # Why.twin("..."), Why.reconstruction("..."), Why.finding("..."), Why.profile("..."),
    # Why.not_comparable("..."); the text may be left out when the kind says it all
    twin = classmethod(lambda cls, text="": cls(cls.TWIN, text))
    reconstruction = classmethod(lambda cls, text="": cls(cls.RECONSTRUCTION, text))
    finding = classmethod(lambda cls, text="": cls(cls.FINDING, text))
    profile = classmethod(lambda cls, text="": cls(cls.PROFILE, text))
    not_comparable = classmethod(lambda cls, text="": cls(cls.NOT_COMPARABLE, text))

    @classmethod
    def beyond(cls, text: str = "") -> "Why":
        """A row the paper has no number for: this book measures more than the paper did."""
        return cls(cls.BEYOND, text)

    def __add__(self, other: "Why | str") -> "Why":
        """Two reasons at once: 'twin vs real arm: a; profile runs a subset: b'."""
        more = str(other).strip().lstrip(";").strip()
        if not more:
            return self
        return Why(self.kind, f"{self.text}; {more}" if self.text else more)

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}" if self.text else self.kind


AGREES = "agrees to the paper's digits"
IN_RANGE = "inside the paper's range"
WITHIN_BOUND = "within the paper's bound"
SAME = "the same"


@dataclass(frozen=True)
class Count:
    """'part of whole' (a count out of a total), compared as such: 3 of 7 agrees only with 3 of
    7."""

    part: int
    whole: int

    def __str__(self) -> str:
        return count_of(self.part, self.whole)


# ----------------------------------------------------------------------------- one row


@dataclass
class Comparison:
    """One row: `quantity` (with `unit`), the paper's number `paper_id` (or None when the paper
    states none for it, `paper_text` then says what it does state), this book's `book` value and
    `why` they differ (a Why, or None when the computed verdict is agreement).

    `book` is a number, a text (agrees only with an equal `paper_text`), a sequence of numbers
    (one per seed or execution: shown as a span, agreeing when every value does) or a Count
    (compared with the paper's count `paper_id` out of `paper_whole`, an id or a number).
    `bound` "upper"/"lower" reads the paper's number as "at most"/"at least"."""

    quantity: str
    paper_id: str | None
    book: object
    unit: str | None = None
    why: Why | None = None
    paper_text: str | None = None
    digits: int | None = (
        None  # significant digits of the book value (default: the paper's, at least 3)
    )
    rtol: float | None = None  # agreement tolerance instead of the paper's rounding
    bound: str | None = None  # "upper" (the paper states at most) or "lower" (at least)
    paper_whole: str | float | None = None  # with a Count: the paper's total (an id or a number)

    number: PaperNumber | None = field(init=False, default=None)

    def __post_init__(self):
        if self.bound not in (None, "upper", "lower"):
            raise ValueError(
                f"row {self.quantity!r}: bound {self.bound!r}, expected 'upper' or 'lower'"
            )
        if self.paper_id is not None:
            self.number = paper(self.paper_id)
            if (
                self.unit is None
                and self.number.unit not in ("", "1", "count")
                and not isinstance(self.book, Count)
            ):
                self.unit = pretty_unit(self.number.unit)
        if isinstance(self.book, (list, tuple, np.ndarray, pd.Series)):
            values = np.asarray(self.book)
            self.book = values if values.dtype.kind in "iu" else values.astype(float)

    def _whole(self) -> float | None:
        if self.paper_whole is None:
            return None
        return (
            paper(self.paper_whole).value
            if isinstance(self.paper_whole, str)
            else float(self.paper_whole)
        )

    # the paper's side
    def paper_cell(self) -> str:
        """The paper's value as printed in the row's "paper" cell."""
        if self.paper_text is not None:
            return self.paper_text
        if self.number is None:
            return DASH
        n = self.number
        low = _written(n.value_text, n.value)
        if isinstance(self.book, Count) and self._whole() is not None:
            return count_of(n.value, self._whole())
        if n.value_hi is not None:
            # the upper end as the paper writes it (it keeps its own digits: "0.45 to 3.55", not
            # "0.45 to 3.5")
            return f"{low} to {_written(n.value_hi_text, n.value_hi)}"
        return {"upper": "≤ ", "lower": "≥ "}.get(self.bound, "") + low

    def book_cell(self) -> str:
        """This book's value as printed in the row's "this book" cell."""
        if isinstance(self.book, str) or self.book is None:
            return self.book if self.book is not None else DASH
        if isinstance(self.book, Count):
            return str(self.book)
        digits = self.digits or max(self.number.significant_digits if self.number else 4, 3)
        if isinstance(self.book, np.ndarray):
            if self.book.dtype.kind in "iu" and self.book.size:
                low, high = significant(int(self.book.min())), significant(int(self.book.max()))
                return low if low == high else f"{low} to {high}"
            return span(self.book, digits)
        return significant(self.book, digits)

    def _agrees(self, book: float) -> str | None:
        n = self.number
        if math.isnan(book):
            return None
        if n.value_hi is not None:
            return (
                IN_RANGE if min(n.value, n.value_hi) <= book <= max(n.value, n.value_hi) else None
            )
        if self.bound is not None:
            slack = self._half_unit()
            inside = book <= n.value + slack if self.bound == "upper" else book >= n.value - slack
            return WITHIN_BOUND if inside else None
        if self.rtol is not None:
            return AGREES if math.isclose(book, n.value, rel_tol=self.rtol, abs_tol=0.0) else None
        if n.value == 0:
            return AGREES if book == 0 else None
        if abs(book - n.value) <= self._half_unit():
            return AGREES
        # the paper states a bound ("less than 1 %", "at most 1.26 %"): its note in
        # paper_numbers.csv says which
        note = n.note.strip().lower()
        if (
            note.startswith("upper bound")
            and book <= n.value
            or note.startswith("lower bound")
            and book >= n.value
        ):
            return WITHIN_BOUND
        return None

    def _half_unit(self) -> float:
        n = self.number
        if n.value == 0:
            return 0.0
        scale = 10 ** (math.floor(math.log10(abs(n.value))) - n.significant_digits + 1)
        return 0.5 * scale * (1 + 1e-9)

    def agreement(self) -> str | None:
        """AGREES, IN_RANGE, WITHIN_BOUND (an explicit `bound`, or the paper's note marks its number
        an upper
        or lower bound) or SAME when computed so, else None (then a reason is needed)."""
        if isinstance(self.book, str):
            if (
                self.paper_text is not None
                and self.book.strip().lower() == self.paper_text.strip().lower()
            ):
                return SAME
            return None
        if self.number is None or self.paper_text is not None or self.book is None:
            return None
        if isinstance(self.book, Count):
            whole = self._whole()
            same = self.book.part == self.number.value and (
                whole is None or self.book.whole == whole
            )
            return SAME if same else None
        if isinstance(self.book, np.ndarray):
            n = self.number
            if (
                n.value_hi is not None
                and self.book.size == 2
                and tuple(self.book) == (n.value, n.value_hi)
            ):
                return SAME  # the same range (e.g. columns 2 to 9)
            verdicts = {self._agrees(float(v)) for v in self.book}
            return (
                verdicts.pop()
                if len(verdicts) == 1 and None not in verdicts and self.book.size
                else None
            )
        return self._agrees(float(self.book))

    def verdict(self) -> str:
        """The row's verdict: agrees, inside the range or bound, or the reason it differs."""
        agreed = self.agreement()
        if agreed is not None:
            return agreed if self.why is None else f"{agreed}; {self.why}"
        if self.why is None:
            raise ValueError(
                f"row {self.quantity!r}: this book's {self.book_cell()} differs from the paper's "
                f"{self.paper_cell()} ({self.paper_id}) and no reason is given"
            )
        return str(self.why)


# ----------------------------------------------------------------------------- MyST output


class MyST(str):
    """Text that is already MyST markdown (a link, a role, math): put into a table cell as is."""


def _text(value) -> str:
    return html_module.escape(str(value), quote=False)


def _attribute(value) -> str:
    return html_module.escape(str(value), quote=True)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|$#{}])")


def escape(value) -> str:
    """Plain text made safe inside MyST markdown (every markup character escaped, one line)."""
    if isinstance(value, MyST):
        return str(value).replace("|", "\\|").replace("\n", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(value)).replace("\n", " ")


def _myst_table(
    header: list[str],
    rows: list[list[str]],
    caption: str | None,
    name: str | None,
    classes: str,
    after: str = "",
    paper_numeral: str | None = None,
) -> str:
    """A MyST `{table}` directive (a pipe table inside); numbered when it has a caption, per
    chapter or, when it regenerates one of the paper's tables, by the paper's numeral."""
    lines = [":::{table} " + (captions.caption(caption) if caption else "")]
    if name:
        lines.append(f":name: {name}")
    if paper_numeral:
        classes = f"{classes} {captions.paper_class(paper_numeral)}"
    lines.append(f":class: {classes}")
    lines.append("")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    lines.append(":::")
    if after:
        lines += ["", after]
    return "\n".join(lines) + "\n"


class _Displayed:
    """Displays itself as MyST markdown (myst-nb makes it a numbered table) and plain text."""

    def markdown(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def _ipython_display_(self):
        from IPython.display import display

        display({"text/markdown": self.markdown(), "text/plain": repr(self)}, raw=True)


# ----------------------------------------------------------------------------- the comparison table


@dataclass
class ComparisonTable(_Displayed):
    rows: list[Comparison]
    caption: str | None = None
    label: str = "quantity"
    name: str | None = None  # the label prose refers to ({numref}`name`)
    paper: str | None = None  # the numeral of the paper's table it regenerates ("XI")

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
        differing = [r for r in self.rows if r.agreement() is None]
        reasons = {str(r.why) for r in differing}
        return reasons.pop() if len(reasons) == 1 and len(differing) > 1 else None

    def _common_unit(self) -> str | None:
        units = {r.unit or "" for r in self.rows}
        return units.pop() or None if len(units) == 1 else None

    def _cells(self):
        """(label, paper, paper title, book, reason) per row, with the shared reason folded."""
        shared, common = self.shared_reason(), self._common_unit()
        for row in self.rows:
            label = row.quantity + (f" ({row.unit})" if row.unit and not common else "")
            title = _source(row.number) if row.number is not None else None
            reason = row.verdict()
            yield (
                label,
                row.paper_cell(),
                title,
                row.book_cell(),
                ("see note" if shared is not None and reason == shared else reason),
            )

    def markdown(self) -> str:
        """The comparison table as a MyST table with its caption and name."""
        common = self._common_unit()
        header = [
            escape(self.label + (f" ({common})" if common else "")),
            "paper",
            "this book",
            "why they differ",
        ]
        rows = []
        for label, paper_cell, title, book, reason in self._cells():
            shown = escape(paper_cell)
            if title:
                shown = (
                    f'<span class="paper-number" title="{_attribute(title)}">'
                    f"{escape(paper_cell)}</span>"
                )
            rows.append([escape(label), shown, escape(book), escape(reason)])
        shared = self.shared_reason()
        note = (
            f'*Why they differ (every row marked "see note"):* {escape(shared)}' if shared else ""
        )
        return _myst_table(header, rows, self.caption, self.name, "comparison", note, self.paper)

    def html(self) -> str:
        """The same table as an HTML fragment (for pages that are not chapters)."""
        common = self._common_unit()
        head = self.label + (f" ({common})" if common else "")
        paper_class = f" {captions.paper_class(self.paper)}" if self.paper else ""
        out = [f'<table class="comparison{paper_class}">']
        if self.caption:
            # a page that is not a chapter numbers nothing: the paper's numeral is written out
            shown = captions.caption(self.caption)
            shown = f"Table {self.paper}: {shown}" if self.paper else shown
            out.append(f"<caption>{_text(shown)}</caption>")
        out.append(
            f"<thead><tr><th>{_text(head)}</th><th>paper</th><th>this book</th><th>why they "
            "differ</th></tr></thead><tbody>"
        )
        for label, paper_cell, title, book, reason in self._cells():
            hover = f' title="{_attribute(title)}"' if title else ""
            out.append(
                f"<tr><td>{_text(label)}</td><td{hover}>{_text(paper_cell)}</td>"
                f'<td>{_text(book)}</td><td class="why">{_text(reason)}</td></tr>'
            )
        out.append("</tbody></table>")
        shared = self.shared_reason()
        if shared is not None:
            out.append(
                f'<p class="comparison-reason"><em>Note, why they differ:</em> {_text(shared)}</p>'
            )
        return "\n".join(out)

    def __repr__(self) -> str:
        return self.frame.to_string(index=False)


def comparison_table(
    rows: list[Comparison],
    caption: str | None = None,
    label: str = "quantity",
    name: str | None = None,
    paper: str | None = None,
) -> ComparisonTable:
    """Build the table; every differing row must say why (a ValueError names the row otherwise).
    A captioned table is numbered per chapter, or by `paper`, the numeral of the paper's table
    it regenerates ("XI"); with a `name` prose can refer to it."""
    table = ComparisonTable(list(rows), caption, label, name, paper)
    table.frame  # noqa: B018 (computes every verdict now, so a missing reason fails where the table is built)
    return table


# ----------------------------------------------------------------------------- results tables


def formatted(frame: pd.DataFrame, digits: int | dict[str, int] = 4) -> pd.DataFrame:
    """A results table (not a comparison) with every number to `digits` significant digits (per
    column when a dict), the same format in every cell of a column, NaN as a dash."""
    out = frame.copy()
    for column in out.columns:
        d = digits.get(column, 4) if isinstance(digits, dict) else digits
        if (
            pd.api.types.is_numeric_dtype(out[column])
            or out[column].map(lambda v: isinstance(v, (int, float, np.number))).all()
        ):
            out[column] = [significant(v, d) for v in out[column]]
    return out


def _label(key) -> str:
    if isinstance(key, tuple):
        return " · ".join(str(k) for k in key if str(k) != "")
    return str(key)


@dataclass
class ResultTable(_Displayed):
    """A results table (not a comparison), numbers formatted alike, numbered when it has a name."""

    frame: pd.DataFrame
    caption: str | None = None
    name: str | None = None
    digits: int | dict = 4
    index: bool = True
    paper: str | None = None  # the numeral of the paper's table it regenerates ("IX")

    def _shown(self) -> pd.DataFrame:
        shown = formatted(self.frame, self.digits)
        if self.index:
            names = [n if n is not None else "" for n in shown.index.names]
            shown = shown.reset_index()
            shown.columns = [
                _label(c) if i >= len(names) else names[i] for i, c in enumerate(shown.columns)
            ]
        else:
            shown.columns = [_label(c) for c in shown.columns]
        return shown

    def markdown(self) -> str:
        """The result table as a MyST table with its caption and name."""
        shown = self._shown()
        header = [escape(c) for c in shown.columns]
        rows = [
            [escape(significant(v) if not isinstance(v, str) else v) for v in row]
            for row in shown.itertuples(index=False)
        ]
        return _myst_table(
            header, rows, self.caption, self.name, "results", paper_numeral=self.paper
        )

    def __repr__(self) -> str:
        return self._shown().to_string(index=False)


def numbered(
    frame: pd.DataFrame,
    caption: str | None = None,
    name: str | None = None,
    digits: int | dict = 4,
    index: bool = True,
    paper: str | None = None,
) -> ResultTable:
    """A results DataFrame shown as a captioned table, numbered per chapter or by `paper` (the
    numeral of the paper's table it regenerates), numbers formatted alike per column
    (`formatted`); the index becomes the first column(s) unless index=False."""
    return ResultTable(frame, caption, name, digits, index, paper)
