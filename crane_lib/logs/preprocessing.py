"""Preprocessing (paper Appendix D-C): a raw log becomes one bundle per sampling interval.

The routine, in the order D-C gives it:
1. even grid: angles (pi offset removed) and torque commands (current x Kt, per axis) are
   linearly interpolated over the uneven stamps onto an even 1 ms grid anchored at the first
   stamp, t_k = t_0 + k * 1 ms, ending at the last grid point not after the last stamp;
2. anti-alias filter: for a target interval ts, a fourth-order Butterworth low-pass with its
   corner at 0.45 x the Nyquist frequency of ts (0.45 / (2 ts)), run zero-phase on the 1 ms
   grid the way MATLAB's filtfilt runs a second-order-section filter (each section forward and
   backward with odd reflection padding of 3 x order samples). Angles and torques alike. The
   1 ms bundle is filtered too (corner 225 Hz): D-C lists 1 ms among the filtered intervals;
3. target grid: only every (ts / 1 ms)-th grid sample is kept, starting at t_0;
4. differences: joint velocity and acceleration are central differences of the filtered angles
   on the target grid, (θ[m+1] − θ[m−1]) / (2 ts) and (θ[m+1] − 2θ[m] + θ[m−1]) / ts². The first
   and last target samples, which have no central difference, are dropped (they lie in the
   idle samples at both ends of every recording).
Carried alongside, not filtered (they are the commands the controller executed, not
measurements): the reference θref, θ̇ref, θ̈ref by linear interpolation, and the segment
index by the last stamp at or before each grid time. The clamp mask follows D-F: a raw sample
is clamped where any axis has |u| >= 0.98 of its limit; it marks the target sample whose
window [t_m − ts/2, t_m + ts/2) holds it, and the mask is dilated by one window on each side.
Every choice is argued in `book/register_preprocessing.md`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
import scipy.signal

from crane_lib import arithmetic, constants, fingerprint
from crane_lib.constants import CLAMP_THRESHOLD_FRACTION, CONTROL_PERIOD_S
from crane_lib.errors import InputError
from crane_lib.logs import npz_io, raw_log
from crane_lib.logs.raw_log import RawLog, read_raw_log
from crane_lib.paper_numbers import paper
from crane_lib.paths import RESULTS_DIR

GRID_PERIOD_S = CONTROL_PERIOD_S  # the even grid of step 1: the nominal 1 ms logging period
INTERVALS_S = (0.001, 0.010, 0.020, 0.040, 0.080)  # D-C: bundles at 1, 10, 20, 40, 80 ms
FILTER_ORDER = int(paper("antialias_filter_order").value)
CORNER_FRACTION_OF_NYQUIST = paper("antialias_corner_fraction").value
# MATLAB filtfilt on a second-order-section filter pads each section by 3 x the filter order
FILTFILT_PAD_SAMPLES = 3 * FILTER_ORDER
CLAMP_DILATION_WINDOWS = int(paper("clamp_mask_dilation").value)
BUNDLE_DIR = RESULTS_DIR / "bundles"
BUNDLE_FORMAT = "crane-x7-bundle-1"


# --------------------------------------------------------------------------------------------
# the bundle


@dataclass
class Bundle:
    """One preprocessed record at one sampling interval; SI units, radians; (n, n_axes) per axis."""

    ts: float  # target sampling interval (s)
    t: np.ndarray  # (n,) log time of each target sample (s)
    theta: np.ndarray  # filtered joint angles (rad)
    dtheta: np.ndarray  # central-difference velocities (rad/s)
    ddtheta: np.ndarray  # central-difference accelerations (rad/s^2)
    tau: np.ndarray  # filtered torque record, current x Kt (N·m)
    clamp_mask: np.ndarray  # (n,) bool: excluded because some axis reached its clamp nearby (D-F)
    clamp_axes: np.ndarray  # (n, n_axes) bool: axes at the clamp within the sample's own window
    theta_ref: np.ndarray  # reference the controller executed (rad), interpolated, not filtered
    dtheta_ref: np.ndarray
    ddtheta_ref: np.ndarray
    segment: np.ndarray  # (n,) int: command-file segment, -1 while idle
    provenance: dict[str, str] = field(default_factory=dict)

    ARRAY_FIELDS = (
        "t",
        "theta",
        "dtheta",
        "ddtheta",
        "tau",
        "clamp_mask",
        "clamp_axes",
        "theta_ref",
        "dtheta_ref",
        "ddtheta_ref",
        "segment",
    )

    @property
    def n_samples(self) -> int:
        """The number of samples."""
        return self.t.shape[0]

    @property
    def interval_ms(self) -> int:
        """The sampling interval (ms)."""
        return int(round(self.ts * 1e3))


# --------------------------------------------------------------------------------------------
# the stages


@dataclass
class EvenGrid:
    """Step 1: everything needed from the raw log, on the even 1 ms grid."""

    t: np.ndarray  # (K,) grid times t_0 + k * 1 ms
    theta: np.ndarray  # (K, n_axes) interpolated angles
    tau: np.ndarray  # (K, n_axes) interpolated torque record
    theta_ref: np.ndarray
    dtheta_ref: np.ndarray
    ddtheta_ref: np.ndarray
    segment: np.ndarray  # (K,) int, zero-order hold
    clamp_stamps: np.ndarray  # raw stamps at which some axis reached its clamp
    clamp_axes_at_stamps: np.ndarray  # (c, n_axes) bool: which axes, at those stamps
    provenance: dict[str, str]
    source: str  # the raw log's file name, for error messages only (not stored in bundles)


def _interpolate_columns(t_grid: np.ndarray, t_raw: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.column_stack(
        [np.interp(t_grid, t_raw, values[:, axis]) for axis in range(values.shape[1])]
    )


def to_even_grid(log: RawLog) -> EvenGrid:
    """The raw log interpolated onto the even 1 ms grid."""
    t_raw = log.t
    if t_raw.size < 2:
        raise InputError(
            str(log.path), f"{t_raw.size} sample(s)", "a record of at least two samples"
        )
    n_grid = int(np.floor((t_raw[-1] - t_raw[0]) / GRID_PERIOD_S + 1e-9)) + 1
    if (
        n_grid <= FILTFILT_PAD_SAMPLES
    ):  # the zero-phase filter pads each end by that many grid samples
        raise InputError(
            str(log.path),
            f"a record of {(t_raw[-1] - t_raw[0]) * 1e3:.3g} ms ({t_raw.size} samples)",
            f"at least {(FILTFILT_PAD_SAMPLES + 1) * GRID_PERIOD_S * 1e3:g} ms of record for the "
            "anti-alias filter",
        )
    t_grid = (
        t_raw[0] + np.arange(n_grid) * GRID_PERIOD_S
    )  # one product per point: no accumulated drift
    torque = log.torque_logged
    reached = np.abs(torque) >= CLAMP_THRESHOLD_FRACTION * log.layout.clamp_torque  # the log's arm
    clamped_rows = reached.any(axis=1)
    provenance = {
        "format": BUNDLE_FORMAT,
        "raw_samples_sha256": fingerprint.array_digest(log.samples),
        "raw_samples": str(log.n_samples),
        "raw_repairs": " | ".join(log.repairs) if log.repairs else "none",
    }
    provenance.update({f"log.{key}": value for key, value in log.metadata.items()})
    return EvenGrid(
        t=t_grid,
        theta=_interpolate_columns(t_grid, t_raw, log.theta),
        tau=_interpolate_columns(t_grid, t_raw, torque),
        theta_ref=_interpolate_columns(t_grid, t_raw, log.theta_ref),
        dtheta_ref=_interpolate_columns(t_grid, t_raw, log.dtheta_ref),
        ddtheta_ref=_interpolate_columns(t_grid, t_raw, log.ddtheta_ref),
        segment=log.segment[np.searchsorted(t_raw, t_grid, side="right") - 1],
        clamp_stamps=t_raw[clamped_rows],
        clamp_axes_at_stamps=reached[clamped_rows],
        provenance=provenance,
        source=str(log.path) if log.path else "raw log",
    )


def grid_step(ts: float) -> int:
    """Target interval in 1 ms grid samples; ts must be a whole number of milliseconds."""
    step = int(round(ts / GRID_PERIOD_S))
    if step < 1 or abs(step * GRID_PERIOD_S - ts) > 1e-9:
        raise ValueError(
            f"sampling interval {ts!r} s is not a whole multiple of the {GRID_PERIOD_S} s grid"
        )
    return step


def antialias_sections(ts: float) -> np.ndarray:
    """Second-order sections of the Butterworth low-pass for target interval ts, on the 1 ms grid.

    Corner 0.45 x (1 / (2 ts)) Hz; normalized to the grid's Nyquist frequency that is 0.45 / step.
    """
    corner_normalized = CORNER_FRACTION_OF_NYQUIST / grid_step(ts)
    return scipy.signal.butter(FILTER_ORDER, corner_normalized, btype="low", output="sos")


def corner_frequency_hz(ts: float) -> float:
    """The anti-aliasing filter's corner frequency (Hz) for interval `ts` (s)."""
    return CORNER_FRACTION_OF_NYQUIST / (2.0 * ts)


