"""Chapter "The realization layer, the twin and preprocessing" (paper Sec. III-A, III-B, V-B, VII-D,
Appendix D-A, D-C; Table XIX): the twin's drive settings, the joint-level identification of
Joint 7 (Fig. 3), Table XIX, the controller's gains and bandwidth, what the twin produces
against the paper, the residual's spectrum, preprocessing step by step, its reproducibility,
and the raw log. Data: the digital twin's recordings and experiments on the twin."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib import fingerprint
from crane_lib.constants import ACTUATORS, CLAMP_THRESHOLD_FRACTION, N_AXES
from crane_lib.logs import preprocessing, raw_log
from crane_lib.model.controller import K_I, K_P, K_V, load_realization_constants
from crane_lib.paper_numbers import paper
from crane_lib.reporting import calibration
from crane_lib.reporting.tables import (
    Comparison,
    Prose,
    Why,
    cite,
    comparison_table,
    numbered,
    significant,
    span,
)
from crane_lib.twin import dataset
from crane_lib.twin import joint_identification as ji
from crane_lib.twin.truth import load_plant_settings

CALIBRATION_TRAJECTORY = "AG02"  # the paper's calibration numbers are AG02's
VALIDATION = ("V01", "V02", "V03")
RESIDUAL_TS = 0.010  # the finest identification interval: the residual spectrum is shown on it
NATURAL_HZ = np.sqrt(K_P) / (2 * np.pi)


def recorded(profile: str) -> list:
    """The twin's executions of the profile that are recorded under results/recordings/."""
    return [e for e in dataset.executions(profile) if e.log_path().exists()]


def recordings_sentence(profile: str) -> Prose:
    return Prose(
        f"Profile **{profile}**: {len(recorded(profile))} recordings of the twin are available under "
        "`results/recordings/`."
    )


# ----------------------------------------------------------------------------- the twin's drives


def drive_table() -> object:
    settings = load_plant_settings()
    frame = pd.DataFrame(
        {
            "actuator": [a.model for a in ACTUATORS],
            "Kt logged (N·m/A)": settings.kt_logged,
            "Kt true (N·m/A)": settings.kt_true,
            "true / logged": np.asarray(settings.kt_true) / np.asarray(settings.kt_logged),
            "resonance at the Fig. 1 posture (Hz)": list(settings.resonance_hz) + [np.nan],
        },
        index=pd.Index(range(1, N_AXES + 1), name="axis"),
    )
    return numbered(
        frame,
        "The twin's drives: the torque constant the log's conversion assumes against the true one, "
        "and the drivetrain resonance (the hand axis is rigid)",
        "tab-realization-drives",
        digits=4,
    )


def drive_sentence() -> Prose:
    settings = load_plant_settings()
    ratio = np.asarray(settings.kt_true) / np.asarray(settings.kt_logged)
    return Prose(
        f"The true torque constants lie between {significant(ratio.min(), 3)} and {significant(ratio.max(), 3)} "
        f"times the logged conversion (the realistic case of Sec. VII-D: {cite('kt_perturbation_range')}), so the "
        "twin's torque record is wrong the way the arm's is; a uniform error would scale every identified parameter."
    )


# ----------------------------------------------------------------------------- Joint 7 (Sec. III-B)


@dataclass
class JointSeven:
    """The open-loop record of Joint 7 on the twin and every fit of Fig. 3."""

    record: object  # joint_identification.JointRecord
    fit: object  # JointFit of model (1)
    arx: object
    arx_hz: float
    arx_damping: float
    spectrum_hz: np.ndarray
    spectrum: np.ndarray
    peak_hz: float
    peak_magnitude: float
    model_at_peak: float
    prbs_s: float


def joint_seven() -> JointSeven:
    record = ji.record_joint(ji.PAPER_AXIS)
    fit = ji.fit_joint_model(record)
    arx = ji.fit_arx(record)
    arx_hz, arx_damping = ji.arx_resonance(arx)
    f, h = ji.empirical_frequency_response(record)
    peak_hz, peak_magnitude = ji.resonance_peak(f, h)
    at_peak = abs(ji.fopdt_frequency_response(fit.model, np.array([peak_hz]))[0])
    return JointSeven(
        record,
        fit,
        arx,
        arx_hz,
        arx_damping,
        f,
        h,
        peak_hz,
        peak_magnitude,
        at_peak,
        len(ji.prbs()) * ji.PRBS_BIT_S,
    )


