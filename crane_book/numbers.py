"""The quick book's printed numbers, committed, and compared after every quick build.

The promise across machines is the printed digits: a reader's `make book` shows the numbers of
the book they read. The manifest (`book/numbers_quick.csv`) holds, for every table of the quick
book that compares with the paper (a "this book" column: the comparison tables of every chapter
and the claims page), each row's printed value, read from the built HTML; rows that report the
build's own compute time are left out. `make numbers` (after
`make book PROFILE=quick`; `.ci/run` calls it) reads the same columns from the built book and
fails with the list of numbers that moved. A change that moves numbers on purpose rewrites the
manifest in the same commit (`python -m crane_book.numbers write`), so the diff shows what moved.
The full book's numbers have their own manifest (`book/numbers_full.csv`, `--manifest`), which
`make numbers` reads after the full `make book`.

    python -m crane_book.numbers check [--html _build/html]   exit 1 and the moved numbers
    python -m crane_book.numbers write [--html _build/html]   the manifest from a built book
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path

from crane_lib.errors import atomic_write
from crane_lib.paths import REPO_ROOT

MANIFEST = REPO_ROOT / "book" / "numbers_quick.csv"
HTML_DIR = REPO_ROOT / "_build" / "html"
COLUMNS = ("page", "table", "row", "this book")
BOOK_COLUMN = "this book"
# rows that report how long this build's own computation took (wall clock): they depend on the
# machine and its load by nature, and are not among the promised numbers
COMPUTE_TIME = re.compile(r"\b(refinement|wall-clock|computation|compute|solve) time\b", re.I)
# the number Sphinx or the book gives a table ("Table 35", "Table 6.2", "Table IX") and the
# permalink sign: neither is the table's identity
_TABLE_NUMBER = re.compile(r"^Table\s+[\dIVXL]+(\.\d+)?(\([a-z]\))?\s*[:.]?\s*")


def _text(node) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


def _table_name(table, ordinal: int) -> str:
    caption = table.find("caption")
    if caption is None:
        return f"table {ordinal}"
    return _TABLE_NUMBER.sub("", _text(caption)).rstrip("#¶ ").strip() or f"table {ordinal}"


def printed_numbers(html_dir: Path = HTML_DIR) -> list[dict]:
    """Every "this book" cell of the built book: page, table caption, row label, printed text."""
    from bs4 import BeautifulSoup

    html_dir = Path(html_dir)
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"{html_dir}: no built book here (run `make book PROFILE=quick`)")
    rows = []
    for page in sorted(html_dir.rglob("*.html")):
        name = page.relative_to(html_dir).with_suffix("").as_posix()
        if name.startswith(("_", "genindex", "search")):
            continue
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for ordinal, table in enumerate(soup.find_all("table"), start=1):
            head = table.find("thead") or table.find("tr")
            headers = [_text(th) for th in head.find_all("th")] if head else []
            book = next((i for i, h in enumerate(headers) if h.startswith(BOOK_COLUMN)), None)
            if book is None:
                continue
            table_name, seen = _table_name(table, ordinal), Counter()
            body = table.find("tbody") or table
            for tr in body.find_all("tr"):
                cells = [_text(c) for c in tr.find_all(["td", "th"])]
                if len(cells) <= book or cells == headers:
                    continue
                if COMPUTE_TIME.search(cells[0]):
                    continue
                seen[cells[0]] += 1
                label = cells[0] if seen[cells[0]] == 1 else f"{cells[0]} ({seen[cells[0]]})"
                rows.append(
                    {"page": name, "table": table_name, "row": label, "this book": cells[book]}
                )
    return rows


def _key(row: dict) -> tuple:
    return row["page"], row["table"], row["row"]


def read_manifest(path: Path = MANIFEST) -> list[dict]:
    """The committed printed numbers (refusing a file whose header is not COLUMNS, by name)."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: header {reader.fieldnames}, expected {list(COLUMNS)}")
        return list(reader)


def write_manifest(rows: list[dict], path: Path = MANIFEST) -> Path:
    """Write the manifest (sorted, so that its diff shows only what moved)."""
    with atomic_write(path, newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(rows, key=_key))
    return Path(path)


def moved(committed: list[dict], built: list[dict]) -> list[str]:
    """One line per number that differs between the manifest and the built book (or is in one)."""
    ours, theirs = (
        {_key(r): r[BOOK_COLUMN] for r in committed},
        {_key(r): r[BOOK_COLUMN] for r in built},
    )
    lines = []
    for key in sorted(set(ours) | set(theirs)):
        where = f"{key[0]}: {key[1]!r}, row {key[2]!r}"
        if key not in theirs:
            lines.append(f"{where}: {ours[key]!r} in the manifest, not in the built book")
        elif key not in ours:
            lines.append(f"{where}: {theirs[key]!r} in the built book, not in the manifest")
        elif ours[key] != theirs[key]:
            lines.append(f"{where}: {ours[key]!r} in the manifest, {theirs[key]!r} built")
    return lines


def main(argv=None) -> int:
    """check: compare a built quick book with the manifest; write: make the manifest from it."""
    parser = argparse.ArgumentParser(
        prog="python -m crane_book.numbers", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", choices=("check", "write"))
    parser.add_argument(
        "--html", type=Path, default=HTML_DIR, help="the built book (default: %(default)s)"
    )
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="default: %(default)s")
    args = parser.parse_args(argv)
    try:
        built = printed_numbers(args.html)
    except FileNotFoundError as error:
        print(f"numbers: {error}", file=sys.stderr)
        return 2
    if args.action == "write":
        write_manifest(built, args.manifest)
        print(f"numbers: {len(built)} printed numbers written to {args.manifest}")
        return 0
    try:
        committed = read_manifest(args.manifest)
    except (OSError, ValueError) as error:  # missing, unreadable or not a manifest
        print(f"numbers: {error}", file=sys.stderr)
        return 2
    differences = moved(committed, built)
    if differences:
        print(
            f"numbers: {len(differences)} of {len(built)} printed numbers moved against "
            f"{args.manifest.name} (if on purpose: python -m crane_book.numbers write):",
            file=sys.stderr,
        )
        for line in differences:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"numbers: all {len(built)} printed numbers equal {args.manifest.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
