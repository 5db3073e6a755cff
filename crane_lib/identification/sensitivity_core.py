"""Numba core of CLIE's closed-loop simulation with its forward sensitivities to beta.

A template like `clie_core.py`: `sensitivity._core()` copies it into the code cache with the
marked line replaced by an import of the generated kernels of the problem's set and arm. Do not
import it directly. The state is integrated by exactly the operations of `clie_core.simulate`
(same controller call, same Heun steps, same refinement of a cycle), so its trajectory is that
simulation's bit for bit (`tests/test_sensitivity.py`); beside it the sensitivities

    S_q = dq/dbeta, S_v = dq̇/dbeta (N_AX, p), and the controller's S_integral, S_previous,

follow the same discrete steps (the derivative of the discrete map actually run):

    plant:      M S_a = S_tau - W(q, q̇, q̈) - d(W beta)/dq S_q - d(W beta)/dq̇ S_v
    Heun:       S_q' = S_q + h/2 (S_v + S_v + h S_a1),  S_v' = S_v + h/2 (S_a1 + S_a2)
    controller: S_tau = Kt_rec/Kt_cmd M̂ (-K_V (S_q - S_prev)/dt - K_P S_q + K_I (S_I - dt S_q)),
                zero where the command is clamped; S_I takes -dt S_q where (2) integrates.

d(W beta)/dq and d(W beta)/dq̇ at fixed q̈ come from the generated regressor kernel evaluated on
complex inputs (complex-step differentiation: cos and sin of q_j + i h, h = 1e-30): the kernels
use only +, -, * and ** on their inputs, so the imaginary part is h times the derivative with no
cancellation, exact to rounding. The real part of the same evaluation is W(q, q̇, q̈).
"""

import math
import sys

import numba
import numpy as np

from crane_lib.model.controller import OUT_CLAMPED, OUT_GOAL_UNITS, OUT_ROWS, realization_law
from crane_lib.model.spd_solve import solve_spd

# replaced by the import of the generated kernels (model.dynamics.bind_template)
regressor_kernel = inertia_kernel = inertia_upper_kernel = net_torque_kernel = None  # @@KERNELS@@

_KERNELS = sys.modules[regressor_kernel.__module__]
N_ARM = len(_KERNELS.THETA_OFFSETS)
N_AX = _KERNELS.OUT_SIZE

SIM_OK, SIM_NOT_FINITE, SIM_SPEED, SIM_NOT_PD = 0, 1, 2, 3  # as clie_core
COMPLEX_STEP = 1e-30


