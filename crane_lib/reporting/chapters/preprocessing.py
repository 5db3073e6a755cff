"""Chapter "The realization layer, the twin and preprocessing" (paper Sec. III-A, III-B, V-B,
VII-D, Appendix D-A, D-C; Table XIX): the twin's drive settings, the joint-level identification
of Joint 7 (Fig. 3), Table XIX, the controller's gains and bandwidth, what the twin produces
against the paper, the residual's spectrum, preprocessing on one axis, its reproducibility and
the raw log, as tables and figures. The numbers come from the record `acceptance.twin_calibration`
writes
(results/realization/) and from the science the chapter calls; nothing here computes them."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import twin_calibration as calibration
from crane_lib.constants import ACTUATORS, CLAMP_THRESHOLD_FRACTION, N_AXES
from crane_lib.logs import preprocessing, raw_log
from crane_lib.model.controller import K_I, K_P, K_V, load_realization_constants
from crane_lib.paper_numbers import paper
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import Comparison, Why, comparison_table, numbered, significant
from crane_lib.twin import joint_identification as ji
from crane_lib.twin.truth import load_plant_settings

CALIBRATION_TRAJECTORY = calibration.CALIBRATION_TRAJECTORY
RESIDUAL_TS = calibration.RESIDUAL_TS
NATURAL_HZ = calibration.NATURAL_HZ


def record(profile: str) -> dict:
    """The profile's calibration record (`crane_lib.acceptance.twin_calibration`, written by the
    pipeline)."""
    return read_json_record(calibration.record_path(profile))


# ---------------------------------------------------------------------------- the twin's drives


def drive_table() -> object:
    """The twin's drives: logged against true torque constant, and the drivetrain resonance."""
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


# ------------------------------------------------------------------------- Joint 7 (Sec. III-B)


def fig_3a(record, simulated: np.ndarray):
    """Fig. 3(a): Joint 7's open-loop record against the response of the fitted (1)."""
    t = record.t - record.t[0]
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
    seconds = significant((zoom.stop - zoom.start) * record.period, 1)
    axes[2].set_title("twin data: the first " + seconds + " s of the PRBS part", fontsize=10)
    axes[2].set_xlabel("time (s)")
    axes[1].legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def fig_3b(model, arx, spectrum_hz, spectrum, peak_hz: float, arx_hz: float):
    """Fig. 3(b): model (1) fitted and the paper's, the ARX fit and the non-parametric estimate."""
    frequency = np.logspace(np.log10(0.3), np.log10(499.0), 600)
    curves = {
        "model (1), fitted on the twin": (
            frequency,
            ji.fopdt_frequency_response(model, frequency),
            dict(color="C0", lw=1.6),
        ),
        "model (1), paper's values": (
            frequency,
            ji.fopdt_frequency_response(ji.paper_joint7_model(), frequency),
            dict(color="k", lw=1, ls="--"),
        ),
        f"ARX({ji.ARX_ORDER}), twin record": (
            frequency,
            arx.frequency_response(frequency),
            dict(color="C2", lw=1.2),
        ),
        "non-parametric (PRBS part), twin record": (
            spectrum_hz,
            spectrum,
            dict(color="C3", lw=0.8, marker=".", ms=3),
        ),
    }
    fig, (ax_mag, ax_phase) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for label, (f, h, style) in curves.items():
        ax_mag.semilogx(f, 20 * np.log10(np.abs(h)), label=label, **style)
        ax_phase.semilogx(f, np.degrees(np.unwrap(np.angle(h))), **style)
    ax_mag.axvline(peak_hz, color="C3", lw=0.6, ls=":")
    ax_mag.axvline(arx_hz, color="C2", lw=0.6, ls=":")
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


