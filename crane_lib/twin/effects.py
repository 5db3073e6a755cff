"""The twin's nonidealities by name: each can be switched off or scaled, and profiles combine them.

The nonideality study asks what in a real arm makes an identified M(θ) indefinite away from the
data. To
answer it on the twin, every effect the twin has is a named, switchable magnitude, and two
candidate effects it lacked (gear backlash, position-dependent encoder error) are added, off
by default. The magnitudes and their sources are in `EFFECTS` and, argued, in
book/register_nonideality.md; they were written down before the study was run.

* An `Effect` has a unit, today's twin value (`default`), the value that removes it (`off`),
  the sourced value the study and the field profile use (`nominal`) and the physical range a
  conditions file may ask for (`low`..`high`, besides `off`).
* `TwinEffects` is one choice of a value per effect. `profile("default")` is today's twin:
  `recorder.record(..., effects=profile("default"))` is byte-identical to `effects=None`
  (tested). `profile("ideal")` switches everything off; `profile("field")` is today's twin
  plus the effects the study supports, at their nominal magnitudes (register).
* `realization(effects, truth, settings)` turns a choice into what the recorder needs: a
  modified truth and drive settings, timing and noise settings, flags for the core.

The main job runs on the profile named by the environment variable CRANE_TWIN (default
"default"; `make book TWIN=field`), see `active_profile()`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

import numpy as np

from crane_lib.constants import N_AXES
from crane_lib.errors import InputError
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.twin import truth as twin_truth
from crane_lib.twin.truth import CRANE_X7, PlantSettings

INF = math.inf
# the "unit": the phases of each axis's encoder error are drawn once with this seed (like the Kt
# draw)
ENCODER_ERROR_SEED = 20240516
# current quantization off: the register unit divided by this (2.6 nA), the limit multiplied by it
CURRENT_UNQUANTIZED_DIVISOR = 2.0**20
_LATENCY_MS = paper(
    "encoder_read_dispatch_delay"
).value  # the twin's read-and-dispatch latency (Sec. III-B)


@dataclass(frozen=True)
class Effect:
    """One nonideality of the twin and the magnitudes the study may give it.

    name       the name a conditions file uses
    unit       the unit of every value below
    default    today's twin (the value recordings had before the study)
    off        the value that removes the effect
    nominal    the sourced magnitude the study's ladder and the field profile use
    low, high  the physical range admitted besides `off` (a conditions file asking for more is
               rejected before anything is recorded)
    candidate  True for an effect the twin did not have before the study (off by default)
    source     where `nominal` and the range come from (book/register_nonideality.md argues it)
    discrete   True when only `off` and `default` are meaningful (a switch)
    """

    name: str
    unit: str
    default: float
    off: float
    nominal: float
    low: float
    high: float
    candidate: bool
    source: str
    discrete: bool = False

    def admits(self, value: float) -> bool:
        """Whether the effect admits `value` (off, its default, or within its range)."""
        value = float(value)
        if value == self.off:
            return True
        if self.discrete:
            return value == self.default
        return self.low <= value <= self.high

    def allowed(self) -> str:
        """The admitted values in words, for error messages."""
        if self.discrete:
            return f"{_fmt(self.off)} (off) or {_fmt(self.default)} (on), {self.unit}"
        return f"{_fmt(self.off)} (off) or {_fmt(self.low)} to {_fmt(self.high)} {self.unit}"


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


EFFECTS: tuple[Effect, ...] = (
    # ---------------------------------------------------------------- what the twin had before the
    # study
    Effect(
        "encoder_quantization",
        "switch (12-bit link encoder)",
        1.0,
        0.0,
        1.0,
        0.0,
        1.0,
        False,
        "ROBOTIS e-Manual: 4096 positions per turn (AS5045)",
        discrete=True,
    ),
    Effect(
        "encoder_noise",
        "counts rms",
        0.2,
        0.0,
        0.34,
        0.0,
        1.0,
        False,
        "AS5045 datasheet: transition noise 0.03 deg rms (slow mode, 0.34 counts), 0.06 deg rms "
        "(fast mode)",
    ),
    Effect(
        "current_quantization",
        "switch (2.69 mA register unit)",
        1.0,
        0.0,
        1.0,
        0.0,
        1.0,
        False,
        "paper Sec. III-A and e-Manual: Goal Current in 2.69 mA units",
        discrete=True,
    ),
    Effect(
        "current_noise",
        "register units rms",
        1.0,
        0.0,
        1.0,
        0.0,
        5.0,
        False,
        "twin register: a one-unit current-loop error (assumption of the first twin)",
    ),
    Effect(
        "kt_error",
        "% (half-width of the unit's per-axis Kt deviation)",
        10.0,
        0.0,
        10.0,
        0.0,
        20.0,
        False,
        "paper Sec. VII-D: independent per-joint errors of +-10 %, 'the realistic case'",
    ),
    Effect(
        "run_drift",
        "x (friction 5 %, Kt 1 % per execution)",
        1.0,
        0.0,
        1.0,
        0.0,
        3.0,
        False,
        "twin register: run-to-run friction (temperature) and Kt drift (assumption of the first "
        "twin)",
    ),
    Effect(
        "dead_time",
        "ms (encoder read to command applied)",
        _LATENCY_MS,
        0.0,
        _LATENCY_MS,
        0.0,
        3.0,
        False,
        "paper Sec. III-B: 0.9 ms read and dispatch; Table XIX T_d = 1.53 ms with the hold",
    ),
    Effect(
        "jitter",
        "x (wake-up latency, late cycles, latency spread)",
        1.0,
        0.0,
        1.0,
        0.0,
        10.0,
        False,
        "twin register: non-real-time Linux host (assumption of the first twin)",
    ),
    Effect(
        "compliance",
        "Hz (two-mass resonance at the Fig. 1 posture; inf = rigid)",
        100.0,
        INF,
        100.0,
        50.0,
        400.0,
        False,
        "paper Sec. III-B: a lightly damped resonance 'near 100 Hz'",
    ),
    Effect(
        "gear_friction",
        "efficiency of one spur mesh (1 = none)",
        0.97,
        1.0,
        0.97,
        0.90,
        1.0,
        False,
        "textbook 0.95-0.98 per lubricated metal spur mesh; four meshes (twin register)",
    ),
    Effect(
        "voltage_limit",
        "V supply (inf = none)",
        12.0,
        INF,
        12.0,
        10.0,
        14.8,
        False,
        "ROBOTIS e-Manual: 12 V recommended, 10.0-14.8 V admitted; stall and no-load points "
        "at 12 V",
    ),
    Effect(
        "coulomb_friction",
        "x the twin's Coulomb friction (half the Joint-7 drag)",
        1.0,
        0.0,
        1.0,
        0.0,
        2.0,
        False,
        "paper Table XIX Joint-7 gain: drag 0.035 N·m at 1 rad/s, split half Coulomb (2 = all "
        "Coulomb)",
    ),
    Effect(
        "products_of_inertia",
        "x the description's products of inertia",
        1.0,
        0.0,
        1.0,
        0.0,
        2.0,
        False,
        "manufacturer's description: 0.1-8 % of each link's largest diagonal entry (paper Sec. "
        "III-C)",
    ),
    # ---------------------------------------------------------------- candidates added by the study
    # (off by default)
    Effect(
        "backlash",
        "deg (total play at the joint output)",
        0.0,
        0.0,
        0.25,
        0.0,
        1.0,
        True,
        "ROBOTIS e-Manual: backlash 15 arcmin (0.25 deg) for the XM540-W270 and the 353.5:1 train "
        "of the XH/XM430-W350",
    ),
    Effect(
        "encoder_error",
        "deg (peak position-dependent error of the link encoder)",
        0.0,
        0.0,
        0.5,
        0.0,
        1.4,
        True,
        "AS5045 datasheet: integral non-linearity +-0.5 deg (centred magnet), +-1.4 deg (magnet "
        "displaced within tolerance)",
    ),
)
NAMES = tuple(e.name for e in EFFECTS)
BY_NAME = {e.name: e for e in EFFECTS}
NO_EFFECT = "none"  # the effect column of a conditions row that changes nothing of its base profile

# The field profile: today's twin plus the effects the study supports, each at its nominal
# magnitude (book/register_nonideality.md states the rule that picks them, fixed before the study).
FIELD_CHANGES: dict[str, float] = {}
PROFILES = ("default", "ideal", "field")


@dataclass(frozen=True)
class TwinEffects:
    """One value per effect (all of EFFECTS); build with `profile()` and `changed()`."""

    values: tuple[tuple[str, float], ...]
    name: str = "custom"

    def __getitem__(self, key: str) -> float:
        return dict(self.values)[key]

    def changed(self, **changes: float) -> "TwinEffects":
        """A copy with some effects set (names and ranges checked)."""
        values = dict(self.values)
        for key, value in changes.items():
            check_value(key, value, "TwinEffects.changed")
            values[key] = float(value)
        return TwinEffects(tuple((n, values[n]) for n in NAMES), "custom")

    def differences(self) -> dict[str, float]:
        """The effects whose value differs from today's twin."""
        return {n: v for n, v in self.values if v != BY_NAME[n].default}

    @property
    def is_default(self) -> bool:
        """Whether every effect is at its default."""
        return not self.differences()

    def describe(self) -> str:
        """One line: the profile's name and every value that differs from today's twin."""
        differences = self.differences()
        body = (
            ", ".join(f"{n}={_fmt(v)}" for n, v in differences.items())
            if differences
            else "today's twin"
        )
        return f"{self.name}: {body}"


