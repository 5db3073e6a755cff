"""Chapter "A consistent link-level model, exported as URDF and MJCF" (beyond the paper; Sec. VII-E's
open question): which second-moment entries the base parameters decide, the nearest consistent
model the main job exported and what it costs on V01–V03, the links against the manufacturer's
description under both distances, the change-for-plausible-links trade-off, the equivalent
ellipsoids, and the exported files checked in Pinocchio and MuJoCo with an open-loop V01 replay.
Data: the twin's recordings, the accepted model's record (results/accepted) and the export's
(results/export).

The chapter's state is one `ExportStudy` (`study(...)`); each section is one function of it that
displays the section's tables, figures and generated sentences (`crane_lib.reporting.
consistent_model` holds the tested table and figure builders)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from crane_lib.acceptance import held_out as v
from crane_lib.acceptance.accepted import load_accepted
from crane_lib.export import artefacts, consistent, verify
from crane_lib.identification import metrics
from crane_lib.logs.preprocessing import to_even_grid
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import recording_path
from crane_lib.reporting import consistent_model as view
from crane_lib.reporting.tables import Prose, compared, comparison_table, numbered
from crane_lib.twin.truth import load_truth

TRADEOFF_FACTORS = (
    1.0,
    1.1,
    1.25,
    1.5,
    2.0,
    3.0,
)  # allowed change, in multiples of the smallest one
PICTURED_FACTOR = 2.0  # the trade-off's model drawn beside the exported one
PLAUSIBLE_DISTANCE = (
    1.0  # log-det distance to the description below which the links "look like the arm"
)
TOOL_STATES = 200  # random states at which Pinocchio and MuJoCo are set against the project's model
TOOL_SEED = 1
REPLAY_LEAD = 200  # samples of rest kept before V01's motion starts
REPLAY_SAMPLES = 2000  # samples of the recorded torque replayed open loop


@dataclass
class ExportStudy:
    """The accepted model of one condition, its exported reconstruction and the held-out records."""

    trajectory: str
    ts: float
    run: int
    profile: str
    model: DynamicModel
    accepted: object  # ParameterSet of the accepted model
    accepted_record: dict
    record: dict  # the export's record
    paths: dict  # "urdf", "mjcf", ... -> file
    result: consistent.Reconstruction
    prior: np.ndarray  # the manufacturer's description (standard parameters)
    truth: object  # the twin's true base parameters (ParameterSet)
    heldout: list  # the first execution of each validation record
    started: float = field(default_factory=time.perf_counter)
    rmse: dict = field(default_factory=dict)  # pooled held-out RMSE: "accepted", "exported"
    decided_count: int = 0  # second-moment entries the base parameters decide
    negative: dict = field(default_factory=dict)  # model label -> decided entries it makes negative
    curve: list = field(default_factory=list)  # the trade-off's reconstructions, one per factor
    tradeoff: pd.DataFrame | None = None  # the trade-off's table, once traced
    replay: tuple | None = None  # the tools' checks, V01's open-loop replay and its record

    @property
    def label(self) -> str:
        return f"{self.trajectory} at {self.ts * 1e3:g} ms"


def study(trajectory: str, ts: float, run: int, profile: str) -> ExportStudy:
    started = time.perf_counter()
    model = DynamicModel("reduced")
    accepted, accepted_record = load_accepted(trajectory, ts, run)
    record, paths = artefacts.load_export(trajectory, ts, run)
    prior, _ = consistent.prior_vector()
    heldout = [b for (_, r), b in v.heldout_bundles(profile, ts).items() if r == run]
    return ExportStudy(
        trajectory,
        ts,
        run,
        profile,
        model,
        accepted,
        accepted_record,
        record,
        paths,
        artefacts.reconstruction_of(record),
        prior,
        model.base_from_standard(load_truth()),
        heldout,
        started,
    )


def decided(s: ExportStudy) -> None:
    """The second-moment entries the base parameters decide, for the accepted model and the truth."""
    models = {"accepted": s.accepted, "twin truth": s.truth}
    table = view.decided_table(models)
    negative = view.negative_entries(models)
    s.decided_count, s.negative = len(table), negative
    display(
        numbered(
            table,
            "Diagonal second-moment entries the base parameters decide (accepted model and the twin's "
            "truth)",
            "tab-consistent-decided",
            digits=4,
        )
    )
    if negative["accepted"]:
        ours = (
            f"The accepted model makes {len(negative['accepted'])} of them negative "
            f"({', '.join(negative['accepted'])}): it has no physically consistent link-level model, and the "
            "reconstruction below has to change it. "
        )
    else:
        ours = (
            "The accepted model makes none of them negative: this necessary test passes, and only the full "
            "reconstruction can say whether every link can be consistent at once. "
        )
    truth = (
        "The twin's truth, a set of real bodies, makes none negative, as it must."
        if not negative["twin truth"]
        else f"The twin's truth makes {', '.join(negative['twin truth'])} negative, which no set of bodies can: a bug "
        "to chase."
    )
    display(
        Prose(
            f"The reduced set decides {len(table)} diagonal entries of the links' second moments. "
            + ours
            + truth
        )
    )


def cost(s: ExportStudy) -> None:
    """Sec. VII-E's question answered: the change, the held-out RMSE before and after, the audit."""
    result = s.result
    s.rmse = {
        "accepted": metrics.pooled_rmse(s.model, s.accepted.values, s.heldout),
        "exported": metrics.pooled_rmse(s.model, result.reproduced.values, s.heldout),
    }
    audit = s.record["audit"] or s.accepted_record["final_audits"][0]
    display(
        comparison_table(
            view.sec_vii_e_comparisons(s.negative["accepted"], s.decided_count, result),
            "Sec. VII-E: paper / this book",
            name="tab-consistent-vii-e",
        )
    )
    if result.exact:
        change = "The accepted model **has** an exact consistent link-level model. "
    else:
        moves = ", ".join(f"{n} by {x:+.2g}" for n, x in result.changed(4))
        change = (
            f"No consistent link-level model reproduces the accepted model exactly. The smallest change that "
            f"admits a consistent model is {result.change_norm:.3g} ({result.change_metric}); it moves {moves}. "
        )
    lam = audit["lambda_min"]
    display(
        Prose(
            change
            + f"The pooled held-out RMSE is {s.rmse['accepted']:.4g} N·m for the accepted model and "
            f"{s.rmse['exported']:.4g} N·m for the exported one ({compared(s.rmse['exported'], s.rmse['accepted'], same='the same')}); "
            f"the exported model's smallest λmin(M) over the audit's poses (seed 1) is {lam:.3g} kg·m² "
            f"({'positive definite' if lam > 0 else 'NOT positive definite'}). The links' smallest pseudo-inertia "
            f"eigenvalue is {result.link_margins.min():.3g} kg·m² against the margin {result.margin:g} kg·m²; the solver "
            f"took {sum(1 for _ in result.solves)} convex program(s), the {result.distance} distance to the description "
            f"is {result.divergence:.4g}."
        )
    )


