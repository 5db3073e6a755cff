"""A robot is data: three arms' descriptions, their models against Pinocchio, bad input."""

from __future__ import annotations

import importlib.metadata
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from crane_lib import constants
from crane_lib.errors import InputError
from crane_lib.model import (
    arm_description,
    base_parameters,
    chain_model,
    controller,
    robot_description,
)
from crane_lib.paths import DATA_DIR
from tests.arm_cases import (
    arm_only,
    joint_rows,
    prior_with_drives,
    random_states,
    reference_dynamics,
    relative_error,
    urdf_text,
)

pin = pytest.importorskip("pinocchio")

RELATIVE_TOLERANCE = 1e-9
ARMS = ("crane_x7", "vx300s", "so101")
SO101_URDF = "cmeel.prefix/share/example-robot-data/robots/so_arm_description/urdf/so101.urdf"


# ------------------------------------------------------------------ the CRANE-X7 instance


def test_crane_x7_instance_agrees_with_the_existing_modules():
    """MDH table, limits, Theta, inertial prior, actuators, gains and bus are today's."""
    from crane_lib.acceptance.audit import audit_domain
    from crane_lib.hardware import control_table

    arm = arm_description.crane_x7()
    table = robot_description.load_mdh_table()
    rng = np.random.default_rng(7)
    for joint, row in zip(arm.joints, table):
        angle = rng.uniform(-np.pi, np.pi)
        turn = np.array(
            [[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 1]]
        )
        ours = np.eye(4)
        ours[:3, :3] = arm_description.as_float_matrix(joint.rotation) @ turn
        ours[:3, 3] = [float(x) for x in joint.translation]
        np.testing.assert_allclose(ours, robot_description.mdh_transform(row, angle), atol=1e-15)
    np.testing.assert_array_equal(arm.joint_limits(), robot_description.joint_limits_rad())
    np.testing.assert_array_equal(arm.audit_domain, audit_domain())
    assert arm.inertial_prior == robot_description.description_standard_parameters()
    np.testing.assert_array_equal([a.kt for a in arm.actuators], constants.KT)
    np.testing.assert_allclose(
        [a.torque_limit for a in arm.actuators], constants.CLAMP_TORQUE, rtol=1e-15
    )
    assert (arm.controller.k_p, arm.controller.k_v, arm.controller.k_i) == (
        controller.K_P,
        controller.K_V,
        controller.K_I,
    )
    assert arm.bus.ids == tuple((i,) for i in control_table.AXIS_IDS)
    assert arm.bus.baud == control_table.BAUD_RATE
    assert arm.gravity[2] == constants.GRAVITY  # hanging: gravity along +z0


def test_crane_x7_grouping_is_base_parameters_grouping():
    """The general recursion on the MDH table gives today's 65 base parameters, exactly."""
    today = base_parameters.grouping()
    ours = chain_model.derive_grouping(arm_description.crane_x7())
    assert set(ours.base_names) == set(today.base_names) and ours.pivots == today.pivots
    relations = dict(zip(ours.base_names, ours.relations))
    for name, numeric in zip(today.base_names, today.numeric):
        assert relations[name] == dict(numeric), name


# ------------------------------------------------------------------ Pinocchio from the URDF numbers


@pytest.mark.parametrize("name", ARMS)
def test_chain_model_matches_pinocchio(name, rng):
    """M, inverse dynamics and base regressor x base parameters are Pinocchio's to 1e-9."""
    arm = arm_description.load_arm(name)
    joints, links = joint_rows(name)
    model = arm_only(
        pin.buildModelFromXML(urdf_text(joints, links)), [j.name for j in arm.joints], arm.gravity
    )
    ours = chain_model.ChainModel(arm)
    phi = prior_with_drives(arm, rng)
    q, qd, qdd = random_states(arm, rng)
    tau_ref, mass_ref = reference_dynamics(model, arm, phi, q, qd, qdd)
    errors = {
        "M": relative_error(ours.inertia_matrix(q, phi), mass_ref),
        "RNEA": relative_error(ours.inverse_dynamics(q, qd, qdd, phi), tau_ref),
        "W beta": relative_error(
            ours.regressor(q, qd, qdd) @ ours.base_from_standard(phi), tau_ref
        ),
    }
    print(f"{name}: {len(ours.base_names)} base parameters; relative errors {errors}")
    assert max(errors.values()) < RELATIVE_TOLERANCE, errors


def test_the_check_can_fail(rng):
    """A 1 mm change of one joint origin is seen: the comparison is not vacuous."""
    arm = arm_description.load_arm("vx300s")
    joints, links = joint_rows("vx300s")
    elbow = joints["elbow"]
    joints["elbow"] = type(elbow)(
        **{**elbow.__dict__, "xyz": (elbow.xyz[0] + 1e-3, *elbow.xyz[1:])}
    )
    model = arm_only(
        pin.buildModelFromXML(urdf_text(joints, links)), [j.name for j in arm.joints], arm.gravity
    )
    phi = prior_with_drives(arm, rng)
    q, qd, qdd = random_states(arm, rng, 50)
    tau_ref, _ = reference_dynamics(model, arm, phi, q, qd, qdd)
    assert (
        relative_error(chain_model.ChainModel(arm).inverse_dynamics(q, qd, qdd, phi), tau_ref)
        > 1e-5
    )


