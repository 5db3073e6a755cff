"""Chapter "The all-pose PD audit, the rescue, and what an infeasible model does" (paper Sec.
IV-C, V-A, VI-B, VI-E, VII-C, Appendix D-E, D-G; Tables IX, X, XVIII): the pose sets, the
representative condition and the twin's truth, PD at the visited configurations against PD over
Θ, the model the rescue is shown on, the rescue, Table IX over the seeds, Table XVIII, the
manufacturer's box, Table X, where the violations lie and the certified check. Data: the twin's
recordings through the records of the main job: the accepted model's record (results/accepted),
the OLS/SDP sweep's condition records and the twin's true parameters.

The rescue is shown on the representative condition's own failing estimate whenever the build
has one: the CLIE solution in the accepted model's record, with the record's rescue, rescued
model and audits. Only when the record holds no failing estimate does the chapter fall back to a
substitute, and it says which and why. The accepted model, its verdict and its margins are always
the record's. The chapter's state is one `AuditStudy`, built step by step in the chapter's order;
each table, figure and sentence is a function of it. Nothing here writes a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import audit, certified, consequences, folded
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.errors import InputError
from crane_lib.identification import condition as identify
from crane_lib.identification.projection import ProjectionFailure
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.paths import REPO_ROOT
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import (
    Comparison,
    Count,
    Prose,
    Why,
    cite,
    compared,
    comparison_table,
    numbered,
    plural,
    significant,
    span,
)
from crane_lib.twin.truth import load_truth

EPS = paper("rescue_eps_pd").value  # the accepted rescue margin, kg·m²
EPS_EARLIER = paper("earlier_rescue_eps_pd").value  # the earlier version's margin
TRUTH = "twin truth"
# how the chapter came by the model it rescues (AuditStudy.case)
REPRODUCTION = "reproduction"  # the condition's CLIE solution, failing in the accepted record
CONDITION_OLS = "condition OLS"  # substitute: the condition's raw OLS estimate
SWEEP = "sweep"  # substitute: another OLS estimate of the build
CONSTRUCTED = "constructed"  # substitute: a PD estimate pushed non-PD
# the rescues the chapter computes itself (the accepted one is the record's)
FRESH, EARLIER = "fresh", "earlier"


def sci(x, digits: int = 3) -> str:
    """A number to `digits` significant digits, as every sentence of the chapter writes it."""
    return significant(x, digits)


def _degrees(pose) -> str:
    return "(" + ", ".join(f"{a:.1f}" for a in np.rad2deg(pose)) + ")°"


def _table(rows: list[Comparison], caption: str, **options) -> object:
    """comparison_table with a row's reason dropped where the row agrees (it needs none)."""
    for row in rows:
        if row.why is not None and row.agreement() is not None:
            row.why = None
    return comparison_table(rows, caption, **options)


