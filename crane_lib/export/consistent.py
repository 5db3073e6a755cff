"""The standard parameters behind a base-parameter model: a physically consistent link-level model.

A base model (39 parameters in the reduced set) fixes only combinations of the 94 standard
parameters (beta = K phi, `crane_lib.model.dynamics.base_matrix`). A robotics tool needs the
standard ones: a mass, a centre of mass and an inertia tensor per link, a rotor inertia and
friction per joint. This module finds them:

    minimise    D(phi, prior)
    subject to  K_full phi = beta_full          (the model, exactly)
                J_j(phi) - margin * 1  PSD      (j = 1..7, every link physically consistent)
                IA, FV, FS >= 0                 (rotor inertias and friction)

J_j is the link's 4x4 pseudo-inertia (Wensing, Kim, Slotine 2017),

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I)/2 * 1 - I = integral of x x^T dm,

with I the inertia about the frame origin O_j, h the first moment and m the mass: J is
positive definite exactly when some positive mass density produces (m, h, I), i.e. when the
link can be built. `beta_full` is the model in the full grouped set (65 parameters): the model's
own values, and zero for every base parameter its set leaves out (the reduced set has no products
of inertia of links 2-7 and no Coulomb friction, so the exported links have none either and the
exported files reproduce the model's dynamics, not just its 39 numbers).

The base parameters leave most of the links free (the masses of links 3-7 only enter sums,
link 1 only through ZZR1 = ZZ1 + YY2 + IA1, ...); the prior decides the free part. Two
distances are offered:

  "bregman"    the log-det (Bregman) divergence of the pseudo-inertias,
               sum_j tr(J0_j^-1 J_j) - log det(J0_j^-1 J_j) - 4 (Lee, Wensing, Park 2020): it is
               invariant under a change of frame and of units and grows without bound as a link
               approaches an impossible body, so it keeps a margin by itself;
  "euclidean"  the Euclidean distance of the ten link parameters, each divided by its prior
               link's own scale (mass m0, first moments m0 rho, second moments m0 rho^2 with
               rho^2 = tr(Sigma0)/m0 the prior link's squared radius of gyration about O_j).

The rotor inertias that the grouping merges with link terms (IA1 into ZZR1, IA2 into ZZR2) have
no prior (the manufacturer's description has no rotors): they take what the base parameter
leaves after the links, and must be non-negative.

When no consistent vector reproduces the model exactly (the problem is infeasible), the nearest
consistent model is reported instead: the smallest change of the model's base parameters, in
their standard errors when the model file has them (the data's own scale), otherwise Euclidean in
SI units, for which a consistent link-level model exists; among those, the one nearest to the
prior. Everything is solved by Clarabel through cvxpy.

Any arm (`ArmDescription`, `arm=`): the same problem in the arm's own standard parameters (13 per
link in the chain model's frames, joint j's frame, then the gripper's IA, FV, FS), its grouping's
sets and base matrix, and its description's inertial prior; None (or the CRANE-X7's description)
is the CRANE-X7 as above.
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

import cvxpy as cp
import numpy as np

from crane_lib.arithmetic import CLARABEL_OPTIONS
from crane_lib.errors import InputError
from crane_lib.identification.weighted import Consistency
from crane_lib.model import base_parameters
from crane_lib.model.arm_description import ArmDescription
from crane_lib.model.dynamics import arm_parameter_set, base_matrix, is_crane_x7
from crane_lib.model.parameters import N_LINKS, ParameterSet, split_name, standard_parameter_names
from crane_lib.model.robot_description import description_standard_parameters

LINK_KINDS = (
    "XX",
    "XY",
    "XZ",
    "YY",
    "YZ",
    "ZZ",
    "MX",
    "MY",
    "MZ",
    "M",
)  # a link's ten inertial parameters
DRIVE_KINDS = ("IA", "FV", "FS")
DISTANCES = ("bregman", "euclidean")
DEFAULT_DISTANCE = "bregman"
# lambda_min(J_j) >= MARGIN, in SI with lengths in metres. A link's mass (0.14-0.32 kg in the
# description) dwarfs its second moments, so lambda_min(J) is, to within a fraction of a percent,
# the smallest central second moment of its mass, m sigma^2: the margin asks every link to spread
# its mass at least sigma = sqrt(MARGIN / m), 2-3 mm, in every direction.
MARGIN = 1e-6  # kg·m^2
# a posteriori checks of a solution (the solver works to about 1e-8 in scaled units)
CHECK_RTOL = 1e-3  # lambda_min(J) >= MARGIN (1 - CHECK_RTOL)
# scales of the drive parameters (numerics only: they are not in any distance)
_DRIVE_SCALE = {"IA": 1e-3, "FV": 1e-2, "FS": 1e-2}
# the nearest model's change may exceed the smallest change by this share (the second solve's slack)
NEAREST_SLACK = 1e-3
# The nearest model, tried in turn until the answer passes the check: (slack, factor on the margin
# solved for; the check keeps the margin given). Within 1e-3 of the smallest change an
# interior-point solver has a nearly degenerate sliver left, and Clarabel's "optimal_inaccurate"
# answer there can miss the margin by 20 % or more (models that `crane-id identify` writes); a
# wider slack, and a margin solved for above the checked one by twice the check's tolerance,
# give an answer that passes. The first attempt is the plain problem, so every answer that
# passed before is unchanged.
NEAREST_ATTEMPTS = (
    (NEAREST_SLACK, 1.0),
    (1e-2, 1.0 + 2 * CHECK_RTOL),
    (1e-1, 1.0 + 2 * CHECK_RTOL),
)
# The largest margin `crane-id export` takes: the smallest pseudo-inertia eigenvalue of the
# manufacturer's links (link 6, 1.391e-5 kg·m^2), rounded down. A larger margin calls the
# manufacturer's own arm an impossible body, so a model near it would be refused for the margin,
# not for itself.
MARGIN_MAX = 1.39e-5  # kg·m^2


class NoConsistentModel(InputError):
    """A base model that no physically consistent standard vector reproduces."""


@contextmanager
def _quiet_solver():
    """cvxpy's warnings on Clarabel's inexact or failed exits kept off the terminal: each solve's
    status is recorded (`solves`) and the answer is checked, so a message says what went wrong."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning, module=r"cvxpy(\.|$)")
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        yield