def zero_phase_filter(sections: np.ndarray, x: np.ndarray) -> np.ndarray:
    """MATLAB filtfilt for an SOS filter: each section forward and backward in turn, along axis 0.

    Odd reflection padding of 3 x order samples at both ends and steady-state initial
    conditions, as MATLAB does. In the interior this equals scipy's sosfiltfilt; only the
    edge transients differ. Each section is scipy.signal.filtfilt(b, a, column, padtype="odd",
    padlen=12) of every column, bit for bit (`_filtfilt_columns`).
    """
    y = np.ascontiguousarray(np.asarray(x, dtype=float))
    if y.shape[0] <= FILTFILT_PAD_SAMPLES:  # scipy's own refusal, word for word
        raise ValueError(
            "The length of the input vector x must be greater than padlen, "
            f"which is {FILTFILT_PAD_SAMPLES}."
        )
    squeeze = y.ndim == 1
    y = y.reshape(y.shape[0], -1)
    for section in sections:
        b, a = section[:3], section[3:]
        out = np.empty_like(y)
        _filtfilt_columns(
            y, b / a[0], a / a[0], scipy.signal.lfilter_zi(b, a), FILTFILT_PAD_SAMPLES, out
        )
        y = out
    return y[:, 0] if squeeze else y


@numba.njit(cache=True)
def _filtfilt_columns(x, b, a, zi, pad, out):
    """scipy.signal.filtfilt of one second-order section (b, a normalized by a[0]) along axis 0
    of x (n, m) into out: odd extension by `pad`, lfilter's transposed direct form II forward
    from zi x ext[0], backward from zi x y[-1], the padding cut. Each column sees scipy's
    operations in scipy's order, so the result is the same bit for bit; the columns' recurrences
    run side by side (scipy runs one column at a time: 3 to 10 times slower). Plain loops only:
    slice assignments made numba's compile three times longer."""
    n, m = x.shape
    length = n + 2 * pad
    ext = np.empty((length, m))
    for k in range(pad):
        for c in range(m):
            ext[k, c] = 2.0 * x[0, c] - x[pad - k, c]
            ext[pad + n + k, c] = 2.0 * x[n - 1, c] - x[n - 2 - k, c]
    for k in range(n):
        for c in range(m):
            ext[pad + k, c] = x[k, c]
    z0, z1 = np.empty(m), np.empty(m)
    _section_pass(ext, b, a, zi, False, z0, z1)
    _section_pass(ext, b, a, zi, True, z0, z1)
    for k in range(n):
        for c in range(m):
            out[k, c] = ext[pad + k, c]


