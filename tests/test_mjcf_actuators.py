"""The exported MJCF's actuators and timing: one current-control motor per axis with the servo's
gear, ctrlrange, forcerange and the joint's torque limit, the identified timing as custom numeric
data, and a motor whose ctrl gives gear x ctrl at the joint, clamped at forcerange."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from crane_lib.constants import CONTROL_PERIOD_S
from crane_lib.errors import InputError
from crane_lib.export import files
from crane_lib.logs import raw_log
from crane_lib.model import position_loop
from crane_lib.model.arm_description import load_arm
from crane_lib.model.controller import load_realization_constants
from crane_lib.twin import truth as twin_truth

mujoco = pytest.importorskip("mujoco")


def _robot(key: str, mode: str = "current") -> files.RobotModel:
    """The twin's truth of a shipped arm as the exported robot (no reconstruction needed), its
    actuators in `mode`."""
    if key == "crane_x7":
        return files.exported_robot(twin_truth.load_truth(twin_truth.TWIN_TRUTH_CSV))
    arm = load_arm(key).in_drive_mode(mode)
    return files.exported_robot(twin_truth.truth_parameters(key), arm)


def _dead_times(key: str) -> np.ndarray:
    if key == "crane_x7":
        return np.array([m.dead_time for m in load_realization_constants().models])
    return np.array([m.dead_time for m in twin_truth.realization_constants(key).models])


@pytest.fixture(scope="module", params=("crane_x7", "so101", "vx300s"))
def compiled(request):
    """(arm key, exported robot, MuJoCo model of its MJCF)."""
    robot = _robot(request.param)
    return request.param, robot, mujoco.MjModel.from_xml_string(files.mjcf_text(robot))


def test_one_motor_per_axis_with_the_servos_gear_and_limits(compiled):
    key, robot, model = compiled
    layout = raw_log.layout(key)
    joints = robot.axis_joints
    assert model.nu == len(joints) == layout.n_axes
    for index, joint in enumerate(joints):
        assert model.actuator(index).name == f"{joint.name}_motor"
        # the motor drives its own axis's joint
        assert model.joint(model.actuator_trnid[index, 0]).name == joint.name
    limit = layout.clamp_torque / layout.kt  # A: one servo's current limit
    np.testing.assert_allclose(model.actuator_gear[:, 0], layout.kt, rtol=1e-15)
    np.testing.assert_allclose(model.actuator_ctrlrange, np.c_[-limit, limit], rtol=1e-12)
    np.testing.assert_allclose(model.actuator_forcerange, np.c_[-limit, limit], rtol=1e-12)
    assert model.actuator_ctrllimited.all() and model.actuator_forcelimited.all()
    torque = layout.clamp_torque
    dofs = [model.joint(j.name).id for j in joints]
    np.testing.assert_allclose(model.jnt_actfrcrange[dofs], np.c_[-torque, torque], rtol=1e-12)
    assert model.jnt_actfrclimited[dofs].all()


def test_the_timing_is_custom_numeric_data(compiled):
    key, _, model = compiled
    assert model.numeric("control_period_s").data.tolist() == [CONTROL_PERIOD_S]
    np.testing.assert_array_equal(model.numeric("dead_time_s").data, _dead_times(key))


def test_a_motors_ctrl_is_gear_times_ctrl_clamped_at_forcerange(compiled):
    _, _, model = compiled
    data = mujoco.MjData(model)
    gear, limit = model.actuator_gear[:, 0], model.actuator_forcerange[:, 1]
    dofs = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    data.ctrl[:] = 0.4 * limit * np.where(np.arange(model.nu) % 2, -1.0, 1.0)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.qfrc_actuator[dofs], gear * data.ctrl, rtol=1e-12)
    # beyond the range, with MuJoCo's own ctrl clamp off: forcerange alone caps the force
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL
    data.ctrl[:] = 3.0 * limit
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.actuator_force, limit, rtol=1e-12)
    np.testing.assert_allclose(data.qfrc_actuator[dofs], gear * limit, rtol=1e-12)


def test_a_position_mode_arm_has_the_servo_loops_position_actuators():
    arm = load_arm("so101")
    assert arm.drive_mode == "position"  # the SO-101 runs in position mode
    robot = _robot("so101", "position")
    model = mujoco.MjModel.from_xml_string(files.mjcf_text(robot))
    gains = arm.position_loop.gains(arm.n_axes)
    kt = raw_log.layout("so101").kt
    stall = np.array([twin_truth.STALL_CURRENT_A[a.model] for a in arm.actuators])
    no_load = np.array([twin_truth.NO_LOAD_SPEED_RPM[a.model] for a in arm.actuators])
    kp = kt * stall * gains[position_loop.G_KP]
    kv = kt * stall * (gains[position_loop.G_KD] + 60.0 / (2.0 * np.pi * no_load))
    assert model.nu == arm.n_axes
    assert (model.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE).all()
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], kp, rtol=1e-12)
    np.testing.assert_allclose(model.actuator_biasprm[:, 1:3], -np.c_[kp, kv], rtol=1e-12)
    limit = kt * stall * gains[position_loop.G_DUTY_LIMIT]
    np.testing.assert_allclose(model.actuator_forcerange, np.c_[-limit, limit], rtol=1e-12)
    np.testing.assert_allclose(model.actuator_ctrlrange, arm.joint_limits(), rtol=1e-12)
    assert model.numeric("servo_period_s").data.tolist() == [arm.position_loop.period]
    # force = kp (ctrl - q) - kv qdot, clamped at forcerange
    data = mujoco.MjData(model)
    data.ctrl[:] = 0.01
    data.qvel[:] = 0.1
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.actuator_force, 0.01 * kp - 0.1 * kv, rtol=1e-12)
    data.ctrl[:] = arm.joint_limits()[:, 1]
    data.qvel[:] = 0.0
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.actuator_force, limit, rtol=1e-12)


def test_the_urdf_does_not_change_with_the_drive():
    robot = _robot("so101")
    assert files.urdf_text(robot) == files.urdf_text(dataclasses.replace(robot, drive=None))
    bare = files.mjcf_text(dataclasses.replace(robot, drive=None))
    assert "<actuator" not in bare and "actuatorfrcrange" not in bare and "<custom" not in bare


def test_a_position_mode_servo_without_a_motor_line_is_refused_by_name():
    arm = load_arm("so101")
    catalogued = tuple(dataclasses.replace(a, model="XL330-M288") for a in arm.actuators)
    robot = files.exported_robot(
        twin_truth.truth_parameters("so101"), dataclasses.replace(arm, actuators=catalogued)
    )
    assert robot.drive.mode == "position" and np.all(robot.drive.kp > 0)  # the catalogue's line
    unknown = tuple(dataclasses.replace(a, model="STS3215-C001") for a in arm.actuators)
    with pytest.raises(InputError, match="shoulder_pan: servo 'STS3215-C001' has no known stall"):
        files.exported_robot(
            twin_truth.truth_parameters("so101"), dataclasses.replace(arm, actuators=unknown)
        )
