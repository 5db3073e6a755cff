"""Errors for bad input: each names the file (or entry), the line or sample, and what was expected.

Shared by every reader and the command-line tool:
- `InputError(where, problem, expected)`: the one exception of bad input;
- `shown(text)`: a token as echoed in a message, truncated, so a 3 MB bad field is not printed
whole;
- `parse_number(text, where, what)`: the one strict reader of a decimal number in a text input
  (ASCII digits only: no full-width digits, no '_' separators, no 'nan'/'inf');
- `read_input_bytes(path, what, max_bytes)`: a file's bytes, or an InputError for a missing file,
  a folder, a FIFO or device, a file too large, or any OS error while reading;
- `atomic_write(path)`: write to a temporary file, rename over `path` only on success;
  a command's output (`declare_output`) without --force is created exclusively instead;
  `atomic_write_files` and `atomic_write_folder` put several files in place as one: the renames
  are listed first in a journal (`.crane-commit.<pid>.json` in each target folder), so that a
  run killed between two renames is completed by the next run that writes there
  (`complete_commits`): the files are all old or all new, never a mix, once it has run;
- temporary files are named `.NAME.<pid>.<random>.tmp` (a recording's partial files
  `NAME.<pid>.partial.*`): a command's next run removes those its killed predecessors left
  beside its outputs (`remove_stale_temporaries`, one line on stderr), never a live process's;
- an OS error while writing (ENOSPC, EROFS, EACCES) names the output file, not the temporary;
- `interruptible()`: SIGINT and SIGTERM become `Interrupted` (exit 130 / 143) wherever they
  land, so a `finally` or an atomic write cleans up and nothing partial is left; once an output
  is in place (`written_outputs`) a signal no longer stops the command: it finishes, exit 0.
"""

from __future__ import annotations

import _thread
import csv
import errno
import json
import math
import os
import queue
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path


class InputError(ValueError):
    """Bad input: `where` is a file, a file:line, a sample, or a parameter name."""

    def __init__(self, where: str, problem: str, expected: str | None = None):
        self.where = str(where)
        self.problem = problem
        self.expected = expected
        text = f"{self.where}: {problem}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)

    def __reduce__(self):
        # a worker process (a sweep, the data set, the pages) sends its exception back pickled;
        # the default would call __init__ with the message alone and the pool would report a
        # broken process instead of the file and what was expected
        return type(self), (self.where, self.problem, self.expected)

    def _render_traceback_(self):
        """The lines IPython shows for this error in a notebook: the one-line message alone (a
        refused input is the reader's to fix, and a traceback would bury what was expected)."""
        return [f"{type(self).__name__}: {self}"]


# a decimal number as text inputs write it: optional sign, ASCII digits, optional fraction and
# exponent. Python's float() also takes '６０', '6_0', ' nan', 'infinity': none of them is a
# number a logger or an editor writes, so every text reader uses this instead.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
SHOWN_CHARACTERS = 40


def shown(text, limit: int = SHOWN_CHARACTERS) -> str:
    """`text` as a message echoes it: repr, cut to `limit` characters with the full length noted."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def parse_number(
    text, where: str, what: str = "a finite decimal number", field: str = "value"
) -> float:
    """The finite float written in `text` (surrounding blanks allowed), else an InputError at
    `where`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    token = text.strip()
    if not _NUMBER.fullmatch(token):
        raise InputError(where, f"{field} {shown(token)} is not a number", what)
    value = float(token)
    if not math.isfinite(value):  # a token of 400 digits or an exponent beyond 308
        raise InputError(where, f"{field} {shown(token)} overflows a double", what)
    return value


def parse_integer(text, where: str, what: str = "an integer", field: str = "value") -> int:
    """The integer written in ASCII digits in `text`, else an InputError at `where`."""
    token = str(text).strip()
    if len(token) > 19 or not _INTEGER.fullmatch(token):
        raise InputError(where, f"{field} {shown(token)} is not an integer", what)
    return int(token)


