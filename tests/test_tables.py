"""The comparison table builder: agreement is computed from the paper's digits, a difference
without a reason is refused, a shared reason is shown once, and numbers format alike."""

from __future__ import annotations

import pandas as pd
import pytest

from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import (
    AGREES,
    IN_RANGE,
    SAME,
    WITHIN_BOUND,
    Comparison,
    Count,
    MyST,
    Why,
    cite,
    compared,
    comparison_table,
    escape,
    formatted,
    numbered,
    significant,
    span,
)


def _ranged_id():
    from crane_lib.paper_numbers import table

    frame = table()
    return next(
        i
        for i, row in frame.iterrows()
        if row["value_hi"].strip() and float(row["value_hi"]) > float(row["value"])
    )


def test_agreement_is_decided_by_the_papers_digits():
    kt = paper("kt_effective_xm430")  # "2.3179": five significant digits
    assert Comparison("Kt", "kt_effective_xm430", 2.31794).agreement() == AGREES
    assert Comparison("Kt", "kt_effective_xm430", 2.3175).agreement() is None
    assert kt.significant_digits == 5


def test_a_value_inside_a_stated_range_is_in_range():
    number = paper(_ranged_id())
    inside = (number.value + number.value_hi) / 2
    assert Comparison("x", number.id, inside).agreement() == IN_RANGE
    assert (
        Comparison("x", number.id, number.value_hi + abs(number.value_hi) + 1).agreement() is None
    )


def test_a_ranges_upper_end_keeps_its_own_digits():
    number = paper(
        "runtorun_rmse_change"
    )  # 0.45 to 3.55: the upper end has more digits than the lower
    assert (
        Comparison("spread", number.id, 1.0).paper_cell()
        == f"{number.value_text} to {number.value_hi:g}"
    )


def test_a_value_inside_a_stated_bound_is_within_it():
    number = paper("heldout_gain_beyond_40ms")  # "less than 1 %": its note says upper bound
    assert number.note.startswith("upper bound")
    assert Comparison("gain", number.id, 0.2 * number.value).agreement() == WITHIN_BOUND
    assert Comparison("gain", number.id, 1.6 * number.value).agreement() is None
    plain = paper("repeated_traj_count")  # a count, no bound in its note
    assert not plain.note.lower().startswith(("upper bound", "lower bound"))
    assert Comparison("x", plain.id, 0.2 * plain.value).agreement() is None


def test_a_difference_without_a_reason_is_refused():
    with pytest.raises(ValueError, match="no reason"):
        comparison_table([Comparison("RL3", "dh_offset_rl3", 0.3)])
    table = comparison_table(
        [Comparison("RL3", "dh_offset_rl3", 0.3, why=Why.reconstruction("a test"))]
    )
    assert table.frame.loc[0, "why they differ"] == "reconstruction choice: a test"


def test_a_shared_reason_is_shown_once():
    reason = Why.twin("same for all")
    rows = [Comparison(f"row {k}", "dh_offset_rl3", 0.3 + k, why=reason) for k in range(3)]
    rows.append(Comparison("agreeing row", "dh_offset_rl5", paper("dh_offset_rl5").value))
    html = comparison_table(rows, caption="a caption").html()
    assert html.count("same for all") == 1 and html.count("see note") == 3
    assert AGREES in html and "a caption" in html
    assert 'title="paper_numbers.csv: dh_offset_rl3' in html  # the id as a hover


def test_long_reasons_are_not_cut():
    reason = Why.finding("x" * 300)
    table = comparison_table([Comparison("q", "dh_offset_rl3", 9.0, why=reason)])
    assert "x" * 300 in table.html() and "x" * 300 in table.markdown().replace("\\", "")


def test_numbers_format_alike():
    assert significant(5520) == "5\u2009520" and significant(5520.0) == "5520"
    assert significant(39.0) == "39.00"
    assert significant(1.13514, 4) == "1.135"
    assert significant(0.000123, 3) == "1.23e-04"
    assert significant(float("nan")) == "—"
    assert span([1.0, 1.0004]) == "1.00" and span([1.0, 2.0]) == "1.00 to 2.00"
    frame = formatted(pd.DataFrame({"a": [5520.0, 1.13514], "b": ["x", "y"]}), digits=3)
    assert list(frame["a"]) == ["5520", "1.14"] and list(frame["b"]) == ["x", "y"]