@numba.njit(cache=True)
def _section_pass(ext, b, a, zi, backward, z0, z1):
    """lfilter of every column of ext in place, forward or backward, from zi x its first sample."""
    length, m = ext.shape
    b0, b1, b2, a1, a2 = b[0], b[1], b[2], a[1], a[2]
    edge = length - 1 if backward else 0
    for c in range(m):
        z0[c] = zi[0] * ext[edge, c]
        z1[c] = zi[1] * ext[edge, c]
    for i in range(length):
        k = length - 1 - i if backward else i
        for c in range(m):
            xk = ext[k, c]
            yk = z0[c] + b0 * xk
            z0[c] = z1[c] + xk * b1 - yk * a1
            z1[c] = xk * b2 - yk * a2
            ext[k, c] = yk


def central_differences(theta: np.ndarray, ts: float) -> tuple[np.ndarray, np.ndarray]:
    """Velocity and acceleration at the interior samples 1..n-2 of an evenly sampled angle
    record."""
    velocity = (theta[2:] - theta[:-2]) / (2.0 * ts)
    acceleration = (theta[2:] - 2.0 * theta[1:-1] + theta[:-2]) / ts**2
    return velocity, acceleration


def clamp_masks(
    grid: EvenGrid, target_times: np.ndarray, ts: float
) -> tuple[np.ndarray, np.ndarray]:
    """(any-axis mask dilated by one window each side, per-axis undilated) on the target samples."""
    n = target_times.size
    per_axis = np.zeros((n, grid.theta.shape[1]), dtype=bool)
    if grid.clamp_stamps.size:
        # window of target sample m: [t_m - ts/2, t_m + ts/2)
        index = np.floor((grid.clamp_stamps - target_times[0]) / ts + 0.5).astype(np.int64)
        inside = (index >= 0) & (index < n)
        np.logical_or.at(per_axis, index[inside], grid.clamp_axes_at_stamps[inside])
    mask = per_axis.any(axis=1)
    dilated = mask.copy()
    for shift in range(1, CLAMP_DILATION_WINDOWS + 1):
        dilated[shift:] |= mask[:-shift]
        dilated[:-shift] |= mask[shift:]
    return dilated, per_axis


