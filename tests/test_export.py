"""The link-level reconstruction (crane_lib.export.consistent), the exported URDF and MJCF loaded by
Pinocchio's URDF parser and by MuJoCo against the project's own model, and `crane-id export`.

Models are built from the twin's truth and the manufacturer's description (they exist without the
main job); the accepted model is exported and checked by the book's chapter."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.constants import GRAVITY
from crane_lib.excitation.commands import interpolate, read_command_file
from crane_lib.export import consistent, files, verify
from crane_lib.model.dynamics import DynamicModel, base_matrix
from crane_lib.model.parameters import (
    ParameterSet,
    load_parameters,
    save_parameters,
    standard_parameter_names,
)
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin.truth import load_truth

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

TOLERANCE = verify.TOLERANCE  # 1e-9 relative, for Pinocchio and MuJoCo alike


@pytest.fixture(scope="module")
def reduced():
    return DynamicModel("reduced")


@pytest.fixture(scope="module")
def truth_base(reduced):
    """The twin's truth as a 39-parameter model, with standard errors of a plausible size."""
    beta = reduced.base_from_standard(load_truth())
    return ParameterSet(beta.names, beta.values, np.full(len(beta.names), 1e-3))


@pytest.fixture(scope="module")
def truth_reconstruction(truth_base):
    return consistent.reconstruct(truth_base)


def broken(base: ParameterSet) -> ParameterSet:
    """The model with ZZR7 pushed below XXR7: Sigma_xx of link 7 = (ZZR7 - XXR7)/2 < 0."""
    values = base.as_dict()
    values["ZZR7"] = values["XXR7"] - 1e-4
    return ParameterSet(base.names, [values[n] for n in base.names], base.std_errors)


# ----------------------------------------------------------------------------- link algebra


def test_pseudo_inertia_is_the_second_moment_of_a_mass_distribution(rng):
    """J of eight point masses equals sum m [x; 1][x; 1]^T, and link_inertial reads back their
    mass, centre of mass and central inertia."""
    points, masses = rng.normal(scale=0.1, size=(8, 3)), rng.uniform(0.01, 0.1, 8)
    second = sum(m * np.outer(np.append(p, 1), np.append(p, 1)) for p, m in zip(points, masses))
    inertia = sum(m * (p @ p * np.eye(3) - np.outer(p, p)) for p, m in zip(points, masses))
    first = (masses[:, None] * points).sum(axis=0)
    link = [
        inertia[0, 0],
        inertia[0, 1],
        inertia[0, 2],
        inertia[1, 1],
        inertia[1, 2],
        inertia[2, 2],
        *first,
        masses.sum(),
    ]
    np.testing.assert_allclose(consistent.pseudo_inertia(link), second, atol=1e-15)
    phi = np.zeros(len(standard_parameter_names()))
    phi[consistent.link_indices(3)] = link
    body = consistent.link_inertial(phi, 3)
    com = first / masses.sum()
    central = sum(
        m * ((p - com) @ (p - com) * np.eye(3) - np.outer(p - com, p - com))
        for p, m in zip(points, masses)
    )
    assert body.mass == pytest.approx(masses.sum())
    np.testing.assert_allclose(body.com, com, atol=1e-15)
    np.testing.assert_allclose(body.inertia, central, atol=1e-15)
    assert (
        consistent.link_margins(phi)[2] > 0 and consistent.link_margins(phi)[0] == 0
    )  # link 1 is empty: not consistent


def test_decided_moments_come_from_the_base_matrix(truth_base):
    """The base parameters of the reduced set decide Sigma_xx of links 3-7 and Sigma_yy of link 7
    (found from K, not assumed), and each decided value equals the link's own Sigma entry."""
    decided = consistent.decided_moments("reduced")
    assert {(d.link, d.axis) for d in decided} == {
        (3, "x"),
        (4, "x"),
        (5, "x"),
        (6, "x"),
        (7, "x"),
        (7, "y"),
    }
    link7x = next(d for d in decided if (d.link, d.axis) == (7, "x"))
    assert link7x.weights == pytest.approx({"ZZR7": 0.5, "XXR7": -0.5})
    truth = load_truth().values
    for d in decided:
        a = "xyz".index(d.axis)
        assert d.value(truth_base) == pytest.approx(
            consistent.pseudo_inertia(consistent.link_parameters(truth, d.link))[a, a], rel=1e-9
        )