@dataclass(frozen=True)
class ArmTerms:
    """What the reconstruction needs of an arm: its standard names, link count, sets, prior."""

    arm: ArmDescription | None  # None: the CRANE-X7

    @property
    def crane_x7(self) -> bool:
        """True for the CRANE-X7 (its MDH frames and the manufacturer's description)."""
        return is_crane_x7(self.arm)

    @property
    def names(self) -> list[str]:
        """The arm's standard parameter names, in the standard order."""
        return standard_parameter_names() if self.crane_x7 else self.arm.standard_parameter_names()

    @property
    def n_links(self) -> int:
        """Number of arm links (each with ten inertial parameters)."""
        return N_LINKS if self.crane_x7 else self.arm.n_joints

    def parameter_set(self, name: str) -> list[str]:
        """Base names of one of the nested sets (reduced, ..., full)."""
        if self.crane_x7:
            return base_parameters.grouping().parameter_set(name)
        return arm_parameter_set(self.arm, name)

    def base_matrix(self, name: str) -> np.ndarray:
        """K with beta = K phi of a set (columns: `names`)."""
        return base_matrix(name, None if self.crane_x7 else self.arm)

    def prior(self) -> tuple[dict, str]:
        """(standard values by name, its name) of the description's inertial prior."""
        if self.crane_x7:
            return description_standard_parameters(), "manufacturer's description"
        return dict(self.arm.inertial_prior), f"{self.arm.name} description's prior"


def arm_terms(arm: ArmDescription | None = None) -> ArmTerms:
    """The reconstruction's view of `arm` (None: the CRANE-X7)."""
    return ArmTerms(arm)


# ----------------------------------------------------------------------------- link algebra


@lru_cache(maxsize=1)
def _basis() -> np.ndarray:
    """(10, 4, 4): J = sum_k p_k B_k for p = (XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M)."""
    basis = np.zeros((10, 4, 4))
    # Sigma = tr(I)/2 - I: Sigma_xx = (-XX + YY + ZZ)/2, Sigma_xy = -XY, ...
    for k, (a, b, c) in enumerate(((0, 1, 2), (1, 0, 2), (2, 0, 1))):  # XX, YY, ZZ
        index = (0, 3, 5)[k]
        basis[index, a, a] = -0.5
        basis[index, b, b] = 0.5
        basis[index, c, c] = 0.5
    for index, (a, b) in ((1, (0, 1)), (2, (0, 2)), (4, (1, 2))):  # XY, XZ, YZ
        basis[index, a, b] = basis[index, b, a] = -1.0
    for index, a in ((6, 0), (7, 1), (8, 2)):  # MX, MY, MZ
        basis[index, a, 3] = basis[index, 3, a] = 1.0
    basis[9, 3, 3] = 1.0
    return basis


def consistency_constraints(parameter_set: str = "reduced", margin: float = MARGIN):
    """The physical-consistency constraints of the dual-metric WLS (`identification.weighted.
    Consistency`): beta = K phi with K the set's base matrix, every link's pseudo-inertia
    J_j(phi) >= margin I, rotor inertias and friction (IA, FV, FS) >= 0. Unlike `reconstruct`,
    the base parameters the set leaves out (products of inertia of links 2-7, Coulomb friction
    in the reduced set) are free: the constraint asks only that *some* consistent arm has the
    estimated base parameters."""
    names = standard_parameter_names()
    drive = np.array([i for i, n in enumerate(names) if split_name(n)[0] in DRIVE_KINDS])
    lmis = [(np.array(link_indices(j)), _basis()) for j in range(1, N_LINKS + 1)]
    # typical sizes (SI) so that the solver's variables are of order one: a link's mass, first
    # moments, second moments; the drive terms as the reconstruction scales them
    typical = {"M": 1.0, "MX": 0.1, "MY": 0.1, "MZ": 0.1, **_DRIVE_SCALE}
    scale = np.array([typical.get(split_name(n)[0], 1e-2) for n in names])
    return Consistency(base_matrix(parameter_set), lmis, drive, float(margin), scale)


def pseudo_inertia(link: np.ndarray) -> np.ndarray:
    """4x4 pseudo-inertia of a link's ten parameters (XX XY XZ YY YZ ZZ MX MY MZ M, about O_j)."""
    return np.einsum("k,kab->ab", np.asarray(link, dtype=float), _basis())


def link_indices(j: int, arm: ArmDescription | None = None) -> list[int]:
    """Positions of link j's ten inertial parameters in the (arm's) standard order."""
    names = arm_terms(arm).names
    return [names.index(f"{kind}{j}") for kind in LINK_KINDS]


def link_parameters(standard, j: int, arm: ArmDescription | None = None) -> np.ndarray:
    """Link j's ten inertial parameters of a standard vector (standard order) or ParameterSet."""
    if isinstance(standard, ParameterSet):
        values = standard.ordered(arm_terms(arm).names, "standard parameters")
    else:
        values = np.asarray(standard)
    return values[link_indices(j, arm)]


