"""The printed-numbers manifest: what it reads from a built book, and that a moved number fails."""

from __future__ import annotations

import pytest

from crane_book import numbers

PAGE = """<html><body>
<table><caption><span>Table 7 </span>Counts of Appendix B<a href="#t">#</a></caption>
<thead><tr><th>quantity</th><th>paper</th><th>this book</th><th>why they differ</th></tr></thead>
<tbody><tr><td>files</td><td>19 of 40</td><td>{files}</td><td>twin</td></tr>
<tr><td>files</td><td>3</td><td>4</td><td></td></tr>
<tr><td>total refinement time (h)</td><td>9</td><td>0.0353</td><td>machine</td></tr></tbody></table>
<table><thead><tr><th>parameter</th><th>OLS</th></tr></thead>
<tbody><tr><td>ZZR1</td><td>0.1</td></tr></tbody></table>
</body></html>"""


def _book(folder, files="21 of 40"):
    (folder / "chapters").mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text("<html></html>", encoding="utf-8")
    (folder / "chapters" / "02_excitation.html").write_text(
        PAGE.format(files=files), encoding="utf-8"
    )
    return folder


def test_only_this_book_columns_are_read_with_their_table_and_row(tmp_path):
    rows = numbers.printed_numbers(_book(tmp_path / "html"))
    assert rows == [
        {
            "page": "chapters/02_excitation",
            "table": "Counts of Appendix B",
            "row": "files",
            "this book": "21 of 40",
        },
        {
            "page": "chapters/02_excitation",
            "table": "Counts of Appendix B",
            "row": "files (2)",
            "this book": "4",
        },
    ]


def test_a_moved_number_fails_the_check_and_is_named(tmp_path, capsys):
    html, manifest = _book(tmp_path / "html"), tmp_path / "numbers.csv"
    assert numbers.main(["write", "--html", str(html), "--manifest", str(manifest)]) == 0
    assert numbers.main(["check", "--html", str(html), "--manifest", str(manifest)]) == 0
    _book(html, files="22 of 40")
    assert numbers.main(["check", "--html", str(html), "--manifest", str(manifest)]) == 1
    err = capsys.readouterr().err
    assert (
        "1 of 2 printed numbers moved" in err
        and "'21 of 40' in the manifest, '22 of 40' built" in err
    )


def test_a_missing_book_and_a_wrong_manifest_are_refused(tmp_path):
    assert numbers.main(["check", "--html", str(tmp_path / "none")]) == 2
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("page,value\n", encoding="utf-8")
    with pytest.raises(ValueError, match="expected"):
        numbers.read_manifest(wrong)
    html = _book(tmp_path / "html")
    assert numbers.main(["check", "--html", str(html), "--manifest", str(wrong)]) == 2
    assert numbers.main(["check", "--html", str(html), "--manifest", str(tmp_path / "no.csv")]) == 2


def test_the_committed_manifest_is_readable_and_covers_the_claims_page():
    rows = numbers.read_manifest()
    assert {r["page"] for r in rows} >= {"book/claims", "chapters/06_audit"}
    assert len({(r["page"], r["table"], r["row"]) for r in rows}) == len(rows)