# ----------------------------------------------------------------------------- reconstruction


@pytest.mark.parametrize("distance", consistent.DISTANCES)
def test_the_twins_model_has_an_exact_consistent_reconstruction(
    truth_base, truth_reconstruction, distance
):
    result = (
        truth_reconstruction
        if distance == consistent.DEFAULT_DISTANCE
        else consistent.reconstruct(truth_base, distance=distance)
    )
    assert result.exact and result.distance == distance
    phi = result.standard.values
    # the full grouped model of the standard vector: the 39 given values, and zero for every base
    # parameter the reduced set leaves out (products of inertia of links 2-7, Coulomb friction)
    full_names = DynamicModel("full").names
    full = dict(zip(full_names, base_matrix("full") @ phi))
    for name, value in zip(truth_base.names, truth_base.values):
        assert full[name] == pytest.approx(value, rel=1e-12, abs=1e-15)
    assert max(abs(full[n]) for n in full_names if n not in truth_base.names) < 1e-15
    assert np.all(result.link_margins >= consistent.MARGIN * (1 - consistent.CHECK_RTOL))
    drive = [i for i, n in enumerate(standard_parameter_names()) if n[:2] in ("IA", "FV", "FS")]
    assert np.all(phi[drive] >= 0)


def test_the_two_distances_choose_different_links_for_the_same_model(
    truth_base, truth_reconstruction
):
    other = consistent.reconstruct(truth_base, distance="euclidean")
    np.testing.assert_allclose(
        other.reproduced.values, truth_reconstruction.reproduced.values, rtol=1e-12
    )
    assert np.abs(other.standard.values - truth_reconstruction.standard.values).max() > 1e-6


def test_a_model_with_an_impossible_link_gets_the_nearest_consistent_model(truth_base):
    model = broken(truth_base)
    result = consistent.reconstruct(model)
    assert not result.exact and result.change_metric == "OLS standard errors"
    # the change is what the standard vector does to the model; it repairs link 7's decided entry
    np.testing.assert_allclose(
        result.reproduced.values,
        base_matrix("reduced") @ result.standard.values,
        rtol=1e-12,
        atol=1e-15,
    )
    decided = {(d.link, d.axis): d for d in consistent.decided_moments("reduced")}
    assert decided[(7, "x")].value(model) < 0 < decided[(7, "x")].value(result.reproduced)
    assert result.change_norm == pytest.approx(np.linalg.norm(result.change / model.std_errors))
    assert np.all(result.link_margins >= consistent.MARGIN * (1 - consistent.CHECK_RTOL))
    with pytest.raises(consistent.NoConsistentModel, match="the smallest change that admits one"):
        consistent.require_exact(result, "model.csv")
    # allowing a larger change brings the links closer to the prior, never farther
    curve = consistent.tradeoff(model, factors=(1.0, 2.0))
    assert curve[0].change_norm == pytest.approx(result.change_norm, rel=1e-2)
    assert curve[1].divergence <= curve[0].divergence + 1e-9 and curve[
        1
    ].change_norm <= 2.0 * curve[0].change_norm * (1 + 1e-3)


# ------------------------------------------------------------------------- the files in the tools


def _pinocchio(urdf):
    model = pin.buildModelFromUrdf(str(urdf))
    dynamics = files.read_urdf_joint_dynamics(urdf)
    model.armature[:] = [dynamics[n]["armature"] for n in model.names[1:]]
    model.gravity.linear[:] = [0.0, 0.0, -GRAVITY]
    return model, dynamics


def _relative(a, b):
    return np.abs(np.asarray(a) - b).max() / np.abs(b).max()


