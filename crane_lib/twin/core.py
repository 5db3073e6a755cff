"""Numba core of the digital twin: plant integration, sensor and actuator paths, control loops.

This file is a template: `twin._core()` copies it into the code cache with the marked line
replaced by an import of the generated dynamics kernels of the "full" parameter set (whose
module name carries a hash), so numba can cache the compiled loop per kernel version. Do not
import it directly. Everything is SI; arrays index the axes 0..N_AX-1: the N_ARM arm joints, then
the decoupled gripper axes (the CRANE-X7: seven joints, the hand is index 7). Both sizes come from
the bound kernels (OUT_SIZE axes, one joint offset per arm joint), so one template serves every arm.

Plant (per 0.25 ms step, semi-implicit Euler with the drivetrain spring implicit; see twin.py):
  link side   M_link(q) q̈ = τ_spring - (C(q, q̇) q̇ + g(q))              (arm, N_ARM x N_ARM)
  rotor side  IA_j q̈m_j = Kt_true,j i_j - τ_spring,j - FV_j q̇m_j - (FS_j + FL_j) sgn(q̇m_j)
  τ_spring = k (qm - q) + d (q̇m - q̇)      (drivetrain compliance, resonance near 100 Hz)
             with backlash (switchable, off by default): k (δ - sgn(δ) b) + d (q̇m - q̇) while |δ| >
             b,
             δ = qm - q, b the half gap, and no torque at all inside the gap (rotor and link apart)
  FL_j = λ_j |τ_spring,j|                  (load-dependent gear friction)
         λ_j = 1/η_drive,j - 1   if τ_spring,j q̇m_j > 0 (the motor drives the load)
         λ_j = 1 - η_back,j      otherwise (the load back-drives the motor)
  hand        IA_h q̈_h = Kt_true,h i_h - FV_h q̇_h - FS_h sgn(q̇_h)   (each gripper axis h)
  supply voltage (all axes, switchable): the delivered current i_j is the commanded one clipped to
              [(-V - k_e,j ω_j)/R_j, (V - k_e,j ω_j)/R_j],  ω_j = q̇m_j (q̇_j on the hand / rigid),
              R_j = V/i_stall,j, k_e,j = V/ω_nl,j (link side, datasheet at V = 12 V): driving,
              Kt_true,j i_j stays on the torque-speed line Kt_true,j i_stall,j (1 - ω_j/ω_nl,j).
Quasi-statically the gearbox input torque is τ_spring/η_drive when driving and η_back τ_spring
when back-driven, plus the no-load friction FS, FV. Rotor-side friction is integrated
implicitly (viscous) and as a set-valued impulse (Coulomb and load-dependent: a rotor whose
momentum is below (FS + FL)·h after the step sticks, FL evaluated with the spring torque the
gearbox transmits over that step and the mode of the direction the rotor would move in, so
the stiction band grows with the load), so no smoothing is needed. In the rigid mode (tests
only) the rotor and link move together, Coulomb friction is smoothed by tanh and there is no
load-dependent friction (no transmitted torque is defined apart from the motor's).
"""

import math
import sys

import numba
import numpy as np

from crane_lib.model.controller import (
    OUT_CLAMPED,
    OUT_FEEDBACK,
    OUT_FEEDFORWARD,
    OUT_GOAL_UNITS,
    OUT_ROWS,
    OUT_VELOCITY,
    realization_law,
)
from crane_lib.model.position_loop import (
    O_DUTY,
    O_ROWS,
    O_SATURATED,
    S_POSITION,
    duty_current,
    position_loop_law,
)
from crane_lib.model.spd_solve import solve_spd_linked

# replaced by the import of the generated kernels (model.dynamics.bind_template)
regressor_kernel = inertia_kernel = inertia_upper_kernel = net_torque_kernel = None  # @@KERNELS@@

# sizes of the arm the kernels were generated for: numba freezes them into the compiled loops
_KERNELS = sys.modules[regressor_kernel.__module__]
N_ARM = len(_KERNELS.THETA_OFFSETS)  # arm joints (one joint offset per link)
N_AX = _KERNELS.OUT_SIZE  # arm joints plus the decoupled gripper axes
# state vector x: link angles, link velocities (all axes), rotor angles, rotor velocities (arm
# joints; link units). The CRANE-X7: 0, 8, 16, 23, 30.
XQ, XV, XQM, XVM, X_SIZE = 0, N_AX, 2 * N_AX, 2 * N_AX + N_ARM, 2 * (N_AX + N_ARM)

