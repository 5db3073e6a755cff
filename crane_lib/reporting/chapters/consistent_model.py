"""The view of the chapter "A consistent model, exported" (beyond the paper; Sec. VII-E's open
question): the second-moment entries the base parameters decide, the Sec. VII-E comparison, the
links of standard vectors beside the manufacturer's description, the change-for-plausibility
trade-off, the equivalent ellipsoids, the tool checks and the open-loop replay. The chapter calls
the science (`export.consistent`, `export.verify`); this module turns its results and the
export's record into tables and figures."""

from __future__ import annotations

import numpy as np
import pandas as pd

from crane_lib.export import consistent
from crane_lib.export.verify import Simulation, ToolCheck
from crane_lib.identification import metrics
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import N_LINKS, ParameterSet
from crane_lib.model.robot_description import load_mdh_table, mdh_frames
from crane_lib.reporting.tables import Comparison, ResultTable, Why, comparison_table, numbered

# a pose that spreads the links out for the picture (MDH angles, degrees): shoulder and elbow bent
PICTURE_POSE_DEG = (0.0, 50.0, 0.0, -100.0, 0.0, -40.0, 0.0)


def link_table(models: dict[str, np.ndarray]) -> pd.DataFrame:
    """Per link and model: mass, centre of mass (frame j), principal central inertias (ascending),
    the smallest eigenvalue of the pseudo-inertia. `models`: label -> 94-vector (standard order)."""
    rows = []
    for label, phi in models.items():
        margins = consistent.link_margins(phi)
        for body in consistent.link_inertials(phi):
            moments = body.principal[0]
            rows.append(
                {
                    "link": body.link,
                    "model": label,
                    "mass (kg)": body.mass,
                    "COM x (mm)": 1e3 * body.com[0],
                    "COM y (mm)": 1e3 * body.com[1],
                    "COM z (mm)": 1e3 * body.com[2],
                    "I1 (kg·m²)": moments[0],
                    "I2 (kg·m²)": moments[1],
                    "I3 (kg·m²)": moments[2],
                    "λmin(J) (kg·m²)": margins[body.link - 1],
                }
            )
    return pd.DataFrame(rows).set_index(["link", "model"]).sort_index(level=0, sort_remaining=False)


def decided_table(models: dict[str, ParameterSet], parameter_set: str = "reduced") -> pd.DataFrame:
    """The diagonal entries of the links' second moments that the base parameters decide, one row
    each, one column per model (kg·m²); a negative entry rules out every consistent link."""
    decided = consistent.decided_moments(parameter_set)
    frame = pd.DataFrame(
        {label: [d.value(base) for d in decided] for label, base in models.items()},
        index=pd.Index(
            [f"Σ{d.axis}{d.axis} of link {d.link} = {d.expression}" for d in decided],
            name="decided entry",
        ),
    )
    return frame


def negative_entries(
    models: dict[str, ParameterSet], parameter_set: str = "reduced"
) -> dict[str, list[str]]:
    """Per model, the decided entries that are not positive, as 'Σxx of link 3'."""
    decided = consistent.decided_moments(parameter_set)
    return {
        label: [f"Σ{d.axis}{d.axis} of link {d.link}" for d in decided if d.value(base) <= 0]
        for label, base in models.items()
    }


def tradeoff_frame(
    curve: list[consistent.Reconstruction], model: DynamicModel, heldout: list
) -> pd.DataFrame:
    """One row per point of `consistent.tradeoff`: the change, the distance to the prior, the links'
    masses and the pooled held-out RMSE of the changed model."""
    rows = []
    for point in curve:
        rows.append(
            {
                "change": point.change_norm,
                "distance to the prior": point.divergence,
                "heaviest link (kg)": max(b.mass for b in point.links),
                "held-out RMSE (N·m)": metrics.pooled_rmse(model, point.reproduced.values, heldout),
            }
        )
    return pd.DataFrame(rows)


