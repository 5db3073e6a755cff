"""The build's result records as downloads: one zip per kind of record, made by the main job
before the book is built, linked from the pages that use them.

    python -m crane_book.pipeline ...   # last step: downloads.bundle_all()
    downloads.link("conditions")                  # in a chapter cell: a MyST {download} link

Sphinx copies a file named by the `{download}` role into `_build/html/_downloads/` and fails
the build (-W) when the file does not exist, so a page can only link a bundle this build made.
The zips are byte-identical for identical records (sorted entries, fixed timestamps), and each
carries a MANIFEST.txt with every file's sha256. A zip is written only when its bytes differ
from the file already there: a rebuild with nothing changed leaves the zips' bytes and mtimes
alone.

Kinds: "conditions" (results/conditions, the OLS/SDP sweep), "clie" (results/clie, the CLIE
sweep), "claims" (results/claims, the claims page), "audits" (results/audits, Sec. VI-E's
re-evaluation of every OLS estimate over the domain), "accepted" (results/accepted, the accepted
model, once the pipeline writes it), "export" (results/export, the accepted model's consistent
link-level model as URDF, MJCF and standard parameters), "repeats" (results/repeats, Table XI's
refits) and "kt_draws" (results/kt_draws, one record per Kt draw); "all" holds every kind present.
The per-condition kinds hold the records of the conditions the build's profile lists: one
results folder may also hold the other profile's.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

from crane_lib import parameter_sets
from crane_lib.errors import atomic_write
from crane_lib.paths import REPO_ROOT, RESULTS_DIR

DOWNLOADS_DIR = RESULTS_DIR / "downloads"
KINDS = {
    "conditions": "the OLS/SDP condition records (one JSON per condition)",
    "clie": "the CLIE sweep's records (OLS, start and CLIE solution per condition)",
    "claims": "the claims at a glance (one JSON per claim)",
    "audits": "every OLS estimate of the build audited over the domain (Sec. VI-E)",
    "accepted": "the accepted model and its audit",
    "export": "the accepted model's consistent link-level model: URDF, MJCF, standard parameters "
    "and record",
    "repeats": "the repeats sweep's records: every execution refitted, per interval (Table XI, "
    "Sec. VII-D)",
    "kt_draws": "the Kt draws: one record per draw of per-axis torque-constant errors (Appendix "
    "E-C)",
}
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def bundle_path(kind: str) -> Path:
    """The zip of one kind of record offered for download."""
    return DOWNLOADS_DIR / f"crane-x7-{kind}-records.zip"


def profile_paths(kind: str, profile: str) -> set[Path] | None:
    """The record files of `kind` that `profile`'s condition lists name (None for a kind that is
    not kept per condition): the folder may hold the other profile's records."""
    from crane_lib.acceptance import kt_sensitivity
    from crane_lib.acceptance import reproducibility as repro
    from crane_lib.identification import clie, condition

    def rows(sweep: str) -> list[dict]:
        return parameter_sets.read_conditions(f"{sweep}_{profile}.csv")

    if kind == "conditions":
        return set(condition.profile_record_paths(profile))
    if kind == "clie":  # each row's record, or its failure, under its route
        return {
            where(r["trajectory"], float(r["ts"]), int(r["run"]), str(r["refine"]))
            for sweep in clie.SWEEPS
            for r in rows(sweep)
            for where in (clie.record_path, clie.failure_path)
        }
    if kind == "repeats":
        return {
            repro.record_path(r["trajectory"], float(r["ts"]), int(r["run"]), str(r["refine"]))
            for r in rows("repeats")
        }
    if kind == "kt_draws":
        return {
            kt_sensitivity.draw_record_path(r["trajectory"], float(r["ts"]), int(r["run"]), seed)
            for r in rows("kt_draws")
            for seed in kt_sensitivity.seeds_of([r])
        }
    return None


def _files(kind: str, profile: str | None = None) -> list[Path]:
    kinds = list(KINDS) if kind == "all" else [kind]
    files = []
    for each in kinds:
        folder = RESULTS_DIR / each
        if folder.is_dir():
            # hidden files are temporaries of atomic writes; executed notebooks stay in the sweeps
            found = [
                p
                for p in folder.rglob("*")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(RESULTS_DIR).parts)
            ]
            listed = None if profile is None else profile_paths(each, profile)
            files += found if listed is None else [p for p in found if p in listed]
    return sorted(files)


def bundle(kind: str, profile: str | None = None) -> Path | None:
    """Zip the records of one kind (None when this build has none), of `profile`'s conditions
    when given. Entries are named relative to results/, in sorted order, with a fixed time stamp:
    the same records give the same bytes."""
    if kind != "all" and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; one of {sorted(KINDS) + ['all']}")
    files = _files(kind, profile)
    if not files:
        return None
    path = bundle_path(kind)
    manifest = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            data = file.read_bytes()
            name = file.relative_to(RESULTS_DIR).as_posix()
            manifest.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
            archive.writestr(_entry(name), data)
        archive.writestr(_entry("MANIFEST.txt"), "\n".join(manifest) + "\n")
    content = buffer.getvalue()
    if not _same_bytes(path, content):  # an unchanged zip keeps its mtime
        with atomic_write(path, "wb") as handle:
            handle.write(content)
    return path


def _same_bytes(path: Path, content: bytes) -> bool:
    """Whether the file at `path` holds exactly `content` (False when absent or unreadable)."""
    try:
        if path.stat().st_size != len(content):
            return False
        return path.read_bytes() == content
    except OSError:
        return False


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def bundle_all(profile: str | None = None) -> dict[str, Path]:
    """Every kind present, and "all", of `profile`'s conditions when given; a kind this build has
    no records of is removed (no stale zip)."""
    made = {}
    for kind in [*KINDS, "all"]:
        path = bundle(kind, profile)
        if path is None:
            bundle_path(kind).unlink(missing_ok=True)
        else:
            made[kind] = path
    return made


def link(kind: str, from_document: str | Path | None = None, text: str | None = None):
    """A MyST `{download}` link to the bundle of `kind`, as Markdown for a notebook cell's output.

    `from_document` is the page's source path relative to the repository (default: a chapter in
    chapters/); the role's path is relative to it. Needs nb_render_markdown_format: myst (set in
    book/_config.yml) so that Markdown outputs are parsed with roles.
    """
    from IPython.display import Markdown

    path = bundle_path(kind)
    base = (REPO_ROOT / (from_document or "chapters/x.py")).parent
    relative = Path(_relpath(path, base)).as_posix()
    label = text or f"Download {KINDS.get(kind, 'every result record')} ({path.name})"
    return Markdown(f"{{download}}`{label} <{relative}>`")


def _relpath(path: Path, base: Path) -> str:
    import os

    return os.path.relpath(Path(path).resolve(), Path(base).resolve())