# integer state si
(
    S_STEP,
    S_CYCLE,
    S_PHASE,
    S_SEGMENT,
    S_LOCAL,
    S_LEFT,
    S_WAIT,
    S_TIMEOUTS,
    S_ROWS,
    S_MOTION_START,
    S_MOTION_END,
    S_WAIT_TOTAL,
    S_NOT_PD,
) = range(13)
SI_SIZE = 13  # S_NOT_PD: 1 when the plant's M stopped being positive definite (the run ends there)
# float state sf
F_READ_PREVIOUS, F_SWITCH, F_READ_FIRST, F_LAST_APPLY = range(4)
SF_SIZE = 4
# phases of the closed-loop recording
PH_PREROLL, PH_LEAD, PH_SEGMENT, PH_WAIT, PH_DWELL, PH_TAIL, PH_DONE = range(7)
# timing settings (array `timing`)
(
    T_PERIOD,
    T_WAKE_MEAN,
    T_LATE_PROB,
    T_LATE_MIN,
    T_LATE_MAX,
    T_LATENCY,
    T_LATENCY_SD,
    T_LATENCY_MIN,
    T_LATENCY_MAX,
    T_BUS_GAP,
) = range(10)
# noise settings (array `noise`)
N_CURRENT_SD, N_ENCODER_SD, N_PRESENT_SD = range(3)
# plant scalars (array `scal`)
(
    P_H,
    P_GZ,
    P_COMPLIANT,
    P_COULOMB_WIDTH,
    P_ENCODER_RES,
    P_CURRENT_UNIT,
    P_LOAD_FRICTION,
    P_VOLTAGE_LIMIT,
) = range(8)
# switches of the effects the nonideality study added (twin/effects.py); at their defaults the plant
# is the one before them
P_ENCODER_QUANTIZE, P_ENCODER_ERROR, P_BACKLASH = range(8, 11)
# rows of the per-arm-axis drive array `gear`: load-dependent gear friction, then the backlash half
# gap (rad)
G_LOSS_DRIVE, G_LOSS_BACK, G_HALF_GAP = range(3)
# rows of the per-axis encoder error array `sensor`: e(θ) = a1 sin(θ + φ1) + a2 sin(2θ + φ2)
E_A1, E_PHI1, E_A2, E_PHI2 = range(4)
# rows of the per-axis motor array `motor` (supply-voltage limit)
M_KT, M_STALL_CURRENT, M_NO_LOAD_SPEED, M_ROWS = range(4)
# groups of log columns (array `cols`: first 0-based column of each per-axis group)
(
    C_T,
    C_THETA,
    C_DTHETA,
    C_REF,
    C_DREF,
    C_DDREF,
    C_ERROR,
    C_CURRENT,
    C_FF,
    C_FB,
    C_PRESENT,
    C_TICKS,
    C_UNITS,
    C_CLAMPED,
    C_SEGMENT,
) = range(15)


# Weight of the end-of-step spring force: 1 is implicit Euler (numerical damping ratio ω·h/2,
# 0.08 at 100 Hz), 0.5 the trapezoidal rule on the spring (ω·h/4, 0.04), still unconditionally
# stable.
SPRING_IMPLICITNESS = 0.5

# rows of the float scratch array ws_v
(
    W_COS,
    W_SIN,
    W_ZERO,
    W_VELOCITY,
    W_BIAS,
    W_SOLUTION,
    W_RHS,
    W_COUPLING,
    W_ROTOR_RHS,
    W_ROTOR_DIAG,
    W_SCRATCH,
    W_TORQUE,
    W_PREVIOUS,
    W_SPRING,
    W_DELIVERED,
    W_ROWS,
) = range(16)


@numba.njit(cache=True)
def workspace(n_parameters):
    """Scratch arrays for plant_step: (ws_w, ws_m, ws_l, ws_v, ws_i)."""
    return (
        np.zeros((N_AX, n_parameters)),
        np.zeros((N_AX, N_AX)),
        np.zeros((N_ARM, N_ARM)),
        np.zeros((W_ROWS, N_AX)),
        np.zeros(N_AX, dtype=np.int64),
    )


@numba.njit(cache=True)
def _sensor_buffers():
    """(q_read, ticks, theta): the true angles at the read time, encoder ticks, measured angles."""
    return np.zeros(N_AX), np.zeros(N_AX), np.zeros(N_AX)


@numba.njit(cache=True)
def _implicit_friction(p, inertia, h_viscous, h_coulomb):
    """Velocity after a step with momentum p before friction: (I + h FV) v = p - h FS sgn(v)."""
    if abs(p) <= h_coulomb:
        return 0.0
    return (p - math.copysign(h_coulomb, p)) / (inertia + h_viscous)


@numba.njit(cache=True)
def gear_loss(transmitted, direction, loss_drive, loss_back):
    """Load-dependent gear friction |FL| (N·m) for a rotor moving (or about to move) with the sign
    of `direction` while the gearbox transmits `transmitted` (the spring torque, on the link).

    Driving (the transmitted torque points along the motion): the gearbox input exceeds its
    output by (1/η_drive - 1)|τ|; back-driven: the motor side holds η_back of it, the loss being
    (1 - η_back)|τ|. loss_drive = 1/η_drive - 1, loss_back = 1 - η_back (both 0 at η = 1)."""
    if transmitted * direction > 0.0:
        return loss_drive * abs(transmitted)
    return loss_back * abs(transmitted)


@numba.njit(cache=True)
def delivered_torque(commanded, speed, kt, stall_current, no_load_speed):
    """Motor torque (N·m, link side) the drive delivers for the `commanded` one (Kt_true i_cmd) at
    rotor speed `speed` (rad/s, link side) when its supply voltage caps the winding current.

    The H-bridge applies at most ±V: V = R i + k_e ω bounds the current to
    [(-V - k_e ω)/R, (V - k_e ω)/R], with R = V/i_stall and k_e = V/ω_nl from the datasheet's
    stall current and no-load speed at V. Driving (i ω > 0) the torque stays on the torque-speed
    line Kt i_stall (1 - ω/ω_nl); braking the back-EMF helps, up to Kt i_stall (1 + |ω|/ω_nl).
    Inside the bounds the delivered torque is the commanded one, bit for bit."""
    reach = kt * stall_current
    ratio = speed / no_load_speed
    upper = reach * (1.0 - ratio)  # an unbounded supply (infinite i_stall and ω_nl) clips nothing
    lower = -reach * (1.0 + ratio)
    if commanded > upper:
        return upper
    if commanded < lower:
        return lower
    return commanded


