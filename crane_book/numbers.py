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
    python -m crane_book.numbers write [--html _build/html] [--force]   the manifest from it

`check` tells the numbers that moved from the rows a stale manifest lacks (printed, not in it)
and the rows it has that the book no longer prints. `write` replaces only a manifest (a file
whose first line is the manifest's columns) unless `--force` is given. A manifest that is not
one (no rows, not CSV, another header) and a manifest that cannot be written are refused in one
line naming the file, exit status 2; the old manifest is left as it was.
"""

from __future__ import annotations

import csv
import errno
import io
import re
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from crane_lib.errors import (
    SMALL_INPUT_MAX_BYTES,
    InputError,
    atomic_write,
    read_input_text,
    regular_file,
    shown,
)
from crane_lib.paths import REPO_ROOT

MANIFEST = REPO_ROOT / "book" / "numbers_quick.csv"
HTML_DIR = REPO_ROOT / "_build" / "html"
COLUMNS = ("page", "table", "row", "this book")
BOOK_COLUMN = "this book"
WRITTEN_BY = "a manifest written by `python -m crane_book.numbers write`"
FIRST_FEW = 5  # the rows a message names of a long list (missing from a stale manifest, gone)
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
    """The committed printed numbers; an InputError names the file (and line) of a bad one."""
    path = Path(path)
    text = read_input_text(path, WRITTEN_BY, SMALL_INPUT_MAX_BYTES)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows, seen = [], {}
    try:
        header = next(reader, None)
        if header is None:
            raise InputError(path, "empty", WRITTEN_BY)
        if tuple(header) != COLUMNS:
            raise InputError(
                f"{path}:1", f"header {shown(','.join(header))}", f"the header {','.join(COLUMNS)}"
            )
        for fields in reader:
            if not fields:  # a blank line
                continue
            where = f"{path}:{reader.line_num}"
            if len(fields) != len(COLUMNS):
                raise InputError(
                    where, f"{len(fields)} fields", f"{len(COLUMNS)} fields ({','.join(COLUMNS)})"
                )
            row = dict(zip(COLUMNS, fields))
            if _key(row) in seen:
                raise InputError(
                    where, f"repeats the page, table and row of line {seen[_key(row)]}", WRITTEN_BY
                )
            seen[_key(row)] = reader.line_num
            rows.append(row)
    except csv.Error as error:
        raise InputError(f"{path}:{reader.line_num}", f"not CSV ({error})", WRITTEN_BY) from None
    if not rows:
        raise InputError(path, "no rows", WRITTEN_BY)
    return rows


def is_manifest(path: Path) -> bool:
    """Whether the existing regular file `path` begins with the manifest's header line."""
    with open(path, "rb") as handle:
        first = handle.readline(4096)
    try:
        line = first.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        return False
    return line == ",".join(COLUMNS)


def writable_target(path: Path, force: bool) -> None:
    """An InputError unless `path` is absent, a manifest, or (with `force`) any regular file."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return
    regular_file(path, "a manifest file to replace, or a new file name")
    try:
        manifest = is_manifest(path)
    except OSError as error:
        raise InputError(path, f"cannot be read ({error.strerror or error})", WRITTEN_BY) from None
    if not manifest and not force:
        raise InputError(
            path,
            "not a printed-numbers manifest, its contents would be lost",
            f"a file whose first line is {','.join(COLUMNS)}, a new name, or --force",
        )


def write_manifest(rows: list[dict], path: Path = MANIFEST) -> Path:
    """Write the manifest (sorted, so that its diff shows only what moved)."""
    with atomic_write(path, newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(rows, key=_key))
    return Path(path)


class Differences(NamedTuple):
    """How a built book differs from the manifest, one line per number of each kind."""

    moved: list[str]  # printed by both, with other digits
    missing: list[str]  # printed by the book, not in the manifest (a stale manifest)
    gone: list[str]  # in the manifest, no longer printed by the book


def differences(committed: list[dict], built: list[dict]) -> Differences:
    """The numbers that moved, those missing from the manifest, and those no longer printed."""
    ours, theirs = (
        {_key(r): r[BOOK_COLUMN] for r in committed},
        {_key(r): r[BOOK_COLUMN] for r in built},
    )
    found = Differences([], [], [])
    for key in sorted(set(ours) | set(theirs)):
        where = f"{key[0]}: {key[1]!r}, row {key[2]!r}"
        if key not in theirs:
            found.gone.append(f"{where}: {ours[key]!r}")
        elif key not in ours:
            found.missing.append(f"{where}: {theirs[key]!r}")
        elif ours[key] != theirs[key]:
            found.moved.append(f"{where}: {ours[key]!r} in the manifest, {theirs[key]!r} built")
    return found


def moved(committed: list[dict], built: list[dict]) -> list[str]:
    """One line per number printed by both the manifest and the built book with other digits."""
    return differences(committed, built).moved


def _report(found: Differences, manifest: Path, printed: int) -> None:
    """The failed check on stderr: what moved, what the manifest lacks, what is not printed."""

    def listed(lines: list[str], every: bool = False) -> None:
        for line in lines if every else lines[:FIRST_FEW]:
            print(f"  {line}", file=sys.stderr)
        if not every and len(lines) > FIRST_FEW:
            print(f"  ... and {len(lines) - FIRST_FEW} more", file=sys.stderr)

    if found.moved:
        print(
            f"numbers: {len(found.moved)} of {printed} printed numbers moved against "
            f"{manifest.name}:",
            file=sys.stderr,
        )
        listed(found.moved, every=True)
    if found.missing:
        print(
            f"numbers: {manifest}: a stale manifest: {len(found.missing)} of {printed} printed "
            "numbers are missing from it:",
            file=sys.stderr,
        )
        listed(found.missing)
    if found.gone:
        print(
            f"numbers: {manifest}: {len(found.gone)} of its rows are no longer printed by the "
            "built book:",
            file=sys.stderr,
        )
        listed(found.gone)
    print(
        f"numbers: if on purpose: python -m crane_book.numbers write --manifest {manifest}",
        file=sys.stderr,
    )


def main(argv=None) -> int:
    """check: compare a built quick book with the manifest; write: make the manifest from it."""
    from crane_book.options import Parser

    parser = Parser(prog="python -m crane_book.numbers", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("check", "write"))
    parser.add_argument(
        "--html", type=Path, default=HTML_DIR, help="the built book (default: %(default)s)"
    )
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="default: %(default)s")
    parser.add_argument(
        "--force", action="store_true", help="write: replace a file that is not a manifest"
    )
    args = parser.parse_args(argv)
    if args.force and args.action != "write":
        parser.error("--force: only with write (it lets write replace a file not a manifest)")
    try:
        if args.action == "write":
            writable_target(args.manifest, args.force)
        built = printed_numbers(args.html)
    except (FileNotFoundError, InputError) as error:
        print(f"numbers: {error}", file=sys.stderr)
        return 2
    if args.action == "write":
        if not built:
            print(
                f"numbers: {args.html}: no {BOOK_COLUMN!r} numbers in the built book (expected a "
                "book built by `make book`); nothing written",
                file=sys.stderr,
            )
            return 2
        try:
            write_manifest(built, args.manifest)
        except OSError as error:  # a full disk, a read-only or forbidden folder
            code = errno.errorcode.get(error.errno, "error") if error.errno else "error"
            print(
                f"numbers: {args.manifest}: cannot be written ({code}: {error.strerror or error});"
                " the file there is unchanged",
                file=sys.stderr,
            )
            return 2
        print(f"numbers: {len(built)} printed numbers written to {args.manifest}")
        return 0
    try:
        committed = read_manifest(args.manifest)
    except (OSError, ValueError) as error:  # missing, unreadable or not a manifest
        print(f"numbers: {error}", file=sys.stderr)
        return 2
    found = differences(committed, built)
    if any(found):
        _report(found, args.manifest, len(built))
        return 1
    print(f"numbers: all {len(built)} printed numbers equal {args.manifest.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
