"""Where the project's inputs and generated outputs live."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
TRAJECTORY_DIR = REPO_ROOT / "trajectories"
PAPERMILL_PARAMS_DIR = REPO_ROOT / "papermill_params"
# generated outputs; ignored by git and rebuilt by the main command
CACHE_DIR = Path(os.environ.get("CRANE_CACHE_DIR", REPO_ROOT / ".cache"))
RESULTS_DIR = Path(os.environ.get("CRANE_RESULTS_DIR", REPO_ROOT / "results"))

# the default data set: the twin's recordings, one raw log per execution (crane_lib.twin.dataset)
RECORDINGS_DIR = RESULTS_DIR / "recordings"
# the build's own wall and CPU times: not record content (they differ at every run), kept apart
TIMINGS_DIR = RESULTS_DIR / "timings"


def recording_path(trajectory: str, run: int = 1) -> Path:
    """The default data set's raw log of one execution (built by `python -m
    crane_lib.twin.dataset`)."""
    return RECORDINGS_DIR / f"{trajectory}_run{run}.npz"


def portable(path) -> str:
    """A path as result files record it: relative to the repository (or the results folder) when
    inside it, so that two clones at different places write byte-identical records."""
    resolved = Path(path).resolve()
    for root, prefix in ((RESULTS_DIR.resolve(), "results"), (REPO_ROOT, "")):
        try:
            relative = resolved.relative_to(root)
        except ValueError:
            continue
        return (Path(prefix) / relative).as_posix() if prefix else relative.as_posix()
    return str(path)
