"""The parameters of the new-recording report (chapter "Your own arm", run by papermill), checked
for their type and meaning before anything is read or computed.

papermill's `-p NAME VALUE` turns `5` into an int, `True` into a bool and `0.04` into a float,
whatever the parameter means: `-p trajectory 5` or `-p out 7` reached `Path(5)` and ended in a
raw TypeError. `checked_parameters` refuses such a value with one line naming the parameter and
what it takes (`crane_lib.cli.common.accept_inputs` then checks the files themselves), and
`check_room` writes a probe of a model file's size beside `out` before the minute of
computation, so that a full disk is named first, not after it (`crane-id accept` calls it too).
"""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path

from crane_lib.errors import InputError, shown, temporary_prefix

# a model file of the 39 parameters with its header is about 7 kB; the probe asks for more
MODEL_FILE_ROOM = 64 * 1024  # bytes

_EXPECTED = {
    "log": 'the path of your raw log as text (.csv, .csv.gz or .npz), or "" for the demonstration',
    "trajectory": "the path of the command file as text, or the name of one in trajectories/ "
    "(e.g. AP01)",
    "out": 'the path of the model file to write, as text ("" for the report\'s own)',
    "refine": "one of fast, clie, didim, none",
    "validation": "a list of held-out recordings, a JSON list as text, or one path",
}


def _kind(value) -> str:
    if isinstance(value, bool):
        return "a yes/no value"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def _path_text(name: str, value, empty_allowed: bool) -> str:
    """`value` as a path's text: text or a Path; a number or a yes/no value is refused."""
    if isinstance(value, Path):
        value = str(value)
    if not isinstance(value, str):
        raise InputError(
            f"{name} {shown(repr(value))}",
            f"is {_kind(value)}, not a path (papermill's -p reads a number as one; "
            f"-r {name} passes text)",
            _EXPECTED[name],
        )
    if not empty_allowed and not value.strip():
        raise InputError(f"{name} ''", "names no file", _EXPECTED[name])
    return value


def checked_parameters(log, trajectory, out, ts, refine, force, validation) -> tuple:
    """The report's parameters with their types checked, in the order given (ts as a float in
    seconds); an InputError names the first parameter that is not what it should be."""
    from crane_lib.cli.common import interval_seconds, interval_seconds_allowed

    checked = {
        "log": _path_text("log", log, empty_allowed=True),
        "trajectory": _path_text("trajectory", trajectory, empty_allowed=False),
        "out": _path_text("out", out, empty_allowed=True),
    }
    if isinstance(ts, bool) or not isinstance(ts, (int, float, str)):
        raise InputError(f"ts {shown(repr(ts))}", "is not a number", interval_seconds_allowed())
    try:
        checked["ts"] = interval_seconds(str(ts))
    except argparse.ArgumentTypeError as error:
        raise InputError(
            f"ts {shown(str(ts))}", str(error).split("; expected ")[0], interval_seconds_allowed()
        ) from None
    if not isinstance(refine, str):
        raise InputError(
            f"refine {shown(repr(refine))}", f"is {_kind(refine)}", _EXPECTED["refine"]
        )
    checked["refine"] = refine
    if not isinstance(force, bool):
        raise InputError(f"force {shown(repr(force))}", "is not a yes/no value", "True or False")
    checked["force"] = force
    if not isinstance(validation, (list, tuple, str, Path)):
        raise InputError(
            f"validation {shown(repr(validation))}",
            f"is {_kind(validation)}",
            _EXPECTED["validation"],
        )
    checked["validation"] = validation
    return tuple(checked.values())


def check_room(out, parameter: str = "out", size: int = MODEL_FILE_ROOM) -> None:
    """Refuse `out` unless its folder takes a file of `size` bytes now: a probe of that size is
    written beside it and removed (a full disk or a quota is named before the computation)."""
    target = Path(out)
    # named as atomic_write names its temporaries: the next run removes a killed run's probe
    probe = target.parent / f"{temporary_prefix(target)}room_probe.tmp"
    created = False
    try:
        with open(probe, "xb") as handle:
            created = True
            handle.write(b"\0" * size)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        full = error.errno in (errno.ENOSPC, errno.EDQUOT)
        raise InputError(
            f"{parameter} {shown(str(out), limit=200)}",
            "its folder has no room for the model file (the disk is full)"
            if full
            else f"its folder cannot take the model file ({error.strerror})",
            f"a folder with at least {size // 1024} KiB free",
        ) from None
    finally:
        if created:
            probe.unlink(missing_ok=True)