def joint_seven_sentence(j7: JointSeven) -> Prose:
    return Prose(
        f"Joint 7 on the twin: {len(j7.record.t)} samples of {j7.record.period * 1e3:.3f} ms (median), a PRBS of "
        f"{j7.prbs_s:.3f} s. Model (1) explains {j7.fit.fit_percent:.1f} % of the differenced velocity (NRMSE fit)."
    )


def fig_3a(j7: JointSeven):
    record, model = j7.record, j7.fit.model
    t = record.t - record.t[0]
    simulated = ji.fopdt_response(
        record.input_torque, model.gain, model.time_constant, model.dead_time, record.period
    )
    part = ji.prbs_segment(record)
    zoom = slice(part.start, part.start + 300)
    fig, axes = plt.subplots(3, 1, figsize=(10, 8), gridspec_kw=dict(height_ratios=[1, 2, 2]))
    axes[0].plot(t, record.input_torque, lw=0.5, color="C3")
    axes[0].set_ylabel("input (N·m)")
    axes[0].set_title(
        "twin data: Joint 7 open-loop record (square wave, then PRBS) and the fit of (1)"
    )
    for ax, window in zip(axes[1:], (slice(None), zoom)):
        ax.plot(
            t[window],
            record.velocity[window],
            lw=0.6,
            color="0.6",
            label="twin: encoder-differenced velocity",
        )
        ax.plot(t[window], simulated[window], lw=1.2, color="C0", label="fitted model (1)")
        ax.set_ylabel("velocity (rad/s)")
    axes[2].set_title(
        f"twin data: the first {(zoom.stop - zoom.start) * record.period:.1f} s of the PRBS part",
        fontsize=10,
    )
    axes[2].set_xlabel("time (s)")
    axes[1].legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def fig_3b(j7: JointSeven):
    frequency = np.logspace(np.log10(0.3), np.log10(499.0), 600)
    curves = {
        "model (1), fitted on the twin": (
            frequency,
            ji.fopdt_frequency_response(j7.fit.model, frequency),
            dict(color="C0", lw=1.6),
        ),
        "model (1), paper's values": (
            frequency,
            ji.fopdt_frequency_response(ji.paper_joint7_model(), frequency),
            dict(color="k", lw=1, ls="--"),
        ),
        f"ARX({ji.ARX_ORDER}), twin record": (
            frequency,
            j7.arx.frequency_response(frequency),
            dict(color="C2", lw=1.2),
        ),
        "non-parametric (PRBS part), twin record": (
            j7.spectrum_hz,
            j7.spectrum,
            dict(color="C3", lw=0.8, marker=".", ms=3),
        ),
    }
    fig, (ax_mag, ax_phase) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for label, (f, h, style) in curves.items():
        ax_mag.semilogx(f, 20 * np.log10(np.abs(h)), label=label, **style)
        ax_phase.semilogx(f, np.degrees(np.unwrap(np.angle(h))), **style)
    ax_mag.axvline(j7.peak_hz, color="C3", lw=0.6, ls=":")
    ax_mag.axvline(j7.arx_hz, color="C2", lw=0.6, ls=":")
    ax_mag.set_ylabel("|velocity / torque| (dB re (rad/s)/(N·m))")
    ax_phase.set_ylabel("phase (deg)")
    ax_phase.set_xlabel("frequency (Hz)")
    ax_phase.set_ylim(-720, 90)
    ax_mag.set_title(
        "twin data: Joint 7 frequency response, model (1) against ARX and the spectrum"
    )
    ax_mag.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def fig_3b_sentence(j7: JointSeven) -> Prose:
    twin_hz = load_plant_settings().resonance_hz[ji.PAPER_AXIS - 1]
    near = abs(j7.arx_hz - twin_hz) < 0.2 * twin_hz
    return Prose(
        f"The spectrum peaks at **{j7.peak_hz:.1f} Hz**, {j7.peak_magnitude / j7.model_at_peak:.1f}× above the fitted (1) "
        f"there; the twin's Joint-7 drivetrain resonance at the Fig. 1 posture is {twin_hz:.1f} Hz. The ARX({ji.ARX_ORDER}) "
        f"places its lightest-damped complex pole pair at **{j7.arx_hz:.0f} Hz** (damping ratio {j7.arx_damping:.2f}): "
        + (
            "on the twin's data it resolves the resonance."
            if near
            else "on the twin's data it does not resolve the resonance, and we do not claim it does."
        )
    )


