"""Chapter "The all-pose PD audit, the rescue, and what an infeasible model does" (paper Sec.
IV-C, V-A, VI-E, VII-C, Appendix D-E, D-G; Tables IX, X, XVIII): the tables and the figure of
the audit study's record (results/audit_study, `acceptance.all_pose`, written by the
pipeline's data step), which holds the accepted record's model, rescue and audits, the
fresh-set rescues, every model under both audits and every seed, the manufacturer's box, Table
X, where the violations lie and the certified checks. This module reads that record into a
frozen `AuditStudy` and formats it; it computes and writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import all_pose
from crane_lib.errors import InputError
from crane_lib.paper_numbers import paper
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import (
    Comparison,
    Count,
    Why,
    compared,
    comparison_table,
    numbered,
    significant,
)

EPS, EPS_EARLIER = all_pose.EPS, all_pose.EPS_EARLIER
TRUTH = all_pose.TRUTH
REPRODUCTION, CONDITION_OLS = all_pose.REPRODUCTION, all_pose.CONDITION_OLS
SWEEP, CONSTRUCTED = all_pose.SWEEP, all_pose.CONSTRUCTED
FRESH, EARLIER = all_pose.FRESH, all_pose.EARLIER
MAKE_STEP = accepted_stage.MAKE_STEP  # what writes the records this view reads
GRID, UNIFORM, FOLDED = all_pose.GRID, all_pose.UNIFORM, all_pose.FOLDED
CERTIFIED = all_pose.CERTIFIED


def sci(x, digits: int = 3) -> str:
    """A number to `digits` significant digits, as every reason of the chapter writes it."""
    return significant(x, digits)


def degrees(pose) -> str:
    """A pose in degrees, '(0.0, 12.5, ...)°'."""
    return "(" + ", ".join("%.1f" % a for a in np.rad2deg(pose)) + ")°"


def _table(rows: list[Comparison], caption: str, **options) -> object:
    """comparison_table with a row's reason dropped where the row agrees (it needs none)."""
    for row in rows:
        if row.why is not None and row.agreement() is not None:
            row.why = None
    return comparison_table(rows, caption, **options)


@dataclass(frozen=True)
class Audit:
    """One audit (11) as the record holds it: verdict, λmin (kg·m²), violations, worst pose."""

    passed: bool
    lambda_min: float
    violations: dict
    pose_counts: dict
    worst_pose: np.ndarray
    worst_component: str
    worst_poses: np.ndarray
    seed: int | None

    @classmethod
    def of(cls, d: dict) -> Audit:
        """The audit of a record entry (`AuditResult.to_dict`)."""
        worst = np.array([w["pose_rad"] for w in d.get("worst") or []], dtype=float)
        return cls(
            bool(d["passed"]),
            float(d["lambda_min"]),
            {k: int(v) for k, v in d["violations"].items()},
            {k: int(v) for k, v in d["pose_counts"].items()},
            np.asarray(d["worst_pose_rad"], dtype=float),
            d["worst_component"],
            worst,
            d.get("seed"),
        )

    @property
    def n_violations(self) -> int:
        """Violating configurations, all components."""
        return int(sum(self.violations.values()))

    @property
    def n_poses(self) -> int:
        """Configurations audited, all components."""
        return int(sum(self.pose_counts.values()))


