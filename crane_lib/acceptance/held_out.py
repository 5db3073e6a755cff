"""The held-out score of a model on validation recordings (paper Sec. VI-C metrics): each
recording preprocessed at the model's sampling interval, its RMSE and MNE, and the RMSE pooled
over all of them. What `crane-id accept --validation` and the new-recording notebook report."""

from __future__ import annotations

from dataclasses import dataclass

from crane_lib.identification.metrics import PredictionError, pooled_rmse, prediction_error
from crane_lib.logs.preprocessing import preprocess
from crane_lib.logs.raw_log import RawLog
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model


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
