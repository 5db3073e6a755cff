"""The default data set: every execution of a profile recorded on the twin, cached by content.

    python -m crane_lib.twin.dataset --profile quick|full [--jobs 2] [--force]

The executions are listed in papermill_params/recordings_<profile>.csv (trajectory, run,
seed). Each is written as RESULTS_DIR/recordings/<trajectory>_run<run>.npz (the raw log of
Appendix D-C, see crane_lib/logs/raw_log.py) and listed in
RESULTS_DIR/recordings/manifest_<profile>.csv.

A recording is redone only when one of its inputs changed: the command file's text, the
truth and drive-settings files, the realization constants, the twin's and controller's
source, the seed, the twin profile. The content hash of those inputs is stored in the log's
metadata ("cache_key") and compared on the next run. Recordings run in parallel processes.

The twin profile is the one $CRANE_TWIN names (twin/effects.py: "default", today's twin, or
"field"; `make book TWIN=field` also points CRANE_RESULTS_DIR at results/twin-field/).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from crane_lib import arithmetic, fingerprint
from crane_lib.errors import (
    MAX_JOBS,
    InputError,
    atomic_write,
    checked_csv_rows,
    job_count,
    parse_integer,
    refuse_option,
    shown,
)
from crane_lib.excitation.commands import commanded_duration, read_command_file
from crane_lib.logs import raw_log
from crane_lib.model.controller import REALIZATION_CONSTANTS_CSV
from crane_lib.paths import PAPERMILL_PARAMS_DIR, RECORDINGS_DIR, TRAJECTORY_DIR
from crane_lib.twin import effects as twin_effects
from crane_lib.twin import recorder as twin
from crane_lib.twin.truth import TWIN_PLANT_CSV, TWIN_TRUTH_CSV

PROFILES = ("quick", "full")
TRAJECTORY_NAME = re.compile(
    r"[A-Za-z0-9_-]+"
)  # a file stem: no path, so no row reaches outside trajectories/
MANIFEST_COLUMNS = [
    "trajectory",
    "run",
    "seed",
    "file",
    "samples",
    "record_duration_s",
    "commanded_duration_s",
    "realized_motion_s",
    "clamp_share_percent",
    "cache_key",
]


@dataclass(frozen=True)
class Execution:
    trajectory: str
    run: int
    seed: int

    @property
    def command_file(self) -> Path:
        """The command file the execution runs."""
        return TRAJECTORY_DIR / f"{self.trajectory}.txt"

    def log_path(self, directory: Path = RECORDINGS_DIR) -> Path:
        """The raw log of the execution."""
        return directory / f"{self.trajectory}_run{self.run}.npz"


def executions(profile: str) -> list[Execution]:
    """Rows of papermill_params/recordings_<profile>.csv; errors name the file and line."""
    if profile not in PROFILES:
        raise InputError("profile", f"{profile!r}", f"one of {PROFILES}")
    path = PAPERMILL_PARAMS_DIR / f"recordings_{profile}.csv"
    rows, seen = [], set()
    for where, fields in checked_csv_rows(
        path, ["trajectory", "run", "seed"], "the list of executions of the profile"
    ):
        name = fields[0].strip()
        if not TRAJECTORY_NAME.fullmatch(name):
            raise InputError(
                where,
                f"trajectory {shown(name)}",
                "a file stem in trajectories/ (letters, digits, '_' or '-')",
            )
        run = parse_integer(fields[1], where, "a run number from 1", field="run")
        seed = parse_integer(fields[2], where, "a non-negative seed", field="seed")
        if run < 1 or seed < 0:
            raise InputError(
                where, f"run {run}, seed {seed}", "a run number from 1 and a non-negative seed"
            )
        execution = Execution(name, run, seed)
        if not execution.command_file.is_file():
            raise InputError(
                where, f"no command file {execution.command_file}", "a trajectory in trajectories/"
            )
        if (execution.trajectory, execution.run) in seen:
            raise InputError(
                where,
                f"{execution.trajectory} run {execution.run} listed twice",
                "each execution once",
            )
        seen.add((execution.trajectory, execution.run))
        rows.append(execution)
    return rows


def cache_key(execution: Execution, effects: twin_effects.TwinEffects | None = None) -> str:
    """Content hash of everything that determines the recording (today's twin unless `effects`
    differ), the floating-point kernels included: the closed loop turns their last digits into
    another recording."""
    profile = () if effects is None or effects.is_default else (effects.describe(),)
    return fingerprint.digest(
        execution.command_file.read_bytes(),
        TWIN_TRUTH_CSV.read_bytes(),
        TWIN_PLANT_CSV.read_bytes(),
        REALIZATION_CONSTANTS_CSV.read_bytes(),
        twin.source_fingerprint(),
        f"{execution.trajectory}|{execution.run}|{execution.seed}",
        arithmetic.signature(),
        *profile,
    )


def stored_metadata(path: Path) -> dict[str, str] | None:
    """Metadata of an existing .npz log, or None if absent or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            text = str(data["metadata"])
    except (OSError, KeyError, ValueError):
        return None
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def _record_one(
    execution: Execution, key: str, directory: str, effects: twin_effects.TwinEffects | None = None
) -> dict:
    samples, metadata = twin.record(
        execution.command_file,
        execution.seed,
        effects=None if effects is None or effects.is_default else effects,
    )
    metadata["run"] = str(execution.run)
    metadata["clamp_share_percent"] = (
        f"{100.0 * samples[:, raw_log.group('clamped')].any(axis=1).mean():.4f}"
    )
    metadata["samples"] = str(len(samples))
    metadata["cache_key"] = key
    path = execution.log_path(Path(directory))
    raw_log.write_raw_log(path, samples, metadata)
    return _manifest_row(execution, path, metadata, samples)


