"""The package layout is the pipeline: every import inside crane_lib goes to a shared leaf, to the
same stage, or to an earlier stage (crane_lib.STAGES), there is no import circle, no module imports
another's private name, and the architecture picture's arrows are backed by imports."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import crane_book
import crane_lib
from crane_lib import source_graph
from crane_lib.reporting import architecture as arch

BOOK_DIR = Path(crane_book.__file__).resolve().parent


def test_every_module_belongs_to_a_stage_or_is_a_shared_leaf():
    for module in arch.import_graph():
        stage = arch.stage_of(module)
        assert stage in crane_lib.STAGES or stage in crane_lib.SHARED or module == "crane_lib", (
            module
        )


def test_the_graph_is_the_package():
    graph = arch.import_graph()
    assert len(graph) > 40
    assert "crane_lib.model.dynamics" in graph["crane_lib.identification.condition"]
    assert "crane_lib.model.base_parameters" in graph["crane_lib.model.dynamics"]


def test_imports_run_downward():
    assert arch.upward_imports(arch.import_graph()) == []


def test_no_import_circle():
    assert arch.import_cycles(arch.import_graph()) == []


def test_the_rules_catch_what_they_forbid():
    """Neither rule is vacuous: an upward import and a circle on a made-up graph are both found."""
    made_up = {
        "crane_lib.identification.a": {"crane_lib.reporting.tables"},
        "crane_lib.model.b": {"crane_lib.model.c"},
        "crane_lib.model.c": {"crane_lib.model.b"},
        "crane_lib.paths": {"crane_lib.model.b"},
    }
    assert len(arch.upward_imports(made_up)) == 2
    assert arch.import_cycles(made_up) == [
        "crane_lib.model.b -> crane_lib.model.c -> crane_lib.model.b"
    ]


def test_no_module_imports_another_modules_private_names():
    private = []
    for path in sorted(arch.PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("crane_lib"):
                private += [
                    f"{arch.module_name(path)}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    assert private == []


def test_every_arrow_of_the_picture_is_an_import_and_every_stage_is_in_it():
    dependencies = arch.stage_dependencies()
    for source, target, _ in arch.DATA_FLOW:
        assert (source, target) in dependencies, (
            f"{target}/ does not import {source}/: the arrow {source} -> {target} is not real"
        )
    drawn = {s for s, _, _ in arch.DATA_FLOW} | {t for _, t, _ in arch.DATA_FLOW}
    assert set(crane_lib.STAGES) <= drawn


def test_chapters_are_linked_to_the_stages_they_import(tmp_path):
    chapter = tmp_path / "99_probe.py"
    chapter.write_text(
        "from crane_lib.acceptance import audit\nfrom crane_lib.model.dynamics import "
        "DynamicModel\n",
        encoding="utf-8",
    )
    assert arch.chapter_stages(tmp_path) == {"99_probe": ["model", "acceptance"]}
    figure = arch.architecture_diagram(tmp_path)
    texts = {t.get_text() for t in figure.axes[0].texts}
    assert {f"{s}/" for s in crane_lib.STAGES if s != "cli"} <= texts and "99_probe" in texts


def test_the_book_machinery_lives_beside_the_library_and_only_it_imports_the_library():
    """crane_book (pipeline, sweeps, pages, downloads) imports crane_lib; no crane_lib module
    imports crane_book, and none of the machinery is left inside crane_lib."""
    for path in sorted(arch.PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not [n for n in names if n.split(".")[0] == "crane_book"], (
                f"{path} imports crane_book"
            )
    machinery = {"pipeline", "sweep", "pages", "downloads"}
    assert machinery <= {p.stem for p in BOOK_DIR.glob("*.py")}
    assert not machinery & {p.stem for p in arch.PACKAGE_DIR.rglob("*.py")}
    used = set()
    for path in BOOK_DIR.rglob("*.py"):
        used |= source_graph.imported_modules(path, package_name="crane_lib")
    assert {"crane_lib.identification.condition", "crane_lib.acceptance.accepted"} <= used


def test_no_library_module_names_a_chapter_file():
    """The chapters present records; the library never runs or reads one of them."""
    chapter_file = re.compile(r"\b\d\d_[a-z_]+\.py\b")
    named = [
        f"{p.relative_to(arch.PACKAGE_DIR)}: {m.group(0)}"
        for p in sorted(arch.PACKAGE_DIR.rglob("*.py"))
        for m in chapter_file.finditer(p.read_text(encoding="utf-8"))
    ]
    assert named == []
