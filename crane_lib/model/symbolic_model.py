"""Symbolic inverse dynamic model, linear in the standard parameters (stage 2).

A customized Newton-Euler recursion in the manner of OpenSYMORO (Khalil & Kleinfinger): every
nonzero intermediate quantity becomes a named symbol, products with the exact zeros of the
MDH table (alpha = 0, +-pi/2, d = 0) vanish while the model is built, and no expression is
ever expanded. The result is a straight-line program (a list of assignments) whose outputs
are the entries of the regressor W(theta, dtheta, ddtheta) with tau = W phi, phi the 94
standard parameters.

Inputs of the program: cj, sj = cos/sin(theta_j + offset_j) for the arm joints, QPj and QDPj
(joint velocity and acceleration, axes 1..8), SGNj = sign(QPj), and GZ, the component of the
gravity acceleration along z0 (+g for the hanging mount, -g for the upright one).
Trigonometric inputs are kept as separate symbols so the same program evaluates exactly on
rational points of the unit circle (see base_parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from crane_lib.model.parameters import (
    HAND_PARAMETER_KINDS,
    LINK_PARAMETER_KINDS,
    N_LINKS,
    standard_parameter_names,
)

N_AXES = N_LINKS + 1


@dataclass
class StraightLineProgram:
    """Assignments (symbol = expression, in order) and named outputs (expressions)."""

    assignments: list[tuple[sympy.Symbol, sympy.Expr]] = field(default_factory=list)
    outputs: dict = field(default_factory=dict)
    _bound: dict = field(default_factory=dict)
    _names: set = field(default_factory=set)
    _counter: int = 0

    def bind(self, expr: sympy.Expr, hint: str | None = None) -> sympy.Expr:
        """Name `expr` unless it is trivial (a number, a symbol, or a signed symbol)."""
        expr = sympy.sympify(expr)
        if expr.is_Number or expr.is_Symbol:
            return expr
        if (
            expr.is_Mul
            and len(expr.args) == 2
            and expr.args[0].is_Number
            and expr.args[1].is_Symbol
        ):
            return expr
        if expr in self._bound:  # hash-consing: the same expression is computed once
            return self._bound[expr]
        if hint is None or hint in self._names:
            self._counter += 1
            hint = f"x{self._counter}"
            while hint in self._names:
                self._counter += 1
                hint = f"x{self._counter}"
        symbol = sympy.Symbol(hint)
        self._names.add(hint)
        self.assignments.append((symbol, expr))
        self._bound[expr] = symbol
        return symbol

    def bind_vector(self, vector, hint: str | None = None) -> sympy.Matrix:
        """Bind each entry of a vector to a fresh symbol (named from `hint`)."""
        return sympy.Matrix(
            [
                self.bind(v, None if hint is None else f"{hint}{'xyz'[i]}")
                for i, v in enumerate(vector)
            ]
        )

    def definitions(self) -> dict[sympy.Symbol, sympy.Expr]:
        """The program's assignments as a symbol-to-expression dict."""
        return dict(self.assignments)

    def expand_fully(self, expr: sympy.Expr) -> sympy.Expr:
        """Substitute every intermediate symbol back (for display of small entries only)."""
        defs = self.definitions()
        previous = None
        while previous != expr:
            previous = expr
            expr = expr.xreplace({s: defs[s] for s in expr.free_symbols if s in defs})
        return sympy.simplify(expr)


def input_symbols():
    """The program's input symbols, by kind."""
    c = [sympy.Symbol(f"c{j}") for j in range(1, N_LINKS + 1)]
    s = [sympy.Symbol(f"s{j}") for j in range(1, N_LINKS + 1)]
    qp = [sympy.Symbol(f"QP{j}") for j in range(1, N_AXES + 1)]
    qdp = [sympy.Symbol(f"QDP{j}") for j in range(1, N_AXES + 1)]
    sgn = [sympy.Symbol(f"SGN{j}") for j in range(1, N_AXES + 1)]
    gz = sympy.Symbol("GZ")
    return c, s, qp, qdp, sgn, gz