def link_margins(standard, arm: ArmDescription | None = None) -> np.ndarray:
    """(links,) smallest eigenvalue of each link's pseudo-inertia, kg·m^2 (SI)."""
    return np.array(
        [
            np.linalg.eigvalsh(pseudo_inertia(link_parameters(standard, j, arm)))[0]
            for j in range(1, arm_terms(arm).n_links + 1)
        ]
    )


@dataclass(frozen=True)
class LinkInertial:
    """A link read as a body: mass, centre of mass, inertia about the centre of mass (frame-j
    axes)."""

    link: int
    mass: float  # kg
    com: np.ndarray  # (3,) m, in frame j
    inertia: np.ndarray  # (3, 3) kg·m^2 about the centre of mass, frame-j axes

    @property
    def principal(self) -> tuple[np.ndarray, np.ndarray]:
        """(moments ascending, axes as columns) of the central inertia."""
        return np.linalg.eigh(self.inertia)

    @property
    def ellipsoid_semi_axes(self) -> np.ndarray:
        """Semi-axes (m) of the uniform solid ellipsoid with this mass and central inertia, along
        the principal axes (a_i^2 = 5 (I_j + I_k - I_i) / (2 m)); NaN where it does not exist."""
        moments = self.principal[0]
        squared = 5.0 * (moments.sum() - 2.0 * moments) / (2.0 * self.mass)
        return np.sqrt(np.where(squared > 0, squared, np.nan))


def link_inertial(standard, j: int, arm: ArmDescription | None = None) -> LinkInertial:
    """Link j as a body (mass, centre of mass, central inertia) in its frame j."""
    xx, xy, xz, yy, yz, zz, mx, my, mz, m = link_parameters(standard, j, arm)
    about_origin = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    com = np.array([mx, my, mz]) / m if m != 0 else np.full(3, np.nan)
    central = about_origin - m * (com @ com * np.eye(3) - np.outer(com, com))
    return LinkInertial(j, float(m), com, central)


def link_inertials(standard, arm: ArmDescription | None = None) -> list[LinkInertial]:
    """Every arm link as a body (`link_inertial`)."""
    return [link_inertial(standard, j, arm) for j in range(1, arm_terms(arm).n_links + 1)]


# ----------------------------------------------------------------------------- the base model


def base_set_of(
    params: ParameterSet, source: str = "base model", arm: ArmDescription | None = None
) -> str:
    """The parameter set (reduced, reduced+poi, reduced+coulomb, full) whose names the model has."""
    terms = arm_terms(arm)
    names = set(params.names)
    for name in base_parameters.PARAMETER_SETS:
        if names == set(terms.parameter_set(name)):
            return name
    # names what is missing or unknown against the reduced set
    params.ordered(terms.parameter_set("reduced"), source)
    raise InputError(
        source,
        "parameter names of no known set",
        f"one of the sets {base_parameters.PARAMETER_SETS}",
    )


def is_standard(params: ParameterSet, arm: ArmDescription | None = None) -> bool:
    """True when `params` names exactly the (arm's) standard parameters."""
    return set(params.names) == set(arm_terms(arm).names)


def prior_vector(prior=None, arm: ArmDescription | None = None) -> tuple[np.ndarray, str]:
    """Prior in the standard order (drive terms 0: they are not in any distance) and its name."""
    terms = arm_terms(arm)
    if prior is None:
        values, name = terms.prior()
    elif isinstance(prior, ParameterSet):
        values, name = prior.as_dict(), prior.meta.get("name", "given prior")
    else:
        values, name = dict(prior), "given prior"
    vector = np.zeros(len(terms.names))
    for j in range(1, terms.n_links + 1):
        for kind, index in zip(LINK_KINDS, link_indices(j, arm)):
            key = f"{kind}{j}"
            if key not in values:
                raise InputError(
                    f"prior {name}",
                    f"no {key}",
                    f"the ten inertial parameters of every link 1-{terms.n_links}",
                )
            vector[index] = float(values[key])
    margins = link_margins(vector, arm)
    if np.any(margins <= 0):
        bad = [j + 1 for j in np.flatnonzero(margins <= 0)]
        raise InputError(
            f"prior {name}",
            f"links {bad} are not physically consistent (pseudo-inertia not positive definite)",
            "a prior whose every link is a possible body",
        )
    return vector, name


# ----------------------------------------------------------------------------- what the base model
# decides


@dataclass(frozen=True)
class DecidedMoment:
    """A diagonal entry of a link's second moment Sigma = integral of x x^T dm that the base
    parameters of a set decide: Sigma_aa,j = sum_i weights[i] beta_i. A consistent link needs it
    positive (and at least the margin, a diagonal entry of J), whatever the rest of the link is."""

    link: int
    axis: str  # "x", "y" or "z" of frame j
    weights: dict  # base name -> coefficient

    @property
    def expression(self) -> str:
        """The combination as printed ("ZZR2 + 0.25 MXR3")."""
        terms = []
        for name, w in sorted(self.weights.items(), key=lambda item: -item[1]):
            sign = "-" if w < 0 else "+"
            size = (
                ""
                if abs(abs(w) - 1.0) < 1e-12
                else ("1/2 " if abs(abs(w) - 0.5) < 1e-12 else f"{abs(w):g} ")
            )
            terms.append(f"{sign} {size}{name}")
        text = " ".join(terms)
        return text[2:] if text.startswith("+ ") else text

    def value(self, base: ParameterSet) -> float:
        """The combination's value on a base parameter set."""
        values = base.as_dict()
        return float(sum(w * values.get(name, 0.0) for name, w in self.weights.items()))


