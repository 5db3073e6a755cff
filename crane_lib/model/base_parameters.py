"""Base-parameter grouping, derived exactly from the symbolic regressor (stage 2).

The regressor program of `symbolic_model` is evaluated in exact rational arithmetic at random
rational points of the unit circle (cos = (1 - t^2)/(1 + t^2), sin = 2t/(1 + t^2)), random
rational velocities, accelerations, signs and gravity. The reduced row echelon form of the
stacked matrix gives, exactly, which standard columns are independent (the base parameters)
and how every other column is a combination of them:

    W_d = sum_i K[i, d] W_(p_i)   =>   beta_i = phi_(p_i) + sum_d K[i, d] phi_d,

the closed-form grouping relations. Nothing about the arm's structure is typed in: which
parameters group, and into what, comes out of the elimination. Columns are offered to the
elimination in the order of Khalil's rules (the parameters OpenSYMORO keeps first), so the
pivots carry OpenSYMORO's names. To give the coefficients as polynomials in the link offsets
RL3 and RL5 rather than as numbers, the grouping is derived on a 3 x 3 grid of offset values
and interpolated exactly (degree <= 2 in each), then checked at the table's own offsets.
A rank found on samples could fall short of the generic rank; the relations are therefore
re-checked exactly on fresh random points before they are accepted.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from crane_lib import fingerprint
from crane_lib.constants import N_AXES
from crane_lib.errors import atomic_write
from crane_lib.model import codegen, robot_description
from crane_lib.model.parameters import LINK_PARAMETER_KINDS, N_LINKS, standard_parameter_names

# sympy (and symbolic_model, built on it) is imported inside the functions that derive: a cached
# grouping loads without it, which is most of a fresh process's model load (bench_model: <= 1 s)
if TYPE_CHECKING:
    import sympy

SYMBOLIC_MODEL_SOURCE = Path(__file__).with_name("symbolic_model.py")

# Columns OpenSYMORO keeps are offered to the elimination first; those Khalil's rules group
# away (YY, MZ, M of every link) last, so they become the dependent ones if they are.
_KEPT_KINDS = ("XX", "XY", "XZ", "YZ", "ZZ", "MX", "MY")
_GROUPED_KINDS = ("YY", "MZ", "M")
# the paper's names carry R on every grouped-type link term of the base set
_R_SUFFIX_KINDS = ("XX", "ZZ", "MX", "MY")

PRODUCT_KINDS = ("XY", "XZ", "YZ")
PARAMETER_SETS = ("reduced", "reduced+poi", "reduced+coulomb", "full")
PARAMETER_SET_LABELS = {
    "reduced": "39 (reduced)",
    "reduced+poi": "39 + products of inertia",
    "reduced+coulomb": "39 + Coulomb",
    "full": "65 (full grouped)",
}


def elimination_order() -> list[str]:
    """The standard parameters in the order the grouping eliminates them."""
    order = [f"{k}{j}" for j in range(1, N_LINKS + 1) for k in _KEPT_KINDS]
    order += [f"IA{j}" for j in range(1, N_AXES + 1)]
    order += [f"FV{j}" for j in range(1, N_AXES + 1)]
    order += [f"FS{j}" for j in range(1, N_AXES + 1)]
    order += [f"{k}{j}" for j in range(1, N_LINKS + 1) for k in _GROUPED_KINDS]
    assert sorted(order) == sorted(standard_parameter_names())
    return order


def base_name(standard: str) -> str:
    """The base parameter's name of a standard one ("XX2" -> "XXR2")."""
    kind = standard.rstrip("0123456789")
    return f"{kind}R{standard[len(kind) :]}" if kind in _R_SUFFIX_KINDS else standard


def _canonical_order(names: list[str]) -> list[str]:
    """ZZR1; per link XXR XY XZ YZ ZZR MXR MYR; rotor inertias; Coulomb; viscous; hand."""

    def key(name: str):
        kind = name.rstrip("0123456789")
        j = int(name[len(kind) :])
        kind = kind[:-1] if kind.endswith("R") and kind[:-1] in LINK_PARAMETER_KINDS else kind
        if j == 8:
            return (4, {"IA": 0, "FS": 1, "FV": 2}[kind], 0)
        if kind in _KEPT_KINDS:
            return (0, j, _KEPT_KINDS.index(kind))
        return (1 + ("IA", "FS", "FV").index(kind), j, 0)

    return sorted(names, key=key)


