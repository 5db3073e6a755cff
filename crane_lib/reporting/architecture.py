"""The package's architecture, read from its own source: the import graph of crane_lib, the stage
each module belongs to, the rule that imports run downward, and the picture of it in the book's
introduction (stages as boxes, the data they hand on as arrows, the chapters that read them).

Everything here is computed from the files (`ast`), so the picture cannot drift from the code:
`tests/test_architecture.py` checks the rule, and that every arrow of `DATA_FLOW` is backed by an
import.
"""

from __future__ import annotations

from pathlib import Path

import crane_lib
from crane_lib.paths import REPO_ROOT
from crane_lib.source_graph import PACKAGE_DIR, import_graph, imported_modules, module_name  # noqa: F401

CHAPTER_DIR = REPO_ROOT / "chapters"

# What each stage hands to the next (the arrows of the picture): (from, to, what).
# Every arrow must be backed by an import of `from` by a module of `to` (checked by the tests).
DATA_FLOW = (
    ("model", "excitation", "joint limits"),
    ("model", "twin", "kernels, controller (2)"),
    ("excitation", "twin", "command files"),
    ("logs", "twin", "raw-log format"),
    ("twin", "reporting", "recordings"),
    ("twin", "hardware", "plant"),
    ("hardware", "cli", "record --port"),
    ("logs", "identification", "bundles 1-80 ms"),
    ("model", "identification", "regressor, M(θ; β)"),
    ("identification", "acceptance", "refined estimates"),
    ("identification", "reporting", "condition records"),
    ("acceptance", "reporting", "accepted model, audits"),
    ("acceptance", "cli", "audit, rescue, accept"),
    ("model", "export", "K, MDH frames, description"),
    ("acceptance", "export", "audit of a changed model"),
    ("export", "reporting", "URDF, MJCF of the accepted"),
    ("export", "cli", "consistent links, URDF, MJCF"),
)


# ----------------------------------------------------------------------------- the import graph


def stage_of(module: str) -> str:
    """'crane_lib.identification.ols' -> 'identification'; a shared leaf -> its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def rank(module: str) -> int:
    """-1 for the shared leaves (and the package itself), else the stage's position in STAGES."""
    stage = stage_of(module)
    if stage in crane_lib.SHARED or stage == "":
        return -1
    return crane_lib.STAGES.index(stage)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import from an earlier stage (or a shared leaf) to a later stage."""
    upward = []
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            if rank(module) == -1 and rank(target) != -1:
                upward.append(f"shared leaf {module} imports stage module {target}")
            elif rank(target) > rank(module):
                upward.append(
                    f"{module} ({stage_of(module)}) imports {target} ({stage_of(target)})"
                )
    return upward


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Import circles found by depth-first search, each as 'a -> b -> a'."""
    state: dict[str, int] = {}
    cycles = []

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(trail[trail.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def stage_dependencies(graph: dict[str, set[str]] | None = None) -> set[tuple[str, str]]:
    """(used, user) pairs of stages: some module of `user` imports a module of `used`."""
    graph = import_graph() if graph is None else graph
    return {
        (stage_of(t), stage_of(m))
        for m, targets in graph.items()
        for t in targets
        if rank(t) >= 0 and rank(m) >= 0 and stage_of(t) != stage_of(m)
    }


def chapter_stages(chapter_dir: Path = CHAPTER_DIR) -> dict[str, list[str]]:
    """chapter file stem -> the stages whose modules it imports (where its numbers come from)."""
    out = {}
    for path in sorted(Path(chapter_dir).glob("*.py")):
        used = {stage_of(m) for m in imported_modules(path, package_name="crane_lib")}
        out[path.stem] = [s for s in crane_lib.STAGES if s in used]
    return out


# ----------------------------------------------------------------------------- the picture


def architecture_diagram(chapter_dir: Path = CHAPTER_DIR):
    """Stages as boxes in pipeline order (with their modules), DATA_FLOW as arrows between them on
    the left, and on the right the chapters, each linked to the stages it imports."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    stages = list(crane_lib.STAGES)
    modules = {
        s: sorted(p.stem for p in (PACKAGE_DIR / s).glob("*.py") if p.stem != "__init__")
        for s in stages
    }
    chapters = chapter_stages(chapter_dir)
    rows = max(len(stages), len(chapters), 2)
    height = rows * 1.0 + 1.3
    fig, ax = plt.subplots(figsize=(10, height * 0.75))
    ax.set_xlim(0, 13)
    ax.set_ylim(0, height)
    ax.axis("off")

    def ys(n):
        return [height - 1.3 - i * (height - 1.8) / max(n - 1, 1) for i in range(n)]

    y_of = dict(zip(stages, ys(len(stages))))
    box_left, box_right = 3.4, 8.0
    for stage, y in y_of.items():
        ax.add_patch(
            FancyBboxPatch(
                (box_left, y - 0.38),
                box_right - box_left,
                0.76,
                boxstyle="round,pad=0.04",
                fc="#dce9f5",
                ec="k",
                lw=0.8,
            )
        )
        ax.text(box_left + 0.12, y + 0.2, f"{stage}/", fontsize=10, weight="bold", va="center")
        listing = textwrap.fill(", ".join(modules[stage]), 62)
        ax.text(box_left + 0.12, y - 0.14, listing, fontsize=6.3, va="center", linespacing=1.05)
    # each arrow runs in its own lane left of the boxes: out of the source, down, into the target
    flows = sorted(
        (f for f in DATA_FLOW if f[0] in y_of and f[1] in y_of),
        key=lambda f: stages.index(f[1]) - stages.index(f[0]),
    )
    lanes: list[list[tuple[float, float]]] = []
    for source, target, what in flows:
        top, bottom = y_of[source] - 0.12, y_of[target] + 0.12
        lane = next(
            (
                k
                for k, spans in enumerate(lanes)
                if all(bottom > s_top or top < s_bottom for s_top, s_bottom in spans)
            ),
            None,
        )
        if lane is None:
            lanes.append([])
            lane = len(lanes) - 1
        lanes[lane].append((top + 0.05, bottom - 0.05))
        x = box_left - 0.3 - 0.42 * lane
        ax.plot([box_left, x, x], [top, top, bottom], lw=0.7, color="0.35")
        ax.add_patch(
            FancyArrowPatch(
                (x, bottom),
                (box_left, bottom),
                arrowstyle="-|>",
                mutation_scale=8,
                lw=0.7,
                color="0.35",
            )
        )
        ax.text(
            x - 0.06,
            (top + bottom) / 2,
            what,
            fontsize=6.8,
            style="italic",
            rotation=90,
            ha="right",
            va="center",
            color="0.2",
        )
    ax.text(
        box_left,
        height - 0.45,
        "crane_lib stages in pipeline order (imports run downward);\narrows: the data a stage "
        "hands on",
        fontsize=9,
        va="center",
    )
    chapter_left = 10.0
    ax.text(
        chapter_left, height - 0.45, "chapters and the\nstages they call", fontsize=9, va="center"
    )
    for chapter, y in zip(chapters, ys(len(chapters))):
        ax.add_patch(
            FancyBboxPatch(
                (chapter_left, y - 0.24),
                2.8,
                0.48,
                boxstyle="round,pad=0.03",
                fc="#f5e6cc",
                ec="k",
                lw=0.6,
            )
        )
        ax.text(chapter_left + 0.1, y, chapter, fontsize=8.5, va="center")
        for stage in chapters[chapter]:
            ax.plot([box_right + 0.05, chapter_left - 0.05], [y_of[stage], y], lw=0.4, color="0.65")
    fig.tight_layout()
    return fig
