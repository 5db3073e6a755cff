"""Chapter prose: no typed numbers, and at most 1.5 lines of code per line of prose.

Every number in a chapter's prose comes from code that ran in the build or from the paper's
numbers by id (`tools/chapter_numbers.py` says what counts as a typed number and what is a
reference, a name or an index); the code-to-prose ratio is `tools/chapter_ratio.py`'s. Both run
on every chapter in chapters/, including the ones added later.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crane_lib.paper_numbers import paper

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))
import chapter_numbers  # noqa: E402
import chapter_ratio  # noqa: E402

CHAPTERS = sorted(chapter_ratio.CHAPTERS.glob("*.py"))


def test_there_are_chapters():
    assert len(CHAPTERS) >= 7


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_number_is_typed_into_prose(path):
    typed = chapter_numbers.typed_numbers(path)
    assert typed == [], (
        "numbers typed into prose (generate them, or read them from paper_numbers):\n"
        + "\n".join(map(str, typed))
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_code_is_at_most_one_and_a_half_times_the_prose(path):
    code, prose = chapter_ratio.counts(path)
    assert code <= chapter_ratio.LIMIT * prose, (
        f"{path.name}: {code} code lines for {prose} prose lines"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_code_line_is_wider_than_the_page(path):
    wide = chapter_ratio.wide_lines(path)
    assert wide == [], "\n".join(f"{path.name}:{n}: {len(line)} characters" for n, line in wide)


@pytest.mark.parametrize("phrase, number_id", chapter_numbers.ALLOWED)
def test_each_allowed_phrase_states_its_papers_value(phrase, number_id):
    # a setting the paper gives as a list (the four intervals) may be named by either end
    number = paper(number_id)
    stated = [float(n) for n in chapter_numbers._NUMBER.findall(phrase)]
    ends = {number.value} | ({number.value_hi} if number.value_hi is not None else set())
    assert ends & set(stated), (
        f"{phrase!r} states neither end of {number_id} ({number.value:g} to {number.value_hi})"
    )


FAKE = """# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% [markdown]
# # A chapter
#
# AG02 at 40 ms, Sec. V-B, Fig. 3(b), Algorithm 1, issue 14, arXiv 2603.14656, model (1), axis 2, joints 2, 4 and 6, $\\theta_4$ and E-3 are
# not quantities; {glue:text}`kappa` is computed. The gain is 37.1 and $\\delta = 60°$ is typed.

# %% tags=["hide-input"]
x = 1
y = 2
z = 3
w = 4
"""  # noqa: E501 (a chapter as a contributor types it, one long prose line)


def test_the_checks_catch_a_typed_number_and_too_much_code(tmp_path):
    path = tmp_path / "99_fake.py"
    path.write_text(FAKE, encoding="utf-8")
    typed = chapter_numbers.typed_numbers(path)
    assert [t.number for t in typed] == ["37.1", "60"]
    assert typed[0].line == 12 and "37.1" in typed[0].context
    assert chapter_ratio.counts(path) == (4, 3)
    assert chapter_ratio.main([str(path)]) == 0  # 4 code lines over 3 of prose: at most 1.5
    path.write_text(FAKE + "v = 5\n", encoding="utf-8")
    assert chapter_ratio.main([str(path)]) == 1  # 5 over 3: above
    path.write_text(FAKE.replace("w = 4", "w = " + "4 + " * 30 + "4"), encoding="utf-8")
    assert chapter_ratio.wide_lines(path)[0][0] == 18 and chapter_ratio.main([str(path)]) == 1