def decided_moments(
    parameter_set: str = "reduced", arm: ArmDescription | None = None
) -> list[DecidedMoment]:
    """Every diagonal entry of a link's Sigma that the set's base parameters decide (with the base
    parameters the set leaves out held at zero). Found from the base matrix, not assumed: e_aa of
    Sigma_j, as a linear form c on the standard parameters, is decided when c lies in the row space
    of the full grouped K; its weights on the base parameters then follow from c = K^T w."""
    terms = arm_terms(arm)
    full = terms.parameter_set("full")
    kept = set(terms.parameter_set(parameter_set))
    k = terms.base_matrix("full")
    basis = _basis()
    found = []
    for j in range(1, terms.n_links + 1):
        index = link_indices(j, arm)
        for a, axis in enumerate("xyz"):
            c = np.zeros(k.shape[1])
            c[index] = basis[:, a, a]
            w, *_ = np.linalg.lstsq(k.T, c, rcond=None)
            if np.abs(k.T @ w - c).max() > 1e-9:
                continue
            weights = {
                full[i]: float(w[i]) for i in np.flatnonzero(np.abs(w) > 1e-12) if full[i] in kept
            }
            found.append(DecidedMoment(j, axis, weights))
    return found


# ----------------------------------------------------------------------------- the result


@dataclass
class Reconstruction:
    """A consistent standard vector behind a base model, and how it was found.

    parameter_set    the base model's set (reduced, ...); "standard" when a standard vector was
                     given
    base             the base model as given (its set's names, in the model's order)
    standard         the 94 standard parameters (ParameterSet, standard order)
    exact            True when `standard` reproduces `base` exactly (to rounding)
    change           K phi - beta on the set's names (zero when exact)
    change_metric    how the change was measured when it had to be made
    change_norm      the change in that metric
    distance, divergence, prior_name, margin, solves (one dict per solve: what, status, seconds)
    largest_margin   when not exact: the largest margin with which a consistent vector reproduces
                     the model exactly (<= 0: none does), None when unknown
    """

    parameter_set: str
    base: ParameterSet
    standard: ParameterSet
    exact: bool
    change: np.ndarray
    change_metric: str
    change_norm: float
    distance: str
    divergence: float
    prior_name: str
    margin: float
    solves: list = field(default_factory=list)
    largest_margin: float | None = None
    arm: ArmDescription | None = None  # None: the CRANE-X7

    @property
    def reproduced(self) -> ParameterSet:
        """The base parameters of `standard` (the model the exported files carry)."""
        return ParameterSet(self.base.names, self.base.values + self.change)

    @property
    def link_margins(self) -> np.ndarray:
        """Smallest pseudo-inertia eigenvalue of each link (kg·m^2)."""
        return link_margins(self.standard.values, self.arm)

    @property
    def links(self) -> list[LinkInertial]:
        """Every link as a body."""
        return link_inertials(self.standard.values, self.arm)

    @property
    def seconds(self) -> float:
        """Seconds spent in the solver over all solves."""
        return float(sum(s["seconds"] for s in self.solves))

    def changed(self, k: int = 3) -> list[tuple[str, float]]:
        """The k base parameters that moved most, in the change metric's units (name, change)."""
        scale = _change_scale(self.base)[0]
        moved = self.change / scale
        order = np.argsort(-np.abs(moved))[:k]
        return [(self.base.names[i], float(moved[i])) for i in order if moved[i] != 0]

    def summary(self) -> str:
        """One line: what was reconstructed, how far it moved and its smallest margin."""
        worst = int(np.argmin(self.link_margins))
        if self.parameter_set == "standard":
            return (
                "standard parameters, consistent as given; smallest pseudo-inertia eigenvalue "
                f"{self.link_margins[worst]:.3g} kg·m² "
                f"(link {worst + 1}, margin {self.margin:g})"
            )
        head = (
            "reproduces the model exactly"
            if self.exact
            else "NO consistent link-level model reproduces the model; the nearest changes it by "
            f"{self.change_norm:.3g} ({self.change_metric})"
        )
        return (
            f"{head}; {self.distance} distance to the {self.prior_name} {self.divergence:.4g}; "
            "smallest pseudo-inertia "
            f"eigenvalue {self.link_margins[worst]:.3g} kg·m² (link {worst + 1}, margin "
            f"{self.margin:g})"
        )

    def to_record(self) -> dict:
        """The reconstruction as a JSON-ready record."""
        return {
            "parameter_set": self.parameter_set,
            "exact": bool(self.exact),
            "distance": self.distance,
            "divergence": float(self.divergence),
            "prior": self.prior_name,
            "margin": float(self.margin),
            "link_margins": self.link_margins.tolist(),
            "base_names": list(self.base.names),
            "base": self.base.values.tolist(),
            "base_std_errors": None
            if self.base.std_errors is None
            else self.base.std_errors.tolist(),
            "change": self.change.tolist(),
            "change_metric": self.change_metric,
            "change_norm": float(self.change_norm),
            "standard_names": list(self.standard.names),
            "standard": self.standard.values.tolist(),
            "solves": [{k: v for k, v in s.items() if k != "seconds"} for s in self.solves],
        }


def _change_scale(base: ParameterSet) -> tuple[np.ndarray, str]:
    """Per base parameter, the unit of its change: its standard error, or 1 (Euclidean, SI)."""
    errors = base.std_errors
    if (
        errors is not None
        and errors.shape == base.values.shape
        and np.all(np.isfinite(errors))
        and np.all(errors > 0)
    ):
        return errors, "OLS standard errors"
    return np.ones_like(base.values), "Euclidean, SI units"


# ----------------------------------------------------------------------------- the problem