def regular_file(path, what: str) -> os.stat_result:
    """The stat of an input that must be an existing regular file: a folder, FIFO or device
    (reading those would block or never end), a missing file or an OS error is an InputError
    naming it. `what` says what the file should be."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(str(path), "no such file", what) from None
    except OSError as error:
        raise InputError(str(path), f"cannot be read ({error.strerror or error})", what) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(str(path), "is a folder", what)
    if not stat.S_ISREG(info.st_mode):
        raise InputError(str(path), "is not a regular file (a FIFO, socket or device)", what)
    return info


def read_input_bytes(path, what: str, max_bytes: int) -> bytes:
    """The bytes of an input file, checked: it exists, is a regular file (not a folder, FIFO or
    device: reading those would block or never end), holds at most `max_bytes`, and reads
    without an OS error. `what` says what the file should be."""
    path = Path(path)
    info = regular_file(path, what)
    if info.st_size > max_bytes:
        raise InputError(
            str(path), f"{info.st_size:,} bytes", f"{what} of at most {max_bytes:,} bytes"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise InputError(str(path), f"cannot be read ({error.strerror or error})", what) from None
    if len(data) > max_bytes:  # grew while being read
        raise InputError(str(path), f"more than {max_bytes:,} bytes", what)
    return data


def read_input_text(path, what: str, max_bytes: int) -> str:
    """`read_input_bytes` decoded as UTF-8 (a leading byte-order mark is dropped)."""
    return decode_utf8(read_input_bytes(path, what, max_bytes), path, what)


def decode_utf8(data: bytes, path, what: str) -> str:
    """`data` as UTF-8 text (a leading byte-order mark dropped); an InputError names the line of a
    bad byte, or of a lone CR line ending."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}",
            f"byte {error.start} (0x{data[error.start]:02x}) is not UTF-8 text",
            what,
        ) from None
    check_line_endings(text, path, what)
    return text


_LONE_CR = re.compile(r"\r(?!\n)")


def check_line_endings(text, path, what: str) -> None:
    """An InputError at the first line that ends in a lone CR (a carriage return without a line
    feed, as classic Mac OS wrote): read as LF text, such a file is one long line, and a reader
    would call it empty or name a wrong field count instead."""
    if isinstance(text, bytes):
        found = re.search(rb"\r(?!\n)", text)
        newline = b"\n"
    else:
        found = _LONE_CR.search(text)
        newline = "\n"
    if found is None:
        return
    line = text.count(newline, 0, found.start()) + 1
    raise InputError(
        f"{path}:{line}",
        "its lines end in a lone CR (carriage return without line feed, as classic Mac OS wrote)",
        f"{what}, lines ending in LF or CRLF",
    )


# Each job is a process with its own Jupyter kernel and compiled model: past the cores of one
# machine more of them only contend for the cores while the memory grows. 256 is above the core
# count of any machine the book is built on and far below a count that is surely a typo.
MAX_JOBS = 256


def job_count(value) -> int:
    """The number of processes `value` names: a whole number from 1 to MAX_JOBS (every --jobs
    of the book's and the data set's commands)."""
    text = str(value).strip()
    if not re.fullmatch(r"[0-9]{1,6}", text) or not 1 <= int(text) <= MAX_JOBS:
        raise ValueError(f"expected a whole number of processes from 1 to {MAX_JOBS}")
    return int(text)


def refuse_option(parser, option: str, value, error: Exception):
    """End an argparse command with one line naming the option, the value and what was expected,
    exit status 2 (argparse's own `error` would print its usage block first)."""
    parser.exit(2, f"{parser.prog}: error: {option} {shown(value)}: {error}\n")


# --------------------------------------------------------------------------------------------
# interrupts