def tradeoff_figure(frame: pd.DataFrame, accepted_rmse: float, metric: str, label: str):
    """The links' distance to the description (left) and the held-out RMSE (right) against the
    allowed change, one point per row of `tradeoff_frame`."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.semilogy(frame["change"], frame["distance to the prior"], "o-")
    xlabel = "change of the base parameters (" + metric + ")"
    left.set_xlabel(xlabel)
    left.set_ylabel("log-det distance of the links\nto the manufacturer's description")
    right.plot(frame["change"], frame["held-out RMSE (N·m)"], "o-", label="consistent model")
    right.axhline(accepted_rmse, color="k", lw=0.8, ls="--", label="accepted model")
    right.set_xlabel(xlabel)
    right.set_ylabel("pooled held-out RMSE, V01-V03 (N·m)")
    right.legend(fontsize=8)
    fig.suptitle(label, fontsize=9)
    fig.tight_layout()
    return fig


def _ellipsoid(center, axes, radii, n: int = 14):
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, n), np.linspace(0, np.pi, n // 2 + 1))
    unit = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], axis=-1)
    points = (unit * radii) @ axes.T + center
    return points[..., 0], points[..., 1], points[..., 2]


def ellipsoid_figure(
    models: dict[str, np.ndarray], prior: np.ndarray, label: str, pose_deg=PICTURE_POSE_DEG
):
    """One 3-D panel per model: the arm at `pose_deg` (hanging: gravity points down the page), each
    link's equivalent uniform ellipsoid (same mass and central inertia) at its centre of mass, and
    the manufacturer's description's ellipsoid as a grey wire for comparison."""
    import matplotlib.pyplot as plt

    frames = mdh_frames(load_mdh_table(), np.radians(pose_deg))
    flip = np.diag([1.0, 1.0, -1.0])  # frame 0 has gravity along +z: draw it pointing down
    origins = np.array([np.zeros(3)] + [flip @ f[:3, 3] for f in frames])
    tip = flip @ (frames[-1][:3, :3] @ np.array([0, 0, 0.15]) + frames[-1][:3, 3])
    colors = plt.get_cmap("tab10")
    fig = plt.figure(figsize=(4.2 * len(models), 4.6))
    for k, (title, phi) in enumerate(models.items(), start=1):
        ax = fig.add_subplot(1, len(models), k, projection="3d")
        ax.plot(*np.vstack([origins, tip]).T, "k-o", ms=2.5, lw=1.2)
        for j in range(1, N_LINKS + 1):
            rot, offset = flip @ frames[j - 1][:3, :3], flip @ frames[j - 1][:3, 3]
            for vector, style in ((prior, "wire"), (phi, "surface")):
                body = consistent.link_inertial(vector, j)
                moments, axes = body.principal
                radii = np.nan_to_num(body.ellipsoid_semi_axes, nan=0.0)
                x, y, z = _ellipsoid(rot @ body.com + offset, rot @ axes, radii)
                if style == "wire":
                    ax.plot_wireframe(x, y, z, color="0.55", lw=0.3)
                else:
                    ax.plot_surface(x, y, z, color=colors(j - 1), alpha=0.45, lw=0)
        reach = 0.45
        ax.set_xlim(-reach, reach), ax.set_ylim(-reach, reach), ax.set_zlim(-0.75, 0.15)
        ax.set_box_aspect((2 * reach, 2 * reach, 0.9))
        ax.set_title(title, fontsize=9)
        (
            ax.set_xlabel("x (m)", fontsize=7),
            ax.set_ylabel("y (m)", fontsize=7),
            ax.set_zlabel("up (m)", fontsize=7),
        )
        ax.tick_params(labelsize=6)
        ax.view_init(elev=12, azim=-60)
    fig.suptitle(label, fontsize=9)
    fig.tight_layout()
    return fig


def checks_frame(checks: list[ToolCheck]) -> pd.DataFrame:
    """One row per tool: its version, the file, the states and the largest relative errors."""
    return pd.DataFrame(
        [
            {
                "tool": c.tool,
                "version": c.version,
                "file": c.file.rsplit("/", 1)[-1],
                "random states": c.states,
                "M(θ), max relative error": c.inertia_error,
                "inverse dynamics, max relative error": c.torque_error,
                "within 1e-9": c.passed,
            }
            for c in checks
        ]
    ).set_index("tool")


def simulation_figure(run: Simulation, recorded: np.ndarray | None, label: str, axes=(2, 4, 6)):
    """The angles of both simulations (and the recording they were driven by, for reference)."""
    import matplotlib.pyplot as plt

    fig, panels = plt.subplots(1, len(axes), figsize=(4 * len(axes), 3.0), sharex=True)
    for panel, axis in zip(panels, axes):
        i = axis - 1
        if recorded is not None:
            panel.plot(
                run.t,
                np.degrees(recorded[: len(run.t), i]),
                color="0.7",
                lw=2.5,
                label="recorded (closed loop)",
            )
        panel.plot(
            run.t, np.degrees(run.own[:, i]), "C0-", lw=1.2, label="project: direct dynamics, RK4"
        )
        panel.plot(
            run.t, np.degrees(run.mujoco[:, i]), "C3--", lw=1.2, label="MuJoCo on the MJCF, RK4"
        )
        panel.set_title(f"axis {axis}", fontsize=9)
        panel.set_xlabel("time (s)")
    panels[0].set_ylabel("angle (deg)")
    panels[0].legend(fontsize=7)
    fig.suptitle(label, fontsize=9)
    fig.tight_layout()
    return fig


def sec_vii_e_comparisons(
    negative: list[str], decided_count: int, result: consistent.Reconstruction
) -> list[Comparison]:
    """Sec. VII-E: the paper's link-level verdict on its accepted model beside this book's."""
    verdict = (
        ("no: " + ", ".join(negative) + " negative")
        if negative
        else ("yes" if result.exact else "no")
    )
    rows = [
        Comparison(
            "can the accepted model's links be physically consistent?",
            None,
            verdict,
            paper_text="no: ZZ7 < 0 rules it out",
            why=Why.finding(
                f"the grouping decides {decided_count} diagonal entries of the links' second "
                "moments, not only link 7's (found from the base matrix); the twin's model is "
                "checked on all of them"
            ),
        ),
    ]
    if result.exact:
        rows.append(
            Comparison(
                "change needed for a consistent link-level model",
                None,
                "none: it reproduces the model exactly",
                paper_text="not computed",
                why=Why.finding("computed here (convex program, Clarabel)"),
            )
        )
    else:
        rows.append(
            Comparison(
                "smallest change for a consistent link-level model",
                None,
                f"{result.change_norm:.3g} {result.change_metric}",
                paper_text='not computed ("a reconstruction would have to move that entry and '
                're-audit")',
                why=Why.finding("computed here (convex program, Clarabel)"),
            )
        )
    return rows


# ----------------------------------------------------------------------------- captioned tables


def decided(models: dict[str, ParameterSet]) -> ResultTable:
    """The decided second-moment entries of `models` (label -> base model), captioned."""
    return numbered(
        decided_table(models),
        "Diagonal second-moment entries the base parameters decide (accepted model and the twin's "
        "truth)",
        "tab-consistent-decided",
        digits=4,
    )


def vii_e(negative: list[str], decided_count: int, result: consistent.Reconstruction):
    """Sec. VII-E's comparison table: the paper's link-level verdict beside this book's."""
    return comparison_table(
        sec_vii_e_comparisons(negative, decided_count, result),
        "Sec. VII-E: paper / this book",
        name="tab-consistent-vii-e",
    )


def links(models: dict[str, np.ndarray]) -> ResultTable:
    """The links of the description and of the reconstructions (label -> standard vector)."""
    return numbered(
        link_table(models),
        "The links of the manufacturer's description and of the two reconstructions",
        "tab-consistent-links",
        digits=4,
    )


def tradeoff(frame: pd.DataFrame) -> ResultTable:
    """The trade-off frame (`tradeoff_frame`), captioned."""
    return numbered(
        frame,
        "The trade-off: allowed change, distance of the links to the description, held-out RMSE",
        "tab-consistent-tradeoff",
        digits=4,
        index=False,
    )


def tools(checks: list[ToolCheck], states: int) -> ResultTable:
    """The tool checks (`checks_frame`), captioned with the number of random states."""
    return numbered(
        checks_frame(checks),
        "The exported files in the tools that read them (" + str(states) + " random states)",
        "tab-consistent-tools",
        digits=3,
    )
