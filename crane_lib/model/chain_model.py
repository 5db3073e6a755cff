"""Newton-Euler regressor, exact base parameters and numeric dynamics of any serial arm.

The arm is an `arm_description.ArmDescription`: joint j moves frame j by
T_(j-1, j)(q_j) = [R_j | p_j] Rz(q_j), with R_j, p_j exact. This is a general fixed-transform
recursion, not a conversion of every chain to MDH. Why: MDH needs the common normal of
consecutive axes, which is ambiguous for parallel axes (the SO-101 has three) and computed in
floating point for skew ones (the SO-101's wrist roll is tilted by 0.0487 rad); the links'
inertials would then have to be moved to those new frames too. Taking each joint's transform as
the description gives it avoids both, and MDH is the special case R_j = Rx(alpha) Rz(offset),
p_j = (d, -r sin alpha, r cos alpha), so one recursion serves the CRANE-X7's table as well (its
grouping comes out identical to `base_parameters`; tests/test_arm_models.py).

The recursion is `symbolic_model`'s (OpenSYMORO style, a straight-line program of named
intermediate symbols, products with exact zeros vanishing as the model is built), with the
rotation R_j Rz(q_j) and position p_j of every joint in place of the MDH ones, n joints, gravity
G times an exact unit direction in frame 0, and the optional gripper axis decoupled (IA, FV, FS).
Its inputs: cj, sj = cos/sin q_j; QPj, QDPj, SGNj for every axis; G (m/s^2).

Base parameters: the program is evaluated exactly (Fractions) at random rational points of the
unit circle, velocities, accelerations, signs and gravity; the reduced row echelon form of the
stacked rows gives the independent standard columns (base parameters, OpenSYMORO names) and every
other column's exact combination of them; the relations are re-checked on fresh points.
Numerics run the same program printed with float constants on numpy arrays.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
import sympy

from crane_lib.errors import InputError
from crane_lib.model import codegen
from crane_lib.model.arm_description import ArmDescription
from crane_lib.model.base_parameters import base_name
from crane_lib.model.parameters import HAND_PARAMETER_KINDS, LINK_PARAMETER_KINDS
from crane_lib.model.symbolic_model import StraightLineProgram

# Khalil's rules keep these kinds; YY, MZ and M are offered to the elimination last, so they
# become the dependent columns wherever they are dependent (the pivots carry OpenSYMORO's names)
KEPT_KINDS = ("XX", "XY", "XZ", "YZ", "ZZ", "MX", "MY")
GROUPED_KINDS = ("YY", "MZ", "M")
AXIS_KINDS = ("IA", "FS", "FV")
N_GROUPING_POINTS = 24
N_CHECK_POINTS = 6


def _skew(v) -> sympy.Matrix:
    return sympy.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _cross(a, b) -> sympy.Matrix:
    return sympy.Matrix(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


def _unit_inertia(kind: str) -> sympy.Matrix:
    index = {"XX": (0, 0), "YY": (1, 1), "ZZ": (2, 2), "XY": (0, 1), "XZ": (0, 2), "YZ": (1, 2)}[
        kind
    ]
    e = sympy.zeros(3, 3)
    e[index] = 1
    e[index[::-1]] = 1
    return e


def _exact(value: Fraction) -> sympy.Rational:
    return sympy.Rational(value.numerator, value.denominator)


def derive_regressor(
    arm: ArmDescription,
    columns=None,
    velocities=None,
    accelerations=None,
    gravity=None,
    program: StraightLineProgram | None = None,
    tag: str = "",
):
    """Newton-Euler regressor program: entries W[(axis row, standard parameter)] as expressions.

    `velocities`, `accelerations`, `gravity` default to the input symbols; numbers specialize the
    program (the inertia matrix: zero velocity and gravity, a unit acceleration), as in
    `symbolic_model.derive_regressor`; `program` and `tag` let several such programs share one.
    """
    n, n_axes = arm.n_joints, arm.n_axes
    c = [sympy.Symbol(f"c{j}") for j in range(1, n + 1)]
    s = [sympy.Symbol(f"s{j}") for j in range(1, n + 1)]
    qp = [sympy.Symbol(f"QP{j}") for j in range(1, n_axes + 1)]
    qdp = [sympy.Symbol(f"QDP{j}") for j in range(1, n_axes + 1)]
    sgn = [sympy.Symbol(f"SGN{j}") for j in range(1, n_axes + 1)]
    g = sympy.Symbol("G") if gravity is None else sympy.sympify(gravity)
    if velocities is not None:  # numeric velocities fix their signs
        qp = [sympy.sympify(v) for v in velocities]
        sgn = [sympy.sign(v) for v in qp]
    if accelerations is not None:
        qdp = [sympy.sympify(v) for v in accelerations]
    prog = StraightLineProgram() if program is None else program
    wanted = set(arm.standard_parameter_names() if columns is None else columns)

    rotations, positions, omegas, omega_dots, accs, us = [], [], [], [], [], []
    w, wp = sympy.zeros(3, 1), sympy.zeros(3, 1)
    vp = sympy.Matrix([-g * _exact(d) for d in arm.gravity_direction])  # base acceleration -g
    u_prev = sympy.zeros(3, 3)
    for j, joint in enumerate(arm.joints, start=1):
        fixed = sympy.Matrix(3, 3, lambda a, b: _exact(joint.rotation[a][b]))
        turn = sympy.Matrix([[c[j - 1], -s[j - 1], 0], [s[j - 1], c[j - 1], 0], [0, 0, 1]])
        rot = fixed * turn
        pos = sympy.Matrix([_exact(x) for x in joint.translation])
        rotations.append(rot)
        positions.append(pos)
        inv = rot.T
        wi = prog.bind_vector(inv * w, f"WI{j}{tag}_")
        w = prog.bind_vector(wi + sympy.Matrix([0, 0, qp[j - 1]]), f"W{j}{tag}_")
        wp = prog.bind_vector(
            inv * wp + sympy.Matrix([wi[1] * qp[j - 1], -wi[0] * qp[j - 1], qdp[j - 1]]),
            f"WP{j}{tag}_",
        )
        vp = prog.bind_vector(inv * (vp + u_prev * pos), f"VP{j}{tag}_")
        u_full = _skew(wp) + _skew(w) * _skew(w)
        u_prev = sympy.Matrix(
            3, 3, lambda a, b: prog.bind(u_full[a, b], f"U{j}{tag}_{a + 1}{b + 1}")
        )
        omegas.append(w)
        omega_dots.append(wp)
        accs.append(vp)
        us.append(u_prev)

    entries: dict[tuple[int, str], sympy.Expr] = {}
    for k in range(1, n + 1):
        w, wp, vp, u = omegas[k - 1], omega_dots[k - 1], accs[k - 1], us[k - 1]
        for kind in LINK_PARAMETER_KINDS:
            name = f"{kind}{k}"
            if name not in wanted:
                continue
            if kind in AXIS_KINDS:
                value = {"IA": qdp, "FV": qp, "FS": sgn}[kind][k - 1]
                if value != 0:
                    entries[(k - 1, name)] = value
                continue
            if kind in ("XX", "XY", "XZ", "YY", "YZ", "ZZ"):
                e = _unit_inertia(kind)
                force, moment = sympy.zeros(3, 1), e * wp + _cross(w, e * w)
            elif kind in ("MX", "MY", "MZ"):
                e = sympy.Matrix([1 if kind == m else 0 for m in ("MX", "MY", "MZ")])
                force, moment = u * e, _cross(e, vp)
            else:  # mass
                force, moment = vp, sympy.zeros(3, 1)
            force, moment = prog.bind_vector(force), prog.bind_vector(moment)
            # this unit wrench, carried back to every joint at or before link k
            for i in range(k, 0, -1):
                if moment[2] != 0:
                    entries[(i - 1, name)] = moment[2]
                if i == 1:
                    break
                f_prev = prog.bind_vector(rotations[i - 1] * force)
                moment = prog.bind_vector(
                    rotations[i - 1] * moment + _cross(positions[i - 1], f_prev)
                )
                force = f_prev
    if arm.gripper is not None:
        for kind in HAND_PARAMETER_KINDS:
            name = f"{kind}{n_axes}"
            value = {"IA": qdp, "FV": qp, "FS": sgn}[kind][n_axes - 1]
            if name in wanted and value != 0:
                entries[(n_axes - 1, name)] = value
    return prog, entries


def derive_inertia_matrix(arm: ArmDescription, columns):
    """Entries M[(row, col, parameter)] of dM/dphi, upper triangle (row <= col): the regressor
    at zero velocity and gravity with a unit acceleration of each axis in turn."""
    prog = StraightLineProgram()
    entries: dict[tuple[int, int, str], sympy.Expr] = {}
    for col in range(arm.n_axes):
        unit = [1 if a == col else 0 for a in range(arm.n_axes)]
        _, column_entries = derive_regressor(
            arm, columns, [0] * arm.n_axes, unit, 0, program=prog, tag=f"a{col + 1}"
        )
        for (row, name), expr in column_entries.items():
            if row <= col:
                entries[(row, col, name)] = expr
    return prog, entries


def _compile(arm: ArmDescription, order: list[str], exact: bool):
    """The regressor program as a Python function f(c, s, qp, qdp, sgn, g, out)."""
    program, entries = derive_regressor(arm, columns=order)
    column = {name: i for i, name in enumerate(order)}
    stores = [(f"out[{row}][{column[name]}]", expr) for (row, name), expr in entries.items()]
    unpack = {f"c{j}": f"c[{j - 1}]" for j in range(1, arm.n_joints + 1)}
    unpack.update({f"s{j}": f"s[{j - 1}]" for j in range(1, arm.n_joints + 1)})
    for kind, argument in (("QP", "qp"), ("QDP", "qdp"), ("SGN", "sgn")):
        unpack.update({f"{kind}{j}": f"{argument}[{j - 1}]" for j in range(1, arm.n_axes + 1)})
    unpack["G"] = "g"
    source = codegen.emit_function(
        "regressor", ["c", "s", "qp", "qdp", "sgn", "g"], unpack, program, stores, exact=exact
    )
    namespace = {"_Q": Fraction}
    exec(compile(source, f"<{arm.name} regressor>", "exec"), namespace)
    return namespace["regressor"]


def elimination_order(arm: ArmDescription) -> list[str]:
    """Standard parameters in the order offered to the elimination (kept kinds first)."""
    n, axes = arm.n_joints, range(1, arm.n_axes + 1)
    order = [f"{k}{j}" for j in range(1, n + 1) for k in KEPT_KINDS]
    order += [f"{k}{a}" for k in ("IA", "FV", "FS") for a in axes]
    order += [f"{k}{j}" for j in range(1, n + 1) for k in GROUPED_KINDS]
    return order


def _exact_rows(function, arm: ArmDescription, n_columns: int, rng: random.Random, n_points: int):
    rows = []
    for _ in range(n_points):
        t = [Fraction(rng.randint(-9, 9), rng.randint(1, 9)) for _ in range(arm.n_joints)]
        c = [(1 - x * x) / (1 + x * x) for x in t]
        s = [2 * x / (1 + x * x) for x in t]
        qp = [Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(arm.n_axes)]
        qdp = [Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(arm.n_axes)]
        sgn = [rng.choice((-1, 1)) for _ in range(arm.n_axes)]
        g = Fraction(rng.randint(1, 20), rng.randint(1, 3))
        out = [[Fraction(0)] * n_columns for _ in range(arm.n_axes)]
        function(c, s, qp, qdp, sgn, g, out)
        rows.extend(out)
    return rows


@dataclass(frozen=True)
class ChainGrouping:
    """Exact grouping: base parameter i = sum over standard s of relations[i][s] * s."""

    standard_names: tuple[str, ...]
    base_names: tuple[str, ...]
    pivots: tuple[str, ...]  # the standard parameter whose column each base parameter uses
    relations: tuple[dict[str, Fraction], ...]

    def base_matrix(self) -> np.ndarray:
        """K with beta = K phi (rows: base_names; columns: standard_names)."""
        index = {s: i for i, s in enumerate(self.standard_names)}
        matrix = np.zeros((len(self.base_names), len(self.standard_names)))
        for i, relation in enumerate(self.relations):
            for s, coefficient in relation.items():
                matrix[i, index[s]] = float(coefficient)
        return matrix

    def relation(self, base: str) -> sympy.Expr:
        """Closed form of one base parameter in the standard parameters."""
        row = self.relations[self.base_names.index(base)]
        return sympy.Add(*[_exact(k) * sympy.Symbol(s) for s, k in row.items()])


def _canonical_key(arm: ArmDescription, name: str):
    kind = name.rstrip("0123456789")
    axis = int(name[len(kind) :])
    kind = kind[:-1] if kind.endswith("R") and kind[:-1] in LINK_PARAMETER_KINDS else kind
    if axis > arm.n_joints:
        return (4, AXIS_KINDS.index(kind), 0)
    if kind in AXIS_KINDS:
        return (1 + AXIS_KINDS.index(kind), axis, 0)
    return (0, axis, (KEPT_KINDS + GROUPED_KINDS).index(kind))


def derive_grouping(arm: ArmDescription, seed: int = 20261129) -> ChainGrouping:
    """The exact base-parameter grouping of `arm` (see the module docstring)."""
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    order = elimination_order(arm)
    function = _compile(arm, order, exact=True)
    rng = random.Random(seed)
    rows = _exact_rows(function, arm, len(order), rng, N_GROUPING_POINTS)
    matrix = DomainMatrix(
        [[QQ(x.numerator, x.denominator) for x in row] for row in rows], (len(rows), len(order)), QQ
    )
    reduced, pivots = matrix.rref()
    reduced = [
        [Fraction(int(x.numerator), int(x.denominator)) for x in row] for row in reduced.to_list()
    ]
    dependent = [d for d in range(len(order)) if d not in set(pivots)]
    for row in _exact_rows(function, arm, len(order), rng, N_CHECK_POINTS):
        for d in dependent:
            if sum((reduced[i][d] * row[p] for i, p in enumerate(pivots)), Fraction(0)) != row[d]:
                raise RuntimeError(f"{arm.name}: the relation of {order[d]} fails on a fresh point")
    relations = []
    for i, p in enumerate(pivots):
        relation = {order[p]: Fraction(1)}
        relation.update({order[d]: reduced[i][d] for d in dependent if reduced[i][d]})
        relations.append(relation)
    names = [base_name(order[p]) for p in pivots]
    ranked = sorted(range(len(names)), key=lambda i: _canonical_key(arm, names[i]))
    return ChainGrouping(
        standard_names=tuple(arm.standard_parameter_names()),
        base_names=tuple(names[i] for i in ranked),
        pivots=tuple(order[pivots[i]] for i in ranked),
        relations=tuple(relations[i] for i in ranked),
    )


class ChainModel:
    """Numeric regressor, inverse dynamics and inertia matrix of one arm (numpy, SI)."""

    def __init__(self, arm: ArmDescription):
        self.arm = arm
        self.standard_names = arm.standard_parameter_names()
        self._function = _compile(arm, self.standard_names, exact=False)

    @cached_property
    def grouping(self) -> ChainGrouping:
        """The exact base-parameter grouping (derived on first use)."""
        return derive_grouping(self.arm)

    @property
    def base_names(self) -> list[str]:
        """Names of the base parameters, canonical order."""
        return list(self.grouping.base_names)

    def _states(self, q, qd, qdd):
        arrays = []
        for name, value in (("q", q), ("qd", qd), ("qdd", qdd)):
            value = np.atleast_2d(np.asarray(value, dtype=float))
            if (
                value.ndim != 2
                or value.shape[1] != self.arm.n_axes
                or not np.all(np.isfinite(value))
            ):
                raise InputError(
                    name,
                    f"shape {value.shape}",
                    f"finite (samples, {self.arm.n_axes}) arrays in SI units",
                )
            arrays.append(value)
        if len({len(a) for a in arrays}) != 1:
            raise InputError("q, qd, qdd", "different sample counts", "equal sample counts")
        return arrays

    def standard_regressor(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """W with tau = W phi, shape (n, n_axes, n_standard); q etc. are (n, n_axes)."""
        q, qd, qdd = self._states(q, qd, qdd)
        angles = q[:, : self.arm.n_joints].T
        out = np.zeros((self.arm.n_axes, len(self.standard_names), len(q)))
        self._function(
            np.cos(angles),
            np.sin(angles),
            qd.T,
            qdd.T,
            np.sign(qd).T,
            float(np.linalg.norm(self.arm.gravity)) if gravity else 0.0,
            out,
        )
        return np.moveaxis(out, -1, 0)

    def regressor(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """Base regressor (the standard columns of the pivots), shape (n, n_axes, n_base)."""
        index = [self.standard_names.index(p) for p in self.grouping.pivots]
        return self.standard_regressor(q, qd, qdd, gravity)[:, :, index]

    def standard_vector(self, standard: dict[str, float]) -> np.ndarray:
        """The standard parameters in this model's order; every name must be given."""
        missing = [n for n in self.standard_names if n not in standard]
        if missing:
            raise InputError(
                "standard parameters",
                f"missing {missing[:6]}",
                f"the {len(self.standard_names)} names of {self.arm.name}",
            )
        return np.array([standard[n] for n in self.standard_names], dtype=float)

    def base_from_standard(self, standard: dict[str, float]) -> np.ndarray:
        """beta = K phi in the order of base_names."""
        return self.grouping.base_matrix() @ self.standard_vector(standard)

    def inverse_dynamics(self, q, qd, qdd, standard: dict[str, float]) -> np.ndarray:
        """Joint torques (n, n_axes) in N·m of the standard parameters."""
        return self.standard_regressor(q, qd, qdd) @ self.standard_vector(standard)

    def inertia_matrix(self, q, standard: dict[str, float]) -> np.ndarray:
        """M(q), (n, n_axes, n_axes): the regressor at rest, no gravity, unit accelerations."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        phi = self.standard_vector(standard)
        zeros = np.zeros_like(q)
        columns = []
        for axis in range(self.arm.n_axes):
            unit = zeros.copy()
            unit[:, axis] = 1.0
            columns.append(self.standard_regressor(q, zeros, unit, gravity=False) @ phi)
        return np.stack(columns, axis=-1)
