"""Numba core of the CLIE closed-loop simulator (paper Sec. IV-C, Fig. 4, Appendix D-F).

This file is a template: `clie._core()` copies it into the code cache with the marked line
replaced by an import of the generated kernels of the problem's base-parameter set and arm
(the CRANE-X7: the "reduced" 39-parameter set; the module name carries a hash), so numba caches
the compiled loop per kernel version, as the twin does with `twin/core.py`. Do not import it
directly. SI units; arrays index the axes 0..N_AX-1: the N_ARM arm joints, then the decoupled
gripper axes (the CRANE-X7: seven joints, the hand is index 7). Both sizes come from the bound
kernels (OUT_SIZE axes, one joint offset per arm joint), so one template serves every arm.

Model (per integration step): M(q; beta) q̈ = tau - W(q, q̇, 0) beta, with
W(q, q̇, q̈) beta = M q̈ + C q̇ + g + FV q̇ the inverse dynamic model of the base parameters.
The controller is `controller.realization_law`, called once per logged stamp; for a record
of an arm in position mode (`simulate_position`) the servos' `position_loop.position_loop_law`.
"""

import math
import sys

import numba
import numpy as np

from crane_lib.model.controller import OUT_GOAL_UNITS, OUT_ROWS, realization_law
from crane_lib.model.position_loop import O_DUTY, duty_torque, position_loop_law
from crane_lib.model.position_loop import O_ROWS as LOOP_OUT_ROWS
from crane_lib.model.spd_solve import solve_spd

# replaced by the import of the generated kernels (model.dynamics.bind_template)
regressor_kernel = inertia_kernel = inertia_upper_kernel = net_torque_kernel = None  # @@KERNELS@@

# sizes of the arm the kernels were generated for: numba freezes them into the compiled loops
_KERNELS = sys.modules[regressor_kernel.__module__]
N_ARM = len(_KERNELS.THETA_OFFSETS)  # arm joints (one joint offset per link)
N_AX = _KERNELS.OUT_SIZE  # arm joints plus the decoupled gripper axes

# exit codes of simulate(): OK, or why the simulation was declared diverged
SIM_OK, SIM_NOT_FINITE, SIM_SPEED, SIM_NOT_PD = 0, 1, 2, 3


@numba.njit(cache=True, nogil=True, error_model="numpy")
def acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, out):
    """Direct dynamics q̈ = M^-1 (tau - W(q, q̇, 0) beta) into `out`; False if M is not PD.

    ws_w (N_AX, p), ws_m (N_AX, N_AX), ws_l (N_AX, N_AX), ws_v (6, N_AX), ws_i (N_AX,) int:
    scratch (no allocation per step), zeroed by the caller once: the generated kernels write the
    same entries at every call (those not identically zero), so the others stay zero. Each
    gripper axis is decoupled from the arm (M[h, :N_ARM] = 0): the arm block goes through the
    shared Cholesky solve, a gripper axis is a scalar division."""
    c = ws_v[0, :N_ARM]
    s = ws_v[1, :N_ARM]
    zeros = ws_v[2]
    rhs = ws_v[3]
    y = ws_v[4]
    free = ws_v[5]
    for j in range(N_ARM):
        angle = q[j] + offsets[j]
        c[j] = math.cos(angle)
        s[j] = math.sin(angle)
    regressor_kernel(c, s, v, zeros, zeros, gz, ws_w)
    net_torque_kernel(tau, ws_w, beta, rhs)
    inertia_upper_kernel(c, s, beta, ws_m)  # the solve reads the upper triangle
    for h in range(N_ARM, N_AX):  # the gripper axes (the CRANE-X7: the hand, index 7)
        hand = ws_m[h, h]
        if not hand > 0.0:
            return False
        out[h] = rhs[h] / hand
    return solve_spd(ws_m, rhs, free, N_ARM, ws_l, out, ws_i, y)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def block_mean_regressor(indptr, indices, weights, C, S, V, A, SGN, gz, rows, cols, w, out):
    """out[i, m] = sum_j B_ij W(q_j, q̇_j, q̈_j)[rows[m], cols[m]]: block means (B in CSR form:
    indptr, indices, weights) of the regressor's entries along a trajectory, without holding W
    of every stamp. Each sum starts from 0 and runs in B's stored order, as scipy's CSR product
    does, so out is B @ W bit for bit. C, S (n, N_ARM): cosines and sines of the angles;
    V, A, SGN (n, N_AX); w (N_AX, p): scratch, zeroed by the caller."""
    for i in range(out.shape[0]):
        for m in range(out.shape[1]):
            out[i, m] = 0.0
        for entry in range(indptr[i], indptr[i + 1]):
            j = indices[entry]
            regressor_kernel(C[j], S[j], V[j], A[j], SGN[j], gz, w)
            weight = weights[entry]
            for m in range(out.shape[1]):
                out[i, m] += weight * w[rows[m], cols[m]]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def heun_cycle(
    q,
    v,
    a_start,
    tau,
    span,
    steps,
    beta,
    offsets,
    gz,
    ws_w,
    ws_m,
    ws_l,
    ws_v,
    ws_i,
    a1,
    a2,
    q_pred,
    v_pred,
):
    """Integrate the plant over one control cycle of length `span` under the held torque in
    `steps` equal Heun steps, in place (a_start: the acceleration at the cycle's start).
    Returns the largest velocity correction of the trapezoidal corrector over the Euler
    predictor, h/2 |a2 - a1| (rad/s), the embedded error estimate of the step; -1.0 if M is
    not positive definite on the way."""
    h = span / steps
    largest = 0.0
    for step in range(steps):
        if step == 0:
            for j in range(N_AX):
                a1[j] = a_start[j]
        elif not acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a1):
            return -1.0
        for j in range(N_AX):
            q_pred[j] = q[j] + h * v[j]
            v_pred[j] = v[j] + h * a1[j]
        if not acceleration(
            q_pred, v_pred, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a2
        ):
            return -1.0
        for j in range(N_AX):
            q[j] += 0.5 * h * (v[j] + v_pred[j])
            v[j] += 0.5 * h * (a1[j] + a2[j])
            largest = max(largest, 0.5 * h * abs(a2[j] - a1[j]))
    return largest