@dataclass(frozen=True)
class AuditStudy:
    """The audit study's record of one condition, read (module docstring)."""

    record: dict
    path: Path
    audits: dict  # (model, kind, seed) -> Audit
    sweep: pd.DataFrame  # every OLS estimate of the build, audited (first seed)

    @property
    def trajectory(self) -> str:
        """The condition's trajectory."""
        return self.record["trajectory"]

    @property
    def ts(self) -> float:
        """The condition's sampling interval, s."""
        return self.record["ts"]

    @property
    def label(self) -> str:
        """The condition in words ("AG02 at 40 ms")."""
        return self.record["label"]

    @property
    def case(self) -> str:
        """How the study came by the model it rescues (REPRODUCTION or a substitute)."""
        return self.record["case"]

    @property
    def choice(self) -> dict:
        """What the study recorded of its choice of a substitute."""
        return self.record["choice"]

    @property
    def names(self) -> dict:
        """The models' names in the tables."""
        return self.record["names"]

    @property
    def seeds(self) -> tuple:
        """The audit seeds."""
        return tuple(self.record["seeds"])

    @property
    def raw_label(self) -> str:
        """Name of the condition's raw OLS estimate."""
        return self.names["raw"]

    @property
    def clie_label(self) -> str:
        """Name of the condition's CLIE solution."""
        return self.names["clie"]

    @property
    def bad_label(self) -> str:
        """Name of the model the chapter rescues."""
        return self.names["bad"]

    @property
    def submitted_name(self) -> str:
        """Name of the rescue with the earlier version's margin."""
        return self.names["submitted"]

    @property
    def rescued_name(self) -> str:
        """Name of the rescued model of the model the chapter rescues."""
        return self.names["rescued"]

    @property
    def accepted_name(self) -> str:
        """Name of the accepted model."""
        return self.names["accepted"]

    @property
    def accepted_record(self) -> dict | None:
        """What the accepted record holds of the verdict, the rescue and the first audits."""
        return self.record["record"]

    def vector(self, key: str) -> np.ndarray | None:
        """A parameter vector of the record ("truth", "accepted", "rescued", "raw", "bad")."""
        found = self.record[key]
        if isinstance(found, dict):
            found = found["values"]
        return None if found is None else np.asarray(found, dtype=float)

    @property
    def bad_se(self) -> np.ndarray:
        """The OLS standard errors of the model the chapter rescues."""
        return np.asarray(self.record["bad"]["std_errors"], dtype=float)

    def rescue(self, key: str) -> dict:
        """A fresh-set rescue (FRESH or EARLIER) as recorded: passes, convergence, projection."""
        return self.record["rescues"][key]

    def rescued(self, key: str) -> np.ndarray | None:
        """The model a fresh-set rescue returned (None when it returned none)."""
        entry = self.rescue(key)
        if entry["failure"] is not None or entry.get("projection") is None:
            return None
        return np.asarray(entry["projection"]["values"], dtype=float)

    @property
    def submitted(self) -> np.ndarray | None:
        """The model rescued with ε = 0 (None when that rescue failed)."""
        return self.rescued(EARLIER)

    def dense(self, name: str) -> list[Audit]:
        """The dense audits of one model, one per seed."""
        return [self.audits[(name, "dense", s)] for s in self.seeds]

    def first_audit(self) -> Audit:
        """The dense audit of the model the chapter rescues, first seed."""
        return self.audits[(self.bad_label, "dense", self.seeds[0])]

    @property
    def why(self) -> Why:
        """The reason every comparison of the rescued model shares: which model it is."""
        if self.case == REPRODUCTION:
            one = self.first_audit()
            return Why.twin(
                "a different estimate: the twin's CLIE solution violates at %s configurations "
                "(λmin %s kg·m², seed %d), further outside the PD set than the arm's, so its "
                "rescue has more to move and its passes and appended configurations differ"
                % (format(one.n_violations, ","), sci(one.lambda_min), one.seed)
            )
        if self.case in (CONDITION_OLS, SWEEP):
            return Why.twin(
                "the rescued model is %s, a substitute for the CLIE solution of %s"
                % (self.bad_label, self.label)
            )
        return Why.reconstruction("a constructed non-PD case, not a reproduction")


def study(trajectory: str, ts: float, run: int, directory=None) -> AuditStudy:
    """The audit study's record of the condition (results/audit_study), read; a missing record
    names the file and the step that writes it."""
    path = all_pose.record_path(trajectory, ts, run, directory)
    if not path.is_file():
        raise InputError(
            str(path), "no audit study of the condition", "the record written by " + MAKE_STEP
        )
    record = read_json_record(path)
    audits = {(a["model"], a["kind"], int(a["seed"])): Audit.of(a) for a in record["audits"]}
    sweep = pd.DataFrame(record["sweep"], columns=SWEEP_COLUMNS + ["ts", "worst_pose_rad"])
    return AuditStudy(record, path, audits, sweep)


# ----------------------------------------------------------------------------- the pose sets


def pose_sets_against_paper(s: AuditStudy) -> object:
    """The dense and the sparse audit's pose sets against the paper's counts."""
    p = s.record["pose_sets"]
    d, sp = p["dense"], p["sparse"]
    rows = [
        Comparison("dense: structured grid", "audit_grid_count", d[GRID]),
        Comparison("dense: uniform draw over Θ", "audit_uniform_count", d[UNIFORM]),
        Comparison("dense: folded-arm draw", "audit_focused_count", d[FOLDED]),
        Comparison("dense: total", "audit_pose_count", p["dense_total"]),
        Comparison(
            "folded region, share of Θ by volume",
            "folded_region_volume_share",
            100 * p["folded_volume_share"],
        ),
        Comparison("sparse: grid", "earlier_grid_count", sp[GRID]),
        Comparison("sparse: uniform draw", "earlier_uniform_count", sp[UNIFORM]),
        Comparison("sparse: total", "earlier_audit_total", p["sparse_total"]),
    ]
    return _table(
        rows,
        "The audit's pose sets (Sec. VI-E, Appendix D-G)",
        label="configurations",
        name="tab-audit-pose-sets",
    )


# ------------------------------------------------------------------ the representative condition


