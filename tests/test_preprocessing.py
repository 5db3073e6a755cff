"""Preprocessing (D-C) against analytic signals: every stage's effect is predicted in closed form.

A sinusoid A sin(ωt) passes the stages with known gains:
- the zero-phase Butterworth multiplies it by |H(f)|² = 1 / (1 + (tan(πf/fs) / tan(πfc/fs))^8)
  (bilinear-transform Butterworth of order 4, squared by the forward-backward pass);
- the central difference for θ̇ multiplies the true velocity by sin(ωts) / (ωts), and the
  second difference multiplies the true acceleration by 2 (1 − cos ωts) / (ωts)².
With even stamps the interpolation is exact, so the bundle must equal that prediction to
rounding. With uneven stamps linear interpolation adds an error of at most h²/8 · max|θ''|
per sample (h the largest stamp step); the filter can grow a bounded error at most by the
ℓ1 norm of its impulse response, and the differences by 1/ts (velocity) and 4/ts²
(acceleration). That bound is the tolerance; it is computed, not chosen.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

from crane_lib.constants import CLAMP_TORQUE, CONTROL_PERIOD_S, KT, N_AXES
from crane_lib.logs import preprocessing as pp
from crane_lib.logs.raw_log import RawLog, group, read_raw_log, write_raw_log
from crane_lib.paper_numbers import paper

from .synthetic_log import synthetic_samples

INTERVALS = pp.INTERVALS_S
GRID_RATE_HZ = 1.0 / CONTROL_PERIOD_S


def zero_phase_gain(frequency_hz, ts):
    """|H|² of the order-4 digital Butterworth with corner 0.45 x Nyquist(ts), on the 1 ms grid."""
    corner = paper("antialias_corner_fraction").value / (2.0 * ts)
    order = int(paper("antialias_filter_order").value)
    ratio = np.tan(np.pi * np.asarray(frequency_hz) / GRID_RATE_HZ) / np.tan(
        np.pi * corner / GRID_RATE_HZ
    )
    return 1.0 / (1.0 + ratio ** (2 * order))


def edge_margin_s(ts, decay=1e-12):
    """Time for the slowest pole of the filter to decay to `decay`: edge transients are gone after
    it."""
    poles = np.concatenate([np.roots(section[3:]) for section in pp.antialias_sections(ts)])
    samples = np.log(decay) / np.log(np.abs(poles).max())
    return samples / GRID_RATE_HZ


def impulse_l1_norm(ts):
    """ℓ1 norm of the forward-backward impulse response: the largest sup-norm gain of the filter."""
    impulse = np.zeros(40001)
    impulse[20000] = 1.0
    sections = pp.antialias_sections(ts)
    forward = scipy.signal.sosfilt(sections, impulse)
    both = scipy.signal.sosfilt(sections, forward[::-1])[::-1]
    return np.abs(both).sum()


def predicted(truth, t, ts):
    """The bundle's θ, θ̇, θ̈ and τ as the closed-form stage gains predict them."""
    omega = 2 * np.pi * truth.angle_hz
    gain = zero_phase_gain(truth.angle_hz, ts)
    theta = truth.offset + gain * (truth.theta(t) - truth.offset)
    dtheta = gain * np.sin(omega * ts) / (omega * ts) * truth.dtheta(t)
    ddtheta = gain * 2 * (1 - np.cos(omega * ts)) / (omega * ts) ** 2 * truth.ddtheta(t)
    tau = zero_phase_gain(truth.torque_hz, ts) * truth.tau(t)
    return theta, dtheta, ddtheta, tau


def interior(bundle, ts):
    margin = edge_margin_s(ts)
    return (bundle.t > bundle.t[0] + margin) & (bundle.t < bundle.t[-1] - margin)


@pytest.fixture(scope="module")
def even_log():
    duration = (
        16.0  # the 80 ms filter's edge transients need 4.2 s to fall to 1e-12 (edge_margin_s)
    )
    t = np.arange(int(duration / CONTROL_PERIOD_S) + 1) * CONTROL_PERIOD_S
    samples, truth = synthetic_samples(t=t, seed=5)
    return RawLog(samples), truth


