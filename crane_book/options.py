"""The checked options of the book's commands (`pipeline`, `pages`).

Every value is checked before any work: a bad one is refused with one line on stderr that names
the option, the value and what was expected, and exit status 2 (argparse's), no usage block and
no traceback. The same checks guard the values that arrive another way: $CRANE_SCHEDULER (the
default of --scheduler) and `make book JOBS=... SCHEDULER=...`, which pass through the options.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import re

# Each job is a process with its own Jupyter kernel and compiled model: past the cores of one
# machine more of them only contend for the cores while the memory grows. 256 is above the core
# count of any machine the book is built on and far below a count that is surely a typo.
MAX_JOBS = 256
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


def jobs(value) -> int:
    """The number of processes `value` names: a whole number from 1 to MAX_JOBS."""
    text = str(value).strip()
    if not re.fullmatch(r"[0-9]{1,6}", text) or not 1 <= int(text) <= MAX_JOBS:
        raise ValueError(f"expected a whole number of processes from 1 to {MAX_JOBS}")
    return int(text)


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


def checked(parser: argparse.ArgumentParser, option: str, value, check, source: str = ""):
    """`check(value)`, or the parser's one-line refusal naming the option (and the environment
    variable `source` the value came from), the value and what was expected."""
    try:
        return check(value)
    except ValueError as error:
        where = f" (from ${source})" if source else ""
        parser.error(f"{option} {shown(value)}{where}: {error}")
