"""The checked options of the book's commands (`pipeline`, `pages`, tools/determinism.py).

Every value is checked before any work: a bad one is refused with one line on stderr that names
the option, the value and what was expected, and exit status 2 (argparse's), no usage block and
no traceback. The same checks guard the values that arrive another way: $CRANE_SCHEDULER (the
default of --scheduler), `make book JOBS=... SCHEDULER=...`, which pass through the options, and
`make book PROFILE=... TWIN=...`, which reach the pipeline and the pages as $CRANE_PROFILE and
$CRANE_TWIN.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import re

from crane_lib.errors import MAX_JOBS, job_count  # noqa: F401 (the pages and pipeline read it here)

# A scheduler that has not answered in ten minutes is not starting up; a longer wait only hides
# a wrong address.
MAX_TIMEOUT_S = 600.0
# the longest part of a refused value a message shows (a hostile value can be megabytes)
SHOWN_CHARS = 80

_HOST_PORT = re.compile(
    r"(?P<scheme>tcp|tls)://"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r":(?P<port>[0-9]{1,5})"
)
_INPROC = re.compile(r"inproc://[!-~]+")  # Dask's in-process address: printable, no spaces
ADDRESS_EXPECTED = "expected a Dask scheduler address tcp://HOST:PORT, tls://HOST:PORT or "
ADDRESS_EXPECTED += "inproc://ADDRESS (PORT 1 to 65535)"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose every refusal is one line on stderr and exit status 2."""

    def error(self, message):
        """Refuse in one line (argparse would print its usage block first)."""
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def shown(value) -> str:
    """`value` as a one-line message shows it: quoted when it has spaces or unprintable
    characters, cut to SHOWN_CHARS."""
    text = str(value)
    cut = text[:SHOWN_CHARS]
    plain = cut and cut.isprintable() and not any(c.isspace() for c in cut)
    return (cut if plain else repr(cut)) + ("..." if len(text) > SHOWN_CHARS else "")


# the one check of every --jobs, crane_lib's commands' too (the data set's), which cannot
# import this package
jobs = job_count


def scheduler_address(value) -> str:
    """The Dask scheduler address `value` names: tcp:// or tls:// host and port, or inproc://."""
    text = str(value).strip()
    match = _HOST_PORT.fullmatch(text)
    if match is not None:
        host, port = match["host"], int(match["port"])
        if host.startswith("["):
            try:
                ipaddress.IPv6Address(host[1:-1])
            except ValueError:
                raise ValueError(ADDRESS_EXPECTED) from None
        if 1 <= port <= 65535 and len(host) <= 253:
            return text
    elif _INPROC.fullmatch(text):
        return text
    raise ValueError(ADDRESS_EXPECTED)


def timeout_seconds(value) -> float:
    """The number of seconds `value` names: finite, above 0 and at most MAX_TIMEOUT_S."""
    expected = f"expected a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}"
    try:
        seconds = float(str(value).strip())
    except ValueError:
        raise ValueError(expected) from None
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT_S):
        raise ValueError(expected)
    return seconds


def book_profile(value) -> str:
    """The book profile `value` names: quick or full."""
    from crane_lib.twin.dataset import PROFILES  # the recorder of the profiles' data sets

    if value not in PROFILES:
        raise ValueError(
            f"expected a book profile, {' or '.join(PROFILES)} (make book PROFILE=...)"
        )
    return value


def twin_name(value) -> str:
    """The twin profile `value` names: one of crane_lib.twin.effects.PROFILES."""
    from crane_lib.twin.effects import PROFILES

    if value not in PROFILES:
        raise ValueError(
            f"expected a twin profile, one of {', '.join(PROFILES)} (make book TWIN=...)"
        )
    return value


def checked_environment(parser: argparse.ArgumentParser, variable: str, check, default: str):
    """`check` of the environment variable `variable` (`default` when unset or empty), or the
    parser's one-line refusal naming the variable, the value and what was expected."""
    return checked(parser, f"${variable}", os.environ.get(variable) or default, check)


def checked(parser: argparse.ArgumentParser, option: str, value, check, source: str = ""):
    """`check(value)`, or the parser's one-line refusal naming the option (and the environment
    variable `source` the value came from), the value and what was expected."""
    try:
        return check(value)
    except ValueError as error:
        where = f" (from ${source})" if source else ""
        parser.error(f"{option} {shown(value)}{where}: {error}")