@pytest.fixture(scope="module")
def exported(tmp_path_factory, truth_reconstruction):
    folder = tmp_path_factory.mktemp("export")
    files.write_files(
        files.robot_model(truth_reconstruction.standard), folder / "arm.urdf", folder / "arm.xml"
    )
    return folder / "arm.urdf", folder / "arm.xml"


@pytest.mark.parametrize("which", ["reconstruction", "truth"])
def test_pinocchio_reads_the_urdf_as_the_projects_model(
    exported, truth_reconstruction, tmp_path, which
):
    """M(theta) and rigid body + armature + viscous (+ Coulomb for the truth) inverse dynamics at 50
    random states, to 1e-9 relative. The truth carries products of inertia and Coulomb friction, so
    it is checked against the full grouped model: the frame mapping of every inertia entry is
    tested."""
    if which == "truth":
        urdf = tmp_path / "truth.urdf"
        files.write_files(files.robot_model(load_truth()), urdf=urdf)
        model = DynamicModel("full")
        beta = model.base_from_standard(load_truth()).values
    else:
        urdf, model, beta = (
            exported[0],
            DynamicModel("reduced"),
            truth_reconstruction.reproduced.values,
        )
    robot, dynamics = _pinocchio(urdf)
    assert list(robot.names[1:]) == list(dynamics) and robot.nv == 8
    data = robot.createData()
    damping = np.array([dynamics[n]["damping"] for n in robot.names[1:]])
    friction = np.array([dynamics[n]["friction"] for n in robot.names[1:]])
    q, dq, ddq = verify.random_states(50, seed=3)
    m_own, tau_own = model.inertia_matrix(q, beta), model.inverse_dynamics(q, dq, ddq, beta)
    for i in range(len(q)):
        m = pin.crba(robot, data, q[i])
        m = np.triu(m) + np.triu(m, 1).T
        tau = (
            pin.rnea(robot, data, q[i], dq[i], ddq[i]) + damping * dq[i] + friction * np.sign(dq[i])
        )
        assert _relative(m, m_own[i]) < TOLERANCE
        assert _relative(tau, tau_own[i]) < TOLERANCE


def test_mujoco_compiles_the_mjcf_as_the_projects_model(exported, truth_reconstruction, reduced):
    """mj_fullM and mj_inverse (with the limit and dry-friction constraint rows off) at 50 random
    states, to 1e-9 relative: MuJoCo's compiler keeps each body's inertia as principal moments and a
    frame from its own 3x3 eigendecomposition, the one step not exact, and it converges to double
    precision."""
    robot = mujoco.MjModel.from_xml_path(str(exported[1]))
    robot.opt.disableflags |= (
        mujoco.mjtDisableBit.mjDSBL_LIMIT | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS
    )
    data = mujoco.MjData(robot)
    assert robot.nv == 8 and robot.opt.gravity[2] == -GRAVITY
    beta = truth_reconstruction.reproduced.values
    q, dq, ddq = verify.random_states(50, seed=4)
    m_own, tau_own = reduced.inertia_matrix(q, beta), reduced.inverse_dynamics(q, dq, ddq, beta)
    for i in range(len(q)):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[i], dq[i], ddq[i]
        mujoco.mj_inverse(robot, data)
        full = np.zeros((8, 8))
        mujoco.mj_fullM(robot, data, full)
        assert _relative(full, m_own[i]) < TOLERANCE
        assert _relative(data.qfrc_inverse, tau_own[i]) < TOLERANCE


def test_mujoco_simulation_follows_the_projects_direct_dynamics(
    exported, truth_reconstruction, reduced
):
    """0.4 s from rest under the computed torque of V01's commanded motion (its first move),
    MuJoCo's RK4 on the MJCF and the same scheme on DynamicModel.direct_dynamics stay within 1e-8
    rad."""
    beta = truth_reconstruction.reproduced.values
    reference = interpolate(read_command_file(TRAJECTORY_DIR / "V01.txt"))
    moving = int(np.argmax(np.abs(reference.qd).max(axis=1) > 1e-3))
    window = slice(moving, moving + 400)
    torque = reduced.inverse_dynamics(
        reference.q[window], reference.qd[window], reference.qdd[window], beta
    )
    run = verify.simulate(exported[1], reduced, beta, reference.q[moving], torque)
    assert np.abs(run.own[-1] - run.own[0]).max() > 1e-3  # the arm moved
    assert run.max_difference < 1e-8