def condition_table(s: AuditStudy) -> object:
    """The condition's raw OLS estimate and the twin's truth, audited over Θ."""

    def column(a):
        return [a.passed, a.lambda_min, a.n_violations, degrees(a.worst_pose)]

    first = s.seeds[0]
    index = pd.Index(
        ["PD over Θ", "λmin over Θ (kg·m²)", "violating configurations", "worst pose"],
        name="audit, seed %d" % first,
    )
    frame = pd.DataFrame(
        {
            s.raw_label: column(s.audits[(s.raw_label, "dense", first)]),
            TRUTH: column(s.audits[(TRUTH, "dense", first)]),
        },
        index=index,
    )
    return numbered(
        frame,
        "The raw OLS estimate of %s and the twin's true parameters, audited over Θ (twin)"
        % s.label,
        "tab-audit-condition",
        digits=3,
    )


# ----------------------------------------------------------------------------- visited against Θ

SWEEP_COLUMNS = [
    "trajectory",
    "Ts (ms)",
    "run",
    "λmin visited",
    "PD visited",
    "λmin over Θ",
    "PD over Θ",
    "violations",
]


def sweep_table(s: AuditStudy) -> object:
    """The audited OLS estimates, one row each."""
    shown = s.sweep[SWEEP_COLUMNS].set_index(["trajectory", "Ts (ms)", "run"])
    return numbered(
        shown,
        "Every OLS estimate of this build: PD at the configurations its record "
        "visits against PD over Θ (seed %d; twin)" % s.seeds[0],
        "tab-audit-visited-theta",
        digits=3,
    )


def visited_counts(s: AuditStudy) -> dict:
    """Estimates (n), PD visited, PD over Θ, routing-only and reverse mismatches."""
    sw = s.sweep
    if not len(sw):
        return dict(n=0, visited=0, theta=0, routing_only=0, reverse=0)
    visited, theta = sw["PD visited"].astype(bool), sw["PD over Θ"].astype(bool)
    return dict(
        n=len(sw),
        visited=int(visited.sum()),
        theta=int(theta.sum()),
        routing_only=int((visited & ~theta).sum()),
        reverse=int((~visited & theta).sum()),
    )


def visited_against_paper(s: AuditStudy, profile: str) -> object:
    """The routing test's verdicts against the audit's, beside the paper's counts."""
    c = visited_counts(s)
    whole = paper("identification_condition_count").value
    ours_non_pd = 1 - c["theta"] / c["n"] if c["n"] else np.nan
    paper_non_pd = 1 - paper("ols_pd_domain_count").value / whole
    cleaner = compared(ours_non_pd, paper_non_pd, "less clean", "cleaner", "as clean as")
    why = Why.twin(
        "%.0f %% of this build's OLS estimates are non-PD over Θ against the paper's %.0f %%: "
        "the twin's estimates are %s than the arm's"
        % (100 * ours_non_pd, 100 * paper_non_pd, cleaner)
    )
    if c["n"] != whole:
        why = why + Why.profile(
            "profile `%s` has %d of the paper's %g conditions" % (profile, c["n"], whole)
        )
    of_all = dict(paper_whole="identification_condition_count", why=why)
    rows = [
        Comparison(
            "OLS estimates",
            "identification_condition_count",
            c["n"],
            why=why if c["n"] != whole else None,
        ),
        Comparison(
            "PD at the configurations their record visits",
            "ols_pd_trajectory_count",
            Count(c["visited"], c["n"]),
            **of_all,
        ),
        Comparison("PD over Θ", "ols_pd_domain_count", Count(c["theta"], c["n"]), **of_all),
        Comparison(
            "pass the routing test, fail over Θ",
            "ols_pass_routing_fail_audit",
            Count(c["routing_only"], c["n"]),
            **of_all,
        ),
        Comparison(
            "PD over Θ but not on their own record",
            "ols_reverse_mismatch_count",
            Count(c["reverse"], c["n"]),
            **of_all,
        ),
    ]
    return _table(
        rows,
        "PD where the data were taken against PD over Θ (Sec. VI-E)",
        label="OLS estimates",
        name="tab-audit-visited-theta-paper",
    )


# ----------------------------------------------------------------------------- the rescue

PASS_KEYS = (
    "pass",
    "constraint_poses",
    "active_poses",
    "lambda_min_on_set",
    "lambda_min_check",
    "violators",
    "appended",
)


def rescue_labels(s: AuditStudy) -> dict:
    """The rescues' names in the tables: the record's, FRESH and EARLIER."""
    fresh = "re-run from the fresh set (D-I)" if s.case == REPRODUCTION else "fresh set"
    return {
        "record": "ε = %g, the accepted record (Θr seeded with the audit's worst poses)" % EPS,
        FRESH: "ε = %g, %s" % (EPS, fresh),
        EARLIER: "ε = %g, fresh set" % EPS_EARLIER,
    }


