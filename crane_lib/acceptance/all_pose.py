"""The all-pose audit study of one condition (paper Sec. IV-C, V-A, VI-E, VII-C, Appendix D-E,
D-G; Tables IX, X, XVIII), as one record that chapter 06 reads (results/audit_study/).

The accepted model, the rescue Algorithm 1 ran and its deciding audits are the accepted record's
(results/accepted); the fresh-set rescues of its CLIE solution are the rescues step's
(results/rescues); every OLS estimate over Θ is the audits step's (results/audits); the certified
checks are the certified step's (results/certified). This study adds what none of them holds:
every model of Table IX under both audits and every seed, the accepted model over the
manufacturer's box, what each model does once M is inverted (Table X: the paper's four kinds of
infeasible model, the unrescued OLS estimate, the SDP projection, the CLIE solution and the
submitted ε = 0 rescue, each as the build has it or a named substitute) and where the
violations lie. Only when the accepted record rescued nothing does it pick a substitute (the
condition's OLS estimate if it violates, else the build's violating OLS estimate with the
smallest λmin, else a constructed non-PD model) and rescue that itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import audit, certified, consequences, folded
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.errors import InputError
from crane_lib.formatting import significant
from crane_lib.identification import condition as identify
from crane_lib.identification.projection import ProjectionFailure
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.paths import RESULTS_DIR, portable
from crane_lib.records import read_json_record
from crane_lib.twin.truth import TWIN_TRUTH_CSV, load_truth

STUDY_DIR = RESULTS_DIR / "audit_study"
EPS = rescue_stage.RESCUE_EPSILON  # the accepted rescue margin, kg·m²
EPS_EARLIER = rescue_stage.EARLIER_RESCUE_EPSILON  # the earlier version's margin
TRUTH = "twin truth"
# how the study came by the model it rescues
REPRODUCTION = "reproduction"  # the condition's CLIE solution, failing in the accepted record
CONDITION_OLS = "condition OLS"  # substitute: the condition's raw OLS estimate
SWEEP = "sweep"  # substitute: another OLS estimate of the build
CONSTRUCTED = "constructed"  # substitute: a PD estimate pushed non-PD
FRESH, EARLIER = "fresh", "earlier"  # the rescues from the fresh set, with ε and with 0
KINDS = ("sparse", "dense")
GRID, UNIFORM, FOLDED = audit.GRID, audit.UNIFORM, audit.FOLDED  # the dense set's components
CERTIFIED = certified.CERTIFIED  # a certified check's status when it proved its margin
NEAR_WORST, ACCEPTED_MODEL = certified.NEAR_WORST, certified.ACCEPTED_MODEL
NEAR_HALF_WIDTH_DEG = certified.NEAR_HALF_WIDTH_DEG
# Table X's kinds of model: the paper's four infeasible ones, the accepted one, and the model
# the study rescues measured against the twin's truth (beyond the paper)
KIND_OLS, KIND_SDP = "unrescued OLS", "SDP projection"
KIND_CLIE, KIND_SUBMITTED = "CLIE solution", "submitted (ε = 0)"
TABLE_X_KINDS = (KIND_OLS, KIND_SDP, KIND_CLIE, KIND_SUBMITTED)
ACCEPTED_KIND, RESCUED_KIND = "accepted", "rescued model against the truth"
MAP_JOINTS, MAP_BINS = ((2, 4), (4, 6)), 30  # the violation map's joint pairs and cells


def record_path(trajectory: str, ts: float, run: int, directory=None) -> Path:
    """Where the audit study of a condition is recorded."""
    folder = STUDY_DIR if directory is None else Path(directory)
    return folder / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms.json"


def input_files(trajectory: str, ts: float, run: int, profile: str | None = None) -> list[Path]:
    """The records and data the study reads (those present; the condition records of `profile`,
    all when None): its cache key's inputs."""
    csv_path, json_path = accepted_stage.accepted_paths(trajectory, ts, run)
    found = [csv_path, json_path, audit.OLS_AUDITS_PATH, TWIN_TRUTH_CSV]
    found.append(rescue_stage.rescues_path(trajectory, ts, run))
    found += [certified.record_path(trajectory, ts, run, m) for m in CERTIFIED_MODELS]
    found += identify.profile_record_paths(profile)
    return [p for p in found if Path(p).is_file()]


CERTIFIED_MODELS = (certified.ACCEPTED_MODEL, certified.CLIE_SOLUTION)


