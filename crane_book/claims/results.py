"""The build's results as the claims read them, and the few helpers the chapters' claims share.

`Results` gives lazy, shared access to the build's records (each read or computed once per
evaluation of all claims); the `*_FILES` patterns are the claims' `inputs`, the files whose
content keys them.
"""

from __future__ import annotations

import functools
import os
from types import SimpleNamespace

import numpy as np

from crane_lib.acceptance import selection
from crane_lib.formatting import significant
from crane_lib.identification import model_classes
from crane_lib.paper_numbers import paper
from crane_lib.parameter_sets import read_conditions
from crane_lib.records import read_json_record


def current_profile() -> str:
    """The build's profile ($CRANE_PROFILE, full by default)."""
    return os.environ.get("CRANE_PROFILE", "full")


# the representative condition whose accepted model the pipeline writes (trajectory, ts, run)
REPRESENTATIVE = ("AG02", 0.040, 1)


class Results:
    """Lazy, shared access to the build's records for the claim functions (each computed once)."""

    TABLE_III = model_classes.TABLE_III_TRAJECTORIES
    TABLE_VIII = selection.TABLE_VIII_TRAJECTORIES
    HELD_OUT = ("V01", "V02", "V03")

    @functools.cached_property
    def model(self):
        """The reduced dynamic model the claims evaluate parameters with."""
        from crane_lib.model.dynamics import DynamicModel

        return DynamicModel("reduced")

    @functools.cached_property
    def conditions(self) -> list[dict]:
        """Every OLS condition record of the build that holds an estimate."""
        from crane_lib.identification import condition

        records = condition.load_condition_records(profile=current_profile())
        return [r for r in records if r.get("ols") is not None]

    @functools.cached_property
    def clie_records(self) -> list[dict]:
        """The CLIE sweep's records of the first executions (fast route)."""
        from crane_lib.identification import clie

        return [r for r in clie.load_records("fast", current_profile()) if r["run"] == 1]

    @functools.cached_property
    def heldout(self) -> list:
        """The held-out records V01-V03 at 40 ms, or [] when this build lacks one."""
        from crane_lib.identification import condition

        if not all(condition.recording_path(v).exists() for v in self.HELD_OUT):
            return []
        return [condition.condition_bundle(v, 0.040) for v in self.HELD_OUT]

    @functools.cached_property
    def clouds(self):
        """The OLS, SDP and CLIE parameter clouds of the CLIE sweep (chapter 07), or None."""
        return selection.StageClouds.from_records(self.clie_records) if self.clie_records else None

    @functools.cached_property
    def structural(self) -> tuple[list[str], float | None]:
        """The structural rule's trajectory(ies) and interval (chapter 07)."""
        from crane_lib.excitation import design
        from crane_lib.excitation.commands import segment_statistics

        specs = design.trajectory_specs()
        named = selection.structural_candidates(specs)
        ramps = np.concatenate(
            [segment_statistics(c).ramps_s for c in design.generate_identification().values()]
        )
        intervals = sorted(
            {0.010, 0.020, 0.040, 0.080}
            | ({ts for _, ts in self.clouds.labels} if self.clouds else set())
        )
        return named, selection.coarsest_adequate_interval(ramps, intervals)

    @functools.cached_property
    def candidate_index(self) -> int | None:
        """Where the structural rule's condition lies in the clouds, or None."""
        named, ts = self.structural
        if len(named) != 1 or ts is None or self.clouds is None:
            return None
        try:
            return self.clouds.index_of(named[0], ts)
        except (KeyError, ValueError, LookupError):
            return None

    @functools.cached_property
    def accepted(self) -> dict | None:
        """The accepted model's record (results/accepted, the pipeline's Algorithm 1 on the
        representative condition through `accept_recording`), or None when this build has none."""
        from crane_lib.acceptance.accepted import accepted_paths

        _, json_path = accepted_paths(*REPRESENTATIVE)
        return read_json_record(json_path) if json_path.is_file() else None

    def condition(self, trajectory: str, ts: float, run: int = 1) -> dict | None:
        """One OLS condition record of the build, or None."""
        for r in self.conditions:
            if r["trajectory"] == trajectory and np.isclose(r["ts"], ts) and int(r["run"]) == run:
                return r
        return None

    @functools.cached_property
    def folded_population(self):
        """Where the uniform draw's violations of the first executions' OLS estimates lie (dense
        audit, seed 1), pooled as chapter 06 pools them, from the audits record (which counts them
        per estimate). None without records."""
        from crane_lib.acceptance import folded

        if not self.ols_audits or any(a.in_folded_region is None for _, a in self.ols_audits):
            return None  # no audits record, or one written before it counted the region
        return folded.pooled(
            folded.Concentration(int(a.uniform_violations), int(a.in_folded_region))
            for r, a in self.ols_audits
            if int(r["run"]) == 1 and not a.passed
        )

    @functools.cached_property
    def table_viii_gains(self) -> dict[str, float] | None:
        """CLIE's held-out gain over its start (%) per Table VIII trajectory at 40 ms, the row
        chapter 07 computes (`stage_scores`); None without CLIE or held-out records."""
        from crane_lib.acceptance.selection import stage_scores

        if not self.clie_records or not self.heldout:
            return None
        by_name = {r["trajectory"]: r for r in self.clie_records if np.isclose(r["ts"], 0.040)}
        return {
            t: stage_scores(by_name[t], self.model, self.heldout)["CLIE gain over its start (%)"]
            for t in self.TABLE_VIII
            if t in by_name
        }

    @functools.cached_property
    def candidates(self):
        """κ and pooled held-out RMSE of the OLS estimate of every candidate at 40 ms (chapter 08's
        `candidate_heldout`); None without held-out records."""
        from crane_lib.acceptance import held_out as v
        from crane_lib.identification import condition

        if not self.heldout:
            return None
        return v.candidate_heldout(
            self.model,
            condition.load_condition_records(profile=current_profile()),
            self.heldout,
            0.040,
            1,
        )

    @functools.cached_property
    def repeats_frame(self):
        """The repeats sweep's records of this profile as one frame, or None."""
        from crane_lib.acceptance import reproducibility as repro

        records = repro.profile_records(read_conditions(f"repeats_{current_profile()}.csv"))
        return repro.records_frame(records) if records else None

    @functools.cached_property
    def run_to_run_spread(self) -> float | None:
        """Held-out RMSE spread (%) over the representative trajectory's executions at 40 ms."""
        from crane_lib.acceptance import reproducibility as repro

        if self.repeats_frame is None:
            return None
        table = repro.run_to_run_table(self.repeats_frame)
        return (
            float(table.loc[REPRESENTATIVE[0], "spread (%)"])
            if REPRESENTATIVE[0] in table.index
            else None
        )

    @functools.cached_property
    def ols_audits(self) -> list[tuple[dict, object]]:
        """Every OLS estimate of the build audited over Θ (dense set, seed 1), as chapter 06 does:
        (condition record, audit summary) pairs, from the main job's record of them
        (`acceptance.screen.audit_estimates`); empty when this build has none."""
        from crane_lib.acceptance.audit import OLS_AUDITS_PATH

        if not OLS_AUDITS_PATH.is_file():
            return []
        summaries = {
            (a["trajectory"], a["ts"], a["run"]): a
            for a in read_json_record(OLS_AUDITS_PATH)["audits"]
        }
        out = []
        for r in self.conditions:
            a = summaries.get((r["trajectory"], r["ts"], r["run"]))
            if a is None:
                continue
            out.append(
                (
                    r,
                    SimpleNamespace(
                        passed=a["passed"],
                        lambda_min=a["lambda_min"],
                        n_violations=a["n_violations"],
                        uniform_violations=a.get("uniform_violations"),
                        in_folded_region=a.get("in_folded_region"),
                    ),
                )
            )
        return out