@numba.njit(cache=True)
def plant_step(
    x,
    torque,
    scal,
    offsets,
    beta_link,
    ia,
    fv,
    fs,
    stiffness,
    damping,
    gear,
    motor,
    free,
    ws_w,
    ws_m,
    ws_l,
    ws_v,
    ws_i,
):
    """Advance the state x by one step h under the motor torques `torque` (N·m, true); False,
    with x left part-way, when the plant's (link + spring) inertia is not positive definite.

    ws_*: scratch space from workspace() (no allocation inside the step loop). With the
    supply-voltage limit on, the torque each motor delivers is `torque` clipped to what the
    voltage allows at the rotor speed of the step's start (delivered_torque); `torque` itself
    (the command the controller logs) is left as it is."""
    h = scal[P_H]
    compliant = scal[P_COMPLIANT] > 0.5
    if scal[P_VOLTAGE_LIMIT] > 0.5:
        delivered = ws_v[W_DELIVERED]
        for j in range(N_AX):
            speed = x[XVM + j] if (compliant and j < N_ARM) else x[XV + j]
            delivered[j] = delivered_torque(
                torque[j],
                speed,
                motor[M_KT, j],
                motor[M_STALL_CURRENT, j],
                motor[M_NO_LOAD_SPEED, j],
            )
        torque = delivered
    c = ws_v[W_COS, :N_ARM]
    s = ws_v[W_SIN, :N_ARM]
    for j in range(N_ARM):
        angle = x[XQ + j] + offsets[j]
        c[j] = math.cos(angle)
        s[j] = math.sin(angle)
    zeros = ws_v[W_ZERO]
    velocity = ws_v[W_VELOCITY]
    for j in range(N_AX):
        velocity[j] = x[XV + j]
    ws_w[:, :] = 0.0
    regressor_kernel(c, s, velocity, zeros, zeros, scal[P_GZ], ws_w)
    bias = ws_v[W_BIAS]  # C(q, q̇) q̇ + g(q) of the links alone (beta_link has no IA, FV, FS)
    for r in range(N_AX):
        total = 0.0
        for k in range(beta_link.shape[0]):
            total += ws_w[r, k] * beta_link[k]
        bias[r] = total
    ws_m[:, :] = 0.0
    inertia_kernel(c, s, beta_link, ws_m)
    acceleration = ws_v[W_SOLUTION]
    if compliant:
        # The stiff rotor-link spring and damper are implicit (linearly implicit on the new
        # velocities), the rigid-body terms explicit: with B = c hK + D (c = SPRING_IMPLICITNESS)
        # and
        # a_m = IA + h FV + h B, eliminating the rotor velocity gives
        # [M + hB - h^2 B^2 / a_m] v' = M v + h (f0 - bias) + h B r_m / a_m,  vm' = (r_m + h B v') /
        # a_m,
        # f0 = K (qm - q), r_m = IA vm + h (tau - f0). Coulomb friction then acts on the rotor
        # as an impulse of at most h FS that cannot reverse its velocity (first-order splitting),
        # and with it the load-dependent gear friction, at most h λ |τ_s|, τ_s = f0 + B (vm' - v')
        # the spring torque of this step (the torque the gearbox transmits), λ by the power flow.
        load_friction = scal[P_LOAD_FRICTION] > 0.5
        spring = ws_v[W_SPRING]
        rhs = ws_v[W_RHS]
        coupling = ws_v[W_COUPLING]
        rotor_rhs = ws_v[W_ROTOR_RHS]
        rotor_diag = ws_v[W_ROTOR_DIAG]
        backlash = scal[P_BACKLASH] > 0.5
        for j in range(N_ARM):
            if backlash:
                # contact decided at the step's start: inside the gap neither spring nor damper acts
                # (the step is then free rotor and free link); in contact the spring starts at the
                # gap's edge. Entering or leaving contact inside a step is first-order in h.
                delta = x[XQM + j] - x[XQ + j]
                gap = gear[G_HALF_GAP, j]
                if delta > gap:
                    f0 = stiffness[j] * (delta - gap)
                    coupling[j] = SPRING_IMPLICITNESS * h * stiffness[j] + damping[j]
                elif delta < -gap:
                    f0 = stiffness[j] * (delta + gap)
                    coupling[j] = SPRING_IMPLICITNESS * h * stiffness[j] + damping[j]
                else:
                    f0 = 0.0
                    coupling[j] = 0.0
            else:
                f0 = stiffness[j] * (x[XQM + j] - x[XQ + j])
                coupling[j] = SPRING_IMPLICITNESS * h * stiffness[j] + damping[j]
            spring[j] = f0
            rotor_diag[j] = ia[j] + h * fv[j] + h * coupling[j]
            rotor_rhs[j] = ia[j] * x[XVM + j] + h * (torque[j] - f0)
            momentum = 0.0
            for k in range(N_ARM):
                momentum += ws_m[j, k] * x[XV + k]
            rhs[j] = momentum + h * (f0 - bias[j]) + h * coupling[j] * rotor_rhs[j] / rotor_diag[j]
        for j in range(N_ARM):
            ws_m[j, j] += h * coupling[j] - (h * coupling[j]) ** 2 / rotor_diag[j]
        if not solve_spd_linked(
            ws_m, rhs, free, N_ARM, ws_l, acceleration, ws_i, ws_v[W_SCRATCH]
        ):  # here: the new link velocities
            return False
        for j in range(N_ARM):
            if free[j] > 0.5:
                x[XV + j] = acceleration[j]
                rotor = (rotor_rhs[j] + h * coupling[j] * x[XV + j]) / rotor_diag[j]
                impulse = ia[j] * rotor
                bound = h * fs[j]
                if load_friction:
                    transmitted = spring[j] + coupling[j] * (rotor - x[XV + j])
                    bound += h * gear_loss(
                        transmitted, impulse, gear[G_LOSS_DRIVE, j], gear[G_LOSS_BACK, j]
                    )
                if abs(impulse) <= bound:
                    rotor = 0.0
                else:
                    rotor = (impulse - math.copysign(bound, impulse)) / ia[j]
                x[XVM + j] = rotor
                x[XQM + j] += h * x[XVM + j]
                x[XQ + j] += h * x[XV + j]
            else:
                x[XVM + j] = 0.0
                x[XV + j] = 0.0
    else:
        width = scal[P_COULOMB_WIDTH]
        rhs = ws_v[W_RHS]
        for j in range(N_ARM):
            ws_m[j, j] += ia[j]
            v = x[XV + j]
            rhs[j] = torque[j] - bias[j] - fv[j] * v - fs[j] * math.tanh(v / width)
        if not solve_spd_linked(ws_m, rhs, free, N_ARM, ws_l, acceleration, ws_i, ws_v[W_SCRATCH]):
            return False
        for j in range(N_ARM):
            if free[j] > 0.5:
                x[XV + j] += h * acceleration[j]
                x[XQ + j] += h * x[XV + j]
            else:
                x[XV + j] = 0.0
            x[XQM + j] = x[XQ + j]
            x[XVM + j] = x[XV + j]
    for hand in range(N_ARM, N_AX):  # gripper axes: a rotor alone, decoupled from the arm
        if free[hand] > 0.5:
            momentum = ia[hand] * x[XV + hand] + h * torque[hand]
            x[XV + hand] = _implicit_friction(momentum, ia[hand], h * fv[hand], h * fs[hand])
            x[XQ + hand] += h * x[XV + hand]
        else:
            x[XV + hand] = 0.0
    return True


