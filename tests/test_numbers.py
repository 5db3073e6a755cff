"""The printed-numbers manifest: what it reads from a built book, and that a moved number fails."""

from __future__ import annotations

import csv
import errno
import os

import pytest

from crane_book import numbers
from crane_lib import errors

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


def _run(capsys, *argv):
    """main's exit status and its stderr lines."""
    code = numbers.main(list(argv))
    return code, capsys.readouterr().err.splitlines()


def test_write_refuses_to_overwrite_a_file_that_is_not_a_manifest(tmp_path, capsys):
    html, other = _book(tmp_path / "html"), tmp_path / "notes.txt"
    other.write_bytes(b"my notes\n")  # nine bytes that are not a manifest
    code, err = _run(capsys, "write", "--html", str(html), "--manifest", str(other))
    assert code == 2 and len(err) == 1 and str(other) in err[0] and "--force" in err[0], err
    assert other.read_bytes() == b"my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["html", "notes.txt"]
    folder = tmp_path / "folder"
    folder.mkdir()
    code, err = _run(capsys, "write", "--html", str(html), "--manifest", str(folder), "--force")
    assert code == 2 and len(err) == 1 and "is a folder" in err[0], err
    # a manifest is replaced; --force replaces anything
    assert numbers.main(["write", "--html", str(html), "--manifest", str(other), "--force"]) == 0
    assert numbers.read_manifest(other)[0]["this book"] == "21 of 40"
    _book(html, files="22 of 40")
    assert numbers.main(["write", "--html", str(html), "--manifest", str(other)]) == 0
    assert numbers.read_manifest(other)[0]["this book"] == "22 of 40"


def test_a_stale_manifest_is_named_stale_not_moved(tmp_path, capsys):
    html, manifest = _book(tmp_path / "html"), tmp_path / "numbers.csv"
    assert numbers.main(["write", "--html", str(html), "--manifest", str(manifest)]) == 0
    header, first, second = manifest.read_text(encoding="utf-8").splitlines()
    manifest.write_text(f"{header}\n{first}\n", encoding="utf-8")
    capsys.readouterr()
    code, err = _run(capsys, "check", "--html", str(html), "--manifest", str(manifest))
    text = "\n".join(err)
    assert code == 1 and "moved" not in text, text
    assert "stale manifest: 1 of 2 printed numbers are missing from it" in text
    assert "row 'files (2)': '4'" in text
    # a row the book no longer prints is named as such, not as moved
    manifest.write_text(f"{header}\n{first}\n{second}\np,t,r,1\n", encoding="utf-8")
    code, err = _run(capsys, "check", "--html", str(html), "--manifest", str(manifest))
    text = "\n".join(err)
    assert code == 1 and "1 of its rows are no longer printed" in text and "moved" not in text


def test_the_check_lists_a_few_of_many_missing_rows(tmp_path, capsys, monkeypatch):
    built = [{"page": "p", "table": "t", "row": f"r{i:02d}", "this book": "1"} for i in range(30)]
    monkeypatch.setattr(numbers, "printed_numbers", lambda html: built)
    manifest = numbers.write_manifest(built[:2], tmp_path / "numbers.csv")
    code, err = _run(capsys, "check", "--manifest", str(manifest))
    assert code == 1 and "28 of 30 printed numbers are missing" in err[0], err
    assert len(err) == 1 + numbers.FIRST_FEW + 2 and "... and 23 more" in err[-2], err


@pytest.mark.parametrize(
    "content, says",
    [
        ("page,table,row,this book\n", "numbers.csv: no rows (expected a manifest written by"),
        ("", "numbers.csv: empty"),
        ("\x89PNG\r\n\x1a\n\x00\xff", "numbers.csv:1: byte"),
        ("page;table;row;this book\n", "numbers.csv:1: header 'page;table;row;this book'"),
        ('page,table,row,this book\np,t,"r,1\n', "numbers.csv:2: not CSV"),
        ("page,table,row,this book\np,t,r,1\np,t\n", "numbers.csv:3: 2 fields"),
        ("page,table,row,this book\np,t,r,1\np,t,r,2\n", "numbers.csv:3: repeats"),
    ],
    ids=["header only", "empty", "binary", "other header", "bad quote", "short row", "repeat"],
)
def test_a_manifest_that_is_not_one_is_refused_naming_the_file_and_line(
    content, says, tmp_path, capsys
):
    html, manifest = _book(tmp_path / "html"), tmp_path / "numbers.csv"
    manifest.write_bytes(content.encode("latin-1"))
    code, err = _run(capsys, "check", "--html", str(html), "--manifest", str(manifest))
    assert code == 2 and len(err) == 1 and says in err[0], err


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES], ids=errno.errorcode.get)
def test_a_manifest_that_cannot_be_written_leaves_the_old_one(code, tmp_path, capsys, monkeypatch):
    html, manifest = _book(tmp_path / "html"), tmp_path / "numbers.csv"
    assert numbers.main(["write", "--html", str(html), "--manifest", str(manifest)]) == 0
    old = manifest.read_bytes()
    capsys.readouterr()
    _book(html, files="22 of 40")
    failure = OSError(code, os.strerror(code))
    if code == errno.ENOSPC:  # the disk fills up half-way through the rows

        class Full(csv.DictWriter):
            def writerows(self, rows):
                self.writerow(rows[0])
                raise failure

        monkeypatch.setattr(numbers.csv, "DictWriter", Full)
    else:  # the folder cannot take the temporary file

        def refused(*args, **kwargs):
            raise failure

        monkeypatch.setattr(errors.tempfile, "mkstemp", refused)
    code_, err = _run(capsys, "write", "--html", str(html), "--manifest", str(manifest))
    assert code_ == 2 and len(err) == 1, err
    assert str(manifest) in err[0] and errno.errorcode[code] in err[0], err
    assert manifest.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["html", "numbers.csv"]