def rescue_passes(s: AuditStudy) -> object:
    """Each rescue's passes: in a reproduction the accepted record's own first, then the
    fresh-set rescues with ε and with the earlier version's margin."""
    labels = rescue_labels(s)
    runs = {}
    if s.case == REPRODUCTION:
        runs[labels["record"]] = s.accepted_record["rescue"]["passes"]
    for key in (FRESH, EARLIER):
        if s.rescued(key) is not None:
            runs[labels[key]] = s.rescue(key)["passes"]
    frame = pd.DataFrame(
        [
            {"rescue": name, **{k: p[k] for k in PASS_KEYS}}
            for name, passes in runs.items()
            for p in passes
        ]
    )
    return numbered(
        frame.set_index(["rescue", "pass"]),
        "The rescue's passes for %s (twin)" % s.bad_label,
        "tab-audit-rescue-passes",
        digits=3,
    )


def appended(s: AuditStudy, key: str) -> int:
    """Configurations a fresh-set rescue appended to Θr before its last pass."""
    return sum(p["appended"] for p in s.rescue(key)["passes"][:-1])


def rescue_against_paper(s: AuditStudy) -> object:
    """The rescues' passes against D-E's seeded rescue and D-I's fresh-set re-run."""
    passes = [len(s.rescue(k)["passes"]) for k in (EARLIER, FRESH) if s.rescued(k) is not None]
    rows = []
    if s.case == REPRODUCTION:
        one = s.first_audit()
        deeper = Why.twin(
            "a different estimate: the twin's CLIE solution reaches λmin = %s kg·m² (at a %s "
            "configuration)" % (sci(one.lambda_min), one.worst_component)
        )
        own = len(s.accepted_record["rescue"]["passes"])
        passes.append(own)
        rows += [
            Comparison(
                "violating audit configurations of the CLIE solution (seed %d)" % one.seed,
                "clie_solution_violations",
                one.n_violations,
                why=deeper,
            ),
            Comparison(
                "passes, the accepted record's rescue (seeded)",
                "rescue_passes_seeded",
                own,
                why=s.why,
            ),
        ]
    if s.rescued(FRESH) is not None:
        rows += [
            Comparison(
                "passes, " + rescue_labels(s)[FRESH],
                "rescue_passes_unseeded",
                len(s.rescue(FRESH)["passes"]),
                why=s.why,
            ),
            Comparison(
                "configurations appended, the same run",
                "rescue_appended_unseeded",
                appended(s, FRESH),
                why=s.why,
            ),
        ]
    if passes:
        rows.append(
            Comparison(
                "passes at most, every rescue", "rescue_max_passes", max(passes), bound="upper"
            )
        )
    return _table(
        rows,
        "The rescue against the paper's seeded rescue (D-E) and its fresh-set re-run (D-I)",
        name="tab-audit-rescue-paper",
    )


# ----------------------------------------------------------------------------- Table IX


def table_ix(s: AuditStudy) -> object:
    """Each model under both audits and every seed: verdict, violations and λmin."""

    def cell(a):
        verdict = "PD" if a.passed else "non-PD, {:,}".format(a.n_violations)
        return "%s | %.3g" % (verdict, a.lambda_min)

    frame = pd.DataFrame(
        [
            {
                "model": n,
                "audit": k,
                **{"seed %d" % seed: cell(s.audits[(n, k, seed)]) for seed in s.seeds},
            }
            for n in s.record["models"]
            for k in all_pose.KINDS
        ]
    )
    return numbered(
        frame.set_index(["model", "audit"]),
        "Verdict (with the "
        "number of violating configurations) | λmin in kg·m², per model, audit and "
        "seed (twin)",
        "tab-audit-table-ix",
        paper="IX",
    )


def seeds_where(s: AuditStudy, name: str, kind: str, passed: bool) -> int:
    """Seeds on which the audit `kind` of model `name` passes (or fails, `passed` False)."""
    return sum(s.audits[(name, kind, seed)].passed == passed for seed in s.seeds)


def _where_minimum(s: AuditStudy, name: str) -> str:
    """Where a model's dense audits find their minimum, from the record: the components and the
    range of λmin over the seeds."""
    found = s.dense(name)
    parts = sorted({a.worst_component for a in found})
    lams = [a.lambda_min for a in found]
    return "its minimum lies on the %s component on every seed (λmin %s to %s kg·m²)" % (
        ", ".join(parts),
        sci(min(lams)),
        sci(max(lams)),
    )


def _table_ix_why(s: AuditStudy, name: str, rounding: bool) -> Why:
    """The reason of a Table IX row about model `name`: where its minimum lies, which every seed
    shares when it is on the grid (a property of the twin's models, not of the draws)."""
    if s.case != REPRODUCTION:
        return s.why
    said = _where_minimum(s, name)
    if rounding:
        return Why.twin(
            "the ε = 0 rescue pins λmin at zero on the corners of Θ it constrains, which the grid "
            "contains; " + said + ", a rounding-level value whose sign floating point decides, "
            "the same on every seed, so no draw changes the verdict"
        )
    return Why.twin(
        "the accepted model's smallest eigenvalue sits at a corner of Θ (the elbow folded "
        "back at the domain's edge) that the grid contains and every seed evaluates; "
        + said
        + ", so the margin does not depend on the draw as the arm's did"
    )