@numba.njit(cache=True)
def run_steps(
    n_steps, x, torque, scal, offsets, beta_link, ia, fv, fs, stiffness, damping, gear, motor, free
):
    """n_steps plant steps under constant motor torques (checks and open experiments); False
    when the plant's inertia stopped being positive definite."""
    ws_w, ws_m, ws_l, ws_v, ws_i = workspace(beta_link.shape[0])
    for _ in range(n_steps):
        if not plant_step(
            x,
            torque,
            scal,
            offsets,
            beta_link,
            ia,
            fv,
            fs,
            stiffness,
            damping,
            gear,
            motor,
            free,
            ws_w,
            ws_m,
            ws_l,
            ws_v,
            ws_i,
        ):
            return False
    return True


@numba.njit(cache=True)
def _advance(
    t_target,
    x,
    si,
    sf,
    torque_old,
    torque_new,
    scal,
    offsets,
    beta_link,
    ia,
    fv,
    fs,
    stiffness,
    damping,
    gear,
    motor,
    free,
    ws_w,
    ws_m,
    ws_l,
    ws_v,
    ws_i,
    q_read,
):
    """Step the plant until its time passes t_target; q_read = link angles at t_target.

    A pending command (torque_new, taking effect at sf[F_SWITCH]) enters the step that
    contains its switch time as the time-weighted mean of old and new torque, which is the
    exact impulse of the held input over that step. False when a plant step fails (not PD).
    """
    h = scal[P_H]
    torque = ws_v[W_TORQUE]
    previous = ws_v[W_PREVIOUS]
    while si[S_STEP] * h < t_target:
        t0 = si[S_STEP] * h
        switch = sf[F_SWITCH]
        if switch >= 0.0 and switch < t0 + h:
            weight_old = max(0.0, switch - t0) / h
            for j in range(N_AX):
                torque[j] = weight_old * torque_old[j] + (1.0 - weight_old) * torque_new[j]
                torque_old[j] = torque_new[j]
            sf[F_SWITCH] = -1.0
        else:
            for j in range(N_AX):
                torque[j] = torque_old[j]
        for j in range(N_AX):
            previous[j] = x[XQ + j]
        if not plant_step(
            x,
            torque,
            scal,
            offsets,
            beta_link,
            ia,
            fv,
            fs,
            stiffness,
            damping,
            gear,
            motor,
            free,
            ws_w,
            ws_m,
            ws_l,
            ws_v,
            ws_i,
        ):
            return False
        si[S_STEP] += 1
        t1 = si[S_STEP] * h
        if t1 >= t_target:
            fraction = (t_target - t0) / h
            for j in range(N_AX):
                q_read[j] = previous[j] + fraction * (x[XQ + j] - previous[j])
            return True
    for j in range(N_AX):
        q_read[j] = x[XQ + j]
    return True


@numba.njit(cache=True)
def _read_time(k, sf, timing, rng):
    """Host time of cycle k's encoder read: the periodic wake-up plus its latency, never before
    the previous cycle's command has gone out (the bus is sequential)."""
    wake = rng.exponential(timing[T_WAKE_MEAN])
    if rng.uniform(0.0, 1.0) < timing[T_LATE_PROB]:
        wake += rng.uniform(timing[T_LATE_MIN], timing[T_LATE_MAX])
    return max(k * timing[T_PERIOD] + wake, sf[F_LAST_APPLY] + timing[T_BUS_GAP])


@numba.njit(cache=True)
def _latency(timing, rng):
    value = timing[T_LATENCY] + timing[T_LATENCY_SD] * rng.normal()
    return min(max(value, timing[T_LATENCY_MIN]), timing[T_LATENCY_MAX])


@numba.njit(cache=True)
def _encoder(q_true, scal, noise, sensor, rng, ticks, theta):
    """12-bit link-side encoder: position register 0..4095 with 2048 at 0 rad, small read noise.

    Switchable (the nonideality study): a position-dependent error e(θ) of the sensor added to the
    true angle
    (first and second harmonic, `sensor` rows), and the rounding to whole counts."""
    res = scal[P_ENCODER_RES]
    error = scal[P_ENCODER_ERROR] > 0.5
    quantize = scal[P_ENCODER_QUANTIZE] > 0.5
    for j in range(N_AX):
        angle = q_true[j]
        if error:
            angle += sensor[E_A1, j] * math.sin(q_true[j] + sensor[E_PHI1, j]) + sensor[
                E_A2, j
            ] * math.sin(2.0 * q_true[j] + sensor[E_PHI2, j])
        if quantize:
            value = np.rint((angle + math.pi) / res + noise[N_ENCODER_SD] * rng.normal())
        else:
            value = (angle + math.pi) / res + noise[N_ENCODER_SD] * rng.normal()
        ticks[j] = value
        theta[j] = value * res - math.pi