def links(s: ExportStudy) -> None:
    """The links of the description, of the exported model and of the other distance's."""
    result = s.result
    other = "euclidean" if result.distance == "bregman" else "bregman"
    alternative = consistent.reconstruct(s.accepted, distance=other)
    shown = {
        "description": s.prior,
        f"exported ({result.distance})": result.standard.values,
        f"{alternative.distance} distance": alternative.standard.values,
    }
    display(
        numbered(
            view.link_table(shown),
            "The links of the manufacturer's description and of the two reconstructions",
            "tab-consistent-links",
            digits=4,
        )
    )
    spread = np.abs(alternative.standard.values - result.standard.values).max()
    base = np.abs(alternative.reproduced.values - result.reproduced.values).max()
    display(
        Prose(
            f"Under the {alternative.distance} distance the same model "
            f"{'has an exact' if alternative.exact else 'has a nearest'} consistent reconstruction (change "
            f"{alternative.change_norm:.3g}); the two reconstructions' base parameters agree to {base:.2g} and their link "
            f"parameters differ by up to {spread:.3g} (SI: kg, kg·m, kg·m²): that part of the links is the prior's choice, "
            "not the data's."
        )
    )


def tradeoff_figure(s: ExportStudy) -> None:
    """The trade-off curve alone (its cell carries the caption); nothing when the model is exact."""
    if s.result.exact:
        return
    s.curve = consistent.tradeoff(s.accepted, factors=TRADEOFF_FACTORS)
    s.tradeoff = view.tradeoff_frame(s.curve, s.model, s.heldout)
    label = (
        f"{s.label} (twin data, profile {s.profile}): consistent models nearest to the description"
    )
    view.tradeoff_figure(s.tradeoff, s.rmse["accepted"], s.result.change_metric, label)
    plt.show()