class Interrupted(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM arrived; `exit_status` is 128 + the signal number (130, 143).

    A BaseException like KeyboardInterrupt: no `except Exception` swallows it, and every
    `finally` and `atomic_write` on the way out runs."""

    def __init__(self, signum: int):
        self.signum = signum
        self.exit_status = 128 + signum
        super().__init__(signal.Signals(signum).name)


_pending: list[int] = []  # signals received inside interruptible(), newest last
# per command (reset by interruptible()): its outputs put in place, signals that came after one
# was, and its declared outputs (resolved path -> must still be absent when written)
_written: list[Path] = []
_late: list[int] = []
_outputs: dict[str, bool] = {}
_in_command: list[bool] = []  # [True] inside interruptible(): only then are outputs declared
_held: list[list[int]] = []  # per `_signals_held` block (innermost last): the signals held back
_label: list[str] = []  # how the running command names itself in a message ('crane-id export')
REDELIVERY_DELAY_S = 0.005  # a signal dropped inside a native callback is sent again after this


def interrupt_pending() -> int | None:
    """The signal received inside `interruptible()`, if any: code that swallows exceptions from a
    native solver (which may turn a Ctrl-C into its own failure) checks this and re-raises."""
    return _pending[-1] if _pending else None


def written_outputs() -> list[Path]:
    """The declared outputs this command has put in place so far (by `atomic_write` and
    `atomic_write_files`), in order; a cache file written on the way is none of them."""
    return list(_written)


def late_signal() -> int | None:
    """A signal that arrived after an output was in place (it did not stop the command)."""
    return _late[-1] if _late else None


def _output_key(path) -> str:
    return str(Path(path).resolve())


def declare_output(path, new: bool) -> None:
    """Declare `path` an output of the running command (inside `interruptible()`; elsewhere a
    no-op). Once it is in place a signal no longer stops the command. With `new` it must still
    be absent when written: the atomic write creates it exclusively, so that of two runs racing
    to the same new name the later gets an InputError and writes nothing."""
    if _in_command:
        _outputs[_output_key(path)] = bool(new)
        remove_stale_temporaries(path)


def name_command(label: str) -> None:
    """How the running command's own messages (`remove_stale_temporaries`) begin, e.g.
    'crane-id export' (inside `interruptible()`; reset when it ends)."""
    _label[:] = [label]


def raise_if_interrupted() -> None:
    """Raise Interrupted if a signal arrived while a native call turned it into something else."""
    if _pending:
        raise Interrupted(_pending[-1])


@contextmanager
def interruptible():
    """Inside the block, SIGINT and SIGTERM raise `Interrupted` (and are remembered for
    `interrupt_pending`); the previous handlers come back afterwards. Only the main thread can
    install handlers: elsewhere the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if _called_from(frame, unraisable.__code__):
            # raised inside the hook, the exception would be dropped as well (a loaded host can
            # keep the hook waiting for its thread's start longer than the delay): owe it again
            owed.put(signum)
            return
        if _held:  # an output is being put in place: decided when that ends
            _held[-1].append(signum)
            return
        if _written:  # an output is in place: stopping now would only misreport it as unwritten
            _late.append(signum)
            return
        _pending.append(signum)
        raise Interrupted(signum)

    def unraisable(info):
        # a signal that arrives while Python runs inside a callback from native code (numba's
        # LLVM object cache is one) raises there, and ctypes can only print and drop the
        # exception: deliver the signal again a moment later, from another thread, so that it
        # is raised once the callback has returned (again later if it had not)
        if isinstance(info.exc_value, Interrupted):
            owed.put(info.exc_value.signum)
            if not redelivery:
                redelivery.append(threading.Thread(target=redeliver, daemon=True))
                redelivery[0].start()
            return
        previous_hook(info)

    def redeliver():
        while (signum := owed.get()) is not None:  # one delivery for each signal owed
            time.sleep(REDELIVERY_DELAY_S)
            if active:  # not after the block has ended (its handlers are gone by then)
                _thread.interrupt_main(signum)

    owed: queue.SimpleQueue = queue.SimpleQueue()  # dropped signals to deliver again; None ends
    redelivery: list[threading.Thread] = []
    active = True
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    _reset_command_state()
    _in_command.append(True)
    try:
        yield
    finally:
        active = False
        owed.put(None)
        for sig, old in previous.items():
            signal.signal(sig, old)
        sys.unraisablehook = previous_hook
        _reset_command_state()


def _called_from(frame, code) -> bool:
    """Whether `frame` runs `code` or was called, at any depth, from a frame that does."""
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def _reset_command_state() -> None:
    for state in (_pending, _written, _late, _outputs, _in_command, _held, _label):
        state.clear()


@contextmanager
def _signals_held():
    """SIGINT and SIGTERM that arrive in the block take effect at its end: ignored (`late_signal`)
    when an output is in place by then, else raised as `Interrupted`. A flag, not a signal mask:
    the kernel may hand the signal to any thread (numba's, BLAS's), and Python runs the handler
    in the main thread at its next step whichever thread received it."""
    _held.append([])
    try:
        yield
    finally:
        arrived = _held.pop()
        if arrived and _held:  # an enclosing block decides
            _held[-1].extend(arrived)
        elif arrived and _written:
            _late.extend(arrived)
        elif arrived:
            _pending.append(arrived[-1])
            raise Interrupted(arrived[-1])


def _put_in_place(tmp: str, path: Path, new: bool = False) -> None:
    """Move the finished temporary file to `path`, signals held so that the move and its record in
    `written_outputs` are one step: replace `path`, or, for an output declared new (or `new`),
    create it only if it is still absent."""
    key = _output_key(path)
    with _signals_held():
        if new or _outputs.get(key):
            _create_exclusively(tmp, path)
        else:
            os.replace(tmp, path)
        if key in _outputs:
            _written.append(path)


def _create_exclusively(tmp: str, path: Path) -> None:
    # a hard link fails when the name exists (no window between the test and the creation);
    # a filesystem without hard links falls back to a test and a rename
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise _appeared(path) from None
    except OSError:
        if os.path.lexists(path):
            raise _appeared(path) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def _appeared(path: Path) -> InputError:
    return InputError(
        str(path),
        "appeared while this command ran (another run wrote it); this run's result was not written",
        "a new file name, or --force to replace it",
    )


# --------------------------------------------------------------------------------------------
# temporary files: named after their writer's process, removed by the next run once it has ended

# `.NAME.<pid>.<random>.tmp` (mkstemp's random part has no dot) and a recording's
# `NAME.<pid>.partial.npy`, `.partial.json`, `.partial.grow.npy` (crane_lib.hardware.recorder)
_RANDOM = r"[A-Za-z0-9_]+"


def temporary_prefix(path) -> str:
    """The prefix of this process's temporary files for `path`: `.NAME.<pid>.`."""
    return f".{Path(path).name}.{os.getpid()}."


def partial_name(path, suffix: str) -> Path:
    """A recording's partial file beside the log `path`: `NAME.<pid>.partial<suffix>`."""
    path = Path(path)
    return path.with_name(f"{path.name}.{os.getpid()}.partial{suffix}")


def _stale_patterns(name: str):
    escaped = re.escape(name)
    return (
        re.compile(rf"\.{escaped}\.([0-9]+)\.{_RANDOM}\.tmp"),
        re.compile(rf"{escaped}\.([0-9]+)\.partial(?:\.grow)?\.(?:npy|json)"),
    )


def process_ended(pid: int) -> bool:
    """Whether process `pid` is gone (or a zombie: ended, not yet waited for). This process, a
    live one and one of another user count as running."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    except (OSError, OverflowError):  # a pid beyond the kernel's range: no process has it
        return True
    try:
        status = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return status.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def temporaries_of(path) -> list[tuple[Path, int]]:
    """The temporary and partial files (or folders) beside `path` that writers of `path` left,
    each with the id of the process that wrote it."""
    path = Path(path)
    folder = path.parent
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # no folder yet, or not readable: nothing to clean
        return []
    found = []
    for name in names:
        for pattern in _stale_patterns(path.name):
            match = pattern.fullmatch(name)
            if match:
                found.append((folder / name, int(match.group(1))))
    return found


def remove_stale_temporaries(path) -> list[Path]:
    """Remove what killed writers of `path` left beside it (temporary files and folders, a
    recording's partial files) and say so in one line on stderr, naming them; a running
    process's files are left alone. Returns the paths removed."""
    complete_commits(Path(path).parent)  # a killed run's renames first: its temporaries are new
    removed, pids = [], []
    for stale, pid in temporaries_of(path):
        if not process_ended(pid):
            continue
        try:
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale)
            else:
                stale.unlink()
        except FileNotFoundError:  # another run removed it first
            continue
        except OSError as error:
            prefix = f"{_label[0]}: " if _label else ""
            print(
                f"{prefix}{stale}: left by ended process {pid}, not removed ({error.strerror})",
                file=sys.stderr,
            )
            continue
        removed.append(stale)
        pids.append(pid)
    if removed:
        ended = ", ".join(str(pid) for pid in sorted(set(pids)))
        process = "process" if len(set(pids)) == 1 else "processes"
        prefix = f"{_label[0]}: " if _label else ""
        print(
            f"{prefix}removed {', '.join(str(p) for p in removed)}: left by ended {process} "
            f"{ended}",
            file=sys.stderr,
        )
    return removed


def _temporary_file(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent)


def _named(error: OSError, path: Path, *temporaries) -> OSError:
    """`error` naming the output `path` where it named no file or a temporary file (a full disk
    raises from `write` without a name; a read-only folder names the temporary)."""
    name = None if error.filename is None else str(error.filename)
    temporary = name is None or name in {str(t) for t in temporaries}
    if not temporary and not os.path.basename(name).startswith(f".{path.name}."):
        return error
    return OSError(error.errno, error.strerror or str(error), str(path))


def _ordinary_permissions(tmp: str, folder: bool = False) -> None:
    # mkstemp creates 0600, mkdtemp 0700: give the output the umask's permissions
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, (0o777 if folder else 0o666) & ~umask)