@dataclass(frozen=True)
class Grouping:
    """Exact grouping: base parameter i = sum_s coefficients[i][s] * standard s."""

    standard_names: tuple[str, ...]
    base_names: tuple[str, ...]  # the full grouped set, canonical order
    pivots: tuple[str, ...]  # standard parameter whose column each base parameter uses
    coefficient_texts: tuple[
        dict[str, str], ...
    ]  # per base parameter: {standard name: coefficient, a polynomial in RL3, RL5}
    numeric: tuple[
        dict[str, Fraction], ...
    ]  # the same coefficients at the table's offsets, exactly
    offsets: dict  # {"RL3": Fraction, ...} the table's values of the offset symbols
    rank_rows: int  # rows in the exact stacked matrix

    @cached_property
    def coefficients(self) -> tuple[dict, ...]:
        """Per base parameter: {standard name: sympy coefficient in RL3, RL5}."""
        import sympy

        return tuple(
            {k: sympy.sympify(v) for k, v in row.items()} for row in self.coefficient_texts
        )

    def numeric_coefficients(self) -> list[dict[str, Fraction]]:
        """The coefficients at the table's offsets, exactly (polynomials with rational coefficients
        at rational points)."""
        return [dict(row) for row in self.numeric]

    def relation(self, base: str) -> sympy.Expr:
        """Closed form of a base parameter in the standard parameters and RL3, RL5."""
        import sympy

        row = self.coefficients[self.base_names.index(base)]
        return sympy.Add(*[c * sympy.Symbol(s) for s, c in row.items()])

    def parameter_set(self, name: str) -> list[str]:
        """Base names of one of the nested sets of Table III, in canonical order."""
        return parameter_set_members(self.base_names, name)


def parameter_set_members(base_names, name: str) -> list[str]:
    """The base names (in their order) of the nested set `name`: "reduced" drops the products of
    inertia and the Coulomb terms, "reduced+poi" and "reduced+coulomb" keep one kind, "full" both.
    The one rule for every arm's grouping."""
    if name not in PARAMETER_SETS:
        raise KeyError(f"unknown parameter set {name!r}; expected one of {PARAMETER_SETS}")
    keep = []
    for b in base_names:
        kind = b.rstrip("0123456789")
        is_product = kind in PRODUCT_KINDS
        is_coulomb = kind == "FS"
        if name == "full" or (not is_product and not is_coulomb):
            keep.append(b)
        elif name == "reduced+poi" and is_product:
            keep.append(b)
        elif name == "reduced+coulomb" and is_coulomb:
            keep.append(b)
    return keep


# ------------------------------------------------------------------ exact evaluation


def _offset_symbols(table):
    """Replace each nonzero link offset r_j by a symbol RLj (the MDH table's exact values kept
    aside)."""
    import sympy

    rows, values = [], {}
    for row in table:
        if row.r != 0:
            sym = sympy.Symbol(f"RL{row.j}")
            values[str(sym)] = Fraction(str(row.r))
            row = robot_description.MDHRow(
                row.j, row.ant, row.sigma, row.alpha, row.d, row.theta_offset, sym
            )
        rows.append(row)
    return tuple(rows), values


def exact_regressor_function(table, order: list[str]):
    """The exact (sympy) regressor of the MDH table as a function of the state."""
    from crane_lib.model import symbolic_model

    program, entries = symbolic_model.derive_regressor(table)
    column = {name: i for i, name in enumerate(order)}
    stores = [(f"out[{row}][{column[name]}]", expr) for (row, name), expr in entries.items()]
    offset_names = sorted(
        {str(s) for _, e in program.assignments for s in e.free_symbols if str(s).startswith("RL")}
    )
    unpack = {f"c{j}": f"c[{j - 1}]" for j in range(1, N_LINKS + 1)}
    unpack.update({f"s{j}": f"s[{j - 1}]" for j in range(1, N_LINKS + 1)})
    unpack.update({f"QP{j}": f"qp[{j - 1}]" for j in range(1, N_AXES + 1)})
    unpack.update({f"QDP{j}": f"qdp[{j - 1}]" for j in range(1, N_AXES + 1)})
    unpack.update({f"SGN{j}": f"sgn[{j - 1}]" for j in range(1, N_AXES + 1)})
    unpack["GZ"] = "gz"
    unpack.update({name: f"offsets[{name!r}]" for name in offset_names})
    source = codegen.emit_function(
        "regressor",
        ["c", "s", "qp", "qdp", "sgn", "gz", "offsets"],
        unpack,
        program,
        stores,
        exact=True,
    )
    namespace = {"_Q": Fraction}
    exec(compile(source, "<exact regressor>", "exec"), namespace)
    return namespace["regressor"]


