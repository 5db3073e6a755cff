"""The identifiability gate: a recording must be able to support a model before one is written.

`crane-id identify`, `accept_recording` (and with it `crane-id accept` and the notebook for a
new recording) all identify through `refinement.identify_recording`, which calls these checks
in order; each failure is a `NotIdentifiable` (an InputError: exit status 2) naming the log and
the reason. Thresholds:

- the command file: the log's metadata `command_sha256` (written by both recorders) must be the
  sha256 of the file given as --trajectory; otherwise the recording executed another file (or
  an edited one) and would be labelled with the wrong trajectory. A log that does not record the
  hash is refused too: it cannot say which trajectory it executed.
- samples: at least MIN_SAMPLES_PER_PARAMETER = 4 samples of the bundle per base parameter
  (156 for the 39 of the reduced set; 8 equations each, so 32 equations per parameter). The
  shortest condition of the paper, AP01 at 80 ms, has about twice that in the twin's recording
  (the "Bad input" page computes it from the quick data set).
- motion: every axis must travel at least MIN_AXIS_TRAVEL_DEG = 5 deg (peak to peak of its
  filtered angle over the bundle; 57 counts of the 12-bit encoder). An axis that stays put
  excites its rotor-inertia and friction columns with encoder noise only; every identification
  file sweeps each axis by 60 deg.
- conditioning: kappa of the stacked regressor at most KAPPA_MAX = 1000, about 5.5 times the
  largest the paper reports over its 160 conditions (`kappa_range_all`, upper end 182.8). The
  faults this gate exists for sit far above: the idle lead-in of a log, a two-row file, a
  handful of samples (kappa 1e5 to 3e9).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from crane_lib.errors import InputError
from crane_lib.paper_numbers import paper

MIN_SAMPLES_PER_PARAMETER = 4
MIN_AXIS_TRAVEL_DEG = 5.0
KAPPA_MAX = 1000.0


class NotIdentifiable(InputError):
    """A recording that cannot support a model (command file, samples, motion, conditioning)."""


def paper_largest_kappa() -> float:
    """The largest condition number among the paper's 160 conditions (Table XII, Sec. VII-A)."""
    return float(paper("kappa_range_all").value_hi)


def file_sha256(path) -> str:
    """sha256 of a command file's bytes, or an InputError when it cannot be read."""
    path = Path(path)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise InputError(
            str(path),
            f"cannot be read ({error.strerror or error})",
            "the command file the recording executed",
        ) from None


def check_command_file(log, command_file, command_sha256: str | None = None) -> None:
    """The log must record the sha256 of `command_file` (its metadata 'command_sha256').

    `command_sha256`: the digest of the file as it was parsed (CommandFile.sha256), to avoid
    reading it twice; computed from the file when None."""
    source = str(log.path) if getattr(log, "path", None) else "the recording"
    expected = command_sha256 or file_sha256(command_file)
    recorded = (log.metadata or {}).get("command_sha256", "")
    named = (log.metadata or {}).get("command_file", "") or "no command file named"
    if not recorded or recorded == "<in memory>":
        raise NotIdentifiable(
            source,
            f"its metadata carry no command-file sha256 ({named}), so it cannot be checked against "
            f"--trajectory {command_file}",
            "a recording whose metadata name the sha256 of the command file it executed",
        )
    if recorded != expected:
        _check_line_endings_only(source, command_file, recorded, named)
        raise NotIdentifiable(
            source,
            f"was recorded from {named} (sha256 {recorded[:12]}...), not from --trajectory "
            f"{command_file} (sha256 {expected[:12]}...)",
            "the command file the recording executed, unchanged",
        )


def _check_line_endings_only(source: str, command_file, recorded: str, named: str) -> None:
    """NotIdentifiable naming the line endings when they are all that differs: the file with its
    CRLF made LF (or its LF made CRLF) has the recorded sha256 (a copy through Windows, an
    e-mail or git's core.autocrlf)."""
    try:
        data = Path(command_file).read_bytes()
    except OSError:
        return
    lf = data.replace(b"\r\n", b"\n")
    forms = (
        ("CRLF (Windows)", "LF", "dos2unix", lf),
        ("LF", "CRLF (Windows)", "unix2dos", lf.replace(b"\n", b"\r\n")),
    )
    for has, recorded_as, tool, converted in forms:
        if converted != data and hashlib.sha256(converted).hexdigest() == recorded:
            raise NotIdentifiable(
                source,
                f"was recorded from {named}, which --trajectory "
                f"{command_file} matches except for its line endings: it has "
                f"{has} line endings, the recorded file {recorded_as} (same "
                f"sha256 once converted)",
                f"the command file as recorded, with {recorded_as} line endings (e.g. {tool})",
            )


