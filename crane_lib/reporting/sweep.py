"""The papermill sweep driver: run a chapter notebook once per condition, in parallel, cached.

A sweep is a chapter (a jupytext percent `.py` file with a `parameters` cell) and a table of
conditions (`papermill_params/*.csv`, one row per condition, columns = notebook parameters).
Each condition runs the chapter with those parameters through papermill; the chapter itself
writes the condition's result file (through crane_lib) and the executed notebook is kept
beside it for inspection. A condition is skipped when its stored cache key matches: the key
hashes the chapter text, the parameters, the source of crane_lib and the input files the
caller names, so a rebuild redoes only what changed.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from crane_lib import fingerprint
from crane_lib.errors import InputError, atomic_write
from crane_lib.paths import PAPERMILL_PARAMS_DIR, REPO_ROOT, RESULTS_DIR


def read_conditions(path) -> list[dict]:
    """Rows of a papermill_params CSV as parameter dicts (numbers parsed, '#' lines skipped)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = PAPERMILL_PARAMS_DIR / path
    if not path.exists():
        raise InputError(str(path), "no such conditions file")
    frame = pd.read_csv(path, comment="#")
    if frame.empty:
        raise InputError(str(path), "no conditions", "at least one row")
    if frame.isna().any().any():
        row = int(frame.isna().any(axis=1).to_numpy().nonzero()[0][0])
        raise InputError(f"{path}: condition {row + 1}", "empty field", "a value in every column")
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for _, row in frame.iterrows()]


def condition_name(parameters: dict) -> str:
    return "_".join(f"{k}-{v}" for k, v in parameters.items()).replace("/", "-").replace(" ", "")


def source_digest() -> str:
    """Hash of every crane_lib module: a code change invalidates every cached condition."""
    return fingerprint.package_digest()


def cache_key(notebook: Path, parameters: dict, inputs: list[Path], code_digest: str) -> str:
    return fingerprint.digest(
        Path(notebook).read_bytes(), json.dumps(parameters, sort_keys=True), code_digest,
        *(f"{path}\0{fingerprint.file_digest(path)}" for path in inputs),
    )


@dataclass
class ConditionOutcome:
    name: str
    parameters: dict
    status: str  # "cached", "ran", or "failed"
    seconds: float
    error: str = ""


def _notebook_from_chapter(chapter: Path, target: Path) -> Path:
    import jupytext

    notebook = jupytext.read(chapter)
    # papermill needs to know the kernel; chapters carry it in their header, but be explicit
    notebook.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    notebook.metadata.setdefault("language_info", {"name": "python"})
    target.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(notebook, target, fmt="ipynb")
    return target


def _run_one(chapter: str, parameters: dict, out_dir: str, key: str) -> ConditionOutcome:
    import papermill

    name = condition_name(parameters)
    out_dir = Path(out_dir)
    start = time.perf_counter()
    source = _notebook_from_chapter(Path(chapter), out_dir / "notebooks" / f".{name}.input.ipynb")
    executed = out_dir / "notebooks" / f"{name}.ipynb"
    try:
        papermill.execute_notebook(
            str(source), str(executed), parameters=parameters, kernel_name="python3", cwd=str(Path(chapter).parent), progress_bar=False
        )
    except Exception as err:  # papermill raises PapermillExecutionError with the cell's traceback
        return ConditionOutcome(name, parameters, "failed", time.perf_counter() - start, str(err).strip().splitlines()[-1] if str(err).strip() else repr(err))
    finally:
        source.unlink(missing_ok=True)
    with atomic_write(out_dir / "keys" / f"{name}.key", encoding="utf-8") as handle:
        handle.write(key)
    return ConditionOutcome(name, parameters, "ran", time.perf_counter() - start)


def run_sweep(
    chapter,
    conditions: list[dict],
    sweep_name: str,
    inputs_of=lambda parameters: [],
    workers: int | None = None,
    show_progress: bool = True,
) -> list[ConditionOutcome]:
    """Run `chapter` once per condition, skipping conditions whose cache key is unchanged.

    `inputs_of(parameters)` names the input files a condition reads (recordings, bundles), so
    that a changed input reruns it. Failures are reported per condition; the others go on.
    """
    from tqdm.auto import tqdm

    chapter = Path(chapter)
    if not chapter.is_absolute():
        chapter = REPO_ROOT / chapter
    out_dir = RESULTS_DIR / "sweeps" / sweep_name
    code = source_digest()
    outcomes: list[ConditionOutcome] = []
    pending = []
    for parameters in conditions:
        name = condition_name(parameters)
        key = cache_key(chapter, parameters, [Path(p) for p in inputs_of(parameters)], code)
        key_file = out_dir / "keys" / f"{name}.key"
        if key_file.exists() and key_file.read_text(encoding="utf-8") == key:
            outcomes.append(ConditionOutcome(name, parameters, "cached", 0.0))
        else:
            pending.append((parameters, key))
    workers = workers or min(len(pending), os.cpu_count() or 1) or 1
    with tqdm(total=len(conditions), initial=len(outcomes), desc=f"sweep {sweep_name}", unit="condition", disable=not show_progress) as bar:
        if pending:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(_run_one, str(chapter), p, str(out_dir), k) for p, k in pending]
                for future in as_completed(futures):
                    outcome = future.result()
                    outcomes.append(outcome)
                    bar.set_postfix_str(f"{outcome.name}: {outcome.status}")
                    bar.update(1)
    order = {condition_name(p): i for i, p in enumerate(conditions)}
    outcomes.sort(key=lambda o: order[o.name])
    return outcomes
