"""Dynamic parameter names (OpenSYMORO style), units, and parameter files.

Standard parameters of arm link j = 1..7, in the OpenSYMORO order:
XXj XYj XZj YYj YZj ZZj (inertia tensor about the frame origin O_j, frame-j axes),
MXj MYj MZj (first moments), Mj (mass), IAj (rotor inertia), FVj (viscous), FSj (Coulomb).
The hand axis 8 carries IA8, FV8, FS8 only, decoupled from the arm.

A parameter file is a CSV with the columns name, value, unit; lines starting with '#' are
comments. Values are SI.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crane_lib.errors import (
    SMALL_INPUT_MAX_BYTES,
    InputError,
    atomic_write,
    parse_number,
    read_input_text,
    shown,
)

N_LINKS = 7
LINK_PARAMETER_KINDS = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA", "FV", "FS")
HAND_PARAMETER_KINDS = ("IA", "FV", "FS")
INERTIA_KINDS = ("XX", "XY", "XZ", "YY", "YZ", "ZZ")
FIRST_MOMENT_KINDS = ("MX", "MY", "MZ")

UNITS = {
    **{k: "kg·m^2" for k in INERTIA_KINDS},
    **{k: "kg·m" for k in FIRST_MOMENT_KINDS},
    "M": "kg",
    "IA": "kg·m^2",
    "FV": "N·m·s/rad",
    "FS": "N·m",
}


def split_name(name: str) -> tuple[str, bool, int]:
    """'XXR2' -> ('XX', True, 2); 'IA8' -> ('IA', False, 8). Raises ValueError if unparsable."""
    i = len(name)
    while i > 0 and name[i - 1].isdigit():
        i -= 1
    if i == len(name) or i == 0:
        raise ValueError(f"not a parameter name: {name!r}")
    kind, axis = name[:i], int(name[i:])
    grouped = kind.endswith("R") and kind[:-1] in LINK_PARAMETER_KINDS
    if grouped:
        kind = kind[:-1]
    if kind not in LINK_PARAMETER_KINDS:
        raise ValueError(f"not a parameter name: {name!r}")
    return kind, grouped, axis


def unit_of(name: str) -> str:
    """The SI unit of a parameter from its kind ("XXR2" -> "kg·m^2")."""
    return UNITS[split_name(name)[0]]


# the categories of Appendix A-B's bookkeeping (Table II), in the paper's order
CATEGORIES = (
    "inertia-related link terms",
    "first-moment link terms",
    "products of inertia",
    "rotor inertias",
    "Coulomb friction",
    "viscous friction and hand",
)


def category(name: str) -> str:
    """The Table II category of a base or standard parameter: XX/ZZ of the arm links are
    "inertia-related link terms", MX/MY "first-moment link terms", XY/XZ/YZ "products of inertia",
    IA1..IA7 "rotor inertias", FS "Coulomb friction", the rest (FV, the hand's IA8) "viscous
    friction and hand". YY, MZ and M never survive the grouping on their own."""
    kind, _, axis = split_name(name)
    if kind in ("XX", "ZZ") and axis <= N_LINKS:
        return CATEGORIES[0]
    if kind in ("MX", "MY"):
        return CATEGORIES[1]
    if kind in ("XY", "XZ", "YZ"):
        return CATEGORIES[2]
    if kind == "IA" and axis <= N_LINKS:
        return CATEGORIES[3]
    if kind == "FS":
        return CATEGORIES[4]
    if kind in ("FV", "IA"):
        return CATEGORIES[5]
    raise ValueError(
        f"{name!r}: a {kind} term has no Table II category (it never stays alone in a base set)"
    )


def standard_parameter_names() -> list[str]:
    """The 94 standard parameters: 13 per arm link, then IA8 FV8 FS8."""
    names = [f"{kind}{j}" for j in range(1, N_LINKS + 1) for kind in LINK_PARAMETER_KINDS]
    names += [f"{kind}8" for kind in HAND_PARAMETER_KINDS]
    return names


@dataclass
class ParameterSet:
    """Named parameter values (SI), in a fixed order, with optional standard errors."""

    names: list[str]
    values: np.ndarray
    std_errors: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.names = list(self.names)
        self.values = np.asarray(self.values, dtype=float)
        if self.values.shape != (len(self.names),):
            raise InputError(
                "parameter set",
                f"{self.values.shape} values for {len(self.names)} names",
                "one value per name",
            )
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise InputError("parameter set", f"duplicated names {dup}", "each name once")
        for name, v in zip(self.names, self.values):
            try:
                split_name(name)
            except ValueError:
                raise InputError(
                    f"parameter {name}",
                    "unknown parameter name",
                    "an OpenSYMORO-style name such as ZZR1, MXR2, IA3, FV1",
                ) from None
            if not math.isfinite(v):
                raise InputError(f"parameter {name}", f"value {v}", "a finite number")
        if self.std_errors is not None:
            self.std_errors = np.asarray(self.std_errors, dtype=float)

    def __getitem__(self, name: str) -> float:
        try:
            return float(self.values[self.names.index(name)])
        except ValueError:
            raise KeyError(f"no parameter {name!r} in this set") from None

    def as_dict(self) -> dict[str, float]:
        """The parameters as a name-to-value dict."""
        return dict(zip(self.names, self.values.tolist()))

    def ordered(self, names: list[str], source: str = "parameter set") -> np.ndarray:
        """Values in the order `names`; an InputError names every missing or unknown entry."""
        have = set(self.names)
        missing = [n for n in names if n not in have]
        unknown = [n for n in self.names if n not in set(names)]
        if missing or unknown:

            def listed(items: list[str]) -> str:
                more = f" and {len(items) - 6} more" if len(items) > 6 else ""
                return f"{items[:6]}{more}"

            parts = []
            if missing:
                parts.append(f"missing {listed(missing)}")
            if unknown:
                parts.append(f"unknown {listed(unknown)}")
            expected = (
                f"exactly the {len(names)} parameters {names[0]} ... {names[-1]}"
                if len(names) > 6
                else f"exactly the parameters {names}"
            )
            raise InputError(source, "; ".join(parts), expected)
        index = {n: i for i, n in enumerate(self.names)}
        return self.values[[index[n] for n in names]]


def save_parameters(
    path, params: ParameterSet, comment: str | None = None, new: bool = False
) -> None:
    """Write name,value,unit[,std_error] rows; atomic (nothing half-written); with `new`, only
    if `path` is still absent (errors.atomic_write)."""
    with atomic_write(path, new=new, encoding="utf-8") as handle:
        handle.write(parameters_text(params, comment))


def parameters_text(params: ParameterSet, comment: str | None = None) -> str:
    """The text of a parameter file (`save_parameters` writes it): '#' comment lines, then
    name,value,unit[,std_error] rows."""
    buffer = io.StringIO()
    if comment:
        for line in comment.splitlines():
            buffer.write(f"# {line}\n")
    for key, val in params.meta.items():
        buffer.write(f"# {key}: {val}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["name", "value", "unit"] + (["std_error"] if params.std_errors is not None else [])
    writer.writerow(header)
    for i, name in enumerate(params.names):
        row = [name, repr(float(params.values[i])), unit_of(name)]
        if params.std_errors is not None:
            row.append(repr(float(params.std_errors[i])))
        writer.writerow(row)
    return buffer.getvalue()


# |value| above this in SI is no parameter of a 1 m, 8 kg arm (inertias ~1e-2 kg·m^2, first
# moments ~1 kg·m, friction ~1 N·m·s/rad): a typo or a unit error, refused with its line
MAX_ABS_PARAMETER = 1e3


def load_parameters(path, expected_names: list[str] | None = None) -> ParameterSet:
    """Read a parameter file; errors name the file, the line and what was expected.

    With `expected_names`, the file must hold exactly those parameters (any order); the
    result is returned in that order. Values must be ASCII decimal numbers of magnitude at most
    MAX_ABS_PARAMETER (SI), standard errors finite and non-negative.
    """
    path = Path(path)
    text = read_input_text(
        path, "a parameter file (name,value,unit[,std_error])", SMALL_INPUT_MAX_BYTES
    )
    names: list[str] = []
    values: list[float] = []
    errors: list[float] = []
    meta: dict[str, str] = {}
    header: list[str] | None = None
    seen_line: dict[str, int] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if ":" in line:
                key, _, val = line[1:].partition(":")
                meta[key.strip()] = val.strip()
            continue
        where = f"{path}:{lineno}"
        try:
            fields = next(csv.reader([line]))
        except csv.Error as error:
            raise InputError(
                where, f"not a CSV line ({error})", "name,value,unit[,std_error]"
            ) from None
        if header is None:
            if fields not in (["name", "value", "unit"], ["name", "value", "unit", "std_error"]):
                raise InputError(
                    where, f"header {shown(line)}", "the header 'name,value,unit[,std_error]'"
                )
            header = fields
            continue
        if len(fields) != len(header):
            raise InputError(
                where, f"{len(fields)} fields", f"{len(header)} fields ({','.join(header)})"
            )
        name = fields[0].strip()
        try:
            kind, _, axis = split_name(name)
        except ValueError:
            axis = 0
        if not 1 <= axis <= N_LINKS + 1:
            raise InputError(
                where,
                f"unknown parameter name {shown(name)}",
                "an OpenSYMORO-style name such as ZZR1, MXR2, IA3, FV1",
            ) from None
        if name in seen_line:
            raise InputError(
                where,
                f"parameter {name} repeated (first on line {seen_line[name]})",
                "each name once",
            )
        seen_line[name] = lineno
        value = parse_number(
            fields[1],
            where,
            f"a finite number of magnitude at most {MAX_ABS_PARAMETER:g} (SI)",
            field=f"value of {name}",
        )
        if abs(value) > MAX_ABS_PARAMETER:
            raise InputError(
                where,
                f"value {value:g} of {name}",
                f"a magnitude of at most {MAX_ABS_PARAMETER:g} {UNITS[kind]} (a unit or typing "
                "error?)",
            )
        if fields[2].strip() != UNITS[kind]:
            raise InputError(
                where, f"unit {shown(fields[2])} of {name}", f"unit {UNITS[kind]!r} (SI)"
            )
        names.append(name)
        values.append(value)
        if len(header) > 3:
            error = parse_number(
                fields[3],
                where,
                "a finite, non-negative standard error",
                field=f"standard error of {name}",
            )
            if error < 0:
                raise InputError(
                    where,
                    f"standard error {error:g} of {name} is negative",
                    "a finite, non-negative standard error",
                )
            errors.append(error)
    if header is None:
        raise InputError(
            str(path),
            "empty parameter file",
            "a header 'name,value,unit' and one row per parameter",
        )
    result = ParameterSet(
        names,
        np.array(values),
        np.array(errors) if header is not None and len(header) > 3 else None,
        meta,
    )
    if expected_names is not None:
        ordered = result.ordered(expected_names, source=str(path))
        errs = None
        if result.std_errors is not None:
            idx = {n: i for i, n in enumerate(result.names)}
            errs = result.std_errors[[idx[n] for n in expected_names]]
        result = ParameterSet(list(expected_names), ordered, errs, meta)
    return result
