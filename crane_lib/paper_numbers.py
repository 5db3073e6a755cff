"""The numbers the paper's prose states, read by id from `data/paper_numbers.csv`.

Every "paper" column of the book reads from here, so no paper number is retyped.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from crane_lib.paths import DATA_DIR

PAPER_NUMBERS_CSV = DATA_DIR / "paper_numbers.csv"


@dataclass(frozen=True)
class PaperNumber:
    id: str
    section: str
    quantity: str
    value: float
    value_hi: float | None
    unit: str
    note: str
    value_text: str = ""  # the value as the paper writes it (its significant digits)
    reproduces: str = ""  # the table or figure the text links the number to
    value_hi_text: str = ""  # the upper end of a range as the paper writes it

    @property
    def significant_digits(self) -> int:
        """Significant digits of the value as written ("2.3179" -> 5, "160" -> 3, "1e-3" -> 1)."""
        mantissa = self.value_text.lower().split("e")[0].lstrip("+-").replace(".", "").lstrip("0")
        return max(len(mantissa), 1)

    def text(self, fmt: str = "{:g}") -> str:
        """The number as the paper states it: a value or a range, with its unit."""
        low = fmt.format(self.value)
        body = low if self.value_hi is None else f"{low}–{fmt.format(self.value_hi)}"
        return body if self.unit in ("", "1", "count") else f"{body} {self.unit}"


@lru_cache(maxsize=1)
def table() -> pd.DataFrame:
    """The paper's numbers as a table indexed by id."""
    return pd.read_csv(PAPER_NUMBERS_CSV, dtype=str, keep_default_na=False).set_index("id")


def paper(number_id: str) -> PaperNumber:
    """The paper's number `number_id`; a KeyError names the id if the CSV has no such row."""
    frame = table()
    if number_id not in frame.index:
        raise KeyError(f"{PAPER_NUMBERS_CSV}: no paper number with id {number_id!r}")
    row = frame.loc[number_id]
    hi = row["value_hi"]
    return PaperNumber(
        id=number_id,
        section=row["section"],
        quantity=row["quantity"],
        value=float(row["value"]),
        value_hi=float(hi) if str(hi).strip() else None,
        unit=row["unit"],
        note=row["note"],
        value_text=row["value"].strip(),
        reproduces=row["reproduces"],
        value_hi_text=str(hi).strip(),
    )


def value(number_id: str) -> float:
    """The value of the paper's number `number_id`."""
    return paper(number_id).value
