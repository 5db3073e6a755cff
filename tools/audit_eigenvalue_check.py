"""Every audit the build's records hold, recomputed with the compiled lambda_min
(`DynamicModel.arm_min_eigenvalue`) and with numpy's eigvalsh on the same M: verdicts, violation
counts and the worst poses (all k, in order) compared, and the largest |difference| of
lambda_min over every pose relative to ||A||_2 (max |eigenvalue| of the arm block A).

    env $(python3 crane_lib/arithmetic.py) .venv/bin/python tools/audit_eigenvalue_check.py

Records read (a full build's): accepted/, audit_study/ (dense and sparse audits of each model),
repeats/, kt_draws/ (screened audits: verdict, violations, lambda_min and worst pose), export/,
your_arm/, other_arms/ and torque_scale/ (the other arms' accepted models), and audits/ (the
OLS estimates of every condition, from conditions/). Each recorded audit is also compared with
the eigvalsh recomputation (the records were written when lambda_min was LAPACK's, eigvalsh's
bit for bit), which shows that each model was paired with its own audit. Where worst poses
differ, it says whether the poses swapped are ties (eigvalsh's values within the tolerance:
poses the audit's sets hold twice, such as theta = -180 and +180 deg on joints 3, 5 and 7).
Exit status 1 when a verdict or a violation count differs or a difference exceeds 1e-10.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TOLERANCE = 1e-10  # of ||A||_2


@dataclass
class Job:
    """One recorded audit and the model it audits."""

    source: str
    arm: str | None  # None: the CRANE-X7
    names: tuple[str, ...]
    beta: np.ndarray
    kind: str
    seed: int
    recorded: dict
    screened: bool = False


class _Given:
    """A stand-in model whose lambda_min is given (the audit's bookkeeping on given values)."""

    def __init__(self, lam):
        self.lam = lam

    def arm_min_eigenvalue(self, q, beta):
        """The given values."""
        return self.lam


def _accepted_jobs(node: dict, source: str, arm: str | None) -> list[Job]:
    """first_audits of `refined`, final_audits of `parameters` (an accepted record's layout)."""
    names = tuple(node["names"])
    jobs = []
    for key, vector in (("first_audits", "refined"), ("final_audits", "parameters")):
        for a in node.get(key) or []:
            beta = np.asarray(node[vector], float)
            jobs.append(Job(f"{source} {key}", arm, names, beta, "dense", int(a["seed"]), a))
    return jobs


def discover(results: Path) -> list[Job]:
    """Every audit with its model in the records under `results`."""
    from crane_lib.identification import condition as identify
    from crane_lib.model.dynamics import model as shared_model
    from crane_lib.records import read_json_record

    crane = tuple(shared_model("reduced").names)
    jobs: list[Job] = []
    for path in sorted((results / "accepted").glob("*.json")):
        jobs += _accepted_jobs(read_json_record(path), f"accepted/{path.name}", None)
    for path in sorted((results / "your_arm").glob("*.json")):
        record = read_json_record(path)
        if tuple(record["names"]) == crane:
            jobs += _accepted_jobs(record, f"your_arm/{path.name}", None)
    for path in sorted((results / "other_arms").glob("*.json")):
        record = read_json_record(path)
        arm = None if path.stem == "crane_x7" else path.stem
        for mode in ("algorithm1", "algorithm1_other_mode"):
            if mode in record:
                node = record[mode]["accepted"]
                jobs += _accepted_jobs(node, f"other_arms/{path.name} {mode}", arm)
    for path in sorted((results / "torque_scale").glob("*.json")):
        record = read_json_record(path)
        for run, node in record["runs"].items():
            jobs += _accepted_jobs(node["record"], f"torque_scale/{path.name} {run}", path.stem)
    for path in sorted((results / "audit_study").glob("*.json")):
        record = read_json_record(path)
        names = tuple(record["parameter_names"])
        by_role = {
            "raw": record["raw"]["values"],
            "bad": record["bad"]["values"],
            "submitted": (record["rescues"]["earlier"].get("projection") or {}).get("values"),
            "accepted": record["accepted"],
            "truth": record["truth"],
        }
        vectors = {record["names"][role]: v for role, v in by_role.items() if v is not None}
        for a in record["audits"]:
            beta = np.asarray(vectors[a["model"]], float)
            source = f"audit_study/{path.name} {a['model']}"
            jobs.append(Job(source, None, names, beta, a["kind"], int(a["seed"]), a))
    for path in sorted((results / "repeats").glob("*.json")):
        record = read_json_record(path)
        beta = np.asarray(record["ols"], float)
        jobs.append(Job(f"repeats/{path.name}", None, crane, beta, "dense", 1, record["audit"]))
    for path in sorted((results / "export").glob("*.json")):
        record = read_json_record(path)
        if record.get("audit"):
            beta = np.asarray(record["base"], float)
            jobs.append(Job(f"export/{path.name}", None, crane, beta, "dense", 1, record["audit"]))
    for path in sorted((results / "kt_draws").glob("*/*.json")):
        record = read_json_record(path)
        nodes = (
            {"nominal": record["nominal"], **record.get("corrected", {})}
            if "nominal" in record
            else {"draw": record}
        )
        for label, node in nodes.items():
            if "audit" in node:
                beta = np.asarray(node["ols"], float)
                source = f"kt_draws/{path.parent.name}/{path.name} {label}"
                jobs.append(Job(source, None, crane, beta, "dense", 1, node["audit"], True))
    ols_audits = results / "audits" / "ols_dense_seed1.json"
    if ols_audits.is_file():
        found = read_json_record(ols_audits)
        conditions = {
            (r["trajectory"], r["ts"], r["run"]): r for r in identify.load_condition_records()
        }
        for a in found["audits"]:
            r = conditions[(a["trajectory"], a["ts"], a["run"])]
            source = f"audits/ols_dense_seed1 {a['trajectory']} {a['ts'] * 1e3:g} ms run {a['run']}"
            beta = np.asarray(r["ols"], float)
            jobs.append(Job(source, None, crane, beta, "dense", int(found["seed"]), a, True))
    return jobs


def _model(arm: str | None, names: tuple[str, ...]):
    """The shared DynamicModel of the arm whose parameter set has exactly `names`."""
    from crane_lib.model import arm_description
    from crane_lib.model.base_parameters import PARAMETER_SETS
    from crane_lib.model.dynamics import model as shared_model

    description = None if arm is None else arm_description.load_arm(arm)
    for parameter_set in PARAMETER_SETS:
        candidate = shared_model(parameter_set, arm=description)
        if tuple(candidate.names) == names:
            return candidate
    raise ValueError(f"{arm or 'crane_x7'}: no parameter set with the names {names}")


def _worst_diff(ours, reference, norm) -> tuple[int, int]:
    """(positions whose worst pose differs, of which ties: lambda_min within the tolerance)."""
    differ = np.flatnonzero(np.any(ours.worst_poses != reference.worst_poses, axis=1))
    ties = sum(
        abs(ours.worst_lambdas[i] - reference.worst_lambdas[i]) <= TOLERANCE * norm[i]
        for i in differ
    )
    return len(differ), int(ties)


def _recorded_violations(recorded: dict) -> int:
    v = recorded.get("violations")
    return int(sum(v.values())) if isinstance(v, dict) else int(recorded.get("n_violations", v))


def check(job: Job, cache: dict) -> dict:
    """The audit of one job by both routines, compared with each other and with the record."""
    from crane_lib.acceptance import audit
    from tests.audit_cases import EigvalshModel

    model = _model(job.arm, job.names)
    key = (job.arm, job.names, job.beta.tobytes(), job.kind, job.seed)
    if key not in cache:
        arm = audit.other_arm(model)
        make = audit.POSE_SETS[job.kind]
        pose_set = make(job.seed) if arm is None else make(job.seed, arm)
        ours = model.arm_min_eigenvalue(pose_set.poses, job.beta)
        reference, norm = EigvalshModel(model).extremes(pose_set.poses, job.beta)
        worst_k = len(job.recorded.get("worst") or []) or audit.DEFAULT_WORST_K
        cache[key] = {
            "ours": audit.audit_pose_set(job.beta, pose_set, _Given(ours), worst_k),
            "eigvalsh": audit.audit_pose_set(job.beta, pose_set, _Given(reference), worst_k),
            "relative": float(np.max(np.abs(ours - reference) / norm)),
            "poses": len(pose_set),
        }
        worst = cache[key]["eigvalsh"].worst_poses
        cache[key]["worst_norm"] = EigvalshModel(model).extremes(worst, job.beta)[1]
    found = cache[key]
    ours, reference = found["ours"], found["eigvalsh"]
    recorded = job.recorded
    worst_recorded = np.asarray(recorded["worst_pose_rad"], float)
    row = {
        "source": job.source,
        "kind": job.kind,
        "seed": job.seed,
        "poses": found["poses"],
        "passed": ours.passed,
        "violations": ours.n_violations,
        "lambda_min": ours.lambda_min,
        "verdict same": ours.passed == reference.passed,
        "violations same": ours.violations == reference.violations,
        "max |diff| / ||A||_2": found["relative"],
        "record = eigvalsh": recorded["passed"] == reference.passed
        and _recorded_violations(recorded) == reference.n_violations
        and recorded["lambda_min"] == reference.lambda_min
        and np.array_equal(worst_recorded, reference.worst_pose),
        "worst pose same": np.array_equal(ours.worst_pose, reference.worst_pose),
    }
    if job.screened:
        row["worst poses differ (ties)"] = "-"
    else:
        differ, ties = _worst_diff(ours, reference, found["worst_norm"])
        row["worst poses differ (ties)"] = f"{differ} ({ties})"
        row["worst components same"] = ours.worst_components == reference.worst_components
    return row


def main(argv=None) -> int:
    """Check every recorded audit; print one line each and a summary."""
    from tqdm import tqdm

    from crane_lib.paths import RESULTS_DIR

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    jobs = discover(args.results)
    cache: dict = {}
    rows = [check(job, cache) for job in tqdm(jobs, desc="audits", unit="audit")]
    for row in rows:
        print(
            f"{row['source']:<72} {row['kind']:<6} seed {row['seed']} "
            f"{'PASS' if row['passed'] else 'FAIL'} {row['violations']:>6} violations, "
            f"lambda_min {row['lambda_min']:+.6e}; verdict/violations same "
            f"{row['verdict same']}/{row['violations same']}, worst pose same "
            f"{row['worst pose same']}, worst poses differ {row['worst poses differ (ties)']}, "
            f"max |diff|/||A|| {row['max |diff| / ||A||_2']:.1e}, record = eigvalsh "
            f"{row['record = eigvalsh']}"
        )
    worst = max(r["max |diff| / ||A||_2"] for r in rows)
    bad = [r for r in rows if not (r["verdict same"] and r["violations same"])]
    moved = [r for r in rows if not r["worst pose same"]]
    unpaired = [r for r in rows if not r["record = eigvalsh"]]
    swapped = [r for r in rows if r["worst poses differ (ties)"] not in ("-", "0 (0)")]
    print(
        f"\n{len(rows)} recorded audits ({len(cache)} distinct model/pose-set pairs, "
        f"{sum(c['poses'] for c in cache.values()):,} poses): verdicts or violation counts differ "
        f"in {len(bad)}; worst pose differs in {len(moved)}; some of the k worst poses differ in "
        f"{len(swapped)}; record differs from the eigvalsh recomputation in {len(unpaired)}; "
        f"max |lambda_min - eigvalsh| / ||A||_2 = {worst:.2e} (tolerance {TOLERANCE:g})"
    )
    return 0 if not bad and worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