def table_ix_against_paper(s: AuditStudy) -> object:
    """Table IX's findings against the paper's."""
    n = len(s.seeds)
    acc_lams = np.array([a.lambda_min for a in s.dense(s.accepted_name)])
    ratio = s.record["folded_rate_ratio"]
    sub_why = _table_ix_why(s, s.submitted_name, True) if s.submitted is not None else s.why
    acc_why = _table_ix_why(s, s.accepted_name, False)

    def of_seeds(quantity, number_id, part, why=sub_why):
        return Comparison(
            quantity, number_id, Count(part, n), paper_whole="audit_seed_count", why=why
        )

    both = sum(
        s.audits[(s.accepted_name, "dense", seed)].passed
        and s.audits[(s.accepted_name, "sparse", seed)].passed
        for seed in s.seeds
    )
    rows = []
    if s.submitted is not None:
        sub = s.submitted_name
        rows += [
            of_seeds(
                "seeds calling the ε = 0 model PD, sparse audit",
                "submitted_sparse_pd_seeds",
                seeds_where(s, sub, "sparse", True),
            ),
            of_seeds(
                "seeds finding the ε = 0 model non-PD, dense audit",
                "submitted_dense_nonpd_seeds",
                seeds_where(s, sub, "dense", False),
            ),
            Comparison(
                "violating configurations of the ε = 0 model, dense",
                "submitted_violation_count",
                [a.n_violations for a in s.dense(sub)],
                digits=3,
                why=sub_why,
            ),
        ]
    rows += [
        of_seeds(
            "seeds on which the accepted model passes both audits",
            "accepted_pass_seeds",
            both,
            acc_why,
        ),
        Comparison(
            "λmin of the accepted model over the seeds, dense",
            "audit_min_eig_accepted",
            acc_lams,
            why=acc_why
            if s.case != REPRODUCTION
            else Why.twin(
                "a different model: the accepted model is the rescue of the twin's CLIE "
                "solution, which lies further outside the PD set than the arm's (see the rescue "
                "above), and the rescue's margin ε sets where its minimum lands; "
                + _where_minimum(s, s.accepted_name)
            ),
        ),
        Comparison(
            "max/min of that margin over the seeds",
            "audit_margin_seed_factor",
            acc_lams.max() / acc_lams.min(),
            why=acc_why,
        ),
    ]
    if s.submitted is not None:
        rows.append(
            Comparison(
                "folded-block over uniform violation rate, ε = 0 model",
                "oversample_rate_ratio_submitted",
                ratio[s.submitted_name],
                why=sub_why,
            )
        )
    spread = (
        Why.twin(
            "the twin's non-PD models lose definiteness over a wide part of Θ, not only where M "
            'is smallest (section "Where the violations lie" maps them), so the folded block '
            "finds them at about the uniform rate"
        )
        if s.case == REPRODUCTION
        else s.why
    )
    bad_why = (
        spread
        if s.bad_label == s.raw_label
        else spread + ("the paper's ratio is of its raw OLS estimate; here of " + s.bad_label)
    )
    rows.append(
        Comparison(
            "folded-block over uniform violation rate, " + s.bad_label,
            "oversample_rate_ratio_ols",
            ratio[s.bad_label],
            why=bad_why,
        )
    )
    return _table(
        rows,
        "What the paper found with Table IX, and this book (a dash: "
        "neither block finds a violation)",
        name="tab-audit-table-ix-paper",
    )


# ----------------------------------------------------------------------------- Table XVIII


def moved(s: AuditStudy) -> tuple[np.ndarray, np.ndarray]:
    """The rescue's change of every entry and the entries it moved (at least a tenth of the
    largest change), largest first."""
    delta = s.vector("rescued") - s.vector("bad")
    entries = np.flatnonzero(np.abs(delta) >= 0.1 * np.abs(delta).max())
    return delta, entries[np.argsort(-np.abs(delta[entries]))]