def _condition_ols(trajectory: str, ts: float, run: int, record: dict | None) -> dict:
    """The condition's raw OLS estimate: the OLS/SDP sweep's record, else the accepted record's."""
    path = identify.condition_record_path(trajectory, ts, run)
    found = read_json_record(path) if path.is_file() else None
    for source in (found, record):
        if source is not None and source.get("ols") is not None:
            return {"values": list(source["ols"]), "std_errors": list(source["std_errors"])}
    problem = "no OLS estimate" if found is None else f"no OLS estimate ({found.get('failure')})"
    raise InputError(
        str(path),
        f"{problem} of {trajectory} run {run} at {ts * 1e3:g} ms",
        f"the condition record of the OLS/SDP sweep, written by {accepted_stage.MAKE_STEP}",
    )


def sweep_rows(seed: int) -> list[dict]:
    """Every OLS estimate the OLS/SDP sweep recorded, with the audits step's audit over Θ of
    `seed` (results/audits): PD visited, λmin and violations over Θ, where they lie."""
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
    records = {(r["trajectory"], r["ts"], r["run"]): r for r in identify.load_condition_records()}
    rows = []
    for a in found["audits"]:
        r = records.get((a["trajectory"], a["ts"], a["run"]))
        if r is None:
            raise InputError(
                str(path),
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
                "PD over Θ": bool(a["passed"]),
                "violations": a["n_violations"],
                "ts": r["ts"],
                "ols": r.get("ols"),
                "std_errors": r.get("std_errors"),
                "worst_pose_rad": a["worst_pose_rad"],
                "uniform_violations": a["uniform_violations"],
                "in_folded_region": a["in_folded_region"],
            }
        )
    return rows


def recorded_rescues(trajectory: str, ts: float, run: int, directory=None) -> dict:
    """The rescues step's fresh-set rescues of the record's CLIE solution, by margin."""
    path = rescue_stage.rescues_path(trajectory, ts, run, directory)
    if not path.is_file():
        raise InputError(
            str(path),
            f"no fresh-set rescues of the CLIE solution of {trajectory} at {ts * 1e3:g} ms",
            f"the record written by {accepted_stage.MAKE_STEP}",
        )
    return {entry["epsilon"]: entry for entry in read_json_record(path)["rescues"]}


def certified_records(
    trajectory: str, ts: float, run: int, rescued: bool, directory=None
) -> list[dict]:
    """The certified step's records of the accepted model and, when the record rescued it, of
    its CLIE solution: per model its name, the record's path and the record (None if missing)."""
    models = [certified.ACCEPTED_MODEL] + ([certified.CLIE_SOLUTION] if rescued else [])
    found = []
    for name in models:
        path = certified.record_path(trajectory, ts, run, name, directory)
        record = read_json_record(path) if path.is_file() else None
        found.append({"model": name, "path": portable(path), "record": record})
    return found


def _rescue(model: DynamicModel, beta, epsilon: float) -> dict:
    """A substitute's rescue over Θ from the fresh set, as a record entry (a failure kept)."""
    try:
        return rescue_stage.rescue_entry(
            epsilon, rescue_stage.rescue_over_theta(model, beta, epsilon=epsilon)
        )
    except ProjectionFailure as error:
        return rescue_stage.rescue_entry(epsilon, None, str(error))


def _values(entry: dict | None) -> np.ndarray | None:
    """The rescued model a rescue entry holds (None when it gave none)."""
    found = None if entry is None else rescue_stage.rescue_of(entry)
    return None if found is None or found.result is None else found.result.parameters.values


def _failing_ols(raw: dict, raw_audit, sweep: list[dict], trajectory: str) -> dict | None:
    """An OLS estimate that fails the audit over Θ: the condition's own, else the build's with
    the smallest λmin over Θ (same trajectory first); None when every one passes."""
    violating = [r for r in sweep if not r["PD over Θ"]]
    if not raw_audit.passed:
        return {"case": CONDITION_OLS, "beta": raw["values"], "se": raw["std_errors"]}
    if not violating:
        return None
    same = [r for r in violating if r["trajectory"] == trajectory]
    pick = min(same or violating, key=lambda r: r["λmin over Θ"])
    run = f", run {pick['run']}" if pick["run"] != 1 else ""
    return {
        "case": SWEEP,
        "label": f"raw OLS, {pick['trajectory']} at {pick['ts'] * 1e3:g} ms{run}",
        "beta": pick["ols"],
        "se": pick["std_errors"],
        "pd_visited": pick["PD visited"],
        "violating": len(violating),
        "same_trajectory": bool(same),
    }