@pytest.fixture(scope="module")
def uneven_log():
    samples, truth = synthetic_samples(duration_s=16.0, seed=9, jitter_s=0.3e-3)
    return RawLog(samples), truth


# ------------------------------------------------------------------------------------------
# the signal chain


@pytest.mark.parametrize("ts", INTERVALS)
def test_even_stamps_match_the_closed_form_prediction(even_log, ts):
    log, truth = even_log
    bundle = pp.preprocess(log, ts)
    keep = interior(bundle, ts)
    assert keep.sum() > 10
    for name, expected in zip(
        ("theta", "dtheta", "ddtheta", "tau"), predicted(truth, bundle.t, ts)
    ):
        # rounding only (edge transients have decayed to 1e-12 of their size): relative 1e-9
        scale = np.abs(expected).max() + 1e-3
        error = np.abs(getattr(bundle, name) - expected)[keep].max()
        assert error <= 1e-9 * scale, (name, error, scale)


@pytest.mark.parametrize("ts", INTERVALS)
def test_uneven_stamps_stay_within_the_interpolation_bound(uneven_log, ts):
    log, truth = uneven_log
    bundle = pp.preprocess(log, ts)
    keep = interior(bundle, ts)
    largest_step = np.diff(log.t).max()
    interpolation = (
        largest_step**2 / 8 * truth.amplitude * (2 * np.pi * truth.angle_hz) ** 2
    )  # per axis
    bound = impulse_l1_norm(ts) * interpolation
    theta, dtheta, ddtheta, _ = predicted(truth, bundle.t, ts)
    assert np.all(np.abs(bundle.theta - theta)[keep].max(axis=0) <= bound)
    assert np.all(np.abs(bundle.dtheta - dtheta)[keep].max(axis=0) <= bound / ts)
    if ts >= 0.010:  # at 1 ms the bound 4/ts² x error is as large as the acceleration itself
        assert np.all(np.abs(bundle.ddtheta - ddtheta)[keep].max(axis=0) <= 4 * bound / ts**2)
        # and the bound is meaningful: within 5 % of the acceleration on every axis in the passband
        passband = zero_phase_gain(truth.angle_hz, ts) > 0.5
        assert np.all((4 * bound / ts**2 < 0.05 * np.abs(ddtheta).max(axis=0))[passband])


@pytest.mark.parametrize("ts", INTERVALS)
def test_filter_corner_is_045_of_the_target_nyquist(ts):
    nyquist = 1.0 / (2.0 * ts)
    corner = paper("antialias_corner_fraction").value * nyquist
    assert pp.corner_frequency_hz(ts) == pytest.approx(corner, rel=1e-12)
    # the designed (single-pass) filter is 3.01 dB down at the corner
    _, response = scipy.signal.sosfreqz(pp.antialias_sections(ts), worN=[corner], fs=GRID_RATE_HZ)
    assert 20 * np.log10(np.abs(response[0])) == pytest.approx(-3.0103, abs=1e-3)
    # the zero-phase pass squares it: a sinusoid at the corner leaves with half its amplitude
    duration = max(12.0, 40 / corner)
    t = np.arange(int(duration / CONTROL_PERIOD_S) + 1) * CONTROL_PERIOD_S
    samples, _ = synthetic_samples(t=t, angle_hz=np.full(N_AXES, corner), amplitude=np.ones(N_AXES))
    bundle = pp.preprocess(RawLog(samples), ts)
    keep = interior(bundle, ts)
    basis = np.column_stack(
        [
            np.sin(2 * np.pi * corner * bundle.t),
            np.cos(2 * np.pi * corner * bundle.t),
            np.ones(bundle.n_samples),
        ]
    )
    coefficients, *_ = np.linalg.lstsq(basis[keep], bundle.theta[keep], rcond=None)
    amplitude = np.hypot(coefficients[0], coefficients[1])
    np.testing.assert_allclose(amplitude, 0.5, rtol=1e-6)