def joint_seven_against_paper(j7: dict) -> object:
    """Joint 7's fit of (1) and its resonance (the record's "joint_seven") against the paper."""
    twin_unit = Why.twin(
        "the twin's Joint 7 (rotor inertia, friction and true Kt from datasheets and the paper's "
        "text) is "
        "not the authors' unit; the paper calls the gain a working value that varies from run to "
        "run"
    )
    rows = [
        Comparison("K_p,7", "joint7_gain", j7["gain"], why=twin_unit),
        Comparison(
            "gain", "joint7_gain_db", 20 * np.log10(j7["gain"]), why=Why.twin("follows K_p,7")
        ),
        Comparison(
            "T_p1,7",
            "joint7_time_constant",
            j7["time_constant_s"],
            why=Why.twin(
                "the twin's inertia over its viscous drag; its friction split is our reading "
                "(register)"
            ),
        ),
        Comparison(
            "T_d,7",
            "joint7_dead_time",
            1e3 * j7["dead_time_s"],
            why=Why.twin(
                "the twin's read-and-dispatch latency (paper "
                f"{paper('encoder_read_dispatch_delay').text()}) plus "
                "the hold, the half-period lag of the backward difference and a bias from "
                "quantization noise"
            ),
        ),
        Comparison(
            "resonance, from the spectrum",
            "backlash_resonance_freq",
            j7["peak_hz"],
            digits=3,
            why=Why.reconstruction("the twin's compliance is set at the paper's \"near 100 Hz\""),
        ),
        Comparison(
            f"resonance, from the ARX({ji.ARX_ORDER}) pole",
            "backlash_resonance_freq",
            j7["arx_hz"],
            digits=3,
            why=Why.finding(
                "the equation-error ARX is biased by the quantization noise of the differenced "
                "velocity"
            ),
        ),
        Comparison("PRBS length", "prbs_duration", j7["prbs_s"], digits=4),
        Comparison("informative from", "prbs_informative_min_freq", 1 / j7["prbs_s"], digits=3),
    ]
    return comparison_table(
        rows,
        "Joint 7 (Sec. III-B, Fig. 3) on the twin against the paper's arm",
        name="tab-realization-joint7",
    )


# ---------------------------------------------------------------------- Table XIX and the gains


def table_xix(twin_joint7=None) -> object:
    """Table XIX: the realization constants of the eight axes (data/realization_constants.csv),
    and below them, when given, the twin's own fit of Joint 7 (the controller uses the paper's)."""
    constants = load_realization_constants()
    models, labels = list(constants.models), [str(j) for j in range(1, N_AXES + 1)]
    sources = [
        "paper, Sec. III-B" if s.startswith("paper") else "fitted on the twin"
        for s in constants.sources
    ]
    actuators = [a.model for a in ACTUATORS]
    if twin_joint7 is not None:
        models.append(twin_joint7)
        labels.append("7 (twin)")
        sources.append("fitted on the twin, not used by the controller")
        actuators.append(ACTUATORS[6].model)
    frame = pd.DataFrame(
        {
            "actuator": actuators,
            "K_p ((rad/s)/(N·m))": [m.gain for m in models],
            "T_p1 (s)": [m.time_constant for m in models],
            "T_d (ms)": [m.dead_time * 1e3 for m in models],
            "M̂ (N·m·s²/rad)": [m.time_constant / m.gain for m in models],
            "D̂ (1/s)": [1 / m.time_constant for m in models],
            "source": sources,
        },
        index=pd.Index(labels, name="axis"),
    )
    return numbered(
        frame,
        "The realization constants of all eight axes (`data/realization_constants.csv`), every "
        "axis fitted on the twin (Joint 7's fit in the last row, the paper's row used)",
        "tab-realization-table-xix",
        digits=4,
        paper="XIX",
    )


