"""The block diagrams of the controller (2) (paper Fig. 2) and of CLIE (paper Fig. 4), drawn
with matplotlib boxes and arrows.

    fig = controller_block_diagram()
    fig = clie_block_diagram()

The labels read the settings from the code that implements them (`controller`, `constants`,
`clie`, `preprocessing`), so the figure states what this book runs, not a retyped copy of the
paper's numbers.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from crane_lib import constants
from crane_lib.identification import clie
from crane_lib.logs import preprocessing
from crane_lib.model import controller


def _box(ax, xy, text, width=2.3, height=0.9, color="#dce9f5"):
    x, y = xy
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.05",
            fc=color,
            ec="k",
            lw=0.9,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=8.5)
    return (x, y, width, height)


def _arrow(ax, start, end, text=None, offset=(0.0, 0.15)):
    ax.add_patch(
        FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, lw=0.9, color="k")
    )
    if text:
        ax.text(
            (start[0] + end[0]) / 2 + offset[0],
            (start[1] + end[1]) / 2 + offset[1],
            text,
            ha="center",
            va="bottom",
            fontsize=7.5,
            style="italic",
        )


def clie_block_diagram(title: str = "CLIE (9) as this book runs it on the twin's records"):
    """Fig. 4-style diagram: reference -> FF+FB controller (2) -> direct dynamics of the reduced
    model -> simulated controller torque; measured torque -> residual -> low-pass, decimation,
    clamp mask -> trust-region reflective update of beta (its settings read from the code)."""
    corner = preprocessing.corner_frequency_hz(clie.RESIDUAL_INTERVAL_S)
    order = preprocessing.FILTER_ORDER
    n_parameters = len(clie.arm_model().names)
    bound = clie.BOUND_MULTIPLIER
    decimation_ms = clie.RESIDUAL_INTERVAL_S * 1e3
    step_ms = clie.INTEGRATION_STEP_S * 1e3
    fig, ax = plt.subplots(figsize=(11, 4.6))
    ax.set_xlim(0, 15.5)
    ax.set_ylim(0, 6)
    ax.axis("off")
    sim = "#dce9f5"
    data = "#f5e6cc"
    opt = "#e0f0dc"
    _box(
        ax,
        (1.3, 4.6),
        "reference\n"
        + r"$\theta_{ref}, \dot\theta_{ref}, \ddot\theta_{ref}$"
        + "\n(the log, 1 ms stamps)",
        color=data,
    )
    _box(
        ax,
        (4.6, 4.6),
        "FF+FB controller (2)\nfeedforward + PD(I) feedback\n(the law that ran the arm)",
        width=2.7,
        color=sim,
    )
    _box(
        ax,
        (8.2, 4.6),
        f"direct dynamics\nM(q;β)⁻¹(τ − h(q,q̇;β))\nHeun, ≤ {step_ms:g} ms steps",
        width=2.6,
        color=sim,
    )
    _box(ax, (11.7, 4.6), "simulated\ncontroller torque\nτ_sim(β)", width=2.2, color=sim)
    _box(
        ax, (11.7, 1.4), "measured\ncontroller torque\n(logged current × Kt)", width=2.4, color=data
    )
    _box(ax, (14.2, 3.0), "residual\nτ_meas − τ_sim", width=2.0, color="#f3d6d6")
    _box(
        ax,
        (8.2, 2.1),
        f"zero-phase order-{order}\nlow-pass {corner:.3f} Hz,\nkeep every {decimation_ms:g} ms,"
        "\nclamp mask (± 1 window)",
        width=2.8,
        height=1.3,
        color="#f3d6d6",
    )
    _box(
        ax,
        (3.9, 2.1),
        f"trust-region reflective\nmin Σ r² over β ({n_parameters})\nbounds x0 ± {bound:g}|x0|",
        width=2.8,
        height=1.1,
        color=opt,
    )
    _arrow(ax, (2.5, 4.6), (3.25, 4.6))
    _arrow(ax, (5.95, 4.6), (6.9, 4.6), "u (torque units)")
    _arrow(ax, (9.5, 4.6), (10.6, 4.6), r"$q, \dot q, \ddot q$")
    ax.add_patch(
        FancyArrowPatch(
            (8.2, 4.15),
            (4.6, 4.15),
            connectionstyle="arc3,rad=-0.35",
            arrowstyle="-|>",
            mutation_scale=10,
            lw=0.7,
            color="0.4",
            ls="--",
        )
    )
    ax.text(6.4, 3.2, "simulated angle fed back", fontsize=7, color="0.3", ha="center")
    _arrow(ax, (12.8, 4.4), (13.7, 3.45))
    _arrow(ax, (12.9, 1.6), (13.7, 2.55))
    _arrow(ax, (14.2, 2.55), (9.6, 2.1), "r(β)", offset=(0.0, 0.05))
    _arrow(ax, (6.8, 2.1), (5.3, 2.1))
    _arrow(ax, (3.9, 2.65), (7.2, 4.15), "β update", offset=(-0.9, -0.1))
    ax.text(
        3.9, 0.95, "start: OLS (route O-C) or SDP projection (O-S-C)", ha="center", fontsize=7.5
    )
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def controller_block_diagram(
    title: str = "Controller (2), the FF+FB realization layer, as this book runs it on every axis",
):
    """Fig. 2-style diagram of one axis j: reference -> feedforward M̂_j(θ̈ref + D̂_j θ̇ref) and
    feedback M̂_j[K_V(θ̇ref − θ̇) + K_P(θref − θ) + K_I∫(θref − θ)] -> current command (÷ catalogue
    Kt, register rounding, clamp) -> actuator and arm -> encoder -> velocity by differencing,
    fed back; the torque record is the commanded current × the logged Kt. Gains, period,
    resolutions and limits are read from `controller` and `constants`."""
    period_ms = constants.CONTROL_PERIOD_S * 1e3
    fig, ax = plt.subplots(figsize=(11.5, 5.0))
    ax.set_xlim(0, 16)
    ax.set_ylim(0, 6.4)
    ax.axis("off")
    data, law, plant, log = "#f5e6cc", "#dce9f5", "#e0f0dc", "#f3d6d6"
    _box(
        ax,
        (1.3, 5.0),
        "reference\n"
        + r"$\theta_{ref}, \dot\theta_{ref}, \ddot\theta_{ref}$"
        + "\n(4-1-4 profile of\nthe command file)",
        height=1.1,
        color=data,
    )
    _box(
        ax,
        (4.9, 5.0),
        "feedforward\n"
        + r"$\hat M_j(\ddot\theta_{ref} + \hat D_j\dot\theta_{ref})$"
        + "\n"
        + r"$\hat M_j = T_{p1,j}/K_{p,j},\ \hat D_j = 1/T_{p1,j}$",
        width=3.0,
        height=1.1,
        color=law,
    )
    _box(
        ax,
        (4.9, 2.9),
        "feedback\n"
        + r"$\hat M_j[K_V(\dot\theta_{ref}-\dot\theta) + K_P(\theta_{ref}-\theta)$"
        + "\n"
        + r"$+ K_I\!\int(\theta_{ref}-\theta)\,dt]$"
        + f"\nK_P = {controller.K_P:g} s⁻², K_V = {controller.K_V:.1f} s⁻¹,\n"
        f"K_I = {controller.K_I:.0f} s⁻³ (integral: this book's addition)",
        width=3.9,
        height=1.6,
        color=law,
    )
    ax.add_patch(plt.Circle((7.6, 4.0), 0.22, fc="white", ec="k", lw=0.9))
    ax.text(7.6, 4.0, "+", ha="center", va="center", fontsize=11)
    _box(
        ax,
        (9.7, 4.0),
        "current command\nu ÷ catalogue Kt,\n"
        f"rounded to {constants.CURRENT_UNIT_A * 1e3:g} mA,\nclamped at the limit",
        width=2.4,
        height=1.3,
        color=law,
    )
    _box(ax, (13.3, 4.0), "DYNAMIXEL actuator\n+ arm (the twin's plant)", width=2.7, color=plant)
    _box(
        ax,
        (13.3, 1.3),
        f"{constants.ENCODER_BITS}-bit link-side encoder\nθ every {period_ms:g} ms",
        width=2.7,
        color=plant,
    )
    _box(
        ax,
        (8.6, 1.3),
        "velocity by differencing\n" + r"$\dot\theta = (\theta_k-\theta_{k-1})/\Delta t$",
        width=2.8,
        color=law,
    )
    _box(
        ax,
        (13.2, 5.85),
        "torque record = current × logged Kt\n"
        f"(catalogue × {constants.KT_CORRECTION:g}; the data of identification)",
        width=4.3,
        height=0.7,
        color=log,
    )
    _arrow(ax, (2.45, 5.0), (3.4, 5.0))
    _arrow(ax, (1.3, 4.45), (2.95, 3.2))
    _arrow(ax, (6.4, 5.0), (7.45, 4.17))
    _arrow(ax, (6.85, 3.2), (7.42, 3.85))
    _arrow(ax, (7.82, 4.0), (8.5, 4.0), "u_j")
    _arrow(ax, (10.9, 4.0), (11.95, 4.0), "current")
    _arrow(ax, (13.3, 3.55), (13.3, 1.75), "θ")
    _arrow(ax, (11.95, 1.3), (10.0, 1.3), "θ")
    _arrow(ax, (7.2, 1.3), (5.4, 2.1), r"$\theta, \dot\theta$", offset=(0.2, -0.45))
    _arrow(ax, (9.7, 4.65), (11.5, 5.6))
    ax.text(
        8.0,
        0.25,
        f"one cycle every {period_ms:g} ms, the same law "
        "(crane_lib.model.controller.realization_law) in the twin, in the CLIE simulator and in "
        "the hardware recorder",
        ha="center",
        fontsize=7.5,
        style="italic",
    )
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