@numba.njit(cache=True, nogil=True, error_model="numpy")
def simulate(
    t,
    theta_ref,
    dtheta_ref,
    ddtheta_ref,
    theta_start,
    integral_start,
    beta,
    offsets,
    gz,
    kt_record,
    max_step,
    fine_step,
    error_tolerance,
    speed_limit,
    m_hat,
    d_hat,
    k_p,
    k_v,
    k_i,
    kt_command,
    current_unit,
    limit_units,
    tau_out,
    q_out,
    v_out,
    a_out,
):
    """Closed loop of the record on its own stamps `t` (n,), from rest at theta_start.

    Cycle k: the controller reads the simulated angle at t[k] (no encoder quantization, no
    dead time), computes its command with realization_law, and the command, converted to the
    record's torque units by kt_record (the identified model's units), is held until t[k+1].
    The plant is integrated over [t[k], t[k+1]] by the explicit trapezoidal rule (Heun:
    Euler predictor, trapezoidal corrector) in equal steps of at most max_step; a cycle whose
    embedded error estimate (heun_cycle) exceeds error_tolerance is integrated again from its
    start in steps of at most fine_step (max_step == fine_step: every cycle at that step).

    Writes per cycle k: tau_out[k] the simulated controller torque (record units, N·m) and
    the state the plant had when that torque started: q_out, v_out, a_out (the acceleration
    the torque produced there, so W(q_out, v_out, a_out) beta == tau_out to rounding).
    Returns (code, cycles completed, cycles integrated again at fine_step): code SIM_OK, or
    why it stopped (diverged).
    """
    n = t.shape[0]
    ws_w = np.zeros((N_AX, beta.shape[0]))
    ws_m = np.zeros((N_AX, N_AX))
    ws_l = np.zeros((N_AX, N_AX))
    ws_v = np.zeros((6, N_AX))
    ws_v[5, :] = 1.0  # every arm axis free
    ws_i = np.zeros(N_AX, dtype=np.int64)
    law = np.zeros((OUT_ROWS, N_AX))
    q = theta_start.copy()
    v = np.zeros(N_AX)
    q_cycle = np.zeros(N_AX)
    v_cycle = np.zeros(N_AX)
    theta_previous = theta_start.copy()
    integral = integral_start.copy()
    tau = np.zeros(N_AX)
    a_start = np.zeros(N_AX)
    a1 = np.zeros(N_AX)
    a2 = np.zeros(N_AX)
    q_pred = np.zeros(N_AX)
    v_pred = np.zeros(N_AX)
    refined = 0
    for k in range(n):
        dt_read = t[k] - t[k - 1] if k > 0 else (t[1] - t[0] if n > 1 else 1e-3)
        realization_law(
            theta_ref[k],
            dtheta_ref[k],
            ddtheta_ref[k],
            q,
            theta_previous,
            dt_read,
            integral,
            m_hat,
            d_hat,
            k_p,
            k_v,
            k_i,
            kt_command,
            current_unit,
            limit_units,
            law,
        )
        for j in range(N_AX):
            theta_previous[j] = q[j]
            tau[j] = law[OUT_GOAL_UNITS, j] * current_unit * kt_record[j]
            tau_out[k, j] = tau[j]
            q_out[k, j] = q[j]
            v_out[k, j] = v[j]
        if not acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a_start):
            return SIM_NOT_PD, k, refined
        for j in range(N_AX):
            a_out[k, j] = a_start[j]
        span = t[k + 1] - t[k] if k + 1 < n else 0.0
        if span > 0.0:
            steps = max(1, int(math.ceil(span / max_step - 1e-9)))
            fine_steps = max(1, int(math.ceil(span / fine_step - 1e-9)))
            for j in range(N_AX):
                q_cycle[j] = q[j]
                v_cycle[j] = v[j]
            error = heun_cycle(
                q,
                v,
                a_start,
                tau,
                span,
                steps,
                beta,
                offsets,
                gz,
                ws_w,
                ws_m,
                ws_l,
                ws_v,
                ws_i,
                a1,
                a2,
                q_pred,
                v_pred,
            )
            if steps < fine_steps and not (0.0 <= error <= error_tolerance):
                for j in range(N_AX):
                    q[j] = q_cycle[j]
                    v[j] = v_cycle[j]
                refined += 1
                error = heun_cycle(
                    q,
                    v,
                    a_start,
                    tau,
                    span,
                    fine_steps,
                    beta,
                    offsets,
                    gz,
                    ws_w,
                    ws_m,
                    ws_l,
                    ws_v,
                    ws_i,
                    a1,
                    a2,
                    q_pred,
                    v_pred,
                )
            if error < 0.0:
                return SIM_NOT_PD, k, refined
        for j in range(N_AX):
            if not (math.isfinite(q[j]) and math.isfinite(v[j])):
                return SIM_NOT_FINITE, k, refined
            if abs(v[j]) > speed_limit:
                return SIM_SPEED, k, refined
    return SIM_OK, n, refined