def bundle_from_grid(grid: EvenGrid, ts: float) -> Bundle:
    """Filter, decimate and difference the even grid into a bundle at interval `ts` (s)."""
    step = grid_step(ts)
    sections = antialias_sections(ts)
    filtered = zero_phase_filter(sections, np.hstack([grid.theta, grid.tau]))
    keep = np.arange(0, grid.t.size, step)  # target grid: t_0, t_0 + ts, ...
    if keep.size < 3:
        raise InputError(
            grid.source,
            f"only {keep.size} target samples at {ts * 1e3:g} ms",
            "a record long enough for central differences (three target samples)",
        )
    n_axes = grid.theta.shape[1]  # the log's arm
    theta_target = filtered[keep, :n_axes]
    tau_target = filtered[keep, n_axes:]
    dtheta, ddtheta = central_differences(theta_target, ts)
    interior = keep[1:-1]
    clamp_mask, clamp_axes = clamp_masks(grid, grid.t[keep], ts)
    provenance = dict(grid.provenance)
    provenance.update(
        {
            "interval_s": repr(float(ts)),
            "grid_period_s": repr(GRID_PERIOD_S),
            "grid_anchor": "first stamp",
            "filter": f"Butterworth order {FILTER_ORDER}, corner {corner_frequency_hz(ts)!r} Hz, "
            "zero-phase per section, "
            f"odd padding {FILTFILT_PAD_SAMPLES}",
            "differences": "central, interior target samples",
            "clamp_mask": f"any axis |u| >= {CLAMP_THRESHOLD_FRACTION} x limit, dilated by "
            f"{CLAMP_DILATION_WINDOWS} window",
        }
    )
    return Bundle(
        ts=float(ts),
        t=grid.t[interior],
        theta=theta_target[1:-1],
        dtheta=dtheta,
        ddtheta=ddtheta,
        tau=tau_target[1:-1],
        clamp_mask=clamp_mask[1:-1],
        clamp_axes=clamp_axes[1:-1],
        theta_ref=grid.theta_ref[interior],
        dtheta_ref=grid.dtheta_ref[interior],
        ddtheta_ref=grid.ddtheta_ref[interior],
        segment=grid.segment[interior],
        provenance=provenance,
    )


def preprocess(log: RawLog, ts: float) -> Bundle:
    """One bundle at interval ts (s) from a raw log."""
    return bundle_from_grid(to_even_grid(log), ts)


def preprocess_all(log: RawLog, intervals=INTERVALS_S) -> dict[float, Bundle]:
    """Bundles at every interval, sharing the even grid; keyed by interval (s)."""
    grid = to_even_grid(log)
    return {float(ts): bundle_from_grid(grid, ts) for ts in intervals}


# --------------------------------------------------------------------------------------------
# bundle files


def _provenance_text(provenance: dict[str, str]) -> str:
    return "\n".join(
        f"{key}: {str(value).replace(chr(10), ' ')}" for key, value in provenance.items()
    )


