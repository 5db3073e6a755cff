"""The claims step (crane_book.claims), the pages' view of it (crane_lib.reporting.claims) and
the downloads (crane_book.downloads).

The claim functions themselves run on the build's records in the main job; here: each claim
links to a section label that exists in its page, verdicts follow their stated rules, a claim
is recomputed when and only when its key changes (and says why), and bundles are
byte-identical for identical records.
"""

from __future__ import annotations

import json
import re
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest

from crane_book import claims, downloads, keys
from crane_lib import verdicts
from crane_lib.paper_numbers import paper
from crane_lib.paths import REPO_ROOT
from crane_lib.reporting import claims as views

from .refinement_cases import refinement_report


def _labels(docname: str) -> list[str]:
    """The MyST labels of a page: `(label)=` lines (`# (label)=` in a jupytext percent chapter)."""
    suffix = ".py" if docname.startswith("chapters/") else ".md"
    text = (REPO_ROOT / f"{docname}{suffix}").read_text(encoding="utf-8")
    return re.findall(r"^(?:# )?\(([^)\s]+)\)=\s*$", text, flags=re.M)


@pytest.mark.parametrize(
    "claim", [c for c in claims.REGISTRY.values() if c.chapter], ids=lambda c: c.id
)
def test_each_claim_links_to_an_existing_section(claim):
    assert (REPO_ROOT / f"{claim.chapter}.py").exists(), f"{claim.id}: no chapter {claim.chapter}"
    assert claim.section in _labels(claim.chapter), (
        f"{claim.id}: no label ({claim.section})= in {claim.chapter}"
    )
    # the label stands directly above the section's heading, which the page shows as the link
    assert claim.anchor == claim.section and claim.heading(), claim.id


def test_the_page_order_lists_every_claim_once():
    assert list(claims.REGISTRY) == list(claims.PAGE_ORDER)
    assert len(set(claims.PAGE_ORDER)) == len(claims.PAGE_ORDER)


def test_a_claims_key_covers_its_chapters_module_and_what_it_imports():
    parts = claims.REGISTRY["kt_sensitivity"].key("quick").parts
    sources = {name for name in parts if name.startswith("source ")}
    assert sources == {
        f"source crane_book/claims/{name}.py"
        for name in ("__init__", "registry", "results", "kt_sensitivity")
    }
    assert "code crane_lib/acceptance/kt_sensitivity.py" in parts  # imported by the claim
    assert "code crane_lib/identification/ols.py" in parts
    step = claims.code_parts()  # the whole step: every module of the package
    assert {f"source crane_book/claims/{m}.py" for m in ("audit", "validation")} <= set(step)


def test_every_claim_reads_its_paper_numbers_by_id():
    for c in claims.REGISTRY.values():
        assert c.paper_ids, c.id
        for number_id in c.paper_ids:
            assert paper(number_id).text().replace("^2", "²") in c.paper_text()
        # statements quote no paper number (they come from the ids)
        assert not re.search(r"\d", re.sub(r"\b[A-Z]{1,2}\d\d\b", "", c.statement)), (
            f"{c.id}: a number typed into the statement"
        )


def _results(**attributes):
    return SimpleNamespace(**attributes)


def _audit(passed, lam=1e-3, n=0):
    return SimpleNamespace(passed=passed, lambda_min=lam, n_violations=n)


def test_routing_claim_verdict_follows_its_rule():
    compute = claims.REGISTRY["routing_weaker_than_audit"].compute
    gap = _results(
        ols_audits=[
            ({"pd_visited": True}, _audit(False, -1e-4, 5)),
            ({"pd_visited": True}, _audit(True)),
        ]
    )
    assert compute(gap).verdict == claims.REPRODUCED
    assert "1 pass the routing test and fail over Θ, 0 the reverse" in compute(gap).number
    no_gap = _results(
        ols_audits=[
            ({"pd_visited": True}, _audit(True)),
            ({"pd_visited": False}, _audit(False, -1e-3, 9)),
        ]
    )
    assert compute(no_gap).verdict == claims.CONTRADICTED
    reverse = _results(
        ols_audits=[
            ({"pd_visited": True}, _audit(False, -1e-4, 2)),
            ({"pd_visited": False}, _audit(True)),
        ]
    )
    assert (
        compute(reverse).verdict == claims.REPRODUCED
    )  # the gap is there; the reverse is its own claim
    no_reverse = claims.REGISTRY["routing_no_reverse"].compute
    assert (
        no_reverse(reverse).verdict == claims.CONTRADICTED
        and no_reverse(gap).verdict == claims.REPRODUCED
    )
    assert compute(_results(ols_audits=[])).verdict == claims.NOT_COMPUTED


def _accepted(rescue=None, seeds_lambda=(5e-4,), passed=None, first_lambda=2e-3):
    passed = passed or [True] * len(seeds_lambda)
    return {
        "first_audits": [
            {
                "lambda_min": first_lambda,
                "passed": True,
                "violations": {"grid": 0, "uniform": 0, "folded": 0},
            }
        ],
        "final_audits": [
            {"lambda_min": lam, "passed": ok} for lam, ok in zip(seeds_lambda, passed)
        ],
        "rescue": rescue,
        "accepted": all(passed),
    }


def test_rescue_claims_are_not_testable_without_a_rescue():
    for claim_id in ("rescue_costs_nothing", "validation_rescue_gain"):
        compute = claims.REGISTRY[claim_id].compute
        assert compute(_results(accepted=_accepted())).verdict == claims.NOT_TESTABLE
        assert compute(_results(accepted=None)).verdict == claims.NOT_COMPUTED