def first_projected(
    trajectory: str, ts: float, run: int, profile: str | None = None
) -> dict | None:
    """The SDP projection (8) Table VI shows: the condition's own if it took route O-S-C, else
    the first O-S-C condition of `profile` (of the folder when None) at the same interval (or at
    any); None if none."""
    projected = [
        r
        for r in identify.load_condition_records(profile=profile)
        if r.get("route") == identify.ROUTE_PROJECTED and r.get("projected") is not None
    ]
    ms = round(ts * 1e3)
    named = [
        r
        for r in projected
        if (r["trajectory"], round(r["ts"] * 1e3), r["run"]) == (trajectory, ms, run)
    ]
    same_ts = [r for r in projected if round(r["ts"] * 1e3) == ms]
    for rows in (named, same_ts, projected):
        if rows:
            r = rows[0]
            return {
                "label": f"SDP projection, {r['trajectory']} at {r['ts'] * 1e3:g} ms, "
                f"run {r['run']}",
                "beta": r["projected"],
                "own": bool(named),
            }
    return None


def _substitute(
    raw: dict, raw_audit, sweep: list[dict], trajectory: str, label: str, model
) -> dict:
    """The model a study without a rescued CLIE solution rescues: the condition's OLS estimate
    if it violates; else the build's violating OLS estimate with the smallest λmin over Θ (same
    trajectory first); else the estimate with the smallest margin pushed non-PD at its worst
    pose by the minimum-norm change (a constructed case)."""
    found = _failing_ols(raw, raw_audit, sweep, trajectory)
    if found is not None:
        return found
    candidates = [
        (raw_audit.lambda_min, raw["values"], raw["std_errors"], label, raw_audit.worst_pose)
    ]
    candidates += [
        (
            r["λmin over Θ"],
            r["ols"],
            r["std_errors"],
            f"{r['trajectory']} at {r['Ts (ms)']} ms",
            np.asarray(r["worst_pose_rad"]),
        )
        for r in sweep
    ]
    lam0, beta, se, name, worst = min(candidates, key=lambda c: c[0])
    pushed = audit.minimal_pd_break(np.asarray(beta, float), worst, EPS / 2, model)
    return {"case": CONSTRUCTED, "beta": pushed, "se": se, "base": name, "base_lambda": lam0}


def _concentration(c: folded.Concentration) -> dict:
    return {
        "uniform_violations": c.uniform_violations,
        "in_region": c.in_region,
        "share": c.share,
        "factor": c.factor,
        "concentrated": c.concentrated,
    }