def robot_label(model) -> str:
    """How a refusal names the arm of `model` (None: the CRANE-X7): its key or its folder."""
    from crane_lib.model.dynamics import is_crane_x7

    arm = None if model is None else model.arm
    if is_crane_x7(arm):
        return "crane_x7"
    from crane_lib.model.arm_description import ARMS, load_arm
    from crane_lib.model.dynamics import arm_key

    shipped = [key for key in ARMS if key != "crane_x7" and arm_key(load_arm(key)) == arm_key(arm)]
    return shipped[0] if shipped else f"{arm.name} ({arm.source})"


def check_arm(log, model) -> None:
    """The log must have been recorded on the model's arm (its metadata's "arm", the CRANE-X7
    without one), or a NotIdentifiable naming the log and both arms."""
    recorded = getattr(log, "arm", None) or "crane_x7"
    expected = robot_label(model)
    logged = getattr(log, "metadata", {}).get("arm_fingerprint")
    if logged is not None and model is not None and model.arm is not None:
        # a described arm's log: the model's folder must hold the four files it was recorded with
        from crane_lib.logs.raw_log import folder_fingerprint

        folder = Path(str(getattr(model.arm, "source", "")))
        if folder.is_dir() and folder_fingerprint(folder) == logged:
            return
    if recorded != expected:
        source = str(log.path) if getattr(log, "path", None) else "the recording"
        raise NotIdentifiable(
            source,
            f"was recorded on the arm {recorded}, not on --robot {expected}",
            f"a recording of {expected}, or --robot {recorded}",
        )


def check_bundle(bundle, n_parameters: int, source: str) -> None:
    """Enough samples per parameter and motion on every axis, at the bundle's interval."""
    ts_ms = f"{bundle.ts * 1e3:g} ms"
    needed = MIN_SAMPLES_PER_PARAMETER * n_parameters
    if bundle.n_samples < needed:
        raise NotIdentifiable(
            source,
            f"{bundle.n_samples} samples at {ts_ms} for {n_parameters} parameters",
            f"at least {MIN_SAMPLES_PER_PARAMETER} samples per parameter ({needed}): a longer "
            "recording or a shorter interval",
        )
    travel = np.degrees(np.ptp(bundle.theta, axis=0))
    still = np.flatnonzero(travel < MIN_AXIS_TRAVEL_DEG)
    if still.size:
        axes = ", ".join(f"axis {j + 1} ({travel[j]:.2g} deg)" for j in still)
        raise NotIdentifiable(
            source,
            f"too little motion: {axes}",
            f"every axis travelling at least {MIN_AXIS_TRAVEL_DEG:g} deg (an identification "
            "trajectory, not idle samples)",
        )


def check_kappa(kappa: float, source: str, ts: float) -> None:
    """The stacked regressor's condition number at most KAPPA_MAX."""
    if not kappa <= KAPPA_MAX:
        raise NotIdentifiable(
            source,
            f"regressor condition number {kappa:.3g} at {ts * 1e3:g} ms",
            f"at most {KAPPA_MAX:g} (the paper's conditions reach {paper_largest_kappa():g})",
        )


def measure(bundle, model) -> dict:
    """What the gate looks at in one bundle, for reporting: samples, samples per parameter, the
    least-travelling axis and its travel (deg), and the stacked regressor's kappa."""
    from crane_lib.identification.ols import stack
    from crane_lib.model.identifiability import condition_number

    travel = np.degrees(np.ptp(bundle.theta, axis=0))
    w_all, _ = stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau)
    return {
        "samples": int(bundle.n_samples),
        "samples_per_parameter": bundle.n_samples / len(model.names),
        "least_travel_axis": int(np.argmin(travel)) + 1,
        "least_travel_deg": float(travel.min()),
        "kappa": condition_number(w_all),
    }


def margins_table(logs: dict, intervals=(0.04, 0.08), model=None):
    """Where recordings sit against the gate: one row per (name, interval) of `logs` (name -> raw
    log path), from the cached bundles; missing files are left out."""
    import pandas as pd

    from crane_lib.logs.preprocessing import cached_bundles
    from crane_lib.model.dynamics import model as shared_model

    model = shared_model("reduced") if model is None else model
    rows = []
    for name, path in logs.items():
        if not Path(path).is_file():
            continue
        for ts, bundle in cached_bundles(path, intervals=intervals).items():
            m = measure(bundle, model)
            rows.append(
                {
                    "recording": name,
                    "interval [ms]": round(ts * 1e3),
                    "samples": m["samples"],
                    "samples per parameter": round(m["samples_per_parameter"], 1),
                    "least travel [deg]": round(m["least_travel_deg"], 1),
                    "axis": m["least_travel_axis"],
                    "kappa": round(m["kappa"], 1),
                }
            )
    return pd.DataFrame(rows)
