"""What the twin produces next to what the paper reports for the real arm ("calibrate honestly").

Nothing here feeds back into the twin's settings: these numbers are reported, not targeted.

``python -m crane_lib.acceptance.twin_calibration [LOG ...]`` prints, per raw log: realized against
commanded duration, record length, clamp share (|u| >= 0.98 of the axis limit, D-F), peak
joint speed, and the residual that an ordinary least-squares fit of the full 65-parameter
model leaves, as a share of the torque RMS (III-D).

The residual is the one `identification.model_classes.full_model_torque_shares` computes on the
40 ms bundle that `preprocessing` (Appendix D-C) makes of the log, as the OLS/SDP chapter does.

`calibration_record` gathers everything the chapter "The realization layer, the twin and
preprocessing" reports from the profile's recordings and the twin's Joint-7 experiments, one
record (results/realization/) that the pipeline writes and the chapter reads.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.constants import N_AXES
from crane_lib.identification.model_classes import full_model_torque_shares
from crane_lib.identification.ols import ols, stack
from crane_lib.logs import preprocessing, raw_log
from crane_lib.logs.preprocessing import preprocess
from crane_lib.model import controller
from crane_lib.model.controller import (
    K_I,
    K_P,
    K_V,
    REALIZATION_CONSTANTS_CSV,
    load_realization_constants,
)
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import RECORDINGS_DIR, RESULTS_DIR
from crane_lib.twin import dataset
from crane_lib.twin import joint_identification as ji
from crane_lib.twin.truth import TWIN_PLANT_CSV, TWIN_TRUTH_CSV

CALIBRATION_TRAJECTORY = "AG02"  # the paper's calibration numbers are AG02's
VALIDATION = ("V01", "V02", "V03")
REPRODUCED = ("AG02", 1)  # the recording whose bundles are preprocessed again
RESIDUAL_TS = 0.010  # the finest identification interval: the residual spectrum is shown on it
NATURAL_HZ = float(np.sqrt(K_P) / (2 * np.pi))
RECORD_DIR = RESULTS_DIR / "realization"


def full_model_residual_share(log, interval: float = 0.04) -> float:
    """RMS of the OLS residual of the full 65-parameter model over the RMS of the torque (%)."""
    return full_model_torque_shares(preprocess(log, interval))["residual"]


def full_model_residual(bundle) -> np.ndarray:
    """(n, 8) torque residual (N·m) of the full 65-parameter OLS fit on the bundle."""
    full = DynamicModel("full")
    regressor = full.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)
    fit = ols(*stack(regressor, bundle.tau), full.names)
    return bundle.tau - regressor @ fit.parameters.values


def residual_density(
    residual: np.ndarray, ts: float, nperseg: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided PSD (Welch, Hann) of an (n, 8) residual sampled at ts: (Hz, (N·m)²/Hz)."""
    from scipy import signal

    return signal.welch(residual, fs=1.0 / ts, nperseg=nperseg, axis=0)


def power_share_above(
    frequency_hz: np.ndarray, density: np.ndarray, cutoff_hz: float
) -> np.ndarray:
    """Per column of `density`, the share (%) of the power above cutoff_hz (DC bin excluded)."""
    band = frequency_hz > 0
    above = band & (frequency_hz > cutoff_hz)
    return 100.0 * density[above].sum(axis=0) / density[band].sum(axis=0)


@dataclass(frozen=True)
class ResidualSpectrum:
    """The full grouped model's OLS residual on one bundle and its spectrum."""

    ts: float
    residual: np.ndarray  # (n, 8) N·m
    frequency_hz: np.ndarray
    psd: np.ndarray  # (nf, 8) (N·m)²/Hz
    above_percent: np.ndarray  # (8,) share of the power above √K_P
    share_percent: float  # residual RMS over torque RMS, all axes


