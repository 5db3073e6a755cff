"""The claims step (crane_book.claims), the pages' view of it (crane_lib.reporting.claims) and
the downloads (crane_book.downloads).

The claim functions themselves run on the build's records in the main job; here: each claim
links to a heading that exists, verdicts follow their stated rules, a claim is recomputed when
and only when its key changes (and says why), and bundles are byte-identical for identical
records.
"""

from __future__ import annotations

import json
import re
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest
from docutils.nodes import make_id

from crane_book import claims, downloads, keys
from crane_lib import verdicts
from crane_lib.paper_numbers import paper
from crane_lib.paths import REPO_ROOT
from crane_lib.reporting import claims as views


def _headings(chapter: str) -> list[str]:
    """The Markdown headings of a jupytext percent chapter (`# ## Heading` lines in markdown cells)."""
    text = (REPO_ROOT / f"{chapter}.py").read_text(encoding="utf-8")
    return [m.group(1).strip() for m in re.finditer(r"^# #{1,6} (.+)$", text, flags=re.M)]


@pytest.mark.parametrize("claim", [c for c in claims.REGISTRY.values() if c.chapter], ids=lambda c: c.id)
def test_each_claim_links_to_an_existing_section(claim):
    assert (REPO_ROOT / f"{claim.chapter}.py").exists(), f"{claim.id}: no chapter {claim.chapter}"
    assert claim.section in _headings(claim.chapter), f"{claim.id}: no heading {claim.section!r} in {claim.chapter}"
    assert claim.anchor == make_id(claim.section) and claim.anchor


def test_every_claim_reads_its_paper_numbers_by_id():
    for c in claims.REGISTRY.values():
        assert c.paper_ids, c.id
        for number_id in c.paper_ids:
            assert paper(number_id).text().replace("^2", "²") in c.paper_text()
        # statements quote no paper number (they come from the ids)
        assert not re.search(r"\d", re.sub(r"\b[A-Z]{1,2}\d\d\b", "", c.statement)), f"{c.id}: a number typed into the statement"


def _results(**attributes):
    return SimpleNamespace(**attributes)


def _audit(passed, lam=1e-3, n=0):
    return SimpleNamespace(passed=passed, lambda_min=lam, n_violations=n)


def test_routing_claim_verdict_follows_its_rule():
    compute = claims.REGISTRY["routing_weaker_than_audit"].compute
    gap = _results(ols_audits=[({"pd_visited": True}, _audit(False, -1e-4, 5)), ({"pd_visited": True}, _audit(True))])
    assert compute(gap).verdict == claims.REPRODUCED
    assert "1 pass the routing test and fail over Θ, 0 the reverse" in compute(gap).number
    no_gap = _results(ols_audits=[({"pd_visited": True}, _audit(True)), ({"pd_visited": False}, _audit(False, -1e-3, 9))])
    assert compute(no_gap).verdict == claims.CONTRADICTED
    reverse = _results(ols_audits=[({"pd_visited": True}, _audit(False, -1e-4, 2)), ({"pd_visited": False}, _audit(True))])
    assert compute(reverse).verdict == claims.CONTRADICTED
    assert compute(_results(ols_audits=[])).verdict == claims.NOT_COMPUTED


def _accepted(rescue=None, seeds_lambda=(5e-4,), passed=None, first_lambda=2e-3):
    passed = passed or [True] * len(seeds_lambda)
    return {"first_audits": [{"lambda_min": first_lambda, "passed": True, "violations": {"grid": 0, "uniform": 0, "folded": 0}}],
            "final_audits": [{"lambda_min": lam, "passed": ok} for lam, ok in zip(seeds_lambda, passed)],
            "rescue": rescue, "accepted": all(passed)}


def test_rescue_claims_are_not_testable_without_a_rescue():
    for claim_id in ("rescue_costs_nothing", "validation_rescue_gain"):
        compute = claims.REGISTRY[claim_id].compute
        assert compute(_results(accepted=_accepted())).verdict == claims.NOT_TESTABLE
        assert compute(_results(accepted=None)).verdict == claims.NOT_COMPUTED