def test_margin_claim_detects_a_margin_fixed_by_the_grid():
    compute = claims.REGISTRY["audit_margin_seeds"].compute
    moved = compute(_results(accepted=_accepted(seeds_lambda=(5e-4, 6e-4, 7e-4, 8e-4, 9e-4))))
    assert (
        moved.verdict == claims.REPRODUCED
        and "factor 1.8" in moved.number
        and "PD on 5 of 5 seeds" in moved.number
    )
    fixed = compute(_results(accepted=_accepted(seeds_lambda=(5e-4,) * 5)))
    assert fixed.verdict == claims.CONTRADICTED and "deterministic grid" in fixed.detail
    flips = _results(
        accepted=_accepted(
            seeds_lambda=(5e-4, -1e-4, 6e-4, 7e-4, 8e-4), passed=[True, False, True, True, True]
        )
    )
    assert (
        compute(flips).verdict == claims.REPRODUCED
    )  # the margin moves; the verdict is its own claim
    verdict = claims.REGISTRY["audit_verdict_seeds"].compute
    assert verdict(flips).verdict == claims.CONTRADICTED
    assert (
        verdict(_results(accepted=_accepted(seeds_lambda=(5e-4,) * 5))).verdict == claims.REPRODUCED
    )


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A results folder of its own and one registered claim that reads one input file."""
    results = tmp_path / "results"
    monkeypatch.setattr(claims.registry, "RESULTS_DIR", results)
    monkeypatch.setattr(keys, "RESULTS_DIR", results)
    monkeypatch.setattr(verdicts, "CLAIMS_DIR", results / "claims")
    monkeypatch.setattr(views, "CLAIMS_DIR", results / "claims")
    monkeypatch.setattr(downloads, "RESULTS_DIR", results)
    monkeypatch.setattr(downloads, "DOWNLOADS_DIR", results / "downloads")
    source = results / "conditions" / "one.json"
    source.parent.mkdir(parents=True)
    source.write_text('{"value": 2}', encoding="utf-8")

    def compute(_results):
        value = float(json.loads(source.read_text(encoding="utf-8"))["value"])
        return claims.Outcome(
            claims.REPRODUCED if value > 1 else claims.CONTRADICTED,
            f"value {value:g}",
            "from one.json",
        )

    test_claim = claims.PaperClaim(
        "test_claim",
        "Sec. T",
        "A test claim.",
        ("rescue_eps_pd",),
        "chapters/06_audit",
        "audit-table-ix-what-the-audit-s",
        ("results/conditions/*.json",),
        compute,
    )
    monkeypatch.setattr(claims.registry, "REGISTRY", {"test_claim": test_claim})
    return source


def test_a_claim_is_recomputed_when_and_only_when_its_key_changes(sandbox):
    assert views.current("test_claim", "quick")["verdict"] == views.NOT_COMPUTED  # no record yet
    assert (claims.write_claims("quick", show_progress=False).recomputed, len(views.records())) == (
        1,
        1,
    )
    first = verdicts.record_path("test_claim").read_bytes()
    again = claims.write_claims("quick", show_progress=False)
    assert (again.reused, again.recomputed) == (1, 0)
    record = views.current("test_claim", "quick")
    assert record["verdict"] == views.REPRODUCED and record["number"] == "value 2"
    assert record["inputs"] == ["results/conditions/one.json"]
    # the input changes: the step recomputes it and says why
    sandbox.write_text('{"value": 0.5}', encoding="utf-8")
    changed = claims.write_claims("quick", show_progress=False)
    assert changed.recomputed == 1 and "conditions/one.json changed" in changed.line()
    assert views.current("test_claim", "quick")["verdict"] == views.CONTRADICTED
    # another profile is another key
    assert "parameters changed" in claims.write_claims("full", show_progress=False).line()
    # byte-identical on a rerun of the same inputs
    sandbox.write_text('{"value": 2}', encoding="utf-8")
    assert claims.write_claims("quick", show_progress=False).recomputed == 1
    assert verdicts.record_path("test_claim").read_bytes() == first


def test_page_links_to_the_section_that_computes_each_claim(sandbox):
    claims.write_claims("quick", show_progress=False)
    html = views.page("quick")._repr_html_()
    assert 'href="../chapters/06_audit.html#audit-table-ix-what-the-audit-s"' in html
    assert 'class="verdict verdict-reproduced"' in html
    assert paper("rescue_eps_pd").text().replace("^2", "²") in html
    assert views.page("quick").counts()[views.REPRODUCED] == 1


def test_download_bundles_are_byte_identical_and_carry_a_manifest(sandbox):
    first = downloads.bundle("conditions").read_bytes()
    assert downloads.bundle("conditions").read_bytes() == first
    with zipfile.ZipFile(downloads.bundle_path("conditions")) as archive:
        assert archive.namelist() == ["conditions/one.json", "MANIFEST.txt"]
        manifest = archive.read("MANIFEST.txt").decode()
    import hashlib

    assert manifest == f"{hashlib.sha256(sandbox.read_bytes()).hexdigest()}  conditions/one.json\n"
    assert downloads.bundle("accepted") is None  # this build has none
    made = downloads.bundle_all()
    assert set(made) == {"conditions", "all"} and not downloads.bundle_path("accepted").exists()
    with pytest.raises(ValueError):
        downloads.bundle("nonsense")


def _fake_audits(monkeypatch) -> list:
    """Replace the dense audit by one that passes a positive first parameter (5 poses, 7
    violations otherwise); the list it returns collects the audited parameter vectors."""
    from crane_lib.acceptance import folded, screen

    calls = []

    def fake_audit(beta, prepared, model):
        calls.append(list(beta))
        passed, n = bool(beta[0] > 0), 0 if beta[0] > 0 else 7
        found = {"passed": passed, "lambda_min": float(beta[0]) * 1e-3, "n_violations": n}
        return SimpleNamespace(to_dict=lambda: found, violating_indices=np.arange(n))

    monkeypatch.setattr(screen, "screened_audit", fake_audit)
    monkeypatch.setattr(screen, "audit_poses", lambda seed: [0] * 5)
    monkeypatch.setattr(screen, "prepare", lambda pose_set, model: pose_set)
    monkeypatch.setattr(screen, "shared_model", lambda name: None)  # the fake audit needs no model
    monkeypatch.setattr(folded, "count", lambda pose_set, violating: folded.Concentration())
    return calls


def test_ols_audits_of_a_profile_are_its_conditions_of_a_shared_folder(tmp_path, monkeypatch):
    """A folder may hold both profiles' condition records (a full build, then a quick one): the
    quick build audits the quick profile's conditions only, the full build all of them."""
    from crane_book import pipeline
    from crane_lib.acceptance import audit
    from crane_lib.identification import condition
    from crane_lib.records import write_json_record

    path = tmp_path / "audits" / "ols.json"
    monkeypatch.setattr(condition, "CONDITIONS_DIR", tmp_path / "conditions")
    monkeypatch.setattr(audit, "OLS_AUDITS_PATH", path)
    monkeypatch.setattr(keys, "RESULTS_DIR", tmp_path)
    # AG02 at 40 ms is in both profiles' OLS/SDP sweep, AG01 at 40 ms only in the full one's
    for trajectory, first in (("AG01", -1.0), ("AG02", 1.0)):
        record = {"trajectory": trajectory, "ts": 0.04, "run": 1, "ols": [first, 2.0]}
        record["pd_visited"] = True
        write_json_record(condition.condition_record_path(trajectory, 0.04), record)
    calls = _fake_audits(monkeypatch)

    def audited():
        return [a["trajectory"] for a in json.loads(path.read_text(encoding="utf-8"))["audits"]]

    assert pipeline.ols_audits_step("quick").recomputed == 1 and audited() == ["AG02"]
    assert pipeline.ols_audits_step("full").recomputed == 1 and audited() == ["AG01", "AG02"]
    assert pipeline.ols_audits_step("full").reused == 1 and len(calls) == 3