@pytest.mark.parametrize("ts", (0.010, 0.080))
def test_section_wise_filtfilt_equals_scipy_in_the_interior(uneven_log, ts):
    log, _ = uneven_log
    grid = pp.to_even_grid(log)
    sections = pp.antialias_sections(ts)
    ours = pp.zero_phase_filter(sections, grid.theta)
    scipys = scipy.signal.sosfiltfilt(sections, grid.theta, axis=0)
    margin = int(edge_margin_s(ts) * GRID_RATE_HZ)
    np.testing.assert_allclose(ours[margin:-margin], scipys[margin:-margin], rtol=0, atol=1e-9)


def matlab_filtfilt_sections(sections, x, pad):
    """MATLAB's filtfilt for an SOS filter, transcribed step by step (ffOneChanCat), for one
    column."""
    y = x
    for section in sections:
        b, a = section[:3], section[3:]
        y = np.concatenate([2 * y[0] - y[pad:0:-1], y, 2 * y[-1] - y[-2 : -pad - 2 : -1]])
        zi = scipy.signal.lfilter_zi(b, a)
        y = scipy.signal.lfilter(b, a, y, zi=zi * y[0])[0][::-1]
        y = scipy.signal.lfilter(b, a, y, zi=zi * y[0])[0][::-1]
        y = y[pad:-pad]
    return y


@pytest.mark.parametrize("ts", (0.001, 0.040))
def test_edges_follow_matlab_filtfilt(uneven_log, ts):
    log, _ = uneven_log
    grid = pp.to_even_grid(log)
    column = grid.tau[:, 3]
    pad = 3 * int(
        paper("antialias_filter_order").value
    )  # MATLAB: nfact = 3 x filter order for SOS input
    expected = matlab_filtfilt_sections(pp.antialias_sections(ts), column, pad)
    ours = pp.zero_phase_filter(pp.antialias_sections(ts), column[:, None])[:, 0]
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)  # edges included