def residual_spectrum(bundle, nperseg: int = 1024) -> ResidualSpectrum:
    """One OLS fit of the full grouped model on the bundle, and its residual's spectrum."""
    values = full_model_residual(bundle)
    frequency, psd = residual_density(values, bundle.ts, nperseg)
    share = 100 * np.sqrt(np.mean(values**2)) / np.sqrt(np.mean(bundle.tau**2))
    return ResidualSpectrum(
        bundle.ts,
        values,
        frequency,
        psd,
        power_share_above(frequency, psd, NATURAL_HZ),
        float(share),
    )


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


@dataclass(frozen=True)
class LawReplay:
    """Controller (2) re-run on consecutive logged cycles: what it commands, per cycle and axis."""

    samples: np.ndarray  # (n,) row indices of the log
    feedforward: np.ndarray  # (n, 8) N·m, before the clamp
    feedback: np.ndarray  # (n, 8) N·m, before the clamp
    units: np.ndarray  # (n, 8) goal current, register units, rounded and clamped


def replay_law(log, first: int, cycles: int, constants=None) -> LawReplay:
    """`controller.realization_law` on the log's rows first..first+cycles-1: the references,
    encoder angles and read intervals the log holds go in; the integral state is read back once
    from the logged feedback of the row before (M̂ K_I ∫e = u_fb - M̂ (K_V ė + K_P e))."""
    c = load_realization_constants() if constants is None else constants
    e = log.theta_ref - log.theta
    before = first - 1
    feedback = log.column_group("u_feedback")[before]
    rate = c.k_v * (log.dtheta_ref[before] - log.dtheta_logged[before])
    integral = (feedback / c.m_hat - rate - c.k_p * e[before]) / c.k_i
    samples = np.arange(first, first + cycles)
    out = np.zeros((controller.OUT_ROWS, log.n_axes))
    rows = []
    for k in samples:
        controller.realization_law(
            log.theta_ref[k],
            log.dtheta_ref[k],
            log.ddtheta_ref[k],
            log.theta[k],
            log.theta[k - 1],
            float(log.t[k] - log.t[k - 1]),
            integral,
            *c.law_arguments(),
            out,
        )
        rows.append(out.copy())
    rows = np.array(rows)
    return LawReplay(
        samples,
        rows[:, controller.OUT_FEEDFORWARD],
        rows[:, controller.OUT_FEEDBACK],
        rows[:, controller.OUT_GOAL_UNITS],
    )


def recorded(profile: str) -> list:
    """The twin's executions of the profile that are recorded under results/recordings/."""
    return [e for e in dataset.executions(profile) if e.log_path().exists()]


def calibration_rows(profile: str) -> list[dict]:
    """Per recorded execution of AG02 and V01-V03: durations, clamp share, peak speed, residual."""
    rows = []
    for e in recorded(profile):
        if e.trajectory != CALIBRATION_TRAJECTORY and e.trajectory not in VALIDATION:
            continue
        log = raw_log.read_raw_log(e.log_path())
        with_residual = e.trajectory == CALIBRATION_TRAJECTORY
        rows.append({"trajectory": e.trajectory, "run": e.run, **summary(log, with_residual)})
    return rows


def realization_rows(profile: str) -> list[dict]:
    """Per recording of the profile: in-position timeouts and realized over commanded motion."""
    rows = []
    for e in recorded(profile):
        meta = dataset.stored_metadata(e.log_path()) or {}
        if "in_position_timeouts" in meta:
            ratio = float(meta["realized_motion_s"]) / float(meta["commanded_duration_s"])
            rows.append(
                {
                    "trajectory": e.trajectory,
                    "run": e.run,
                    "in_position_timeouts": int(meta["in_position_timeouts"]),
                    "realized_over_commanded": ratio,
                }
            )
    return rows


