"""The claims' machinery: what a claim is, how it is registered, evaluated, keyed and written.

A claim is one of the paper's main claims, registered by the function that computes it
(`@claim(...)` in the module of the chapter that computes the same number) with the label of
the section that shows it. `write_claims` is the pipeline's claims step: it writes one JSON
record per claim, results/claims/<id>.json, and recomputes a claim only when its key changes
(the files it reads, the profile, the headings it links to, and the source of this package's
shared modules, of its chapter's module and of the crane_lib modules they import).
"""

from __future__ import annotations

import functools
import glob
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from crane_book import keys
from crane_book.claims.results import Results, current_profile
from crane_lib.paper_numbers import paper
from crane_lib.paths import REPO_ROOT, RESULTS_DIR
from crane_lib.records import read_json_record, write_json_record
from crane_lib.verdicts import NOT_COMPUTED, VERDICTS, record_path

PACKAGE_DIR = Path(__file__).resolve().parent
# the modules every claim depends on: the package (its page order), this machinery, the results
SHARED_MODULES = ("__init__.py", "registry.py", "results.py")


@dataclass(frozen=True)
class Outcome:
    """What a claim's function found: a verdict computed from the number, the number as text,
    and one sentence saying what was compared and why the verdict follows."""

    verdict: str
    number: str
    detail: str
    # why the twin differs from the paper (the mechanism, its numbers computed), for a claim the
    # twin contradicts; the page shows it after the detail, with the claim's `reason` link
    why: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    @classmethod
    def missing(cls, what: str) -> "Outcome":
        """The outcome of a claim whose inputs this build lacks (`what` says which)."""
        return cls(NOT_COMPUTED, "—", what)


def reason_of(function: Callable[..., str], *args) -> str:
    """`function(*args)`, the computed reason of a difference; "" when the records it reads lack a
    field it needs (the small hand-made records of the unit tests). A contradicted claim without
    its reason fails tests/test_claims.py on the build's own records, so nothing hides there."""
    try:
        return function(*args)
    except (KeyError, AttributeError, TypeError):
        return ""


def page_source(docname: str) -> Path:
    """The source file of a book page: a chapter's percent script or a Markdown page."""
    suffix = ".py" if docname.startswith("chapters/") else ".md"
    return REPO_ROOT / f"{docname}{suffix}"


@functools.lru_cache(maxsize=None)
def _page_text(docname: str) -> str:
    path = page_source(docname)
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def heading_of(docname: str, label: str) -> str | None:
    """The heading the MyST label `(label)=` stands above in the page, or None without it."""
    found = re.search(
        rf"^(?:# )?\({re.escape(label)}\)=\s*\n(?:# )?#+ (.+)$", _page_text(docname), re.M
    )
    return found.group(1).strip() if found else None


@dataclass(frozen=True)
class PaperClaim:
    """One of the paper's main claims and where the book computes it."""

    id: str
    where: str
    statement: str
    paper_ids: tuple[str, ...]
    chapter: str | None
    # the MyST label of the section that computes it (above its heading in the chapter)
    section: str | None
    inputs: tuple[str, ...] = ()
    compute: Callable[[Results], Outcome] | None = None
    # where the book argues why this build's number differs from the paper's: (page, label)
    reason: tuple[str, str] | None = None

    @property
    def anchor(self) -> str | None:
        """The HTML id of the section: its label."""
        return self.section

    def heading(self) -> str | None:
        """The heading of the section that computes the claim, read from the chapter."""
        if self.section is None:
            return None
        return heading_of(self.chapter, self.section)

    def reason_link(self) -> dict | None:
        """The register entry that explains the difference, as the page links it."""
        if self.reason is None:
            return None
        docname, label = self.reason
        heading = heading_of(docname, label)
        return {"docname": docname, "label": label, "section": heading, "anchor": label}

    def paper_text(self) -> str:
        """The paper's numbers behind the claim, from data/paper_numbers.csv by id."""
        parts = []
        for number_id in self.paper_ids:
            n = paper(number_id)
            parts.append(f"{n.text().replace('^2', '²')} ({n.quantity})")
        return "; ".join(parts)

    def input_files(self) -> list[Path]:
        """The files the claim reads: its `inputs` patterns, expanded."""
        files = set()
        for pattern in self.inputs:
            files.update(Path(p) for p in glob.glob(str(_resolve(pattern))))
        return sorted(f for f in files if f.is_file())

    def module_file(self) -> Path | None:
        """The chapter module that computes the claim (None for a pending claim)."""
        if self.compute is None:
            return None
        return Path(self.compute.__code__.co_filename).resolve()

    def key(self, profile: str) -> keys.Key:
        """Everything that decides this claim's record: its input files, the profile, the headings
        it links to, the source of the shared modules and of its chapter's module, and of the
        crane_lib modules they import."""
        reason = self.reason_link()
        return keys.record_key(
            inputs=self.input_files(),
            parameters={
                "claim": self.id,
                "profile": profile,
                "section": self.heading(),
                "reason": reason and reason["section"],
            },
            code=code_parts(self.module_file()),
        )