def test_the_checks_fail_on_a_wrong_file(exported, truth_reconstruction, reduced, tmp_path):
    """Both tool checks see a 1 % error in one link's mass and in one rotor inertia."""
    beta = truth_reconstruction.reproduced.values
    assert verify.pinocchio_check(exported[0], reduced, beta, n=10).passed
    assert verify.mujoco_check(exported[1], reduced, beta, n=10).passed
    robot = files.robot_model(truth_reconstruction.standard)
    link = files.axis_links()[3]
    inertial = robot.inertials[link]
    robot.inertials[link] = files.Inertial(inertial.mass * 1.01, inertial.com, inertial.inertia)
    robot.armature[files.ARM_JOINTS[5]] *= 1.01
    files.write_files(robot, tmp_path / "bad.urdf", tmp_path / "bad.xml")
    assert verify.pinocchio_check(tmp_path / "bad.urdf", reduced, beta, n=10).torque_error > 1e-4
    bad = verify.mujoco_check(tmp_path / "bad.xml", reduced, beta, n=10)
    assert bad.inertia_error > 1e-4 and not bad.passed


# ----------------------------------------------------------------------------- crane-id export


def test_export_writes_both_files_the_same_bytes_each_time(truth_base, tmp_path, capsys):
    model = tmp_path / "model.csv"
    save_parameters(model, truth_base)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        assert (
            cli.main(
                [
                    "export",
                    str(model),
                    "--urdf",
                    str(tmp_path / folder / "m.urdf"),
                    "--mjcf",
                    str(tmp_path / folder / "m.xml"),
                    "--standard",
                    str(tmp_path / folder / "m.csv"),
                ]
            )
            == 0
        )
    for name in ("m.urdf", "m.xml", "m.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert "reproduces the model exactly" in capsys.readouterr().out


def _refused(argv, tmp_path, capsys, *words):
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("crane-id export: ")
    for word in words:
        assert word in err
    assert not list(tmp_path.glob("out*")) and not list(tmp_path.glob(".*tmp"))


def test_export_refuses_bad_models_and_paths_writing_nothing(truth_base, tmp_path, capsys):
    outputs = ["--urdf", str(tmp_path / "out.urdf"), "--mjcf", str(tmp_path / "out.xml")]
    good, impossible = tmp_path / "good.csv", tmp_path / "impossible.csv"
    save_parameters(good, truth_base)
    save_parameters(impossible, broken(truth_base))
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(good.read_text(encoding="utf-8").replace("ZZR7,", "ZZ7R,"), encoding="utf-8")
    nan = tmp_path / "nan.csv"
    text = good.read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(text) if line.startswith("MXR3,"))
    text[row] = "MXR3,nan," + text[row].split(",", 2)[2]
    nan.write_text("\n".join(text) + "\n", encoding="utf-8")
    _refused(["export", str(renamed)] + outputs, tmp_path, capsys, str(renamed), "ZZ7R")
    _refused(["export", str(nan)] + outputs, tmp_path, capsys, f"{nan}:", "MXR3")
    _refused(
        ["export", str(impossible)] + outputs,
        tmp_path,
        capsys,
        str(impossible),
        "no physically consistent",
        "--nearest",
    )
    _refused(
        [
            "export",
            str(good),
            "--urdf",
            str(tmp_path / "missing" / "out.urdf"),
            "--mjcf",
            str(tmp_path / "out.xml"),
        ],
        tmp_path,
        capsys,
        "--urdf",
        "missing does not exist",
    )
    _refused(["export", str(good)], tmp_path, capsys, "no output")
    # --nearest exports the nearest consistent model and says how far it moved
    assert cli.main(["export", str(impossible), "--nearest"] + outputs) == 0
    out = capsys.readouterr().out
    assert "nearest" in out and "OLS standard errors" in out
    assert (tmp_path / "out.urdf").is_file() and (tmp_path / "out.xml").is_file()


