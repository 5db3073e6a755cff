"""Numbers and words handed to a page's prose through myst-nb's `glue`.

A chapter's Markdown cells hold its sentences; the numbers in them come from code through
``{glue:text}`name:.3g``` and a data-dependent word or list through ``{glue:md}`name```. `glue`
here converts numpy scalars to Python numbers first, since myst-nb formats a glued value by
reading back its plain-text representation (``np.float64(0.5)`` would not read back).
"""

from __future__ import annotations

import numbers

import numpy as np


def plain(value):
    """The value as a Python number, string or list of them (numpy scalars converted)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (numbers.Number, str)):
        return value
    raise TypeError(f"glue takes numbers and strings, not {type(value).__name__}")


def glue(name: str, value) -> None:
    """Glue `value` under `name` for the page's prose, displaying nothing."""
    from myst_nb import glue as myst_glue

    myst_glue(name, plain(value), display=False)


def glue_md(name: str, text: str) -> None:
    """Glue a short MyST fragment (a word, a list, a link) for ``{glue:md}`name```."""
    from IPython.display import Markdown
    from myst_nb import glue as myst_glue

    myst_glue(name, Markdown(text), display=False)