def joint_seven_against_paper(j7: JointSeven) -> object:
    model = j7.fit.model
    twin_unit = Why.twin(
        "the twin's Joint 7 (rotor inertia, friction and true Kt from datasheets and the paper's text) is "
        "not the authors' unit; the paper calls the gain a working value that varies from run to run"
    )
    rows = [
        Comparison("K_p,7", "joint7_gain", model.gain, why=twin_unit),
        Comparison(
            "gain", "joint7_gain_db", 20 * np.log10(model.gain), why=Why.twin("follows K_p,7")
        ),
        Comparison(
            "T_p1,7",
            "joint7_time_constant",
            model.time_constant,
            why=Why.twin(
                "the twin's inertia over its viscous drag; its friction split is our reading (register)"
            ),
        ),
        Comparison(
            "T_d,7",
            "joint7_dead_time",
            1e3 * model.dead_time,
            why=Why.twin(
                f"the twin's read-and-dispatch latency (paper {paper('encoder_read_dispatch_delay').text()}) plus "
                "the hold, the half-period lag of the backward difference and a bias from quantization noise"
            ),
        ),
        Comparison(
            "resonance, from the spectrum",
            "backlash_resonance_freq",
            j7.peak_hz,
            digits=3,
            why=Why.reconstruction("the twin's compliance is set at the paper's \"near 100 Hz\""),
        ),
        Comparison(
            f"resonance, from the ARX({ji.ARX_ORDER}) pole",
            "backlash_resonance_freq",
            j7.arx_hz,
            digits=3,
            why=Why.finding(
                "the equation-error ARX is biased by the quantization noise of the differenced velocity"
            ),
        ),
        Comparison("PRBS length", "prbs_duration", j7.prbs_s, digits=4),
        Comparison("informative from", "prbs_informative_min_freq", 1 / j7.prbs_s, digits=3),
    ]
    return comparison_table(
        rows,
        "Joint 7 (Sec. III-B, Fig. 3) on the twin against the paper's arm",
        name="tab-realization-joint7",
    )


# ----------------------------------------------------------------------------- Table XIX and the gains


def table_xix() -> object:
    constants = load_realization_constants()
    frame = pd.DataFrame(
        {
            "actuator": [a.model for a in ACTUATORS],
            "K_p ((rad/s)/(N·m))": [m.gain for m in constants.models],
            "T_p1 (s)": [m.time_constant for m in constants.models],
            "T_d (ms)": [m.dead_time * 1e3 for m in constants.models],
            "M̂ (N·m·s²/rad)": constants.m_hat,
            "D̂ (1/s)": constants.d_hat,
            "source": [
                "paper, Sec. III-B" if s.startswith("paper") else "fitted on the twin"
                for s in constants.sources
            ],
        },
        index=pd.Index(range(1, N_AXES + 1), name="axis"),
    )
    return numbered(
        frame,
        "The realization constants of all eight axes (`data/realization_constants.csv`)",
        "tab-realization-table-xix",
        digits=4,
        paper="XIX",
    )


@dataclass
class ClosedLoop:
    frequency_hz: np.ndarray
    response: np.ndarray
    measured_hz: float
    nominal_frequency_hz: np.ndarray
    nominal: np.ndarray
    nominal_hz: float


def closed_loop() -> ClosedLoop:
    """Joint 7 under the realization law, feedforward off, a position PRBS as reference."""
    record = ji.closed_loop_record(ji.PAPER_AXIS)
    f, t = ji.closed_loop_frequency_response(record)
    f_nom = np.linspace(0.05, 60.0, 6000)
    t_nom = ji.nominal_closed_loop_response(
        load_realization_constants().models[ji.PAPER_AXIS - 1], f_nom, K_P, K_V, K_I
    )
    return ClosedLoop(f, t, ji.bandwidth_hz(f, t), f_nom, t_nom, ji.bandwidth_hz(f_nom, t_nom))