@numba.njit(cache=True)
def run_closed_loop(
    max_rows,
    out,
    x,
    si,
    sf,
    torque_old,
    torque_new,
    theta_previous,
    integral,
    scal,
    offsets,
    beta_link,
    ia,
    fv,
    fs,
    stiffness,
    damping,
    gear,
    motor,
    kt_true,
    free,
    sensor,
    timing,
    noise,
    rng,
    cols,
    seg_start,
    seg_delta,
    seg_offset,
    seg_count,
    prof_s,
    prof_sd,
    prof_sdd,
    start_posture,
    preroll_cycles,
    lead_cycles,
    dwell_cycles,
    tail_cycles,
    in_position_tol,
    timeout_cycles,
    m_hat,
    d_hat,
    k_p,
    k_v,
    k_i,
    kt_command,
    current_unit,
    limit_units,
):
    """Run the recording state machine until max_rows logged rows or the end; returns rows written.

    Phases: pre-roll (unlogged hold at the start posture), lead idle (logged hold), segments
    (reference from the precomputed per-segment profiles), the in-position wait after every
    segment (the next segment starts only when every axis is within in_position_tol of its
    target, or after timeout_cycles), the final dwell, the tail idle.
    """
    ws_w, ws_m, ws_l, ws_v, ws_i = workspace(beta_link.shape[0])
    q_read, ticks, theta = _sensor_buffers()
    ref = np.zeros(N_AX)
    dref = np.zeros(N_AX)
    ddref = np.zeros(N_AX)
    law = np.zeros((OUT_ROWS, N_AX))
    present = np.zeros(N_AX)
    n_segments = seg_start.shape[0]
    rows = 0
    while rows < max_rows and si[S_PHASE] != PH_DONE:
        k = si[S_CYCLE]
        t_read = _read_time(k, sf, timing, rng)
        if not _advance(
            t_read,
            x,
            si,
            sf,
            torque_old,
            torque_new,
            scal,
            offsets,
            beta_link,
            ia,
            fv,
            fs,
            stiffness,
            damping,
            gear,
            motor,
            free,
            ws_w,
            ws_m,
            ws_l,
            ws_v,
            ws_i,
            q_read,
        ):
            si[S_NOT_PD] = 1
            si[S_PHASE] = PH_DONE
            return rows
        # the previous command has taken effect by now (_read_time); the actuator reports it
        for j in range(N_AX):
            present[j] = torque_old[j] / kt_true[j]
        _encoder(q_read, scal, noise, sensor, rng, ticks, theta)
        dt = t_read - sf[F_READ_PREVIOUS] if k > 0 else timing[T_PERIOD]
        if k == 0:
            for j in range(N_AX):
                theta_previous[j] = theta[j]

        # reference of this cycle
        phase = si[S_PHASE]
        segment = si[S_SEGMENT]
        if phase == PH_SEGMENT:
            index = seg_offset[segment] + si[S_LOCAL]
            for j in range(N_AX):
                ref[j] = seg_start[segment, j] + prof_s[index, j] * seg_delta[segment, j]
                dref[j] = prof_sd[index, j] * seg_delta[segment, j]
                ddref[j] = prof_sdd[index, j] * seg_delta[segment, j]
        elif phase == PH_PREROLL or phase == PH_LEAD:
            for j in range(N_AX):
                ref[j] = start_posture[j]
                dref[j] = 0.0
                ddref[j] = 0.0
        else:  # wait, dwell, tail: hold the last target
            last = segment if segment < n_segments else n_segments - 1
            for j in range(N_AX):
                ref[j] = seg_start[last, j] + seg_delta[last, j]
                dref[j] = 0.0
                ddref[j] = 0.0

        realization_law(
            ref,
            dref,
            ddref,
            theta,
            theta_previous,
            dt,
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
            theta_previous[j] = theta[j]
            current = law[OUT_GOAL_UNITS, j] * current_unit + noise[N_CURRENT_SD] * rng.normal()
            torque_new[j] = kt_true[j] * current
        t_apply = t_read + _latency(timing, rng)
        sf[F_SWITCH] = t_apply
        sf[F_LAST_APPLY] = t_apply
        sf[F_READ_PREVIOUS] = t_read

        logged = phase != PH_PREROLL
        if logged:
            if si[S_ROWS] == 0:
                sf[F_READ_FIRST] = t_read
            row = out[rows]
            row[cols[C_T]] = t_read - sf[F_READ_FIRST]
            for j in range(N_AX):
                row[cols[C_THETA] + j] = theta[j] + math.pi
                row[cols[C_DTHETA] + j] = law[OUT_VELOCITY, j]
                row[cols[C_REF] + j] = ref[j]
                row[cols[C_DREF] + j] = dref[j]
                row[cols[C_DDREF] + j] = ddref[j]
                row[cols[C_ERROR] + j] = ref[j] - theta[j]
                row[cols[C_CURRENT] + j] = law[OUT_GOAL_UNITS, j] * current_unit
                row[cols[C_FF] + j] = law[OUT_FEEDFORWARD, j]
                row[cols[C_FB] + j] = law[OUT_FEEDBACK, j]
                row[cols[C_PRESENT] + j] = (
                    np.rint((present[j] + noise[N_PRESENT_SD] * rng.normal()) / current_unit)
                    * current_unit
                )
                row[cols[C_TICKS] + j] = ticks[j]
                row[cols[C_UNITS] + j] = law[OUT_GOAL_UNITS, j]
                row[cols[C_CLAMPED] + j] = law[OUT_CLAMPED, j]
            row[cols[C_SEGMENT]] = (
                segment if (phase == PH_SEGMENT or phase == PH_WAIT or phase == PH_DWELL) else -1
            )
            rows += 1
            si[S_ROWS] += 1

        # state machine for the next cycle
        if phase == PH_PREROLL or phase == PH_LEAD or phase == PH_DWELL or phase == PH_TAIL:
            si[S_LEFT] -= 1
            if si[S_LEFT] <= 0:
                if phase == PH_PREROLL:
                    si[S_PHASE] = PH_LEAD
                    si[S_LEFT] = lead_cycles
                elif phase == PH_LEAD:
                    si[S_PHASE] = PH_SEGMENT if seg_count[0] > 0 else PH_WAIT
                    si[S_SEGMENT] = 0
                    si[S_LOCAL] = 0
                    si[S_WAIT] = 0
                    si[S_MOTION_START] = si[S_ROWS]
                elif phase == PH_DWELL:
                    si[S_PHASE] = PH_TAIL
                    si[S_LEFT] = tail_cycles
                    si[S_MOTION_END] = si[S_ROWS]
                else:
                    si[S_PHASE] = PH_DONE
        elif phase == PH_SEGMENT:
            si[S_LOCAL] += 1
            if si[S_LOCAL] >= seg_count[segment]:
                si[S_PHASE] = PH_WAIT
                si[S_WAIT] = 0
        if phase == PH_WAIT:
            inside = True
            for j in range(N_AX):
                if (
                    abs(seg_start[segment, j] + seg_delta[segment, j] - theta[j])
                    > in_position_tol[j]
                ):
                    inside = False
            si[S_WAIT] += 1
            timed_out = si[S_WAIT] >= timeout_cycles
            if inside or timed_out:
                if timed_out and not inside:
                    si[S_TIMEOUTS] += 1
                si[S_WAIT_TOTAL] += si[S_WAIT]
                if segment + 1 < n_segments:
                    si[S_SEGMENT] = segment + 1
                    si[S_LOCAL] = 0
                    si[S_PHASE] = PH_SEGMENT if seg_count[segment + 1] > 0 else PH_WAIT
                    si[S_WAIT] = 0
                else:
                    si[S_PHASE] = PH_DWELL
                    si[S_LEFT] = dwell_cycles
        si[S_CYCLE] += 1
    return rows


@numba.njit(cache=True)
def run_open_loop(
    units_excitation,
    out_t,
    out_theta,
    out_units,
    x,
    si,
    sf,
    torque_old,
    torque_new,
    scal,
    offsets,
    beta_link,
    ia,
    fv,
    fs,
    stiffness,
    damping,
    gear,
    motor,
    kt_true,
    free,
    sensor,
    timing,
    noise,
    rng,
    beta_gravity_prior,
    kt_compensation,
    limit_units,
    current_unit,
):
    """Open-loop record: per cycle, the excitation current (register units) plus, on the free
    axes, the current that holds the prior model's gravity torque at the measured angle.

    Logs the read time, the measured angles and the goal current sent (units). Returns the
    cycles completed (fewer, with si[S_NOT_PD] set, when the plant's inertia is not PD).
    """
    ws_w, ws_m, ws_l, ws_v, ws_i = workspace(beta_link.shape[0])
    w_gravity = np.zeros((N_AX, beta_gravity_prior.shape[0]))
    q_read, ticks, theta = _sensor_buffers()
    zeros = np.zeros(N_AX)
    c = np.empty(N_ARM)
    s = np.empty(N_ARM)
    for k in range(units_excitation.shape[0]):
        t_read = _read_time(k, sf, timing, rng)
        if not _advance(
            t_read,
            x,
            si,
            sf,
            torque_old,
            torque_new,
            scal,
            offsets,
            beta_link,
            ia,
            fv,
            fs,
            stiffness,
            damping,
            gear,
            motor,
            free,
            ws_w,
            ws_m,
            ws_l,
            ws_v,
            ws_i,
            q_read,
        ):
            si[S_NOT_PD] = 1
            return k
        _encoder(q_read, scal, noise, sensor, rng, ticks, theta)
        for j in range(N_ARM):
            c[j] = math.cos(theta[j] + offsets[j])
            s[j] = math.sin(theta[j] + offsets[j])
        w_gravity[:, :] = 0.0
        regressor_kernel(c, s, zeros, zeros, zeros, scal[P_GZ], w_gravity)
        for j in range(N_AX):
            gravity = 0.0
            if free[j] > 0.5:
                for p in range(beta_gravity_prior.shape[0]):
                    gravity += w_gravity[j, p] * beta_gravity_prior[p]
            units = np.rint(units_excitation[k, j] + gravity / kt_compensation[j] / current_unit)
            units = min(max(units, -limit_units[j]), limit_units[j])
            out_units[k, j] = units
            torque_new[j] = kt_true[j] * (units * current_unit + noise[N_CURRENT_SD] * rng.normal())
            out_theta[k, j] = theta[j]
        out_t[k] = t_read
        t_apply = t_read + _latency(timing, rng)
        sf[F_SWITCH] = t_apply
        sf[F_LAST_APPLY] = t_apply
        si[S_CYCLE] += 1
    return units_excitation.shape[0]


# ---------------------------------------------------------------- position mode (the servo's loop)
# rows of the per-axis array `servo` of run_position_loop
SV_GOAL_OLD, SV_GOAL_NEW, SV_DUTY, SV_SATURATED, SV_CURRENT, SV_ROWS = range(6)


@numba.njit(cache=True)
def _advance_servo(
    t_target,
    x,
    si,
    sf,
    servo,
    loop_state,
    loop_gains,
    loop_out,
    servo_steps,
    scal,
    offsets,
    beta_link,
    ia,
    fv,
    fs,
    stiffness,
    damping,
    gear,
    motor,
    free,
    ws_w,
    ws_m,
    ws_l,
    ws_v,
    ws_i,
    q_read,
):
    """Step the plant of a position-mode arm until its time passes t_target; q_read = link
    angles at t_target.

    Every servo_steps plant steps (the servo's tick) each servo runs `position_loop_law` on its
    own encoder (the link angle rounded to counts) toward its goal register: the goal the host
    last wrote (servo[SV_GOAL_NEW], in force from sf[F_SWITCH] on). Between ticks the duty is
    held; the motor's torque follows it along the torque-speed line at every step's rotor speed
    (`duty_current`), servo[SV_CURRENT] the winding current of the last step. False when a plant
    step fails (not PD)."""
    h = scal[P_H]
    res = scal[P_ENCODER_RES]
    torque = ws_v[W_TORQUE]
    previous = ws_v[W_PREVIOUS]
    encoder = ws_v[W_SCRATCH]
    compliant = scal[P_COMPLIANT] > 0.5
    while si[S_STEP] * h < t_target:
        t0 = si[S_STEP] * h
        switch = sf[F_SWITCH]
        if switch >= 0.0 and switch <= t0:
            for j in range(N_AX):
                servo[SV_GOAL_OLD, j] = servo[SV_GOAL_NEW, j]
            sf[F_SWITCH] = -1.0
        if si[S_STEP] % servo_steps == 0:
            for j in range(N_AX):
                encoder[j] = np.rint((x[XQ + j] + math.pi) / res) * res - math.pi
            position_loop_law(
                servo[SV_GOAL_OLD], encoder, servo_steps * h, loop_state, loop_gains, loop_out
            )
            for j in range(N_AX):
                servo[SV_DUTY, j] = loop_out[O_DUTY, j]
                servo[SV_SATURATED, j] = loop_out[O_SATURATED, j]
        for j in range(N_AX):
            speed = x[XVM + j] if (compliant and j < N_ARM) else x[XV + j]
            current = duty_current(
                servo[SV_DUTY, j], speed, motor[M_STALL_CURRENT, j], motor[M_NO_LOAD_SPEED, j]
            )
            servo[SV_CURRENT, j] = current
            torque[j] = motor[M_KT, j] * current
            previous[j] = x[XQ + j]
        if not plant_step(
            x,
            torque,
            scal,
            offsets,
            beta_link,
            ia,
            fv,
            fs,
            stiffness,
            damping,
            gear,
            motor,
            free,
            ws_w,
            ws_m,
            ws_l,
            ws_v,
            ws_i,
        ):
            return False
        si[S_STEP] += 1
        t1 = si[S_STEP] * h
        if t1 >= t_target:
            fraction = (t_target - t0) / h
            for j in range(N_AX):
                q_read[j] = previous[j] + fraction * (x[XQ + j] - previous[j])
            return True
    for j in range(N_AX):
        q_read[j] = x[XQ + j]
    return True


@numba.njit(cache=True)
def run_position_loop(
    max_rows,
    out,
    x,
    si,
    sf,
    servo,
    loop_state,
    loop_gains,
    servo_steps,
    theta_previous,
    scal,
    offsets,
    beta_link,
    ia,
    fv,
    fs,
    stiffness,
    damping,
    gear,
    motor,
    kt_true,
    free,
    sensor,
    timing,
    noise,
    rng,
    cols,
    seg_start,
    seg_delta,
    seg_offset,
    seg_count,
    prof_s,
    prof_sd,
    prof_sdd,
    start_posture,
    preroll_cycles,
    lead_cycles,
    dwell_cycles,
    tail_cycles,
    in_position_tol,
    moving_threshold,
    timeout_cycles,
    current_unit,
    limit_units,
):
    """The recording state machine of `run_closed_loop` for an arm in position mode: per host
    cycle the reference (rounded to the Goal Position register's counts) is written as every
    servo's goal, the servos' own loops drive the plant (`_advance_servo`), and the host reads
    the encoders and the present current (the winding current, rounded to the register unit,
    with read noise, within the register's ±limit_units).

    Log columns as in current mode except: current_command and current_present hold the present
    current (the torque record), goal_current_units its register value, u_feedforward 0,
    u_feedback the servo's PWM duty (fraction of the supply), clamped the duty at its limit.
    In-position: every axis within in_position_tol of its target, or its servo's profile at the
    goal with the link slower than moving_threshold (the servo's Moving flag cleared)."""
    ws_w, ws_m, ws_l, ws_v, ws_i = workspace(beta_link.shape[0])
    q_read, ticks, theta = _sensor_buffers()
    loop_out = np.zeros((O_ROWS, N_AX))
    ref = np.zeros(N_AX)
    dref = np.zeros(N_AX)
    ddref = np.zeros(N_AX)
    res = scal[P_ENCODER_RES]
    n_segments = seg_start.shape[0]
    rows = 0
    while rows < max_rows and si[S_PHASE] != PH_DONE:
        k = si[S_CYCLE]
        t_read = _read_time(k, sf, timing, rng)
        if not _advance_servo(
            t_read,
            x,
            si,
            sf,
            servo,
            loop_state,
            loop_gains,
            loop_out,
            servo_steps,
            scal,
            offsets,
            beta_link,
            ia,
            fv,
            fs,
            stiffness,
            damping,
            gear,
            motor,
            free,
            ws_w,
            ws_m,
            ws_l,
            ws_v,
            ws_i,
            q_read,
        ):
            si[S_NOT_PD] = 1
            si[S_PHASE] = PH_DONE
            return rows
        _encoder(q_read, scal, noise, sensor, rng, ticks, theta)
        dt = t_read - sf[F_READ_PREVIOUS] if k > 0 else timing[T_PERIOD]
        if k == 0:
            for j in range(N_AX):
                theta_previous[j] = theta[j]

        phase = si[S_PHASE]
        segment = si[S_SEGMENT]
        if phase == PH_SEGMENT:
            index = seg_offset[segment] + si[S_LOCAL]
            for j in range(N_AX):
                ref[j] = seg_start[segment, j] + prof_s[index, j] * seg_delta[segment, j]
                dref[j] = prof_sd[index, j] * seg_delta[segment, j]
                ddref[j] = prof_sdd[index, j] * seg_delta[segment, j]
        elif phase == PH_PREROLL or phase == PH_LEAD:
            for j in range(N_AX):
                ref[j] = start_posture[j]
                dref[j] = 0.0
                ddref[j] = 0.0
        else:  # wait, dwell, tail: hold the last target
            last = segment if segment < n_segments else n_segments - 1
            for j in range(N_AX):
                ref[j] = seg_start[last, j] + seg_delta[last, j]
                dref[j] = 0.0
                ddref[j] = 0.0
        for j in range(N_AX):  # the Goal Position register holds whole counts
            servo[SV_GOAL_NEW, j] = np.rint((ref[j] + math.pi) / res) * res - math.pi
        t_apply = t_read + _latency(timing, rng)
        sf[F_SWITCH] = t_apply
        sf[F_LAST_APPLY] = t_apply
        sf[F_READ_PREVIOUS] = t_read

        logged = phase != PH_PREROLL
        if logged:
            if si[S_ROWS] == 0:
                sf[F_READ_FIRST] = t_read
            row = out[rows]
            row[cols[C_T]] = t_read - sf[F_READ_FIRST]
            for j in range(N_AX):
                units = np.rint(
                    (servo[SV_CURRENT, j] + noise[N_PRESENT_SD] * rng.normal()) / current_unit
                )
                units = min(max(units, -limit_units[j]), limit_units[j])
                row[cols[C_THETA] + j] = theta[j] + math.pi
                row[cols[C_DTHETA] + j] = (theta[j] - theta_previous[j]) / dt
                row[cols[C_REF] + j] = ref[j]
                row[cols[C_DREF] + j] = dref[j]
                row[cols[C_DDREF] + j] = ddref[j]
                row[cols[C_ERROR] + j] = ref[j] - theta[j]
                row[cols[C_CURRENT] + j] = units * current_unit
                row[cols[C_FF] + j] = 0.0
                row[cols[C_FB] + j] = servo[SV_DUTY, j]
                row[cols[C_PRESENT] + j] = units * current_unit
                row[cols[C_TICKS] + j] = ticks[j]
                row[cols[C_UNITS] + j] = units
                row[cols[C_CLAMPED] + j] = servo[SV_SATURATED, j]
            row[cols[C_SEGMENT]] = (
                segment if (phase == PH_SEGMENT or phase == PH_WAIT or phase == PH_DWELL) else -1
            )
            rows += 1
            si[S_ROWS] += 1
        for j in range(N_AX):
            theta_previous[j] = theta[j]

        if phase == PH_PREROLL or phase == PH_LEAD or phase == PH_DWELL or phase == PH_TAIL:
            si[S_LEFT] -= 1
            if si[S_LEFT] <= 0:
                if phase == PH_PREROLL:
                    si[S_PHASE] = PH_LEAD
                    si[S_LEFT] = lead_cycles
                elif phase == PH_LEAD:
                    si[S_PHASE] = PH_SEGMENT if seg_count[0] > 0 else PH_WAIT
                    si[S_SEGMENT] = 0
                    si[S_LOCAL] = 0
                    si[S_WAIT] = 0
                    si[S_MOTION_START] = si[S_ROWS]
                elif phase == PH_DWELL:
                    si[S_PHASE] = PH_TAIL
                    si[S_LEFT] = tail_cycles
                    si[S_MOTION_END] = si[S_ROWS]
                else:
                    si[S_PHASE] = PH_DONE
        elif phase == PH_SEGMENT:
            si[S_LOCAL] += 1
            if si[S_LOCAL] >= seg_count[segment]:
                si[S_PHASE] = PH_WAIT
                si[S_WAIT] = 0
        if phase == PH_WAIT:
            inside = True
            for j in range(N_AX):
                target = seg_start[segment, j] + seg_delta[segment, j]
                near = abs(target - theta[j]) <= in_position_tol[j]
                arrived = abs(loop_state[S_POSITION, j] - servo[SV_GOAL_OLD, j]) < 1e-9
                if not near and not (arrived and abs(x[XV + j]) < moving_threshold):
                    inside = False
            si[S_WAIT] += 1
            timed_out = si[S_WAIT] >= timeout_cycles
            if inside or timed_out:
                if timed_out and not inside:
                    si[S_TIMEOUTS] += 1
                si[S_WAIT_TOTAL] += si[S_WAIT]
                if segment + 1 < n_segments:
                    si[S_SEGMENT] = segment + 1
                    si[S_LOCAL] = 0
                    si[S_PHASE] = PH_SEGMENT if seg_count[segment + 1] > 0 else PH_WAIT
                    si[S_WAIT] = 0
                else:
                    si[S_PHASE] = PH_DWELL
                    si[S_LEFT] = dwell_cycles
        si[S_CYCLE] += 1
    return rows
