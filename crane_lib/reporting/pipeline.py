"""The main job's data steps, in pipeline order, before the book is built.

    python -m crane_lib.reporting.pipeline --profile quick|full

1. the default data set: the twin's recordings of the profile (`dataset`);
2. the OLS/SDP sweep: chapter 04 once per condition of `papermill_params/ols_sdp_<profile>.csv`;
3. the CLIE sweep: chapter 05 once per condition of `papermill_params/clie_<profile>.csv`
   (the fast route; the parameter clouds and Table VIII read its records).

Every step is cached by content, so a rebuild redoes only what changed. A condition that
fails is reported and the others go on; the chapter summaries show what exists.
"""

from __future__ import annotations

import argparse
import sys

from crane_lib.paths import REPO_ROOT, recording_path
from crane_lib.reporting import sweep
from crane_lib.twin import dataset

# the per-condition sweeps in pipeline order: (name of the conditions file without profile, chapter)
SWEEPS = (("ols_sdp", REPO_ROOT / "chapters" / "04_ols_sdp.py"), ("clie", REPO_ROOT / "chapters" / "05_clie.py"))


def condition_sweep(name: str, chapter, profile: str, jobs: int) -> list[sweep.ConditionOutcome]:
    """Run `chapter` once per condition of papermill_params/<name>_<profile>.csv; a condition's
    input is its recording."""
    conditions = sweep.read_conditions(f"{name}_{profile}.csv")
    return sweep.run_sweep(
        chapter,
        conditions,
        f"{name}_{profile}",
        inputs_of=lambda p: [recording_path(p["trajectory"], p["run"])],
        workers=jobs,
    )


def _report(name: str, outcomes: list[sweep.ConditionOutcome]) -> None:
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"{name}: condition {o.name} failed: {o.error}", file=sys.stderr)
    ran = sum(o.status == "ran" for o in outcomes)
    print(f"{name} sweep: {ran} ran, {len(outcomes) - ran - len(failed)} cached, {len(failed)} failed")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crane_lib.reporting.pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=dataset.PROFILES, default="full")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    dataset.build(args.profile, jobs=args.jobs)
    for name, chapter in SWEEPS:
        _report(name, condition_sweep(name, chapter, args.profile, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