def _skew(v) -> sympy.Matrix:
    return sympy.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _cross(a, b) -> sympy.Matrix:
    return sympy.Matrix(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


def _rotation(row, c, s) -> sympy.Matrix:
    """R of frame j in frame j-1: Rx(alpha) Rz(theta), exact in alpha."""
    ca, sa = sympy.cos(row.alpha), sympy.sin(row.alpha)
    return sympy.Matrix([[c, -s, 0], [ca * s, ca * c, -sa], [sa * s, sa * c, ca]])


def _position(row) -> sympy.Matrix:
    """Origin of frame j in frame j-1."""
    return sympy.Matrix([row.d, -row.r * sympy.sin(row.alpha), row.r * sympy.cos(row.alpha)])


def _unit_inertia(kind: str) -> sympy.Matrix:
    index = {"XX": (0, 0), "YY": (1, 1), "ZZ": (2, 2), "XY": (0, 1), "XZ": (0, 2), "YZ": (1, 2)}[
        kind
    ]
    e = sympy.zeros(3, 3)
    e[index] = 1
    e[index[::-1]] = 1
    return e


def derive_regressor(
    table,
    velocities=None,
    accelerations=None,
    gravity=None,
    columns: list[str] | None = None,
    program: StraightLineProgram | None = None,
    tag: str = "",
) -> tuple[StraightLineProgram, dict[tuple[int, str], sympy.Expr]]:
    """Newton-Euler regressor: entries W[(row, parameter)] (row 0..7 for axes 1..8).

    `velocities`, `accelerations`, `gravity` default to the input symbols; passing numbers
    (e.g. zero velocities and a unit acceleration) specializes the program, which is how the
    inertia-matrix program is built. `columns` restricts the parameters computed.
    """
    c, s, qp_sym, qdp_sym, sgn, gz_sym = input_symbols()
    qp = qp_sym if velocities is None else [sympy.sympify(v) for v in velocities]
    qdp = qdp_sym if accelerations is None else [sympy.sympify(v) for v in accelerations]
    gz = gz_sym if gravity is None else sympy.sympify(gravity)
    sgn = (
        sgn if velocities is None else [sympy.sign(v) for v in qp]
    )  # numeric velocities fix their signs
    prog = StraightLineProgram() if program is None else program
    wanted = set(standard_parameter_names() if columns is None else columns)

    # forward recursion: angular velocity W, its derivative WP, linear acceleration VP of O_j
    rotations, positions = [], []
    w, wp = sympy.zeros(3, 1), sympy.zeros(3, 1)
    vp = sympy.Matrix([0, 0, -gz])  # base acceleration -g absorbs gravity
    u_prev = sympy.zeros(3, 3)
    omegas, omega_dots, accs, us = [], [], [], []
    for j, row in enumerate(table, start=1):
        rot = _rotation(row, c[j - 1], s[j - 1])
        pos = _position(row)
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
        u_prev = sympy.Matrix(
            3,
            3,
            lambda a, b: prog.bind(
                (_skew(wp) + _skew(w) * _skew(w))[a, b], f"U{j}{tag}_{a + 1}{b + 1}"
            ),
        )
        omegas.append(w)
        omega_dots.append(wp)
        accs.append(vp)
        us.append(u_prev)

    entries: dict[tuple[int, str], sympy.Expr] = {}
    for k in range(1, N_LINKS + 1):
        w, wp, vp, u = omegas[k - 1], omega_dots[k - 1], accs[k - 1], us[k - 1]
        for kind in LINK_PARAMETER_KINDS:
            name = f"{kind}{k}"
            if name not in wanted:
                continue
            if kind in ("IA", "FV", "FS"):
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
            force = prog.bind_vector(force)
            moment = prog.bind_vector(moment)
            # backward recursion of this unit wrench to every joint at or before link k
            for i in range(k, 0, -1):
                if moment[2] != 0:
                    entries[(i - 1, name)] = moment[2]
                if i == 1:
                    break
                rot, pos = rotations[i - 1], positions[i - 1]
                f_prev = prog.bind_vector(rot * force)
                moment = prog.bind_vector(rot * moment + _cross(pos, f_prev))
                force = f_prev
    for kind in HAND_PARAMETER_KINDS:
        name = f"{kind}8"
        if name in wanted:
            value = {"IA": qdp, "FV": qp, "FS": sgn}[kind][N_AXES - 1]
            if value != 0:
                entries[(N_AXES - 1, name)] = value
    return prog, entries


def derive_inertia_matrix(
    table, columns: list[str]
) -> tuple[StraightLineProgram, dict[tuple[int, int, str], sympy.Expr]]:
    """Entries M[(row, col, parameter)] of dM/dphi: the regressor at zero velocity and gravity
    with a unit acceleration of each axis in turn, upper triangle only (row <= col)."""
    prog = StraightLineProgram()
    entries: dict[tuple[int, int, str], sympy.Expr] = {}
    for col in range(N_AXES):
        unit = [1 if a == col else 0 for a in range(N_AXES)]
        _, column_entries = derive_regressor(
            table,
            velocities=[0] * N_AXES,
            accelerations=unit,
            gravity=0,
            columns=columns,
            program=prog,
            tag=f"a{col + 1}",
        )
        for (row, name), expr in column_entries.items():
            if row <= col:
                entries[(row, col, name)] = expr
    return prog, entries