def change_words(ratio: float, lower_is_better: bool = True) -> str:
    """A relative change of an error in words: '0.96 % worse' or '0.80 % better' (from the
    ratio new/old)."""
    percent = 100.0 * (ratio - 1.0)
    better = percent < 0 if lower_is_better else percent > 0
    return f"{num(abs(percent), 2)} % {'better' if better else 'worse'}" if percent else "unchanged"


def pct(x: float, digits: int = 3) -> str:
    """A percentage to `digits` significant figures: '1.25 %'."""
    return f"{significant(x, digits)} %"


def num(x: float, digits: int = 3) -> str:
    """A number to `digits` significant figures."""
    return significant(x, digits)


# the files the claims read (their `inputs`), relative to the repository root
# (a tuple stands for its patterns: a profile's list decides which records a claim reads)
CONDITION_FILES = ("results/conditions/*.json", "papermill_params/ols_sdp_*.csv")
CLIE_FILES = ("results/clie/fast/*.json", "papermill_params/clie_*.csv")
HELD_OUT_FILES = "results/recordings/V0[123]_run1.npz"
ACCEPTED_FILES = "results/accepted/*"
OLS_AUDIT_FILES = "results/audits/*.json"
RESCUE_FILES = "results/rescues/*.json"
TABLE_III_FILES = tuple(f"results/recordings/{t}_run1.npz" for t in Results.TABLE_III)
TRAJECTORY_FILES = "trajectories/*.txt"
KT_FILES = ("results/kt_draws/*/*.json", "papermill_params/kt_draws_*.csv")
RECORDINGS_LIST_FILES = "papermill_params/recordings_*.csv"  # each profile's executions
REPEAT_FILES = (
    "results/repeats/*.json",
    "papermill_params/repeats_*.csv",
    RECORDINGS_LIST_FILES,
)
ALL_HELD_OUT_FILES = "results/recordings/V0[123]_run*.npz"
AG02_FILES = "results/recordings/AG02_run1.npz"


