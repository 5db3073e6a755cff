"""Joint-level identification (Sec. III-B): the fit of (1), the PRBS, the ARX, our Table XIX."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.constants import CONTROL_PERIOD_S, N_AXES
from crane_lib.model.controller import JointModel, load_realization_constants
from crane_lib.paper_numbers import paper
from crane_lib.twin import joint_identification as ji

REPRODUCE_RTOL = (
    1e-6  # the fit is deterministic; this allows for floating-point differences between machines
)


def _continuous_fopdt(u, gain, time_constant, dead_time, period, fine=200):
    """Reference response on a grid `fine` times finer than the samples (independent of the fit's
    recursion)."""
    h = period / fine
    u_fine = np.repeat(u, fine)
    delay = int(round(dead_time / h))
    delayed = np.concatenate([np.zeros(delay), u_fine[: len(u_fine) - delay]])
    a = np.exp(-h / time_constant)
    y = np.zeros(len(u_fine))
    for k in range(1, len(u_fine)):
        y[k] = a * y[k - 1] + gain * (1 - a) * delayed[k - 1]
    return y[::fine]


def _record(u, y):
    t = np.arange(len(u)) * CONTROL_PERIOD_S
    return ji.JointRecord(7, t, np.cumsum(y) * CONTROL_PERIOD_S, y, u, u)


def test_prbs_is_maximal_length():
    bits = ji.prbs()
    assert len(bits) == 2047 and set(np.unique(bits)) == {-1.0, 1.0}
    assert bits.sum() == 1  # 1024 ones, 1023 minus ones
    # circular autocorrelation of an m-sequence is -1 off the zero lag
    spectrum = np.fft.fft(bits)
    correlation = np.real(np.fft.ifft(spectrum * np.conj(spectrum)))
    np.testing.assert_allclose(correlation[1:], -1.0, atol=1e-9)
    assert len(bits) * ji.PRBS_BIT_S == pytest.approx(
        2.047
    )  # "about 2 s", informative from 0.49 Hz


def test_fit_recovers_a_known_first_order_plus_dead_time():
    truth = JointModel(37.1, 0.136, 1.53e-3)
    u = ji.excitation_units(7) * 2.69e-3 * 1.783
    y = _continuous_fopdt(u, truth.gain, truth.time_constant, truth.dead_time, CONTROL_PERIOD_S)
    fit = ji.fit_joint_model(_record(u, y), period=CONTROL_PERIOD_S)
    assert fit.model.gain == pytest.approx(truth.gain, rel=1e-3)
    assert fit.model.time_constant == pytest.approx(truth.time_constant, rel=1e-3)
    assert fit.model.dead_time == pytest.approx(truth.dead_time, abs=2e-5)
    assert fit.fit_percent > 99.0
    # with measurement noise the gain and time constant stay within a few percent
    noisy = y + np.random.default_rng(5).normal(0.0, 0.2, len(y))
    rough = ji.fit_joint_model(_record(u, noisy), period=CONTROL_PERIOD_S)
    assert rough.model.gain == pytest.approx(truth.gain, rel=0.05)
    assert rough.model.time_constant == pytest.approx(truth.time_constant, rel=0.05)
    assert rough.model.m_hat == pytest.approx(truth.m_hat, rel=0.05)


def test_arx_recovers_a_known_system_and_its_frequency_response():
    rng = np.random.default_rng(3)
    a = np.array([1.0, -2.2, 1.9, -0.8, 0.15])
    b = np.array([0.0, 0.5, -0.2, 0.1, 0.05])
    u = rng.choice([-1.0, 1.0], 3000)
    y = np.zeros_like(u)
    for k in range(4, len(u)):
        y[k] = -a[1:] @ y[k - 4 : k][::-1] + b[1:] @ u[k - 4 : k][::-1]
    arx = ji.fit_arx(_record(u, y), order=4)
    np.testing.assert_allclose(arx.a, a, atol=1e-8)
    np.testing.assert_allclose(arx.b, b, atol=1e-8)
    f = np.array([1.0, 50.0, 200.0])
    z = np.exp(-2j * np.pi * f * CONTROL_PERIOD_S)
    expected = np.polyval(b[::-1], z) / np.polyval(a[::-1], z)
    np.testing.assert_allclose(arx.frequency_response(f), expected, rtol=1e-8)


def test_joint7_record_on_the_twin_shows_the_drivetrain_resonance():
    """The open-loop Joint-7 record: its nonparametric response peaks near 100 Hz above model
    (1)."""
    from scipy import signal

    record = ji.record_joint(7)
    fit = ji.fit_joint_model(record)
    start = int(
        round((ji.REST_BEFORE_S + 2 * ji.SQUARE_PERIODS * ji.SQUARE_LEVEL_S) / CONTROL_PERIOD_S)
    )
    u, y = record.input_torque[start : start + 2047], record.velocity[start : start + 2047]
    f, cross = signal.csd(u, y, fs=1 / CONTROL_PERIOD_S, nperseg=256)
    _, power = signal.welch(u, fs=1 / CONTROL_PERIOD_S, nperseg=256)
    ratio = np.abs(cross / power) / np.abs(ji.fopdt_frequency_response(fit.model, f))
    band = (f > 60) & (f < 150)
    peak = f[band][np.argmax(ratio[band])]
    assert 80.0 < peak < 120.0 and ratio[band].max() > 2.5
    assert (
        np.median(ratio[(f > 20) & (f < 60)]) < 1.6
    )  # below the resonance, (1) describes the joint
    assert (
        0.5e-3 < fit.model.dead_time < 6e-3
    )  # the 0.9 ms latency, the hold and differencing, and noise


def test_rerunning_the_fit_reproduces_table_xix():
    committed = load_realization_constants()
    fits = ji.identify_all()
    models, sources = ji.table_xix(fits)
    assert list(sources) == list(committed.sources)
    for axis in range(1, N_AXES + 1):
        got, want = models[axis - 1], committed.models[axis - 1]
        for name in ("gain", "time_constant", "dead_time"):
            assert getattr(got, name) == pytest.approx(getattr(want, name), rel=REPRODUCE_RTOL), (
                f"axis {axis} {name}"
            )
    assert models[6] == ji.paper_joint7_model()
    assert models[6].gain == paper("joint7_gain").value


def test_bandwidth_of_a_first_order_response_is_its_corner():
    from crane_lib.twin.joint_identification import bandwidth_hz

    frequency = np.linspace(0.01, 50.0, 20000)
    response = 1.0 / (1.0 + 1j * frequency / 4.0)  # corner at 4 Hz
    assert bandwidth_hz(frequency, response) == pytest.approx(4.0, rel=1e-4)
    assert np.isnan(bandwidth_hz(frequency, np.ones_like(response)))  # never falls: no bandwidth


def test_resonance_peak_finds_a_lightly_damped_mode_in_band():
    from crane_lib.twin.joint_identification import resonance_peak

    frequency = np.linspace(1.0, 400.0, 4000)
    s = 2j * np.pi * frequency
    wn = 2 * np.pi * 97.0
    response = wn**2 / (s**2 + 2 * 0.05 * wn * s + wn**2)
    peak_hz, magnitude = resonance_peak(frequency, response)
    assert peak_hz == pytest.approx(97.0 * np.sqrt(1 - 2 * 0.05**2), abs=0.2)
    assert magnitude == pytest.approx(1 / (2 * 0.05 * np.sqrt(1 - 0.05**2)), rel=1e-2)


def test_nominal_closed_loop_tracks_at_low_frequency_and_rolls_off():
    from crane_lib.model.controller import K_I, K_P, K_V
    from crane_lib.twin.joint_identification import nominal_closed_loop_response, paper_joint7_model

    response = nominal_closed_loop_response(
        paper_joint7_model(), np.array([0.01, 100.0]), K_P, K_V, K_I
    )
    assert abs(response[0]) == pytest.approx(
        1.0, abs=1e-3
    )  # integral action: no steady-state error
    assert abs(response[1]) < 0.05