class _Problem:
    """The reconstruction in scaled variables x (phi = s * x), shared by every solve."""

    def __init__(
        self,
        base: ParameterSet,
        parameter_set: str,
        prior: np.ndarray,
        margin: float,
        arm: ArmDescription | None = None,
    ):
        terms = arm_terms(arm)
        self.arm = arm
        names = terms.names
        full_names = terms.parameter_set("full")
        in_set = set(base.names)
        self.soft = np.array(
            [n in in_set for n in full_names]
        )  # rows the model fixes (the rest are zero)
        values = base.as_dict()
        target = np.array([values.get(n, 0.0) for n in full_names])
        self.set_rows = [full_names.index(n) for n in base.names]  # the model's order
        self.scale = np.empty(len(names))
        self.links = []
        for j in range(1, terms.n_links + 1):
            index = link_indices(j, arm)
            prior_link = prior[index]
            mass = prior_link[9]
            rho2 = np.trace(pseudo_inertia(prior_link)[:3, :3]) / mass
            self.scale[index] = [mass * rho2] * 6 + [mass * np.sqrt(rho2)] * 3 + [mass]
            # J~ = S^-1 J S^-1 with S = sqrt(m0) diag(rho, rho, rho, 1): the same basis in x
            inverse_s2 = np.diag([1.0 / (mass * rho2)] * 3 + [1.0 / mass])
            self.links.append((index, inverse_s2, pseudo_inertia(prior_link / self.scale[index])))
        self.drive = [i for i, n in enumerate(names) if split_name(n)[0] in DRIVE_KINDS]
        for i in self.drive:
            self.scale[i] = _DRIVE_SCALE[split_name(names[i])[0]]
        a = terms.base_matrix("full") * self.scale[None, :]
        rows = np.abs(a).max(axis=1)
        rows[rows == 0] = 1.0
        self.a, self.b, self.row_scale = a / rows[:, None], target / rows, rows
        self.margin = margin
        self.prior_x = prior / self.scale
        self.x = cp.Variable(len(names))
        self.y = [cp.Variable((4, 4), symmetric=True) for _ in self.links]

    def consistency(self) -> list:
        constraints = [self.x[self.drive] >= 0]
        basis = _basis()
        for (index, inverse_s2, _), y in zip(self.links, self.y):
            constraints.append(y == sum(self.x[i] * basis[k] for k, i in enumerate(index)))
            constraints.append(y - self.margin * inverse_s2 >> 0)
        return constraints

    def largest_margin(self) -> float | None:
        """The largest t (kg·m^2) for which some phi reproduces every row with J_j(phi) >= t I for
        every link; None when the solver gives no answer."""
        t = cp.Variable()
        basis = _basis()
        # t <= 1 kg·m^2 keeps the problem bounded whatever the model leaves free
        constraints = [self.x[self.drive] >= 0, self.a @ self.x == self.b, t <= 1.0]
        for index, inverse_s2, _ in self.links:
            link = sum(self.x[i] * basis[k] for k, i in enumerate(index))
            constraints.append(link - t * inverse_s2 >> 0)
        problem = cp.Problem(cp.Maximize(t), constraints)
        try:
            with _quiet_solver():
                problem.solve(solver=cp.CLARABEL, **CLARABEL_OPTIONS)
        except cp.SolverError:
            return None
        return float(t.value) if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else None

    def divergence(self, distance: str):
        if distance == "bregman":
            terms = []
            for (_, _, prior_j), y in zip(self.links, self.y):
                terms.append(
                    cp.trace(np.linalg.inv(prior_j) @ y)
                    - cp.log_det(y)
                    + np.linalg.slogdet(prior_j)[1]
                    - 4.0
                )
            return cp.sum(cp.hstack(terms))
        if distance == "euclidean":
            index = np.concatenate([link[0] for link in self.links])
            return cp.sum_squares(self.x[index] - self.prior_x[index])
        raise InputError("distance", repr(distance), f"one of {DISTANCES}")

    def change(self, unit: np.ndarray):
        """The change of the model's base parameters, in `unit` (per set row, model order)."""
        rows = self.set_rows
        weight = self.row_scale[rows] / unit
        return cp.multiply(weight, self.a[rows] @ self.x - self.b[rows])

    def solve(self, objective, constraints, what: str, solves: list) -> str:
        problem = cp.Problem(cp.Minimize(objective), constraints)
        start = time.perf_counter()
        try:
            with _quiet_solver():
                problem.solve(solver=cp.CLARABEL, **CLARABEL_OPTIONS)
        except cp.SolverError as error:
            solves.append(
                {
                    "what": what,
                    "status": f"solver error: {error}",
                    "seconds": time.perf_counter() - start,
                }
            )
            return "solver_error"
        solves.append(
            {"what": what, "status": problem.status, "seconds": time.perf_counter() - start}
        )
        return problem.status

    def standard(self, rows: np.ndarray) -> np.ndarray:
        """phi from the solution, with the equality rows `rows` made exact by the smallest change of
        x.

        A row that names one standard parameter alone (IA3, FV1, FS1, XY2, ...) then sets it to the
        model's value exactly, and a drive parameter that the solver leaves at zero to rounding
        (-1e-12 of its scale) is zero, so that no tool reads a negative friction or rotor
        inertia."""
        x = np.asarray(self.x.value, dtype=float)
        a, b = self.a[rows], self.b[rows]
        x = x + np.linalg.lstsq(a, b - a @ x, rcond=None)[0]
        for row in rows:
            (columns,) = np.nonzero(self.a[row])
            if len(columns) == 1:
                x[columns[0]] = self.b[row] / self.a[row, columns[0]]
        drive = np.array(self.drive)
        x[drive] = np.where((x[drive] < 0) & (x[drive] > -1e-12), 0.0, x[drive])
        return self.scale * x

    def divergence_value(self, phi: np.ndarray, distance: str) -> float:
        x = phi / self.scale
        if distance == "bregman":
            total = 0.0
            for index, _, prior_j in self.links:
                ratio = np.linalg.solve(prior_j, pseudo_inertia(x[index]))
                total += float(np.trace(ratio) - np.linalg.slogdet(ratio)[1] - 4.0)
            return total
        index = np.concatenate([link[0] for link in self.links])
        return float(np.sum((x[index] - self.prior_x[index]) ** 2))