def check_value(name: str, value, where: str) -> float:
    """The value of effect `name` as a float; an InputError naming `where` and the allowed range
    otherwise."""
    if name not in BY_NAME:
        raise InputError(where, f"unknown effect {name!r}", f"one of {', '.join(NAMES)}")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(
            where, f"magnitude {value!r} of {name} is not a number", BY_NAME[name].allowed()
        ) from None
    if math.isnan(value) or not BY_NAME[name].admits(value):
        raise InputError(
            where,
            f"magnitude {_fmt(value)} of {name} is outside its physical range",
            BY_NAME[name].allowed(),
        )
    return value


def profile(name: str = "default") -> TwinEffects:
    """A named profile: "default" (today's twin), "ideal" (every effect off), "field" (register)."""
    if name == "default":
        values = {e.name: e.default for e in EFFECTS}
    elif name == "ideal":
        values = {e.name: e.off for e in EFFECTS}
    elif name == "field":
        values = {e.name: e.default for e in EFFECTS}
        values.update(FIELD_CHANGES)
    else:
        raise InputError("twin profile", repr(name), f"one of {', '.join(PROFILES)}")
    return TwinEffects(tuple((n, float(values[n])) for n in NAMES), name)


def active_profile() -> TwinEffects:
    """The profile the main job runs on: $CRANE_TWIN, "default" when unset."""
    try:
        return profile(os.environ.get("CRANE_TWIN", "default") or "default")
    except InputError as err:
        raise InputError("$CRANE_TWIN (make book TWIN=...)", err.problem, err.expected) from None


