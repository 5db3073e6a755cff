"""The exported files in the tools users load them into, set against the project's own model.

Pinocchio reads the URDF (its URDF parser; armature from the transmissions, which its parser does
not read, and standard gravity set by hand), MuJoCo compiles the MJCF; both evaluate the joint-space
inertia matrix M(theta) and the inverse dynamics (rigid body + rotor inertia + viscous friction)
at random states, and the largest relative difference from `DynamicModel` on the base parameters
is reported per quantity: max over states of max|tool - project| / max|project|.

MuJoCo's checks and its simulation run with the constraint solver's joint-limit and dry-friction
rows switched off: they are constraint forces that the project's model does not have (the random
states lie outside the limits, and an open-loop replay of recorded torques drifts into them).

Pinocchio and MuJoCo are imported inside the functions: the book and the tests use them, the
pipeline does not need them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from crane_lib.constants import GRAVITY, N_AXES
from crane_lib.export.files import read_urdf_joint_dynamics
from crane_lib.model.dynamics import DynamicModel

TOLERANCE = 1e-9  # relative; both tools work in double precision, and so does the project's model


@dataclass(frozen=True)
class ToolCheck:
    """One tool's reading of an exported file against the project's model (relative errors)."""

    tool: str
    version: str
    file: str
    states: int
    inertia_error: float  # relative, M(theta)
    torque_error: float  # relative, inverse dynamics

    @property
    def passed(self) -> bool:
        """Whether both errors are within the tolerance."""
        return self.inertia_error <= TOLERANCE and self.torque_error <= TOLERANCE


def random_states(
    n: int, seed: int, n_axes: int = N_AXES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, dq, ddq), each (n, n_axes): angles uniform on [-pi, pi), rates, accelerations N(0, 1)."""
    rng = np.random.default_rng(seed)
    size = (n, n_axes)
    return rng.uniform(-np.pi, np.pi, size), rng.normal(size=size), rng.normal(size=size)


def _relative(tool: np.ndarray, own: np.ndarray) -> float:
    return float(max(np.abs(t - o).max() / np.abs(o).max() for t, o in zip(tool, own)))


def pinocchio_model(urdf):
    """Pinocchio's model of the URDF with the rotor inertias of its transmissions and standard
    gravity."""
    import pinocchio

    model = pinocchio.buildModelFromUrdf(str(urdf))
    dynamics = read_urdf_joint_dynamics(urdf)
    model.armature[:] = [dynamics[name]["armature"] for name in model.names[1:]]
    model.gravity.linear[:] = [0.0, 0.0, -GRAVITY]
    return model, np.array([dynamics[name]["damping"] for name in model.names[1:]])


def pinocchio_check(urdf, model: DynamicModel, beta, n: int = 100, seed: int = 1) -> ToolCheck:
    """M(q) and inverse dynamics of the URDF in Pinocchio against the model on random states."""
    import pinocchio

    robot, damping = pinocchio_model(urdf)
    data = robot.createData()
    q, dq, ddq = random_states(n, seed, model.n_axes)
    inertia, torque = [], []
    for qi, dqi, ddqi in zip(q, dq, ddq):
        m = pinocchio.crba(robot, data, qi)  # with armature; upper triangle
        inertia.append(np.triu(m) + np.triu(m, 1).T)
        torque.append(
            pinocchio.rnea(robot, data, qi, dqi, ddqi) + damping * dqi
        )  # rnea: rigid body + armature
    return ToolCheck(
        "Pinocchio",
        pinocchio.__version__,
        str(urdf),
        n,
        _relative(inertia, model.inertia_matrix(q, beta)),
        _relative(torque, model.inverse_dynamics(q, dq, ddq, beta)),
    )


def mujoco_model(mjcf, constraints: bool = True):
    """MuJoCo's model of the MJCF; constraints=False switches off the joint-limit and dry-friction
    rows."""
    import mujoco

    robot = mujoco.MjModel.from_xml_path(str(mjcf))
    if not constraints:
        robot.opt.disableflags |= (
            mujoco.mjtDisableBit.mjDSBL_LIMIT | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS
        )
    return robot


def mujoco_check(mjcf, model: DynamicModel, beta, n: int = 100, seed: int = 1) -> ToolCheck:
    """M(q) and inverse dynamics of the MJCF in MuJoCo against the model on random states."""
    import mujoco

    robot = mujoco_model(mjcf, constraints=False)
    data = mujoco.MjData(robot)
    q, dq, ddq = random_states(n, seed, model.n_axes)
    inertia, torque = [], []
    for qi, dqi, ddqi in zip(q, dq, ddq):
        data.qpos[:], data.qvel[:], data.qacc[:] = qi, dqi, ddqi
        mujoco.mj_inverse(
            robot, data
        )  # M qacc + bias - passive (damping): rigid body + armature + viscous
        full = np.zeros((robot.nv, robot.nv))
        mujoco.mj_fullM(robot, data, full)
        inertia.append(full)
        torque.append(data.qfrc_inverse.copy())
    return ToolCheck(
        "MuJoCo",
        mujoco.__version__,
        str(mjcf),
        n,
        _relative(inertia, model.inertia_matrix(q, beta)),
        _relative(torque, model.inverse_dynamics(q, dq, ddq, beta)),
    )


# ----------------------------------------------------------------------------- forward simulation


@dataclass
class Simulation:
    t: np.ndarray  # (k,) s
    mujoco: np.ndarray  # (k, 8) rad
    own: np.ndarray  # (k, 8) rad

    @property
    def max_difference(self) -> float:
        """Largest angle difference between the two simulations, rad."""
        return float(np.abs(self.mujoco - self.own).max())


def simulate(mjcf, model: DynamicModel, beta, q0, torque, dt: float = 1e-3) -> Simulation:
    """Both models from rest at q0 under the same torque (one row per step, held over the step),
    integrated by the classical Runge-Kutta method with step dt: MuJoCo's RK4 integrator on the MJCF
    (joint limits and dry friction off, as in the project's model), and the same scheme on
    `DynamicModel.direct_dynamics` of the base parameters."""
    import mujoco

    torque = np.asarray(torque, dtype=float)
    robot = mujoco_model(mjcf, constraints=False)
    robot.opt.timestep = dt
    robot.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(robot)
    data.qpos[:] = q0
    data.qvel[:] = 0.0
    steps = len(torque)
    ours = np.empty((steps + 1, model.n_axes))
    theirs = np.empty((steps + 1, model.n_axes))
    q, dq = np.asarray(q0, dtype=float).copy(), np.zeros(model.n_axes)
    ours[0] = theirs[0] = q

    def rate(q, dq, tau):
        return dq, model.direct_dynamics(q, dq, tau, beta)[0]

    # one sample per call: a parallel launch over the cores costs more than the work (and far more
    # on a busy machine), so the generated kernels run on one thread here
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for k, tau in enumerate(torque):
            data.qfrc_applied[:] = tau
            mujoco.mj_step(robot, data)
            theirs[k + 1] = data.qpos
            k1 = rate(q, dq, tau)
            k2 = rate(q + 0.5 * dt * k1[0], dq + 0.5 * dt * k1[1], tau)
            k3 = rate(q + 0.5 * dt * k2[0], dq + 0.5 * dt * k2[1], tau)
            k4 = rate(q + dt * k3[0], dq + dt * k3[1], tau)
            q = q + dt / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            dq = dq + dt / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            ours[k + 1] = q
    finally:
        numba.set_num_threads(threads)
    return Simulation(np.arange(steps + 1) * dt, theirs, ours)