def table_xviii(s: AuditStudy) -> object:
    """The entries the rescue moved, against their OLS standard errors and the truth."""
    delta, entries = moved(s)
    before, after = s.vector("bad")[entries], s.vector("rescued")[entries]
    se, truth = s.bad_se[entries], s.vector("truth")[entries]
    frame = pd.DataFrame(
        {
            "before rescue": before,
            "rescued": after,
            "change": delta[entries],
            "OLS std. error": se,
            "|change| / std. error": np.abs(delta[entries]) / se,
            "|estimate| / std. error": np.abs(before) / se,
            "twin truth": truth,
            "moved toward truth": np.abs(after - truth) < np.abs(before - truth),
            "share of |Δβ|² (%)": 100 * delta[entries] ** 2 / np.sum(delta**2),
        },
        index=pd.Index([s.record["parameter_names"][i] for i in entries], name="parameter"),
    )
    return numbered(
        frame,
        "The entries the rescue moved (at least a "
        "tenth of the largest change), %s → %s" % (s.bad_label, s.rescued_name),
        "tab-audit-table-xviii",
        digits=3,
        paper="XVIII",
    )


def table_xviii_against_paper(s: AuditStudy) -> object:
    """Table XVIII's findings against the paper's."""
    delta, entries = moved(s)
    names = s.record["parameter_names"]
    zz6, bad, se = names.index("ZZR6"), s.vector("bad"), s.bad_se
    friction = [names.index(n) for n in names if n.startswith("FV")]
    start = s.first_audit()
    why = s.why + (
        "this build's {} starts at λmin = {} kg·m² with {:,} violating configurations (seed "
        "{}); the paper's CLIE solution violated at {}".format(
            s.bad_label,
            sci(start.lambda_min),
            start.n_violations,
            start.seed,
            paper("clie_solution_violations").text(),
        )
    )
    rows = [
        Comparison("entries moved", "rescue_changed_entries", len(entries), why=why),
        Comparison(
            "largest change", "rescue_max_entry_change", np.abs(delta).max(), bound="upper", why=why
        ),
        Comparison(
            "moved entries changing by less than one std. error",
            "rescue_sub_se_entries",
            Count(int(np.sum(np.abs(delta[entries]) < se[entries])), len(entries)),
            why=why,
        ),
        Comparison(
            "ZZR6 estimate in std. errors from zero",
            "zzr6_se_ratio",
            abs(bad[zz6]) / se[zz6],
            bound="upper",
            why=why,
        ),
        Comparison(
            "viscous coefficients (they do not enter M) moved by more than 1e-9",
            None,
            int(np.sum(np.abs(delta[friction]) > 1e-9)),
            paper_text="none",
            why=Why.beyond(
                "the Euclidean nearest point leaves what does not enter M alone (register)"
            ),
        ),
    ]
    return _table(
        rows,
        "What the paper found in Table XVIII, and this book",
        name="tab-audit-table-xviii-paper",
    )


# ------------------------------------------------------------------------- the manufacturer's box


def manufacturer_against_paper(s: AuditStudy) -> object:
    """The accepted model over the manufacturer's joint-limit box."""
    box = np.asarray(s.record["boxes_rad"]["domain"])
    mfr = np.asarray(s.record["boxes_rad"]["manufacturer"])
    wider = int(np.sum((box[:, 0] < mfr[:, 0] - 1e-9) | (box[:, 1] > mfr[:, 1] + 1e-9)))
    narrower_j2 = np.rad2deg(max(0.0, box[1, 0] - mfr[1, 0]) + max(0.0, mfr[1, 1] - box[1, 1]))
    acc = [Audit.of(a) for a in s.record["manufacturer"]["accepted"]]
    truth = [Audit.of(a) for a in s.record["manufacturer"][TRUTH]]
    worst = min(s.dense(s.accepted_name), key=lambda a: a.lambda_min).worst_pose
    outside = not np.all((worst[1:] >= mfr[1:, 0] - 1e-12) & (worst[1:] <= mfr[1:, 1] + 1e-12))
    count = sum(a.n_violations for a in acc)
    rows = [
        Comparison("joints on which Θ is wider than the limits", "domain_wider_joint_count", wider),
        Comparison(
            "Θ narrower than the limits on joint 2",
            "domain_narrower_j2",
            narrower_j2,
            why=Why.reconstruction(
                "the robot description in data/ gives joint 2 the same "
                "range as Θ, so there is no omitted strip (register)"
            ),
        ),
        Comparison(
            "accepted model: λmin over the manufacturer's box",
            "accepted_min_eig_mfr_box",
            [a.lambda_min for a in acc],
            why=s.why
            + (
                "the accepted model's worst configuration over Θ lies outside the limits"
                if outside
                else ""
            ),
        ),
        Comparison(
            "accepted model: violating configurations there, all seeds",
            None,
            "none" if count == 0 else count,
            paper_text="none",
            why=None if count == 0 else s.why,
        ),
        Comparison(
            "twin truth: λmin over the manufacturer's box",
            None,
            [a.lambda_min for a in truth],
            unit="kg·m^2",
            why=Why.beyond(),
        ),
    ]
    return _table(rows, "The manufacturer's box (Sec. V-A)", name="tab-audit-manufacturer")


# ----------------------------------------------------------------------------- Table X