# ---------------------------------------------------------------- what the recorder needs


@dataclass
class Realization:
    """A profile turned into the recorder's inputs (recorder.record applies it)."""

    truth: ParameterSet
    settings: PlantSettings
    compliant: bool
    load_friction: bool
    voltage_limit: bool
    encoder_quantization: bool
    current_quantization: bool
    noise: (
        np.ndarray
    )  # (3,): current-loop error A, encoder read noise counts, present-current noise A
    latency_s: float  # mean read-to-command latency
    jitter: float  # scale of the host-timing irregularity
    run_drift: float  # scale of the run-to-run draw
    backlash_half_gap: np.ndarray  # (n_joints,) rad: half the play of each arm axis
    encoder_error: np.ndarray  # (4, n_axes): amplitude and phase of the 1st and 2nd harmonic (rad)
    notes: dict = field(default_factory=dict)


def encoder_error_shape(peak_deg: float, n_axes: int = N_AXES) -> np.ndarray:
    """(4, n_axes) rows a1, phi1, a2, phi2: e(θ) = a1 sin(θ + φ1) + a2 sin(2θ + φ2), a1 = a2 =
    peak/2 (so |e| <= peak), phases drawn once per axis with ENCODER_ERROR_SEED (a property of the
    unit). n_axes: the arm's axes (the CRANE-X7's by default)."""
    rng = np.random.default_rng(ENCODER_ERROR_SEED)
    phases = rng.uniform(0.0, 2.0 * math.pi, size=(2, n_axes))
    half = 0.5 * math.radians(peak_deg)
    amplitude = np.full(n_axes, half)
    return np.ascontiguousarray(np.vstack([amplitude, phases[0], amplitude, phases[1]]))