def bundle_digests(log_path: Path, reruns: int = 2) -> dict[str, list[str]]:
    """SHA-256 of every stored bundle of the log, then of `reruns` fresh preprocessings of it."""
    stored = preprocessing.cached_bundle_paths(log_path)
    preprocessing.cached_bundles(log_path)  # make sure the stored bundles exist
    digests = {repr(ts): [fingerprint.file_digest(path)] for ts, path in stored.items()}
    with tempfile.TemporaryDirectory() as scratch:
        for attempt in range(1, reruns + 1):
            bundles = preprocessing.preprocess_all(raw_log.read_raw_log(log_path))
            for ts, b in bundles.items():
                path = Path(scratch) / f"{attempt}_{ts}.npz"
                digests[repr(ts)].append(
                    fingerprint.file_digest(preprocessing.write_bundle(path, b))
                )
    return digests


def joint_seven() -> dict[str, float]:
    """Sec. III-B on the twin: model (1) fitted to Joint 7's open-loop record, the ARX pole and
    the spectrum's resonance peak."""
    record = ji.record_joint(ji.PAPER_AXIS)
    fit = ji.fit_joint_model(record)
    arx_hz, arx_damping = ji.arx_resonance(ji.fit_arx(record))
    peak_hz, peak_magnitude = ji.resonance_peak(*ji.empirical_frequency_response(record))
    at_peak = abs(ji.fopdt_frequency_response(fit.model, np.array([peak_hz]))[0])
    return {
        "gain": fit.model.gain,
        "time_constant_s": fit.model.time_constant,
        "dead_time_s": fit.model.dead_time,
        "fit_percent": fit.fit_percent,
        "samples": len(record.t),
        "period_s": record.period,
        "arx_hz": arx_hz,
        "arx_damping": arx_damping,
        "peak_hz": peak_hz,
        "peak_over_model": float(peak_magnitude / at_peak),
        "prbs_s": len(ji.prbs()) * ji.PRBS_BIT_S,
    }


def closed_loop() -> dict[str, float]:
    """The −3 dB point of Joint 7's feedback-only loop: measured on the twin, and nominal."""
    f, t = ji.closed_loop_frequency_response(ji.closed_loop_record(ji.PAPER_AXIS))
    f_nom = np.linspace(0.05, 60.0, 6000)
    t_nom = ji.nominal_closed_loop_response(
        load_realization_constants().models[ji.PAPER_AXIS - 1], f_nom, K_P, K_V, K_I
    )
    return {"measured_hz": ji.bandwidth_hz(f, t), "nominal_hz": ji.bandwidth_hz(f_nom, t_nom)}


def record_path(profile: str, directory=None) -> Path:
    """Where the profile's calibration record lies."""
    return Path(directory or RECORD_DIR) / f"calibration_{profile}.json"


def input_files(profile: str) -> list[Path]:
    """The files the record reads: the profile's recordings and the twin's settings."""
    logs = [e.log_path() for e in recorded(profile)]
    return [*logs, TWIN_PLANT_CSV, TWIN_TRUTH_CSV, REALIZATION_CONSTANTS_CSV]


def calibration_record(profile: str) -> dict:
    """Everything the chapter reports of the twin, for the profile: one JSON-ready record."""
    trajectory, run = REPRODUCED
    return {
        "profile": profile,
        "calibration": calibration_rows(profile),
        "realization": realization_rows(profile),
        "reproduced": {
            "trajectory": trajectory,
            "run": run,
            "digests": bundle_digests(dataset.Execution(trajectory, run, 0).log_path()),
        },
        "joint_seven": joint_seven(),
        "closed_loop": closed_loop(),
    }


def main(argv=None) -> None:
    """Print the calibration quantities of raw logs (AG02's and V01-V03's by default)."""
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
            f"{path.name}: commanded {s['commanded_s']:.1f} s, realized {s['realized_s']:.1f} s, "
            f"record {s['record_s']:.1f} s, clamp {s['clamp_share_percent']:.3f} %, "
            f"peak speed {s['peak_speed_rad_s']:.2f} rad/s, "
            f"full-model residual {s['residual_share_percent']:.1f} % of torque RMS"
        )


if __name__ == "__main__":
    main()