def _random_rows(function, n_columns: int, offsets: dict, rng: random.Random, n_points: int):
    rows = []
    for _ in range(n_points):
        t = [Fraction(rng.randint(-9, 9), rng.randint(1, 9)) for _ in range(N_LINKS)]
        c = [(1 - x * x) / (1 + x * x) for x in t]
        s = [2 * x / (1 + x * x) for x in t]
        qp = [Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(N_AXES)]
        qdp = [Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(N_AXES)]
        sgn = [rng.choice((-1, 1)) for _ in range(N_AXES)]
        gz = Fraction(rng.randint(1, 20), rng.randint(1, 3))
        out = [[Fraction(0)] * n_columns for _ in range(N_AXES)]
        function(c, s, qp, qdp, sgn, gz, offsets, out)
        rows.extend(out)
    return rows


def _rref(rows, n_columns: int):
    """Reduced row echelon form over QQ: (rows of Fractions, pivot columns)."""
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    matrix = DomainMatrix(
        [[QQ(x.numerator, x.denominator) for x in row] for row in rows], (len(rows), n_columns), QQ
    )
    reduced, pivots = matrix.rref()
    return [
        [Fraction(int(x.numerator), int(x.denominator)) for x in row] for row in reduced.to_list()
    ], list(pivots)


def _group_at(function, order, offsets, seed: int, n_points: int = 24):
    """Pivots and dependency coefficients at one set of offset values, checked on fresh points."""
    import sympy

    rng = random.Random(seed)
    rows = _random_rows(function, len(order), offsets, rng, n_points)
    reduced, pivots = _rref(rows, len(order))
    dependent = [d for d in range(len(order)) if d not in set(pivots)]
    coefficients = {
        d: [(p, reduced[i][d]) for i, p in enumerate(pivots) if reduced[i][d]] for d in dependent
    }
    # check: every dependent column is the stated combination on fresh random points
    check = _random_rows(function, len(order), offsets, rng, 6)
    for d in dependent:
        for row in check:
            if sum((k * row[p] for p, k in coefficients[d]), Fraction(0)) != row[d]:
                raise RuntimeError(
                    f"grouping relation for {order[d]} fails on a fresh point: sample rank below "
                    "generic rank"
                )
    return pivots, {
        (i, d): sympy.Rational(reduced[i][d].numerator, reduced[i][d].denominator)
        for i in range(len(pivots))
        for d in dependent
        if reduced[i][d]
    }


def derive_grouping(table=None, seed: int = 20261129) -> Grouping:
    """The exact base-parameter grouping of the MDH table (Appendix A), by elimination over QQ."""
    import sympy

    table = robot_description.load_mdh_table() if table is None else table
    symbolic_table, true_offsets = _offset_symbols(table)
    order = elimination_order()
    function = exact_regressor_function(symbolic_table, order)
    names = sorted(true_offsets)
    if len(names) > 2:
        raise NotImplementedError(
            "interpolation of the grouping is written for at most two link offsets"
        )
    grid_values = [Fraction(1, 3), Fraction(2, 7), Fraction(3, 5)]
    samples = {}
    pivot_sets = set()
    for point in itertools.product(grid_values, repeat=len(names)):
        offsets = dict(zip(names, point))
        pivots, coeffs = _group_at(function, order, offsets, seed)
        pivot_sets.add(tuple(pivots))
        samples[point] = coeffs
    if len(pivot_sets) != 1:
        raise RuntimeError("the pivot structure changes with the link offsets")
    pivots = list(pivot_sets.pop())
    symbols = [sympy.Symbol(n) for n in names]
    keys = set().union(*[set(c) for c in samples.values()])
    interpolate = _biquadratic_interpolator(list(samples), symbols)
    interpolated = {
        key: interpolate([samples[p].get(key, sympy.Integer(0)) for p in samples]) for key in keys
    }
    # check at the table's own offsets against a direct elimination there
    offsets = dict(true_offsets)
    true_pivots, true_coeffs = _group_at(function, order, offsets, seed + 1)
    subs = {
        sym: sympy.Rational(offsets[str(sym)].numerator, offsets[str(sym)].denominator)
        for sym in symbols
    }
    if true_pivots != pivots:
        raise RuntimeError("pivot structure at the table's offsets differs from the generic one")
    for key in set(true_coeffs) | set(interpolated):
        want = true_coeffs.get(key, sympy.Integer(0))
        got = sympy.sympify(interpolated.get(key, sympy.Integer(0))).subs(
            subs
        )  # exact: a rational polynomial at a rational point
        if want != got:
            raise RuntimeError(
                f"interpolated grouping coefficient {key} disagrees at the table's offsets"
            )
    coefficients = []
    for i, p in enumerate(pivots):
        row = {order[p]: sympy.Integer(1)}
        for d in range(len(order)):
            c = interpolated.get((i, d))
            if c is not None and c != 0:
                row[order[d]] = c
        coefficients.append(row)
    base = [base_name(order[p]) for p in pivots]
    canonical = _canonical_order(base)
    index = [base.index(b) for b in canonical]
    return Grouping(
        standard_names=tuple(standard_parameter_names()),
        base_names=tuple(canonical),
        pivots=tuple(order[pivots[i]] for i in index),
        coefficient_texts=tuple({s: str(c) for s, c in coefficients[i].items()} for i in index),
        numeric=tuple(
            {s: _fraction(sympy.sympify(c).subs(subs)) for s, c in coefficients[i].items()}
            for i in index
        ),
        offsets=true_offsets,
        rank_rows=24 * N_AXES,
    )


def _fraction(value) -> Fraction:
    import sympy

    value = sympy.Rational(value)
    return Fraction(int(value.p), int(value.q))


def _biquadratic_interpolator(points, symbols):
    """Exact interpolation through values at the grid `points` by a polynomial of degree <= 2 in
    each offset: the monomials' matrix at the points is inverted once, exactly, and every
    coefficient's polynomial is that inverse times its values (a function of the values)."""
    import sympy
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    exponents = [()]
    for _ in symbols:
        exponents = [e + (k,) for e in exponents for k in range(3)]
    matrix = [
        [
            math.prod((Fraction(v) ** k for v, k in zip(point, e)), start=Fraction(1))
            for e in exponents
        ]
        for point in points
    ]
    inverse = (
        DomainMatrix(
            [[QQ(x.numerator, x.denominator) for x in row] for row in matrix],
            (len(points), len(exponents)),
            QQ,
        )
        .inv()
        .to_Matrix()
    )
    monomials = [
        math.prod((sym**k for sym, k in zip(symbols, e)), start=sympy.Integer(1)) for e in exponents
    ]

    def interpolate(values):
        values = [sympy.Rational(v) for v in values]
        terms = [
            sum((inverse[m, i] * values[i] for i in range(len(values))), sympy.Integer(0))
            for m in range(len(monomials))
        ]
        return sympy.Add(*[c * mono for c, mono in zip(terms, monomials) if c != 0])

    return interpolate


# ------------------------------------------------------------------ cache


def _grouping_cache_path(table_text: str):
    key = fingerprint.digest(
        table_text, fingerprint.source_digest(SYMBOLIC_MODEL_SOURCE, codegen, __file__), length=20
    )
    return codegen.CODEGEN_DIR / f"grouping_{key}.json"


@lru_cache(maxsize=2)
def grouping(table_path=None) -> Grouping:
    """The grouping of the MDH table at `table_path` (default: the project's), cached on disk."""
    path = robot_description.MDH_TABLE_CSV if table_path is None else table_path
    # the cache key is the table's text: a cached grouping was derived from a table that passed its
    # checks
    cache = _grouping_cache_path(open(path, encoding="utf-8").read())
    if cache.exists():
        data = json.loads(cache.read_text(encoding="utf-8"))
        return Grouping(
            standard_names=tuple(data["standard_names"]),
            base_names=tuple(data["base_names"]),
            pivots=tuple(data["pivots"]),
            coefficient_texts=tuple(data["coefficients"]),
            numeric=tuple({k: Fraction(v) for k, v in row.items()} for row in data["numeric"]),
            offsets={k: Fraction(v) for k, v in data["offsets"].items()},
            rank_rows=data["rank_rows"],
        )
    result = derive_grouping(robot_description.load_mdh_table(path))
    data = {
        "standard_names": list(result.standard_names),
        "base_names": list(result.base_names),
        "pivots": list(result.pivots),
        "coefficients": list(result.coefficient_texts),
        "numeric": [{k: str(v) for k, v in row.items()} for row in result.numeric],
        "offsets": {k: str(v) for k, v in result.offsets.items()},
        "rank_rows": result.rank_rows,
    }
    with atomic_write(cache, encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
    return result