def closed_loop_figure(frequency_hz, response, nominal_frequency_hz, nominal):
    """|θ/θref| of Joint 7's feedback-only loop: measured on the twin against the nominal loop."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    show = frequency_hz <= 60
    ax.semilogx(
        frequency_hz[show],
        20 * np.log10(np.abs(response[show])),
        ".",
        ms=3,
        color="C3",
        label="twin, Joint 7, measured",
    )
    ax.semilogx(
        nominal_frequency_hz,
        20 * np.log10(np.abs(nominal)),
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


def gains_against_paper(closed: dict) -> object:
    """The gains of (2) and the half-power points (the record's "closed_loop") against the paper."""
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
            closed["nominal_hz"],
            unit="Hz",
            paper_text="not stated",
            why=Why.beyond("computed from Table XIX row 7 and the gains"),
        ),
        Comparison(
            "−3 dB of θ/θref, measured on the twin",
            None,
            closed["measured_hz"],
            unit="Hz",
            paper_text="not measured",
            why=Why.beyond(
                "the twin's Joint 7 is not exactly the paper's model (1): its fit differs in K_p "
                "and T_p1"
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


# ------------------------------------------------------------------------- calibrating honestly


def calibration_runs(twin: dict) -> pd.DataFrame:
    """Per execution of AG02 and V01-V03: durations, clamp share, peak speed, residual."""
    frame = pd.DataFrame(twin["calibration"]).set_index(["trajectory", "run"])
    frame["realized / commanded"] = frame["realized_s"] / frame["commanded_s"]
    return frame


def realization_runs(twin: dict) -> pd.DataFrame:
    """Per recording of the profile: in-position timeouts and realized over commanded motion."""
    return pd.DataFrame(twin["realization"]).set_index(["trajectory", "run"])


def calibration_table(runs: pd.DataFrame) -> object:
    """What the twin produces, per execution, as a numbered table."""
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


def calibration_against_paper(runs: pd.DataFrame, closed: dict) -> object:
    """The twin's calibration quantities against the paper's: reported, not targeted."""
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
                "the twin's idle ends are drawn at random (register); the paper's logging was "
                "started and "
                "stopped by hand"
            ),
        ),
        Comparison(
            "AG02 clamp share of samples",
            "ag02_clamp_sample_share",
            ag["clamp_share_percent"].values,
            why=Why.twin(
                "the twin's torque demand on its hanging mounting; the paper notes that other "
                "mountings clamp "
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
                "the twin is far cleaner than the arm once the anti-alias filter removes the "
                "ripple above "
                "the bandwidth; whatever dominates the arm's residual at the identification "
                "interval is "
                "not in the twin"
            )
            if cleaner
            else Why.twin(
                "in-band torque errors the rigid-body model cannot represent, chiefly the "
                "supply-voltage limit "
                "near the drives' no-load speed (register); computed, not tuned"
            ),
        ),
        Comparison("closed-loop bandwidth, nominal √K_P", "realization_bandwidth_hz", NATURAL_HZ),
        Comparison(
            "closed-loop bandwidth, −3 dB measured on the twin",
            "realization_bandwidth_hz",
            closed["measured_hz"],
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


# ---------------------------------------------------------------------- the residual's spectrum


def residual_figure(spectrum, trajectory: str, run: int):
    """Per arm axis, the PSD of the full model's OLS residual, with √K_P and the corners."""
    f, psd, ts_ms = spectrum.frequency_hz, spectrum.psd, significant(spectrum.ts * 1e3, 2)
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
            preprocessing.corner_frequency_hz(spectrum.ts),
            dict(color="0.6", ls="-."),
            "anti-alias corner, " + ts_ms + " ms",
        ),
    ):
        ax.axvline(x, lw=1, label=label, **style)
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("residual PSD ((N·m)²/Hz)")
    ax.set_title(
        f"twin data: {trajectory} run {run}, residual of the 65-parameter OLS fit at {ts_ms} ms"
    )
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    return fig


def residual_table(spectrum, trajectory: str, run: int) -> object:
    """Per arm axis, the share of the residual's power above √K_P and its RMS."""
    arm = N_AXES - 1
    frame = pd.DataFrame(
        {
            "residual power above √K_P (%)": spectrum.above_percent[:arm],
            "residual RMS (N·m)": np.sqrt(np.mean(spectrum.residual[:, :arm] ** 2, axis=0)),
        },
        index=pd.Index(range(1, N_AXES), name="axis"),
    )
    return numbered(
        frame,
        f"The residual's power above the bandwidth, per arm axis ({trajectory} run {run}, twin)",
        "tab-realization-residual",
        digits=3,
    )