# ----------------------------------------------------------------------------- the chapter's views


def test_the_chapters_views_read_the_reconstruction(truth_base, truth_reconstruction):
    from crane_lib.reporting.chapters import consistent_model as view
    from crane_lib.reporting.tables import comparison_table

    models = {"twin": truth_base, "broken": broken(truth_base)}
    assert view.negative_entries(models) == {
        "twin": [],
        "broken": ["Σxx of link 7", "Σyy of link 7"],
    }  # ZZR7 < 0 here: both
    decided = view.decided_table(models)
    assert decided.loc[decided.index.str.startswith("Σxx of link 7"), "broken"].iloc[
        0
    ] == pytest.approx(-0.5e-4)
    prior, _ = consistent.prior_vector()
    table = view.link_table(
        {"description": prior, "reconstruction": truth_reconstruction.standard.values}
    )
    assert len(table) == 14
    np.testing.assert_allclose(
        table.xs("reconstruction", level="model")["λmin(J) (kg·m²)"],
        truth_reconstruction.link_margins,
    )
    rows = comparison_table(view.sec_vii_e_comparisons([], 6, truth_reconstruction)).frame
    assert rows["this book"].tolist() == ["yes", "none: it reproduces the model exactly"]
    figure = view.ellipsoid_figure(
        {"reconstruction": truth_reconstruction.standard.values}, prior, "test"
    )
    assert len(figure.axes[0].collections) == 2 * 7  # a surface and a prior wire per link


def test_a_model_far_from_consistency_gets_its_nearest_or_one_named_error(tmp_path):
    """ZZR7 far below zero (Clarabel 0.x fails the bounded nearest search here): either a nearest
    consistent model or the input error naming the file and the solver status, never a crash."""
    from crane_book import corpus

    path = tmp_path / "far.csv"
    path.write_bytes(corpus.parameter_text(corpus._param_field("ZZR7", 1, "-0.01")))
    try:
        result = consistent.reconstruct(load_parameters(path), source=str(path))
    except consistent.NoConsistentModel as error:
        assert "far.csv" in str(error) and "Clarabel" in str(error)
    else:
        assert not result.exact and np.isfinite(result.change_norm)


# ------------------------------------------------------------------ solver answers and the margin


def _missing_the_margin(monkeypatch, misses: int):
    """Make the first `misses` answers of the nearest search miss the margin by half (the worst
    link scaled down), as Clarabel's optimal_inaccurate answers did on models identify wrote."""
    original, calls = consistent._nearest_within, []

    def answer(problem, *args, **kwargs):
        phi = original(problem, *args, **kwargs).copy()
        calls.append(len(calls))
        if len(calls) <= misses:
            margins = consistent.link_margins(phi)
            j = int(np.argmin(margins))
            phi[consistent.link_indices(j + 1)] *= 0.5 * problem.margin / margins[j]
        return phi

    monkeypatch.setattr(consistent, "_nearest_within", answer)
    return calls


def test_an_answer_that_misses_the_margin_is_solved_again(truth_base, monkeypatch):
    """One answer misses: the next attempt (wider slack) is taken and passes the check."""
    calls = _missing_the_margin(monkeypatch, misses=1)
    result = consistent.reconstruct(broken(truth_base))
    assert len(calls) == 2 and not result.exact
    assert np.all(result.link_margins >= consistent.MARGIN * (1 - consistent.CHECK_RTOL))
    assert "rejected" in result.solves[2]["status"] and "retry 1" in result.solves[-1]["what"]


def test_a_tradeoff_point_that_misses_the_margin_is_solved_again(truth_base, monkeypatch):
    """The tradeoff's points retry as the nearest model does: a first answer that misses the
    margin is solved again with a wider slack, and the point passes the check."""
    calls = _missing_the_margin(monkeypatch, misses=1)
    curve = consistent.tradeoff(broken(truth_base), factors=(1.0, 2.0))
    assert len(calls) == 3 and len(curve) == 2  # the first point twice, the second once
    for point in curve:
        assert np.all(point.link_margins >= consistent.MARGIN * (1 - consistent.CHECK_RTOL))
    assert "retry 1" in curve[0].solves[-1]["what"] and "rejected" in curve[0].solves[1]["status"]
    assert curve[1].divergence <= curve[0].divergence + 1e-9


