"""How the book prints a number: to a stated count of significant digits, a dash for none.

One function, shared by the views and by the records that carry a formatted number (the claims),
so that a number reads the same wherever it appears.
"""

from __future__ import annotations

import math

import numpy as np

DASH = "—"


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
