"""The book's pages, executed side by side before Sphinx reads them (the last step of `make book`).

    python -m crane_book.pages [--jobs 2]

jupyter-book 1.x executes notebook pages one after another while Sphinx reads them, so on two
cores one core idles for most of the page phase (the CLIE and audit chapters alone take minutes).
This step executes every jupytext page of the table of contents (`.py`, percent format) in
`--jobs` kernels at once and hands the executed notebooks to Sphinx through the jupyter-cache
folder that myst-nb's "cache" execution mode reads (`execute.cache` in book/_config.yml);
Sphinx then only renders. A page it finds no cached notebook for (a MyST Markdown page, or a
page this step was not run for) it executes itself.

A page is executed again only when what it shows could have changed (`page_key`): its own text,
the source of the crane_lib and crane_book modules it imports (transitively), the build's records
(every result file but the recordings, bundles and executed sweep notebooks; `results_digest`),
the committed data it reads, and the profile and twin. Correcting one chapter's prose executes
that chapter alone. Pages only read: executing them writes nothing under results/, and the
step fails, naming the files, when a page did (`written_under_results`).

The notebook executed here is the one myst-nb reads (the same jupytext reader and format, the
same working folder, timeout and error policy), so its code-cell hash matches and Sphinx uses
it. A page whose cell raises is reported with its error and the step exits 1 after the others
have run; nothing of it is cached.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
from concurrent.futures import as_completed
from pathlib import Path

import yaml
from tqdm import tqdm

from crane_book import kernels, keys, options
from crane_book.build_clock import TIMINGS_DIR
from crane_book.workers import worker_pool
from crane_lib import fingerprint, source_graph
from crane_lib.errors import atomic_write
from crane_lib.paths import REPO_ROOT, RESULTS_DIR

CONFIG = REPO_ROOT / "book" / "_config.yml"
TOC = REPO_ROOT / "book" / "_toc.yml"
PAGE_SUFFIX = ".py"  # jupytext pages, read as book/_config.yml's nb_custom_formats says
# seconds per page of the last build: the next one starts the slowest pages first
SECONDS_FILE = REPO_ROOT / "_build" / "page_seconds.json"
# committed inputs the pages read besides the records
PAGE_DATA = ("data", "trajectories", "papermill_params", "book/_config.yml")
# result files that are not records: large binaries derived from records, executed notebooks
NOT_RECORDS = (".npz", ".npy", ".ipynb", ".zip")
ENVIRONMENT = ("CRANE_PROFILE", "CRANE_TWIN", "CRANE_RESULTS_DIR")
# without a last build (a fresh clone, CI): the pages measured slowest start first (3-14 s each
# on two cores in the quick profile, imports and the visible checks included), so that the
# others fill the second kernel meanwhile
SLOWEST_FIRST = (
    "chapters/05_clie.py",
    "chapters/01_modeling.py",
    "chapters/03_preprocessing.py",
    "book/bad_input.py",
)


def _files(entries) -> list[str]:
    found = []
    for entry in entries or []:
        if "file" in entry:
            found.append(entry["file"])
        for key in ("chapters", "sections", "parts"):
            found += _files(entry.get(key))
    return found


def toc_pages(toc: Path = TOC) -> list[Path]:
    """The jupytext pages of the table of contents, in its order."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    files = [data["root"], *_files(data.get("parts")), *_files(data.get("chapters"))]
    return [
        REPO_ROOT / f"{f}{PAGE_SUFFIX}"
        for f in files
        if (REPO_ROOT / f"{f}{PAGE_SUFFIX}").is_file()
    ]


def execution_settings(config: Path = CONFIG) -> dict:
    """The execution settings Sphinx uses (book/_config.yml): cache folder, timeout, errors, and
    the jupytext format its nb_custom_formats reads the pages in."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    execute = data["execute"]
    if execute.get("execute_notebooks") != "cache" or not execute.get("cache"):
        raise RuntimeError(
            f"{config}: execute.execute_notebooks must be 'cache' with execute.cache set "
            "for pre-executed pages"
        )
    reader, options = data["sphinx"]["config"]["nb_custom_formats"][PAGE_SUFFIX]
    if reader != "jupytext.reads":
        raise RuntimeError(
            f"{config}: nb_custom_formats reads {PAGE_SUFFIX} pages with {reader}, "
            "expected jupytext.reads"
        )
    return {
        "cache": REPO_ROOT / execute["cache"],
        "timeout": int(execute.get("timeout", 30)),
        "allow_errors": bool(execute.get("allow_errors", False)),
        "format": options["fmt"],
    }


def read_page(page: Path, fmt: str):
    """The notebook myst-nb reads from a page (its nb_custom_formats reader, jupytext in `fmt`)."""
    import jupytext

    return jupytext.reads(page.read_text(encoding="utf-8"), fmt=fmt)


def _tree_digest(root: Path, files) -> str:
    """One digest of `files` by their path under `root` and their content."""
    return fingerprint.digest(
        *(f"{p.relative_to(root).as_posix()}\0{fingerprint.file_digest(p)}" for p in files),
        length=64,
    )


def results_digest(results_dir: Path | None = None) -> str:
    """One digest of the build's records: every file under results/ except large binaries,
    executed notebooks and downloads, which the records decide, the keys folder itself and the
    build's own step times (crane_book.build_clock), which differ at every run."""
    root = Path(results_dir or RESULTS_DIR)
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix not in NOT_RECORDS
        and ".work" not in p.parts
        and p.relative_to(root).parts[0] not in (keys.KEYS_DIR_NAME, TIMINGS_DIR.name)
    )
    return _tree_digest(root, files)