def test_when_every_answer_misses_the_margin_export_refuses_naming_what_failed(
    truth_base, tmp_path, capsys, monkeypatch
):
    """Exit 2 with and without --nearest: the smallest change and the check it failed, in the
    user's terms (no solver status)."""
    _missing_the_margin(monkeypatch, misses=10**6)  # every answer, of both runs
    model = tmp_path / "model.csv"
    save_parameters(model, broken(truth_base))
    for nearest in ([], ["--nearest"]):
        _refused(
            ["export", str(model), "--urdf", str(tmp_path / "out.urdf"), *nearest],
            tmp_path,
            capsys,
            "the smallest change that admits one is",
            "passed the check (the prior, among changes this small: link",
            "< margin",
            "ZZR7",
        )


def test_the_margin_is_bounded_by_the_manufacturers_links_and_the_solver():
    """MARGIN_MAX is the description's smallest link eigenvalue, rounded down; the parser refuses
    a margin above it or below what the solver resolves."""
    prior, _ = consistent.prior_vector()
    smallest = consistent.link_margins(prior).min()
    assert 0.99 * smallest <= consistent.MARGIN_MAX <= smallest
    from crane_lib.cli import export as export_command

    for value in ("2e-5", "1e-3", "1e-9"):
        with pytest.raises(Exception, match="out of range"):
            export_command.margin_type(value)
    assert export_command.margin_type(str(consistent.MARGIN_MAX)) == consistent.MARGIN_MAX


def test_a_model_kept_out_by_the_margin_alone_is_told_so(truth_base):
    """Link 7's decided Sigma_yy at 5e-7 kg·m^2: refused at the default margin with the margin
    named as the cause and a margin that admits it, which then reproduces it exactly."""
    values = truth_base.as_dict()
    values["ZZR7"] = 1e-6 - values["XXR7"]
    thin = ParameterSet(
        truth_base.names, [values[n] for n in truth_base.names], truth_base.std_errors
    )
    result = consistent.reconstruct(thin)
    assert not result.exact and 0 < result.largest_margin < consistent.MARGIN
    cause = r"the margin is the cause: with --margin 4\.9e-07 or less"
    with pytest.raises(consistent.NoConsistentModel, match=cause):
        consistent.require_exact(result, "thin.csv")
    assert consistent.reconstruct(thin, margin=4.9e-7).exact
    largest = consistent.reconstruct(broken(truth_base)).largest_margin
    assert largest < 0 and consistent.margin_advice(largest, consistent.MARGIN) == ""


def test_a_model_far_from_any_consistent_one_is_refused_without_solver_chatter(tmp_path):
    """ZZR7 = -1000 kg·m^2 (cvxpy warned "Solution may be inaccurate" on the terminal, and the
    refusal named a Clarabel status): `crane-id export` prints one line, what the model lacks
    (link 7's second moment) and the smallest change that admits one; with --nearest the nearest
    model is written and no solver warning is raised."""
    import subprocess
    import sys
    import warnings

    from crane_book.corpus import _param_field, parameter_text

    model = tmp_path / "far.csv"
    model.write_bytes(parameter_text(_param_field("ZZR7", 1, "-1000")))
    command = [sys.executable, "-m", "crane_lib.cli", "export", str(model), "--urdf", "a.urdf"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    for word in ("cvxpy", "Clarabel", "solver error", "Warning", "Traceback"):
        assert word not in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "link 7's second moment along y" in run.stderr
    assert "the smallest change that admits one" in run.stderr
    assert not (tmp_path / "a.urdf").exists()
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        assert cli.main([*command[3:5], "--urdf", str(tmp_path / "a.urdf"), "--nearest"]) == 0
    assert [str(w.message) for w in raised] == []
    assert (tmp_path / "a.urdf").is_file()