def _check(phi: np.ndarray, margin: float, arm: ArmDescription | None = None) -> str | None:
    """None when phi is consistent with the margin (to CHECK_RTOL), else what fails."""
    margins = link_margins(phi, arm)
    if np.any(margins < margin * (1.0 - CHECK_RTOL)):
        j = int(np.argmin(margins))
        return f"link {j + 1}: lambda_min(J) = {margins[j]:.3g} kg·m^2 < margin {margin:g}"
    names = arm_terms(arm).names
    drive = [i for i, n in enumerate(names) if split_name(n)[0] in DRIVE_KINDS]
    worst = min(drive, key=lambda i: phi[i])
    if phi[worst] < -1e-12:
        return f"{names[worst]} = {phi[worst]:.3g} < 0"
    return None


def reconstruct(
    base: ParameterSet,
    prior=None,
    distance: str = DEFAULT_DISTANCE,
    margin: float = MARGIN,
    source: str = "base model",
    arm: ArmDescription | None = None,
) -> Reconstruction:
    """The consistent standard vector behind `base` nearest to `prior` (default: the manufacturer's
    description), or, when none reproduces `base`, the nearest consistent model (exact=False).

    `base` holds the names of one of the parameter sets (reduced, reduced+poi, reduced+coulomb,
    full) with their values (and, optionally, standard errors); a 94-parameter standard vector is
    checked as it is (`from_standard`). `arm`: the arm whose parameters these are (None: the
    CRANE-X7; `ArmTerms`)."""
    if distance not in DISTANCES:
        raise InputError("distance", repr(distance), f"one of {DISTANCES}")
    if is_standard(base, arm):
        return from_standard(base, margin, source, arm)
    parameter_set = base_set_of(base, source, arm)
    prior_phi, prior_name = prior_vector(prior, arm)
    problem = _Problem(base, parameter_set, prior_phi, margin, arm)
    solves: list[dict] = []
    consistency = problem.consistency()
    objective = problem.divergence(distance)
    all_rows = np.arange(len(problem.b))
    unit, metric = _change_scale(base)
    status = problem.solve(
        objective,
        consistency + [problem.a @ problem.x == problem.b],
        "exact: nearest to the prior",
        solves,
    )
    if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        phi = problem.standard(all_rows)
        failure = _check(phi, margin, arm)
        if failure is None:
            return _result(
                base,
                parameter_set,
                phi,
                True,
                np.zeros(len(base.names)),
                metric,
                0.0,
                distance,
                problem.divergence_value(phi, distance),
                prior_name,
                margin,
                solves,
                arm,
            )
        solves[-1]["status"] += f" (rejected: {failure})"
    # no exact consistent vector (or the solver could not tell): is the margin the cause? Then the
    # nearest consistent model, tried as NEAREST_ATTEMPTS says until its answer passes the check
    largest = _largest_margin(problem, base, parameter_set)
    result = _nearest(
        problem,
        base,
        parameter_set,
        prior_phi,
        prior_name,
        distance,
        margin,
        unit,
        metric,
        largest,
        source,
        solves,
    )
    result.largest_margin = largest
    return result


def _largest_margin(problem: _Problem, base: ParameterSet, parameter_set: str) -> float | None:
    """The largest margin of an exact consistent model: at most every decided second moment (a
    diagonal entry of J), so a negative one answers without a solve."""
    decided = [d.value(base) for d in decided_moments(parameter_set, problem.arm)]
    if decided and min(decided) <= 0:
        return min(decided)
    return problem.largest_margin()


def margin_advice(largest: float | None, margin: float) -> str:
    """'' unless the margin alone keeps the model from an exact consistent vector: then the
    largest margin that admits one, rounded down to two digits, as a sentence for a message."""
    if largest is None or not 0 < largest < margin:
        return ""
    digits = 10.0 ** (np.floor(np.log10(largest)) - 1)
    admitted = np.floor(largest * (1 - 1e-3) / digits) * digits  # below the solver's answer
    return (
        f"; the margin is the cause: with --margin {admitted:.2g} or less a consistent "
        f"link-level model reproduces it exactly"
    )


def _moved(names, change, k: int = 3) -> str:
    """The k largest entries of `change` as 'name +x' (in the change metric's units)."""
    order = np.argsort(-np.abs(change))[:k]
    return ", ".join(f"{names[i]} {change[i]:+.2g}" for i in order if change[i] != 0) or "none"


