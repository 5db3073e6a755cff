"""The import graph of crane_lib, read from its source files (`ast`), and the closure of a module.

Two users: the architecture picture and its rule (imports run downward, `reporting.architecture`),
and every cache of the book, whose key holds the source of exactly the modules the computing
code imports, transitively (`closure`): editing a module re-runs only the records whose code
reaches it.
"""

from __future__ import annotations

import ast
import hashlib
import json
from functools import lru_cache
from pathlib import Path

from crane_lib.errors import atomic_write
from crane_lib.paths import CACHE_DIR

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGE = PACKAGE_DIR.name
# the graph as last computed, under the digest of the sources it was read from (`stored_graph`)
GRAPH_FILE = CACHE_DIR / "source_graph" / "import_graph.json"


def module_name(path: Path) -> str:
    """'…/crane_lib/identification/ols.py' -> 'crane_lib.identification.ols'."""
    parts = Path(path).resolve().relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_file(name: str) -> Path:
    """The source file of a crane_lib module ('crane_lib.model' -> its __init__.py)."""
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    plain = (PACKAGE_DIR / relative).with_suffix(".py")
    return plain if plain.is_file() else PACKAGE_DIR / relative / "__init__.py"


def _is_module(name: str) -> bool:
    return module_file(name).is_file()


def source_tree(path: Path) -> ast.Module:
    """A Python file's syntax tree; where it does not parse as it is, lines of IPython magics and
    shell escapes (a notebook's `%matplotlib`, `!pip`) are blanked, so a jupytext page parses too
    (a module's own `% (a, b)` continuation line is left alone)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError:
        lines = text.split("\n")
        plain = ["" if line.lstrip().startswith(("%", "!")) else line for line in lines]
        return ast.parse("\n".join(plain), filename=str(path))


def imported_modules(path: Path, package_name: str | None = None) -> set[str]:
    """The crane_lib modules a file imports at any depth (function-level imports count too).
    `package_name`: the package relative imports resolve against (default: the file's own)."""
    path = Path(path)
    tree = source_tree(path)
    if package_name is None:
        own = module_name(path)
        package_name = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_name.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:  # `from crane_lib.x import y`: y may itself be a module
                candidate = f"{module}.{alias.name}"
                found.add(candidate if _is_module(candidate) else module)
    return {m for m in found if m != PACKAGE}


def import_graph() -> dict[str, set[str]]:
    """module -> the crane_lib modules it imports, for every source file of the package."""
    return {module_name(p): imported_modules(p) for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def sources_key() -> str:
    """sha256 over every source file of the package, by path (relative) and content."""
    combined = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        name = path.relative_to(PACKAGE_DIR).as_posix().encode("utf-8")
        combined.update(hashlib.sha256(name).digest())
        combined.update(hashlib.sha256(path.read_bytes()).digest())
    return combined.hexdigest()


def stored_graph(file: Path = GRAPH_FILE) -> dict[str, set[str]]:
    """`import_graph()`, read from `file` when it was written from sources of the same content
    (`sources_key`); else computed and written there. Parsing every source file takes a second
    or two, and every command that writes a model file needs the graph (its code digest); where
    the file cannot be written the graph is computed each time."""
    key = sources_key()
    try:
        stored = json.loads(file.read_text(encoding="utf-8"))
        if stored.get("key") == key:
            return {module: set(targets) for module, targets in stored["graph"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    graph = import_graph()
    text = json.dumps({"key": key, "graph": {m: sorted(t) for m, t in graph.items()}}, indent=0)
    try:
        with atomic_write(file, encoding="utf-8") as out:  # a concurrent reader sees old or new
            out.write(text)
    except OSError:  # a read-only cache: computed again next time
        pass
    return graph


@lru_cache(maxsize=None)
def _cached_graph(stamp: tuple) -> dict[str, frozenset[str]]:
    return {m: frozenset(t) for m, t in stored_graph().items()}


def _graph() -> dict[str, frozenset[str]]:
    # re-read when any source file changed (a long-lived process, or a test that edits one)
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    return _cached_graph(tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


def closure(modules) -> list[str]:
    """Every crane_lib module that the given ones import, transitively, themselves included,
    sorted. Importing `a.b.c` runs the packages `a` and `a.b` first, so they belong to it."""
    graph = _graph()
    seen: set[str] = set()
    stack = [str(m) for m in modules]
    while stack:
        module = stack.pop()
        if module in seen or module not in graph:
            continue
        seen.add(module)
        stack.extend(graph[module])
        parts = module.split(".")
        stack.extend(".".join(parts[:k]) for k in range(1, len(parts)))
    return sorted(seen)


def file_closure(path) -> list[str]:
    """The crane_lib modules a source file outside the package (a notebook, a script) reaches."""
    return closure(imported_modules(Path(path), package_name=PACKAGE))