def test_ols_audits_are_computed_once_per_content(tmp_path, monkeypatch):
    from crane_book import pipeline
    from crane_lib.acceptance import audit
    from crane_lib.identification import condition
    from crane_lib.records import write_json_record

    conditions = tmp_path / "conditions"
    path = tmp_path / "audits" / "ols.json"
    monkeypatch.setattr(condition, "CONDITIONS_DIR", conditions)
    monkeypatch.setattr(audit, "OLS_AUDITS_PATH", path)
    monkeypatch.setattr(keys, "RESULTS_DIR", tmp_path)
    write_json_record(
        conditions / "a.json",
        {"trajectory": "AG02", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [1.0, 2.0]},
    )
    write_json_record(
        conditions / "b.json",
        {"trajectory": "AP01", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [-1.0, 2.0]},
    )
    calls = _fake_audits(monkeypatch)
    pipeline.ols_audits_step()
    record = json.loads(path.read_text(encoding="utf-8"))
    assert (
        len(calls) == 2
        and [a["passed"] for a in record["audits"]] == [True, False]
        and record["n_poses"] == 5
    )
    assert pipeline.ols_audits_step().reused == 1 and len(calls) == 2  # same records: reused
    write_json_record(
        conditions / "b.json",
        {"trajectory": "AP01", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [3.0, 2.0]},
    )
    assert "conditions/b.json changed" in pipeline.ols_audits_step().line()
    record = json.loads(path.read_text(encoding="utf-8"))
    assert len(calls) == 4 and [a["passed"] for a in record["audits"]] == [True, True]
    # the routing claim reads the same record: both PD where visited and over Θ, no gap
    results = claims.Results()
    results.__dict__["conditions"] = [
        json.loads(p.read_text(encoding="utf-8")) for p in sorted(conditions.glob("*.json"))
    ]
    assert (
        claims.REGISTRY["routing_weaker_than_audit"].compute(results).verdict == claims.CONTRADICTED
    )


def test_download_link_is_a_myst_role_relative_to_the_page(tmp_path, monkeypatch):
    from crane_lib.paths import REPO_ROOT

    monkeypatch.setattr(downloads, "DOWNLOADS_DIR", REPO_ROOT / "results" / "downloads")
    text = downloads.link("conditions").data
    assert text == (
        "{download}`Download the OLS/SDP condition records (one JSON per condition) "
        "(crane-x7-conditions-records.zip) "
        "<../results/downloads/crane-x7-conditions-records.zip>`"
    )
    assert "<../../results/downloads/" in downloads.link("all", "book/sub/page.md", "all").data


def test_structural_claim_on_a_profile_subset_is_not_the_papers_check():
    compute = claims.REGISTRY["structural_selection"].compute
    rng = np.random.default_rng(3)
    labels = [("AG02", 0.04)] + [(f"PX{i:02d}", 0.04) for i in range(15)]
    vectors = rng.normal(size=(16, 39))
    vectors[0] = vectors[1:].mean(
        axis=0
    )  # the candidate at the cloud's centre: central under every metric

    def results(kappa_rank):
        kappas = np.arange(1.0, 17.0) * 10
        kappas[[0, kappa_rank - 1]] = kappas[[kappa_rank - 1, 0]]
        clouds = SimpleNamespace(labels=labels, kappas=kappas, vectors={"CLIE": vectors})
        return _results(structural=(["AG02"], 0.04), clouds=clouds, candidate_index=0)

    assert compute(results(1)).verdict == claims.REPRODUCED
    subset = compute(results(3))  # rank 3 of 16 is outside the lowest decile of a 16-point cloud
    assert subset.verdict == claims.NOT_COMPUTED and "full profile" in subset.detail
    other = results(1)
    other.structural = (["AP01"], 0.04)  # the rule names another trajectory
    assert compute(other).verdict == claims.CONTRADICTED


