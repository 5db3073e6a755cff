"""The verdicts the book gives each of the paper's claims, and where each claim's record lies.

The main job computes the records (`crane_book.claims`); the pages read them
(`crane_lib.reporting.claims`).
"""

from pathlib import Path

from crane_lib.paths import RESULTS_DIR

REPRODUCED = "reproduced"
CONTRADICTED = "contradicted"
NOT_TESTABLE = "not testable on a twin"
NOT_COMPUTED = "not yet computed"
VERDICTS = (REPRODUCED, CONTRADICTED, NOT_TESTABLE, NOT_COMPUTED)

CLAIMS_DIR = RESULTS_DIR / "claims"


def record_path(claim_id: str) -> Path:
    """Where one claim's record lies."""
    return CLAIMS_DIR / f"{claim_id}.json"