def _shown_path(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------------- the pose sets


def pose_sets_against_paper(seed: int) -> object:
    """The dense and the sparse audit's pose sets against the paper's counts."""
    dense, sparse = audit.audit_poses(seed), audit.sparse_audit_poses(seed)
    volume = 100 * folded.region_volume_share()
    d, sp = dense.counts(), sparse.counts()
    rows = [
        Comparison("dense: structured grid", "audit_grid_count", d[audit.GRID]),
        Comparison("dense: uniform draw over Θ", "audit_uniform_count", d[audit.UNIFORM]),
        Comparison("dense: folded-arm draw", "audit_focused_count", d[audit.FOLDED]),
        Comparison("dense: total", "audit_pose_count", len(dense)),
        Comparison("folded region, share of Θ by volume", "folded_region_volume_share", volume),
        Comparison("sparse: grid", "earlier_grid_count", sp[audit.GRID]),
        Comparison("sparse: uniform draw", "earlier_uniform_count", sp[audit.UNIFORM]),
        Comparison("sparse: total", "earlier_audit_total", len(sparse)),
    ]
    return _table(
        rows,
        "The audit's pose sets (Sec. VI-E, Appendix D-G)",
        label="configurations",
        name="tab-audit-pose-sets",
    )


# ----------------------------------------------------------------------------- the records


def _condition_ols(trajectory: str, ts: float, run: int, record: dict | None) -> ParameterSet:
    """The condition's raw OLS estimate: the OLS/SDP sweep's record, else the accepted record's."""
    path = identify.condition_record_path(trajectory, ts, run)
    found = read_json_record(path) if path.is_file() else None
    if found is not None and found.get("ols") is not None:
        return ParameterSet(found["names"], found["ols"], found["std_errors"])
    if record is not None:
        return ParameterSet(record["names"], record["ols"], record["std_errors"])
    problem = "no OLS estimate" if found is None else f"no OLS estimate ({found.get('failure')})"
    raise InputError(
        str(path),
        f"{problem} of {trajectory} run {run} at {ts * 1e3:g} ms",
        f"the condition record of the OLS/SDP sweep, written by {accepted_stage.MAKE_STEP}",
    )


# ----------------------------------------------------------------------------- the study's state


@dataclass
class AuditStudy:
    """The chapter's state: the condition, the records it read and what it computed from them."""

    trajectory: str
    ts: float
    run: int
    seeds: tuple
    model: DynamicModel
    raw: ParameterSet  # the condition's OLS estimate, with standard errors
    raw_audit: object
    truth: np.ndarray
    truth_audit: object
    record: dict | None = None  # the accepted model's record (results/accepted), if any
    record_path: Path | None = None
    accepted_values: np.ndarray | None = None  # the accepted model file's values
    sweep: pd.DataFrame = None  # every OLS estimate of the build, audited (first seed)
    population: folded.Concentration | None = None  # those of first executions, pooled
    population_size: int = 0
    case: str = ""  # REPRODUCTION, CONDITION_OLS, SWEEP or CONSTRUCTED
    bad_label: str = ""
    bad_beta: np.ndarray = None
    bad_se: np.ndarray = None
    rescues: dict = field(default_factory=dict)  # FRESH/EARLIER -> RescueResult or None
    failures: dict = field(default_factory=dict)  # FRESH/EARLIER -> why the rescue failed
    models: dict = field(default_factory=dict)
    audits: dict = field(default_factory=dict)  # (name, kind, seed) -> AuditResult

    @property
    def label(self) -> str:
        """The condition in words ("AG02 at 40 ms")."""
        return f"{self.trajectory} at {self.ts * 1e3:g} ms"

    @property
    def raw_label(self) -> str:
        """Name of the condition's raw OLS estimate."""
        return f"raw OLS, {self.label}"

    @property
    def clie_label(self) -> str:
        """Name of the condition's CLIE solution."""
        return f"CLIE solution, {self.label}"

    @property
    def submitted_name(self) -> str:
        """Name of the rescue with the earlier version's margin."""
        return f'rescued, ε = {sci(EPS_EARLIER)} ("submitted")'

    @property
    def rescued_name(self) -> str:
        """The rescued model of the model the chapter rescues, with ε."""
        if self.case == REPRODUCTION or self.record is None:
            return self.accepted_name
        return f"substitute rescued, ε = {sci(EPS)}"

    @property
    def accepted_name(self) -> str:
        """The accepted model as the record holds it (the substitute's rescue without a record)."""
        if self.record is None:
            return f"rescued, ε = {sci(EPS)} (this build has no accepted record)"
        if self.record["rescue"] is None:
            return "accepted (the CLIE solution, no rescue)"
        return f"accepted (rescued, ε = {sci(EPS)})"

    def _rescued(self, key: str) -> np.ndarray | None:
        found = self.rescues.get(key)
        return None if found is None or found.result is None else found.result.parameters.values

    @property
    def submitted(self) -> np.ndarray | None:
        """The model rescued with ε = 0 (None when that rescue failed or has not run)."""
        return self._rescued(EARLIER)

    @property
    def rescued_beta(self) -> np.ndarray | None:
        """The rescued model of the model the chapter rescues (the record's, in a reproduction)."""
        return self.accepted_values if self.case == REPRODUCTION else self._rescued(FRESH)

    @property
    def accepted(self) -> np.ndarray:
        """THE accepted model: the record's model file; without a record, the substitute's."""
        if self.accepted_values is not None:
            return self.accepted_values
        if self.rescued_beta is None:
            raise RuntimeError(
                f"no accepted record and the rescue of {self.bad_label} failed: "
                f"{self.failures.get(FRESH, 'not run')}"
            )
        return self.rescued_beta

    def dense(self, name: str) -> list:
        """The dense audits of one model, one per seed of the chapter."""
        return [self.audits[(name, "dense", s)] for s in self.seeds]

    @property
    def why(self) -> Why:
        """The reason every comparison of the rescued model shares: which model it is."""
        if self.case == REPRODUCTION:
            return Why.twin()
        if self.case in (CONDITION_OLS, SWEEP):
            return Why.twin(
                f"the rescued model is {self.bad_label}, a substitute for the "
                f"CLIE solution of {self.label}"
            )
        return Why.reconstruction("a constructed non-PD case, not a reproduction")


def study(trajectory: str, ts: float, run: int, seeds) -> AuditStudy:
    """The records of the condition (its OLS estimate, the accepted model's record) and the
    twin's truth, the OLS estimate and the truth audited over Θ (first seed)."""
    model = DynamicModel("reduced")
    seeds = tuple(int(s) for s in seeds)
    csv_path, json_path = accepted_stage.accepted_paths(trajectory, ts, run)
    record = values = None
    if csv_path.is_file() and json_path.is_file():
        parameters, record = accepted_stage.load_accepted(trajectory, ts, run, names=model.names)
        values = parameters.values
    raw = _condition_ols(trajectory, ts, run, record)
    truth = model.parameter_vector(model.base_from_standard(load_truth()))
    s = AuditStudy(
        trajectory,
        ts,
        run,
        seeds,
        model,
        raw,
        audit.audit(raw.values, seeds[0], "dense", model),
        truth,
        audit.audit(truth, seeds[0], "dense", model),
        record,
        json_path,
        values,
    )
    if accepted_stage.rescued_by_record(record):
        s.case, s.bad_label = REPRODUCTION, s.clie_label
        s.bad_beta, s.bad_se = np.asarray(record["refined"], float), raw.std_errors
        _from_record(s, s.clie_label, record["first_audits"])
    if record is not None:
        _from_record(s, s.accepted_name, record["final_audits"])
    return s


def _from_record(s: AuditStudy, name: str, audits: list[dict]) -> None:
    for d in audits:
        if d["seed"] in s.seeds:
            s.audits[(name, "dense", int(d["seed"]))] = audit.AuditResult.from_dict(d)


def accepted_view(s: AuditStudy) -> dict:
    """The accepted model as this chapter shows it: where it was read, the verdict, and per
    seed of the deciding audits λmin, the verdict and the violations; its parameters."""
    if s.record is not None:
        final = [audit.AuditResult.from_dict(d) for d in s.record["final_audits"]]
        source, verdict = _shown_path(s.record_path), s.record["verdict"]
        rescued, accepted = s.record["rescue"] is not None, bool(s.record["accepted"])
    else:
        final, source = s.dense(s.accepted_name), "computed in this chapter (no accepted record)"
        accepted, rescued = all(a.passed for a in final), True
        verdict = ("PD" if accepted else "not PD") + " over Θ on every seed of the chapter"
    return {
        "source": source,
        "verdict": verdict,
        "accepted": accepted,
        "rescued": rescued,
        "seeds": [a.seed for a in final],
        "lambda_min": [a.lambda_min for a in final],
        "passed": [a.passed for a in final],
        "violations": [a.n_violations for a in final],
        "parameters": np.array(s.accepted, dtype=float),
    }


def condition_table(s: AuditStudy) -> object:
    """The condition's raw OLS estimate and the twin's truth, audited over Θ."""

    def column(a):
        return [a.passed, a.lambda_min, a.n_violations, _degrees(a.worst_pose)]

    index = pd.Index(
        ["PD over Θ", "λmin over Θ (kg·m²)", "violating configurations", "worst pose"],
        name=f"audit, seed {s.seeds[0]}",
    )
    frame = pd.DataFrame(
        {s.raw_label: column(s.raw_audit), TRUTH: column(s.truth_audit)}, index=index
    )
    return numbered(
        frame,
        f"The raw OLS estimate of {s.label} and the twin's true parameters, audited over Θ (twin)",
        "tab-audit-condition",
        digits=3,
    )


def condition_sentence(s: AuditStudy) -> Prose:
    """Whether the condition's raw OLS estimate is PD over Θ, against the truth and the paper."""
    a = s.raw_audit
    if a.passed:
        head = (
            f"On the twin the raw OLS estimate of {s.label} is **positive definite over Θ**,"
            f" with λmin = {sci(a.lambda_min)} kg·m², {a.lambda_min / EPS:.1f} times the "
            f"rescue margin ε = {sci(EPS)} kg·m²"
        )
        tail = (
            "The paper's OLS estimate of the same condition fails the audit (Sec. VII-D); on "
            "the twin it inherits the margin of the true M."
        )
    else:
        head = (
            f"On the twin the raw OLS estimate of {s.label} is **not positive definite over "
            f"Θ**: {a.n_violations:,} violating configurations, λmin = "
            f"{sci(a.lambda_min)} kg·m²"
        )
        tail = "As on the arm (Sec. VII-D), the OLS estimate of this condition is infeasible."
    return Prose(
        f"{head}, against {sci(s.truth_audit.lambda_min)} kg·m² for the twin's own truth. {tail}"
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


def _ols_audits(seed: int) -> dict:
    """The main job's record of every OLS estimate audited over Θ (results/audits), of `seed`."""
    path = audit.OLS_AUDITS_PATH
    if not path.is_file():
        raise InputError(
            str(path),
            "no record of the OLS estimates audited over Θ",
            f"the record written by {accepted_stage.MAKE_STEP}",
        )
    found = read_json_record(path)
    if found["seed"] != seed:
        raise InputError(
            str(path),
            f"audits of seed {found['seed']}",
            f"seed {seed}, the chapter's first (the main job audits seed 1)",
        )
    return found


def audit_sweep(s: AuditStudy) -> pd.DataFrame:
    """Every OLS estimate the OLS/SDP sweep recorded, audited over Θ with the first seed, as the
    main job's audit step recorded it (the screen: the audit's exact answer), and where the
    violations of the first executions lie (`s.population`, as chapter 11 counts them)."""
    records = {(r["trajectory"], r["ts"], r["run"]): r for r in identify.load_condition_records()}
    rows = []
    for a in _ols_audits(s.seeds[0])["audits"]:
        r = records.get((a["trajectory"], a["ts"], a["run"]))
        if r is None:
            raise InputError(
                str(audit.OLS_AUDITS_PATH),
                f"an audit of {a['trajectory']} run {a['run']} at "
                f"{a['ts'] * 1e3:g} ms, which has no condition record",
                f"a record of this build's conditions ({accepted_stage.MAKE_STEP})",
            )
        rows.append(
            {
                "trajectory": r["trajectory"],
                "Ts (ms)": round(r["ts"] * 1e3),
                "run": r["run"],
                "λmin visited": r["lambda_min_visited"],
                "PD visited": bool(r["pd_visited"]),
                "λmin over Θ": a["lambda_min"],
                "PD over Θ": a["passed"],
                "violations": a["n_violations"],
                "_record": r,
                "_audit": a,
                "_folded": folded.Concentration(a["uniform_violations"], a["in_folded_region"]),
            }
        )
    s.sweep = pd.DataFrame(rows, columns=SWEEP_COLUMNS + ["_record", "_audit", "_folded"])
    first = [row for row in rows if row["run"] == 1]
    s.population, s.population_size = folded.pooled(r["_folded"] for r in first), len(first)
    return s.sweep


def sweep_table(s: AuditStudy) -> object:
    """The audited OLS estimates, one row each."""
    shown = s.sweep[SWEEP_COLUMNS].set_index(["trajectory", "Ts (ms)", "run"])
    return numbered(
        shown,
        "Every OLS estimate of this build: PD at the configurations its record "
        f"visits against PD over Θ (seed {s.seeds[0]}; twin)",
        "tab-audit-visited-theta",
        digits=3,
    )


def _visited_counts(s: AuditStudy) -> dict:
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
    c = _visited_counts(s)
    whole = paper("identification_condition_count").value
    ours_non_pd = 1 - c["theta"] / c["n"] if c["n"] else np.nan
    paper_non_pd = 1 - paper("ols_pd_domain_count").value / whole
    cleaner = compared(ours_non_pd, paper_non_pd, "less clean", "cleaner", "as clean as")
    why = Why.twin(
        f"{100 * ours_non_pd:.0f} % of this build's OLS estimates are non-PD over Θ "
        f"against the paper's {100 * paper_non_pd:.0f} %: the twin's estimates are "
        f"{cleaner} than the arm's"
    )
    if c["n"] != whole:
        why = why + Why.profile(
            f"profile `{profile}` has {c['n']} of the paper's {whole:g} conditions"
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


def visited_sentence(s: AuditStudy) -> Prose:
    """How many estimates PD at their own configurations are PD over Θ, against the paper."""
    c = _visited_counts(s)
    share = f" ({100 * c['theta'] / c['visited']:.0f} %)" if c["visited"] else ""
    domain, trajectory = paper("ols_pd_domain_count").value, paper("ols_pd_trajectory_count").value
    reverse = (
        "As in the paper, the reverse never occurs."
        if c["reverse"] == 0
        else f"Unlike the paper, {plural(c['reverse'], 'estimate')} are PD over Θ's finite "
        "draw but not on their own record."
    )
    return Prose(
        f"Of the estimates PD at their own configurations, {c['theta']} of "
        f"{c['visited']}{share} are PD over Θ; paper {domain:g} of {trajectory:g} "
        f"({100 * domain / trajectory:.0f} %). {reverse}"
    )


# ------------------------------------------------------------------------ which model is rescued


def _record_said(s: AuditStudy) -> str:
    """What the accepted record says of the condition's CLIE solution, in one sentence."""
    where = f"`{_shown_path(s.record_path)}`"
    if s.record is None:
        return (
            f"This build has no accepted-model record of {s.label} ({where} is missing), so "
            "the chapter has no CLIE solution of the condition to rescue."
        )
    first = [audit.AuditResult.from_dict(d) for d in s.record["first_audits"]]
    lams = [a.lambda_min for a in first]
    if all(a.passed for a in first):
        return (
            f"Algorithm 1's record of {s.label} ({where}): its CLIE solution **passes** the "
            f"audit on all {len(first)} seeds (λmin {span(lams)} kg·m²), so no rescue ran and "
            "the accepted model is the CLIE solution itself; the paper's failed at "
            f"{cite('clie_solution_violations')} configurations and was rescued."
        )
    reason = (s.record["rescue"] or {}).get("reason") or "the solver returned no model"
    return (
        f"Algorithm 1's record of {s.label} ({where}): its CLIE solution fails the audit, but "
        f"the rescue returned no model ({reason}); the record's verdict: "
        f"{s.record['verdict']}."
    )


def choose_rescued_model(s: AuditStudy) -> Prose:
    """The model the rest of the chapter rescues. The condition's CLIE solution when the accepted
    record shows it failing (its rescue and re-audit are the record's); otherwise a substitute,
    said so: the condition's OLS estimate if it violates, else the build's violating OLS estimate
    with the smallest λmin (same trajectory first), else a constructed non-PD model."""
    if s.case == REPRODUCTION:
        return Prose(_reproduction_said(s))
    said = [_record_said(s)]
    sw = s.sweep
    violating = sw[~sw["PD over Θ"].astype(bool)] if len(sw) else sw
    if not s.raw_audit.passed:
        s.case, s.bad_label = CONDITION_OLS, s.raw_label
        s.bad_beta, s.bad_se = s.raw.values, s.raw.std_errors
        said.append(
            f"**To show the rescue, the chapter uses a substitute:** {s.raw_label}, which "
            "fails the audit. Algorithm 1 refines it before any audit, so its rescue "
            "shows the mechanism, not the paper's rescue."
        )
    elif len(violating):
        same = violating[violating["trajectory"] == s.trajectory]
        pick = (same if len(same) else violating).sort_values("λmin over Θ").iloc[0]
        r = pick["_record"]
        run = f", run {r['run']}" if r["run"] != 1 else ""
        s.case, s.bad_label = SWEEP, f"raw OLS, {r['trajectory']} at {r['ts'] * 1e3:g} ms{run}"
        s.bad_beta, s.bad_se = np.asarray(r["ols"]), np.asarray(r["std_errors"])
        mechanism = (
            "passes the routing test of its own record and fails over Θ, the paper's mechanism"
            if r["pd_visited"]
            else "fails the routing test of its own record as well as over Θ"
        )
        of = "of its trajectory " if len(same) else ""
        said.append(
            f"**To show the rescue, the chapter uses a substitute, not a reproduction:** "
            f"{s.bad_label}, which {mechanism}. It is the violating OLS estimate with the "
            f"smallest λmin over Θ {of}among the {len(violating)} of this build that "
            "violate."
        )
    else:
        candidates = [
            (
                s.raw_audit.lambda_min,
                s.raw.values,
                s.raw.std_errors,
                s.label,
                s.raw_audit.worst_pose,
            )
        ]
        candidates += [
            (
                row["λmin over Θ"],
                np.asarray(row["_record"]["ols"]),
                np.asarray(row["_record"]["std_errors"]),
                f"{row['trajectory']} at {row['Ts (ms)']} ms",
                np.asarray(row["_audit"]["worst_pose_rad"]),
            )
            for _, row in sw.iterrows()
        ]
        lam0, base_beta, s.bad_se, base_name, worst = min(candidates, key=lambda c: c[0])
        s.bad_beta = audit.minimal_pd_break(base_beta, worst, EPS / 2, s.model)
        s.case, s.bad_label = CONSTRUCTED, f"constructed: {base_name} pushed non-PD"
        said.append(
            f"**No OLS estimate of this build violates over Θ either.** To show what the "
            f"rescue does, the chapter constructs a non-PD model from {base_name} (the "
            f"smallest margin, λmin = {sci(lam0)} kg·m²) by the minimum-norm change that "
            f"drives M to λmin ≤ −{sci(EPS / 2)} kg·m² at its worst pose. This is a "
            "constructed case, not a reproduction of the paper."
        )
    if s.record is not None:
        said.append(
            f"The accepted model in every table below is still the record's "
            f"({s.record['verdict']}); the substitute's rescue is computed here and is "
            "not an accepted model."
        )
    return Prose("\n\n".join(said))


def _reproduction_said(s: AuditStudy) -> str:
    first = [audit.AuditResult.from_dict(d) for d in s.record["first_audits"]]
    failing = [a for a in first if not a.passed]
    one, rescue = first[0], s.record["rescue"]
    view = accepted_view(s)
    re_audit = (
        f"passes on all {len(view['seeds'])} seeds"
        if all(view["passed"])
        else f"fails on {view['passed'].count(False)} of {len(view['seeds'])} seeds"
    )
    return (
        f"**The rescue is shown on the CLIE solution of {s.label} itself, as in the paper.** "
        "Algorithm "
        f"1's record of the condition (`{_shown_path(s.record_path)}`) holds it: the CLIE "
        f"solution fails the audit on {len(failing)} of {len(first)} seeds ({one.n_violations:,} "
        f"violating configurations with seed {one.seed}, λmin = {sci(one.lambda_min)} kg·m²; the "
        f"paper's failed at {cite('clie_solution_violations')}), the rescue with ε = "
        f"{sci(EPS)} kg·m² converged: {rescue['converged']} in "
        f"{plural(len(rescue['passes']), 'pass', 'passes')} (|Δβ| = "
        f"{sci(rescue['change_norm'])}), and the re-audit {re_audit}. Verdict: "
        f"**{s.record['verdict']}**. Every table below reads the record for the CLIE solution, "
        "the accepted model and their audits over Θ; the ε = 0 rescue and the fresh-set re-run "
        "of D-I are the main job's record of them (`results/rescues/`); what neither holds (the "
        "sparse audit, the manufacturer's box, Table X, the map) is computed here from those two "
        "models."
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


def _rescue_labels(s: AuditStudy) -> dict:
    fresh = "re-run from the fresh set (D-I)" if s.case == REPRODUCTION else "fresh set"
    return {
        "record": f"ε = {EPS:g}, the accepted record (Θr seeded with the audit's worst poses)",
        FRESH: f"ε = {EPS:g}, {fresh}",
        EARLIER: f"ε = {EPS_EARLIER:g}, fresh set",
    }


def _recorded_rescues(s: AuditStudy, directory=None) -> dict:
    """The main job's fresh-set rescues of the record's CLIE solution, by margin."""
    path = rescue_stage.rescues_path(s.trajectory, s.ts, s.run, directory)
    if not path.is_file():
        raise InputError(
            str(path),
            f"no fresh-set rescues of the CLIE solution of {s.label}",
            f"the record written by {accepted_stage.MAKE_STEP}",
        )
    return {entry["epsilon"]: entry for entry in read_json_record(path)["rescues"]}


def _try_rescue(s: AuditStudy, key: str, epsilon: float, recorded: dict | None = None) -> None:
    if recorded is not None:  # the record's CLIE solution: rescued once by the main job
        entry = recorded[epsilon]
        s.rescues[key] = rescue_stage.rescue_of(entry)
        if entry["failure"] is not None:
            s.failures[key] = entry["failure"]
        return
    try:  # a substitute, chosen here from the records: rescued here
        s.rescues[key] = rescue_stage.rescue_over_theta(s.model, s.bad_beta, epsilon=epsilon)
    except ProjectionFailure as error:  # said in the sentence; the tables leave the model out
        s.rescues[key], s.failures[key] = None, str(error)


def run_rescues(s: AuditStudy) -> object:
    """The rescues from the fresh set Θr (random poses and corners): ε = 0 (the earlier version's
    margin) and ε (D-I's re-run, or the substitute's rescue), the main job's record of them in a
    reproduction (computed here only for a substitute); beside them, in a reproduction, the
    passes of the accepted record's own rescue."""
    recorded = _recorded_rescues(s) if s.case == REPRODUCTION else None
    _try_rescue(s, EARLIER, EPS_EARLIER, recorded)
    _try_rescue(s, FRESH, EPS, recorded)
    labels = _rescue_labels(s)
    runs = {}
    if s.case == REPRODUCTION:
        runs[labels["record"]] = s.record["rescue"]["passes"]
    runs.update({labels[k]: s.rescues[k].passes for k in (FRESH, EARLIER) if s.rescues[k]})
    frame = pd.DataFrame(
        [
            {"rescue": name, **{k: p[k] for k in PASS_KEYS}}
            for name, passes in runs.items()
            for p in passes
        ]
    )
    return numbered(
        frame.set_index(["rescue", "pass"]),
        f"The rescue's passes for {s.bad_label} (twin)",
        "tab-audit-rescue-passes",
        digits=3,
    )


def _first_violations(s: AuditStudy) -> audit.AuditResult:
    return s.audits.get((s.bad_label, "dense", s.seeds[0])) or audit.audit(
        s.bad_beta, s.seeds[0], "dense", s.model
    )


def rescue_against_paper(s: AuditStudy) -> object:
    """The rescues' passes against D-E's seeded rescue and D-I's fresh-set re-run."""
    fresh = s.rescues.get(FRESH)
    passes = [len(r.passes) for r in s.rescues.values() if r is not None]
    rows = []
    if s.case == REPRODUCTION:
        one = _first_violations(s)
        deeper = Why.twin(
            f"a different estimate: the twin's CLIE solution reaches λmin = "
            f"{sci(one.lambda_min)} kg·m² (at a {one.worst_component} "
            "configuration)"
        )
        own = len(s.record["rescue"]["passes"])
        passes.append(own)
        rows += [
            Comparison(
                f"violating audit configurations of the CLIE solution (seed {one.seed})",
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
    if fresh is not None:
        rows += [
            Comparison(
                f"passes, {_rescue_labels(s)[FRESH]}",
                "rescue_passes_unseeded",
                len(fresh.passes),
                why=s.why,
            ),
            Comparison(
                "configurations appended, the same run",
                "rescue_appended_unseeded",
                sum(p["appended"] for p in fresh.passes[:-1]),
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


def _run_said(s: AuditStudy, key: str) -> str:
    found, label = s.rescues.get(key), _rescue_labels(s)[key]
    if found is None:
        return f"{label}: the rescue returned no model ({s.failures.get(key, 'not run')})"
    appended = sum(p["appended"] for p in found.passes[:-1])
    return (
        f"{label}: converged {found.converged} in "
        f"{plural(len(found.passes), 'pass', 'passes')}, {appended:,} configurations "
        f"appended, solver status {found.result.status}"
    )


def rescue_sentence(s: AuditStudy) -> Prose:
    """What each rescue did, the accepted record's first."""
    said = []
    if s.case == REPRODUCTION:
        rescue = s.record["rescue"]
        start = rescue["passes"][0]["constraint_poses"]
        fresh_size = rescue_stage.RESCUE_RANDOM_POSES + len(audit.box_corners())
        first = [audit.AuditResult.from_dict(d) for d in s.record["first_audits"]]
        witnesses = np.vstack([a.worst_poses for a in first if not a.passed])
        distinct = len(np.unique(np.round(witnesses, 12), axis=0))
        said.append(
            f"The accepted record's rescue started Θr from {start:,} configurations "
            f"({rescue_stage.RESCUE_RANDOM_POSES:,} random, {len(audit.box_corners())} corners and "
            f"the {start - fresh_size} worst poses of the failing audits, {distinct} of them "
            f"distinct; the paper seeded all {cite('clie_solution_violations')} violators) and "
            f"converged: {rescue['converged']}, in "
            f"{plural(len(rescue['passes']), 'pass', 'passes')}"
            f" (paper {cite('rescue_passes_seeded')})."
        )
        fresh = s._rescued(FRESH)
        if fresh is not None:
            gap = np.linalg.norm(fresh - s.accepted)
            said.append(
                f"{_run_said(s, FRESH)}; its model lies |Δβ| = {sci(gap)} from the "
                "accepted one and is shown only for D-I's count of passes, not as the "
                "accepted model."
            )
        else:
            said.append(_run_said(s, FRESH) + ".")
    else:
        said.append(_run_said(s, FRESH) + ".")
    said.append(
        f"{_run_said(s, EARLIER)}. The rescue checks every constraint of Θr itself "
        "whatever the solver reports."
    )
    return Prose(" ".join(said))


# ----------------------------------------------------------------------------- Table IX


def table_ix_models(s: AuditStudy) -> dict:
    """The models of Table IX, by name: the condition's OLS estimate, the model the chapter rescues,
    its rescues, the accepted model (the record's) and the twin's truth."""
    models = {} if s.bad_label == s.raw_label else {s.raw_label: s.raw.values}
    models[s.bad_label] = s.bad_beta
    if s.submitted is not None:
        models[s.submitted_name] = s.submitted
    if s.case != REPRODUCTION and s.rescued_beta is not None:
        models[s.rescued_name] = s.rescued_beta
    if s.record is not None or s.rescued_beta is not None:
        models[s.accepted_name] = s.accepted
    models[TRUTH] = s.truth
    return models


def run_audits(s: AuditStudy) -> object:
    """Each model under both audits and every seed (Table IX); the dense audits the accepted
    record holds are read from it, not run again."""
    s.models = table_ix_models(s)
    for name, beta in s.models.items():
        for kind in ("sparse", "dense"):
            for seed in s.seeds:
                if (name, kind, seed) not in s.audits:
                    s.audits[(name, kind, seed)] = audit.audit(beta, seed, kind, s.model)

    def cell(a):
        return ("PD" if a.passed else f"non-PD, {a.n_violations:,}") + f" | {a.lambda_min:.3g}"

    frame = pd.DataFrame(
        [
            {
                "model": n,
                "audit": k,
                **{f"seed {seed}": cell(s.audits[(n, k, seed)]) for seed in s.seeds},
            }
            for n in s.models
            for k in ("sparse", "dense")
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


def table_ix_against_paper(s: AuditStudy) -> object:
    """Table IX's findings against the paper's."""
    n = len(s.seeds)
    acc_lams = np.array([a.lambda_min for a in s.dense(s.accepted_name)])

    def seeds_where(name, kind, test):
        return sum(bool(test(s.audits[(name, kind, seed)])) for seed in s.seeds)

    def of_seeds(quantity, number_id, part):
        return Comparison(
            quantity, number_id, Count(part, n), paper_whole="audit_seed_count", why=s.why
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
                seeds_where(sub, "sparse", lambda a: a.passed),
            ),
            of_seeds(
                "seeds finding the ε = 0 model non-PD, dense audit",
                "submitted_dense_nonpd_seeds",
                seeds_where(sub, "dense", lambda a: not a.passed),
            ),
            Comparison(
                "violating configurations of the ε = 0 model, dense",
                "submitted_violation_count",
                [a.n_violations for a in s.dense(sub)],
                digits=3,
                why=s.why,
            ),
        ]
    rows += [
        of_seeds(
            "seeds on which the accepted model passes both audits", "accepted_pass_seeds", both
        ),
        Comparison(
            "λmin of the accepted model over the seeds, dense",
            "audit_min_eig_accepted",
            acc_lams,
            why=s.why,
        ),
        Comparison(
            "max/min of that margin over the seeds",
            "audit_margin_seed_factor",
            acc_lams.max() / acc_lams.min(),
            why=s.why,
        ),
    ]
    if s.submitted is not None:
        rows.append(
            Comparison(
                "folded-block over uniform violation rate, ε = 0 model",
                "oversample_rate_ratio_submitted",
                audit.folded_rate_ratio(s.dense(s.submitted_name)),
                why=s.why,
            )
        )
    bad_why = (
        s.why
        if s.bad_label == s.raw_label
        else s.why + (f"the paper's ratio is of its raw OLS estimate; here of {s.bad_label}")
    )
    rows.append(
        Comparison(
            f"folded-block over uniform violation rate, {s.bad_label}",
            "oversample_rate_ratio_ols",
            audit.folded_rate_ratio(s.dense(s.bad_label)),
            why=bad_why,
        )
    )
    return _table(
        rows,
        "What the paper found with Table IX, and this book (a dash: "
        "neither block finds a violation)",
        name="tab-audit-table-ix-paper",
    )


def boundary_sentence(s: AuditStudy) -> Prose | None:
    """Said only when the ε = 0 model fails the dense audit at rounding level."""
    if s.submitted is None:
        return None
    worst = min(s.dense(s.submitted_name), key=lambda a: a.lambda_min)
    if worst.passed or abs(worst.lambda_min) >= 1e-9:
        return None
    return Prose(
        f"**The ε = 0 model fails the dense audit only at rounding level:** λmin = "
        f"{worst.lambda_min:.2g} kg·m², at θ = {_degrees(worst.worst_pose)} "
        f"({worst.worst_component}). Its constrained eigenvalues sit at zero, as the paper says "
        "of that margin, and here the configurations where they sit are corners of Θ that the "
        "rescue constrains and the audit grid contains, so the strict criterion λmin > 0 rejects "
        "it at zero. On the arm the submitted model failed with genuinely negative eigenvalues at "
        "configurations Θr did not hold; the twin's ε = 0 model is a boundary case of the "
        "criterion, not an infeasible model, and its Table X row is read as such."
    )


def margin_sentence(s: AuditStudy) -> Prose:
    """The accepted model's margin over the seeds, as the record holds it, and where it sits."""
    view = accepted_view(s)
    lams = np.array(view["lambda_min"])
    final = (
        [audit.AuditResult.from_dict(d) for d in s.record["final_audits"]]
        if s.record
        else s.dense(s.accepted_name)
    )
    worst = final[int(np.argmin(lams))]
    truth = np.array([a.lambda_min for a in s.dense(TRUTH)])
    if s.record is None:
        what = f"{s.bad_label} rescued here with ε = {sci(EPS)} kg·m²; this build has no record"
    elif view["rescued"]:
        what = f"{s.clie_label} rescued with ε = {sci(EPS)} kg·m², read from `{view['source']}`"
    else:
        what = f"the CLIE solution of {s.label}, no rescue, read from `{view['source']}`"
    if worst.worst_component == audit.GRID:
        where = (
            "The minimum sits on the grid, which every seed shares, so the margin cannot vary "
            "with the seed"
            + (
                "; it equals ε to solver precision because that pose is in Θr too."
                if abs(worst.lambda_min - EPS) < 1e-9
                else "."
            )
        )
    else:
        where = (
            "The minimum comes from a random component, so it varies with the draw as in the paper."
        )
    return Prose(
        f"Accepted model ({what}): λmin {span(lams, 4)} kg·m² over seeds "
        f"{', '.join(map(str, view['seeds']))}, a factor {lams.max() / lams.min():.3f} (paper "
        f"{cite('audit_min_eig_accepted')}, factor {cite('audit_margin_seed_factor')}). Its worst "
        f"configuration belongs to the **{worst.worst_component}** component, at θ = "
        f"{_degrees(worst.worst_pose)}. {where} The twin truth: λmin {span(truth, 4)} kg·m² over "
        "the same seeds."
    )


# ----------------------------------------------------------------------------- Table XVIII


def _moved(s: AuditStudy) -> tuple[np.ndarray, np.ndarray]:
    delta = s.rescued_beta - s.bad_beta
    moved = np.flatnonzero(np.abs(delta) >= 0.1 * np.abs(delta).max())
    return delta, moved[np.argsort(-np.abs(delta[moved]))]


def table_xviii(s: AuditStudy) -> object:
    """The entries the rescue moved, against their OLS standard errors and the truth."""
    delta, moved = _moved(s)
    before, after = s.bad_beta[moved], s.rescued_beta[moved]
    se, truth = s.bad_se[moved], s.truth[moved]
    frame = pd.DataFrame(
        {
            "before rescue": before,
            "rescued": after,
            "change": delta[moved],
            "OLS std. error": se,
            "|change| / std. error": np.abs(delta[moved]) / se,
            "|estimate| / std. error": np.abs(before) / se,
            "twin truth": truth,
            "moved toward truth": np.abs(after - truth) < np.abs(before - truth),
            "share of |Δβ|² (%)": 100 * delta[moved] ** 2 / np.sum(delta**2),
        },
        index=pd.Index([s.model.names[i] for i in moved], name="parameter"),
    )
    return numbered(
        frame,
        "The entries the rescue moved (at least a "
        f"tenth of the largest change), {s.bad_label} → {s.rescued_name}",
        "tab-audit-table-xviii",
        digits=3,
        paper="XVIII",
    )


def table_xviii_against_paper(s: AuditStudy) -> object:
    """Table XVIII's findings against the paper's."""
    delta, moved = _moved(s)
    zz6 = s.model.names.index("ZZR6")
    friction = [s.model.names.index(n) for n in s.model.names if n.startswith("FV")]
    start = _first_violations(s)
    paper_count = paper("clie_solution_violations").text()
    why = s.why + (
        f"this build's {s.bad_label} starts at λmin = {sci(start.lambda_min)} kg·m² "
        f"with {start.n_violations:,} violating configurations (seed {start.seed}); "
        f"the paper's CLIE solution violated at {paper_count}"
    )
    rows = [
        Comparison("entries moved", "rescue_changed_entries", len(moved), why=why),
        Comparison(
            "largest change", "rescue_max_entry_change", np.abs(delta).max(), bound="upper", why=why
        ),
        Comparison(
            "moved entries changing by less than one std. error",
            "rescue_sub_se_entries",
            Count(int(np.sum(np.abs(delta[moved]) < s.bad_se[moved])), len(moved)),
            why=why,
        ),
        Comparison(
            "ZZR6 estimate in std. errors from zero",
            "zzr6_se_ratio",
            abs(s.bad_beta[zz6]) / s.bad_se[zz6],
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
    box, mfr = audit.audit_domain(), audit.manufacturer_box()
    wider = int(np.sum((box[:, 0] < mfr[:, 0] - 1e-9) | (box[:, 1] > mfr[:, 1] + 1e-9)))
    narrower_j2 = np.rad2deg(max(0.0, box[1, 0] - mfr[1, 0]) + max(0.0, mfr[1, 1] - box[1, 1]))
    acc = [audit.audit(s.accepted, seed, "manufacturer", s.model) for seed in s.seeds]
    truth = [audit.audit(s.truth, seed, "manufacturer", s.model) for seed in s.seeds]
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
    """What each infeasible model and the accepted one do once M is inverted, against the
    accepted model and (beyond the paper) the twin's truth."""
    pairs = [(s.bad_label, s.bad_beta, s.accepted, "accepted")]
    if s.submitted is not None:
        pairs.append((s.submitted_name, s.submitted, s.accepted, "accepted"))
    pairs += [
        (s.accepted_name, s.accepted, s.accepted, "accepted"),
        (s.bad_label, s.bad_beta, s.truth, TRUTH),
    ]
    rows = []
    for name, beta_hat, beta_ref, ref in pairs:
        c = consequences.consequences(beta_hat, beta_ref, s.seeds[0], s.model)
        w = c.at_worst_pose
        rows.append(
            {
                "model": name,
                "reference": ref,
                "non-PD (% of uniform draw)": 100 * c.non_pd_fraction,
                "τgrow at worst pose (ms)": 1e3 * w.tau_grow_s,
                "fastest τgrow (ms)": 1e3 * c.tau_grow_fastest_s,
                "misdirected torques (%)": 100 * w.misdirected_share,
                "median torque-error ratio (%)": 100 * w.median_torque_error_ratio,
                "along λmin eigenvector (%)": 100 * w.eigdir_torque_error_ratio,
                "sign reversed": w.eigdir_sign_reversed,
                "1/λ at worst pose (1/(kg·m²))": w.observer_gain,
            }
        )
    return pd.DataFrame(rows).set_index(["model", "reference"])


def table_x_shown(frame: pd.DataFrame) -> object:
    """Table X as displayed."""
    return numbered(
        frame,
        "What each model does once M is inverted, against a reference inertia (twin)",
        "tab-audit-table-x",
        digits=3,
        paper="X",
    )


def table_x_against_paper(s: AuditStudy, frame: pd.DataFrame) -> object:
    """Table X's findings against the paper's."""
    bad = frame.loc[(s.bad_label, "accepted")]
    sub = frame.loc[(s.submitted_name, "accepted")] if s.submitted is not None else None
    said = [f"{s.bad_label} reaches λmin = {sci(_first_violations(s).lambda_min)} kg·m²"]
    if s.bad_label != s.raw_label:
        said.append(f"the paper's row is its unrescued OLS solution, here {s.bad_label}")
    if sub is not None:
        lam = min(a.lambda_min for a in s.dense(s.submitted_name))
        said.append(f"the ε = 0 model reaches {lam:.2g} kg·m²")
    why = s.why + "; ".join(said)
    models = [bad] if sub is None else [bad, sub]
    names = s.bad_label if sub is None else f"{s.bad_label} and ε = 0"
    rows = [
        Comparison(
            f"non-PD share, {s.bad_label}",
            "ols_nonpd_fraction",
            bad["non-PD (% of uniform draw)"],
            why=why,
        ),
        Comparison(
            f"τgrow, {s.bad_label}", "ols_divergence_tau", bad["fastest τgrow (ms)"], why=why
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
    reversed_all = all(bool(m["sign reversed"]) for m in models)
    rows += [
        Comparison(
            f"misdirected torque directions at the worst pose, {names}",
            "misdirected_torque_fraction",
            [m["misdirected torques (%)"] for m in models],
            why=why,
        ),
        Comparison(
            f"median torque-error ratio, random accelerations, {names}",
            "random_accel_torque_diff",
            [m["median torque-error ratio (%)"] for m in models],
            why=why,
        ),
        Comparison(
            f"torque-error ratio along the λmin eigenvector, {names}",
            "eigdir_torque_error",
            [m["along λmin eigenvector (%)"] for m in models],
            why=why,
        ),
        Comparison(
            "sign reversed along that eigenvector",
            None,
            "in every case"
            if reversed_all
            else ", ".join(
                f"{n}: {bool(m['sign reversed'])}" for n, m in zip((s.bad_label, "ε = 0"), models)
            ),
            paper_text="in every case",
            why=None if reversed_all else why,
        ),
    ]
    return _table(
        rows, "What the paper found in Table X, and this book", name="tab-audit-table-x-paper"
    )


def table_x_sentence(s: AuditStudy, frame: pd.DataFrame) -> Prose:
    """The model the chapter rescues against the accepted model and against the truth."""
    bad, truth = frame.loc[(s.bad_label, "accepted")], frame.loc[(s.bad_label, TRUTH)]
    acc = np.array([a.lambda_min for a in s.dense(s.accepted_name)])
    true = np.array([a.lambda_min for a in s.dense(TRUTH)])
    stable = np.isfinite(bad["fastest τgrow (ms)"]) and np.isfinite(truth["fastest τgrow (ms)"])
    return Prose(
        f"Against the accepted model, {s.bad_label} misdirects {bad['misdirected torques (%)']:.3g}"
        f" % of unit torques at its worst configuration and errs by "
        f"{bad['along λmin eigenvector (%)']:.3g} % along the offending eigendirection; against "
        f"the twin's **true** inertia (known here, not on the arm) the same numbers are "
        f"{truth['misdirected torques (%)']:.3g} % and {truth['along λmin eigenvector (%)']:.3g} %."
        " The accepted model stands in for the true M in the paper's Table X; near its own "
        f"feasibility boundary (λmin = {sci(acc.min())} kg·m² against the truth's "
        f"{sci(true.min())} kg·m²) it is itself a soft reference, which the twin makes measurable. "
        + (
            "Both references give an unstable loop"
            if stable
            else "The references disagree on stability"
        )
        + f": fastest τgrow {bad['fastest τgrow (ms)']:.3g} ms against the accepted model, "
        f"{truth['fastest τgrow (ms)']:.3g} ms against the truth."
    )


# ----------------------------------------------------------------------- where the violations lie


def violation_map(s: AuditStudy):
    """λmin of the model the chapter rescues per cell of two joint pairs (first seed)."""
    fold = np.rad2deg(audit.folded_region())
    poses = audit.audit_poses(s.seeds[0])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, joints in zip(axes, ((2, 4), (4, 6))):
        cells = audit.lambda_min_map(s.bad_beta, poses, joints, bins=30, model=s.model)
        ea, eb = (np.rad2deg(e) for e in cells["edges"])
        lam = cells["lambda_min"]
        norm = TwoSlopeNorm(
            vcenter=0.0, vmin=min(np.nanmin(lam), -1e-6), vmax=max(np.nanmax(lam), 1e-6)
        )
        mesh = ax.pcolormesh(ea, eb, lam.T, cmap="RdBu", norm=norm, shading="flat")
        ax.contour(
            0.5 * (ea[1:] + ea[:-1]),
            0.5 * (eb[1:] + eb[:-1]),
            (cells["violations"] > 0).T.astype(float),
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
        ax.set_xlabel(f"θ{joints[0]} (deg)")
        ax.set_ylabel(f"θ{joints[1]} (deg)")
        fig.colorbar(mesh, ax=ax, label="smallest λmin in cell (kg·m²)")
    fig.suptitle(
        f"Twin data: λmin of M over the dense audit set (seed {s.seeds[0]}), {s.bad_label}"
    )
    fig.tight_layout()
    return fig


def violation_sentence(s: AuditStudy) -> Prose:
    """Where the violations of the model the chapter rescues lie and, over the build's first
    executions, where those of every OLS estimate lie: both through `folded.Concentration`."""
    first = _first_violations(s)
    poses = audit.audit_poses(s.seeds[0])
    lam = audit.arm_lambda_min(s.bad_beta, poses.poses, s.model)
    fold = np.rad2deg(audit.folded_region())
    v = first.violations
    said = [
        f"{s.bad_label}: {first.n_violations:,} violating configurations of "
        f"{first.n_poses:,} (grid {v[audit.GRID]:,}, uniform {v[audit.UNIFORM]:,}, folded "
        f"{v[audit.FOLDED]:,}); the worst at θ = {_degrees(first.worst_pose)} "
        f"({first.worst_component})."
    ]
    here = int(np.count_nonzero(lam <= 0))
    if here != first.n_violations:
        said.append(f"(Evaluated again here the same pose set gives {here:,}.)")
    violators = poses.poses[lam <= 0]
    if len(violators):
        top = np.rad2deg(violators[:, 3].max())
        said.append(
            f"Every violating configuration has θ4 ≤ {top:.1f}°"
            f" (the folded-arm region spans θ4 from {fold[3, 0]:g}° to {fold[3, 1]:g}°). "
            f"For this model {folded.of_lambdas(poses, lam).finding()}."
        )
    if s.population is not None:
        said.append(
            f"Over the {s.population_size} OLS estimates of this build's first executions "
            f'(seed {s.seeds[0]}; the population chapter "What makes an estimate fail the '
            f'audit" counts), {s.population.finding()}.'
        )
    said.append(
        "The paper locates its violations in the shoulder-up, elbow-folded region; the "
        "map shows where the twin's estimate loses definiteness, which is itself "
        "something to be measured rather than assumed (Sec. VI-E)."
    )
    return Prose(" ".join(said))


# ----------------------------------------------------------------------------- the certified check


@dataclass
class CertifiedChecks:
    """The certified checks the chapter shows, as the main job's certified step recorded them."""

    rows: list  # one per check, in the record's order (accepted model first)
    missing: list  # records of models the chapter certifies that this build lacks
    max_boxes: int | None  # boxes the checks over all of Θ of one model shared
    uncertified: str | None = None  # the substitute rescued here, which the step does not check


def _certified_row(name: str, check: dict) -> dict:
    """One recorded check as the table shows it."""
    proved = check["status"] == certified.CERTIFIED
    return {
        "model and box": name,
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


def certified_checks(s: AuditStudy, directory=None) -> CertifiedChecks:
    """The certified step's records of the accepted model and of the CLIE solution it was
    rescued from (results/certified); a record the build lacks is named, never computed here."""
    models = [(certified.ACCEPTED_MODEL, "accepted")]
    if s.case == REPRODUCTION:
        models.append((certified.CLIE_SOLUTION, s.bad_label))
    rows, missing, max_boxes = [], [], None
    for model_name, label in models:
        path = certified.record_path(s.trajectory, s.ts, s.run, model_name, directory)
        if not path.is_file():
            missing.append(path)
            continue
        record = read_json_record(path)
        max_boxes = record["max_boxes"]
        near = (
            f"{label}, ±{record.get('half_width_deg', certified.NEAR_HALF_WIDTH_DEG):g}° box "
            "around its worst audit pose"
        )
        for check in record["checks"]:
            name = near if check["region"] == certified.NEAR_WORST else f"{label}, all of Θ"
            rows.append(_certified_row(name, check))
    uncertified = None if s.case == REPRODUCTION else s.bad_label
    return CertifiedChecks(rows, missing, max_boxes, uncertified)


def _missing_said(checks: CertifiedChecks) -> str:
    if not checks.missing:
        return ""
    named = ", ".join(f"`{_shown_path(p)}`" for p in checks.missing)
    return (
        f"This build has no certified record {named}: the certified check runs in the main "
        f"job's data step, not on this page ({accepted_stage.MAKE_STEP})."
    )


def certified_table(checks: CertifiedChecks) -> object:
    """The certified checks as displayed (what is missing, said, when the build has none)."""
    if not checks.rows:
        return Prose(_missing_said(checks))
    frame = pd.DataFrame(checks.rows)
    frame = frame.drop(columns=[c for c in frame.columns if c.startswith("_")])
    return numbered(
        frame.set_index(["model and box", "margin (kg·m²)"]),
        "The certified check over continuous boxes (twin models)",
        "tab-audit-certified",
        digits=3,
    )


def certified_sentence(checks: CertifiedChecks) -> Prose:
    """What each certified check proved, and what the accepted model's amount to."""
    rows, max_boxes = checks.rows, checks.max_boxes
    notes = [n for n in (_missing_said(checks), _uncertified_said(checks)) if n]
    if not rows:
        return Prose(" ".join(notes))
    details = [
        f"*{r['model and box']}, margin {sci(r['margin (kg·m²)'])}:* {r['_summary']}." for r in rows
    ]
    full = [r for r in rows if r["model and box"] == "accepted, all of Θ"]
    if not full:
        near_only = any(r["model and box"].startswith("accepted, ±") for r in rows)
        return Prose(
            "\n\n".join(details)
            + (
                "\n\nThis build's profile checks the accepted model on "
                "the box around its worst audit pose only; the full profile (`make book`) also "
                "checks the whole of Θ, at ε/2 first, the audit's violation threshold. The audit's "
                "sampled verdict remains the acceptance criterion, as in the paper; the certificate "
                "is beyond it."
                if near_only
                else ""
            )
            + "".join(f"\n\n{n}" for n in notes)
        )
    said = []
    for r in full:
        margin = sci(r["margin (kg·m²)"])
        if r.get("_implied"):
            said.append(
                f"at margin {margin} kg·m² it follows from that certificate (λmin ≥ ε/2 > {margin})"
            )
        elif r["status"] == certified.CERTIFIED:
            said.append(
                f"at margin {margin} kg·m² the whole of Θ is **certified** "
                f"({r['boxes processed']:,} boxes, {r['time (s)']:.1f} s)"
            )
        elif r["status"] == certified.UNDECIDED:
            said.append(
                f"at margin {margin} kg·m² the check is **undecided** within "
                f"{max_boxes:,} boxes "
                f"({r['unresolved boxes']:,} boxes open; nothing is claimed about them)"
            )
        else:
            said.append(
                f"at margin {margin} kg·m² it returns a configuration below the margin "
                f"(λmin = {sci(r['witness λmin'])} kg·m²)"
            )
    beyond = any(r["status"] == certified.CERTIFIED and r["margin (kg·m²)"] > 0 for r in full)
    only_zero = all(r["margin (kg·m²)"] == 0 for r in full)
    return Prose(
        "\n\n".join(details)
        + "\n\nFor the accepted model, "
        + "; ".join(said)
        + ". "
        + (
            "A certificate at ε/2 says more than the audit can: no configuration of the continuous "
            "box, sampled or not, would count as a violation. "
            if beyond
            else ""
        )
        + (
            "This build's profile checks the whole of Θ at margin 0 only; the full profile (`make "
            "book`) certifies it at ε/2 first, the audit's violation threshold. "
            if only_zero
            else ""
        )
        + "The audit's sampled verdict remains the acceptance criterion, as in the paper; the "
        "certificate is beyond it." + "".join(f"\n\n{n}" for n in notes)
    )


def _uncertified_said(checks: CertifiedChecks) -> str:
    if checks.uncertified is None:
        return ""
    return (
        f"The substitute {checks.uncertified} is not checked over Θ: the certified step "
        "checks the models of Algorithm 1's record, and this build's record rescued none."
    )