def test_rescue_gain_names_the_records_where_the_rescued_model_is_worse(monkeypatch):
    """Refined and accepted vectors are scalars here; the error model is 'error = parameter' per
    record."""
    from crane_lib.identification import metrics

    def error(_model, beta, bundle):
        value = float(np.asarray(beta).ravel()[0]) * bundle
        return SimpleNamespace(rmse=value, mne=value)

    monkeypatch.setattr(metrics, "prediction_error", error)
    compute = claims.REGISTRY["validation_rescue_gain"].compute
    rescued = dict(_accepted(rescue={"eps": 1e-3}), refined=[1.0], parameters=[0.99])
    better = compute(_results(accepted=rescued, model=None, heldout=[1.0, 2.0, 3.0]))
    assert better.verdict == claims.REPRODUCED and "V01: RMSE 1.0 % better" in better.number
    worse = compute(
        _results(accepted=dict(rescued, parameters=[1.01]), model=None, heldout=[1.0, 2.0, 3.0])
    )
    assert worse.verdict == claims.CONTRADICTED
    assert "by RMSE on V01, V02, V03" in worse.detail
    mne = claims.REGISTRY["validation_rescue_mne"].compute
    assert (
        mne(_results(accepted=rescued, model=None, heldout=[1.0, 2.0, 3.0])).verdict
        == claims.REPRODUCED
    )
    monkeypatch.setattr(claims.validation, "_rescued_axes", lambda results: " (axes)")
    worse_mne = mne(
        _results(accepted=dict(rescued, parameters=[1.01]), model=None, heldout=[1.0, 2.0, 3.0])
    )
    # the axes are the computed part of the reason, which the page shows after the detail
    assert worse_mne.verdict == claims.CONTRADICTED and worse_mne.why.endswith(" (axes)")


def _kt_record(seed, mne_change, flipped):
    return {"seed": seed, "mne_change": mne_change, "verdict_flipped": flipped}


def test_kt_claim_verdict_follows_its_rule(monkeypatch):
    from crane_lib.acceptance import kt_sensitivity as kt

    compute = claims.REGISTRY["kt_sensitivity"].compute
    bound = paper("kt_mne_change_max").value / 100

    def with_draws(records):
        monkeypatch.setattr(kt, "load_draws", lambda *args: (records, []))
        return compute(_results())

    small = [_kt_record(1, 0.5 * bound, False), _kt_record(2, -0.5 * bound, True)]
    assert with_draws(small).verdict == claims.REPRODUCED
    assert (
        with_draws([_kt_record(1, 2 * bound, False), _kt_record(2, 0.1 * bound, True)]).verdict
        == claims.CONTRADICTED
    )
    # the MNE bound alone decides kt_sensitivity; the flips are kt_verdict_flips
    no_flip = [_kt_record(1, 0.1 * bound, False), _kt_record(2, 0.1 * bound, False)]
    assert with_draws(no_flip).verdict == claims.REPRODUCED
    assert with_draws([{"seed": 1, "failure": "ValueError: x"}]).verdict == claims.NOT_COMPUTED
    flips = claims.REGISTRY["kt_verdict_flips"].compute
    assert flips(_results()).verdict == claims.NOT_COMPUTED  # the failed draw above is still loaded
    monkeypatch.setattr(kt, "load_draws", lambda *args: (small, []))
    assert flips(_results()).verdict == claims.REPRODUCED
    monkeypatch.setattr(kt, "load_draws", lambda *args: (no_flip, []))
    assert flips(_results()).verdict == claims.CONTRADICTED


def test_run_to_run_claim_is_not_testable_on_the_twin_and_missing_without_records(monkeypatch):
    import pandas as pd

    from crane_lib.acceptance import reproducibility as repro

    compute = claims.REGISTRY["run_to_run_scale"].compute
    monkeypatch.setattr(claims.reproducibility, "read_conditions", lambda name: [])

    def table(spread):
        rows = {} if spread is None else {"AG02": {"spread (%)": spread, "executions": 2}}
        monkeypatch.setattr(repro, "profile_records", lambda conditions: [{"any": 1}])
        monkeypatch.setattr(repro, "records_frame", lambda records: None)
        monkeypatch.setattr(
            repro, "run_to_run_table", lambda frame: pd.DataFrame.from_dict(rows, orient="index")
        )

    table(1.0)
    assert compute(_results()).verdict == claims.NOT_TESTABLE
    table(None)
    assert compute(_results()).verdict == claims.NOT_COMPUTED
    monkeypatch.setattr(repro, "profile_records", lambda conditions: [])
    assert compute(_results()).verdict == claims.NOT_COMPUTED


# ------------------------------------------------------------ the claims added with their reasons


@pytest.mark.parametrize(
    "claim", [c for c in claims.REGISTRY.values() if c.reason], ids=lambda c: c.id
)
def test_each_reason_links_to_an_existing_register_label(claim):
    docname, label = claim.reason
    assert label in _labels(docname), f"{claim.id}: no label ({label})= in {docname}.md"
    link = claim.reason_link()
    assert link["anchor"] == label and link["section"], claim.id


def test_the_six_headline_differences_carry_a_reason():
    for claim_id in (
        "ols_nonpd_routing",
        "ols_infeasible_over_theta",
        "validation_rescue_mne",
        "kt_sensitivity",
        "ag02_heldout_rank",
        "clie_iterations",
    ):
        assert claims.REGISTRY[claim_id].reason is not None, claim_id


def test_the_page_links_a_claims_reason(sandbox):
    record = dict(
        claims.evaluate("test_claim"),
        reason={"docname": "book/register_audit", "section": "S", "anchor": "s"},
    )
    html = views.ClaimsTable([record])._repr_html_()
    assert 'href="../book/register_audit.html#s"' in html and "Why: S" in html


@pytest.fixture(scope="module")
def build_results():
    """The build's own records (results/), read under the profile they were built with, when this
    checkout has them."""
    from crane_lib.acceptance.audit import OLS_AUDITS_PATH

    built = sorted(verdicts.CLAIMS_DIR.glob("*.json")) if verdicts.CLAIMS_DIR.is_dir() else []
    if not OLS_AUDITS_PATH.is_file() or not built:
        pytest.skip("this checkout has no build records (make book PROFILE=quick writes them)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CRANE_PROFILE", json.loads(built[0].read_text(encoding="utf-8"))["profile"])
        yield claims.Results()