def test_margin_claim_detects_a_margin_fixed_by_the_grid():
    compute = claims.REGISTRY["audit_margin_seeds"].compute
    moved = compute(_results(accepted=_accepted(seeds_lambda=(5e-4, 6e-4, 7e-4, 8e-4, 9e-4))))
    assert moved.verdict == claims.REPRODUCED and "factor 1.8" in moved.number and "PD on 5 of 5 seeds" in moved.number
    fixed = compute(_results(accepted=_accepted(seeds_lambda=(5e-4,) * 5)))
    assert fixed.verdict == claims.CONTRADICTED and "deterministic grid" in fixed.detail
    flips = compute(_results(accepted=_accepted(seeds_lambda=(5e-4, -1e-4, 6e-4, 7e-4, 8e-4), passed=[True, False, True, True, True])))
    assert flips.verdict == claims.CONTRADICTED and "changes with the seed" in flips.detail


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A results folder of its own and one registered claim that reads one input file."""
    results = tmp_path / "results"
    monkeypatch.setattr(claims, "RESULTS_DIR", results)
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
        return claims.Outcome(claims.REPRODUCED if value > 1 else claims.CONTRADICTED, f"value {value:g}", "from one.json")

    test_claim = claims.PaperClaim("test_claim", "Sec. T", "A test claim.", ("rescue_eps_pd",), "chapters/06_audit",
                                   "Table IX: what the audit's pose sampling decides", ("results/conditions/*.json",), compute)
    monkeypatch.setattr(claims, "REGISTRY", {"test_claim": test_claim})
    return source


def test_a_claim_is_recomputed_when_and_only_when_its_key_changes(sandbox):
    assert views.current("test_claim", "quick")["verdict"] == views.NOT_COMPUTED  # no record yet
    assert (claims.write_claims("quick", show_progress=False).recomputed, len(views.records())) == (1, 1)
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
    anchor = make_id("Table IX: what the audit's pose sampling decides")
    assert f'href="../chapters/06_audit.html#{anchor}"' in html
    assert 'class="verdict verdict-reproduced"' in html
    assert paper("rescue_eps_pd").text().replace("^2", "²") in html
    assert "1 reproduced" in views.summary_sentence(views.page("quick"))


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
    write_json_record(conditions / "a.json", {"trajectory": "AG02", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [1.0, 2.0]})
    write_json_record(conditions / "b.json", {"trajectory": "AP01", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [-1.0, 2.0]})
    calls = []

    def fake_audit(beta, prepared, model):
        calls.append(list(beta))
        passed, n = bool(beta[0] > 0), 0 if beta[0] > 0 else 7
        found = {"passed": passed, "lambda_min": float(beta[0]) * 1e-3, "n_violations": n}
        return SimpleNamespace(to_dict=lambda: found, violating_indices=np.arange(n))

    from crane_lib.acceptance import folded, screen

    monkeypatch.setattr(screen, "screened_audit", fake_audit)
    monkeypatch.setattr(screen, "audit_poses", lambda seed: [0] * 5)
    monkeypatch.setattr(screen, "prepare", lambda pose_set, model: pose_set)
    monkeypatch.setattr(screen, "shared_model", lambda name: None)  # the fake audit needs no model
    monkeypatch.setattr(folded, "count", lambda pose_set, violating: folded.Concentration())

    pipeline.ols_audits_step()
    record = json.loads(path.read_text(encoding="utf-8"))
    assert len(calls) == 2 and [a["passed"] for a in record["audits"]] == [True, False] and record["n_poses"] == 5
    assert pipeline.ols_audits_step().reused == 1 and len(calls) == 2  # same records: reused
    write_json_record(conditions / "b.json", {"trajectory": "AP01", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [3.0, 2.0]})
    assert "conditions/b.json changed" in pipeline.ols_audits_step().line()
    record = json.loads(path.read_text(encoding="utf-8"))
    assert len(calls) == 4 and [a["passed"] for a in record["audits"]] == [True, True]
    # the routing claim reads the same record: both PD where visited and over Θ, no gap
    results = claims.Results()
    results.__dict__["conditions"] = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(conditions.glob("*.json"))]
    assert claims.REGISTRY["routing_weaker_than_audit"].compute(results).verdict == claims.CONTRADICTED


def test_download_link_is_a_myst_role_relative_to_the_page(tmp_path, monkeypatch):
    from crane_lib.paths import REPO_ROOT

    monkeypatch.setattr(downloads, "DOWNLOADS_DIR", REPO_ROOT / "results" / "downloads")
    text = downloads.link("conditions").data
    assert text == ("{download}`Download the OLS/SDP condition records (one JSON per condition) (crane-x7-conditions-records.zip) "
                    "<../results/downloads/crane-x7-conditions-records.zip>`")
    assert "<../../results/downloads/" in downloads.link("all", "book/sub/page.md", "all").data


def test_structural_claim_on_a_profile_subset_is_not_the_papers_check():
    compute = claims.REGISTRY["structural_selection"].compute
    rng = np.random.default_rng(3)
    labels = [("AG02", 0.04)] + [(f"PX{i:02d}", 0.04) for i in range(15)]
    vectors = rng.normal(size=(16, 39))
    vectors[0] = vectors[1:].mean(axis=0)  # the candidate at the cloud's centre: central under every metric

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
    """Refined and accepted vectors are scalars here; the error model is 'error = parameter' per record."""
    from crane_lib.identification import metrics

    def error(_model, beta, bundle):
        value = float(np.asarray(beta).ravel()[0]) * bundle
        return SimpleNamespace(rmse=value, mne=value)

    monkeypatch.setattr(metrics, "prediction_error", error)
    compute = claims.REGISTRY["validation_rescue_gain"].compute
    rescued = dict(_accepted(rescue={"eps": 1e-3}), refined=[1.0], parameters=[0.99])
    better = compute(_results(accepted=rescued, model=None, heldout=[1.0, 2.0, 3.0]))
    assert better.verdict == claims.REPRODUCED and "V01: RMSE 1.0 % better" in better.number
    worse = compute(_results(accepted=dict(rescued, parameters=[1.01]), model=None, heldout=[1.0, 2.0, 3.0]))
    assert worse.verdict == claims.CONTRADICTED
    assert "V01 (RMSE and MNE)" in worse.detail and "V03 (RMSE and MNE)" in worse.detail


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
    assert with_draws([_kt_record(1, 2 * bound, False), _kt_record(2, 0.1 * bound, True)]).verdict == claims.CONTRADICTED
    assert with_draws([_kt_record(1, 0.1 * bound, False), _kt_record(2, 0.1 * bound, False)]).verdict == claims.CONTRADICTED  # no flip
    assert with_draws([{"seed": 1, "failure": "ValueError: x"}]).verdict == claims.NOT_COMPUTED


def test_run_to_run_claim_is_not_testable_on_the_twin_and_missing_without_records(monkeypatch):
    import pandas as pd

    from crane_lib.acceptance import reproducibility as repro

    compute = claims.REGISTRY["run_to_run_scale"].compute
    monkeypatch.setattr(claims, "read_conditions", lambda name: [])

    def table(spread):
        rows = {} if spread is None else {"AG02": {"spread (%)": spread, "executions": 2}}
        monkeypatch.setattr(repro, "profile_records", lambda conditions: [{"any": 1}])
        monkeypatch.setattr(repro, "records_frame", lambda records: None)
        monkeypatch.setattr(repro, "run_to_run_table", lambda frame: pd.DataFrame.from_dict(rows, orient="index"))

    table(1.0)
    assert compute(_results()).verdict == claims.NOT_TESTABLE
    table(None)
    assert compute(_results()).verdict == claims.NOT_COMPUTED
    monkeypatch.setattr(repro, "profile_records", lambda conditions: [])
    assert compute(_results()).verdict == claims.NOT_COMPUTED