def test_constant_signals_pass_unchanged_to_the_edges():
    t = np.arange(3001) * CONTROL_PERIOD_S
    samples, _ = synthetic_samples(t=t, amplitude=np.zeros(N_AXES))  # angles at their offsets only
    samples[:, group("current_command")] = 1.0  # one ampere on every axis
    log = RawLog(samples)
    for ts, bundle in pp.preprocess_all(log).items():
        np.testing.assert_allclose(
            bundle.theta, np.broadcast_to(log.theta[0], bundle.theta.shape), rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(bundle.dtheta, 0.0, atol=1e-9 / ts)
        # torque = current x Kt per axis, axis 2 with the XM540 constant
        # (rtol 1e-9: rounding in the recursion of the narrowest filter, poles at |p| = 0.98)
        np.testing.assert_allclose(bundle.tau, np.broadcast_to(KT, bundle.tau.shape), rtol=1e-9)
        assert bundle.tau[0, 1] == pytest.approx(paper("kt_effective_xm540").value, abs=5e-5)
        assert bundle.tau[0, 0] == pytest.approx(paper("kt_effective_xm430").value, abs=5e-5)


# ------------------------------------------------------------------------------------------
# what is carried: grid, reference, segment, clamp mask


def test_every_interval_is_produced_on_its_own_grid(uneven_log):
    log, _ = uneven_log
    bundles = pp.preprocess_all(log)
    assert tuple(bundles) == INTERVALS
    for ts, bundle in bundles.items():
        assert bundle.ts == ts
        np.testing.assert_allclose(np.diff(bundle.t), ts, rtol=0, atol=1e-9)
        # anchored at the first stamp; first and last target samples dropped (no central difference)
        assert bundle.t[0] == pytest.approx(log.t[0] + ts, abs=1e-12)
        n_target = int(np.floor((log.t[-1] - log.t[0]) / ts + 1e-9)) + 1
        assert bundle.n_samples == n_target - 2
        for name in (
            "theta",
            "dtheta",
            "ddtheta",
            "tau",
            "theta_ref",
            "dtheta_ref",
            "ddtheta_ref",
            "clamp_axes",
        ):
            assert getattr(bundle, name).shape == (bundle.n_samples, N_AXES), name


def test_reference_and_segment_are_carried_unfiltered(uneven_log):
    log, truth = uneven_log
    bundle = pp.preprocess(log, 0.040)
    h = np.diff(log.t).max()
    omega = 2 * np.pi * truth.angle_hz
    # the reference is only interpolated: within h²/8 max|f''|, not attenuated by the 5.6 Hz filter
    for name, derivative_order in (("theta_ref", 0), ("dtheta_ref", 1), ("ddtheta_ref", 2)):
        exact = getattr(truth, name.replace("_ref", ""))(bundle.t + truth.reference_lead_s)
        bound = h**2 / 8 * truth.amplitude * omega ** (2 + derivative_order)
        assert np.all(np.abs(getattr(bundle, name) - exact).max(axis=0) <= bound), name
    # the segment of the last stamp at or before each target time (synthetic: floor(t) - 1)
    raw_index = np.searchsorted(log.t, bundle.t, side="right") - 1
    np.testing.assert_array_equal(bundle.segment, np.floor(log.t[raw_index]).astype(int) - 1)


@pytest.mark.parametrize("ts", INTERVALS)
def test_clamp_mask_marks_the_window_and_its_neighbours(ts):
    t = np.arange(4001) * CONTROL_PERIOD_S
    samples, _ = synthetic_samples(t=t, amplitude=np.zeros(N_AXES))
    current = samples[:, group("current_command")]
    current[:] = 0.0
    limit_current = CLAMP_TORQUE / KT
    fraction = paper("clamp_threshold_fraction").value
    clamp_row = 2345  # t = 2.345 s
    current[clamp_row, 1] = -fraction * limit_current[1]  # axis 2 at the threshold, negative torque
    current[1000, 2] = 0.97 * limit_current[2]  # below the threshold: not a clamp
    bundle = pp.preprocess(RawLog(samples), ts)
    target = int(np.floor(t[clamp_row] / ts + 0.5))  # target sample whose window holds the stamp
    expected = np.zeros(bundle.n_samples, dtype=bool)
    dilation = int(paper("clamp_mask_dilation").value)
    expected[max(target - 1 - dilation, 0) : target - 1 + dilation + 1] = (
        True  # bundle index = target - 1
    )
    np.testing.assert_array_equal(bundle.clamp_mask, expected)
    assert bundle.clamp_axes.sum() == 1 and bundle.clamp_axes[target - 1, 1]


# ------------------------------------------------------------------------------------------
# bundle files: byte-identical, container-independent, cached


def test_bundle_files_are_byte_identical_and_round_trip(tmp_path, uneven_log):
    log, _ = uneven_log
    first = pp.write_bundle(tmp_path / "a.npz", pp.preprocess(log, 0.020)).read_bytes()
    second = pp.write_bundle(tmp_path / "b.npz", pp.preprocess(log, 0.020)).read_bytes()
    assert first == second
    bundle = pp.read_bundle(tmp_path / "a.npz")
    again = pp.preprocess(log, 0.020)
    for name in pp.Bundle.ARRAY_FIELDS:
        assert np.array_equal(getattr(bundle, name), getattr(again, name)), name
    assert bundle.ts == 0.020 and bundle.provenance == again.provenance
    assert bundle.clamp_mask.dtype == bool and bundle.segment.dtype == np.int64


def test_bundle_does_not_depend_on_the_log_container(tmp_path, uneven_log):
    log, _ = uneven_log
    files = []
    for suffix in ("csv", "npz"):
        read = read_raw_log(
            write_raw_log(tmp_path / f"log.{suffix}", log.samples, {"trajectory": "SYN"})
        )
        files.append(
            pp.write_bundle(
                tmp_path / f"bundle_{suffix}.npz", pp.preprocess(read, 0.040)
            ).read_bytes()
        )
    assert files[0] == files[1]


def test_cached_bundles_are_computed_once(tmp_path, uneven_log, monkeypatch):
    log, _ = uneven_log
    log_path = write_raw_log(tmp_path / "run.npz", log.samples, {"trajectory": "SYN"})
    cache = tmp_path / "bundles"
    computed = pp.cached_bundles(log_path, cache_dir=cache)
    files = sorted(cache.glob("*/*.npz"))
    assert [f.name for f in files] == [pp.bundle_filename(ts) for ts in INTERVALS]
    contents = [f.read_bytes() for f in files]

    def must_not_run(*args, **kwargs):
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(pp, "preprocess_all", must_not_run)
    cached = pp.cached_bundles(log_path, cache_dir=cache)
    assert all(np.array_equal(cached[ts].tau, computed[ts].tau) for ts in INTERVALS)
    assert [f.read_bytes() for f in sorted(cache.glob("*/*.npz"))] == contents
    # a changed log gets its own entry
    monkeypatch.undo()
    changed = log.samples.copy()
    changed[:, group("current_command")] *= 1.01
    write_raw_log(log_path, changed, {"trajectory": "SYN"})
    pp.cached_bundles(log_path, intervals=(0.040,), cache_dir=cache)
    assert len(list(cache.iterdir())) == 2


def test_intervals_must_be_whole_milliseconds(uneven_log):
    log, _ = uneven_log
    with pytest.raises(ValueError, match="0.0025"):
        pp.preprocess(log, 0.0025)


def test_record_too_short_for_an_interval_names_the_log(tmp_path):
    samples, _ = synthetic_samples(t=np.arange(120) * CONTROL_PERIOD_S)
    path = write_raw_log(tmp_path / "short.npz", samples)
    with pytest.raises(Exception) as error:
        pp.preprocess(read_raw_log(path), 0.080)
    assert str(path) in str(error.value)


# ------------------------------------------------------------------------------------------
# command line


def test_cli_writes_every_bundle_and_stops_cleanly_on_bad_input(tmp_path, uneven_log, capsys):
    from crane_lib import cli

    log, _ = uneven_log
    good = write_raw_log(tmp_path / "run.csv", log.samples[:3000])
    assert cli.main(["preprocess", str(good), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        pp.bundle_filename(ts) for ts in INTERVALS
    ]

    lines = good.read_text().split("\n")
    fields = lines[1500].split(",")  # line 1501: no metadata, so sample 1500
    fields[9] = "nan"
    lines[1500] = ",".join(fields)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines))
    assert (
        cli.main(["preprocess", str(bad), "--out", str(tmp_path / "bad_out")]) == cli.EXIT_BAD_INPUT
    )
    assert f"{bad}, line 1501" in capsys.readouterr().err
    assert not (tmp_path / "bad_out").exists()


@pytest.mark.parametrize("shape", [(2000, 7), (500,), (13, 3)])
def test_zero_phase_filter_is_scipys_filtfilt_of_each_section_bit_for_bit(shape):
    """The numba kernel runs the columns side by side; each must still be scipy's filtfilt
    (odd padding of 12, steady-state start) of every section in turn, to the last bit."""
    rng = np.random.default_rng(7)
    x = np.cumsum(rng.normal(size=shape), axis=0) + 5.0 * rng.normal(size=shape)
    for ts in pp.INTERVALS_S[1:]:
        sections = pp.antialias_sections(ts)
        expected = np.asarray(x, dtype=float).T
        for section in sections:
            expected = scipy.signal.filtfilt(
                section[:3],
                section[3:],
                expected,
                axis=-1,
                padtype="odd",
                padlen=pp.FILTFILT_PAD_SAMPLES,
            )
        got = pp.zero_phase_filter(sections, x)
        assert got.shape == x.shape
        np.testing.assert_array_equal(got, expected.T)


def test_zero_phase_filter_refuses_a_record_no_longer_than_its_padding():
    with pytest.raises(ValueError, match="greater than padlen, which is 12"):
        pp.zero_phase_filter(pp.antialias_sections(0.04), np.ones((12, 2)))
