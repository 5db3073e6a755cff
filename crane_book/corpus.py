"""The bad-input corpus of `crane-id` (test and book fixture material): every kind of input the
tools must refuse, generated here.

Each `Case` is one command line run in a scratch folder that holds the files the case sets up
(written from the generated fixtures below, never from committed binaries). It names its
class of bad input, the expected exit status and a fragment the one-line message must
contain. `run_case` runs it in-process through `crane_lib.cli.main` (a case of the book's own
command lines, `python -m crane_book.numbers` or `python -m benchmarks`, through that program's
main: `PROGRAMS`; an interrupt as a separate process that receives the signal) and returns
what happened, including every
file of the scratch folder that changed, appeared or disappeared. A refused case must change
nothing; a control case (status 0) must write exactly its output.

    tests/test_badinput_corpus.py   runs every case
    book/bad_input.py (its page)    tabulates the classes, generated from these cases

`notebook_cases` are the same kinds of bad input given to the new-recording report (chapter
"Your own arm") through the papermill CLI: `run_notebook_case` runs one, and a refusal must
exit non-zero, show one error line in the executed notebook and change no file. The book's page
does not run them (each starts a kernel: seconds apiece); the test suite does.

The fixtures are small and made on the fly: the command files of trajectories/, the twin's
truth file, a model file of the truth's base parameters, and raw logs of a known sinusoidal
motion whose torques follow from the truth through the regressor (so OLS on them identifies
the truth and the controls reach a model quickly).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import signal
import stat
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from crane_lib.constants import KT, N_AXES
from crane_lib.logs import npz_io, raw_log
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, save_parameters
from crane_lib.paths import DATA_DIR, REPO_ROOT, TRAJECTORY_DIR

EXIT_BAD_INPUT = 2
CRANE_ID = "crane-id"
# the command lines besides `crane-id` whose refusals the corpus holds: (module, its main)
PROGRAMS = {
    CRANE_ID: ("crane_lib.cli", "main"),
    "python -m crane_book.numbers": ("crane_book.numbers", "main"),
    "python -m benchmarks": ("benchmarks.__main__", "main"),
}


# --------------------------------------------------------------------------------------------
# cases


@dataclass(frozen=True)
class Case:
    """One command line of the corpus.

    setup      steps that build the scratch folder: ("write", name, fixture or bytes), ("mkdir",
               name),
               ("fifo", name), ("symlink", name, target), ("hardlink", name, target), ("chmod",
               name, mode)
    argv       the command line after `crane-id`
    status     expected exit status; fragment: text the message must contain (stderr, or stdout for
               0/1)
    creates    files a control case (status 0) must write; any other change fails the case
    signal     (signal number, delay s): run as a process and send it the signal after the delay
    needs_non_root: the case relies on file permissions, which root bypasses
    program    the tool the argv is given to: `crane-id` (default) or one of PROGRAMS' other
               command lines (the book's printed-numbers manifest, the benchmarks)
    """

    name: str
    klass: str
    argv: tuple[str, ...]
    status: int
    fragment: str
    setup: tuple = ()
    creates: tuple[str, ...] = ()
    signal: tuple[int, float] | None = None
    needs_non_root: bool = False
    program: str = "crane-id"

    @property
    def command(self) -> str:
        """The subcommand the case runs (`crane-id`'s), or the other program's command line."""
        if self.program != CRANE_ID:
            return (
                f"{self.program} {self.argv[0]}"
                if self.argv[0] in ("write", "check")
                else (self.program)
            )
        return self.argv[0]


@dataclass
class Outcome:
    status: int
    stdout: str
    stderr: str
    changed: list[str] = field(default_factory=list)  # paths that appeared, vanished or changed

    @property
    def message(self) -> str:
        """What the command said: its standard error, else its standard output."""
        return self.stderr if self.stderr.strip() else self.stdout


# --------------------------------------------------------------------------------------------
# fixtures: generated, cached per process


def _trajectory(name: str) -> bytes:
    return (TRAJECTORY_DIR / f"{name}.txt").read_bytes()


@cache
def command_file_bytes(name: str = "AP01") -> bytes:
    """The bytes of a shipped command file (`name`.txt)."""
    return _trajectory(name)


@cache
def truth_bytes() -> bytes:
    """The bytes of the twin's truth parameter file."""
    return (DATA_DIR / "twin_truth.csv").read_bytes()


@cache
def truth_base_parameters() -> np.ndarray:
    """The twin's truth in the 39 base parameters."""
    from crane_lib.twin.truth import load_truth

    return shared_model("reduced").base_from_standard(load_truth().as_dict()).values


@cache
def model_bytes() -> bytes:
    """A valid model file: the truth's 39 base parameters with (made-up, positive) standard
    errors."""
    model = shared_model("reduced")
    beta = truth_base_parameters()
    params = ParameterSet(model.names, beta, np.abs(beta) * 0.01 + 1e-6, {"trajectory": "corpus"})
    return _saved(
        lambda path: save_parameters(
            path, params, comment="corpus fixture: the twin truth's base parameters"
        )
    )


# A model `crane-id identify` wrote (AG02 at 40 ms, --refine fast), to six digits, in the reduced
# set's order: not PD over Theta, and its nearest consistent model is where Clarabel's first
# answer misses the margin (the export once ended in a traceback on it)
IDENTIFIED_VALUES = (
    0.0104303,
    0.00774743,
    0.0623405,
    -0.00765497,
    0.231757,
    0.0410569,
    7.74019e-05,
    0.00211457,
    -2.81954e-05,
    0.0295055,
    0.0270988,
    -0.0019453,
    0.124658,
    0.00137082,
    0.000233543,
    -0.000593518,
    0.000547995,
    8.88203e-05,
    0.000501888,
    0.000768022,
    0.00575312,
    6.10306e-05,
    7.05701e-06,
    8.29194e-05,
    -5.96998e-05,
    0.00587932,
    0.00675211,
    0.00504127,
    0.00455014,
    0.00513042,
    0.142571,
    0.835788,
    0.111676,
    0.18153,
    0.0258117,
    0.0269602,
    0.0233716,
    0.00500347,
    0.105696,
)
IDENTIFIED_STD_ERRORS = (
    0.00172585,
    0.00420663,
    0.00122632,
    0.002209,
    0.000853597,
    0.00296432,
    0.00113558,
    0.00226547,
    0.000837838,
    0.00204,
    0.000694179,
    0.000822603,
    0.000522533,
    0.00162443,
    0.000629747,
    0.000805532,
    0.000644049,
    0.0011465,
    0.000316452,
    0.00097568,
    0.000371733,
    0.000919658,
    0.000386792,
    0.00090514,
    0.000487523,
    0.00140416,
    0.000979703,
    0.000666799,
    0.000563883,
    0.000838941,
    0.00555996,
    0.00472286,
    0.0049074,
    0.00315208,
    0.00310993,
    0.00300469,
    0.00493343,
    0.000738608,
    0.00598974,
)


@cache
def identified_model_bytes() -> bytes:
    """The model file of IDENTIFIED_VALUES: identify wrote it, no consistent arm reproduces it."""
    params = ParameterSet(
        shared_model("reduced").names,
        IDENTIFIED_VALUES,
        IDENTIFIED_STD_ERRORS,
        {"trajectory": "AG02"},
    )
    comment = "corpus fixture: AG02 at 40 ms after --refine fast"
    return _saved(lambda path: save_parameters(path, params, comment=comment))


@cache
def thin_hand_model_bytes(second_moment: float = 5e-7) -> bytes:
    """The truth's model with link 7's Sigma_yy = (ZZR7 + XXR7) / 2 set to `second_moment` (kg·m^2):
    a consistent arm reproduces it, but only with a margin below that."""
    names = shared_model("reduced").names
    xxr7 = truth_base_parameters()[names.index("XXR7")]
    return parameter_text(_param_field("ZZR7", 1, repr(float(2 * second_moment - xxr7))))


def _saved(write) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.csv"
        write(path)
        return path.read_bytes()


# the sinusoidal motion of the fixture logs: per axis amplitude (rad), frequency (Hz), offset (rad)
AMPLITUDE = np.array([0.8, 0.5, 0.8, 0.7, 0.8, 0.6, 0.9, 0.4])
FREQUENCY_HZ = np.array([0.23, 0.31, 0.41, 0.47, 0.59, 0.67, 0.79, 0.53])
OFFSET = np.array([0.0, 0.0, 0.0, -1.2, 0.0, 0.0, 0.0, 0.6])


def sinusoid_samples(
    duration_s: float,
    seed: int = 5,
    amplitude=AMPLITUDE,
    frequency_hz=FREQUENCY_HZ,
    command: str = "AP01",
    envelope: bool = True,
) -> tuple[np.ndarray, dict[str, str]]:
    """(samples, metadata) of a raw log of sinusoidal joint motion with the truth's torques.

    Each axis moves as offset + A g(t) sin(2 pi f t + phase) with a Hann envelope g that starts and
    ends at rest, as a recording does (a record that starts mid-motion gives the zero-phase filter
    edge transients). Stamps are 1 ms apart with a seeded jitter of +-0.2 ms; torque =
    W(theta, dtheta, ddtheta) beta of the twin's truth, logged as current; metadata name the
    command file `command` with its sha256 (the log is not a recording of it: the gate checks
    the hash only)."""
    rng = np.random.default_rng(seed)
    n = round(duration_s * 1000) + 1
    t = np.arange(n) * 1e-3
    t[1:] += rng.uniform(-2e-4, 2e-4, n - 1)
    t[-1] = min(t[-1], duration_s)
    w = 2 * np.pi * np.asarray(frequency_hz)
    amplitude = np.asarray(amplitude, dtype=float)
    phase = rng.uniform(0, 2 * np.pi, N_AXES)
    arg = w * t[:, None] + phase
    s, ds, dds = np.sin(arg), w * np.cos(arg), -(w**2) * np.sin(arg)
    v = 2 * np.pi / duration_s
    g = (0.5 * (1 - np.cos(v * t)))[:, None] if envelope else np.ones((n, 1))
    dg = (0.5 * v * np.sin(v * t))[:, None] if envelope else np.zeros((n, 1))
    ddg = (0.5 * v**2 * np.cos(v * t))[:, None] if envelope else np.zeros((n, 1))
    theta = OFFSET + amplitude * g * s
    dtheta = amplitude * (dg * s + g * ds)
    ddtheta = amplitude * (ddg * s + 2 * dg * ds + g * dds)
    model = shared_model("reduced")
    torque = np.einsum(
        "nap,p->na", model.regressor(theta, dtheta, ddtheta), truth_base_parameters()
    )
    samples = np.zeros((n, raw_log.N_COLUMNS))
    samples[:, raw_log.COLUMN["t"]] = t
    samples[:, raw_log.group("theta_logged")] = theta + raw_log.ANGLE_OFFSET
    samples[:, raw_log.group("dtheta")] = dtheta
    samples[:, raw_log.group("theta_ref")] = theta
    samples[:, raw_log.group("dtheta_ref")] = dtheta
    samples[:, raw_log.group("ddtheta_ref")] = ddtheta
    samples[:, raw_log.group("current_command")] = torque / KT
    samples[:, raw_log.COLUMN["segment"]] = -1
    text = command_file_bytes(command)
    metadata = {
        "source": "bad-input corpus fixture (sinusoids, truth torques)",
        "trajectory": command,
        "command_file": f"{command}.txt",
        "command_sha256": hashlib.sha256(text).hexdigest(),
    }
    return samples, metadata


def _log_bytes(samples: np.ndarray, metadata: dict, suffix: str) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = raw_log.write_raw_log(Path(folder) / f"log{suffix}", samples, metadata)
        return path.read_bytes()


@cache
def log_npz(
    duration_s: float = 16.0,
    hand_amplitude: float | None = None,
    hand_hz: float | None = None,
    command: str = "AP01",
    drop_hash: bool = False,
    still: bool = False,
) -> bytes:
    """A raw log (.npz, uncompressed: quick to write and read) of the sinusoidal motion; the
    variants are the identifiability gate's faults."""
    amplitude, frequency = AMPLITUDE.copy(), FREQUENCY_HZ.copy()
    if hand_amplitude is not None:
        amplitude[-1] = hand_amplitude
    if hand_hz is not None:
        frequency[-1] = hand_hz
    if still:
        amplitude[:] = 0.0
    samples, metadata = sinusoid_samples(
        duration_s, amplitude=amplitude, frequency_hz=frequency, command=command
    )
    if drop_hash:
        metadata.pop("command_sha256")
    meta = "\n".join(f"{key}: {value}" for key, value in metadata.items())
    return npz_io.npz_bytes({"samples": samples, "metadata": np.array(meta)}, compress=False)


@cache
def short_log_lines(duration_s: float = 0.3) -> tuple[bytes, bytes]:
    """(metadata lines, sample lines) of a short text log, for the parser's faults."""
    samples, metadata = sinusoid_samples(
        duration_s, envelope=False
    )  # a slice of a recording: no need to start at rest
    text = raw_log.format_raw_log(samples, metadata).encode()
    lines = text.splitlines(keepends=True)
    header = b"".join(line for line in lines if line.startswith(b"#"))
    body = b"".join(line for line in lines if not line.startswith(b"#"))
    return header, body


def log_text(edit=None) -> bytes:
    """The short text log, its sample lines (a list of lists of field bytes) passed through
    `edit`."""
    header, body = short_log_lines()
    rows = [line.split(b",") for line in body.rstrip(b"\n").split(b"\n")]
    if edit is not None:
        rows = edit(rows)
    return header + b"".join(b",".join(row) + b"\n" for row in rows)


def _set(line: int, column: int, token: bytes):
    def edit(rows):
        rows[line][column] = token
        return rows

    return edit


def _npz(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, value in arrays.items():
            if isinstance(value, bytes):
                archive.writestr(name, value)
            else:
                payload = io.BytesIO()
                np.lib.format.write_array(payload, np.asarray(value), allow_pickle=True)
                archive.writestr(f"{name}.npy", payload.getvalue())
    return buffer.getvalue()


def _npy_header_only(shape) -> bytes:
    """An .npy member whose header declares `shape` of float64 but holds no data (a bomb's
    header)."""
    payload = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        payload, {"descr": "<f8", "fortran_order": False, "shape": tuple(shape)}
    )
    return payload.getvalue()


def command_text(edit) -> bytes:
    """AP01's command file with its lines passed through `edit` (a function of the list of
    lines)."""
    lines = command_file_bytes("AP01").decode().split("\n")
    return "\n".join(edit(lines)).encode()


def _replace_line(old_start: str, new: str):
    def edit(lines):
        return [new if line.startswith(old_start) else line for line in lines]

    return edit


def _waypoint_rows(lines):
    start = next(i for i, line in enumerate(lines) if line.startswith("WAYPOINTS")) + 1
    rows = [
        i
        for i in range(start, len(lines))
        if lines[i].strip() and not lines[i].lstrip().startswith("#")
    ]
    return rows


def _edit_row(row: int, field_index: int, token: str):
    def edit(lines):
        index = _waypoint_rows(lines)[row]
        fields = lines[index].split()
        fields[field_index] = token
        lines[index] = " ".join(fields)
        return lines

    return edit


def _slow_file() -> bytes:
    """A valid-looking file whose 400 rows sweep axis 1 by 100 deg at 1 %: over 600 s of motion."""
    lines = [
        line
        for line in command_file_bytes("AP01").decode().split("\n")
        if line.startswith(("FORMAT", "VELOCITY", "ACCEL", "START", "SEGMENT", "FINAL"))
    ]
    rows = []
    for k in range(398):
        rows.append(
            f"{50.0 if k % 2 == 0 else -50.0:.3f} 0.000 0.000 -90.000 0.000 0.000 0.000 0.000 1.0"
        )
    rows += [
        "0.000 0.000 0.000 0.000 0.000 0.000 0.000 0.000 30.0",
        "0.000 0.000 0.000 0.000 0.000 0.000 0.000 0.000 20.0",
    ]
    return ("\n".join(lines + [f"WAYPOINTS {len(rows)}"] + rows) + "\n").encode()


def parameter_text(edit) -> bytes:
    """A model file's bytes with `edit` applied to its lines."""
    lines = model_bytes().decode().split("\n")
    return "\n".join(edit(lines)).encode()


def _param_field(name: str, index: int, token: str):
    def edit(lines):
        out = []
        for line in lines:
            fields = line.split(",")
            if fields[0] == name:
                fields[index] = token
                line = ",".join(fields)
            out.append(line)
        return out

    return edit


def truth_text(name: str, value: float) -> bytes:
    """The truth file's bytes with parameter `name` set to `value`."""
    lines = truth_bytes().decode().split("\n")
    out = []
    for line in lines:
        fields = line.split(",")
        if fields[0] == name:
            fields[1] = repr(value)
        out.append(",".join(fields))
    return "\n".join(out).encode()


def _pseudo_inertia_violation() -> bytes:
    """Link 3's XX made much larger than YY + ZZ allow: no body has that inertia (triangle
    inequality)."""
    text = truth_bytes().decode().split("\n")
    values = {
        line.split(",")[0]: float(line.split(",")[1])
        for line in text
        if line and not line.startswith(("#", "name"))
    }
    return truth_text("XX3", 3.0 * (values["YY3"] + values["ZZ3"]) + 0.1)


# --------------------------------------------------------------------------------------------
# the corpus


LOG = "log.npz"
CMD = "AP01.txt"
MODEL = "model.csv"


def _w(name, content):
    return ("write", name, content)


def _cases_output_paths() -> list[Case]:
    k = "output path"
    log, cmd, model = (
        _w(LOG, lambda: log_npz()),
        _w(CMD, lambda: command_file_bytes()),
        _w(MODEL, model_bytes),
    )
    identify = ("identify", LOG, "--trajectory", CMD, "--refine", "none", "--out")
    cases = [
        Case("identify-out-is-log", k, (*identify, LOG), 2, "is the input", (log, cmd)),
        Case("identify-out-is-command-file", k, (*identify, CMD), 2, "is the input", (log, cmd)),
        Case(
            "identify-out-is-log-other-spelling",
            k,
            (*identify, f"sub/../{LOG}"),
            2,
            "is the input",
            (log, cmd, ("mkdir", "sub")),
        ),
        Case(
            "identify-out-hardlink-to-log",
            k,
            (*identify, "link.npz"),
            2,
            "is the input",
            (log, cmd, ("hardlink", "link.npz", LOG)),
        ),
        Case(
            "identify-out-symlink-to-log",
            k,
            (*identify, "link.npz"),
            2,
            "is the input",
            (log, cmd, ("symlink", "link.npz", LOG)),
        ),
        Case(
            "identify-out-symlink-elsewhere",
            k,
            (*identify, "link.csv"),
            2,
            "symbolic link",
            (log, cmd, _w("other.csv", b"x\n"), ("symlink", "link.csv", "other.csv")),
        ),
        Case(
            "identify-out-is-folder",
            k,
            (*identify, "folder"),
            2,
            "is a folder",
            (log, cmd, ("mkdir", "folder")),
        ),
        Case(
            "identify-out-is-fifo", k, (*identify, "fifo"), 2, "FIFO", (log, cmd, ("fifo", "fifo"))
        ),
        Case(
            "identify-out-is-device",
            k,
            (*identify, "/dev/null"),
            2,
            "FIFO, socket or device",
            (log, cmd),
        ),
        Case(
            "identify-out-missing-folder",
            k,
            (*identify, "no/such/m.csv"),
            2,
            "does not exist",
            (log, cmd),
        ),
        Case(
            "identify-out-folder-is-file",
            k,
            (*identify, "plain/m.csv"),
            2,
            "is not a folder",
            (log, cmd, _w("plain", b"x\n")),
        ),
        Case(
            "identify-out-exists",
            k,
            (*identify, "m.csv"),
            2,
            "--force",
            (log, cmd, _w("m.csv", b"precious\n")),
        ),
        Case(
            "identify-out-read-only-folder",
            k,
            (*identify, "ro/m.csv"),
            2,
            "not writable",
            (log, cmd, ("mkdir", "ro"), ("chmod", "ro", 0o555)),
            needs_non_root=True,
        ),
        Case("identify-out-empty", k, (*identify, ""), 2, "names no file", (log, cmd)),
        Case(
            "identify-force-never-replaces-input",
            k,
            (*identify, LOG, "--force"),
            2,
            "is the input",
            (log, cmd),
        ),
        Case(
            "identify-force-never-replaces-folder",
            k,
            (*identify, "folder", "--force"),
            2,
            "is a folder",
            (log, cmd, ("mkdir", "folder")),
        ),
        Case(
            "record-out-is-command-file",
            k,
            ("record", CMD, "--out", CMD),
            2,
            "is the input",
            (cmd,),
        ),
        Case(
            "record-out-is-truth",
            k,
            ("record", CMD, "--truth", "truth.csv", "--out", "truth.csv"),
            2,
            "is the input",
            (cmd, _w("truth.csv", truth_bytes)),
        ),
        Case(
            "record-out-unknown-suffix",
            k,
            ("record", CMD, "--out", "log.txt"),
            2,
            "unknown file type",
            (cmd,),
        ),
        Case("record-out-exists", k, ("record", CMD, "--out", LOG), 2, "--force", (cmd, log)),
        Case(
            "record-out-is-fifo",
            k,
            ("record", CMD, "--out", "f.npz"),
            2,
            "FIFO",
            (cmd, ("fifo", "f.npz")),
        ),
        Case(
            "record-out-is-folder",
            k,
            ("record", CMD, "--out", "d.npz"),
            2,
            "is a folder",
            (cmd, ("mkdir", "d.npz")),
        ),
        Case(
            "record-out-missing-folder",
            k,
            ("record", CMD, "--out", "no/x.npz"),
            2,
            "does not exist",
            (cmd,),
        ),
        Case(
            "rescue-out-is-model", k, ("rescue", MODEL, "--out", MODEL), 2, "is the input", (model,)
        ),
        Case(
            "rescue-out-hardlink-to-model",
            k,
            ("rescue", MODEL, "--out", "h.csv"),
            2,
            "is the input",
            (model, ("hardlink", "h.csv", MODEL)),
        ),
        Case(
            "rescue-out-exists",
            k,
            ("rescue", MODEL, "--out", "r.csv"),
            2,
            "--force",
            (model, _w("r.csv", b"keep\n")),
        ),
        Case(
            "rescue-out-is-folder",
            k,
            ("rescue", MODEL, "--out", "d"),
            2,
            "is a folder",
            (model, ("mkdir", "d")),
        ),
        Case(
            "rescue-out-missing-folder",
            k,
            ("rescue", MODEL, "--out", "no/r.csv"),
            2,
            "does not exist",
            (model,),
        ),
        Case(
            "preprocess-out-is-log", k, ("preprocess", LOG, "--out", LOG), 2, "is the input", (log,)
        ),
        Case(
            "preprocess-out-is-file",
            k,
            ("preprocess", LOG, "--out", "plain"),
            2,
            "is a file, not a folder",
            (log, _w("plain", b"x\n")),
        ),
        Case(
            "preprocess-bundle-exists",
            k,
            ("preprocess", LOG, "--out", "b", "--intervals", "40"),
            2,
            "--force",
            (log, ("mkdir", "b"), _w("b/bundle_040ms.npz", b"old bundle\n")),
        ),
        Case(
            "preprocess-bundle-is-folder",
            k,
            ("preprocess", LOG, "--out", "b", "--intervals", "40", "--force"),
            2,
            "is a folder",
            (log, ("mkdir", "b"), ("mkdir", "b/bundle_040ms.npz")),
        ),
        Case(
            "preprocess-out-missing-parent",
            k,
            ("preprocess", LOG, "--out", "no/such/b"),
            2,
            "does not exist",
            (log,),
        ),
        Case(
            "accept-out-is-log",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", LOG),
            2,
            "is the input",
            (log, cmd),
        ),
        Case(
            "accept-out-is-validation-log",
            k,
            ("accept", LOG, "--trajectory", CMD, "--validation", "v.npz", "--out", "v.npz"),
            2,
            "is the input",
            (log, cmd, _w("v.npz", lambda: log_npz())),
        ),
        Case(
            "accept-out-is-command-file",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", CMD),
            2,
            "is the input",
            (log, cmd),
        ),
        Case(
            "accept-out-is-folder",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", "d"),
            2,
            "is a folder",
            (log, cmd, ("mkdir", "d")),
        ),
        Case(
            "accept-out-missing-folder",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", "no/m.csv"),
            2,
            "does not exist",
            (log, cmd),
        ),
        Case(
            "accept-out-exists",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", "m.csv"),
            2,
            "--force",
            (log, cmd, _w("m.csv", b"keep\n")),
        ),
        Case(
            "export-urdf-is-model",
            k,
            ("export", MODEL, "--urdf", MODEL),
            2,
            "is the input",
            (model,),
        ),
        Case(
            "export-standard-is-prior",
            k,
            ("export", MODEL, "--prior", "p.csv", "--standard", "p.csv"),
            2,
            "is the input",
            (model, _w("p.csv", truth_bytes)),
        ),
        Case(
            "export-urdf-exists",
            k,
            ("export", MODEL, "--urdf", "arm.urdf"),
            2,
            "--force",
            (model, _w("arm.urdf", b"<robot/>\n")),
        ),
        Case(
            "export-urdf-unknown-suffix",
            k,
            ("export", MODEL, "--urdf", "arm.txt"),
            2,
            "unknown file type",
            (model,),
        ),
        Case(
            "export-mjcf-is-folder",
            k,
            ("export", MODEL, "--mjcf", "arm.xml"),
            2,
            "is a folder",
            (model, ("mkdir", "arm.xml")),
        ),
        Case("export-no-output", k, ("export", MODEL), 2, "no output named", (model,)),
    ]
    # pseudo-filesystems: root passes the writable check there, and the write failed only after
    # the computation (39 s for rescue), naming a temporary file; one case per writing command
    pseudo = "pseudo-filesystem"
    accept = ("accept", LOG, "--trajectory", CMD, "--out")
    cases += [
        Case("identify-out-under-proc", k, (*identify, "/proc/m.csv"), 2, pseudo, (log, cmd)),
        Case("record-out-under-sys", k, ("record", CMD, "--out", "/sys/x.npz"), 2, pseudo, (cmd,)),
        Case(
            "rescue-out-under-proc",
            k,
            ("rescue", MODEL, "--out", "/proc/r.csv"),
            2,
            pseudo,
            (model,),
        ),
        Case(
            "preprocess-out-under-proc",
            k,
            ("preprocess", LOG, "--out", "/proc/b"),
            2,
            pseudo,
            (log,),
        ),
        Case(
            "preprocess-out-is-sys-folder",
            k,
            ("preprocess", LOG, "--out", "/sys/kernel", "--force"),
            2,
            pseudo,
            (log,),
        ),
        Case("accept-out-under-proc", k, (*accept, "/proc/m.csv"), 2, pseudo, (log, cmd)),
        Case(
            "export-urdf-under-dev-pts",
            k,
            ("export", MODEL, "--urdf", "/dev/pts/arm.urdf"),
            2,
            pseudo,
            (model,),
        ),
        Case(
            "export-standard-under-proc-self",
            k,
            ("export", MODEL, "--standard", "/proc/self/arm.csv"),
            2,
            pseudo,
            (model,),
        ),
    ]
    return cases


def _cases_options() -> list[Case]:
    k = "option out of range"
    log, cmd, model = (
        _w(LOG, lambda: log_npz()),
        _w(CMD, lambda: command_file_bytes()),
        _w(MODEL, model_bytes),
    )
    identify = ("identify", LOG, "--trajectory", CMD, "--out", "m.csv", "--refine", "none")
    cases = []
    for value, fragment in (
        ("inf", "not finite"),
        ("nan", "not finite"),
        ("1e6", "out of range"),
        ("2", "out of range"),
        ("0", "out of range"),
        ("-0.04", "out of range"),
        ("0.0155", "whole number of milliseconds"),
        ("0.101", "out of range"),
        ("forty", "not a number"),
        ("", "not a number"),
    ):
        cases.append(
            Case(
                f"identify-ts-{value or 'empty'}",
                k,
                (*identify, "--ts", value),
                2,
                fragment,
                (log, cmd),
            )
        )
    for value, fragment in (
        ("0", "out of range"),
        ("-1", "out of range"),
        ("1000", "out of range"),
        ("1.5", "not an integer"),
    ):
        cases.append(
            Case(
                f"identify-refine-workers-{value}",
                k,
                (*identify, "--refine-workers", value),
                2,
                fragment,
                (log, cmd),
            )
        )
    for value, fragment in (
        ("0.0155", "whole number of milliseconds"),
        ("nan", "not finite"),
        ("0", "out of range"),
        ("1", "out of range"),
    ):
        cases.append(
            Case(
                f"accept-ts-{value}",
                k,
                ("accept", LOG, "--trajectory", CMD, "--out", "m.csv", "--ts", value),
                2,
                fragment,
                (log, cmd),
            )
        )
    cases.append(
        Case("identify-refine-unknown", k, (*identify[:-1], "sgd"), 2, "invalid choice", (log, cmd))
    )
    cases.append(
        Case(
            "identify-method-unknown",
            k,
            (*identify, "--method", "energy"),
            2,
            "invalid choice",
            (log, cmd),
        )
    )
    audit = ("audit", MODEL)
    for option, value, fragment in (
        ("--seed", "-1", "out of range"),
        ("--seed", "1.5", "not an integer"),
        ("--seed", str(2**64), "out of range"),
        ("--seed", "１", "not an integer"),
        ("--worst", "-5", "out of range"),
        ("--worst", "0", "out of range"),
        ("--worst", "1000000000", "out of range"),
        ("--margin", "nan", "not finite"),
        ("--margin", "-1", "out of range"),
        ("--margin", "1", "out of range"),
        ("--max-boxes", "0", "out of range"),
        ("--max-boxes", "-3", "out of range"),
        ("--max-boxes", "10000000000", "out of range"),
        ("--time-limit", "-1", "out of range"),
        ("--time-limit", "0", "out of range"),
        ("--time-limit", "inf", "not finite"),
    ):
        cases.append(
            Case(
                f"audit{option}-{value}",
                k,
                (*audit, option, value, "--certify"),
                2,
                fragment,
                (model,),
            )
        )
    for value, fragment in (
        ("nan", "not finite"),
        ("inf", "not finite"),
        ("1e6", "out of range"),
        ("-1", "out of range"),
        ("0", "out of range"),
        ("1e-9", "out of range"),
    ):
        cases.append(
            Case(
                f"rescue-epsilon-{value}",
                k,
                ("rescue", MODEL, "--out", "r.csv", "--epsilon", value),
                2,
                fragment,
                (model,),
            )
        )
    for value, fragment in (
        ("0", "out of range"),
        ("-10", "out of range"),
        ("1000", "out of range"),
        ("1.5", "not an integer"),
        ("ten", "not an integer"),
    ):
        cases.append(
            Case(
                f"preprocess-intervals-{value}",
                k,
                ("preprocess", LOG, "--out", "b", "--intervals", value),
                2,
                fragment,
                (log,),
            )
        )
    for value, fragment in (
        ("-1", "out of range"),
        ("abc", "not an integer"),
        ("1e3", "not an integer"),
    ):
        cases.append(
            Case(
                f"record-seed-{value}",
                k,
                ("record", CMD, "--out", "x.npz", "--seed", value),
                2,
                fragment,
                (cmd,),
            )
        )
    # 2e-5 and 1e-3 were taken and then blamed the model; 1e-9 is finer than the solver resolves
    for value, fragment in (
        ("nan", "not finite"),
        ("0", "out of range"),
        ("-1e-6", "out of range"),
        ("1", "out of range"),
        ("2e-5", "out of range"),
        ("1e-3", "out of range"),
        ("1e-9", "out of range"),
    ):
        cases.append(
            Case(
                f"export-margin-{value}",
                k,
                ("export", MODEL, "--urdf", "arm.urdf", f"--margin={value}"),
                2,
                fragment,
                (model,),
            )
        )
    return cases


def _cases_command_files() -> list[Case]:
    k = "command file"
    cases = []

    def add(name, content, fragment, klass=k):
        # each fault is seen by the two commands that read command files
        cases.append(
            Case(
                f"record-cmd-{name}",
                klass,
                ("record", "bad.txt", "--out", "x.npz"),
                2,
                fragment,
                (_w("bad.txt", content),),
            )
        )

    add("empty", b"", "header ends before FORMAT")
    add("binary", bytes(range(256)) * 4, "not UTF-8")
    add("latin-1", "# café\n".encode("latin-1") + command_file_bytes(), "not UTF-8")
    add(
        "wrong-format-line",
        lambda: command_text(_replace_line("FORMAT", "FORMAT CRANE-X7-COMMANDS 2")),
        "first line",
    )
    add(
        "header-out-of-order",
        lambda: command_text(lambda ls: [ls[i] for i in _swap_header(ls)]),
        "header keyword",
    )
    add(
        "ceiling-changed",
        lambda: command_text(
            _replace_line(
                "VELOCITY_CEILING",
                "VELOCITY_CEILING_DEG_S 300 175.872 274.800 274.800 274.800 274.800 274.800 "
                "274.800",
            )
        ),
        "fixed in every file",
    )
    add(
        "ceiling-full-width-digits",
        lambda: command_text(
            _replace_line(
                "VELOCITY_CEILING",
                "VELOCITY_CEILING_DEG_S ２７４.８００ 175.872 274.800 274.800 274.800 "
                "274.800 274.800 274.800",
            )
        ),
        "is not a number",
    )
    add(
        "waypoints-missing",
        lambda: command_text(lambda ls: [line for line in ls if not line.startswith("WAYPOINTS")]),
        "'WAYPOINTS'",
    )
    add(
        "waypoints-not-integer",
        lambda: command_text(_replace_line("WAYPOINTS", "WAYPOINTS many")),
        "is not an integer",
    )
    add(
        "waypoints-superscript-digit",
        lambda: command_text(_replace_line("WAYPOINTS", "WAYPOINTS ²")),
        "is not an integer",
    )
    add(
        "waypoints-huge",
        lambda: command_text(_replace_line("WAYPOINTS", "WAYPOINTS 100000000")),
        "2 to 500",
    )
    add(
        "waypoints-count-mismatch",
        lambda: command_text(_replace_line("WAYPOINTS", "WAYPOINTS 5")),
        "as declared by WAYPOINTS",
    )
    add("row-too-many-fields", lambda: command_text(_edit_row(2, 8, "20.0 7")), "10 fields")
    add("row-too-few-fields", lambda: command_text(_edit_row(2, 8, "")), "8 fields")
    add("row-not-a-number", lambda: command_text(_edit_row(2, 0, "ten")), "is not a number")
    add(
        "row-full-width-digits",
        lambda: command_text(_edit_row(2, 0, "６０.000")),
        "is not a number",
    )
    add(
        "row-underscore-digits", lambda: command_text(_edit_row(2, 0, "6_0.000")), "is not a number"
    )
    add("row-nan", lambda: command_text(_edit_row(2, 0, "nan")), "is not a number")
    add("row-inf", lambda: command_text(_edit_row(2, 0, "inf")), "is not a number")
    add("row-overflow", lambda: command_text(_edit_row(2, 0, "1e400")), "overflows")
    add("row-huge-token", lambda: command_text(_edit_row(2, 0, "9" * 300_000 + "x")), "characters)")
    add(
        "angle-outside-limits",
        lambda: command_text(_edit_row(2, 1, "95.000")),
        "outside the joint limits",
    )
    add("speed-zero", lambda: command_text(_edit_row(2, 8, "0.0")), "speed factor")
    add("speed-1e-6-percent", lambda: command_text(_edit_row(2, 8, "0.000001")), "speed factor")
    add("speed-0.01-percent", lambda: command_text(_edit_row(2, 8, "0.01")), "speed factor")
    add("speed-above-100", lambda: command_text(_edit_row(2, 8, "150")), "speed factor")
    add("last-row-not-q0", lambda: command_text(_edit_row(-1, 0, "10.000")), "q̄0")
    add("final-speed-not-20", lambda: command_text(_edit_row(-1, 8, "30.0")), "final row speed")
    add("motion-longer-than-600-s", _slow_file, "commanded motion reaches")
    add("larger-than-1-MiB", lambda: command_file_bytes() + b"#" * (1 << 20), "bytes")
    add("lone-cr-line-endings", lambda: command_file_bytes().replace(b"\n", b"\r"), "lone CR")
    cases.append(
        Case(
            "record-cmd-is-folder",
            k,
            ("record", "d.txt", "--out", "x.npz"),
            2,
            "is a folder",
            (("mkdir", "d.txt"),),
        )
    )
    cases.append(
        Case(
            "record-cmd-is-fifo",
            k,
            ("record", "f.txt", "--out", "x.npz"),
            2,
            "not a regular file",
            (("fifo", "f.txt"),),
        )
    )
    cases.append(
        Case(
            "record-cmd-missing", k, ("record", "none.txt", "--out", "x.npz"), 2, "no such file", ()
        )
    )
    cases.append(
        Case(
            "identify-trajectory-unparsable",
            k,
            ("identify", LOG, "--trajectory", "bad.txt", "--out", "m.csv"),
            2,
            "is not a number",
            (
                _w(LOG, lambda: log_npz()),
                _w("bad.txt", lambda: command_text(_edit_row(2, 0, "６０.000"))),
            ),
        )
    )
    cases.append(
        Case(
            "identify-trajectory-is-fifo",
            k,
            ("identify", LOG, "--trajectory", "f.txt", "--out", "m.csv"),
            2,
            "not a regular file",
            (_w(LOG, lambda: log_npz()), ("fifo", "f.txt")),
        )
    )
    return cases


def _swap_header(lines):
    order = list(range(len(lines)))
    a = next(i for i, line in enumerate(lines) if line.startswith("ACCEL"))
    b = next(i for i, line in enumerate(lines) if line.startswith("START"))
    order[a], order[b] = b, a
    return order


def _cases_raw_logs() -> list[Case]:
    k = "raw log"
    cases = []

    def add(name, content, fragment, suffix=".csv", klass=k):
        cases.append(
            Case(
                f"preprocess-log-{name}",
                klass,
                ("preprocess", f"bad{suffix}", "--out", "b"),
                2,
                fragment,
                (_w(f"bad{suffix}", content),),
            )
        )

    first = 5  # a sample line in the middle of the short log
    add("empty", b"", "empty file")
    add("metadata-only", lambda: short_log_lines()[0], "no samples after")
    add(
        "105-fields-every-line",
        lambda: log_text(lambda rows: [r[:-1] for r in rows]),
        "105 fields: wrong column count",
    )
    add(
        "107-fields-every-line",
        lambda: log_text(lambda rows: [[b"0"] + r for r in rows]),
        "107 fields: wrong column count",
    )
    add(
        "one-short-line",
        lambda: log_text(lambda rows: rows[:first] + [rows[first][:50]] + rows[first + 1 :]),
        "50 fields",
    )
    add(
        "blank-line",
        lambda: log_text(lambda rows: rows[:first] + [[b""]] + rows[first:]),
        "a blank line",
    )
    add("truncated-last-line", lambda: log_text()[:-700], "truncated")
    add("no-final-newline", lambda: log_text()[:-1], "no final newline")
    add("not-a-number", lambda: log_text(_set(first, 3, b"abc")), "column 4 (theta_logged_3)")
    add("full-width-digits", lambda: log_text(_set(first, 3, "３.0".encode())), "is not a number")
    add("underscore-digits", lambda: log_text(_set(first, 3, b"3_0")), "is not a number")
    add("hex-number", lambda: log_text(_set(first, 3, b"0x10")), "is not a number")
    add("nan", lambda: log_text(_set(first, 3, b"nan")), "nan")
    add("inf", lambda: log_text(_set(first, 3, b"inf")), "inf")
    add("empty-field", lambda: log_text(_set(first, 3, b"")), "is nan")
    add("1e308-current", lambda: log_text(_set(first, 49, b"1e308")), "current_command_1")
    add("1e308-stamp", lambda: log_text(_set(first, 0, b"1e308")), "column 1 (t)")
    add("angle-two-turns", lambda: log_text(_set(first, 1, b"20.0")), "theta_logged_1")
    add("velocity-1e4", lambda: log_text(_set(first, 9, b"1e4")), "dtheta_1")
    add("negative-stamp", lambda: log_text(_set(0, 0, b"-5")), "column 1 (t)")
    add("clamped-flag-2", lambda: log_text(_set(first, 97, b"2")), "clamped_1")
    add("segment-fraction", lambda: log_text(_set(first, 105, b"0.5")), "integers")
    add("ticks-outside-register", lambda: log_text(_set(first, 81, b"5000")), "position_ticks_1")
    add("huge-token", lambda: log_text(_set(first, 3, b"7" * 3_000_000 + b"x")), "characters)")
    add("non-monotonic-stamp", lambda: log_text(_set(first, 0, b"0.0001")), "non-monotonic")
    add(
        "repeated-stamp",
        lambda: log_text(lambda rows: rows[:first] + [rows[first]] + rows[first:]),
        "repeats the previous",
    )
    add(
        "stamp-gap",
        lambda: log_text(
            lambda rows: (
                rows[:first] + [[b"%r" % (float(r[0]) + 0.05)] + r[1:] for r in rows[first:]]
            )
        ),
        "gap of",
    )
    add("five-samples", lambda: log_text(lambda rows: rows[:5]), "anti-alias filter")
    add("not-utf8-bytes", lambda: log_text(_set(first, 3, b"\xff\xfe")), "is not a number")
    add("nul-bytes", lambda: log_text(_set(first, 3, b"\x00\x00")), "is not a number")
    add("gz-truncated", lambda: gzip.compress(log_text(), mtime=0)[:-200], "truncated", ".csv.gz")
    add("gz-corrupt", lambda: b"\x1f\x8b" + b"\x00" * 100, "gzip", ".csv.gz")
    add(
        "gz-trailing-garbage",
        lambda: gzip.compress(log_text(), mtime=0) + b"garbage",
        "not gzip",
        ".csv.gz",
    )
    add("npz-not-a-zip", b"PK\x03\x04 this is not a zip file", "not a readable .npz", ".npz")
    add(
        "npz-text-member",
        lambda: _npz({"samples": np.zeros((3, raw_log.N_COLUMNS)), "notes.txt": b"hello"}),
        "not a .npy array",
        ".npz",
    )
    add(
        "npz-complex-samples",
        lambda: _npz({"samples": np.zeros((50, raw_log.N_COLUMNS), dtype=complex)}),
        "complex",
        ".npz",
    )
    add(
        "npz-object-samples",
        lambda: _npz({"samples": np.array([[None] * raw_log.N_COLUMNS], dtype=object)}),
        "Python objects",
        ".npz",
    )
    add(
        "npz-text-samples",
        lambda: _npz({"samples": np.full((50, raw_log.N_COLUMNS), "1.0")}),
        "dtype",
        ".npz",
    )
    add(
        "npz-bool-samples",
        lambda: _npz({"samples": np.ones((50, raw_log.N_COLUMNS), dtype=bool)}),
        "dtype",
        ".npz",
    )
    add(
        "npz-wrong-shape",
        lambda: _npz({"samples": np.zeros((50, 105))}),
        "wrong column count",
        ".npz",
    )
    add(
        "npz-no-samples",
        lambda: _npz({"data": np.zeros((50, raw_log.N_COLUMNS))}),
        "no 'samples' array",
        ".npz",
    )
    add(
        "npz-metadata-numbers",
        lambda: _npz({"samples": np.zeros((50, raw_log.N_COLUMNS)), "metadata": np.arange(3)}),
        "'metadata'",
        ".npz",
    )
    add(
        "npz-bomb-header",
        lambda: _npz({"samples.npy": _npy_header_only((10**10, raw_log.N_COLUMNS))}),
        "more than",
        ".npz",
    )
    add(
        "npz-nan-sample",
        lambda: _npz({"samples": np.full((50, raw_log.N_COLUMNS), np.nan)}),
        "sample 0",
        ".npz",
    )
    # binary containers and line endings a text log's name hid: once a wrong column count
    add("npz-named-csv", lambda: log_npz(), "is a zip archive (an .npz raw log?)")
    add("gz-named-csv", lambda: gzip.compress(log_text(), mtime=0), "is gzip-compressed")
    add("lone-cr-line-endings", lambda: log_text().replace(b"\n", b"\r"), "lone CR")
    cases.append(
        Case(
            "preprocess-log-is-folder",
            k,
            ("preprocess", "d.csv", "--out", "b"),
            2,
            "is a folder",
            (("mkdir", "d.csv"),),
        )
    )
    cases.append(
        Case(
            "preprocess-log-is-fifo",
            k,
            ("preprocess", "f.csv", "--out", "b"),
            2,
            "not a regular file",
            (("fifo", "f.csv"),),
        )
    )
    cases.append(
        Case(
            "preprocess-log-missing",
            k,
            ("preprocess", "none.csv", "--out", "b"),
            2,
            "no such file",
            (),
        )
    )
    cases.append(
        Case(
            "identify-log-105-fields",
            k,
            ("identify", "bad.csv", "--trajectory", CMD, "--out", "m.csv"),
            2,
            "wrong column count",
            (
                _w("bad.csv", lambda: log_text(lambda rows: [r[:-1] for r in rows])),
                _w(CMD, lambda: command_file_bytes()),
            ),
        )
    )
    return cases


def _cases_parameter_files() -> list[Case]:
    k = "model or truth file"
    cases = []

    def add(name, content, fragment, command=("audit", "bad.csv")):
        cases.append(
            Case(f"{command[0]}-model-{name}", k, command, 2, fragment, (_w("bad.csv", content),))
        )

    add("empty", b"", "empty parameter file")
    add("binary", bytes(range(256)), "not UTF-8")
    # read as LF text, a CR-only file was one comment line: "empty parameter file"
    add("lone-cr-line-endings", lambda: model_bytes().replace(b"\n", b"\r"), "lone CR")
    add(
        "bad-header",
        lambda: parameter_text(
            lambda ls: [("name;value;unit" if line.startswith("name,") else line) for line in ls]
        ),
        "header",
    )
    add(
        "wrong-field-count",
        lambda: parameter_text(_param_field("ZZR1", 2, "kg·m^2,extra")),
        "fields",
    )
    add(
        "unknown-name",
        lambda: parameter_text(_param_field("ZZR1", 0, "ZZR9")),
        "unknown parameter name",
    )
    add("repeated-name", lambda: parameter_text(_param_field("XXR2", 0, "ZZR1")), "repeated")
    add(
        "missing-parameter",
        lambda: parameter_text(lambda ls: [line for line in ls if not line.startswith("FV3,")]),
        "missing ['FV3']",
    )
    add("value-nan", lambda: parameter_text(_param_field("ZZR1", 1, "nan")), "is not a number")
    add(
        "value-full-width",
        lambda: parameter_text(_param_field("ZZR1", 1, "０.５")),
        "is not a number",
    )
    add("value-1e308", lambda: parameter_text(_param_field("ZZR1", 1, "1e308")), "magnitude")
    add(
        "value-huge-token",
        lambda: parameter_text(_param_field("ZZR1", 1, "1" * 100_000 + "z")),
        "characters)",
    )
    add("wrong-unit", lambda: parameter_text(_param_field("ZZR1", 2, "g·cm^2")), "unit")
    add("std-error-nan", lambda: parameter_text(_param_field("ZZR1", 3, "nan")), "standard error")
    add(
        "std-error-negative", lambda: parameter_text(_param_field("ZZR1", 3, "-0.1")), "is negative"
    )
    add(
        "std-error-nan",
        lambda: parameter_text(_param_field("ZZR1", 3, "nan")),
        "standard error",
        ("rescue", "bad.csv", "--out", "r.csv"),
    )
    add(
        "std-error-negative",
        lambda: parameter_text(_param_field("FV2", 3, "-1")),
        "is negative",
        ("rescue", "bad.csv", "--out", "r.csv"),
    )
    add(
        "binary",
        b"\x89PNG\r\n\x1a\n" + bytes(200),
        "not UTF-8",
        ("rescue", "bad.csv", "--out", "r.csv"),
    )
    add(
        "no-consistent-link-model",
        lambda: parameter_text(_param_field("ZZR7", 1, "-0.0001")),
        "--nearest",
        ("export", "bad.csv", "--urdf", "arm.urdf"),
    )
    # a model identify wrote: refused with the nearest model's change, not a traceback
    add(
        "identified-not-consistent",
        identified_model_bytes,
        "the smallest change that admits one (the nearest consistent model) is",
        ("export", "bad.csv", "--urdf", "arm.urdf"),
    )
    # far from any consistent model: cvxpy's warnings and Clarabel's statuses once reached the
    # terminal before the refusal; now the lacking second moment and the smallest change
    for name, parameter, value, fragment in (
        ("zzr7-minus-1000", "ZZR7", "-1000", "link 7's second moment along y"),
        ("zzr1-minus-1", "ZZR1", "-1", "the smallest change that admits one"),
        ("fv1-minus-5", "FV1", "-5", "FV1 = -5 is negative (a friction or rotor inertia is not)"),
    ):
        for extra in ((), ("--distance", "euclidean")):
            add(
                f"far-from-consistent-{name}" + ("-euclidean" if extra else ""),
                lambda p=parameter, v=value: parameter_text(_param_field(p, 1, v)),
                fragment,
                ("export", "bad.csv", "--urdf", "arm.urdf", *extra),
            )
    # link 7's decided second moment is 5e-7 kg·m^2: the default margin, not the model, is the cause
    add(
        "margin-is-the-cause",
        thin_hand_model_bytes,
        "the margin is the cause: with --margin 4.9e-07 or less",
        ("export", "bad.csv", "--urdf", "arm.urdf"),
    )
    cases.append(
        Case(
            "audit-model-is-folder", k, ("audit", "d.csv"), 2, "is a folder", (("mkdir", "d.csv"),)
        )
    )
    cases.append(
        Case(
            "audit-model-is-fifo",
            k,
            ("audit", "f.csv"),
            2,
            "not a regular file",
            (("fifo", "f.csv"),),
        )
    )
    cases.append(Case("audit-model-missing", k, ("audit", "none.csv"), 2, "no such file", ()))
    cmd = _w(CMD, lambda: command_file_bytes())
    for name, content, fragment in (
        ("negative-mass", lambda: truth_text("M3", -1.0), "M3: mass"),
        ("zero-mass", lambda: truth_text("M5", 0.0), "M5: mass"),
        ("non-physical-inertia", _pseudo_inertia_violation, "link 3"),
        ("zero-rotor-inertia", lambda: truth_text("IA2", 0.0), "IA2"),
        ("negative-friction", lambda: truth_text("FV4", -0.1), "FV4"),
        ("not-utf8", lambda: truth_bytes().replace(b"name,value", b"n\xe4me,value"), "not UTF-8"),
        ("reduced-set-not-standard", model_bytes, "missing"),
    ):
        cases.append(
            Case(
                f"record-truth-{name}",
                k,
                ("record", CMD, "--truth", "truth.csv", "--out", "x.npz"),
                2,
                fragment,
                (cmd, _w("truth.csv", content)),
            )
        )
    cases.append(
        Case(
            "record-truth-is-folder",
            k,
            ("record", CMD, "--truth", "t", "--out", "x.npz"),
            2,
            "is a folder",
            (cmd, ("mkdir", "t")),
        )
    )
    return cases


def _cases_gate() -> list[Case]:
    k = "not identifiable"
    cmd, v01 = (
        _w(CMD, lambda: command_file_bytes()),
        _w("V01.txt", lambda: command_file_bytes("V01")),
    )
    identify = ("identify", LOG, "--trajectory", CMD, "--out", "m.csv", "--refine", "none")
    crlf = _w(CMD, lambda: command_file_bytes().replace(b"\n", b"\r\n"))
    return [
        Case(
            "identify-wrong-trajectory",
            k,
            ("identify", LOG, "--trajectory", "V01.txt", "--out", "m.csv", "--refine", "none"),
            2,
            "not from --trajectory V01.txt",
            (_w(LOG, lambda: log_npz()), v01),
        ),
        Case(
            "identify-edited-trajectory",
            k,
            identify,
            2,
            "not from --trajectory",
            (_w(LOG, lambda: log_npz()), _w(CMD, lambda: command_file_bytes() + b"# edited\n")),
        ),
        # a CRLF copy of the command file the recording executed: named as a line-ending difference
        Case(
            "identify-trajectory-crlf-copy",
            k,
            identify,
            2,
            "except for its line endings",
            (_w(LOG, lambda: log_npz()), crlf),
        ),
        Case(
            "accept-trajectory-crlf-copy",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", "m.csv", "--refine", "none"),
            2,
            "it has CRLF (Windows) line endings",
            (_w(LOG, lambda: log_npz()), crlf),
        ),
        Case(
            "identify-log-without-hash",
            k,
            identify,
            2,
            "carry no command-file sha256",
            (_w(LOG, lambda: log_npz(drop_hash=True)), cmd),
        ),
        Case(
            "accept-wrong-trajectory",
            k,
            ("accept", LOG, "--trajectory", "V01.txt", "--out", "m.csv", "--refine", "none"),
            2,
            "not from --trajectory V01.txt",
            (_w(LOG, lambda: log_npz()), v01),
        ),
        Case(
            "accept-idle-only",
            k,
            ("accept", LOG, "--trajectory", CMD, "--out", "m.csv"),
            2,
            "too little motion",
            (_w(LOG, lambda: log_npz(still=True)), cmd),
        ),
        Case(
            "identify-idle-only",
            k,
            identify,
            2,
            "too little motion",
            (_w(LOG, lambda: log_npz(still=True)), cmd),
        ),
        Case(
            "identify-too-few-samples",
            k,
            (*identify, "--ts", "0.08"),
            2,
            "samples per parameter",
            (_w(LOG, lambda: log_npz(duration_s=8.0)), cmd),
        ),
        Case(
            "identify-hand-barely-moves",
            k,
            identify,
            2,
            "axis 8",
            (_w(LOG, lambda: log_npz(hand_amplitude=0.03)), cmd),
        ),
        Case(
            "identify-ill-conditioned",
            k,
            identify,
            2,
            "condition number",
            (_w(LOG, lambda: log_npz(hand_amplitude=0.15, hand_hz=0.02)), cmd),
        ),
    ]


def _cases_held_out() -> list[Case]:
    k = "held-out recording"
    log, cmd = _w(LOG, lambda: log_npz()), _w(CMD, lambda: command_file_bytes())
    accept = ("accept", LOG, "--trajectory", CMD, "--out", "m.csv", "--validation")
    same = "same samples as the training"
    return [
        Case("accept-validation-is-training-log", k, (*accept, LOG), 2, same, (log, cmd)),
        Case(
            "accept-validation-copy-of-training-log",
            k,
            (*accept, "copy.npz"),
            2,
            same,
            (log, cmd, _w("copy.npz", lambda: log_npz())),
        ),
        Case(
            "accept-validation-too-short",
            k,
            (*accept, "v.npz"),
            2,
            "too short to score",
            (log, cmd, _w("v.npz", lambda: log_npz(duration_s=1.0))),
        ),
    ]


def _cases_interrupts() -> list[Case]:
    k = "interrupt"
    # the longest command file (AG02, about two minutes of motion): its simulation outlasts the
    # delay even with the kernels cached (AP01's took under a second, and the signal came too late)
    model = _w(MODEL, model_bytes)
    long_cmd = _w("AG02.txt", lambda: command_file_bytes("AG02"))
    return [
        Case(
            "record-sigint",
            k,
            ("record", "AG02.txt", "--out", "x.npz"),
            130,
            "interrupted (SIGINT)",
            (long_cmd,),
            signal=(signal.SIGINT, 0.3),
        ),
        Case(
            "record-sigterm",
            k,
            ("record", "AG02.txt", "--out", "x.csv"),
            143,
            "interrupted (SIGTERM)",
            (long_cmd,),
            signal=(signal.SIGTERM, 0.3),
        ),
        Case(
            "rescue-sigint",
            k,
            ("rescue", MODEL, "--out", "r.csv"),
            130,
            "interrupted (SIGINT)",
            (model,),
            signal=(signal.SIGINT, 1.0),
        ),
    ]


def _cases_controls() -> list[Case]:
    """Good input: the same fixtures pass, so a refused case is refused for its fault alone."""
    k = "control (accepted)"
    log, cmd = _w(LOG, lambda: log_npz()), _w(CMD, lambda: command_file_bytes())
    identify = ("identify", LOG, "--trajectory", CMD, "--refine", "none", "--out")
    return [
        Case(
            "identify-good", k, (*identify, "m.csv"), 0, "written", (log, cmd), creates=("m.csv",)
        ),
        Case(
            "identify-force-replaces",
            k,
            (*identify, "m.csv", "--force"),
            0,
            "written",
            (log, cmd, _w("m.csv", b"old\n")),
            creates=("m.csv",),
        ),
        Case(
            "preprocess-good-text-log",
            k,
            ("preprocess", "good.csv", "--out", "b", "--intervals", "10"),
            0,
            "samples at 10 ms",
            (_w("good.csv", lambda: log_text()),),
            creates=("b", "b/bundle_010ms.npz"),
        ),
        Case(
            "preprocess-good-gz-log",
            k,
            ("preprocess", "good.csv.gz", "--out", "b", "--intervals", "10", "20"),
            0,
            "samples at 20 ms",
            (_w("good.csv.gz", lambda: gzip.compress(log_text(), mtime=0)),),
            creates=("b", "b/bundle_010ms.npz", "b/bundle_020ms.npz"),
        ),
        Case(
            "preprocess-repair-truncated",
            k,
            ("preprocess", "cut.csv", "--out", "b", "--intervals", "10", "--repair"),
            0,
            "repaired",
            (_w("cut.csv", lambda: log_text()[:-700]),),
            creates=("b", "b/bundle_010ms.npz"),
        ),
        Case(
            "export-good",
            k,
            ("export", MODEL, "--urdf", "arm.urdf", "--mjcf", "arm.xml"),
            0,
            "wrote",
            (_w(MODEL, model_bytes),),
            creates=("arm.urdf", "arm.xml"),
        ),
        Case(
            "export-identified-nearest",
            k,
            ("export", MODEL, "--urdf", "arm.urdf", "--nearest"),
            0,
            "exported the nearest",
            (_w(MODEL, identified_model_bytes),),
            creates=("arm.urdf",),
        ),
        Case(
            "export-far-from-consistent-nearest",
            k,
            ("export", MODEL, "--urdf", "arm.urdf", "--nearest"),
            0,
            "exported the nearest",
            (_w(MODEL, lambda: parameter_text(_param_field("ZZR7", 1, "-1000"))),),
            creates=("arm.urdf",),
        ),
        Case(
            "export-negative-friction-nearest",
            k,
            ("export", MODEL, "--mjcf", "arm.xml", "--nearest"),
            0,
            "exported the nearest",
            (_w(MODEL, lambda: parameter_text(_param_field("FV1", 1, "-5"))),),
            creates=("arm.xml",),
        ),
        Case(
            "export-thin-hand-smaller-margin",
            k,
            ("export", MODEL, "--urdf", "arm.urdf", "--margin", "4.9e-7"),
            0,
            "reproduces the model exactly",
            (_w(MODEL, thin_hand_model_bytes),),
            creates=("arm.urdf",),
        ),
    ]


ARM = "arm"  # the description folder a case gives as --robot
_ARM_SOURCE = "vx300s_description"  # the ViperX 300 s's shipped folder, copied and edited


def _arm_file(name: str, old: bytes = b"", new: bytes = b"") -> bytes:
    data = (DATA_DIR / _ARM_SOURCE / name).read_bytes()
    if old:
        if old not in data:
            raise RuntimeError(f"{_ARM_SOURCE}/{name} holds no {old!r}: the case would be void")
        data = data.replace(old, new, 1)
    return data


def _latin1_comment(name: str) -> bytes:
    data = _arm_file(name)
    first = data.index(b"\n") + 1
    return data[:first] + "# Müller\n".encode("latin-1") + data[first:]


def arm_folder(name: str | None = None, content=None) -> tuple:
    """Setup steps writing a copy of the ViperX 300 s's description folder as `arm/`, with file
    `name` replaced by `content` (bytes or a function; None: the file left out)."""
    steps = []
    for path in sorted((DATA_DIR / _ARM_SOURCE).iterdir()):
        if path.name != name:
            steps.append(_w(f"{ARM}/{path.name}", lambda n=path.name: _arm_file(n)))
        elif content is not None:
            steps.append(_w(f"{ARM}/{path.name}", content))
    return tuple(steps)


def _toml_edit(old: str, new: str) -> tuple:
    return arm_folder("arm.toml", lambda: _arm_file("arm.toml", old.encode(), new.encode()))


def _cases_arm_descriptions() -> list[Case]:
    """A description folder (`--robot FOLDER`) with one malformed value: refused by the schema
    (crane_lib.model.arm_schema) in one line naming the file and key, before anything is read."""
    k = "arm description"
    log, cmd, model = (
        _w(LOG, lambda: log_npz()),
        _w(CMD, lambda: command_file_bytes()),
        _w(MODEL, model_bytes),
    )
    runs = {
        "record": (("record", CMD, "--out", "x.npz"), (cmd,)),
        "identify": (("identify", LOG, "--trajectory", CMD, "--out", "m.csv"), (log, cmd)),
        "accept": (("accept", LOG, "--trajectory", CMD, "--out", "m.csv"), (log, cmd)),
        "preprocess": (("preprocess", LOG, "--out", "b"), (log,)),
        "export": (("export", MODEL, "--urdf", "arm.urdf"), (model,)),
        "audit": (("audit", MODEL), (model,)),
        "rescue": (("rescue", MODEL, "--out", "r.csv"), (model,)),
    }
    faults = (
        # name, command, the folder, fragment
        (
            "root-link-missing",
            "record",
            _toml_edit('root_link = "base_link"\n', ""),
            "key 'root_link' missing",
        ),
        (
            "gain-not-a-number",
            "export",
            _toml_edit("encoder_noise_fraction = 0.5", 'k_p = "abc"\nk_v = 60.0\nk_i = 6000.0'),
            "'controller.k_p'",
        ),
        ("baud-a-word", "record", _toml_edit("baud = 1000000", 'baud = "fast"'), "'bus.baud'"),
        ("baud-a-float", "accept", _toml_edit("baud = 1000000", "baud = 1e6"), "an integer"),
        (
            "gravity-a-word",
            "audit",
            _toml_edit("gravity_direction = [0, 0, -1]", 'gravity_direction = "down"'),
            "'gravity_direction'",
        ),
        (
            "gravity-off-axis",
            "rescue",
            _toml_edit("gravity_direction = [0, 0, -1]", "gravity_direction = [0, 0.6, -0.8]"),
            "along x, y or z",
        ),
        (
            "arm-joints-a-string",
            "accept",
            _toml_edit("arm_joints = [", 'arm_joints = "waist"\n# former = ['),
            "'arm_joints'",
        ),
        (
            "unknown-key",
            "identify",
            _toml_edit('root_link = "base_link"', 'root_lnk = "base_link"'),
            "unknown key 'root_lnk'",
        ),
        (
            "toml-latin-1",
            "identify",
            arm_folder("arm.toml", lambda: _latin1_comment("arm.toml")),
            "not UTF-8",
        ),
        (
            "links-latin-1",
            "preprocess",
            arm_folder("links.csv", lambda: _latin1_comment("links.csv")),
            "not UTF-8",
        ),
        ("toml-missing", "export", arm_folder("arm.toml"), "arm.toml"),
    )
    cases = []
    for name, command, folder, fragment in faults:
        argv, inputs = runs[command]
        cases.append(
            Case(
                f"{command}-robot-{name}",
                k,
                (*argv, "--robot", ARM),
                2,
                fragment,
                (*inputs, *folder),
            )
        )
    for command in ("record", "export"):
        argv, inputs = runs[command]
        cases.append(
            Case(
                f"{command}-robot-empty",
                k,
                (*argv, "--robot", ""),
                2,
                "--robot '': names no arm and no folder",
                inputs,
            )
        )
    return cases


# an arm's file for `crane-id describe`: two revolute joints on a base link, each fault one edit
_URDF_LINK = (
    '<link name="{n}"><inertial><origin xyz="0 0 0.1"/><mass value="{m}"/>'
    '<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{z}"/></inertial></link>\n'
)
_URDF_JOINT = (
    '<joint name="{n}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
    '<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>{extra}</joint>\n'
)
_URDF_LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def robot_urdf(
    kind: str = "revolute", mass: str = "1", inertia: str = "0.01", izz: str = "0.01", more=""
) -> bytes:
    """A two-link URDF; its second joint's type, its second link's mass and inertia edited."""
    extra = _URDF_LIMIT if kind in ("revolute", "prismatic") else ""
    text = (
        '<robot name="arm">\n<link name="base"/>\n'
        + _URDF_LINK.format(n="l1", m="1", i="0.01", z="0.01")
        + _URDF_LINK.format(n="l2", m=mass, i=inertia, z=izz)
        + _URDF_JOINT.format(n="j1", t="revolute", p="base", c="l1", extra=_URDF_LIMIT)
        + _URDF_JOINT.format(n="j2", t=kind, p="l1", c="l2", extra=extra)
        + more
        + "</robot>\n"
    )
    return text.encode()


_MJCF_CHAIN = """<mujoco><worldbody>
<body name="l1"><joint name="j1" axis="0 0 1" range="-1 1"/>
<inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/>
<body name="l2" pos="0 0 0.2"><joint name="j2" axis="0 1 0" range="-1 1"/>
<inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/></body></body>
<body name="other" pos="1 0 0"/></worldbody>{extra}</mujoco>
"""


def _cases_describe_excite() -> list[Case]:
    """`crane-id describe` on a URDF or MJCF file with one fault (crane_lib.model.describe), and
    `crane-id excite` on a refused arm or output: one line, exit 2, nothing written."""
    k = "robot file"
    servos = ("--servos", "XM430-W350,XM430-W350")

    def describe(name, content, fragment, *options, file="arm.urdf"):
        argv = ("describe", file, "--out", "d", *(options or servos))
        return Case(f"describe-{name}", k, argv, 2, fragment, (_w(file, content),))

    branch = _URDF_LINK.format(n="l3", m="1", i="0.01", z="0.01") + _URDF_JOINT.format(
        n="j3", t="revolute", p="l1", c="l3", extra=_URDF_LIMIT
    )
    mimic = _URDF_LINK.format(n="l3", m="1", i="0.01", z="0.01") + _URDF_JOINT.format(
        n="j3", t="revolute", p="l2", c="l3", extra=_URDF_LIMIT + '<mimic joint="j1"/>'
    )
    cases = [
        describe("neither-urdf-nor-mjcf", b'<sdf version="1.6"/>\n', "root element <sdf>"),
        describe("not-xml", b"<robot name='a'>\n<link>\n", "not XML"),
        describe("branch-without-tip", lambda: robot_urdf(more=branch), "branches into joints"),
        describe("floating-joint", lambda: robot_urdf("floating"), "is floating"),
        describe(
            "mimic-on-the-chain",
            lambda: robot_urdf(more=mimic),
            "mimics",
            "--arm-joints",
            "j1,j2",
            *servos,
        ),
        describe("continuous-arm-joint", lambda: robot_urdf("continuous"), "has no limits"),
        describe("negative-mass", lambda: robot_urdf(mass="-1"), "has mass -1 kg"),
        describe("indefinite-inertia", lambda: robot_urdf(inertia="-0.01"), "eigenvalues"),
        describe("triangle-inequality", lambda: robot_urdf(izz="0.03"), "triangle inequality"),
        describe(
            "unknown-servo",
            lambda: robot_urdf(),
            "unknown servo 'XM999'",
            "--servos",
            "XM430-W350,XM999",
        ),
        describe(
            "servo-count", lambda: robot_urdf(), "1 servos for 2 axes", "--servos", "XM430-W350"
        ),
        describe("tip-unknown", lambda: robot_urdf(), "is no link", "--tip", "nosuch", *servos),
        describe(
            "mjcf-closed-loop",
            _MJCF_CHAIN.format(
                extra='<equality><connect body1="l2" body2="other" anchor="0 0 0"/></equality>'
            ).encode(),
            "equality constraint",
            file="arm.xml",
        ),
        describe(
            "mjcf-tendon",
            _MJCF_CHAIN.format(
                extra='<tendon><fixed name="t"><joint joint="j1" coef="1"/>'
                '<joint joint="j2" coef="1"/></fixed></tendon>'
            ).encode(),
            "tendon 't' acts on the chain",
            file="arm.xml",
        ),
        Case(
            "describe-out-is-the-file",
            k,
            ("describe", "arm.urdf", "--out", "arm.urdf", *servos),
            2,
            "arm.urdf",
            (_w("arm.urdf", lambda: robot_urdf()),),
        ),
    ]
    a = "arm description"
    excite = ("excite", "--out", "t", "--robot")
    zero_outside = arm_folder(
        "joints.csv", lambda: _arm_file("joints.csv", b"-1.8500490071139892", b"0.1")
    )
    no_current = arm_folder(
        "actuators.csv",
        lambda: _arm_file("actuators.csv", b"XM430-W350,1.783,0.00269", b"XM430-W350,1.783,"),
    )
    faults = (
        ("crane-x7", "crane_x7", (), "has the paper's 40 trajectories"),
        ("no-such-arm", "nosuch", (), "is neither a shipped arm nor a folder"),
        ("empty-robot", "", (), "names no arm and no folder"),
        ("root-link-missing", ARM, _toml_edit('root_link = "base_link"\n', ""), "'root_link'"),
        ("unknown-key", ARM, _toml_edit('root_link = "base_link"', 'root_lnk = "b"'), "root_lnk"),
        (
            "gravity-off-axis",
            ARM,
            _toml_edit("gravity_direction = [0, 0, -1]", "gravity_direction = [0, 0.6, -0.8]"),
            "along x, y or z",
        ),
        ("toml-missing", ARM, arm_folder("arm.toml"), "arm.toml"),
        (
            "links-latin-1",
            ARM,
            arm_folder("links.csv", lambda: _latin1_comment("links.csv")),
            "not UTF-8",
        ),
        # a range that excludes zero: the blocks end at the range's point nearest zero, but the
        # sweep of the next axis up still leaves this one's range, which excite refuses
        ("sweep-outside-limits", ARM, zero_outside, "outside the joint limits"),
        ("unknown-current-unit", ARM, no_current, "column 'current_unit_A' is empty"),
    )
    for name, robot, setup, fragment in faults:
        cases.append(Case(f"excite-{name}", a, (*excite, robot), 2, fragment, setup))
    cases += [
        Case(
            "excite-out-is-a-file",
            "output path",
            ("excite", "--out", "t", "--robot", ARM),
            2,
            "is a file, not a folder",
            (*arm_folder(), _w("t", b"x\n")),
        ),
        Case(
            "excite-out-parent-missing",
            "output path",
            ("excite", "--out", "no/t", "--robot", ARM),
            2,
            "does not exist",
            arm_folder(),
        ),
    ]
    return cases


NOT_A_MANIFEST = b"name,value\nZZR1,0.1\n"


def _cases_other_programs() -> list[Case]:
    """The book's own command lines: the printed-numbers manifest and the benchmarks."""
    numbers, benchmarks = "python -m crane_book.numbers", "python -m benchmarks"
    html = (_w("html/index.html", b"<html></html>\n"),)
    return [
        Case(
            "numbers-write-over-a-model-file",
            "output path",
            ("write", "--html", "html", "--manifest", "model.csv"),
            2,
            "not a printed-numbers manifest, its contents would be lost",
            (*html, _w("model.csv", NOT_A_MANIFEST)),
            program=numbers,
        ),
        Case(
            "numbers-write-over-an-empty-file",
            "output path",
            ("write", "--html", "html", "--manifest", "empty.csv"),
            2,
            "not a printed-numbers manifest",
            (*html, _w("empty.csv", b"")),
            program=numbers,
        ),
        Case(
            "numbers-write-over-a-folder",
            "output path",
            ("write", "--html", "html", "--manifest", "d"),
            2,
            "d: is a folder",
            (*html, ("mkdir", "d")),
            program=numbers,
        ),
        Case(
            "benchmarks-empty-name",
            "option out of range",
            ("",),
            2,
            "benchmark '': expected (a part of) a benchmark's name",
            (),
            program=benchmarks,
        ),
        Case(
            "benchmarks-unknown-name",
            "option out of range",
            ("nosuch",),
            2,
            "benchmark nosuch: expected",
            (),
            program=benchmarks,
        ),
    ]


# --------------------------------------------------------------------------------------------
# the torque scale from a known weight and the payload (`crane-id calibrate`, `crane-id payload`)

SO101 = "so101"
CAL = "CAL.txt"
PI_ALPHA_SO101 = "PI_ALPHA.txt"


@cache
def _so101_calibration() -> tuple[bytes, bytes, bytes]:
    """The SO-101's calibration file and its twin recordings without and with a 0.3 kg weight
    (recorded from the file's bytes, so the logs carry its sha256)."""
    import tempfile

    from crane_lib.acceptance import torque_scale
    from crane_lib.excitation.arms import block_design
    from crane_lib.excitation.commands import write_command_file
    from crane_lib.twin import recorder
    from crane_lib.twin import truth as twin_truth

    arm = twin_truth.twin_arm(SO101)
    point = torque_scale.tool_point(arm, SO101)
    poses = torque_scale.calibration_poses(arm, SO101, point)
    with tempfile.TemporaryDirectory() as folder:
        path = write_command_file(
            Path(folder) / CAL,
            torque_scale.calibration_command(poses, block_design(arm).command_format),
        )
        logs = [
            _log_bytes(*recorder.record(path, seed=seed, arm=SO101, truth=truth), ".npz")
            for seed, truth in ((1, None), (2, twin_truth.with_payload(SO101, 0.3, point)))
        ]
        return path.read_bytes(), logs[0], logs[1]


@cache
def _so101_three_poses() -> bytes:
    """A calibration file of three poses: fewer than the SO-101's six axes."""
    import tempfile

    from crane_lib.acceptance import torque_scale
    from crane_lib.excitation.arms import block_design
    from crane_lib.excitation.commands import read_command_file, write_command_file

    fmt = block_design(_so101_arm()).command_format
    with tempfile.TemporaryDirectory() as folder:
        full = Path(folder) / CAL
        full.write_bytes(_so101_calibration()[0])
        poses = torque_scale.poses_of_command(read_command_file(full, fmt))[:3]
        short = torque_scale.calibration_command(poses, fmt, "CAL3")
        return write_command_file(Path(folder) / "CAL3.txt", short).read_bytes()


def _so101_arm():
    from crane_lib.twin.truth import twin_arm

    return twin_arm(SO101)


@cache
def _so101_model(drop: str = "", arm_name: str | None = None) -> bytes:
    """The SO-101 twin's truth in its reduced base parameters as a model file (one parameter
    left out with `drop`; another arm's name in its header with `arm_name`)."""
    from crane_lib.twin.truth import truth_parameters

    arm = _so101_arm()
    base = shared_model("reduced", arm=arm).base_from_standard(truth_parameters(SO101))
    keep = [i for i, n in enumerate(base.names) if n != drop]
    names = [base.names[i] for i in keep]
    meta = {"arm": arm.name if arm_name is None else arm_name}
    kept = ParameterSet(names, base.values[keep], None, meta)
    return _saved(lambda path: save_parameters(path, kept))


@cache
def _so101_alpha_log() -> bytes:
    """The SO-101's PI_ALPHA recorded on its twin."""
    from crane_lib.twin import recorder

    samples, metadata = recorder.record(TRAJECTORY_DIR / SO101 / PI_ALPHA_SO101, seed=1, arm=SO101)
    return _log_bytes(samples, metadata, ".npz")


def _cases_torque_scale_payload() -> list[Case]:
    """`crane-id calibrate` and `crane-id payload` refused: a mass not positive, fewer poses than
    axes, a recording or model of another arm, a model missing parameters, and the common
    output-path and option faults; one line, exit 2, nothing written."""
    k = "torque scale and payload"
    cal = _w(CAL, lambda: _so101_calibration()[0])
    unloaded = _w("unloaded.npz", lambda: _so101_calibration()[1])
    loaded = _w("loaded.npz", lambda: _so101_calibration()[2])
    setup = (cal, unloaded, loaded)
    fit = ("calibrate", "unloaded.npz", "loaded.npz", "--trajectory", CAL, "--robot", SO101)
    good = (*fit, "--mass", "0.3", "--out", "g.csv")
    alpha = _w("alpha.npz", _so101_alpha_log)
    alpha_cmd = _w(PI_ALPHA_SO101, lambda: (TRAJECTORY_DIR / SO101 / PI_ALPHA_SO101).read_bytes())
    model = _w(MODEL, _so101_model)
    payload = ("payload", "alpha.npz", "--trajectory", PI_ALPHA_SO101, "--robot", SO101)
    pay_setup = (alpha, alpha_cmd, model)
    cases = [
        Case("calibrate-mass-zero", k, (*fit, "--mass", "0", "--out", "g.csv"), 2, "--mass", setup),
        Case(
            "calibrate-mass-negative",
            k,
            (*fit, "--mass", "-0.2", "--out", "g.csv"),
            2,
            "expected a number in (0, 5] kg",
            setup,
        ),
        Case(
            "calibrate-mass-too-heavy", k, (*fit, "--mass", "50", "--out", "g.csv"), 2, "50", setup
        ),
        Case(
            "calibrate-mass-nan", k, (*fit, "--mass", "nan", "--out", "g.csv"), 2, "finite", setup
        ),
        Case(
            "calibrate-fewer-poses-than-axes",
            k,
            ("calibrate", "--robot", SO101, "--write-poses", "C.txt", "--poses", "3"),
            2,
            "fewer poses than axes",
        ),
        Case(
            "calibrate-poses-zero",
            k,
            ("calibrate", "--robot", SO101, "--write-poses", "C.txt", "--poses", "0"),
            2,
            "--poses",
        ),
        Case(
            "calibrate-file-of-three-poses",
            k,
            ("calibrate", "unloaded.npz", "loaded.npz", "--trajectory", "CAL3.txt", "--robot")
            + (SO101, "--mass", "0.3", "--out", "g.csv"),
            2,
            "3 poses",
            (*setup, _w("CAL3.txt", _so101_three_poses)),
        ),
        Case(
            "calibrate-one-log",
            k,
            ("calibrate", "unloaded.npz", "--trajectory", CAL, "--robot", SO101, "--mass", "0.3")
            + ("--out", "g.csv"),
            2,
            "two LOGs",
            setup,
        ),
        Case("calibrate-no-mass", k, (*fit, "--out", "g.csv"), 2, "--mass: missing", setup),
        Case(
            "calibrate-log-of-another-arm",
            k,
            ("calibrate", LOG, "loaded.npz", "--trajectory", CAL, "--robot", SO101)
            + ("--mass", "0.3", "--out", "g.csv"),
            2,
            "was recorded on the arm crane_x7",
            (*setup, _w(LOG, lambda: log_npz())),
        ),
        Case(
            "calibrate-not-a-calibration-file",
            k,
            ("calibrate", "unloaded.npz", "loaded.npz", "--trajectory", PI_ALPHA_SO101)
            + ("--robot", SO101, "--mass", "0.3", "--out", "g.csv"),
            2,
            "per pose",
            (*setup, alpha_cmd),
        ),
        Case(
            "calibrate-recording-of-another-file",
            k,
            ("calibrate", "alpha.npz", "loaded.npz", "--trajectory", CAL, "--robot", SO101)
            + ("--mass", "0.3", "--out", "g.csv"),
            2,
            "records the command file",
            (*setup, alpha),
        ),
        Case("calibrate-out-exists", k, good, 2, "exists", (*setup, _w("g.csv", b"x\n"))),
        Case(
            "calibrate-out-is-log",
            k,
            (*fit, "--mass", "0.3", "--out", "loaded.npz"),
            2,
            "is the input",
            setup,
        ),
        Case(
            "calibrate-logs-with-write-poses",
            k,
            ("calibrate", "unloaded.npz", "--robot", SO101, "--write-poses", "C.txt"),
            2,
            "given with --write-poses",
            setup,
        ),
        Case(
            "calibrate-point-out-of-range",
            k,
            (*good, "--point", "5", "0", "0"),
            2,
            "--point",
            setup,
        ),
        Case(
            "payload-model-missing",
            k,
            (*payload, "--model", "none.csv", "--out", "m2.csv"),
            2,
            "none.csv",
            pay_setup,
        ),
        Case(
            "payload-model-missing-parameter",
            k,
            (*payload, "--model", "short.csv", "--out", "m2.csv"),
            2,
            "MXR5",
            (*pay_setup, _w("short.csv", lambda: _so101_model(drop="MXR5"))),
        ),
        Case(
            "payload-model-of-another-arm",
            k,
            (*payload, "--model", "vx.csv", "--out", "m2.csv"),
            2,
            "is a model of the arm 'ViperX 300 S'",
            (*pay_setup, _w("vx.csv", lambda: _so101_model(arm_name="ViperX 300 S"))),
        ),
        Case(
            "payload-log-of-another-arm",
            k,
            ("payload", LOG, "--trajectory", PI_ALPHA_SO101, "--robot", SO101, "--model", MODEL)
            + ("--out", "m2.csv"),
            2,
            "was recorded on the arm crane_x7",
            (*pay_setup, _w(LOG, lambda: log_npz())),
        ),
        Case(
            "payload-out-exists",
            k,
            (*payload, "--model", MODEL, "--out", "m2.csv"),
            2,
            "exists",
            (*pay_setup, _w("m2.csv", b"x\n")),
        ),
        Case(
            "payload-out-is-model",
            k,
            (*payload, "--model", MODEL, "--out", MODEL),
            2,
            "is the input",
            pay_setup,
        ),
        Case(
            "payload-ts-out-of-range",
            k,
            (*payload, "--model", MODEL, "--out", "m2.csv", "--ts", "0.5"),
            2,
            "--ts",
            pay_setup,
        ),
        Case(
            "payload-trajectory-missing",
            k,
            ("payload", "alpha.npz", "--trajectory", "none.txt", "--robot", SO101)
            + ("--model", MODEL, "--out", "m2.csv"),
            2,
            "none.txt",
            pay_setup,
        ),
        Case(
            "payload-trajectory-of-another-recording",
            k,
            ("payload", "alpha.npz", "--trajectory", CAL, "--robot", SO101)
            + ("--model", MODEL, "--out", "m2.csv"),
            2,
            "sha256",
            (*pay_setup, cal),
        ),
        Case(
            "payload-log-missing",
            k,
            ("payload", "none.npz", "--trajectory", PI_ALPHA_SO101, "--robot", SO101)
            + ("--model", MODEL, "--out", "m2.csv"),
            2,
            "none.npz",
            pay_setup,
        ),
        Case(
            "payload-robot-unknown",
            k,
            ("payload", "alpha.npz", "--trajectory", PI_ALPHA_SO101, "--robot", "nosuch")
            + ("--model", MODEL, "--out", "m2.csv"),
            2,
            "nosuch",
            pay_setup,
        ),
    ]
    return cases


@lru_cache(maxsize=1)
def cases() -> tuple[Case, ...]:
    """Every case of the corpus, in a fixed order; names are unique."""
    everything = (
        _cases_output_paths()
        + _cases_options()
        + _cases_command_files()
        + _cases_raw_logs()
        + _cases_parameter_files()
        + _cases_gate()
        + _cases_held_out()
        + _cases_arm_descriptions()
        + _cases_describe_excite()
        + _cases_other_programs()
        + _cases_torque_scale_payload()
        + _cases_interrupts()
        + _cases_controls()
    )
    names = [c.name for c in everything]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise RuntimeError(f"corpus case names repeat: {duplicated}")
    return tuple(everything)


# --------------------------------------------------------------------------------------------
# running a case


def build(case: Case, folder: Path) -> None:
    """Set up the scratch folder of a case."""
    folder = Path(folder)
    for step in case.setup:
        kind, name = step[0], folder / step[1]
        if kind == "write":
            content = step[2]() if callable(step[2]) else step[2]
            name.parent.mkdir(parents=True, exist_ok=True)
            name.write_bytes(content)
        elif kind == "mkdir":
            name.mkdir(parents=True, exist_ok=True)
        elif kind == "fifo":
            os.mkfifo(name)
        elif kind == "symlink":
            os.symlink(step[2], name)
        elif kind == "hardlink":
            os.link(folder / step[2], name)
        elif kind == "chmod":
            os.chmod(name, step[2])
        else:
            raise ValueError(f"unknown setup step {kind!r}")


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder` (symlinks not followed, FIFOs not opened): kind, and for files
    their size, modification time and sha256."""
    state = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            info = path.lstat()
            relative = str(path.relative_to(folder))
            if stat.S_ISREG(info.st_mode):
                state[relative] = (
                    "file",
                    info.st_size,
                    info.st_mtime_ns,
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
            elif stat.S_ISLNK(info.st_mode):
                state[relative] = ("link", os.readlink(path))
            else:
                state[relative] = (
                    "dir" if stat.S_ISDIR(info.st_mode) else "special",
                    stat.S_IFMT(info.st_mode),
                    info.st_mode,
                )
    return state


def changes(before: dict, after: dict) -> list[str]:
    """The names whose content differs between two snapshots of a folder."""
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


def problems(case: Case, outcome: Outcome) -> list[str]:
    """What is wrong with an outcome (empty when the case passes): the exit status, the message
    fragment, a traceback, a message of more than one line or 600 characters, a changed file
    (a control: anything but its outputs)."""
    found = []
    if outcome.status != case.status:
        found.append(f"exit status {outcome.status}, expected {case.status}")
    if case.fragment not in outcome.message:
        found.append(f"message lacks {case.fragment!r}")
    if "Traceback" in outcome.stderr:
        found.append("a traceback")
    if case.status == 0:
        if outcome.changed != sorted(set(case.creates)):
            found.append(f"changed {outcome.changed}, expected {sorted(set(case.creates))}")
    else:
        if outcome.changed:
            found.append(f"files changed: {outcome.changed}")
        if len(outcome.stderr.strip().splitlines()) != 1:
            found.append(f"{len(outcome.stderr.strip().splitlines())} lines on stderr")
        if len(outcome.stderr) >= 600:
            found.append(f"a message of {len(outcome.stderr)} characters")
    return found


def skipped_reason(case: Case, signals: bool = True) -> str | None:
    """Why the case cannot run here (root, signals), or None."""
    if case.needs_non_root and os.geteuid() == 0:
        return "root ignores file permissions"
    if case.signal is not None and not signals:
        return "sends a signal to a separate process (run by the test suite)"
    return None


def run_all(
    signals: bool = False, progress: bool = True
) -> list[tuple[Case, Outcome | None, list[str]]]:
    """Every case, each in its own temporary folder: (case, outcome or None when skipped,
    problems)."""
    import tempfile

    from tqdm import tqdm  # a console bar: tqdm.auto warns in a page without ipywidgets

    results = []
    for case in tqdm(cases(), desc="bad-input corpus", unit="case", disable=not progress):
        if skipped_reason(case, signals):
            results.append((case, None, []))
            continue
        with tempfile.TemporaryDirectory() as folder:
            outcome = run_case(case, Path(folder))
        results.append((case, outcome, problems(case, outcome)))
    return results


def run_case(case: Case, folder: Path) -> Outcome:
    """Build the case in `folder` (empty), run it, and report status, output and changed files."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    build(case, folder)
    before = snapshot(folder)
    if case.signal is None:
        status, out, err = _run_in_process(case.argv, folder, case.program)
    else:
        status, out, err = _run_with_signal(case.argv, folder, *case.signal)
    return Outcome(status, out, err, changes(before, snapshot(folder)))


def _run_in_process(argv, folder: Path, program: str = CRANE_ID) -> tuple[int, str, str]:
    import importlib

    module, function = PROGRAMS[program]
    if str(REPO_ROOT) not in sys.path:  # `benchmarks` is the repository's, not an installed one
        sys.path.append(str(REPO_ROOT))  # (the book's page runs from book/)
    main = getattr(importlib.import_module(module), function)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as exit_:  # an argparse refusal of a program's own parser
                status = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.chdir(here)
    return status, out.getvalue(), err.getvalue()


def _run_with_signal(argv, folder: Path, signum: int, delay_s: float) -> tuple[int, str, str]:
    """Run `crane-id` as its own process; once it has printed its first line (its work has
    begun), wait `delay_s` seconds and send it `signum`."""
    import threading

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    process = subprocess.Popen(
        [sys.executable, "-m", "crane_lib.cli", *argv],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    started = threading.Event()

    def read_stdout():
        for line in process.stdout:
            lines.append(line)
            started.set()
        started.set()

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    err_chunks: list[str] = []
    err_reader = threading.Thread(
        target=lambda: err_chunks.append(process.stderr.read()), daemon=True
    )
    err_reader.start()
    started.wait(timeout=300)
    if process.poll() is None:
        try:
            process.wait(timeout=delay_s)
        except subprocess.TimeoutExpired:
            process.send_signal(signum)
    process.wait(timeout=300)
    reader.join(timeout=10)
    err_reader.join(timeout=10)
    return process.returncode, "".join(lines), "".join(err_chunks)


# --------------------------------------------------------------------------------------------
# the new-recording report: the same checks as `crane-id accept`, run through papermill


@dataclass(frozen=True)
class NotebookCase:
    """One papermill run of the new-recording report (chapters/your_arm.py) on bad input.

    parameters  the papermill parameters (`-p NAME VALUE`), as the papermill CLI would parse them
    setup       the scratch folder's files, as for a `Case`; the notebook runs with it as its cwd
    fragment    text the error the executed notebook shows must contain
    """

    name: str
    klass: str
    parameters: tuple[tuple[str, object], ...]
    fragment: str
    setup: tuple = ()


REPORT_CHAPTER = REPO_ROOT / "chapters" / "your_arm.py"


def notebook_cases() -> tuple[NotebookCase, ...]:
    """Every bad input the new-recording report must refuse before it computes or writes."""
    log, cmd = _w(LOG, lambda: log_npz()), _w(CMD, lambda: command_file_bytes())
    v01 = _w("V01.txt", lambda: command_file_bytes("V01"))
    base = (("log", LOG), ("trajectory", CMD), ("refine", "none"))

    def case(name, klass, fragment, setup, **parameters):
        given = {**dict(base), "out": "m.csv", **parameters}
        return NotebookCase(f"report-{name}", klass, tuple(given.items()), fragment, setup)

    paths, gate_k, options = "output path", "not identifiable", "option out of range"
    params = "report parameter"
    return (
        case("out-is-log", paths, "is the input", (log, cmd), out=LOG),
        case("out-is-command-file", paths, "is the input", (log, cmd), out=CMD),
        case(
            "out-is-validation-log",
            paths,
            "is the input",
            (log, cmd, _w("v.npz", lambda: log_npz())),
            out="v.npz",
            validation='["v.npz"]',
        ),
        case("out-exists", paths, "-p force True", (log, cmd, _w("m.csv", b"keep\n"))),
        case("out-under-proc", paths, "pseudo-filesystem", (log, cmd), out="/proc/m.csv"),
        case(
            "out-is-folder", paths, "is a folder", (log, cmd, ("mkdir", "d")), out="d", force=True
        ),
        case(
            "force-as-text",
            options,
            "is not a yes/no value",
            (log, cmd, _w("m.csv", b"keep\n")),
            force="true",
        ),
        case("ts-off-grid", options, "not a whole number of milliseconds", (log, cmd), ts=0.0405),
        case(
            "wrong-trajectory",
            gate_k,
            "not from --trajectory V01.txt",
            (log, v01),
            trajectory="V01.txt",
        ),
        case(
            "log-without-hash",
            gate_k,
            "carry no command-file sha256",
            (_w(LOG, lambda: log_npz(drop_hash=True)), cmd),
        ),
        case(
            "validation-not-json",
            "held-out recording",
            "is not a JSON list",
            (log, cmd),
            validation='["v.npz", ',
        ),
        case(
            "validation-is-training-log",
            "held-out recording",
            "same samples as the training",
            (log, cmd, _w("copy.npz", lambda: log_npz())),
            validation="copy.npz",
        ),
        case(
            "validation-too-short",
            "held-out recording",
            "too short to score",
            (log, cmd, _w("v.npz", lambda: log_npz(duration_s=1.0))),
            validation='["v.npz"]',
        ),
        # papermill's -p reads a number as one, whatever the parameter means (a raw TypeError)
        case(
            "trajectory-is-number",
            params,
            "trajectory '5': is a number, not a path",
            (log,),
            trajectory=5,
        ),
        case("log-is-number", params, "log '5': is a number, not a path", (cmd,), log=5),
        case("out-is-number", params, "out '7': is a number, not a path", (log, cmd), out=7),
    )


@cache
def report_notebook() -> Path:
    """The new-recording report as a notebook (jupytext, as the README's command makes it), in a
    temporary folder of this process, removed when the process exits."""
    import atexit
    import shutil
    import tempfile

    import jupytext

    folder = tempfile.mkdtemp(prefix="corpus-report-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "your_arm.ipynb"
    jupytext.write(jupytext.read(REPORT_CHAPTER), path)
    return path


def run_notebook_case(case: NotebookCase, folder: Path, report: Path) -> Outcome:
    """Build the case in `folder`, run the report through the papermill CLI with `folder` as its
    cwd (the executed notebook goes to `report`, outside it), and report status, papermill's
    stderr and the changed files; stdout holds the error the executed notebook shows."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    build(case, folder)
    before = snapshot(folder)
    argv = [
        sys.executable,
        "-m",
        "papermill",
        str(report_notebook()),
        str(report),
        "--cwd",
        str(folder),
        "--kernel",
        "python3",
        "--no-progress-bar",
    ]
    for name, value in case.parameters:
        # -p parses True, numbers and text as papermill does; -r keeps text as given
        argv += ["-p" if isinstance(value, (bool, int, float)) else "-r", name, str(value)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    process = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    shown_errors = []
    if Path(report).is_file():
        for cell in json.loads(Path(report).read_text(encoding="utf-8"))["cells"]:
            shown_errors += [
                "\n".join(o.get("traceback", []))
                for o in cell.get("outputs", [])
                if o.get("output_type") == "error"
            ]
    return Outcome(
        process.returncode,
        "\n".join(shown_errors),
        process.stderr,
        changes(before, snapshot(folder)),
    )


def notebook_problems(case: NotebookCase, outcome: Outcome) -> list[str]:
    """What is wrong with a report's outcome: a zero exit status, an executed notebook that does
    not show the expected message as its one error line, a changed file."""
    found = []
    if outcome.status == 0:
        found.append("papermill exited 0")
    if case.fragment not in outcome.stdout or case.fragment not in outcome.stderr:
        found.append(f"message lacks {case.fragment!r}")
    if len(outcome.stdout.strip().splitlines()) != 1:
        found.append(f"the notebook shows {len(outcome.stdout.strip().splitlines())} error lines")
    if outcome.changed:
        found.append(f"files changed: {outcome.changed}")
    return found


# --------------------------------------------------------------------------------------------
# tables of a run (the book's "Bad input" page)


def _last_line(outcome: Outcome | None) -> str:
    return (
        outcome.message.strip().splitlines()[-1]
        if outcome is not None and outcome.message.strip()
        else ""
    )


def class_table(results):
    """One row per class of bad input: cases, subcommands, exit statuses, how many behaved as
    expected in this run, and one message as it was printed."""
    import pandas as pd

    rows = []
    for klass in dict.fromkeys(c.klass for c, _, _ in results):
        members = [(c, o, p) for c, o, p in results if c.klass == klass]
        example = next((o for _, o, _ in members if o is not None), None)
        rows.append(
            {
                "class": klass,
                "cases": len(members),
                "subcommands": ", ".join(sorted({c.command for c, _, _ in members})),
                "exit status": ", ".join(str(s) for s in sorted({c.status for c, _, _ in members})),
                "as expected here": f"{sum(o is not None and not p for _, o, p in members)} of "
                f"{sum(o is not None for _, o, _ in members)}",
                "example message": _last_line(example)
                if example is not None
                else f"(expects {members[0][0].fragment!r}: run by the tests)",
            }
        )
    return pd.DataFrame(rows)


def case_table(results):
    """Every case: name, class, command line, expected status and fragment, and what happened
    here."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "case": c.name,
                "class": c.klass,
                "command": " ".join([c.program, *(a or "''" for a in c.argv)]),
                "status": c.status,
                "fragment": c.fragment,
                "here": "skipped" if o is None else ("as expected" if not p else "; ".join(p)),
            }
            for c, o, p in results
        ]
    )