def test_a_count_agrees_only_with_the_same_count_of_the_same_whole():
    part, whole = paper("full_model_worse_count").value, paper("table3_fit_traj_count").value
    same = Comparison(
        "worse",
        "full_model_worse_count",
        Count(int(part), int(whole)),
        paper_whole="table3_fit_traj_count",
    )
    assert same.agreement() == SAME and same.paper_cell() == f"{part:.0f} of {whole:.0f}"
    fewer = Comparison(
        "worse",
        "full_model_worse_count",
        Count(int(part), int(whole) - 1),
        paper_whole="table3_fit_traj_count",
    )
    assert fewer.agreement() is None and fewer.book_cell() == f"{part:.0f} of {whole - 1:.0f}"


def test_a_bound_is_met_or_not():
    value = paper("rescue_max_entry_change").value
    assert (
        Comparison("max", "rescue_max_entry_change", value / 2, bound="upper").agreement()
        == WITHIN_BOUND
    )
    assert (
        Comparison("max", "rescue_max_entry_change", value * 2, bound="upper").agreement() is None
    )
    assert (
        Comparison("max", "rescue_max_entry_change", value * 2, bound="lower").agreement()
        == WITHIN_BOUND
    )
    assert (
        Comparison("max", "rescue_max_entry_change", 1.0, bound="upper")
        .paper_cell()
        .startswith("≤ ")
    )


def test_values_over_seeds_agree_only_when_every_one_does():
    rl3 = paper("dh_offset_rl3").value
    assert Comparison("RL3", "dh_offset_rl3", [rl3, rl3]).agreement() == AGREES
    row = Comparison("RL3", "dh_offset_rl3", [rl3, 2 * rl3], why=Why.twin("spread"))
    assert row.agreement() is None and row.book_cell() == span([rl3, 2 * rl3], 3)


def test_texts_agree_when_equal():
    assert Comparison("verdict", None, "fails", paper_text="fails").agreement() == SAME
    assert Comparison("verdict", None, "passes", paper_text="fails").agreement() is None
    with pytest.raises(ValueError, match="no reason"):
        comparison_table([Comparison("verdict", None, "passes", paper_text="fails")])


def test_the_markdown_table_is_numbered_escaped_and_carries_the_id():
    rows = [
        Comparison("a | b * c", "dh_offset_rl3", 0.3, why=Why.twin("x_y [z]")),
        Comparison("link", None, MyST("[register](register.md)"), paper_text="—", why=Why.beyond()),
    ]
    text = comparison_table(rows, caption="The caption", name="tab-x").markdown()
    assert text.startswith(":::{table} The caption\n:name: tab-x\n")
    assert "a \\| b \\* c" in text and "x\\_y \\[z\\]" in text  # plain text cannot become markup
    assert "[register](register.md)" in text  # MyST passes through
    assert 'title="paper_numbers.csv: dh_offset_rl3' in text
    body = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(body) == 3 and all(
        line.count(" | ") == 3 for line in body
    )  # header + 2 rows, 4 columns each


def test_a_results_table_is_formatted_and_numbered():
    frame = pd.DataFrame(
        {"κ": [33.3333, 5520.0]}, index=pd.Index(["AG02", "AP01"], name="trajectory")
    )
    text = numbered(frame, caption="κ", name="tab-k", digits=3).markdown()
    assert ":name: tab-k" in text and "| trajectory | κ |" in text and "| AG02 | 33.3 |" in text


def test_words_and_citations_are_computed():
    assert (
        compared(2.0, 1.0, "better", "worse") == "better"
        and compared(1.0, 2.0, "better", "worse") == "worse"
    )
    assert "dh_offset_rl3" in cite("dh_offset_rl3") and "0.25 m" in cite("dh_offset_rl3")
    assert escape("1*2") == "1\\*2"


def test_a_range_is_shown_as_the_paper_writes_both_ends():
    number = paper("poi_kappa_degradation")  # "2" to "93": the upper end keeps its own digits
    assert (
        Comparison("κ", "poi_kappa_degradation", 5.0).paper_cell()
        == f"{number.value_text} to {number.value_hi_text}"
    )
    assert number.value_hi_text == "93"