def table_x(s: AuditStudy) -> pd.DataFrame:
    """What each of the paper's four kinds of infeasible model (as the build has it, or its
    named substitute) and the accepted model do once M is inverted, against the accepted
    model, and (beyond the paper) the rescued model against the twin's truth: the record's rows."""
    frame = pd.DataFrame(s.record["table_x"], columns=TABLE_X_COLUMNS)
    return frame.set_index(["model", "reference"])


TABLE_X_COLUMNS = [
    "model",
    "reference",
    "kind",
    "non-PD (% of uniform draw)",
    "τgrow at worst pose (ms)",
    "fastest τgrow (ms)",
    "misdirected torques (%)",
    "median torque-error ratio (%)",
    "along λmin eigenvector (%)",
    "sign reversed",
    "1/λ at worst pose (1/(kg·m²))",
]
TABLE_X_KINDS = all_pose.TABLE_X_KINDS  # the paper's four kinds of infeasible model


def table_x_kind(frame: pd.DataFrame, kind: str) -> pd.Series | None:
    """The row of Table X against the accepted model of one kind (None if the build has none)."""
    rows = frame[
        (frame["kind"] == kind) & (frame.index.get_level_values("reference") == "accepted")
    ]
    return None if rows.empty else rows.iloc[0]


def table_x_infeasible(frame: pd.DataFrame) -> pd.DataFrame:
    """Table X's rows of the paper's four kinds of infeasible model, in the paper's order."""
    rows = [table_x_kind(frame, k) for k in TABLE_X_KINDS]
    return pd.DataFrame([r for r in rows if r is not None])


def table_x_shown(frame: pd.DataFrame) -> object:
    """Table X as displayed."""
    return numbered(
        frame,
        "What each model does once M is inverted, against a reference inertia (twin): the "
        "paper's four kinds of infeasible model, each named by what it is on the twin",
        "tab-audit-table-x",
        digits=3,
        paper="X",
    )


def table_x_against_paper(s: AuditStudy, frame: pd.DataFrame) -> object:
    """Table X's findings against the paper's, over its four kinds of infeasible model."""
    four = table_x_infeasible(frame)
    ols = table_x_kind(frame, all_pose.KIND_OLS)
    sub = table_x_kind(frame, all_pose.KIND_SUBMITTED)
    said = ["the paper's %s is here %s" % (r["kind"], n[0]) for n, r in four.iterrows()]
    if sub is not None:
        lam = min(a.lambda_min for a in s.dense(s.submitted_name))
        said.append("the ε = 0 model reaches %.2g kg·m²" % lam)
    why = s.why + "; ".join(said)
    ols_why = why
    if ols.name[0] != s.raw_label:  # a substitute for the unrescued OLS solution
        ols_why = Why.twin(
            "a different estimate: %s's own OLS estimate passes the audit over Θ, so %s, the "
            "build's failing OLS estimate with the smallest λmin over Θ, stands in; it lies "
            "further outside the PD set than the paper's" % (s.label, ols.name[0])
        )
    rows = [
        Comparison(
            "infeasible models",
            "table10_infeasible_model_count",
            len(four),
            why=None if len(four) == len(TABLE_X_KINDS) else why,
        ),
        Comparison(
            "non-PD share, " + ols.name[0],
            "ols_nonpd_fraction",
            ols["non-PD (% of uniform draw)"],
            why=ols_why,
        ),
        Comparison(
            "τgrow, " + ols.name[0], "ols_divergence_tau", ols["fastest τgrow (ms)"], why=ols_why
        ),
    ]
    if sub is not None:
        rows += [
            Comparison(
                "non-PD share, ε = 0 model",
                "submitted_nonpd_fraction",
                sub["non-PD (% of uniform draw)"],
                why=why,
            ),
            Comparison(
                "τgrow, ε = 0 model", "submitted_divergence_tau", sub["fastest τgrow (ms)"], why=why
            ),
        ]
    names = "the %d infeasible models" % len(four)
    reversed_all = bool(four["sign reversed"].astype(bool).all())
    rows += [
        Comparison(
            "misdirected torque directions at the worst pose, " + names,
            "misdirected_torque_fraction",
            list(four["misdirected torques (%)"]),
            why=why,
        ),
        Comparison(
            "median torque-error ratio, random accelerations, " + names,
            "random_accel_torque_diff",
            list(four["median torque-error ratio (%)"]),
            why=why,
        ),
        Comparison(
            "torque-error ratio along the λmin eigenvector, " + names,
            "eigdir_torque_error",
            list(four["along λmin eigenvector (%)"]),
            why=why,
        ),
        Comparison(
            "sign reversed along that eigenvector",
            None,
            "in every case"
            if reversed_all
            else ", ".join(
                "%s: %s" % (r["kind"], bool(r["sign reversed"])) for _, r in four.iterrows()
            ),
            paper_text="in every case",
            why=None if reversed_all else why,
        ),
    ]
    return _table(
        rows, "What the paper found in Table X, and this book", name="tab-audit-table-x-paper"
    )


