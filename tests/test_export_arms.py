"""The export of another arm (ViperX 300 S, SO-101): consistent links in the chain model's frames,
URDF and MJCF with the arm's own joints, read by Pinocchio and MuJoCo as the project's model.

The model is the twin's truth in the full grouped set (the description's prior plus the drive
terms), which a consistent link-level model reproduces exactly: the files must give its M(theta)
and inverse dynamics to 1e-9 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.export import consistent, files, verify
from crane_lib.model.arm_description import load_arm
from crane_lib.model.dynamics import DynamicModel
from crane_lib.twin import truth as twin_truth

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

ARMS = ("vx300s", "so101")
TOLERANCE = verify.TOLERANCE


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


@pytest.fixture(scope="module", params=ARMS)
def exported(request, tmp_path_factory):
    """(arm, full-set model, truth's base parameters, reconstruction, URDF path, MJCF path)."""
    arm = load_arm(request.param)
    model = DynamicModel("full", arm=arm)
    base = model.base_from_standard(twin_truth.truth_parameters(request.param))
    result = consistent.reconstruct(base, arm=arm)
    folder = tmp_path_factory.mktemp(request.param)
    urdf, mjcf = folder / "arm.urdf", folder / "arm.xml"
    files.write_files(
        files.arm_robot_model(result.standard, arm, notes=[result.summary()]), urdf, mjcf
    )
    return arm, model, base, result, urdf, mjcf


def _without_coulomb(model: DynamicModel, base) -> np.ndarray:
    """The base parameters with the Coulomb terms zero (the tools' inverse dynamics has none)."""
    return np.array([0.0 if n.startswith("FS") else v for n, v in zip(model.names, base.values)])


def test_the_truth_of_an_arm_has_an_exact_consistent_reconstruction(exported):
    arm, model, base, result, _, _ = exported
    assert result.exact and result.parameter_set == "full" and result.arm is arm
    assert result.standard.names == arm.standard_parameter_names()
    reproduced = model.base_from_standard(result.standard)
    np.testing.assert_allclose(
        reproduced.values, base.values, rtol=0, atol=1e-12 * np.abs(base.values).max()
    )
    assert len(result.link_margins) == arm.n_joints
    assert result.link_margins.min() >= consistent.MARGIN * (1 - consistent.CHECK_RTOL)
    # the full set leaves little free: the links are the description's prior, to the solver's
    # accuracy
    prior, _ = consistent.prior_vector(arm=arm)
    links = [i for j in range(1, arm.n_joints + 1) for i in consistent.link_indices(j, arm)]
    np.testing.assert_allclose(result.standard.values[links], prior[links], rtol=1e-3, atol=1e-7)


def test_pinocchio_reads_the_urdf_of_an_arm_as_the_projects_model(exported):
    """M(theta) and rigid body + armature + viscous + Coulomb inverse dynamics, 30 states."""
    arm, model, base, _, urdf, _ = exported
    robot, damping = verify.pinocchio_model(urdf)
    dynamics = files.read_urdf_joint_dynamics(urdf)
    names = [j.name for j in arm.joints] + [arm.gripper]
    assert list(robot.names[1:]) == list(dynamics) == names and robot.nv == arm.n_axes
    np.testing.assert_array_equal(robot.lowerPositionLimit, arm.joint_limits()[:, 0])
    np.testing.assert_array_equal(robot.upperPositionLimit, arm.joint_limits()[:, 1])
    np.testing.assert_array_equal(robot.effortLimit, [a.torque_limit for a in arm.actuators])
    friction = np.array([dynamics[n]["friction"] for n in names])
    data = robot.createData()
    q, dq, ddq = verify.random_states(30, seed=3, n_axes=arm.n_axes)
    m_own = model.inertia_matrix(q, base)
    tau_own = model.inverse_dynamics(q, dq, ddq, base)
    for i in range(len(q)):
        m = pin.crba(robot, data, q[i])
        assert _relative(np.triu(m) + np.triu(m, 1).T, m_own[i]) < TOLERANCE
        tau = pin.rnea(robot, data, q[i], dq[i], ddq[i]) + damping * dq[i]
        assert _relative(tau + friction * np.sign(dq[i]), tau_own[i]) < TOLERANCE
    assert verify.pinocchio_check(urdf, model, _without_coulomb(model, base), n=10).passed


def test_mujoco_compiles_the_mjcf_of_an_arm_as_the_projects_model(exported):
    arm, model, base, _, _, mjcf = exported
    robot = verify.mujoco_model(mjcf)
    assert robot.nv == arm.n_axes
    check = verify.mujoco_check(mjcf, model, _without_coulomb(model, base), n=30)
    assert check.inertia_error < TOLERANCE and check.torque_error < TOLERANCE


def test_the_checks_fail_on_a_wrong_file_of_an_arm(exported, tmp_path):
    """A 1 % error in one link's mass and in one rotor inertia shows in both tools."""
    arm, model, base, result, _, _ = exported
    robot = files.arm_robot_model(result.standard, arm)
    link = files.arm_link_name(arm.joints[2].name)
    inertial = robot.inertials[link]
    robot.inertials[link] = files.Inertial(inertial.mass * 1.01, inertial.com, inertial.inertia)
    robot.armature[arm.joints[1].name] *= 1.01
    files.write_files(robot, tmp_path / "bad.urdf", tmp_path / "bad.xml")
    beta = _without_coulomb(model, base)
    assert verify.pinocchio_check(tmp_path / "bad.urdf", model, beta, n=5).torque_error > 1e-4
    assert verify.mujoco_check(tmp_path / "bad.xml", model, beta, n=5).inertia_error > 1e-4


def test_the_other_mounting_turns_the_world_and_keeps_the_dynamics(tmp_path):
    """The arm's mounting flipped: the world joint turns the root upside down, and the files
    still give the model of that mounting (gravity along the other direction)."""
    arm = load_arm("so101")
    flipped = "hanging" if arm.mounting == "upright" else "upright"
    model = DynamicModel("full", mounting=flipped, arm=arm)
    truth = twin_truth.truth_parameters("so101")
    robot = files.arm_robot_model(consistent.from_standard(truth, arm=arm).standard, arm, flipped)
    np.testing.assert_array_equal(robot.joints[0].origin[:3, :3], np.diag([1.0, -1.0, -1.0]))
    files.write_files(robot, mjcf=tmp_path / "flipped.xml")
    loaded = verify.mujoco_model(tmp_path / "flipped.xml", constraints=False)
    data = mujoco.MjData(loaded)
    beta = _without_coulomb(model, model.base_from_standard(truth))
    q = verify.random_states(1, seed=5, n_axes=arm.n_axes)[0][0]
    data.qpos[:] = q
    mujoco.mj_inverse(loaded, data)
    gravity = model.gravity_torque(q[None, :], beta)[0]
    assert _relative(data.qfrc_inverse, gravity) < TOLERANCE


def test_export_model_writes_an_arms_files_from_a_model_file(tmp_path):
    """The main job's export of a model file, given the arm: its four files, the standard
    parameters under the arm's names, the arm's own mounting in the record."""
    from crane_lib.export import artefacts
    from crane_lib.model.parameters import load_parameters, save_parameters
    from crane_lib.records import read_json_record

    arm = load_arm("so101")
    model = DynamicModel("full", arm=arm)
    base = model.base_from_standard(twin_truth.truth_parameters("so101"))
    path = tmp_path / "model.csv"
    save_parameters(path, base)
    paths = {kind: tmp_path / f"out.{kind}" for kind in ("urdf", "mjcf", "standard", "record")}
    result = artefacts.export_model(path, paths, arm=arm)
    assert result.exact
    standard = load_parameters(paths["standard"])
    assert standard.names == arm.standard_parameter_names()
    record = read_json_record(paths["record"])
    assert record["mounting"] == arm.mounting and record["arm"] == arm.name
    assert record["audit"] is None
    check = verify.mujoco_check(paths["mjcf"], model, _without_coulomb(model, base), n=5)
    assert check.passed