def study_record(
    trajectory: str,
    ts: float,
    run: int,
    seeds=accepted_stage.AUDIT_SEEDS,
    profile: str | None = None,
) -> dict:
    """The audit study of one condition over `seeds`, JSON-ready (module docstring); the build's
    other conditions it draws on are `profile`'s (the folder's when None)."""
    model = shared_model("reduced")
    seeds = tuple(int(s) for s in seeds)
    label = f"{trajectory} at {ts * 1e3:g} ms"
    csv_path, json_path = accepted_stage.accepted_paths(trajectory, ts, run)
    record = accepted = None
    if csv_path.is_file() and json_path.is_file():
        parameters, record = accepted_stage.load_accepted(trajectory, ts, run, names=model.names)
        accepted = parameters.values
    raw = _condition_ols(trajectory, ts, run, record)
    truth = model.parameter_vector(model.base_from_standard(load_truth()))
    raw_label, clie_label = f"raw OLS, {label}", f"CLIE solution, {label}"
    audits = {
        (raw_label, "dense", seeds[0]): audit.audit(raw["values"], seeds[0], "dense", model),
        (TRUTH, "dense", seeds[0]): audit.audit(truth, seeds[0], "dense", model),
    }
    raw_audit = audits[(raw_label, "dense", seeds[0])]
    if record is None:
        accepted_name = f"rescued, ε = {significant(EPS, 3)} (this build has no accepted record)"
    elif record["rescue"] is None:
        accepted_name = "accepted (the CLIE solution, no rescue)"
    else:
        accepted_name = f"accepted (rescued, ε = {significant(EPS, 3)})"

    def recorded(name, found):
        for d in found:
            if d["seed"] in seeds:
                audits[(name, "dense", int(d["seed"]))] = audit.AuditResult.from_dict(d)

    sweep = sweep_rows(seeds[0])
    if accepted_stage.rescued_by_record(record):
        case, bad_label = REPRODUCTION, clie_label
        bad_beta, bad_se = np.asarray(record["refined"], float), np.asarray(raw["std_errors"])
        recorded(clie_label, record["first_audits"])
        found = recorded_rescues(trajectory, ts, run)
        rescues = {EARLIER: found[EPS_EARLIER], FRESH: found[EPS]}
        choice = {"case": case}
    else:
        choice = _substitute(raw, raw_audit, sweep, trajectory, label, model)
        case = choice["case"]
        bad_label = choice.get("label") or {
            CONDITION_OLS: raw_label,
            CONSTRUCTED: f"constructed: {choice.get('base')} pushed non-PD",
        }.get(case)
        bad_beta, bad_se = np.asarray(choice.pop("beta"), float), np.asarray(choice.pop("se"))
        rescues = {
            k: _rescue(model, bad_beta, e) for k, e in ((EARLIER, EPS_EARLIER), (FRESH, EPS))
        }
    if record is not None:
        recorded(accepted_name, record["final_audits"])
    submitted = _values(rescues[EARLIER])
    rescued = accepted if case == REPRODUCTION else _values(rescues[FRESH])
    if accepted is None:
        if rescued is None:
            raise RuntimeError(f"no accepted record and the rescue of {bad_label} failed")
        accepted = rescued
    submitted_name = f'rescued, ε = {significant(EPS_EARLIER, 3)} ("submitted")'
    rescued_name = (
        accepted_name
        if case == REPRODUCTION or record is None
        else f"substitute rescued, ε = {significant(EPS, 3)}"
    )
    # Table IX: each model under both audits and every seed (the record's dense audits kept)
    models = {} if bad_label == raw_label else {raw_label: raw["values"]}
    models[bad_label] = bad_beta
    if submitted is not None:
        models[submitted_name] = submitted
    if case != REPRODUCTION and rescued is not None:
        models[rescued_name] = rescued
    models[accepted_name] = accepted
    models[TRUTH] = truth
    for name, beta in models.items():
        for kind in KINDS:
            for seed in seeds:
                if (name, kind, seed) not in audits:
                    audits[(name, kind, seed)] = audit.audit(beta, seed, kind, model)

    def dense(name):
        return [audits[(name, "dense", s)] for s in seeds]

    # the manufacturer's box
    manufacturer = {
        name: [audit.audit(beta, s, "manufacturer", model).to_dict() for s in seeds]
        for name, beta in (("accepted", accepted), (TRUTH, truth))
    }
    # Table X: the paper's four kinds of infeasible model, each as this build has it or as a
    # named substitute, and the accepted one, against the accepted model; and (beyond the
    # paper) the model the study rescues against the twin's truth
    kinds = _table_x_models(
        (raw, raw_audit, raw_label, sweep, trajectory, ts, run),
        (case, bad_label, bad_beta, record, clie_label),
        submitted_name if submitted is not None else None,
        submitted,
        profile,
    )
    table_x = [
        {"kind": k, **_table_x_row(n, b, accepted, "accepted", seeds[0], model)}
        for k, n, b in kinds
    ]
    table_x += [
        {
            "kind": ACCEPTED_KIND,
            **_table_x_row(accepted_name, accepted, accepted, "accepted", seeds[0], model),
        },
        {"kind": RESCUED_KIND, **_table_x_row(bad_label, bad_beta, truth, TRUTH, seeds[0], model)},
    ]
    # where the violations lie (first seed)
    poses = audit.audit_poses(seeds[0])
    lam = audit.arm_lambda_min(bad_beta, poses.poses, model)
    violators = poses.poses[lam <= 0]
    maps = []
    for joints in MAP_JOINTS:
        cells = audit.lambda_min_map(bad_beta, poses, joints, bins=MAP_BINS, model=model)
        maps.append(
            {
                "joints": list(joints),
                "edges_rad": [e.tolist() for e in cells["edges"]],
                "lambda_min": cells["lambda_min"].tolist(),
                "violations": cells["violations"].tolist(),
            }
        )
    first_runs = [r for r in sweep if r["run"] == 1]
    population = folded.pooled(
        folded.Concentration(r["uniform_violations"], r["in_folded_region"]) for r in first_runs
    )
    dense_sets, sparse_sets = audit.audit_poses(seeds[0]), audit.sparse_audit_poses(seeds[0])
    return {
        "trajectory": trajectory,
        "ts": ts,
        "run": run,
        "seeds": list(seeds),
        "label": label,
        "case": case,
        "choice": choice,
        "names": {
            "raw": raw_label,
            "clie": clie_label,
            "bad": bad_label,
            "submitted": submitted_name,
            "rescued": rescued_name,
            "accepted": accepted_name,
            "truth": TRUTH,
        },
        "epsilon": EPS,
        "earlier_epsilon": EPS_EARLIER,
        "accepted_record": portable(json_path) if record is not None else None,
        "record": None
        if record is None
        else {k: record[k] for k in ("verdict", "accepted", "rescue", "first_audits")},
        "parameter_names": list(model.names),
        "raw": raw,
        "truth": truth.tolist(),
        "bad": {"values": bad_beta.tolist(), "std_errors": np.asarray(bad_se, float).tolist()},
        "accepted": np.asarray(accepted, float).tolist(),
        "rescued": None if rescued is None else np.asarray(rescued, float).tolist(),
        "rescues": rescues,
        "models": list(models),
        "audits": [
            {"model": n, "kind": k, **a.to_dict(), "seed": s} for (n, k, s), a in audits.items()
        ],
        "folded_rate_ratio": {name: audit.folded_rate_ratio(dense(name)) for name in models},
        "manufacturer": manufacturer,
        "table_x": table_x,
        "violations": {
            "poses": len(lam),
            "count": int(np.count_nonzero(lam <= 0)),
            "max_theta4_deg": float(np.rad2deg(violators[:, 3].max())) if len(violators) else None,
            "where": _concentration(folded.of_lambdas(poses, lam)),
            "maps": maps,
        },
        "population": {"size": len(first_runs), **_concentration(population)},
        "sweep": [{k: v for k, v in r.items() if k not in ("ols", "std_errors")} for r in sweep],
        "pose_sets": {
            "dense": dense_sets.counts(),
            "dense_total": len(dense_sets),
            "sparse": sparse_sets.counts(),
            "sparse_total": len(sparse_sets),
            "folded_volume_share": folded.region_volume_share(),
            "rescue_random_poses": rescue_stage.RESCUE_RANDOM_POSES,
            "corners": len(audit.box_corners()),
        },
        "boxes_rad": {
            "domain": audit.audit_domain().tolist(),
            "manufacturer": audit.manufacturer_box().tolist(),
            "folded": audit.folded_region().tolist(),
        },
        "certified": certified_records(trajectory, ts, run, case == REPRODUCTION),
    }