# ---------------------------------------------------------------- position mode (the servos' loop)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _duty_torques(duty, v, kt, stall_current, no_load_speed, tau):
    """tau = the joint torques of the held duties at the velocities v (`duty_torque`)."""
    for j in range(N_AX):
        tau[j] = duty_torque(duty[j], v[j], kt[j], stall_current[j], no_load_speed[j])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def heun_cycle_duty(
    q,
    v,
    a_start,
    duty,
    kt,
    stall_current,
    no_load_speed,
    tau,
    span,
    steps,
    beta,
    offsets,
    gz,
    ws_w,
    ws_m,
    ws_l,
    ws_v,
    ws_i,
    a1,
    a2,
    q_pred,
    v_pred,
):
    """heun_cycle under held duties: the torque follows the motor's line at every stage's
    velocity (the back-EMF). The same error estimate and codes as heun_cycle."""
    h = span / steps
    largest = 0.0
    for step in range(steps):
        if step == 0:
            for j in range(N_AX):
                a1[j] = a_start[j]
        else:
            _duty_torques(duty, v, kt, stall_current, no_load_speed, tau)
            if not acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a1):
                return -1.0
        for j in range(N_AX):
            q_pred[j] = q[j] + h * v[j]
            v_pred[j] = v[j] + h * a1[j]
        _duty_torques(duty, v_pred, kt, stall_current, no_load_speed, tau)
        if not acceleration(
            q_pred, v_pred, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a2
        ):
            return -1.0
        for j in range(N_AX):
            q[j] += 0.5 * h * (v[j] + v_pred[j])
            v[j] += 0.5 * h * (a1[j] + a2[j])
            largest = max(largest, 0.5 * h * abs(a2[j] - a1[j]))
    return largest


