"""Numbers typed into chapter prose.

Every number in a chapter's prose comes from code that ran in the build (a generated sentence,
a glued value) or is the paper's number read by id. This lists the numbers typed into the
markdown cells of chapters/*.py that are neither:

    python tools/chapter_numbers.py            # every chapter; exit 1 if any number is listed

Not counted as typed numbers (they are names or references, not quantities):
  - references: Sec. V-B, Fig. 4, Fig. 3(b), Algorithm 1, equation numbers in parentheses "(11)",
  register
    entries "E-3", the project's issues "issue 14", preprints "arXiv 2603.14656", MyST roles
    ({numref}`fig-x`, {glue:text}`key`), links, ordered-list markers;
  - identifiers: digits attached to letters (AG02, V01, ZZR1, IA8, θ4, J2, O7);
  - indices: "axis 2", "axes 1–4", "joints 2, 4, 6", "joint-1 axis", "link 7", "seed 1", "row 05",
    "(1,2)";
  - inside math: sub- and superscripts and the structural constants 0, 1 and 2;
  - code spans naming something (`crane_lib.x`, `results/`), which contain a letter or a path;
  - the phrases of ALLOWED, each a named setting of the paper carrying its paper_numbers id
    (tests/test_chapter_numbers.py checks that the phrase states that id's value), and the few
    NAMES the paper gives (a profile's name is not a quantity) and the shipped arms' product names.
Number words ("seven joints") are not checked.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chapter_ratio  # noqa: E402 (the sibling tool: one reader of the percent format)

CHAPTERS = chapter_ratio.CHAPTERS

# (phrase as typed in prose, paper_numbers id): named settings of the paper that prose may
# state, because they name the case rather than report a result. Keep this list small.
ALLOWED = (
    ("10, 20, 40 and 80 ms", "sampling_intervals"),  # the four identification intervals of Sec. V-B
    ("10 ms", "sampling_intervals"),  # the finest of them
    ("80 ms", "sampling_intervals"),  # the coarsest of them
    ("40 ms", "accepted_sampling_interval"),  # the representative interval (AG02 at 40 ms)
    ("seeds 1–5", "audit_seed_count"),  # the five audit seeds of Table IX
    ("39-parameter", "reduced_model_param_count"),  # the name of the reduced model
)

# names the paper gives that contain digits but are not quantities, with where it gives them
NAMES = (
    ("4-1-4", "Appendix B-B: the interpolation's name, the '4-1-4 profile'"),
    ("SHA-256", "the hash function's name (D-C's byte-for-byte check)"),
    # the products the chapter "Other arms" runs on, and the servos' bus protocol
    ("ViperX 300 S", "Trossen Robotics' arm of ALOHA, the paper's reference [1, 2]"),
    ("SO-101", "the LeRobot arm's product name"),
    ("Protocol 2.0", "the DYNAMIXEL bus protocol's name (the recorder and its emulator)"),
)

_ROLE = re.compile(r"\{[\w:.-]+\}`[^`]*`")
_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TARGET = re.compile(r"^\([\w:.-]+\)=\s*$", re.M)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_EQUATION_LABEL = re.compile(r"(?<=\$\$)[ \t]*\([\w:.-]+\)")  # $$ (eq-paper-8)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_SCRIPT = re.compile(r"[_^](\{[^{}]*\}|\\?[A-Za-z0-9]+)")
_FIGURE = re.compile(r"\bFigs?\.\s*\d+(\s*\([a-z]\))?(\s*(and|,|–|-)\s*\d+(\([a-z]\))?)*")
_TABLE = re.compile(r"\b(Tables?|Algorithms?)\s+\d+\b")
_EQUATION = re.compile(r"\(\d{1,2}\)")
_REGISTER = re.compile(r"\b[A-Z]-\d+\b")
_CITATION = re.compile(
    r"\b(issues?\s+#?\d+((\s*(,|and)\s*#?\d+)*)|arXiv:?\s*\d{4}\.\d{4,5}(v\d+)?)"
)
_IDENTIFIER = re.compile(r"[^\W\d_]+\d+")
_PAIR = re.compile(r"\(\s*\d+\s*,\s*\d+\s*\)")
_INDEX = re.compile(
    r"\b(axis|axes|joint|joints|link|links|seed|execution|run|frame|frames|row|rows)[\s-]+\d+"
    r"((\s*(,|–|-|and|to|or)\s*)+\d+)*",
    re.I,
)
_LIST_ITEM = re.compile(r"^\s*\d+\.(?=\s)", re.M)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_STRUCTURAL = {"0", "1", "2"}


@dataclass(frozen=True)
class Typed:
    path: str
    line: int
    number: str
    context: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.number!r} in {self.context!r}"


def _blank(match: re.Match) -> str:
    return " " * len(match[0])


def _code_span(match: re.Match) -> str:
    # a code span naming something (a letter, a path or a name) is not a number; digits alone are
    return " " * len(match[0]) if re.search(r"[A-Za-z_/]", match[0]) else " " + match[0][1:-1] + " "


def _math_numbers(segment: str) -> list[str]:
    body = _PAIR.sub(lambda m: " " * len(m[0]), segment)
    body = _SCRIPT.sub(lambda m: " " * len(m[0]), body)
    body = re.sub(r"\\[A-Za-z]+", lambda m: " " * len(m[0]), body)  # LaTeX commands
    body = _IDENTIFIER.sub(lambda m: " " * len(m[0]), body)  # VP7, ZZR1
    return [n for n in _NUMBER.findall(body) if n not in _STRUCTURAL]


def typed_numbers_in_text(text: str) -> list[tuple[int, str]]:
    """(offset, number) of every typed number in markdown `text` (see the module docstring)."""
    for phrase, _ in ALLOWED:
        text = text.replace(phrase, " " * len(phrase))
    for name, _ in NAMES:
        text = text.replace(name, " " * len(name))
    text = _ROLE.sub(_blank, text)
    text = _CODE.sub(_code_span, text)
    text = _LINK.sub(lambda m: m[1] + " " * (len(m[0]) - len(m[1])), text)
    text = _TARGET.sub(_blank, text)
    text = _EQUATION_LABEL.sub(_blank, text)
    found: list[tuple[int, str]] = []
    for pattern in (_DISPLAY_MATH, _INLINE_MATH):
        for match in pattern.finditer(text):
            found += [(match.start(), n) for n in _math_numbers(match[0])]
        text = pattern.sub(_blank, text)
    for pattern in (
        _LIST_ITEM,
        _CITATION,
        _FIGURE,
        _TABLE,
        _EQUATION,
        _REGISTER,
        _IDENTIFIER,
        _PAIR,
        _INDEX,
    ):
        text = pattern.sub(_blank, text)
    found += [(m.start(), m[0]) for m in _NUMBER.finditer(text)]
    return sorted(found)


def typed_numbers(path: Path) -> list[Typed]:
    """Every number typed into the prose of the chapter at `path`, with its line."""
    out = []
    for cell in chapter_ratio.read_cells(path):
        if cell.kind != "markdown":
            continue
        text = "\n".join(cell.lines)
        starts = [0]
        for line in cell.lines:
            starts.append(starts[-1] + len(line) + 1)
        for offset, number in typed_numbers_in_text(text):
            row = max(i for i, s in enumerate(starts) if s <= offset)
            out.append(
                Typed(Path(path).name, cell.first_line + row, number, cell.lines[row].strip()[:100])
            )
    return out


def main(argv: list[str]) -> int:
    """List the numbers typed into chapter prose; exit 1 if any."""
    paths = [Path(a) for a in argv] or sorted(CHAPTERS.glob("*.py"))
    listed = [t for path in paths for t in typed_numbers(path)]
    for typed in listed:
        print(typed)
    print(f"{len(listed)} typed number(s) in {len(paths)} chapter(s)")
    return 1 if listed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
