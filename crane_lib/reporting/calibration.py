"""What the twin produces next to what the paper reports for the real arm ("calibrate honestly").

Nothing here feeds back into the twin's settings: these numbers are reported, not targeted.

``python -m crane_lib.reporting.calibration [LOG ...]`` prints, per raw log: realized against
commanded duration, record length, clamp share (|u| >= 0.98 of the axis limit, D-F), peak
joint speed, and the residual that an ordinary least-squares fit of the full 65-parameter
model leaves, as a share of the torque RMS (III-D).

The residual is the one `identification.model_classes.full_model_torque_shares` computes on the 40 ms bundle
that `preprocessing` (Appendix D-C) makes of the log, as the OLS/SDP chapter does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from crane_lib.constants import N_AXES
from crane_lib.identification.model_classes import full_model_torque_shares
from crane_lib.identification.ols import ols, stack
from crane_lib.logs import raw_log
from crane_lib.logs.preprocessing import preprocess
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import RECORDINGS_DIR


def full_model_residual_share(log, interval: float = 0.04) -> float:
    """RMS of the OLS residual of the full 65-parameter model over the RMS of the torque (%)."""
    return full_model_torque_shares(preprocess(log, interval))["residual"]


def full_model_residual(bundle) -> np.ndarray:
    """(n, 8) torque residual of the full 65-parameter OLS fit on the bundle (N·m), per sample and axis."""
    full = DynamicModel("full")
    regressor = full.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)
    fit = ols(*stack(regressor, bundle.tau), full.names)
    return bundle.tau - regressor @ fit.parameters.values


def residual_density(
    residual: np.ndarray, ts: float, nperseg: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided power spectral density (Welch, Hann) of an (n, 8) residual sampled at ts: (frequency Hz, (nf, 8) (N·m)²/Hz)."""
    from scipy import signal

    return signal.welch(residual, fs=1.0 / ts, nperseg=nperseg, axis=0)


def power_share_above(
    frequency_hz: np.ndarray, density: np.ndarray, cutoff_hz: float
) -> np.ndarray:
    """Per column of `density`, the share (%) of the spectrum's power above cutoff_hz (DC bin excluded)."""
    band = frequency_hz > 0
    above = band & (frequency_hz > cutoff_hz)
    return 100.0 * density[above].sum(axis=0) / density[band].sum(axis=0)


def summary(log, with_residual: bool = True) -> dict[str, float]:
    """The calibration quantities of one raw log (a crane_lib.logs.raw_log.RawLog).

    with_residual=False skips the 65-parameter fit (NaN in its place): the paper states the
    residual share for the identification data, not for the validation records.
    """
    clamped = log.clamp_threshold_reached.any(axis=1)
    velocity = preprocess(log, 0.01).dtheta
    return {
        "commanded_s": float(log.metadata["commanded_duration_s"]),
        "realized_s": float(log.metadata["realized_motion_s"]),
        "record_s": float(log.metadata["record_duration_s"]),
        "clamp_share_percent": float(100.0 * clamped.mean()),
        "peak_speed_rad_s": float(np.abs(velocity[:, : N_AXES - 1]).max()),
        "residual_share_percent": full_model_residual_share(log) if with_residual else float("nan"),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description="The twin's recordings against the paper's numbers."
    )
    parser.add_argument("logs", nargs="*", type=Path, default=None)
    args = parser.parse_args(argv)
    logs = args.logs or sorted(RECORDINGS_DIR.glob("AG02_run*.npz")) + sorted(
        RECORDINGS_DIR.glob("V0*_run1.npz")
    )
    for path in logs:
        s = summary(raw_log.read_raw_log(path))
        print(
            f"{path.name}: commanded {s['commanded_s']:.1f} s, realized {s['realized_s']:.1f} s, record {s['record_s']:.1f} s, "
            f"clamp {s['clamp_share_percent']:.3f} %, peak speed {s['peak_speed_rad_s']:.2f} rad/s, "
            f"full-model residual {s['residual_share_percent']:.1f} % of torque RMS"
        )


if __name__ == "__main__":
    main()
