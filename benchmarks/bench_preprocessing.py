"""Preprocessing speed: one 128 s raw log to all five bundles (issue target: at most 2 s).

Run from the repository root: `.venv/bin/python benchmarks/bench_preprocessing.py`.

It builds a synthetic 128 s log (the length of AG02's record, D-C) with 1 ms stamps jittered by
±0.3 ms and every one of the 106 columns filled, then times, best of `--repeats`:
- preprocess_all on the log in memory (the figure the target is about);
- two references measured in the same run, so the ratios do not depend on the machine:
  reading the same log from '.npz', and a naive pipeline that resamples each of the 16
  channels separately with scipy.signal.resample (FFT) to every interval;
- reading the log from text ('.csv') and from '.npz', and writing the five bundle files;
- zero_phase_filter on a block of CLIE's DIDIM Jacobian's shape (a 118 s record on the 5 ms
  grid, 312 channels) against its reference measured in the same run, scipy.signal.filtfilt of
  each section on the channels one at a time (what it ran before), the two outputs compared bit
  for bit.

`--smoke`: a 5 s log, one repeat, a 2,000-sample filter block.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.signal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crane_lib.logs import preprocessing as pp  # noqa: E402
from crane_lib.logs.raw_log import group, read_raw_log, write_raw_log  # noqa: E402
from tests.synthetic_log import synthetic_samples  # noqa: E402

RECORD_S = 128.0
SMOKE_RECORD_S = 5.0
TARGET_S = 2.0


def realistic_log(seed: int = 1, duration_s: float = RECORD_S) -> np.ndarray:
    """The synthetic log with the columns preprocessing does not read filled as a recorder would."""
    samples, _ = synthetic_samples(duration_s=duration_s, seed=seed)
    rng = np.random.default_rng(seed)
    n = samples.shape[0]
    for name in ("dtheta", "position_error", "u_feedforward", "u_feedback", "current_present"):
        samples[:, group(name)] = rng.normal(0.0, 0.3, (n, 8))
    samples[:, group("position_ticks")] = rng.integers(0, 4096, (n, 8))
    samples[:, group("goal_current_units")] = rng.integers(-1193, 1194, (n, 8))
    return samples


def best_of(repeats: int, action):
    """The shortest of `repeats` timings of `action()` (s) and its last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return min(times), result


def naive_resample(log, intervals):
    """Reference: scipy.signal.resample (FFT) per channel per interval, after interpolation."""
    t_grid = (
        log.t[0] + np.arange(int((log.t[-1] - log.t[0]) / pp.GRID_PERIOD_S) + 1) * pp.GRID_PERIOD_S
    )
    channels = np.hstack([log.theta, log.torque_logged])
    out = {}
    for ts in intervals:
        n_target = int(round(t_grid.size / pp.grid_step(ts)))
        out[ts] = [
            scipy.signal.resample(np.interp(t_grid, log.t, channels[:, c]), n_target)
            for c in range(channels.shape[1])
        ]
    return out


def scipy_zero_phase(sections, x):
    """Reference: scipy.signal.filtfilt of each section, each channel contiguous (as before)."""
    y = np.ascontiguousarray(np.asarray(x, dtype=float).T)
    for section in sections:
        y = scipy.signal.filtfilt(
            section[:3], section[3:], y, axis=-1, padtype="odd", padlen=pp.FILTFILT_PAD_SAMPLES
        )
    return y.T


def main(argv=None) -> int:
    """Time the zero-phase filter against scipy's filtfilt and print the ratio."""
    from benchmarks._smoke import add_smoke_argument

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    record_s = SMOKE_RECORD_S if args.smoke else RECORD_S
    if args.smoke:
        args.repeats = 1

    samples = realistic_log(duration_s=record_s)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        npz_path = write_raw_log(folder / "log.npz", samples)
        csv_path = write_raw_log(folder / "log.csv", samples)
        read_npz_s, log = best_of(args.repeats, lambda: read_raw_log(npz_path))
        read_csv_s, _ = best_of(max(1, args.repeats - 1), lambda: read_raw_log(csv_path))
        preprocess_s, bundles = best_of(args.repeats, lambda: pp.preprocess_all(log))
        naive_s, _ = best_of(1, lambda: naive_resample(log, pp.INTERVALS_S))
        write_s, _ = best_of(
            args.repeats,
            lambda: [
                pp.write_bundle(folder / pp.bundle_filename(ts), b) for ts, b in bundles.items()
            ],
        )
        sizes = (csv_path.stat().st_size / 1e6, npz_path.stat().st_size / 1e6)
    block = np.random.default_rng(2).normal(size=(2_000 if args.smoke else 23_600, 312))
    sections = pp.antialias_sections(0.04)
    pp.zero_phase_filter(sections, block[:50])  # compile or load numba's cache
    filter_s, filtered = best_of(args.repeats, lambda: pp.zero_phase_filter(sections, block))
    scipy_s, expected = best_of(args.repeats, lambda: scipy_zero_phase(sections, block))

    print(
        f"raw log: {samples.shape[0]} samples x {samples.shape[1]} columns ({record_s:g} s); text "
        f"{sizes[0]:.0f} MB, npz {sizes[1]:.0f} MB"
    )
    print(
        f"preprocess_all, 5 intervals      {preprocess_s:7.3f} s   (target <= {TARGET_S:g} s: "
        f"{'met' if preprocess_s <= TARGET_S else 'MISSED'})"
    )
    print(
        f"  reference: read .npz log       {read_npz_s:7.3f} s   ratio preprocess / read = "
        f"{preprocess_s / read_npz_s:.2f}"
    )
    print(
        f"  reference: naive FFT resample  {naive_s:7.3f} s   ratio preprocess / naive = "
        f"{preprocess_s / naive_s:.2f}"
    )
    print(
        f"read .csv log                    {read_csv_s:7.3f} s   ratio csv / npz = "
        f"{read_csv_s / read_npz_s:.1f}"
    )
    print(f"write 5 bundle files             {write_s:7.3f} s")
    same = "identical" if np.array_equal(filtered, expected) else "DIFFERENT"
    print(
        f"zero_phase_filter {block.shape[0]} x {block.shape[1]}  {filter_s:7.3f} s   "
        f"reference scipy filtfilt per channel {scipy_s:.3f} s: {scipy_s / filter_s:.1f}x "
        f"faster, outputs {same} bit for bit"
    )
    print(
        "bundle samples: "
        + ", ".join(f"{b.interval_ms} ms: {b.n_samples}" for b in bundles.values())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