_BUILT: dict[str, dict] = {}


def _built(claim_id: str, build_results) -> dict:
    """One claim evaluated on the build's records, once for every test that reads it."""
    if claim_id not in _BUILT:
        _BUILT[claim_id] = claims.evaluate(claim_id, build_results)
    return _BUILT[claim_id]


@pytest.mark.parametrize("claim_id", list(claims.REGISTRY))
def test_each_claim_evaluates_on_the_builds_records(claim_id, build_results):
    record = _built(claim_id, build_results)
    assert record["verdict"] in verdicts.VERDICTS and record["number"] and record["detail"]
    if claims.REGISTRY[claim_id].compute is None:
        assert record["verdict"] == claims.NOT_COMPUTED


# the claims the twin contradicts in some profile: each must say why, not only show two numbers
DIFFERENCES = (
    "poi_removal",
    "structural_selection",
    "rescue_costs_nothing",
    "audit_margin_seeds",
    "infeasible_misdirects",
    "infeasible_small_torque_error",
    "validation_rescue_gain",
    "validation_rescue_mne",
    "kt_sensitivity",
    "ols_nonpd_routing",
    "violations_folded",
    "sparse_audit_seed_dependent",
    "eps0_fails_dense",
    "clie_improves_most",
    "clie_worsens_ap01",
    "clie_iterations",
    "clie_contracts_cloud",
    "absolute_error_follows_torque",
    "relative_error_runs_the_other_way",
    "ag02_heldout_rank",
    "zz7_negative",
    "spread_follows_samples",
)


def test_every_difference_links_where_its_reason_is_shown():
    for claim_id in DIFFERENCES:
        claim = claims.REGISTRY[claim_id]
        assert claim.reason is not None, f"{claim_id}: no link to its reason"
        assert claim.reason_link()["section"], f"{claim_id}: its reason's label has no heading"


@pytest.mark.parametrize("claim_id", list(claims.REGISTRY))
def test_every_contradicted_claim_carries_a_reason_beyond_its_numbers(claim_id, build_results):
    record = _built(claim_id, build_results)
    if record["verdict"] != claims.CONTRADICTED:
        return
    why = record["why"]
    words = re.findall(r"[A-Za-z]{3,}", why)
    assert len(words) >= 15, f"{claim_id}: the reason is missing or only numbers: {why!r}"
    assert why in record["detail"], f"{claim_id}: the page's text does not carry the reason"
    assert record["reason"] is not None, f"{claim_id}: no link to where the evidence is shown"


def _pairs(*rows):
    """(condition record, audit) pairs: rows of (trajectory, ts, pd_visited, passed over Θ)."""
    return [
        (
            {"trajectory": t, "ts": ts, "run": 1, "pd_visited": v},
            _audit(p, 1e-3 if p else -1e-3, 0 if p else 3),
        )
        for t, ts, v, p in rows
    ]


def test_population_claims_follow_the_majority_rule():
    routing = claims.REGISTRY["ols_nonpd_routing"].compute
    theta = claims.REGISTRY["ols_infeasible_over_theta"].compute
    mostly_failing = _results(
        ols_audits=_pairs(
            ("A", 0.01, False, False), ("B", 0.01, False, False), ("C", 0.04, True, True)
        )
    )
    assert (
        routing(mostly_failing).verdict == claims.REPRODUCED
        and theta(mostly_failing).verdict == claims.REPRODUCED
    )
    assert "2 of 2 at 10 ms" in routing(mostly_failing).detail
    mostly_pd = _results(
        ols_audits=_pairs(
            ("A", 0.01, False, False), ("B", 0.04, True, True), ("C", 0.04, True, True)
        )
    )
    assert (
        routing(mostly_pd).verdict == claims.CONTRADICTED
        and theta(mostly_pd).verdict == claims.CONTRADICTED
    )
    assert routing(_results(ols_audits=[])).verdict == claims.NOT_COMPUTED


def test_folded_claim_reads_the_shared_concentration():
    from crane_lib.acceptance import folded

    compute = claims.REGISTRY["violations_folded"].compute
    share = folded.region_volume_share()
    total = 1000
    inside = int(np.ceil(3 * share * total))
    assert (
        compute(_results(folded_population=folded.Concentration(total, inside))).verdict
        == claims.REPRODUCED
    )
    sparse = folded.Concentration(total, int(share * total))
    assert compute(_results(folded_population=sparse)).verdict == claims.CONTRADICTED
    assert (
        compute(_results(folded_population=folded.Concentration())).verdict == claims.NOT_COMPUTED
    )
    assert compute(_results(folded_population=None)).verdict == claims.NOT_COMPUTED


def test_table_viii_claims_follow_their_rules():
    improves = claims.REGISTRY["clie_improves_most"].compute
    ap01 = claims.REGISTRY["clie_worsens_ap01"].compute
    nine = {t: 1.0 for t in claims.Results.TABLE_VIII}
    assert improves(_results(table_viii_gains=nine)).verdict == claims.REPRODUCED
    assert (
        improves(_results(table_viii_gains={**nine, "AP01": -20.0})).verdict == claims.REPRODUCED
    )  # all but one
    assert (
        improves(_results(table_viii_gains={**nine, "AP01": -20.0, "AP04": -1.0})).verdict
        == claims.CONTRADICTED
    )
    assert (
        improves(_results(table_viii_gains={"AG02": 1.0})).verdict == claims.NOT_COMPUTED
    )  # a profile's subset
    scale = paper("runtorun_ag02").value
    assert ap01(_results(table_viii_gains={"AP01": -2 * scale})).verdict == claims.REPRODUCED
    assert ap01(_results(table_viii_gains={"AP01": -0.5 * scale})).verdict == claims.CONTRADICTED
    assert ap01(_results(table_viii_gains={"AP01": 10.9})).verdict == claims.CONTRADICTED
    assert ap01(_results(table_viii_gains=None)).verdict == claims.NOT_COMPUTED