# -------------------------------------------------------------------- preprocessing on one axis


def preprocessing_figure(log, bundles: dict, axis: int, zoom_s: float, title: str):
    """Raw 1 ms log against the filtered bundles, around the axis's largest θ̈ref."""
    j = axis - 1
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
    corner = significant(preprocessing.corner_frequency_hz(0.001), 3)
    axes[4].set_title(
        "the same torque: the 1 ms bundle (corner " + corner + " Hz) against the identification "
        "bundles",
        fontsize=10,
    )
    for a, label in zip(axes, ("θ (rad)", "θ̇ (rad/s)", "θ̈ (rad/s²)", "τ (N·m)", "τ (N·m)")):
        a.set_ylabel(label)
        a.legend(fontsize=7, loc="best")
    axes[-1].set_xlabel("log time (s)")
    axes[0].set_title(f"twin data: {title}, axis {axis}: raw 1 ms log against the filtered bundles")
    fig.tight_layout()
    return fig


def settings_against_paper() -> object:
    """The preprocessing settings (D-C, D-F) against the paper's."""
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


def intervals_table(bundles: dict, axis: int, title: str) -> object:
    """Per interval: the anti-alias corner, the samples kept and the clamp mask's share."""
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
            for ts, b in bundles.items()
        ]
    ).set_index("interval (ms)")
    return numbered(
        frame,
        f"What each interval keeps ({title}, twin)",
        "tab-realization-intervals",
        digits=4,
    )


def reproduced_table(reproduced: dict) -> object:
    """SHA-256 of every bundle, stored and rerun (the record's "reproduced"), and whether equal."""
    frame = pd.DataFrame(
        [
            {
                "interval (ms)": round(float(ts) * 1e3),
                "stored": d[0][:16],
                "rerun 1": d[1][:16],
                "rerun 2": d[2][:16],
                "byte-identical": "yes" if len(set(d)) == 1 else "NO",
            }
            for ts, d in reproduced["digests"].items()
        ]
    ).set_index("interval (ms)")
    return numbered(
        frame,
        "SHA-256 (first 16 hex digits) of every bundle: stored, and two reruns from the raw log",
        "tab-realization-reproduced",
    )


# ---------------------------------------------------------------------------------- the raw log


def column_groups_table() -> object:
    """The raw log's columns, one row per per-axis group (data/raw_log_columns.csv)."""
    groups = pd.DataFrame(raw_log.column_groups())
    groups["columns"] = [
        f"{a}–{b}" if a != b else a for a, b in zip(groups["first column"], groups["last column"])
    ]
    return numbered(
        groups.set_index("group")[["columns", "unit", "description"]],
        "The raw log's columns, per-axis groups collapsed (`data/raw_log_columns.csv`)",
        "tab-realization-columns",
    )


def raw_log_against_paper(log) -> object:
    """The raw log's layout and stamp spacing against Appendix D-C."""
    groups = {g["group"]: g for g in raw_log.column_groups()}
    angle, current = groups["theta_logged"], groups["current_command"]
    dt_ms = np.diff(log.t) * 1e3
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


def stamps_figure(log, title: str):
    """Histogram of the raw log's stamp spacing over the whole record."""
    dt_ms = np.diff(log.t) * 1e3
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.hist(dt_ms, bins=np.linspace(dt_ms.min(), dt_ms.max(), 120), color="C0")
    ax.set_yscale("log")
    ax.set_xlabel("Δt between consecutive stamps (ms)")
    ax.set_ylabel("samples")
    ax.set_title(f"twin data: {title}, spacing of the raw log's {len(log.t)} time stamps")
    fig.tight_layout()
    return fig