@contextmanager
def atomic_write(path, mode: str = "w", new: bool = False, **open_kwargs):
    """Open a temporary file beside `path`; rename it over `path` only if the block succeeds.

    Nothing half-written is ever left at `path`: on any exception the temporary file is removed.
    With `new`, `path` is created only if it is still absent (outside a command, where
    `declare_output` does not apply: the new-recording notebook), else an InputError. An OS error
    while writing names `path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        fd, tmp = _temporary_file(path)
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            yield handle
        _ordinary_permissions(tmp)
        _put_in_place(tmp, path, new)
    except OSError as error:
        _remove_quietly(tmp)
        raise _named(error, path, tmp) from error
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(tmp) -> None:
    if tmp is None:
        return
    try:
        if os.path.isdir(tmp) and not os.path.islink(tmp):
            shutil.rmtree(tmp)
        elif os.path.lexists(tmp):
            os.unlink(tmp)
    except OSError:
        pass


# parameter files, conditions and settings are a few kB; 4 MiB is far beyond any honest one
SMALL_INPUT_MAX_BYTES = 4 << 20


def checked_csv_rows(path, header: list[str], what: str) -> list[tuple[str, list[str]]]:
    """Rows of a small CSV input with '#' comment lines: the header must be `header` and every
    row must have as many fields; returns ("file:line", fields) per data row."""
    path = Path(path)
    text = read_input_text(path, what, SMALL_INPUT_MAX_BYTES)
    numbered = [
        (n, line.rstrip("\r"))
        for n, line in enumerate(text.split("\n"), start=1)
        if line.strip() and not line.startswith("#")
    ]
    rows = []
    for index, (lineno, line) in enumerate(numbered):
        where = f"{path}:{lineno}"
        try:
            fields = next(csv.reader([line]))
        except csv.Error as error:
            raise InputError(where, f"not a CSV line ({error})", ",".join(header)) from None
        if index == 0:
            if fields != header:
                raise InputError(where, f"header {shown(','.join(fields))}", ",".join(header))
            continue
        if len(fields) != len(header):
            raise InputError(
                where, f"{len(fields)} fields", f"{len(header)} fields ({','.join(header)})"
            )
        rows.append((where, fields))
    if not numbered:
        raise InputError(f"{path}:1", "no header", ",".join(header))
    return rows


# ------------------------------------------------------------------------------- commit journals
# Several renames cannot be one step. Before the first, `atomic_write_files` writes the list of
# (temporary, target) pairs as a journal into every target folder (`.crane-commit.<pid>.json`,
# each copy naming all the copies); it removes them after the last. A run killed between two
# renames leaves the journal: the next run that writes into that folder completes the renames
# (every temporary was whole before the journal was written), or, when a copy is missing or
# half-written (killed while writing the journals, before any rename), removes the temporaries.
# A kill guarded against: SIGKILL (the page cache survives it); a power cut would need fsync.
_JOURNAL = re.compile(r"\.crane-commit\.([0-9]+)\.json")


def _journal_path(folder: Path) -> Path:
    return folder / f".crane-commit.{os.getpid()}.json"


def _write_journals(temporaries: list[tuple[str, Path]]) -> list[Path]:
    """Write the journal of these renames into each target folder (none for a single file)."""
    if len(temporaries) < 2:
        return []
    folders = sorted({os.path.abspath(path.parent) for _, path in temporaries})
    journals = [_journal_path(Path(folder)) for folder in folders]
    text = json.dumps(
        {
            "renames": [[os.path.abspath(tmp), os.path.abspath(path)] for tmp, path in temporaries],
            "journals": [str(journal) for journal in journals],
        }
    )
    written = []
    try:
        for journal in journals:
            with open(journal, "x", encoding="utf-8") as handle:
                written.append(journal)
                handle.write(text)
    except BaseException:
        for journal in written:
            _remove_quietly(journal)
        raise
    return journals


def _read_journal(path: Path):
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        return [(str(a), str(b)) for a, b in entry["renames"]], [str(j) for j in entry["journals"]]
    except (OSError, ValueError, KeyError, TypeError):  # half-written: no rename had begun
        return None


def complete_commits(folder) -> list[Path]:
    """Finish the renames of `atomic_write_files` runs that were killed between two of them (their
    journal lies in `folder` and their process has ended), one line on stderr naming the files;
    a journal whose copies are not all whole means no rename had begun: its temporaries are
    removed instead. Returns the targets put in place."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    completed = []
    for name in names:
        match = _JOURNAL.fullmatch(name)
        if not match or not process_ended(int(match.group(1))):
            continue
        journal = Path(folder) / name
        entry = _read_journal(journal)
        if entry is None:
            _remove_quietly(str(journal))
            continue
        renames, copies = entry
        whole = all(_read_journal(Path(copy)) == entry for copy in copies)
        done = []
        for tmp, target in renames:
            if not os.path.lexists(tmp):  # put in place before the kill
                continue
            if whole:
                os.replace(tmp, target)
                done.append(Path(target))
            else:
                _remove_quietly(tmp)
        for copy in [c for c in copies if c != str(journal)] + [str(journal)]:
            _remove_quietly(copy)
        if done:
            prefix = f"{_label[0]}: " if _label else ""
            print(
                f"{prefix}completed the writing of {', '.join(t for _, t in renames)}: ended "
                f"process {match.group(1)} had put {len(renames) - len(done)} of "
                f"{len(renames)} in place",
                file=sys.stderr,
            )
        completed.extend(done)
    return completed