@numba.njit(cache=True, nogil=True, error_model="numpy")
def acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, out):
    """clie_core.acceleration, the same operations: q̈ into `out`; False if M is not PD. Leaves
    the arm block's Cholesky factor in ws_l and M in ws_m for the sensitivity solve."""
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
    for h in range(N_ARM, N_AX):
        hand = ws_m[h, h]
        if not hand > 0.0:
            return False
        out[h] = rhs[h] / hand
    return solve_spd(ws_m, rhs, free, N_ARM, ws_l, out, ws_i, y)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def acceleration_sensitivity(q, v, a, s_q, s_v, s_tau, beta, offsets, gz, ws_m, ws_l, cx, out):
    """S_a = M^-1 (S_tau - W(q, q̇, q̈) - d(W beta)/dq S_q - d(W beta)/dq̇ S_v) into out (N_AX, p).

    ws_m, ws_l: M and the Cholesky factor of its arm block at (q, beta), left there by
    `acceleration` at the same q. cx: scratch, and q_used (which joint angles the kernel reads)."""
    c_x, s_x, v_x, a_x, zeros_x, w_x, d_q, d_v, c, s, v_r, zeros, w, w_minus, q_used = cx
    p = beta.shape[0]
    for j in range(N_ARM):
        angle = q[j] + offsets[j]
        c[j] = math.cos(angle)
        s[j] = math.sin(angle)
        c_x[j] = c[j]
        s_x[j] = s[j]
    for j in range(N_AX):
        v_r[j] = v[j]
        v_x[j] = v[j]
        a_x[j] = a[j]
    # d(W beta)/dq_j by the complex step: cos(x + ih) = cos x - ih sin x, sin(x + ih) = ...
    for j in range(N_ARM):
        if not q_used[j]:  # the kernel does not read this angle (the CRANE-X7's first joint)
            for r in range(N_AX):
                d_q[r, j] = 0.0
            continue
        c_x[j] = complex(c[j], -COMPLEX_STEP * s[j])
        s_x[j] = complex(s[j], COMPLEX_STEP * c[j])
        regressor_kernel(c_x, s_x, v_x, a_x, zeros_x, gz, w_x)
        for r in range(N_AX):
            total = 0.0
            for k in range(p):
                total += w_x[r, k].imag * beta[k]
            d_q[r, j] = total / COMPLEX_STEP
        c_x[j] = c[j]
        s_x[j] = s[j]
    # d(W beta)/dq̇_j: W beta is a quadratic polynomial in q̇ (Coriolis and centrifugal terms,
    # viscous friction; no Coulomb term in CLIE's plant), so the central difference of step 1
    # rad/s is its derivative exactly, to rounding, in two real evaluations
    for j in range(N_AX):
        v_r[j] = v[j] + 1.0
        regressor_kernel(c, s, v_r, a, zeros, gz, w)
        v_r[j] = v[j] - 1.0
        regressor_kernel(c, s, v_r, a, zeros, gz, w_minus)
        v_r[j] = v[j]
        for r in range(N_AX):
            total = 0.0
            for k in range(p):
                total += (w[r, k] - w_minus[r, k]) * beta[k]
            d_v[r, j] = 0.5 * total
    regressor_kernel(c, s, v, a, zeros, gz, w)  # W(q, q̇, q̈)
    for r in range(N_AX):
        for k in range(p):
            total = s_tau[r, k] - w[r, k]
            for j in range(N_ARM):
                total -= d_q[r, j] * s_q[j, k]
            for j in range(N_AX):
                total -= d_v[r, j] * s_v[j, k]
            out[r, k] = total
    for h in range(N_ARM, N_AX):  # decoupled gripper axes
        for k in range(p):
            out[h, k] /= ws_m[h, h]
    for k in range(p):  # arm block: forward and back substitution with the factor in ws_l
        for r in range(N_ARM):
            total = out[r, k]
            for m in range(r):
                total -= ws_l[r, m] * out[m, k]
            out[r, k] = total / ws_l[r, r]
        for r in range(N_ARM - 1, -1, -1):
            total = out[r, k]
            for m in range(r + 1, N_ARM):
                total -= ws_l[m, r] * out[m, k]
            out[r, k] = total / ws_l[r, r]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def heun_cycle(
    q, v, s_q, s_v, a_start, s_a_start, tau, s_tau, span, steps, beta, offsets, gz, ws, cx, sw
):
    """clie_core.heun_cycle with the sensitivities: `steps` Heun steps over `span`, in place.
    Returns the error estimate h/2 max|a2 - a1| (rad/s); -1.0 if M is not PD on the way."""
    ws_w, ws_m, ws_l, ws_v, ws_i, a1, a2, q_pred, v_pred = ws
    s_a1, s_a2, s_qp, s_vp = sw
    h = span / steps
    largest = 0.0
    for step in range(steps):
        if step == 0:
            for j in range(N_AX):
                a1[j] = a_start[j]
                for k in range(beta.shape[0]):
                    s_a1[j, k] = s_a_start[j, k]
        else:
            if not acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a1):
                return -1.0
            acceleration_sensitivity(
                q, v, a1, s_q, s_v, s_tau, beta, offsets, gz, ws_m, ws_l, cx, s_a1
            )
        for j in range(N_AX):
            q_pred[j] = q[j] + h * v[j]
            v_pred[j] = v[j] + h * a1[j]
        for j in range(N_AX):
            for k in range(beta.shape[0]):
                s_qp[j, k] = s_q[j, k] + h * s_v[j, k]
                s_vp[j, k] = s_v[j, k] + h * s_a1[j, k]
        if not acceleration(
            q_pred, v_pred, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a2
        ):
            return -1.0
        acceleration_sensitivity(
            q_pred, v_pred, a2, s_qp, s_vp, s_tau, beta, offsets, gz, ws_m, ws_l, cx, s_a2
        )
        for j in range(N_AX):
            q[j] += 0.5 * h * (v[j] + v_pred[j])
            v[j] += 0.5 * h * (a1[j] + a2[j])
            largest = max(largest, 0.5 * h * abs(a2[j] - a1[j]))
        for j in range(N_AX):
            for k in range(beta.shape[0]):
                s_q[j, k] += 0.5 * h * (s_v[j, k] + s_vp[j, k])
                s_v[j, k] += 0.5 * h * (s_a1[j, k] + s_a2[j, k])
    return largest