def _table_x_models(
    condition: tuple, rescued: tuple, submitted_name, submitted, profile: str | None = None
) -> list:
    """Table X's infeasible models, (paper's kind, name, parameters), in the pipeline's order:
    the unrescued OLS estimate (the condition's if it fails the audit, else the build's failing
    one `_failing_ols` picks), the SDP projection (`first_projected`), the CLIE solution and
    the submitted ε = 0 rescue; the study's substitute stands in for a kind the build lacks."""
    raw, raw_audit, raw_label, sweep, trajectory, ts, run = condition
    case, bad_label, bad_beta, record, clie_label = rescued
    found = []
    ols = _failing_ols(raw, raw_audit, sweep, trajectory)
    if ols is None:
        found.append((KIND_OLS, bad_label, bad_beta))
    else:
        found.append((KIND_OLS, ols.get("label") or raw_label, np.asarray(ols["beta"], float)))
    sdp = first_projected(trajectory, ts, run, profile)
    if sdp is not None:
        found.append((KIND_SDP, sdp["label"], np.asarray(sdp["beta"], float)))
    if case == REPRODUCTION:
        found.append((KIND_CLIE, bad_label, bad_beta))
    elif record is not None:
        found.append((KIND_CLIE, clie_label, np.asarray(record["refined"], float)))
    if submitted is not None:
        found.append((KIND_SUBMITTED, submitted_name, submitted))
    return found


def _table_x_row(name: str, beta_hat, beta_ref, reference: str, seed: int, model) -> dict:
    """One row of Table X: what `beta_hat` does once M is inverted, against `beta_ref`."""
    c = consequences.consequences(beta_hat, beta_ref, seed, model)
    w = c.at_worst_pose
    return {
        "model": name,
        "reference": reference,
        "non-PD (% of uniform draw)": 100 * c.non_pd_fraction,
        "τgrow at worst pose (ms)": 1e3 * w.tau_grow_s,
        "fastest τgrow (ms)": 1e3 * c.tau_grow_fastest_s,
        "misdirected torques (%)": 100 * w.misdirected_share,
        "median torque-error ratio (%)": 100 * w.median_torque_error_ratio,
        "along λmin eigenvector (%)": 100 * w.eigdir_torque_error_ratio,
        "sign reversed": bool(w.eigdir_sign_reversed),
        "1/λ at worst pose (1/(kg·m²))": w.observer_gain,
    }


def theta_r(record: dict) -> np.ndarray:
    """The accepted record's Θr of its first rescue pass: the fresh set (random poses and
    corners) and the worst poses of the failing audits, as Algorithm 1 built it."""
    witnesses = [
        [w["pose_rad"] for w in a["worst"]] for a in record["first_audits"] if not a["passed"]
    ]
    return np.vstack([rescue_stage.initial_theta_r(), *map(np.asarray, witnesses)])
