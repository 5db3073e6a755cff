"""The style the project states, enforced: ruff at 100 columns with a docstring on every public
function and method, and `reporting/` formatting records only (no prose, no science)."""

from __future__ import annotations

import ast
import io
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORTING = ROOT / "crane_lib" / "reporting"
# the f-string lines reporting may hold in all (captions, table labels, not sentences)
FSTRING_BUDGET = 150
# the science a view may not call: it reads records the pipeline wrote
FORBIDDEN_IMPORTS = (
    "crane_lib.acceptance.rescue",
    "crane_lib.acceptance.audit",
    "crane_lib.acceptance.certified",
    "cvxpy",
    "scipy.optimize",
)
PROSE_SUFFIXES = ("_sentence", "_said", "_paragraph", "_prose")


def _ruff() -> list[str]:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    return [found]


def test_ruff_passes_at_100_columns_with_docstrings():
    done = subprocess.run(
        [*_ruff(), "check", "--output-format", "concise", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def _modules():
    return sorted(REPORTING.rglob("*.py"))


def fstring_lines(source: str) -> int:
    """Lines of `source` that lie inside an f-string literal (Python 3.11 tokenizes them whole)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            prefix = token.string[: token.string.index(token.string.lstrip("rRbBuUfF")[0])]
            if "f" in prefix.lower():
                lines.update(range(token.start[0], token.end[0] + 1))
        elif getattr(tokenize, "FSTRING_START", None) == token.type:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines)


def test_fstring_lines_are_counted():
    assert fstring_lines('x = 1\ny = f"a {x}"\nz = (f"b"\n     "c")\n') == 2
    assert fstring_lines('s = """not\nan f-string"""\n') == 0


def test_reporting_holds_at_most_its_budget_of_fstring_lines():
    counts = {p.relative_to(ROOT): fstring_lines(p.read_text(encoding="utf-8")) for p in _modules()}
    total = sum(counts.values())
    largest = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
    assert total <= FSTRING_BUDGET, f"{total} f-string lines in reporting/: {largest}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(REPORTING).as_posix())
def test_a_view_writes_no_prose_and_calls_no_science(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name.endswith(PROSE_SUFFIXES)
    ]
    assert prose == [], (
        f"functions that write sentences (the chapter's Markdown holds them): {prose}"
    )
    # glued.py hands a page's short data-dependent MyST fragments to glue; nothing else may
    markdown = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name)
        and node.id in ("Prose", "Markdown")
        and path.name != "glued.py"
    ]
    assert markdown == [], f"Markdown prose built at lines {markdown}"
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    called = sorted(name for name in imported if any(name.startswith(f) for f in FORBIDDEN_IMPORTS))
    assert called == [], f"a view imports the science or a solver: {called}"