def tradeoff(s: ExportStudy) -> None:
    """Consistent models nearest to the description as the allowed change grows: the table."""
    if s.result.exact:
        display(
            Prose(
                "The accepted model has an exact consistent reconstruction: "
                "there is no trade-off to trace."
            )
        )
        return
    if s.tradeoff is None:
        tradeoff_figure(s)
    frame = s.tradeoff
    display(
        numbered(
            frame,
            "The trade-off: allowed change, distance of the links to the description, held-out RMSE",
            "tab-consistent-tradeoff",
            digits=4,
            index=False,
        )
    )
    plausible = frame[frame["distance to the prior"] < PLAUSIBLE_DISTANCE]
    heaviest = max(consistent.link_inertials(s.prior), key=lambda body: body.mass)
    steps = f"{TRADEOFF_FACTORS[0]:g} to {TRADEOFF_FACTORS[-1]:g} times the smallest change"
    if len(plausible):
        reached = (
            f"The links come within a log-det distance of {PLAUSIBLE_DISTANCE:g} of the description once the "
            f"change reaches {plausible['change'].iloc[0]:.3g} ({s.result.change_metric}), where the held-out "
            f"RMSE is {plausible['held-out RMSE (N·m)'].iloc[0]:.4g} N·m against the accepted model's "
            f"{s.rmse['accepted']:.4g} N·m."
        )
    else:
        reached = (
            f"Within {TRADEOFF_FACTORS[-1]:g} times the smallest change the links never come within a log-det "
            f"distance of {PLAUSIBLE_DISTANCE:g} of the description."
        )
    display(
        Prose(
            f"The allowed change runs from {steps}. At the smallest change the heaviest link weighs "
            f"{frame['heaviest link (kg)'].iloc[0]:.3g} kg (the description's heaviest, link {heaviest.link}, "
            f"{heaviest.mass:.3g} kg). " + reached
        )
    )


def ellipsoids(s: ExportStudy):
    """Each link's equivalent ellipsoid on the arm, exported model (and the trade-off's) and description."""
    kind = "exact" if s.result.exact else "nearest consistent"
    pictures = {f"exported: {kind}": s.result.standard.values}
    if s.curve:
        pictures[f"consistent, change ×{PICTURED_FACTOR:g}"] = s.curve[
            TRADEOFF_FACTORS.index(PICTURED_FACTOR)
        ].standard.values
    view.ellipsoid_figure(
        pictures,
        s.prior,
        f"{s.label}, twin data: equivalent ellipsoids of the links (coloured) and "
        "of the manufacturer's description (grey)",
    )
    plt.show()


def tools(s: ExportStudy) -> None:
    """The files in Pinocchio and MuJoCo against the project's model, and V01 replayed open loop."""
    beta = s.result.reproduced.values
    checks = [
        verify.pinocchio_check(s.paths["urdf"], s.model, beta, n=TOOL_STATES, seed=TOOL_SEED),
        verify.mujoco_check(s.paths["mjcf"], s.model, beta, n=TOOL_STATES, seed=TOOL_SEED),
    ]
    display(
        numbered(
            view.checks_frame(checks),
            f"The exported files in the tools that read them ({TOOL_STATES} random states)",
            "tab-consistent-tools",
            digits=3,
        )
    )
    grid = to_even_grid(read_raw_log(recording_path("V01", s.run)))
    start = max(int(np.argmax(np.abs(grid.dtheta_ref).max(axis=1) > 0)) - REPLAY_LEAD, 0)
    simulation = verify.simulate(
        s.paths["mjcf"], s.model, beta, grid.theta[start], grid.tau[start : start + REPLAY_SAMPLES]
    )
    s.replay = (checks, simulation, grid.theta[start:])


def replay_figure(s: ExportStudy) -> None:
    """V01's recorded torque replayed open loop on the exported model (after `tools`)."""
    _, simulation, recorded = s.replay
    view.simulation_figure(
        simulation,
        recorded,
        f"V01 execution {s.run} (twin data): open-loop replay of "
        "its recorded torque on the exported model",
    )
    plt.show()


def replay_sentence(s: ExportStudy) -> Prose:
    """How closely the tools agree and how far the open-loop replay drifts (after `tools`)."""
    checks, simulation, recorded = s.replay
    within = "both within" if all(c.passed for c in checks) else "NOT within"
    drift = np.abs(simulation.own - recorded[: len(simulation.t)]).max()
    step = simulation.t[1] - simulation.t[0]
    return Prose(
        f"At {TOOL_STATES} random states the largest relative error is Pinocchio "
        f"{max(checks[0].inertia_error, checks[0].torque_error):.1e}, MuJoCo "
        f"{max(checks[1].inertia_error, checks[1].torque_error):.1e} ({within} {verify.TOLERANCE:g}). Over "
        f"{simulation.t[-1]:.1f} s of simulation (RK4, step {step * 1e3:g} ms) the two integrations differ by at most "
        f"{np.degrees(simulation.max_difference):.1e}°, while the open-loop arm drifts up to {np.degrees(drift):.3g}° "
        "from the recording."
    )


def run_time(s: ExportStudy) -> Prose:
    return Prose(
        f"*Chapter computed in {time.perf_counter() - s.started:.0f} s, {time.process_time():.0f} s of CPU "
        f"with the imports (profile `{s.profile}`).*"
    )