def test_cloud_claims_follow_their_rules(monkeypatch):
    from crane_lib.acceptance import selection

    widens, contracts = (
        claims.REGISTRY[i].compute for i in ("sdp_widens_cloud", "clie_contracts_cloud")
    )
    clouds = SimpleNamespace(labels=[("AG02", 0.04)] * 4, routes=["O-C", "O-S-C", "O-C", "O-C"])

    def measures(sdp_variance, clie_distance):
        monkeypatch.setattr(
            selection,
            "cloud_measures",
            lambda c: {
                "OLS": {"total variance": 1.0, "median distance": 1.0},
                "SDP": {"total variance": sdp_variance, "median distance": 1.0},
                "CLIE": {"total variance": 1.0, "median distance": clie_distance},
            },
        )
        return _results(clouds=clouds)

    assert widens(measures(1.1, 0.9)).verdict == claims.REPRODUCED
    assert contracts(measures(1.1, 0.9)).verdict == claims.REPRODUCED
    assert widens(measures(0.9, 1.1)).verdict == claims.CONTRADICTED
    assert contracts(measures(0.9, 1.1)).verdict == claims.CONTRADICTED
    assert widens(_results(clouds=None)).verdict == claims.NOT_COMPUTED


def test_ramp_claim_follows_the_coarsest_adequate_interval(monkeypatch):
    from crane_lib.acceptance import selection

    compute = claims.REGISTRY["ramp_interval_40ms"].compute
    assert compute(_results()).verdict == claims.REPRODUCED  # the committed command files
    monkeypatch.setattr(selection, "coarsest_adequate_interval", lambda ramps, intervals: 0.080)
    assert compute(_results()).verdict == claims.CONTRADICTED
    assert (
        claims.REGISTRY["structural_rule_names_ag02"].compute(_results()).verdict
        == claims.REPRODUCED
    )


def test_ladder_claim_follows_the_bound(monkeypatch):
    import pandas as pd

    from crane_lib.acceptance import reproducibility as repro

    compute = claims.REGISTRY["heldout_gain_beyond_40ms"].compute
    bound = paper("heldout_gain_beyond_40ms").value

    def gains(values):
        frame = pd.DataFrame(
            {"held-out gain, 40→80 ms (%)": values}, index=[f"T{i}" for i in range(len(values))]
        )
        monkeypatch.setattr(repro, "interval_ladder", lambda *a, **k: None)
        monkeypatch.setattr(repro, "ladder_changes", lambda ladder: frame)
        return compute(_results(conditions=[], model=None, heldout=[1]))

    assert gains([0.5 * bound, -3.0]).verdict == claims.REPRODUCED
    assert gains([0.5 * bound, 2 * bound]).verdict == claims.CONTRADICTED
    assert compute(_results(conditions=[], model=None, heldout=[])).verdict == claims.NOT_COMPUTED


def test_kappa_and_rank_claims_need_the_forty_candidates(monkeypatch):
    import pandas as pd

    from crane_lib.acceptance import held_out as v

    kappa = claims.REGISTRY["kappa_does_not_rank"].compute
    rank = claims.REGISTRY["ag02_heldout_rank"].compute
    names = ["AG02"] + [f"PX{i:02d}" for i in range(39)]

    def candidates(ag02_position, p_value):
        rmse = np.linspace(0.15, 0.2, 40)
        order = names[1:ag02_position] + ["AG02"] + names[ag02_position:]
        frame = pd.DataFrame({"kappa": np.arange(40.0), "held-out RMSE": rmse}, index=order)
        monkeypatch.setattr(
            v,
            "kappa_against_heldout",
            lambda c: {"all": SimpleNamespace(rho=-0.2, p_value=p_value)},
        )
        return _results(
            candidates=frame,
            run_to_run_spread=1.0,
            condition=lambda t, ts, run=1: {"residual_rms": 0.03},
        )

    assert kappa(candidates(5, 0.18)).verdict == claims.REPRODUCED
    assert kappa(candidates(5, 0.01)).verdict == claims.CONTRADICTED
    assert rank(candidates(5, 0.18)).verdict == claims.REPRODUCED
    assert rank(candidates(33, 0.18)).verdict == claims.CONTRADICTED
    subset = candidates(2, 0.18)
    subset.candidates = subset.candidates.iloc[:4]
    assert (
        kappa(subset).verdict == claims.NOT_COMPUTED and rank(subset).verdict == claims.NOT_COMPUTED
    )
    assert kappa(_results(candidates=None)).verdict == claims.NOT_COMPUTED


def test_conditioning_claims_read_the_condition_records():
    full_rank = claims.REGISTRY["pair_only_full_rank"].compute
    blocks = claims.REGISTRY["single_joint_blocks_condition"].compute

    def with_kappas(ag02, ap03):
        kappas = {"AG02": ag02, "AP03": ap03}
        return _results(condition=lambda t, ts, run=1: {"kappa": kappas[t], "names": ["a"] * 39})

    assert full_rank(with_kappas(34.3, 56.3)).verdict == claims.REPRODUCED
    assert full_rank(with_kappas(34.3, float("inf"))).verdict == claims.CONTRADICTED
    assert blocks(with_kappas(34.3, 56.3)).verdict == claims.REPRODUCED
    assert blocks(with_kappas(60.0, 56.3)).verdict == claims.CONTRADICTED
    assert full_rank(_results(condition=lambda *a, **k: None)).verdict == claims.NOT_COMPUTED


def _accepted_model(zz7, accepted=True, passed_first=True):
    from crane_lib.model.dynamics import DynamicModel

    model = DynamicModel("reduced")
    values = dict.fromkeys(model.names, 1e-3)
    values.update(ZZR7=zz7, XXR7=0.0, IA7=4.85e-3)
    return model, {
        "names": list(model.names),
        "parameters": [values[n] for n in model.names],
        "accepted": accepted,
        "first_audits": [
            {
                "passed": passed_first,
                "lambda_min": 1e-3 if passed_first else -1e-2,
                "violations": {"grid": 0, "uniform": 0 if passed_first else 5, "folded": 0},
            }
        ],
        "trajectory": "AG02",
        "ts": 0.04,
    }


