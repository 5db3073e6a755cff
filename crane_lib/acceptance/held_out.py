"""The held-out score of a model on validation recordings (paper Sec. VI-C metrics): each
recording preprocessed at the model's sampling interval, its RMSE and MNE, and the RMSE pooled
over all of them. What `crane-id accept --validation` and the new-recording notebook report.

And the twin's held-out data set: "every execution" of a validation trajectory is every
execution the profile records (papermill_params/recordings_<profile>.csv), three of each in the
full profile, one in the quick profile; a missing recording is an InputError naming the file and
the step that makes it."""

from __future__ import annotations

from dataclasses import dataclass

from crane_lib.errors import InputError
from crane_lib.identification.metrics import PredictionError, pooled_rmse, prediction_error
from crane_lib.logs.preprocessing import cached_bundles, preprocess
from crane_lib.logs.raw_log import RawLog
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.paths import recording_path
from crane_lib.twin import dataset

VALIDATION_TRAJECTORIES = ("V01", "V02", "V03")


@dataclass
class HeldOut:
    names: list[str]  # one per recording (its file name)
    errors: list[PredictionError]
    pooled_rmse: float  # N·m, over every axis and sample of every recording

    def rows(self) -> list[dict]:
        return [{"recording": n, "samples": e.n_samples, "RMSE [N·m]": e.rmse, "MNE": e.mne} for n, e in zip(self.names, self.errors)]


def held_out(beta, logs: list[RawLog], ts: float, model: DynamicModel | None = None) -> HeldOut:
    """Prediction errors of the base parameters `beta` on each validation log at interval `ts`."""
    model = shared_model("reduced") if model is None else model
    bundles = [preprocess(log, ts) for log in logs]
    names = [log.path.name if log.path is not None else f"recording {k + 1}" for k, log in enumerate(logs)]
    return HeldOut(names, [prediction_error(model, beta, b) for b in bundles], pooled_rmse(model, beta, bundles))


# ----------------------------------------------------------------------------- the twin's data set


def validation_executions(profile: str) -> list[tuple[str, int]]:
    """(trajectory, run) of every execution of V01-V03 the profile records, in file order."""
    return [(e.trajectory, e.run) for e in dataset.executions(profile)
            if e.trajectory in VALIDATION_TRAJECTORIES]


def identification_executions(profile: str, run: int = 1) -> list[str]:
    """The identification trajectories the profile records (execution `run`), in file order."""
    return [e.trajectory for e in dataset.executions(profile)
            if e.trajectory not in VALIDATION_TRAJECTORIES and e.run == run]


def recorded_bundle(trajectory: str, run: int, ts: float, profile: str):
    """The bundle of one execution at `ts`; a missing recording names the file and the make step."""
    path = recording_path(trajectory, run)
    if not path.is_file():
        raise InputError(str(path), f"no recording of {trajectory} run {run}",
                         "the twin's recording written by `python -m crane_lib.twin.dataset "
                         f"--profile {profile}` (the first step of `make book`)")
    return cached_bundles(path, (float(ts),))[float(ts)]


def heldout_bundles(profile: str, ts: float = 0.040) -> dict[tuple[str, int], object]:
    """{(trajectory, run): bundle} for every execution of V01-V03 in the profile."""
    executions = validation_executions(profile)
    if not executions:
        raise InputError(f"papermill_params/recordings_{profile}.csv", "no execution of V01-V03",
                         "the validation trajectories")
    return {(v, run): recorded_bundle(v, run, ts, profile) for v, run in executions}