@numba.njit(cache=True, nogil=True, error_model="numpy")
def copy_state(q, v, s_q, s_v, q_to, v_to, s_q_to, s_v_to):
    """Copy the state and its sensitivities element by element (a slice assignment from an array
    would compile numba's shape-mismatch message, about 5 s of this module's compile)."""
    for j in range(N_AX):
        q_to[j] = q[j]
        v_to[j] = v[j]
        for k in range(s_q.shape[1]):
            s_q_to[j, k] = s_q[j, k]
            s_v_to[j, k] = s_v[j, k]


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
    q_used,
    tau_out,
    s_tau_out,
):
    """clie_core.simulate (same arguments, same trajectory) writing the simulated controller
    torque tau_out (n, N_AX) and its derivative s_tau_out (n, N_AX, p) = d tau_out / d beta.
    q_used (N_ARM,) bool: the joint angles the regressor kernel reads (the others: no derivative).
    The register rounding of the command (1 pA in CLIE's simulation) is taken as the identity
    and the clamp as a zero derivative. Returns (code, cycles completed, cycles refined)."""
    n = t.shape[0]
    p = beta.shape[0]
    ws_w = np.zeros((N_AX, p))
    ws_m = np.zeros((N_AX, N_AX))
    ws_l = np.zeros((N_AX, N_AX))
    ws_v = np.zeros((6, N_AX))
    ws_v[5, :] = 1.0
    ws_i = np.zeros(N_AX, dtype=np.int64)
    a1 = np.zeros(N_AX)
    a2 = np.zeros(N_AX)
    q_pred = np.zeros(N_AX)
    v_pred = np.zeros(N_AX)
    ws = (ws_w, ws_m, ws_l, ws_v, ws_i, a1, a2, q_pred, v_pred)
    cx = (
        np.zeros(N_ARM, dtype=np.complex128),
        np.zeros(N_ARM, dtype=np.complex128),
        np.zeros(N_AX, dtype=np.complex128),
        np.zeros(N_AX, dtype=np.complex128),
        np.zeros(N_AX, dtype=np.complex128),
        np.zeros((N_AX, p), dtype=np.complex128),
        np.zeros((N_AX, N_ARM)),
        np.zeros((N_AX, N_AX)),
        np.zeros(N_ARM),
        np.zeros(N_ARM),
        np.zeros(N_AX),
        np.zeros(N_AX),
        np.zeros((N_AX, p)),
        np.zeros((N_AX, p)),
        q_used,
    )
    sw = (np.zeros((N_AX, p)), np.zeros((N_AX, p)), np.zeros((N_AX, p)), np.zeros((N_AX, p)))
    law = np.zeros((OUT_ROWS, N_AX))
    q = theta_start.copy()
    v = np.zeros(N_AX)
    q_cycle = np.zeros(N_AX)
    v_cycle = np.zeros(N_AX)
    theta_previous = theta_start.copy()
    integral = integral_start.copy()
    tau = np.zeros(N_AX)
    a_start = np.zeros(N_AX)
    s_q = np.zeros((N_AX, p))
    s_v = np.zeros((N_AX, p))
    s_q_cycle = np.zeros((N_AX, p))
    s_v_cycle = np.zeros((N_AX, p))
    s_previous = np.zeros((N_AX, p))
    s_integral = np.zeros((N_AX, p))
    s_tau = np.zeros((N_AX, p))
    s_a_start = np.zeros((N_AX, p))
    error_before = np.zeros(N_AX)
    refined = 0
    for k in range(n):
        dt_read = t[k] - t[k - 1] if k > 0 else (t[1] - t[0] if n > 1 else 1e-3)
        for j in range(N_AX):
            error_before[j] = theta_ref[k, j] - q[j]
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
            gain = kt_record[j] / kt_command[j] * m_hat[j]
            clamped = law[OUT_CLAMPED, j] == 1.0
            # realization_law integrates unless clamped in the direction of the error
            integrates = not (clamped and error_before[j] * law[OUT_GOAL_UNITS, j] > 0.0)
            for c in range(p):
                if clamped:
                    s_tau[j, c] = 0.0
                else:
                    s_tau[j, c] = gain * (
                        -k_v * (s_q[j, c] - s_previous[j, c]) / dt_read
                        - k_p * s_q[j, c]
                        + k_i * (s_integral[j, c] - dt_read * s_q[j, c])
                    )
                if integrates:
                    s_integral[j, c] -= dt_read * s_q[j, c]
                s_previous[j, c] = s_q[j, c]
                s_tau_out[k, j, c] = s_tau[j, c]
            theta_previous[j] = q[j]
            tau[j] = law[OUT_GOAL_UNITS, j] * current_unit * kt_record[j]
            tau_out[k, j] = tau[j]
        if not acceleration(q, v, tau, beta, offsets, gz, ws_w, ws_m, ws_l, ws_v, ws_i, a_start):
            return SIM_NOT_PD, k, refined
        acceleration_sensitivity(
            q, v, a_start, s_q, s_v, s_tau, beta, offsets, gz, ws_m, ws_l, cx, s_a_start
        )
        span = t[k + 1] - t[k] if k + 1 < n else 0.0
        if span > 0.0:
            steps = max(1, int(math.ceil(span / max_step - 1e-9)))
            fine_steps = max(1, int(math.ceil(span / fine_step - 1e-9)))
            copy_state(q, v, s_q, s_v, q_cycle, v_cycle, s_q_cycle, s_v_cycle)
            error = heun_cycle(
                q,
                v,
                s_q,
                s_v,
                a_start,
                s_a_start,
                tau,
                s_tau,
                span,
                steps,
                beta,
                offsets,
                gz,
                ws,
                cx,
                sw,
            )
            if steps < fine_steps and not (0.0 <= error <= error_tolerance):
                copy_state(q_cycle, v_cycle, s_q_cycle, s_v_cycle, q, v, s_q, s_v)
                refined += 1
                error = heun_cycle(
                    q,
                    v,
                    s_q,
                    s_v,
                    a_start,
                    s_a_start,
                    tau,
                    s_tau,
                    span,
                    fine_steps,
                    beta,
                    offsets,
                    gz,
                    ws,
                    cx,
                    sw,
                )
            if error < 0.0:
                return SIM_NOT_PD, k, refined
        for j in range(N_AX):
            if not (math.isfinite(q[j]) and math.isfinite(v[j])):
                return SIM_NOT_FINITE, k, refined
            if abs(v[j]) > speed_limit:
                return SIM_SPEED, k, refined
    return SIM_OK, n, refined