def atomic_write_files(contents: dict) -> list[Path]:
    """Write several files as one: every `path -> bytes` goes to a temporary file beside its
    target first; only when all are written are they renamed into place, with SIGINT and SIGTERM
    held back for the renames. On any failure no target changes (a forced one already replaced
    stays replaced) and no temporary file stays; an OS error names the target it hit."""
    temporaries: list[tuple[str, Path]] = []
    path = None
    try:
        for path, data in contents.items():
            path = Path(path)
            fd, tmp = _temporary_file(path)
            temporaries.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            _ordinary_permissions(tmp)
        placed: list[Path] = []
        journals = _write_journals(temporaries)
        with _signals_held():
            try:
                for tmp, path in temporaries:
                    existed = os.path.lexists(path)
                    _put_in_place(tmp, path)
                    if not existed:
                        placed.append(path)
            except BaseException:  # one had appeared meanwhile: take back the new ones in place
                for done in placed:
                    os.unlink(done)
                    if done in _written:
                        _written.remove(done)
                raise
            finally:
                for journal in journals:
                    _remove_quietly(journal)
    except OSError as error:
        for tmp, _ in temporaries:
            _remove_quietly(tmp)
        raise _named(error, path, *(tmp for tmp, _ in temporaries)) from error
    except BaseException:
        for tmp, _ in temporaries:
            _remove_quietly(tmp)
        raise
    return [path for _, path in temporaries]