def _nearest(
    first: _Problem,
    base,
    parameter_set,
    prior_phi,
    prior_name,
    distance,
    margin,
    unit,
    metric,
    largest,
    source,
    solves,
    change_factor: float = 1.0,
    first_smallest: tuple[float, np.ndarray] | None = None,
) -> Reconstruction:
    """The nearest consistent model (the smallest change of the model, then the prior among
    changes at most `change_factor` times that large), tried as NEAREST_ATTEMPTS says;
    NoConsistentModel naming the stage, the solver's status and the smallest change found when
    no attempt passes the check. `first_smallest`: the first attempt's smallest change, when the
    caller has solved for it already (`tradeoff`, once for all its factors)."""
    stage, status, smallest_seen = "", "", None
    for number, (slack, factor) in enumerate(NEAREST_ATTEMPTS):
        note = "" if number == 0 else f" (retry {number}: slack {slack:g}, margin x {factor:g})"
        problem = (
            first
            if factor == 1.0
            else _Problem(base, parameter_set, prior_phi, margin * factor, first.arm)
        )
        consistency = problem.consistency()
        stage = "the smallest change of the model"
        if number == 0 and first_smallest is not None:
            smallest, change = first_smallest
        else:
            try:
                smallest, change = _smallest_change(
                    problem, consistency, unit, parameter_set, source, solves, note
                )
            except NoConsistentModel:
                status = solves[-1]["status"]
                continue
        if smallest_seen is None:
            smallest_seen = (smallest, change)
        stage = "the prior, among changes this small"
        bound = smallest * (change_factor**2 + slack) + 1e-14  # squared norms
        try:
            phi = _nearest_within(
                problem,
                consistency,
                problem.divergence(distance),
                unit,
                bound,
                source,
                solves,
                note,
            )
        except NoConsistentModel:
            status = solves[-1]["status"]
            continue
        if smallest < 1e-12:  # the model admits one after all (the exact solve failed)
            exact_phi = problem.standard(np.arange(len(problem.b)))
            if _check(exact_phi, margin, first.arm) is None:
                divergence = problem.divergence_value(exact_phi, distance)
                return _result(
                    base,
                    parameter_set,
                    exact_phi,
                    True,
                    np.zeros(len(base.names)),
                    metric,
                    0.0,
                    distance,
                    divergence,
                    prior_name,
                    margin,
                    solves,
                    first.arm,
                )
        failure = _check(phi, margin, first.arm)
        if failure is None:
            return _nearest_result(
                problem,
                base,
                parameter_set,
                phi,
                unit,
                metric,
                distance,
                prior_name,
                margin,
                solves,
            )
        solves[-1]["status"] += f" (rejected: {failure})"
        status = solves[-1]["status"]
    # in the user's terms: what the model lacks and the smallest change that admits one (the
    # solver's stages and statuses stay in `solves`)
    advice = margin_advice(largest, margin) or lacking_moment(base, margin, first.arm)
    what = f"no physically consistent link-level model reproduces it (margin {margin:g} kg·m²)"
    if smallest_seen is None:
        raise NoConsistentModel(
            source,
            f"{what}{advice}; the solver found no change of it that admits one",
            "a model closer to a physically consistent one",
        )
    smallest, change = smallest_seen
    raise NoConsistentModel(
        source,
        f"{what}{advice}; the smallest change that admits one is {np.sqrt(smallest):.3g} "
        f"({metric}; most: {_moved(base.names, change)}), but no consistent model at that "
        f"change passed the check ({stage}: {status.split(' (rejected: ')[-1].rstrip(')')})",
        "a model that admits a consistent link-level model, or one closer to it",
    )


def tradeoff(
    base: ParameterSet,
    factors=(1.0, 1.1, 1.25, 1.5, 2.0, 3.0),
    prior=None,
    distance: str = DEFAULT_DISTANCE,
    margin: float = MARGIN,
    source: str = "base model",
    arm: ArmDescription | None = None,
) -> list[Reconstruction]:
    """How close to the prior the links can come when the model may change more than it must: for
    each factor f, the consistent model nearest to the prior among those whose change is at most f
    times the smallest change that admits one (f = 1: the nearest consistent model of
    `reconstruct`).
    Empty when the model admits an exact consistent vector. Each point is solved as `reconstruct`
    solves the nearest model, retried with a wider slack while the answer misses the margin."""
    parameter_set = base_set_of(base, source, arm)
    prior_phi, prior_name = prior_vector(prior, arm)
    problem = _Problem(base, parameter_set, prior_phi, margin, arm)
    unit, metric = _change_scale(base)
    solves: list[dict] = []
    first_smallest = _smallest_change(
        problem, problem.consistency(), unit, parameter_set, source, solves
    )
    if first_smallest[0] < 1e-12:
        return []
    # each point's solves: the shared smallest change, then its own attempts
    return [
        _nearest(
            problem,
            base,
            parameter_set,
            prior_phi,
            prior_name,
            distance,
            margin,
            unit,
            metric,
            None,
            source,
            solves[:1],
            change_factor=float(factor),
            first_smallest=first_smallest,
        )
        for factor in factors
    ]


def _hard(problem: _Problem) -> list:
    zero_rows = np.flatnonzero(~problem.soft)
    return [problem.a[zero_rows] @ problem.x == problem.b[zero_rows]] if len(zero_rows) else []


def _smallest_change(
    problem: _Problem,
    consistency: list,
    unit,
    parameter_set: str,
    source: str,
    solves: list,
    note: str = "",
) -> tuple[float, np.ndarray]:
    """The smallest squared change of the model (in `unit`) that admits a consistent vector, and
    the change itself (per base parameter, in `unit`)."""
    change = problem.change(unit)
    what = "nearest: smallest change of the model" + note
    status = problem.solve(cp.sum_squares(change), consistency + _hard(problem), what, solves)
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        # a model far from any consistent one: its squared change (1e17 for ZZR7 = -1000 kg·m^2
        # in OLS standard errors) is out of the solver's range; solved again in units of the
        # change to the prior (answers that passed before are unchanged)
        scale = _reference_change(problem, unit)
        status = problem.solve(
            cp.sum_squares(change / scale),
            consistency + _hard(problem),
            what + f" (rescaled by {scale:.3g})",
            solves,
        )
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise NoConsistentModel(
            source,
            "no physically consistent link-level model reproduces it, and the solver found no "
            "change of it that admits one",
            "a model closer to a physically consistent one",
        )
    value = np.asarray(change.value, dtype=float)
    return float(np.sum(np.square(value))), value