def _manifest_row(
    execution: Execution, path: Path, metadata: dict, samples: np.ndarray | None = None
) -> dict:
    return {
        "trajectory": execution.trajectory,
        "run": execution.run,
        "seed": execution.seed,
        "file": path.name,
        "samples": metadata["samples"],
        "record_duration_s": metadata["record_duration_s"],
        "commanded_duration_s": metadata["commanded_duration_s"],
        "realized_motion_s": metadata["realized_motion_s"],
        "clamp_share_percent": metadata["clamp_share_percent"],
        "cache_key": metadata["cache_key"],
    }


def build(
    profile: str,
    jobs: int = 2,
    force: bool = False,
    directory: Path = RECORDINGS_DIR,
    progress: bool = True,
    effects: twin_effects.TwinEffects | None = None,
) -> Path:
    """Record every execution of the profile that is missing or stale; write the manifest.
    `effects`: the twin profile (default: $CRANE_TWIN's, today's twin when unset)."""
    todo = executions(profile)
    effects = twin_effects.active_profile() if effects is None else effects
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    keys = {e: cache_key(e, effects) for e in todo}
    rows: dict[Execution, dict] = {}
    pending = []
    for execution in todo:
        meta = None if force else stored_metadata(execution.log_path(directory))
        if meta is not None and meta.get("cache_key") == keys[execution] and "samples" in meta:
            rows[execution] = _manifest_row(execution, execution.log_path(directory), meta)
        else:
            pending.append(execution)
    if pending:
        # bind the core to the kernels once, before the workers start (numba compiles its loop
        # at the first recording, in each worker, or loads it from numba's cache)
        twin._core()
        weight = {e: commanded_duration(read_command_file(e.command_file)) for e in pending}
        started = time.perf_counter()
        label = profile if effects.is_default else f"{profile}, twin {effects.name}"
        with tqdm(
            total=round(sum(weight.values())),
            unit="s",
            desc=f"recording {label}",
            disable=not progress,
        ) as bar:
            if jobs <= 1:
                for execution in pending:
                    rows[execution] = _record_one(
                        execution, keys[execution], str(directory), effects
                    )
                    bar.update(round(weight[execution]))
                    bar.set_postfix_str(
                        f"{len(rows) - (len(todo) - len(pending))}/{len(pending)} recordings"
                    )
            else:
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    futures = {
                        pool.submit(_record_one, e, keys[e], str(directory), effects): e
                        for e in sorted(pending, key=lambda e: -weight[e])
                    }
                    done = 0
                    for future in as_completed(futures):
                        execution = futures[future]
                        rows[execution] = future.result()
                        done += 1
                        bar.update(round(weight[execution]))
                        bar.set_postfix_str(f"{done}/{len(pending)} recordings")
        if progress:
            print(f"recorded {len(pending)} executions in {time.perf_counter() - started:.1f} s")
    elif progress:
        print(f"all {len(todo)} recordings of the {profile} profile are up to date")
    manifest = directory / f"manifest_{profile}.csv"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for execution in todo:
        writer.writerow(rows[execution])
    text = buffer.getvalue()
    if not manifest.exists() or manifest.read_text(encoding="utf-8") != text:
        with atomic_write(manifest, encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return manifest


def main(argv=None) -> None:
    """Record the profile's data set on the twin."""
    parser = argparse.ArgumentParser(
        description="Record the default data set on the digital twin (cached by content)."
    )
    parser.add_argument(
        "--profile", choices=PROFILES, default=os.environ.get("CRANE_PROFILE", "full")
    )
    parser.add_argument(
        "--jobs", default="2", help=f"parallel processes, 1 to {MAX_JOBS} (default 2)"
    )
    parser.add_argument("--force", action="store_true", help="re-record even if up to date")
    parser.add_argument(
        "--out",
        type=Path,
        default=RECORDINGS_DIR,
        help=f"folder of the recordings (default {RECORDINGS_DIR})",
    )
    args = parser.parse_args(argv)
    try:  # before any recording
        jobs = job_count(args.jobs)
    except ValueError as error:
        refuse_option(parser, "--jobs", args.jobs, error)
    manifest = build(args.profile, jobs=jobs, force=args.force, directory=args.out)
    print(f"manifest: {manifest}")


if __name__ == "__main__":
    main()