def test_link_seven_claims_follow_their_rules():
    zz7 = claims.REGISTRY["zz7_negative"].compute
    gap = claims.REGISTRY["link_consistency_gap"].compute
    model, negative = _accepted_model(-3.7e-5)
    assert zz7(_results(accepted=negative, model=model)).verdict == claims.REPRODUCED
    assert (
        gap(_results(accepted=negative, model=model)).verdict == claims.REPRODUCED
    )  # ZZR7 > |XXR7| breaks
    _, positive = _accepted_model(7e-6)
    assert zz7(_results(accepted=positive, model=model)).verdict == claims.CONTRADICTED
    assert (
        gap(_results(accepted=positive, model=model)).verdict == claims.CONTRADICTED
    )  # with XXR7 = 0 it holds
    _, rejected = _accepted_model(-3.7e-5, accepted=False)
    assert gap(_results(accepted=rejected, model=model)).verdict == claims.CONTRADICTED
    assert zz7(_results(accepted=None)).verdict == claims.NOT_COMPUTED


def test_clie_solution_claim_reads_the_first_audits():
    compute = claims.REGISTRY["clie_solution_fails_audit"].compute
    assert (
        compute(_results(accepted=_accepted_model(1e-3, passed_first=False)[1])).verdict
        == claims.REPRODUCED
    )
    assert (
        compute(_results(accepted=_accepted_model(1e-3, passed_first=True)[1])).verdict
        == claims.CONTRADICTED
    )
    assert compute(_results(accepted=None)).verdict == claims.NOT_COMPUTED


def test_repeat_claims_follow_their_rules(monkeypatch):
    import pandas as pd

    from crane_lib.acceptance import reproducibility as repro

    verdict = claims.REGISTRY["audit_verdict_reproduces"].compute
    spread = claims.REGISTRY["spread_follows_samples"].compute
    month = claims.REGISTRY["one_calibration_a_month"].compute
    frame = pd.DataFrame({"trajectory": ["AG02", "AG02"], "run": [1, 2]})

    def stability(same):
        table = pd.DataFrame(
            {
                "execution 1: PD": [True, True],
                "execution 2: PD": [True, same],
                "same verdict": [True, same],
            },
            index=[0.04, 0.08],
        )
        monkeypatch.setattr(repro, "audit_stability", lambda f: table)
        return verdict(_results(repeats_frame=frame))

    assert stability(True).verdict == claims.REPRODUCED
    assert stability(False).verdict == claims.CONTRADICTED and "80 ms" in stability(False).detail
    assert verdict(_results(repeats_frame=None)).verdict == claims.NOT_COMPUTED

    def table_xi(spreads, pair_only):
        table = pd.DataFrame(
            {
                "samples per axis, min": [3000, 2000, 500],
                "samples per axis, max": [3000, 2000, 500],
                "spread (%)": spreads,
                "pair blocks only": pair_only,
            },
            index=["AG02", "PB01", "AP03"],
        )
        monkeypatch.setattr(repro, "run_to_run_table", lambda f: table)
        return spread(_results(repeats_frame=frame))

    assert table_xi([0.5, 1.0, 3.5], [False, False, True]).verdict == claims.REPRODUCED
    assert table_xi([3.5, 1.0, 0.5], [False, False, True]).verdict == claims.CONTRADICTED
    monkeypatch.setattr(repro, "run_to_run_table", lambda f: pd.DataFrame(index=["AG02"]))
    assert spread(_results(repeats_frame=frame)).verdict == claims.NOT_COMPUTED
    assert month(_results(repeats_frame=frame)).verdict == claims.NOT_TESTABLE
    assert month(_results(repeats_frame=None)).verdict == claims.NOT_TESTABLE


def test_infeasible_claims_each_follow_one_fact(monkeypatch):
    low, high = (
        paper("misdirected_torque_fraction").value,
        paper("random_accel_torque_diff").value_hi,
    )

    def case(tau, share, median, along):
        pose = SimpleNamespace(
            misdirected_share=share / 100,
            median_torque_error_ratio=median / 100,
            eigdir_torque_error_ratio=along / 100,
        )
        found = (
            "the model",
            SimpleNamespace(tau_grow_fastest_s=tau, at_worst_pose=pose),
            _audit(False, -1e-3, 5),
        )
        monkeypatch.setattr(claims.audit, "_infeasible_case", lambda results: found)
        return _results()

    unstable, misdirects, small = (
        claims.REGISTRY[i].compute
        for i in (
            "infeasible_consequences",
            "infeasible_misdirects",
            "infeasible_small_torque_error",
        )
    )
    paperlike = case(0.003, low + 1, high / 2, 300.0)
    assert all(f(paperlike).verdict == claims.REPRODUCED for f in (unstable, misdirects, small))
    unlike = case(float("inf"), low - 1, 2 * high, 300.0)
    assert all(f(unlike).verdict == claims.CONTRADICTED for f in (unstable, misdirects, small))
    monkeypatch.setattr(
        claims.audit,
        "_infeasible_case",
        lambda results: claims.Outcome(claims.NOT_TESTABLE, "—", ""),
    )
    assert unstable(_results()).verdict == claims.NOT_TESTABLE