REGISTRY: dict[str, PaperClaim] = {}


@functools.lru_cache(maxsize=None)
def code_parts(module: Path | None = None) -> dict:
    """The code that decides a claim: the shared modules, the chapter `module` that computes it,
    and the crane_lib modules they import; without `module`, every module of the package (the
    code of the whole claims step)."""
    if module is None:
        sources = sorted(PACKAGE_DIR.glob("*.py"))
    else:
        sources = sorted({*(PACKAGE_DIR / name for name in SHARED_MODULES), Path(module)})
    return keys.record_key(sources=sources).parts


def _resolve(pattern: str) -> Path:
    """'results/...' patterns follow CRANE_RESULTS_DIR; others are relative to the repository."""
    if pattern.startswith("results/"):
        return RESULTS_DIR / pattern[len("results/") :]
    return REPO_ROOT / pattern


def _relative(path: Path) -> str:
    path = Path(path)
    for base, name in ((RESULTS_DIR, "results"), (REPO_ROOT, "")):
        try:
            rel = path.resolve().relative_to(base.resolve())
            return f"{name}/{rel}" if name else str(rel)
        except ValueError:
            continue
    return str(path)


def claim(
    id: str,
    where: str,
    statement: str,
    paper_ids,
    chapter: str,
    section: str,
    inputs,
    reason: tuple[str, str] | None = None,
):
    """Register the decorated function as the computation of one paper claim (see the package's
    docstring); `section` and `reason` name sections by their MyST labels."""

    def register(function):
        if id in REGISTRY:
            raise ValueError(f"claim {id!r} registered twice")
        REGISTRY[id] = PaperClaim(
            id,
            where,
            statement,
            tuple(paper_ids),
            chapter,
            section,
            tuple(p for group in inputs for p in ((group,) if isinstance(group, str) else group)),
            function,
            reason,
        )
        return function

    return register


def pending(
    id: str,
    where: str,
    statement: str,
    paper_ids,
    chapter: str | None = None,
    section: str | None = None,
) -> None:
    """Register a claim that no chapter computes yet (shown as not yet computed)."""
    if id in REGISTRY:
        raise ValueError(f"claim {id!r} registered twice")
    REGISTRY[id] = PaperClaim(id, where, statement, tuple(paper_ids), chapter, section)


def arrange(order) -> None:
    """Put the registry in the page's order (every registered claim once, no other)."""
    order = list(order)
    if sorted(order) != sorted(REGISTRY):
        unknown, unlisted = set(order) - set(REGISTRY), set(REGISTRY) - set(order)
        raise ValueError(f"page order: unknown {sorted(unknown)}, unlisted {sorted(unlisted)}")
    arranged = {claim_id: REGISTRY[claim_id] for claim_id in order}
    REGISTRY.clear()
    REGISTRY.update(arranged)


def evaluate(claim_id: str, results: Results | None = None, profile: str | None = None) -> dict:
    """Compute one claim now and return its record (not written)."""
    c = REGISTRY[claim_id]
    profile = profile or current_profile()
    if c.compute is None:
        outcome = Outcome.missing("no chapter of this book computes it yet")
    else:
        outcome = c.compute(results or Results())
    return {
        "id": c.id,
        "where": c.where,
        "statement": c.statement,
        "paper_ids": list(c.paper_ids),
        "paper": c.paper_text(),
        "verdict": outcome.verdict,
        "number": outcome.number,
        "detail": f"{outcome.detail} Why: {outcome.why}" if outcome.why else outcome.detail,
        "why": outcome.why,
        "chapter": c.chapter,
        "section": c.heading(),
        "label": c.section,
        "anchor": c.anchor,
        "profile": profile,
        "inputs": [_relative(f) for f in c.input_files()],
        "reason": c.reason_link(),
    }


def write_claims(profile: str, show_progress: bool = True) -> keys.StepLog:
    """The pipeline step: (re)compute every claim whose key changed (a pending claim is written as
    not yet computed); returns how many were reused and why the others were recomputed."""
    from tqdm.auto import tqdm

    results = Results()
    store = keys.KeyStore("claims")
    log = keys.StepLog("claims")
    for order, c in enumerate(
        tqdm(list(REGISTRY.values()), desc="claims", unit="claim", disable=not show_progress)
    ):
        key = c.key(profile)
        reasons = store.stale(c.id, key, outputs=[record_path(c.id)])
        log.note(reasons)
        if reasons:
            write_json_record(
                record_path(c.id), {**evaluate(c.id, results, profile), "order": order}
            )
            store.store(c.id, key)
    return log


def main(argv=None) -> int:
    """`python -m crane_book.claims --profile quick`: the pipeline's claims step alone."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m crane_book.claims", description=main.__doc__)
    parser.add_argument("--profile", choices=("quick", "full"), default=current_profile())
    args = parser.parse_args(argv)
    print(write_claims(args.profile).line())
    for claim_id in REGISTRY:
        record = read_json_record(record_path(claim_id))
        print(f"{claim_id}: {record['verdict']}: {record['number']}")
    return 0