def _scaled_truth(truth: ParameterSet, coulomb: float, products: float) -> ParameterSet:
    if coulomb == 1.0 and products == 1.0:
        return truth
    values = truth.as_dict()
    for name in values:
        kind = name.rstrip("0123456789")
        if kind == "FS":
            values[name] *= coulomb
        elif kind in ("XY", "XZ", "YZ"):
            values[name] *= products
    return ParameterSet(truth.names, np.array([values[n] for n in truth.names]))


def _settings(
    settings: PlantSettings,
    kt_error: float,
    resonance_hz: float,
    mesh: float,
    supply: float,
    arm: str = CRANE_X7,
) -> PlantSettings:
    changes = {}
    default = {e.name: e.default for e in EFFECTS}
    if kt_error != default["kt_error"]:
        changes["kt_true"] = settings.kt_logged + (settings.kt_true - settings.kt_logged) * (
            kt_error / default["kt_error"]
        )
    if resonance_hz != default["compliance"] and math.isfinite(resonance_hz):
        ratio = resonance_hz / settings.resonance_hz  # same damping ratio: k ~ f^2, d ~ f
        changes.update(
            stiffness=settings.stiffness * ratio**2,
            damping=settings.damping * ratio,
            resonance_hz=settings.resonance_hz * ratio,
        )
    if mesh != default["gear_friction"] and mesh != 1.0:
        joints = range(1, len(settings.stiffness) + 1)
        stages = [twin_truth.GEAR_STAGES[twin_truth.actuator_model(j, arm)] for j in joints]
        n = np.array(stages, dtype=float)
        changes.update(efficiency_driving=mesh**n, efficiency_backdriven=(2.0 - 1.0 / mesh) ** n)
    if supply != default["voltage_limit"] and math.isfinite(supply):
        ratio = (
            supply / settings.supply_voltage
        )  # R and k_e are properties of the motor: i_stall, ω_nl scale with V
        changes.update(
            supply_voltage=supply,
            stall_current=settings.stall_current * ratio,
            no_load_speed=settings.no_load_speed * ratio,
        )
    return replace(settings, **changes) if changes else settings


def realization(
    effects: TwinEffects, truth: ParameterSet, settings: PlantSettings, arm: str = CRANE_X7
) -> Realization:
    """What `effects` asks of one recording, from the unit's truth and drive settings (of `arm`,
    whose axis and joint counts are those of `settings`)."""
    v = dict(effects.values)
    for name, value in v.items():
        check_value(name, value, f"twin profile {effects.name}")
    rigid = math.isinf(v["compliance"])
    if rigid and v["backlash"] > 0.0:
        raise InputError(
            f"twin profile {effects.name}",
            "backlash on a rigid drivetrain (compliance = inf)",
            "a compliant drivetrain: the play sits between the rotor and the link spring",
        )
    n_axes, n_joints = len(settings.kt_logged), len(settings.stiffness)
    unit = twin_truth.twin_arm(arm).actuators[0].current_unit  # A per current register unit
    half_gap = np.zeros(n_joints)
    half_gap[:] = 0.5 * math.radians(v["backlash"])
    return Realization(
        truth=_scaled_truth(truth, v["coulomb_friction"], v["products_of_inertia"]),
        settings=_settings(
            settings, v["kt_error"], v["compliance"], v["gear_friction"], v["voltage_limit"], arm
        ),
        compliant=not rigid,
        load_friction=v["gear_friction"] != 1.0 and not rigid,
        voltage_limit=math.isfinite(v["voltage_limit"]),
        encoder_quantization=v["encoder_quantization"] == 1.0,
        current_quantization=v["current_quantization"] == 1.0,
        noise=np.array([v["current_noise"] * unit, v["encoder_noise"], 2.0 * unit]),
        latency_s=v["dead_time"] * 1e-3,
        jitter=v["jitter"],
        run_drift=v["run_drift"],
        backlash_half_gap=np.ascontiguousarray(half_gap),
        encoder_error=(
            encoder_error_shape(v["encoder_error"], n_axes)
            if v["encoder_error"] > 0.0
            else np.zeros((4, n_axes))
        ),
    )