def bundle_arrays(bundle: Bundle) -> dict[str, np.ndarray]:
    """The arrays of a bundle file, in file order."""
    arrays = {"ts": np.array(bundle.ts, dtype=np.float64)}
    for name in Bundle.ARRAY_FIELDS:
        value = getattr(bundle, name)
        arrays[name] = np.asarray(
            value,
            dtype=bool
            if name.startswith("clamp")
            else np.int64
            if name == "segment"
            else np.float64,
        )
    arrays["provenance"] = np.array(_provenance_text(bundle.provenance))
    return arrays


def write_bundle(path, bundle: Bundle) -> Path:
    """Write a bundle atomically as a deterministic .npz (the same bundle gives the same bytes)."""
    return npz_io.write_npz(
        path, bundle_arrays(bundle), compress=False
    )  # filtered floats barely compress


def read_bundle(path) -> Bundle:
    """Read a bundle file, refusing one with missing fields."""
    path = Path(path)
    arrays = npz_io.read_npz(path)
    missing = [name for name in ("ts", "provenance", *Bundle.ARRAY_FIELDS) if name not in arrays]
    if missing:
        raise InputError(str(path), f"missing arrays {missing}", "a bundle written by write_bundle")
    provenance = {}
    for line in str(arrays["provenance"]).splitlines():
        key, _, value = line.partition(": ")
        provenance[key] = value
    n = arrays["t"].shape[0]
    for name in Bundle.ARRAY_FIELDS:
        if arrays[name].shape[0] != n:
            raise InputError(
                str(path),
                f"array {name!r} has {arrays[name].shape[0]} rows, 't' has {n}",
                "equal lengths",
            )
    return Bundle(
        ts=float(arrays["ts"]),
        provenance=provenance,
        **{name: arrays[name] for name in Bundle.ARRAY_FIELDS},
    )


def bundle_filename(ts: float) -> str:
    """The bundle file's name for interval `ts` (s): bundle_040ms.npz."""
    return f"bundle_{grid_step(ts) * int(round(GRID_PERIOD_S * 1e3)):03d}ms.npz"


# --------------------------------------------------------------------------------------------
# cache: bundles are computed once per raw log file and preprocessing source


def source_digest() -> str:
    """Digest of the code and settings that decide a bundle's content."""
    settings = (
        FILTER_ORDER,
        CORNER_FRACTION_OF_NYQUIST,
        CLAMP_DILATION_WINDOWS,
        CLAMP_THRESHOLD_FRACTION,
        GRID_PERIOD_S,
    )
    return fingerprint.digest(
        fingerprint.source_digest(
            __file__, raw_log, npz_io, constants, raw_log.RAW_LOG_COLUMNS_CSV
        ),
        repr(settings),
        length=64,
    )


def cache_key(log_path, repair: bool = False) -> str:
    """What decides a log's bundles: its bytes, the code and settings, the repair flag and the
    floating-point kernels (crane_lib.arithmetic)."""
    return fingerprint.digest(
        fingerprint.file_digest(log_path),
        source_digest(),
        f"repair={bool(repair)}",
        arithmetic.signature(),
        length=20,
    )


def cached_bundle_paths(
    log_path, intervals=INTERVALS_S, repair: bool = False, cache_dir=None
) -> dict[float, Path]:
    """Where `cached_bundles` stores the bundles of a raw log file, keyed by interval (s)."""
    log_path = Path(log_path)
    folder = (
        Path(cache_dir or BUNDLE_DIR)
        / f"{log_path.name.split('.')[0]}-{cache_key(log_path, repair)}"
    )
    return {float(ts): folder / bundle_filename(ts) for ts in intervals}


def cached_bundles(
    log_path, intervals=INTERVALS_S, repair: bool = False, cache_dir=None
) -> dict[float, Bundle]:
    """Bundles of a raw log file, read from the cache when present, otherwise computed and stored.

    The cache folder is named by the log's stem and a hash of the log file's bytes, the
    preprocessing sources and the repair flag, so a changed log or changed code never reads a
    stale bundle. Each file is written atomically.
    """
    log_path = Path(log_path)
    paths = cached_bundle_paths(log_path, intervals, repair, cache_dir)
    if all(path.is_file() for path in paths.values()):
        return {ts: read_bundle(path) for ts, path in paths.items()}
    bundles = preprocess_all(read_raw_log(log_path, repair=repair), intervals)
    for ts, bundle in bundles.items():
        write_bundle(paths[ts], bundle)
    return bundles