def _nearest_within(
    problem: _Problem,
    consistency: list,
    objective,
    unit,
    bound: float,
    source: str,
    solves: list,
    note: str = "",
) -> np.ndarray:
    """The consistent vector nearest to the prior whose squared change is at most `bound`."""
    change = problem.change(unit)
    what = "nearest: the prior, among changes this small" + note
    status = problem.solve(
        objective, consistency + _hard(problem) + [cp.sum_squares(change) <= bound], what, solves
    )
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        # seen for models far from any consistent one (e.g. ZZR1 = -1 kg·m^2): solved again with
        # the bound in units of the change to the prior, as `_smallest_change` does
        scale = _reference_change(problem, unit)
        status = problem.solve(
            objective,
            consistency + _hard(problem) + [cp.sum_squares(change / scale) <= bound / scale**2],
            what + f" (rescaled by {scale:.3g})",
            solves,
        )
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise NoConsistentModel(
            source,
            "no physically consistent link-level model reproduces it, and the solver found no "
            "consistent model near it",
            "a model that admits a consistent link-level model, or one closer to it",
        )
    zero_rows = np.flatnonzero(~problem.soft)
    return problem.standard(zero_rows) if len(zero_rows) else problem.scale * problem.x.value


def _reference_change(problem: _Problem, unit) -> float:
    """The norm of the change (in `unit`) that takes the model to the prior's base parameters, at
    least 1: the scale of a change's solve when the plain one fails."""
    rows = problem.set_rows
    weight = problem.row_scale[rows] / unit
    gap = weight * (problem.a[rows] @ problem.prior_x - problem.b[rows])
    return max(float(np.linalg.norm(gap)), 1.0)


def lacking_moment(base: ParameterSet, margin: float, arm: ArmDescription | None = None) -> str:
    """'' unless a friction or rotor inertia the model gives alone is negative, or a second moment
    its base parameters decide is below the margin: then that one, its value and what a body or
    a drive needs, as a clause for a message."""
    drives = [
        (value, name)
        for name, value in zip(base.names, base.values)
        if split_name(name)[0] in DRIVE_KINDS and value < 0
    ]
    if drives:
        value, name = min(drives)
        return f": {name} = {value:.3g} is negative (a friction or rotor inertia is not)"
    try:
        moments = decided_moments(base_set_of(base, "model", arm), arm)
    except InputError:
        return ""
    if not moments:
        return ""
    worst = min(moments, key=lambda d: d.value(base))
    value = worst.value(base)
    if value >= margin:
        return ""
    return (
        f": link {worst.link}'s second moment along {worst.axis}, {worst.expression} = "
        f"{value:.3g} kg·m², is below the margin (a body's is positive)"
    )


def _nearest_result(
    problem, base, parameter_set, phi, unit, metric, distance, prior_name, margin, solves
) -> Reconstruction:
    failure = _check(phi, margin, problem.arm)
    if failure is not None:  # the solver's answer misses the margin (`reconstruct` retries first)
        raise NoConsistentModel(
            "nearest consistent model",
            f"the solver's answer fails the check "
            f"({failure}; Clarabel: {solves[-1]['status']}, stage 'the prior, "
            f"among changes this small')",
            "a model closer to a consistent one, or a larger change allowed",
        )
    full = arm_terms(problem.arm).base_matrix("full")
    delta = full[problem.set_rows] @ phi - base.values
    return _result(
        base,
        parameter_set,
        phi,
        False,
        delta,
        metric,
        float(np.linalg.norm(delta / unit)),
        distance,
        problem.divergence_value(phi, distance),
        prior_name,
        margin,
        solves,
        problem.arm,
    )


def _result(
    base,
    parameter_set,
    phi,
    exact,
    change,
    metric,
    norm,
    distance,
    divergence,
    prior_name,
    margin,
    solves,
    arm: ArmDescription | None = None,
) -> Reconstruction:
    standard = ParameterSet(arm_terms(arm).names, phi, meta={"name": "reconstruction"})
    return Reconstruction(
        parameter_set,
        base,
        standard,
        exact,
        change,
        metric,
        norm,
        distance,
        divergence,
        prior_name,
        margin,
        solves,
        arm=arm,
    )


def from_standard(
    standard: ParameterSet,
    margin: float = MARGIN,
    source: str = "standard parameters",
    arm: ArmDescription | None = None,
) -> Reconstruction:
    """A standard vector given as it is (the twin's truth, a previous reconstruction): checked, not
    changed."""
    names = arm_terms(arm).names
    phi = standard.ordered(names, source)
    failure = _check(phi, margin, arm)
    if failure is not None:
        raise NoConsistentModel(
            source,
            f"not physically consistent: {failure}",
            "every link's pseudo-inertia positive definite, IA, FV, FS >= 0",
        )
    base = ParameterSet(names, phi)
    return Reconstruction(
        "standard",
        base,
        ParameterSet(names, phi),
        True,
        np.zeros(len(phi)),
        "none",
        0.0,
        "none",
        0.0,
        "none (given as standard parameters)",
        margin,
        [],
        arm=arm,
    )


def require_exact(result: Reconstruction, source: str) -> Reconstruction:
    """The reconstruction if it reproduces the model; otherwise the one-line error of the CLI."""
    if result.exact:
        return result
    moved = ", ".join(f"{n} {x:+.2g}" for n, x in result.changed(3))
    advice = margin_advice(result.largest_margin, result.margin) or lacking_moment(
        result.base, result.margin, result.arm
    )
    raise NoConsistentModel(
        source,
        f"no physically consistent link-level model reproduces it "
        f"(margin {result.margin:g} kg·m²){advice}; the smallest change that admits one (the "
        f"nearest consistent model) is {result.change_norm:.3g} "
        f"({result.change_metric}; most: {moved})",
        "a model that admits one, or --nearest to export the nearest consistent model",
    )
