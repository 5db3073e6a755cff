"""The package layout is the pipeline: every import inside crane_lib goes to a shared leaf, to the
same stage, or to an earlier stage (crane_lib.STAGES), and there is no import circle."""

from __future__ import annotations

import ast
from pathlib import Path

import crane_lib

PACKAGE = Path(crane_lib.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """crane_lib modules a file imports, at any depth (function-level imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "crane_lib")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "crane_lib":
                continue
            for alias in node.names:  # `from crane_lib.x import y`: y may itself be a module
                candidate = f"{module}.{alias.name}"
                found.add(candidate if _exists(candidate) else module)
    return {m for m in found if m != "crane_lib"}


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative / "__init__.py").exists()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _rank(module: str) -> int:
    """-1 for the shared leaves, else the position of the module's stage in crane_lib.STAGES."""
    stage = _stage(module)
    if stage in crane_lib.SHARED or stage == "":
        return -1
    return crane_lib.STAGES.index(stage)


def test_every_module_belongs_to_a_stage_or_is_a_shared_leaf():
    for module in _graph():
        stage = _stage(module)
        assert stage in crane_lib.STAGES or stage in crane_lib.SHARED or module == "crane_lib", module


def _upward(graph: dict[str, set[str]]) -> list[str]:
    upward = []
    for module, imported in graph.items():
        for target in imported:
            if _rank(module) == -1 and _rank(target) != -1:
                upward.append(f"shared leaf {module} imports stage module {target}")
            elif _rank(target) > _rank(module):
                upward.append(f"{module} ({_stage(module)}) imports {target} ({_stage(target)})")
    return upward


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    cycles = []

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(trail[trail.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])
    return cycles


def test_the_graph_is_the_package():
    graph = _graph()
    assert len(graph) > 40
    assert "crane_lib.model.dynamics" in graph["crane_lib.identification.condition"]
    assert "crane_lib.model.base_parameters" in graph["crane_lib.model.dynamics"]


def test_imports_run_downward():
    assert _upward(_graph()) == []


def test_no_import_circle():
    assert _cycles(_graph()) == []


def test_the_rules_catch_what_they_forbid():
    """Neither rule is vacuous: an upward import and a circle on a made-up graph are both found."""
    made_up = {
        "crane_lib.identification.a": {"crane_lib.reporting.sweep"},
        "crane_lib.model.b": {"crane_lib.model.c"},
        "crane_lib.model.c": {"crane_lib.model.b"},
        "crane_lib.paths": {"crane_lib.model.b"},
    }
    assert len(_upward(made_up)) == 2
    assert _cycles(made_up) == ["crane_lib.model.b -> crane_lib.model.c -> crane_lib.model.b"]


def test_no_stage_reaches_into_another_modules_private_names():
    private = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("crane_lib"):
                private += [f"{_module_name(path)}: from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []
