"""The exact grouping: ranks, closed-form relations, the MY7/MZ7 remark, structural invariants."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import sympy

from crane_lib.model import base_parameters, identifiability, robot_description
from crane_lib.model.dynamics import DynamicModel, base_matrix
from crane_lib.model.parameters import standard_parameter_names

from .conftest import pinocchio_arm, random_link_inertials


def _random_states(rng, n):
    return rng.uniform(-np.pi, np.pi, (n, 8)), rng.normal(0, 2, (n, 8)), rng.normal(0, 5, (n, 8))


@pytest.mark.parametrize(
    "parameter_set, expected_rank",
    [("full", 65), ("reduced", 39), ("reduced+poi", 57), ("reduced+coulomb", 47)],
)
def test_stacked_regressor_rank(rng, parameter_set, expected_rank):
    model = DynamicModel(parameter_set)
    assert model.n_parameters == expected_rank
    w_all = identifiability.stack(model.regressor(*_random_states(rng, 1000)))
    assert identifiability.numerical_rank(w_all) == expected_rank


def test_pinocchio_standard_regressor_has_rank_65_and_our_column_space(rng):
    """Independent count: Pinocchio's 70 inertial columns plus rotor and friction columns span 65
    dimensions, the same space as ours."""
    pin = pytest.importorskip("pinocchio")
    model_pin = pinocchio_arm(random_link_inertials(rng), 9.80665)
    data = model_pin.createData()
    q, qd, qdd = _random_states(rng, 400)
    blocks = []
    for qi, qdi, qddi in zip(q, qd, qdd):
        inertial = np.zeros((8, 70))
        inertial[:7] = pin.computeJointTorqueRegressor(model_pin, data, qi[:7], qdi[:7], qddi[:7])
        blocks.append(np.hstack([inertial, np.diag(qddi), np.diag(qdi), np.diag(np.sign(qdi))]))
    standard = np.vstack(blocks)
    ours = identifiability.stack(DynamicModel("full").regressor(q, qd, qdd))
    assert identifiability.numerical_rank(standard) == 65
    assert identifiability.numerical_rank(np.hstack([standard, ours])) == 65


def test_grouping_relations_are_khalils_rules():
    """Spot checks of relations that the elimination must find (Khalil & Dombre's rules for alpha =
    +-pi/2, d = 0)."""
    group = base_parameters.grouping()
    rl3, rl5 = sympy.symbols("RL3 RL5")
    s = {n: sympy.Symbol(n) for n in standard_parameter_names()}
    expected = {
        "ZZR1": s["ZZ1"] + s["IA1"] + s["YY2"],
        "XXR3": s["XX3"] - s["YY3"] + s["YY4"],
        "ZZR2": s["ZZ2"]
        + s["IA2"]
        + s["YY3"]
        + 2 * rl3 * s["MZ3"]
        + rl3**2 * sum(s[f"M{j}"] for j in range(3, 8)),
        "MYR2": s["MY2"] + s["MZ3"] + rl3 * sum(s[f"M{j}"] for j in range(3, 8)),
        "MYR4": s["MY4"] + s["MZ5"] + rl5 * sum(s[f"M{j}"] for j in range(5, 8)),
        "MYR3": s["MY3"] - s["MZ4"],
        "MXR2": s["MX2"],
        "XXR7": s["XX7"] - s["YY7"],
    }
    for name, relation in expected.items():
        assert sympy.expand(group.relation(name) - relation) == 0, name
    assert len(group.base_names) == 65


def test_mz7_is_absorbed_by_myr6_only():
    """Appendix A-C comes out of the derivation: MZ7 appears in MYR6 and nowhere else; MY7 stays
    alone."""
    group = base_parameters.grouping()
    holders = [b for b in group.base_names if sympy.Symbol("MZ7") in group.relation(b).free_symbols]
    assert holders == ["MYR6"]
    assert group.relation("MYR7") == sympy.Symbol("MY7")


def test_cached_grouping_equals_fresh_derivation():
    cached = base_parameters.grouping()
    fresh = base_parameters.derive_grouping(robot_description.load_mdh_table(), seed=7)
    assert fresh.base_names == cached.base_names
    assert fresh.pivots == cached.pivots
    for a, b in zip(fresh.coefficients, cached.coefficients):
        assert set(a) == set(b)
        assert all(sympy.expand(a[k] - b[k]) == 0 for k in a)
    assert (
        fresh.numeric == cached.numeric
    )  # the exact values at the table's offsets, as the cache holds them
    assert all(isinstance(v, Fraction) for row in cached.numeric for v in row.values())


def test_a_cached_model_loads_without_sympy():
    """The cached load (every sweep kernel and page pays it) imports neither sympy nor the symbolic
    model, and the joint offsets the generated module carries are the exact table's."""
    import subprocess
    import sys

    DynamicModel("reduced")  # generated and cached (make model did it already)
    probe = (
        "import sys; from crane_lib.model.dynamics import DynamicModel; m = DynamicModel('full'); "
        "m.base_matrix(); "
        "print(sorted(n for n in sys.modules if n == 'sympy' or n.endswith('symbolic_model')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"
    exact = [float(row.theta_offset) for row in robot_description.load_mdh_table()]
    assert DynamicModel("reduced")._offsets.tolist() == exact


def test_base_matrix_rows_match_relations_numerically():
    group = base_parameters.grouping()
    matrix = base_matrix("full")
    standard = list(group.standard_names)
    subs = {sympy.Symbol("RL3"): sympy.Rational(1, 4), sympy.Symbol("RL5"): sympy.Rational(1, 4)}
    for i, name in enumerate(group.base_names):
        relation = group.relation(name).subs(subs)
        for j, sname in enumerate(standard):
            assert matrix[i, j] == pytest.approx(
                float(relation.coeff(sympy.Symbol(sname))), abs=0
            ), (name, sname)


def _exact_rows(function, n_points, seed, **fixed):
    rng = random.Random(seed)
    n = len(base_parameters.elimination_order())
    rows = []
    for _ in range(n_points):
        t = [Fraction(rng.randint(-9, 9), rng.randint(1, 9)) for _ in range(7)]
        c = [(1 - x * x) / (1 + x * x) for x in t]
        s = [2 * x / (1 + x * x) for x in t]
        qp = fixed.get("qp", [Fraction(rng.randint(-9, 9), 3) for _ in range(8)])
        qdp = fixed.get("qdp", [Fraction(rng.randint(-9, 9), 3) for _ in range(8)])
        out = [[Fraction(0)] * n for _ in range(8)]
        function(c, s, qp, qdp, [1] * 8, Fraction(981, 100), {}, out)
        rows.append(out)
    return rows


def test_joint1_gravity_row_is_exactly_zero():
    """At rest, every entry of the joint-1 row vanishes exactly (rational arithmetic), except
    Coulomb's sign term."""
    order = base_parameters.elimination_order()
    function = base_parameters.exact_regressor_function(robot_description.load_mdh_table(), order)
    for out in _exact_rows(function, 12, seed=3, qp=[Fraction(0)] * 8, qdp=[Fraction(0)] * 8):
        nonzero = [order[k] for k, v in enumerate(out[0]) if v != 0]
        assert nonzero == ["FS1"]


def test_inertia_matrix_does_not_depend_on_theta1(rng):
    model = DynamicModel("full")
    beta = rng.normal(size=model.n_parameters)
    q = rng.uniform(-np.pi, np.pi, (500, 8))
    shifted = q.copy()
    shifted[:, 0] = rng.uniform(-np.pi, np.pi, 500)
    np.testing.assert_array_equal(
        model.inertia_matrix(q, beta), model.inertia_matrix(shifted, beta)
    )
    # structurally too: the generated inertia kernel never reads cos or sin of theta1
    import inspect

    source = inspect.getsource(model._module.inertia_upper_kernel.py_func)
    assert "c[0]" not in source and "s[0]" not in source


def test_a_read_only_beta_reaches_the_kernels_as_the_compiled_type(rng):
    """parameter_vector hands the kernels a new, writable vector: a read-only β (np.frombuffer's,
    as the certified check's cache rebuilds it) would be another numba type and compile the
    kernels a second time."""
    model = DynamicModel("reduced")
    beta = rng.normal(size=model.n_parameters)
    pose = rng.uniform(-np.pi, np.pi, (3, 8))
    expected = model.inertia_matrix(pose, beta)
    rows = model._module._inertia_rows
    compiled = len(rows.signatures)
    frozen = np.frombuffer(beta.tobytes(), dtype=float)
    assert not frozen.flags.writeable
    vector = model.parameter_vector(frozen)
    assert vector.flags.writeable and not np.shares_memory(vector, frozen)
    np.testing.assert_array_equal(model.inertia_matrix(pose, frozen), expected)
    assert len(rows.signatures) == compiled, rows.signatures


def test_parameter_set_names_follow_the_paper():
    reduced = base_parameters.grouping().parameter_set("reduced")
    expected = ["ZZR1"] + [f"{k}R{j}" for j in range(2, 8) for k in ("XX", "ZZ", "MX", "MY")]
    expected += [f"IA{j}" for j in range(3, 8)] + [f"FV{j}" for j in range(1, 8)] + ["IA8", "FV8"]
    assert reduced == expected