# ----------------------------------------------------------------------- where the violations lie


def violation_map(s: AuditStudy):
    """λmin of the model the chapter rescues per cell of two joint pairs (first seed)."""
    fold = np.rad2deg(np.asarray(s.record["boxes_rad"]["folded"]))
    maps = s.record["violations"]["maps"]
    fig, axes = plt.subplots(1, len(maps), figsize=(11, 4.2))
    for ax, cells in zip(axes, maps):
        joints = cells["joints"]
        ea, eb = (np.rad2deg(np.asarray(e)) for e in cells["edges_rad"])
        lam = np.asarray(cells["lambda_min"], dtype=float)
        norm = TwoSlopeNorm(
            vcenter=0.0, vmin=min(np.nanmin(lam), -1e-6), vmax=max(np.nanmax(lam), 1e-6)
        )
        mesh = ax.pcolormesh(ea, eb, lam.T, cmap="RdBu", norm=norm, shading="flat")
        ax.contour(
            0.5 * (ea[1:] + ea[:-1]),
            0.5 * (eb[1:] + eb[:-1]),
            (np.asarray(cells["violations"]) > 0).T.astype(float),
            levels=[0.5],
            colors="k",
            linewidths=0.8,
        )
        a, b = joints[0] - 1, joints[1] - 1
        ax.add_patch(
            Rectangle(
                (fold[a, 0], fold[b, 0]),
                fold[a, 1] - fold[a, 0],
                fold[b, 1] - fold[b, 0],
                fill=False,
                ls="--",
                lw=1.2,
                ec="0.2",
            )
        )
        ax.set_xlabel("θ%d (deg)" % joints[0])
        ax.set_ylabel("θ%d (deg)" % joints[1])
        fig.colorbar(mesh, ax=ax, label="smallest λmin in cell (kg·m²)")
    fig.suptitle(
        "Twin data: λmin of M over the dense audit set (seed %d), %s" % (s.seeds[0], s.bad_label)
    )
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- the certified check


def certified_rows(s: AuditStudy) -> list[dict]:
    """The certified checks the record holds, one row each, in the record's order (the accepted
    model first): the model and box, margin, status, bounds, boxes and time."""
    rows = []
    for found in s.record["certified"]:
        record = found["record"]
        if record is None:
            continue
        label = "accepted" if found["model"] == all_pose.ACCEPTED_MODEL else s.bad_label
        near = "%s, ±%g° box around its worst audit pose" % (
            label,
            record.get("half_width_deg", all_pose.NEAR_HALF_WIDTH_DEG),
        )
        for check in record["checks"]:
            proved = check["status"] == CERTIFIED
            rows.append(
                {
                    "model and box": near
                    if check["region"] == all_pose.NEAR_WORST
                    else label + ", all of Θ",
                    "margin (kg·m²)": check["margin"],
                    "status": check["status"],
                    "proved lower bound of λmin": check["certified_lambda_min"] if proved else None,
                    "witness λmin": check["witness_lambda"],
                    "boxes processed": check["boxes_processed"],
                    "boxes certified": check["boxes_certified"],
                    "unresolved boxes": check["unresolved_boxes"],
                    "time (s)": check["elapsed_s"],
                    "tolerance (kg·m²)": check["tolerance"],
                    "_implied": check["implied_by"] is not None,
                    "_summary": check["summary"],
                }
            )
    return rows


def certified_missing(s: AuditStudy) -> list[str]:
    """The certified records this build lacks (their paths)."""
    return [found["path"] for found in s.record["certified"] if found["record"] is None]


def certified_table(s: AuditStudy) -> object | None:
    """The certified checks as displayed (None when the build has none)."""
    rows = certified_rows(s)
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    frame = frame.drop(columns=[c for c in frame.columns if c.startswith("_")])
    return numbered(
        frame.set_index(["model and box", "margin (kg·m²)"]),
        "The certified check over continuous boxes (twin models)",
        "tab-audit-certified",
        digits=3,
    )


def yoshida_khalil_record() -> dict | None:
    """The Yoshida-Khalil comparison's record (results/audits/), or None when the build has none."""
    from crane_lib.acceptance import yoshida_khalil

    path = yoshida_khalil.RECORD_PATH
    return read_json_record(path) if path.is_file() else None


def yoshida_khalil_table(counts: list[dict]) -> object:
    """The comparison's counts per stage as displayed (`yoshida_khalil.counts`)."""
    return numbered(
        pd.DataFrame(counts).set_index("stage"),
        "Yoshida and Khalil's sufficient condition, the certificate over Θ and the dense audit "
        "on every OLS and CLIE estimate of this build (counts of estimates)",
        "tab-audit-yoshida-khalil",
    )