# ------------------------------------------------------------------ the SO-101 and its wheel


def _so101_urdf() -> Path:
    try:
        path = Path(importlib.metadata.distribution("example-robot-data").locate_file(SO101_URDF))
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return path


def test_so101_files_are_the_wheels_urdf():
    """joints.csv and links.csv hold the example-robot-data URDF's numbers, unchanged."""
    root = ET.parse(_so101_urdf()).getroot()
    joints, links = joint_rows("so101")
    raw, _ = arm_description.read_urdf_joints(DATA_DIR / "so101_description", snap=False)
    for element in root.findall("joint"):
        joint = raw[element.get("name")]
        origin = element.find("origin")
        assert joint.xyz == tuple(float(x) for x in origin.get("xyz").split())
        assert joint.rpy == tuple(float(x) for x in origin.get("rpy").split())
    by_name = {link["link"]: link for link in links}
    for element in root.findall("link"):
        inertial, row = element.find("inertial"), by_name[element.get("name")]
        assert float(inertial.find("mass").get("value")) == float(row["mass_kg"])
        tensor = inertial.find("inertia")
        assert all(
            float(tensor.get(k)) == float(row[k])
            for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        )


def test_so101_unrounded_model_matches_pinocchio_on_the_wheels_urdf(rng):
    """Unrounded, the model is the wheel's URDF to 1e-9; the rounding moves it by ~1e-6."""
    path = _so101_urdf()
    exact = arm_description.load_urdf_arm(DATA_DIR / "so101_description", snap=False)
    rounded = arm_description.load_arm("so101")
    names = [j.name for j in exact.joints]
    model = arm_only(pin.buildModelFromUrdf(str(path)), names, exact.gravity)
    phi = prior_with_drives(exact, rng)
    q, qd, qdd = random_states(exact, rng)
    tau_ref, mass_ref = reference_dynamics(model, exact, phi, q, qd, qdd)
    unrounded = chain_model.ChainModel(exact)
    errors = {
        "M": relative_error(unrounded.inertia_matrix(q, phi), mass_ref),
        "RNEA": relative_error(unrounded.inverse_dynamics(q, qd, qdd, phi), tau_ref),
    }
    drives = {k: v for k, v in phi.items() if k[:2] in ("IA", "FV", "FS")}
    rounded_model = chain_model.ChainModel(rounded)
    rounding = relative_error(
        rounded_model.inverse_dynamics(q, qd, qdd, rounded.inertial_prior | drives), tau_ref
    )
    print(f"so101 unrounded vs the wheel's URDF: {errors}; rounded model vs it: {rounding:.2e}")
    assert max(errors.values()) < RELATIVE_TOLERANCE, errors
    assert 1e-9 < rounding < 1e-3


# ------------------------------------------------------------------ bad input


def _copy(tmp_path, arm="vx300s") -> Path:
    folder = tmp_path / arm
    shutil.copytree(DATA_DIR / arm_description.ARMS[arm], folder)
    return folder


def _edit(path: Path, old: str, new: str):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_branch_is_not_a_serial_chain(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / "joints.csv", "elbow,revolute,upper_arm_link,", "elbow,revolute,shoulder_link,")
    with pytest.raises(InputError, match=r"joints\.csv:4.*'elbow'.*serial chain"):
        arm_description.load_urdf_arm(folder)


def test_a_joint_without_limits_is_refused(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / "joints.csv", "-1.7627825445142729,1.6057029118347832", ",")
    with pytest.raises(InputError, match=r"joints\.csv:4.*'elbow'.*limits"):
        arm_description.load_urdf_arm(folder)


def test_a_link_without_positive_mass_is_refused(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / "links.csv", "upper_arm_link,0.792592,", "upper_arm_link,0,")
    with pytest.raises(InputError, match=r"links\.csv:4.*'upper_arm_link'.*positive mass"):
        arm_description.load_urdf_arm(folder)


def test_an_indefinite_inertia_is_refused(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / "links.csv", "0.008925,0,0,0.008937,", "-0.008925,0,0,0.008937,")
    with pytest.raises(
        InputError, match=r"links\.csv:4.*'upper_arm_link'.*indefinite.*positive semi-definite"
    ):
        arm_description.load_urdf_arm(folder)


def test_an_actuator_without_torque_constant_is_refused(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / "actuators.csv", "XM540-W270,2.409,", "XM540-W270,,")
    with pytest.raises(InputError, match=r"actuators\.csv:\d+.*'XM540-W270'.*kt_N_m_per_A"):
        arm_description.load_urdf_arm(folder)


def test_an_axis_off_the_frame_axes_is_refused(tmp_path):
    folder = _copy(tmp_path, "so101")
    _edit(folder / "joints.csv", "0,0,1,-1.74533,1.74533", "0,0.6,0.8,-1.74533,1.74533")
    with pytest.raises(InputError, match=r"joints\.csv:3.*axis.*along \+-x, \+-y or \+-z"):
        arm_description.load_urdf_arm(folder)