def atomic_write_folder(folder, contents: dict) -> list[Path]:
    """Write the files `name -> bytes` into `folder` as one: a folder that does not exist yet is
    filled as a temporary sibling (`.FOLDER.<pid>.<random>.tmp`) and renamed into place at the
    end, so that a failure or a kill leaves no folder; into an existing one `atomic_write_files`
    writes. On any failure nothing this call created stays."""
    folder = Path(folder)
    if folder.exists():
        return atomic_write_files({folder / name: data for name, data in contents.items()})
    parent = folder.parent if str(folder.parent) else Path(".")
    tmp = None
    target = folder
    try:
        tmp = tempfile.mkdtemp(prefix=temporary_prefix(folder), suffix=".tmp", dir=parent)
        for name, data in contents.items():
            target = folder / name
            with open(os.path.join(tmp, name), "wb") as handle:
                handle.write(data)
        target = folder
        _ordinary_permissions(tmp, folder=True)
        with _signals_held():
            try:
                os.rename(tmp, folder)  # fails onto a folder that has files (another run's)
            except OSError as error:
                if error.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                    raise _appeared(folder) from None
                raise
            for name in contents:
                if _output_key(folder / name) in _outputs:
                    _written.append(folder / name)
    except OSError as error:
        _remove_quietly(tmp)
        raise _named(error, target, tmp, *(os.path.join(tmp or "", n) for n in contents)) from error
    except BaseException:
        _remove_quietly(tmp)
        raise
    return [folder / name for name in contents]
