"""Code-to-prose ratio of every chapter: non-blank code lines over non-blank prose lines.

A chapter reads like the paper section it reproduces and calls `crane_lib` for the rest, so its
code may be at most LIMIT times its prose. Counted from the jupytext percent `.py` (the source of
truth): prose lines are the non-blank lines of markdown cells (`# %% [markdown]`, a bare `#` is
blank), code lines the non-blank lines of code cells, comments and the parameters cell included;
the YAML header and the `# %%` cell markers count as neither.

    python tools/chapter_ratio.py                 # every chapter in chapters/
    python tools/chapter_ratio.py chapters/06_audit.py

Prints one row per chapter and exits 1 when any chapter is above LIMIT or has a code line wider
than WIDTH characters, the page (2 when a file is not a percent-format chapter).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

LIMIT = 1.5
WIDTH = 90  # characters: a code line wider than this runs off the page
CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
_MARKER = re.compile(r"^# %%(?P<rest>.*)$")


@dataclass
class Cell:
    kind: str  # "markdown" or "code"
    header: str  # what follows "# %%" on the marker line (tags, metadata)
    lines: list[str]  # the cell's lines; markdown lines without their "# " prefix
    first_line: int  # 1-based line number of the cell's first content line


def read_cells(path: Path) -> list[Cell]:
    """The cells of a jupytext percent-format file (the YAML header dropped)."""
    text = Path(path).read_text(encoding="utf-8").splitlines()
    start = 0
    if text and text[0].strip() == "# ---":
        end = next((i for i in range(1, len(text)) if text[i].strip() == "# ---"), None)
        if end is None:
            raise ValueError(f"{path}:1: the YAML header opened by '# ---' is never closed")
        start = end + 1
    cells: list[Cell] = []
    for number, line in enumerate(text[start:], start=start + 1):
        marker = _MARKER.match(line)
        if marker:
            rest = marker["rest"].strip()
            kind = (
                "markdown" if rest.startswith("[markdown]") or rest.startswith("[md]") else "code"
            )
            cells.append(Cell(kind, rest, [], number + 1))
            continue
        if not cells:
            if line.strip():
                raise ValueError(f"{path}:{number}: content before the first '# %%' cell marker")
            continue
        cell = cells[-1]
        if cell.kind == "markdown":
            if line.strip() and not line.startswith("#"):
                raise ValueError(
                    f"{path}:{number}: a markdown cell line must start with '#': {line!r}"
                )
            line = line[2:] if line.startswith("# ") else line[1:]
        cell.lines.append(line)
    if not cells:
        raise ValueError(f"{path}: no '# %%' cells: not a jupytext percent-format chapter")
    return cells


def counts(path: Path) -> tuple[int, int]:
    """(non-blank code lines, non-blank prose lines)."""
    code = prose = 0
    for cell in read_cells(path):
        n = sum(1 for line in cell.lines if line.strip())
        if cell.kind == "markdown":
            prose += n
        else:
            code += n
    return code, prose


def wide_lines(path: Path, width: int = WIDTH) -> list[tuple[int, str]]:
    """(line number, line) of every code line wider than `width` (cell markers and their
    metadata excepted: they are not shown)."""
    out = []
    for cell in read_cells(path):
        if cell.kind != "code":
            continue
        out += [
            (cell.first_line + i, line) for i, line in enumerate(cell.lines) if len(line) > width
        ]
    return out


def ratio(path: Path) -> float:
    """The chapter's code lines per prose line."""
    code, prose = counts(path)
    return code / prose if prose else float("inf")


def main(argv: list[str]) -> int:
    """Print every chapter's code-to-prose ratio; exit 1 above the limit or the page width."""
    paths = [Path(a) for a in argv] or sorted(CHAPTERS.glob("*.py"))
    worst = 0
    print(f"{'chapter':<32} {'code':>5} {'prose':>6} {'ratio':>6}")
    for path in paths:
        try:
            code, prose = counts(path)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        value = code / prose if prose else float("inf")
        wide = wide_lines(path)
        flag = ("" if value <= LIMIT else f"  above {LIMIT}") + (
            f"  {len(wide)} code line(s) wider than {WIDTH}" if wide else ""
        )
        print(f"{path.name:<32} {code:>5} {prose:>6} {value:>6.2f}{flag}")
        worst = max(worst, 1 if value > LIMIT or wide else 0)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