@numba.njit(cache=True, nogil=True, error_model="numpy")
def simulate_position(
    t,
    goal,
    theta_start,
    loop_state_start,
    loop_gains,
    loop_period,
    beta,
    offsets,
    gz,
    kt_record,
    stall_current,
    no_load_speed,
    max_step,
    fine_step,
    error_tolerance,
    speed_limit,
    tau_out,
    q_out,
    v_out,
    a_out,
):
    """`simulate` for a record of an arm in position mode: the closed loop of the servos.

    Cycle k: every servo runs one tick of position_loop_law (period loop_period, its state
    from loop_state_start) on the simulated angle toward goal[k] (the goal the host wrote); the
    duty is held until t[k+1] and the torque (record units: kt_record) follows the motor's line
    at the velocity of every Heun stage. tau_out[k] is the torque at the cycle's start, with the
    state it acted on (q_out, v_out, a_out: W(q, v, a) beta == tau_out). Integration, error
    control and the return value as `simulate`."""
    n = t.shape[0]
    ws_w = np.zeros((N_AX, beta.shape[0]))
    ws_m = np.zeros((N_AX, N_AX))
    ws_l = np.zeros((N_AX, N_AX))
    ws_v = np.zeros((6, N_AX))
    ws_v[5, :] = 1.0  # every arm axis free
    ws_i = np.zeros(N_AX, dtype=np.int64)
    loop_state = loop_state_start.copy()
    loop_out = np.zeros((LOOP_OUT_ROWS, N_AX))
    duty = np.zeros(N_AX)
    q = theta_start.copy()
    v = np.zeros(N_AX)
    q_cycle = np.zeros(N_AX)
    v_cycle = np.zeros(N_AX)
    tau = np.zeros(N_AX)
    a_start = np.zeros(N_AX)
    a1 = np.zeros(N_AX)
    a2 = np.zeros(N_AX)
    q_pred = np.zeros(N_AX)
    v_pred = np.zeros(N_AX)
    refined = 0
    for k in range(n):
        position_loop_law(goal[k], q, loop_period, loop_state, loop_gains, loop_out)
        for j in range(N_AX):
            duty[j] = loop_out[O_DUTY, j]
        _duty_torques(duty, v, kt_record, stall_current, no_load_speed, tau)
        for j in range(N_AX):
            tau_out[k, j] = tau[j]
            q_out[k, j] = q[j]
            v_out[k, j] = v[j]
        if not acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a_start):
            return SIM_NOT_PD, k, refined
        for j in range(N_AX):
            a_out[k, j] = a_start[j]
        span = t[k + 1] - t[k] if k + 1 < n else 0.0
        if span > 0.0:
            steps = max(1, int(math.ceil(span / max_step - 1e-9)))
            fine_steps = max(1, int(math.ceil(span / fine_step - 1e-9)))
            for j in range(N_AX):
                q_cycle[j] = q[j]
                v_cycle[j] = v[j]
            error = heun_cycle_duty(
                q,
                v,
                a_start,
                duty,
                kt_record,
                stall_current,
                no_load_speed,
                tau,
                span,
                steps,
                beta,
                offsets,
                gz,
                ws_w,
                ws_m,
                ws_l,
                ws_v,
                ws_i,
                a1,
                a2,
                q_pred,
                v_pred,
            )
            if steps < fine_steps and not (0.0 <= error <= error_tolerance):
                for j in range(N_AX):
                    q[j] = q_cycle[j]
                    v[j] = v_cycle[j]
                refined += 1
                error = heun_cycle_duty(
                    q,
                    v,
                    a_start,
                    duty,
                    kt_record,
                    stall_current,
                    no_load_speed,
                    tau,
                    span,
                    fine_steps,
                    beta,
                    offsets,
                    gz,
                    ws_w,
                    ws_m,
                    ws_l,
                    ws_v,
                    ws_i,
                    a1,
                    a2,
                    q_pred,
                    v_pred,
                )
            if error < 0.0:
                return SIM_NOT_PD, k, refined
        for j in range(N_AX):
            if not (math.isfinite(q[j]) and math.isfinite(v[j])):
                return SIM_NOT_FINITE, k, refined
            if abs(v[j]) > speed_limit:
                return SIM_SPEED, k, refined
    return SIM_OK, n, refined
