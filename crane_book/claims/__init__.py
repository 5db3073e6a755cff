"""Claims at a glance, computed: each of the paper's main claims, this build's verdict on the
twin, the number behind it, and where in the book it is computed.

A data step of the pipeline (`crane_book.pipeline`, after every record the claims read): each
claim becomes one JSON record, results/claims/<id>.json, which the pages only read
(`crane_lib.reporting.claims`: the claims page and a chapter's verdict box). The machinery is in
`registry` (what a claim is, its key, the step), the build's records as the claims read them in
`results`, and each chapter's claims in a module of their own (`ols_sdp`, `clie`, `audit`,
`selection`, `validation`, `reproducibility`, `kt_sensitivity`). A claim's key is the content
of the files it reads (its `inputs` globs), the profile, the headings it links to, and the
source of the shared modules, of its chapter's module and of the crane_lib modules they import
(`crane_book.keys`); a claim is recomputed only when its key changes, and the step says why.

Verdicts are computed, never typed: each claim's function returns the number and a verdict
derived from it (the rule is in the function's docstring and in the detail sentence).

    from crane_book import claims
    claims.write_claims("quick")     # the pipeline step (cached by content)
    python -m crane_book.claims --profile quick

How a chapter adds a claim
--------------------------
1. Make sure the number comes from a record the pipeline writes before the book is built
   (add a pipeline step or a sweep if it is not yet a record; the chapter and the claim then
   read the same record).
2. Add one function to the chapter's module here, decorated with `@claim(...)`: an id, where
   the paper says it (`where`), the claim in the paper's words (`statement`), the ids of the
   paper's numbers behind it in data/paper_numbers.csv (`paper_ids`, never retyped values),
   the chapter's docname (`chapter`, e.g. "chapters/06_audit") and the MyST label of the
   section that computes it (`section`: the label the chapter writes directly above that
   section's heading, `# (audit-table-ix-what-the-audit-s)=`; the page links
   `<chapter>.html#<label>` and tests/test_claims.py checks that the label exists), optionally
   `reason`, (page, label) of the register entry that says why this build's number differs
   from the paper's (the reason lives there once; the page links it beside the detail), and
   `inputs`: glob patterns, relative to the repository root, of every file the function reads
   (the cache key and the staleness check hash them; the shared ones are in `results`). The
   function takes a `Results` (lazy, shared access to the build's records) and returns an
   `Outcome(verdict, number, detail)`, the verdict computed from the number by a rule stated in
   its docstring. Return `Outcome.missing(...)` when the inputs it needs are not in this build.
3. Add its id to `PAGE_ORDER` below, where the claims page should list it.
4. A claim whose chapter does not exist yet is declared with `pending(...)` (same fields, no
   function): the page lists it as "not yet computed".
5. Optionally show the verdict where it is computed: `display(claims.show("<id>"))` in the
   chapter's section (`crane_lib.reporting.claims.show`).
6. Run `pytest tests/test_claims.py` (labels exist, every claim evaluates on a small build).
"""

from crane_book.claims import registry
from crane_book.claims.registry import (
    REGISTRY,
    Outcome,
    PaperClaim,
    claim,
    code_parts,
    evaluate,
    main,
    pending,
    write_claims,
)
from crane_book.claims.results import REPRESENTATIVE, Results
from crane_lib.verdicts import (
    CONTRADICTED,
    NOT_COMPUTED,
    NOT_TESTABLE,
    REPRODUCED,
    VERDICTS,
    record_path,
)

# each chapter's claims register themselves on import
from crane_book.claims import (  # isort: skip
    audit,
    clie,
    kt_sensitivity,
    ols_sdp,
    reproducibility,
    selection,
    validation,
)

# the order of the claims page
PAGE_ORDER = (
    "poi_removal",
    "routing_weaker_than_audit",
    "structural_rule_names_ag02",
    "structural_selection",
    "pipeline_little_gain",
    "clie_solution_fails_audit",
    "rescue_costs_nothing",
    "audit_verdict_seeds",
    "audit_margin_seeds",
    "infeasible_consequences",
    "infeasible_misdirects",
    "infeasible_small_torque_error",
    "validation_rescue_gain",
    "validation_rescue_mne",
    "run_to_run_scale",
    "kt_sensitivity",
    "ols_nonpd_routing",
    "ols_infeasible_over_theta",
    "routing_no_reverse",
    "violations_folded",
    "sparse_audit_seed_dependent",
    "eps0_fails_dense",
    "clie_improves_most",
    "clie_worsens_ap01",
    "clie_iterations",
    "sdp_widens_cloud",
    "clie_contracts_cloud",
    "ramp_interval_40ms",
    "heldout_gain_beyond_40ms",
    "poi_share_below_floor",
    "validation_harder",
    "absolute_error_follows_torque",
    "relative_error_runs_the_other_way",
    "kappa_does_not_rank",
    "ag02_heldout_rank",
    "pair_only_full_rank",
    "single_joint_blocks_condition",
    "zz7_negative",
    "link_consistency_gap",
    "audit_verdict_reproduces",
    "spread_follows_samples",
    "one_calibration_a_month",
    "kt_uniform_scales",
    "kt_verdict_flips",
)
registry.arrange(PAGE_ORDER)

__all__ = [
    "CONTRADICTED",
    "NOT_COMPUTED",
    "NOT_TESTABLE",
    "PAGE_ORDER",
    "REGISTRY",
    "REPRESENTATIVE",
    "REPRODUCED",
    "VERDICTS",
    "Outcome",
    "PaperClaim",
    "Results",
    "audit",
    "claim",
    "clie",
    "code_parts",
    "evaluate",
    "kt_sensitivity",
    "main",
    "ols_sdp",
    "pending",
    "record_path",
    "registry",
    "reproducibility",
    "selection",
    "validation",
    "write_claims",
]