def margin_reason(results: Results, over_theta: bool) -> str:
    """The computed part of the two population reasons: at which intervals the estimates fail
    (the routing test, or the audit over Θ), and where the twin's margins over Θ sit against the
    paper's accepted margin."""
    audits = results.ols_audits
    theta = np.array([a.lambda_min for _, a in audits])
    by_ts: dict[int, list[int]] = {}
    for r, a in audits:
        failed = not a.passed if over_theta else not r["pd_visited"]
        counts = by_ts.setdefault(round(r["ts"] * 1e3), [0, 0])
        counts[0] += int(failed)
        counts[1] += 1
    failing = ", ".join(f"{n} of {m} at {ts} ms" for ts, (n, m) in sorted(by_ts.items()))
    where = "over Θ" if over_theta else "where visited"
    accepted = paper("audit_min_eig_accepted")
    median = float(np.median(theta))
    inside = (
        f", {num(median / accepted.value_hi, 2)} times the largest margin of the paper's "
        "accepted model: the typical twin estimate sits further inside the PD set"
        if median > accepted.value_hi
        else ""
    )
    return (
        f"Non-PD {where}: {failing}. The median OLS margin over Θ is {num(median)} kg·m² (the "
        "paper's "
        f"accepted model: {accepted.text().replace('^2', '²')}){inside}."
    )


def rescue_reason(results: Results) -> str:
    """The computed mechanism behind every rescue difference: how far the representative CLIE
    solution lies outside the PD set against the paper's, and how far the rescue (which minimizes
    the parameter change, not the prediction error) had to move it."""
    from crane_lib.acceptance import held_out
    from crane_lib.model.parameters import unit_of

    record = results.accepted
    first = min(record["first_audits"], key=lambda a: a["lambda_min"])
    found = first["violations"]
    n = sum(found.values()) if isinstance(found, dict) else int(found)
    moves = held_out.rescue_moves(record)
    beyond = int((moves["change / SE"].abs() > 1).sum())
    top = moves["change / SE"].head(2)
    inertial = moves[[unit_of(p) == "kg·m^2" for p in moves.index]]["change"].abs()
    largest = f"{num(inertial.max())} kg·m²" if len(inertial) else "none"
    return (
        f"the twin's CLIE solution lies much further outside the PD set than the arm's ({n:,} "
        f"violating audit configurations and λmin {num(first['lambda_min'])} kg·m², against the "
        f"paper's {paper('clie_solution_violations').text()}), so the rescue, which minimizes the "
        f"parameter change and not the prediction error, moves {beyond} entries by more than one "
        "OLS standard error ("
        + ", ".join(f"{p} by {x:+.1f}" for p, x in top.items())
        + f"; largest inertia change {largest}, the paper's at most "
        f"{paper('rescue_max_entry_change').text().replace('^2', '²')})."
    )