def test_share_and_validation_claims_follow_their_rules(monkeypatch):
    import pandas as pd

    from crane_lib.acceptance import held_out as v
    from crane_lib.identification import condition, model_classes

    monkeypatch.setattr(condition, "recording_path", lambda *a: REPO_ROOT)  # exists
    monkeypatch.setattr(condition, "condition_bundle", lambda *a: None)
    poi = claims.REGISTRY["poi_share_below_floor"].compute
    monkeypatch.setattr(
        model_classes, "full_model_torque_shares", lambda b: {"products": 1.7, "residual": 27.4}
    )
    assert poi(_results()).verdict == claims.REPRODUCED
    monkeypatch.setattr(
        model_classes, "full_model_torque_shares", lambda b: {"products": 5.0, "residual": 27.4}
    )
    assert poi(_results()).verdict == claims.CONTRADICTED

    harder = claims.REGISTRY["validation_harder"].compute
    accepted = {"parameters": [0.0]}

    def shares(v01, ag02):
        monkeypatch.setattr(
            v,
            "table_xvi",
            lambda *a: pd.DataFrame({"residual": [v01, ag02]}, index=["V01", "AG02"]),
        )
        return harder(_results(accepted=accepted, heldout=[None], model=None))

    assert shares(0.415, 0.275).verdict == claims.REPRODUCED
    assert shares(0.2, 0.275).verdict == claims.CONTRADICTED


def test_table_xx_claims_read_the_chapters_orderings(monkeypatch):
    from crane_lib.acceptance import held_out
    from crane_lib.acceptance import held_out as v

    absolute, relative = (
        claims.REGISTRY[i].compute
        for i in ("absolute_error_follows_torque", "relative_error_runs_the_other_way")
    )
    monkeypatch.setattr(held_out, "heldout_bundles", lambda profile: {("V01", 1): None})
    monkeypatch.setattr(v, "per_axis_errors", lambda *a: None)
    monkeypatch.setattr(v, "table_xx", lambda per_axis: None)

    def orderings(*holds):
        monkeypatch.setattr(
            v,
            "ordering_claims",
            lambda t: [v.Claim(f"c{i}", "p", "b", h) for i, h in enumerate(holds)],
        )
        return _results(accepted={"parameters": [0.0]}, heldout=[None], model=None)

    assert absolute(orderings(True, True, False, False)).verdict == claims.REPRODUCED
    assert relative(orderings(True, True, False, False)).verdict == claims.CONTRADICTED
    assert relative(orderings(False, False, True, True)).verdict == claims.REPRODUCED
    assert absolute(orderings(True, False, True, True)).verdict == claims.CONTRADICTED


def test_clie_iterations_claim_follows_the_order_of_the_papers_median():
    compute = claims.REGISTRY["clie_iterations"].compute
    median = paper("clie_iters_median").value

    def runs(count):
        return _results(
            accepted=None,
            clie_records=[
                {
                    "clie_iterations": count,
                    "clie_message": "`xtol` termination",
                    "clie_method": "fast",
                }
            ]
            * 3,
        )

    assert compute(runs(median)).verdict == claims.REPRODUCED
    assert (
        compute(runs(median / 4)).verdict == claims.CONTRADICTED
        and "xtol 3" in compute(runs(3)).detail
    )
    assert compute(_results(clie_records=[], accepted=None)).verdict == claims.NOT_COMPUTED


def test_clie_iterations_reason_names_the_runs_that_accepted_no_step():
    """Records as the CLIE sweep writes them (clie.write_record's fields): two runs at 10 ms
    ended at their start on xtol, one at 40 ms moved; the median (1) contradicts the paper's."""

    def record(ts, start, final):
        report = refinement_report(
            x=np.array([1.0 if final == start else 0.9]),
            objective_start=start,
            objective_final=final,
            status=3,
            message="`xtol` termination condition is satisfied.",
        )
        fields = {f"clie_{k}": v for k, v in report.as_dict().items()}
        return {"ts": ts, "run": 1, "start": [1.0], **fields}

    records = [record(0.010, 110.3, 110.3), record(0.010, 23.8, 23.8), record(0.040, 20.0, 18.0)]
    outcome = claims.REGISTRY["clie_iterations"].compute(
        _results(accepted=None, clie_records=records)
    )
    assert outcome.verdict == claims.CONTRADICTED
    assert "On 2 runs (at 10 ms) it accepted no step at all" in outcome.why
    moved = [record(0.040, 20.0, 18.0)] * 3
    reason = (
        claims.REGISTRY["clie_iterations"].compute(_results(accepted=None, clie_records=moved)).why
    )
    assert "3 of 3 runs stopped on a tolerance" in reason and "no step" not in reason


def test_uniform_kt_claim_is_exact_on_a_linear_fit(monkeypatch):
    from crane_lib.identification import condition

    monkeypatch.setattr(condition, "recording_path", lambda *a: REPO_ROOT / "missing")
    assert claims.REGISTRY["kt_uniform_scales"].compute(_results()).verdict == claims.NOT_COMPUTED


def test_earlier_margin_claims_follow_their_rules(monkeypatch):
    sparse_claim = claims.REGISTRY["sparse_audit_seed_dependent"].compute
    dense_claim = claims.REGISTRY["eps0_fails_dense"].compute

    def audits(sparse_passes, dense_passes):
        found = {
            ("sparse", s): _audit(p, 1e-4 if p else -1e-4, 0 if p else 2)
            for s, p in enumerate(sparse_passes, 1)
        }
        found.update(
            {
                ("dense", s): _audit(p, 1e-4 if p else -1e-4, 0 if p else 9)
                for s, p in enumerate(dense_passes, 1)
            }
        )
        monkeypatch.setattr(claims.audit, "_earlier_margin_audits", lambda results: found)
        return _results()

    paperlike = audits([True, True, True, False, False], [False] * 5)
    assert (
        sparse_claim(paperlike).verdict == claims.REPRODUCED
        and dense_claim(paperlike).verdict == claims.REPRODUCED
    )
    unlike = audits([False] * 5, [True, False, False, False, False])
    assert (
        sparse_claim(unlike).verdict == claims.CONTRADICTED
        and dense_claim(unlike).verdict == claims.CONTRADICTED
    )
    monkeypatch.setattr(
        claims.audit, "_earlier_margin_audits", lambda results: claims.Outcome.missing("none")
    )
    assert sparse_claim(_results()).verdict == claims.NOT_COMPUTED