def closed_loop_figure(loop: ClosedLoop):
    fig, ax = plt.subplots(figsize=(9, 3.5))
    show = loop.frequency_hz <= 60
    ax.semilogx(
        loop.frequency_hz[show],
        20 * np.log10(np.abs(loop.response[show])),
        ".",
        ms=3,
        color="C3",
        label="twin, Joint 7, measured",
    )
    ax.semilogx(
        loop.nominal_frequency_hz,
        20 * np.log10(np.abs(loop.nominal)),
        color="k",
        lw=1,
        label="nominal loop (axis = its model (1))",
    )
    ax.axhline(-3.01, color="0.5", lw=0.6)
    ax.axvline(NATURAL_HZ, color="C0", lw=0.8, ls="--", label="√K_P")
    ax.set_ylim(-30, 6)
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("|θ / θref| (dB)")
    ax.set_title("twin data: feedback-only closed loop of Joint 7 under controller (2)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def gains_against_paper(loop: ClosedLoop) -> object:
    m_hat = load_realization_constants().m_hat
    rows = [
        Comparison("K_P", "realization_kp_implied", K_P, why=None),
        Comparison("√K_P", "realization_bandwidth_rad", np.sqrt(K_P)),
        Comparison("√K_P", "realization_bandwidth_hz", NATURAL_HZ),
        Comparison(
            "K_V",
            None,
            K_V,
            unit="1/s",
            paper_text="not stated",
            why=Why.reconstruction("2√K_P, critical damping (register)"),
        ),
        Comparison(
            "K_I",
            None,
            K_I,
            unit="1/s³",
            paper_text="not in (2)",
            why=Why.reconstruction(
                "added: (2) alone cannot end the in-position wait on the twin (register)"
            ),
        ),
        Comparison(
            "−3 dB of θ/θref, nominal loop",
            None,
            loop.nominal_hz,
            unit="Hz",
            paper_text="not stated",
            why=Why.beyond("computed from Table XIX row 7 and the gains"),
        ),
        Comparison(
            "−3 dB of θ/θref, measured on the twin",
            None,
            loop.measured_hz,
            unit="Hz",
            paper_text="not measured",
            why=Why.beyond(
                "the twin's Joint 7 is not exactly the paper's model (1): its fit differs in K_p and T_p1"
            ),
        ),
        Comparison(
            "M̂_j D̂_j θ̇ref below D̂_j θ̇ref, over the eight axes",
            "vel_ff_scale_gap",
            np.log10(1 / m_hat),
            unit="orders of magnitude",
            digits=2,
            why=Why.reconstruction("−log10 M̂_j of our Table XIX"),
        ),
    ]
    return comparison_table(
        rows, "The realization gains and the closed-loop bandwidth", name="tab-realization-gains"
    )


# ----------------------------------------------------------------------------- calibrating honestly


def calibration_runs(profile: str) -> pd.DataFrame:
    """Per execution of AG02 and V01-V03 in the profile: durations, clamp share, peak speed, residual."""
    rows = []
    for e in recorded(profile):
        if e.trajectory != CALIBRATION_TRAJECTORY and e.trajectory not in VALIDATION:
            continue
        s = calibration.summary(
            raw_log.read_raw_log(e.log_path()), with_residual=e.trajectory == CALIBRATION_TRAJECTORY
        )
        rows.append({"trajectory": e.trajectory, "run": e.run, **s})
    frame = pd.DataFrame(rows).set_index(["trajectory", "run"])
    frame["realized / commanded"] = frame["realized_s"] / frame["commanded_s"]
    return frame


def realization_sentence(profile: str) -> Prose:
    """Over every recording of the profile (read from the logs' metadata): in-position timeouts and
    realized over commanded motion, the two things the integral term of the register is there for."""
    rows = []
    for e in recorded(profile):
        meta = dataset.stored_metadata(e.log_path()) or {}
        if "in_position_timeouts" in meta:
            rows.append(
                (
                    e.trajectory,
                    int(meta["in_position_timeouts"]),
                    float(meta["realized_motion_s"]) / float(meta["commanded_duration_s"]),
                )
            )
    if not rows:
        return Prose("No recording of this profile carries the realization metadata.")
    timeouts = sum(r[1] for r in rows)
    ratios = np.array([r[2] for r in rows])
    worst = max(rows, key=lambda r: r[2])
    return Prose(
        f"Over the {len(rows)} recordings of this profile the in-position wait timed out "
        + ("**never**" if timeouts == 0 else f"**{timeouts} times**")
        + f"; realized motion is {span(ratios, 3)} times the commanded duration (longest relative to its command: "
        f"{worst[0]}). Controller (2) without the integral term left gravity-induced steady errors that made segments "
        "time out (register)."
    )


def calibration_table(runs: pd.DataFrame) -> object:
    shown = runs.rename(
        columns={
            "commanded_s": "commanded (s)",
            "realized_s": "realized (s)",
            "record_s": "record (s)",
            "clamp_share_percent": "clamp share (%)",
            "peak_speed_rad_s": "peak joint speed (rad/s)",
            "residual_share_percent": "65-parameter residual at 40 ms (% of torque RMS)",
        }
    )
    return numbered(
        shown,
        "What the twin produces, per execution of the profile (twin recordings)",
        "tab-realization-calibration",
    )


def calibration_against_paper(runs: pd.DataFrame, loop: ClosedLoop) -> object:
    ag = runs.loc[CALIBRATION_TRAJECTORY]
    val = runs.drop(index=CALIBRATION_TRAJECTORY, level="trajectory")
    ratio = paper("ag02_realized_duration").value / paper("ag02_commanded_duration").value
    residual = ag["residual_share_percent"].values
    cleaner = np.median(residual) < 0.5 * paper("full_model_residual_share").value
    rows = [
        Comparison(
            "AG02 commanded duration",
            "ag02_commanded_duration",
            ag["commanded_s"].values,
            why=Why.reconstruction(
                "our AG02 command file is shorter: the reconstructed blocks and speed factors "
                '(chapter "Excitation", register E-6)'
            ),
        ),
        Comparison(
            "AG02 realized motion",
            "ag02_realized_duration",
            ag["realized_s"].values,
            why=Why.reconstruction(
                "follows the shorter command file; the excess is the in-position wait, our reading"
            ),
        ),
        Comparison(
            "AG02 realized / commanded",
            None,
            ag["realized / commanded"].values,
            digits=3,
            paper_text=f"{significant(ratio, 3)} (from the two numbers above)",
            why=Why.twin("the twin's in-position tolerance and settling, not the arm's; not tuned"),
        ),
        Comparison(
            "AG02 record length",
            "ag02_record_duration",
            ag["record_s"].values,
            why=Why.twin(
                "the twin's idle ends are drawn at random (register); the paper's logging was started and "
                "stopped by hand"
            ),
        ),
        Comparison(
            "AG02 clamp share of samples",
            "ag02_clamp_sample_share",
            ag["clamp_share_percent"].values,
            why=Why.twin(
                "the twin's torque demand on its hanging mounting; the paper notes that other mountings clamp "
                "more often"
            ),
        ),
        Comparison(
            "AG02 peak joint speed",
            "ag02_peak_velocity",
            ag["peak_speed_rad_s"].values,
            why=Why.reconstruction(
                "shorter command file, same velocity ceilings; the peak is set by the speed factors"
            ),
        ),
        Comparison(
            "V01–V03 peak joint speed",
            "validation_peak_velocity",
            val["peak_speed_rad_s"].values,
            why=Why.reconstruction("our reconstruction of the validation files (Appendix B-G)"),
        ),
        Comparison(
            "65-parameter residual, AG02, share of torque RMS",
            "full_model_residual_share",
            residual,
            why=Why.finding(
                "the twin is far cleaner than the arm once the anti-alias filter removes the ripple above "
                "the bandwidth; whatever dominates the arm's residual at the identification interval is "
                "not in the twin"
            )
            if cleaner
            else Why.twin(
                "in-band torque errors the rigid-body model cannot represent, chiefly the supply-voltage limit "
                "near the drives' no-load speed (register); computed, not tuned"
            ),
        ),
        Comparison("closed-loop bandwidth, nominal √K_P", "realization_bandwidth_hz", NATURAL_HZ),
        Comparison(
            "closed-loop bandwidth, −3 dB measured on the twin",
            "realization_bandwidth_hz",
            loop.measured_hz,
            why=Why.not_comparable(
                "the paper states the nominal √K_P, not a half-power point (see the gains above)"
            ),
        ),
    ]
    return comparison_table(
        rows,
        "The twin against the paper's arm: reported, not targeted",
        name="tab-realization-calibration-paper",
    )


# ----------------------------------------------------------------------------- the residual's spectrum


@dataclass
class Recording:
    """One recording of the twin and its bundles at every interval of D-C."""

    trajectory: str
    run: int
    path: Path
    log: object  # RawLog
    bundles: dict


def recording(trajectory: str, run: int, profile: str) -> Recording:
    path = dataset.Execution(trajectory, run, 0).log_path()
    if not path.exists():
        raise FileNotFoundError(
            f"{path}: {trajectory} run {run} is not in the {profile} profile's recordings"
        )
    log = raw_log.read_raw_log(path)
    return Recording(trajectory, run, path, log, preprocessing.preprocess_all(log))


@dataclass
class Residual:
    """The full grouped model's OLS residual on the finest identification bundle, and its spectrum."""

    recording: Recording
    residual: np.ndarray  # (n, 8) N·m
    frequency_hz: np.ndarray
    psd: np.ndarray  # (nf, 8) (N·m)²/Hz

    @property
    def above(self) -> np.ndarray:
        """Per axis, the share (%) of the residual's power above √K_P."""
        return calibration.power_share_above(self.frequency_hz, self.psd, NATURAL_HZ)


def residual(rec: Recording) -> Residual:
    """One OLS fit of the full grouped model, and its spectrum (Welch, Hann, 1024 samples per segment)."""
    values = calibration.full_model_residual(rec.bundles[RESIDUAL_TS])
    return Residual(rec, values, *calibration.residual_density(values, RESIDUAL_TS, nperseg=1024))


def residual_figure(res: Residual):
    rec, f, psd = res.recording, res.frequency_hz, res.psd
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for j in range(N_AXES - 1):
        ax.semilogy(f, psd[:, j], lw=0.9, label=f"axis {j + 1}")
    for x, style, label in (
        (NATURAL_HZ, dict(color="k", ls="--"), "√K_P"),
        (
            preprocessing.corner_frequency_hz(0.040),
            dict(color="0.4", ls=":"),
            "anti-alias corner, 40 ms",
        ),
        (
            preprocessing.corner_frequency_hz(RESIDUAL_TS),
            dict(color="0.6", ls="-."),
            f"anti-alias corner, {RESIDUAL_TS * 1e3:g} ms",
        ),
    ):
        ax.axvline(x, lw=1, label=label, **style)
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("residual PSD ((N·m)²/Hz)")
    ax.set_title(
        f"twin data: {rec.trajectory} run {rec.run}, residual of the 65-parameter OLS fit at {RESIDUAL_TS * 1e3:g} ms"
    )
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    return fig


def residual_table(res: Residual) -> tuple[object, Prose]:
    rec, bundle, residual, above = (
        res.recording,
        res.recording.bundles[RESIDUAL_TS],
        res.residual,
        res.above,
    )
    frame = pd.DataFrame(
        {
            "residual power above √K_P (%)": above[: N_AXES - 1],
            "residual RMS (N·m)": np.sqrt(np.mean(residual[:, : N_AXES - 1] ** 2, axis=0)),
        },
        index=pd.Index(range(1, N_AXES), name="axis"),
    )
    share_fine = 100 * np.sqrt(np.mean(residual**2)) / np.sqrt(np.mean(bundle.tau**2))
    share_40 = calibration.full_model_residual_share(rec.log, 0.040)
    sentence = Prose(
        f"Residual share of the torque RMS on {rec.trajectory} run {rec.run}: **{share_fine:.1f} %** at "
        f"{RESIDUAL_TS * 1e3:g} ms, **{share_40:.1f} %** at 40 ms (paper: {cite('full_model_residual_share')}). On axes 1–4 "
        f"{span(above[:4], 2)} % of the {RESIDUAL_TS * 1e3:g} ms residual's power lies above the nominal bandwidth "
        f"√K_P = {NATURAL_HZ:.2f} Hz, on axes 5–7 {span(above[4:7], 2)} %. "
        + (
            "The twin reproduces the *kind* of floor the paper names (ripple above the bandwidth that the rigid-body model "
            "cannot represent), not its size."
            if share_40 < 0.5 * paper("full_model_residual_share").value
            else "At the accepted interval the twin's residual is of the paper's size."
        )
    )
    return numbered(
        frame,
        f"The residual's power above the bandwidth, per arm axis ({rec.trajectory} run {rec.run}, twin)",
        "tab-realization-residual",
        digits=3,
    ), sentence


# ----------------------------------------------------------------------------- preprocessing on one axis


def preprocessing_figure(rec: Recording, axis: int, zoom_s: float):
    """Raw 1 ms log against the filtered bundles, around the largest reference acceleration of the axis."""
    log, bundles, j = rec.log, rec.bundles, axis - 1
    centre = log.t[np.argmax(np.abs(log.ddtheta_ref[:, j]))]
    window = (centre - zoom_s / 2, centre + zoom_s / 2)
    raw_in = (log.t >= window[0]) & (log.t <= window[1])
    fig, axes = plt.subplots(5, 1, figsize=(10, 13), sharex=True)
    axes[0].plot(
        log.t[raw_in], log.theta[raw_in, j], color="0.55", lw=1.5, label="raw 1 ms (encoder)"
    )
    axes[1].plot(
        log.t[raw_in],
        log.dtheta_logged[raw_in, j],
        color="0.75",
        lw=0.5,
        label="raw: one-cycle encoder difference",
    )
    axes[1].plot(
        log.t[raw_in], log.dtheta_ref[raw_in, j], color="k", lw=0.8, ls="--", label="reference θ̇ref"
    )
    axes[2].plot(
        log.t[raw_in],
        log.ddtheta_ref[raw_in, j],
        color="k",
        lw=0.8,
        ls="--",
        label="reference θ̈ref",
    )
    axes[3].plot(
        log.t[raw_in],
        log.torque_logged[raw_in, j],
        color="0.6",
        lw=0.5,
        label="raw 1 ms (current × Kt)",
    )
    fine = bundles[0.001]
    fine_in = (fine.t >= window[0]) & (fine.t <= window[1])
    axes[4].plot(
        fine.t[fine_in], fine.tau[fine_in, j], color="0.6", lw=0.6, label="1 ms bundle (filtered)"
    )
    for k, ts in enumerate((0.010, 0.020, 0.040, 0.080)):
        b = bundles[ts]
        inside = (b.t >= window[0]) & (b.t <= window[1])
        style = dict(
            marker="o", ms=3 + k, lw=0.9, color=f"C{k}", label=f"{ts * 1e3:g} ms bundle", mfc="none"
        )
        for ax, values in zip(axes, (b.theta, b.dtheta, b.ddtheta, b.tau, b.tau)):
            ax.plot(b.t[inside], values[inside, j], **style)
    axes[4].set_title(
        f"the same torque: the 1 ms bundle (corner {preprocessing.corner_frequency_hz(0.001):g} Hz) against "
        "the identification bundles",
        fontsize=10,
    )
    for a, label in zip(axes, ("θ (rad)", "θ̇ (rad/s)", "θ̈ (rad/s²)", "τ (N·m)", "τ (N·m)")):
        a.set_ylabel(label)
        a.legend(fontsize=7, loc="best")
    axes[-1].set_xlabel("log time (s)")
    axes[0].set_title(
        f"twin data: {rec.trajectory} run {rec.run}, axis {axis}: raw 1 ms log against the filtered bundles"
    )
    fig.tight_layout()
    return fig


def preprocessing_sentence(rec: Recording, axis: int) -> Prose:
    j = axis - 1
    raw = np.sqrt(np.mean(rec.log.torque_logged[:, j] ** 2))
    filtered = np.sqrt(np.mean(rec.bundles[0.040].tau[:, j] ** 2))
    return Prose(
        f"Axis {axis} over the whole record: the raw torque record's RMS is {raw:.3f} N·m, the 40 ms bundle's "
        f"{filtered:.3f} N·m."
    )


def settings_against_paper() -> object:
    rows = [
        Comparison("filter order", "antialias_filter_order", preprocessing.FILTER_ORDER),
        Comparison(
            "corner, fraction of the target Nyquist frequency",
            "antialias_corner_fraction",
            preprocessing.CORNER_FRACTION_OF_NYQUIST,
        ),
        Comparison(
            "corner at 40 ms (the CLIE residual filter of D-F)",
            "residual_lowpass_cutoff",
            preprocessing.corner_frequency_hz(0.040),
        ),
        Comparison(
            "clamp test, fraction of the axis limit",
            "clamp_threshold_fraction",
            CLAMP_THRESHOLD_FRACTION,
        ),
        Comparison(
            "clamp-mask dilation, windows",
            "clamp_mask_dilation",
            preprocessing.CLAMP_DILATION_WINDOWS,
        ),
    ]
    return comparison_table(
        rows,
        "Preprocessing settings (Appendix D-C, D-F)",
        name="tab-realization-preprocessing-paper",
    )


def intervals_table(rec: Recording, axis: int) -> tuple[object, Prose]:
    j = axis - 1
    frame = pd.DataFrame(
        [
            {
                "interval (ms)": round(ts * 1e3),
                "anti-alias corner (Hz)": preprocessing.corner_frequency_hz(ts),
                "samples": b.n_samples,
                "clamp mask, dilated (% of samples)": 100 * b.clamp_mask.mean(),
                f"axis {axis} at its clamp (% of samples)": 100 * b.clamp_axes[:, j].mean(),
            }
            for ts, b in rec.bundles.items()
        ]
    ).set_index("interval (ms)")
    raw_share = 100 * rec.log.clamp_threshold_reached.any(axis=1).mean()
    sentence = Prose(
        f"Raw samples at which some axis reached its clamp: {raw_share:.3f} %. The dilated mask grows with the "
        "interval: one clamped raw sample excludes its own target sample and one window on each side, a longer "
        "stretch of the record at a coarse interval."
    )
    return numbered(
        frame,
        f"What each interval keeps ({rec.trajectory} run {rec.run}, twin)",
        "tab-realization-intervals",
        digits=4,
    ), sentence


def reproduce_bundles(rec: Recording) -> object:
    """Preprocess the raw log twice more into fresh files and compare every SHA-256 with the stored bundle's."""
    stored = preprocessing.cached_bundle_paths(rec.path)
    preprocessing.cached_bundles(rec.path)  # make sure the stored bundles exist
    digests = {ts: [fingerprint.file_digest(path)] for ts, path in stored.items()}
    with tempfile.TemporaryDirectory() as scratch:
        for attempt in (1, 2):
            for ts, b in preprocessing.preprocess_all(raw_log.read_raw_log(rec.path)).items():
                digests[ts].append(
                    fingerprint.file_digest(
                        preprocessing.write_bundle(Path(scratch) / f"{attempt}_{ts}.npz", b)
                    )
                )
    frame = pd.DataFrame(
        [
            {
                "interval (ms)": round(ts * 1e3),
                "stored": d[0][:16],
                "rerun 1": d[1][:16],
                "rerun 2": d[2][:16],
                "byte-identical": "yes" if len(set(d)) == 1 else "NO",
            }
            for ts, d in digests.items()
        ]
    ).set_index("interval (ms)")
    if (frame["byte-identical"] != "yes").any():
        raise AssertionError(f"preprocessing is not reproducible:\n{frame}")
    return numbered(
        frame,
        "SHA-256 (first 16 hex digits) of every bundle: stored, and two reruns from the raw log",
        "tab-realization-reproduced",
    )


# ----------------------------------------------------------------------------- the raw log


def column_groups_table() -> object:
    groups = pd.DataFrame(raw_log.column_groups())
    groups["columns"] = [
        f"{a}–{b}" if a != b else a for a, b in zip(groups["first column"], groups["last column"])
    ]
    return numbered(
        groups.set_index("group")[["columns", "unit", "description"]],
        "The raw log's columns, per-axis groups collapsed (`data/raw_log_columns.csv`)",
        "tab-realization-columns",
    )


def raw_log_against_paper(rec: Recording) -> object:
    groups = {g["group"]: g for g in raw_log.column_groups()}
    angle, current = groups["theta_logged"], groups["current_command"]
    dt_ms = np.diff(rec.log.t) * 1e3
    rows = [
        Comparison("columns", "raw_log_columns", raw_log.N_COLUMNS),
        Comparison(
            "joint-angle columns",
            "angle_columns",
            [int(angle["first column"]), int(angle["last column"])],
        ),
        Comparison(
            "torque-command (current) columns",
            "torque_columns",
            [int(current["first column"]), int(current["last column"])],
        ),
        Comparison("angle offset", "angle_offset", raw_log.ANGLE_OFFSET, digits=6),
        Comparison(
            "control period, median stamp spacing",
            "control_cycle_period",
            float(np.median(dt_ms)),
            digits=4,
            why=None if abs(np.median(dt_ms) - 1) < 0.5 else Why.twin("the twin's host cycle"),
        ),
    ]
    return comparison_table(
        rows, "The raw log (Appendix D-C) against the paper", name="tab-realization-rawlog-paper"
    )


def stamps_figure(rec: Recording):
    dt_ms = np.diff(rec.log.t) * 1e3
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.hist(dt_ms, bins=np.linspace(dt_ms.min(), dt_ms.max(), 120), color="C0")
    ax.set_yscale("log")
    ax.set_xlabel("Δt between consecutive stamps (ms)")
    ax.set_ylabel("samples")
    ax.set_title(
        f"twin data: {rec.trajectory} run {rec.run}, spacing of the raw log's {len(rec.log.t)} time stamps"
    )
    fig.tight_layout()
    return fig


def stamps_sentence(rec: Recording) -> Prose:
    dt_ms = np.diff(rec.log.t) * 1e3
    first = ", ".join(f"{x:.3f}" for x in rec.log.t[:6] * 1e3)
    return Prose(
        f"The first stamps (ms): {first}. Δt: mean {dt_ms.mean():.4f} ms, standard deviation {dt_ms.std():.4f} ms, "
        f"range {dt_ms.min():.3f} to {dt_ms.max():.3f} ms; {100 * np.mean(dt_ms > 1.1):.2f} % of the steps exceed "
        "1.1 ms."
    )
