"""The servo catalogue (`data/servo_catalogue.csv`): datasheet fields per servo model, sourced.

One CSV row per model and field: value (empty: no source gives it), unit, source and status
(published, derived, unverified, unknown). `load()` reads and checks it; `Catalogue.actuators_csv`
writes the rows of an arm's actuators.csv (`arm_schema.ACTUATOR_COLUMNS`) from the fields

    kt_N_m_per_A          <- kt_N_m_per_A (stall torque / stall current where no maker gives it)
    current_unit_A        <- current_unit_A
    current_limit_units   <- current_limit_units
    velocity_limit_rad_s  <- no_load_speed_rpm x 2 pi / 60

and leaves a cell empty where the field is unknown, so that every stage reading the folder
(`arm_schema.read_folder`) refuses it naming the column.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from crane_lib.errors import SMALL_INPUT_MAX_BYTES, InputError, read_input_text
from crane_lib.paths import DATA_DIR, portable

CATALOGUE_CSV = DATA_DIR / "servo_catalogue.csv"
FIELDS = (
    "voltage_V",
    "stall_torque_N_m",
    "stall_current_A",
    "no_load_speed_rpm",
    "gear_ratio",
    "kt_N_m_per_A",
    "current_unit_A",
    "current_limit_units",
    "position_resolution",
    "rotor_inertia_kg_m2",
)
STATUSES = ("published", "derived", "unverified", "unknown")
# actuators.csv column -> (catalogue field, factor)
ACTUATOR_FIELDS = {
    "kt_N_m_per_A": ("kt_N_m_per_A", 1.0),
    "current_unit_A": ("current_unit_A", 1.0),
    "current_limit_units": ("current_limit_units", 1.0),
    "velocity_limit_rad_s": ("no_load_speed_rpm", 2.0 * math.pi / 60.0),
}
STAND_IN = "1"  # what `stand_in` puts in an unknown cell to check the rest of a folder


@dataclass(frozen=True)
class Entry:
    """One field of one model: value (None: unknown), unit, source, status."""

    value: float | None
    unit: str
    source: str
    status: str


@dataclass(frozen=True)
class Catalogue:
    """Every model's fields, by model then field."""

    entries: dict[str, dict[str, Entry]]
    where: str

    @property
    def models(self) -> list[str]:
        """The catalogue's model names, in file order."""
        return list(self.entries)

    def value(self, model: str, name: str) -> float | None:
        """A field's value (None: unknown)."""
        return self.entries[model][name].value

    def require(self, models, where: str) -> None:
        """InputError naming the first model the catalogue does not hold."""
        for model in models:
            if model not in self.entries:
                raise InputError(
                    where, f"unknown servo {model!r}", f"one of {', '.join(self.models)}"
                )

    def position_span(self, model: str, where: str) -> list[float]:
        """[lower, upper] rad of the position register about its centre: -(n/2), n/2 - 1 counts."""
        counts = self.value(model, "position_resolution")
        if counts is None:
            raise InputError(
                where, f"servo {model!r} has no position_resolution", "a known resolution"
            )
        step = 2.0 * math.pi / counts
        return [-(counts // 2) * step, (counts // 2 - 1) * step]

    def actuators_csv(self, servos) -> tuple[str, list[str]]:
        """actuators.csv's text for the servos in use, and the '<model> <field>' left unknown."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        unknown: list[str] = []
        writer.writerow(["model", *ACTUATOR_FIELDS, "source"])
        for model in dict.fromkeys(servos):
            row, sources = [model], []
            for column, (name, factor) in ACTUATOR_FIELDS.items():
                entry = self.entries[model][name]
                if entry.value is None:
                    unknown.append(f"{model} {name}")
                    row.append("")
                    continue
                value = entry.value * factor
                row.append(repr(value) if factor != 1.0 else _number(value))
                sources.append(f"{name}: {entry.status}")
            row.append(f"data/servo_catalogue.csv ({'; '.join(sources)})")
            writer.writerow(row)
        return out.getvalue(), unknown


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def stand_in(text: str) -> str:
    """actuators.csv with every empty number cell filled by STAND_IN (to check the other files)."""
    rows = list(csv.reader(io.StringIO(text)))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(rows[0])
    for row in rows[1:]:
        writer.writerow([c if c or k in (0, len(row) - 1) else STAND_IN for k, c in enumerate(row)])
    return out.getvalue()


def load(path: Path | str = CATALOGUE_CSV) -> Catalogue:
    """The catalogue, every row checked: known fields and statuses, numbers, each field once."""
    path = Path(path)
    shown = portable(path)
    text = read_input_text(path, "the servo catalogue (UTF-8 CSV)", SMALL_INPUT_MAX_BYTES)
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    lines = [(n, line) for n, line in lines if not line.startswith("#")]
    header = next(csv.reader([lines[0][1]]))
    expected = ["model", "field", "value", "unit", "source", "status"]
    if header != expected:
        raise InputError(f"{shown}:{lines[0][0]}", f"header {header}", ",".join(expected))
    entries: dict[str, dict[str, Entry]] = {}
    for n, line in lines[1:]:
        where = f"{shown}:{n}"
        cells = next(csv.reader([line]))
        if len(cells) != len(expected):
            raise InputError(where, f"{len(cells)} fields", f"{len(expected)} fields")
        model, name, value, unit, source, status = cells
        if name not in FIELDS or status not in STATUSES:
            raise InputError(where, f"field {name!r}, status {status!r}", f"fields {FIELDS}")
        number = None
        if value.strip():
            try:
                number = float(value)
            except ValueError:
                raise InputError(where, f"{model} {name} = {value!r}", "a number") from None
            if not math.isfinite(number) or number <= 0:
                raise InputError(where, f"{model} {name} = {value!r}", "a positive number")
        if (number is None) != (status == "unknown"):
            raise InputError(
                where,
                f"{model} {name}: value {value!r}, status {status!r}",
                "an empty value exactly where the status is unknown",
            )
        fields = entries.setdefault(model, {})
        if name in fields:
            raise InputError(where, f"{model} {name} repeated", "each field once per model")
        fields[name] = Entry(number, unit, source, status)
    for model, fields in entries.items():
        missing = [f for f in FIELDS if f not in fields]
        if missing:
            raise InputError(
                shown, f"model {model!r} lacks {missing}", "every field (empty if unknown)"
            )
    return Catalogue(entries, shown)