def _data_digest() -> str:
    """One digest of the committed data the pages read (PAGE_DATA)."""
    files = []
    for entry in PAGE_DATA:
        path = REPO_ROOT / entry
        files += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return _tree_digest(REPO_ROOT, files)


def results_snapshot(results_dir: Path | None = None) -> dict[str, tuple[int, int]]:
    """Every file under results/ with its size and modification time (what a write changes)."""
    root = Path(results_dir or RESULTS_DIR)
    if not root.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def written_under_results(before: dict, after: dict) -> list[str]:
    """The files the pages created, changed or removed under results/ (none, if they only read)."""

    def change(name: str) -> str:
        return "created" if name not in before else "removed" if name not in after else "rewritten"

    changed = [n for n in set(before) | set(after) if before.get(n) != after.get(n)]
    return sorted(f"{name} ({change(name)})" for name in changed)


def _book_modules(page: Path) -> list[Path]:
    """The crane_book modules a page imports (the download links)."""
    own = Path(__file__).resolve().parent
    names = set()
    for node in ast.walk(source_graph.source_tree(page)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update([node.module, *(f"{node.module}.{a.name}" for a in node.names)])
    files = {own.parent / f"{n.replace('.', '/')}.py" for n in names if n.split(".")[0] == own.name}
    return sorted(f for f in files if f.is_file())


def page_key(page: Path, records: str, data: str) -> keys.Key:
    """What decides an executed page: its text, the code it imports, the records, the data."""
    extra = {
        "records": records,
        "data": data,
        **{name: os.environ.get(name, "") for name in ENVIRONMENT},
    }
    try:
        return keys.record_key(sources=[page, *_book_modules(page)], extra=extra)
    except (
        OSError,
        UnicodeDecodeError,
        SyntaxError,
        ValueError,
    ) as error:  # executing it will say what
        return keys.Key({"unreadable": f"{type(error).__name__}: {error}", **extra})


def execute_page(
    page: str, fmt: str, timeout: int, allow_errors: bool
) -> tuple[str, str | None, str | None, float]:
    """Run one page in its own kernel in the page's folder (myst-nb's local working folder).
    Returns (page, executed notebook as JSON or None, error text or None, seconds)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    path = Path(page)
    notebook = read_page(path, fmt)
    manager = kernels.kernel_manager()
    try:
        result = single_nb_execution(
            notebook,
            cwd=str(path.parent),
            timeout=timeout,
            allow_errors=allow_errors,
            meta_override=True,
            km=manager,
        )
    finally:
        kernels.shut_down(manager)
    if result.err is not None:
        failing = [
            i
            for i, cell in enumerate(notebook.cells)
            if any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        ]
        where = f"cell {failing[0] + 1} (of {len(notebook.cells)})" if failing else "its execution"
        ename, evalue = (
            getattr(result.err, "ename", type(result.err).__name__),
            getattr(result.err, "evalue", str(result.err)),
        )
        return page, None, f"{where} raised {ename}: {evalue}", result.time
    return page, nbformat.writes(notebook), None, result.time


def _name(page) -> str:
    page = Path(page)
    return (
        page.relative_to(REPO_ROOT).as_posix()
        if page.is_relative_to(REPO_ROOT)
        else page.as_posix()
    )


def execute_pages(
    jobs: int = 2,
    pages: list[Path] | None = None,
    cache_dir: Path | None = None,
    seconds_file: Path = SECONDS_FILE,
) -> dict[str, float]:
    """Execute the `pages` (default: every jupytext page of the table of contents) whose key
    changed, in `jobs` kernels at once, into the cache book/_config.yml names (the pages' keys
    beside it); returns seconds per executed page. Raises RuntimeError naming every page that
    failed (after the others have run and been cached)."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    settings = execution_settings()
    cache_dir = settings["cache"] if cache_dir is None else Path(cache_dir)
    keys_file = cache_dir.with_name(f"{cache_dir.name}.keys.json")
    pages = toc_pages() if pages is None else [Path(p) for p in pages]
    try:  # only an order of submission: an unreadable file falls back to the default order
        before = json.loads(seconds_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = {name: float(len(SLOWEST_FIRST) - i) for i, name in enumerate(SLOWEST_FIRST)}
    try:
        stored = json.loads(keys_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    cache = get_cache(str(cache_dir))
    cached = {str(Path(r.uri)) for r in cache.list_cache_records()}
    records, data = results_digest(), _data_digest()
    current = {_name(p): page_key(p, records, data) for p in pages}
    log = keys.StepLog("book pages")
    todo = []
    for page in pages:
        name = _name(page)
        reasons = keys.changes(stored.get(name), current[name].parts)
        if not reasons and str(page) not in cached:
            reasons = ["no executed notebook in the cache"]
        log.note(reasons)
        todo += [page] if reasons else []
    todo = sorted(todo, key=lambda p: -before.get(_name(p), 0.0))  # stable: TOC order otherwise
    seconds, failures = {}, []
    untouched = results_snapshot()
    # spawned workers: no worker inherits this process's state; each page starts its own kernel
    with (
        worker_pool(jobs) as pool,
        tqdm(total=len(todo), desc="book pages", unit="page") as bar,
    ):
        futures = {
            pool.submit(
                execute_page,
                str(p),
                settings["format"],
                settings["timeout"],
                settings["allow_errors"],
            ): p
            for p in todo
        }
        for future in as_completed(futures):
            try:
                page, executed, error, spent = future.result()
            except Exception as err:  # the page could not even be read or its worker died
                page, executed, error, spent = (
                    str(futures[future]),
                    None,
                    f"{type(err).__name__}: {err}",
                    0.0,
                )
            name = _name(page)
            seconds[name] = spent
            if error is None:
                bundle = CacheBundleIn(
                    nbformat.reads(executed, as_version=4), page, data={"execution_seconds": spent}
                )
                cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
                stored[name] = current[name].parts
            else:
                stored.pop(name, None)
                failures.append(f"{name}: {error}")
            bar.set_postfix_str(f"{name} {spent:.0f} s" + (" FAILED" if error else ""))
            bar.update()
    print(log.line())
    written = written_under_results(untouched, results_snapshot())
    if written:  # a page that writes a record makes the book disagree with itself
        failures.append(
            f"the pages wrote under {RESULTS_DIR} (pages only read records): "
            + ", ".join(written[:10])
            + (f" and {len(written) - 10} more" if len(written) > 10 else "")
        )
        stored.clear()  # no page of this build is trusted: every page runs again next time
    keys_file.parent.mkdir(parents=True, exist_ok=True)
    seconds_file.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(keys_file, encoding="utf-8") as handle:
        json.dump(stored, handle, indent=1, sort_keys=True)
    with atomic_write(seconds_file, encoding="utf-8") as handle:
        json.dump({**before, **seconds}, handle, indent=1, sort_keys=True)
    if failures:
        raise RuntimeError(
            f"{len(failures)} of {len(todo)} pages failed:\n" + "\n\n".join(failures)
        )
    return seconds


def main(argv=None) -> int:
    """Execute the pages whose key changed; exit status 1 when a page failed."""
    parser = options.Parser(prog="python -m crane_book.pages", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jobs",
        default="2",
        help=f"pages executed at once, one kernel each (1 to {options.MAX_JOBS})",
    )
    args = parser.parse_args(argv)
    args.jobs = options.checked(parser, "--jobs", args.jobs, options.jobs)
    # the pages read the profiles from the environment (make book PROFILE=... TWIN=...)
    options.checked_environment(parser, "CRANE_PROFILE", options.book_profile, "full")
    options.checked_environment(parser, "CRANE_TWIN", options.twin_name, "default")
    started = time.perf_counter()
    try:
        seconds = execute_pages(args.jobs)
    except RuntimeError as error:
        print(f"book pages: {error}", file=sys.stderr)
        return 1
    slowest = sorted(seconds.items(), key=lambda kv: -kv[1])[:3]
    if not seconds:
        return 0
    print(
        f"book pages: {len(seconds)} executed in {time.perf_counter() - started:.0f} s "
        f"on {args.jobs} kernels "
        f"({sum(seconds.values()):.0f} s of page time; slowest "
        + ", ".join(f"{k} {v:.0f} s" for k, v in slowest)
        + ")"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
