"""Where an audit's violations lie against the oversampled folded-arm region (Sec. VI-E).

The paper draws 50,000 of its audit poses from a folded-arm region "where violations were found
to concentrate". Whether they do is measured here on the uniform draw, which samples Theta
without that emphasis: the share of its violating poses that fall inside the region, set
against the region's share of Theta by volume. In expectation that ratio equals the folded
block's violation rate over the uniform draw's (the paper's 14 and 5), but it does not lean on
the block it is meant to justify.

The violations concentrate there when the share is at least CONCENTRATION_FACTOR times the
volume share. Every page that states where violations lie states it through
`Concentration.finding`, so two pages reading the same audits cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.acceptance import audit
from crane_lib.acceptance.audit import PoseSet

# "concentrate": the region holds at least twice its volume share of the violations
CONCENTRATION_FACTOR = 2.0


def region_volume_share() -> float:
    """The folded-arm region's share of Theta by volume (joints 2..7)."""
    return audit.volume_share(audit.folded_region(), audit.audit_domain())


@dataclass(frozen=True)
class Concentration:
    """Violating poses of the uniform draw, and how many of them lie in the folded-arm region.

    uniform_violations  violating poses of the uniform component (pooled over audits)
    in_region           of those, the ones inside the folded-arm region
    """

    uniform_violations: int = 0
    in_region: int = 0

    def __add__(self, other: Concentration) -> Concentration:
        return Concentration(
            self.uniform_violations + other.uniform_violations, self.in_region + other.in_region
        )

    @property
    def measured(self) -> bool:
        """Whether the uniform draw found any violation to locate."""
        return self.uniform_violations > 0

    @property
    def share(self) -> float:
        """Share of the uniform draw's violations inside the region; NaN when there are none."""
        return self.in_region / self.uniform_violations if self.measured else float("nan")

    @property
    def factor(self) -> float:
        """That share over the region's volume share (1: no preference for the region)."""
        return self.share / region_volume_share()

    @property
    def concentrated(self) -> bool | None:
        """At least CONCENTRATION_FACTOR times the volume share; None when nothing was found."""
        return bool(self.factor >= CONCENTRATION_FACTOR) if self.measured else None

    def phrase(self) -> str:
        """The verdict in a few words, set against the arm."""
        if not self.measured:
            return "not measured: the uniform draw finds no violation"
        if self.concentrated:
            return "concentrated there, as on the arm"
        return "not concentrated there, unlike the arm"

    def finding(self) -> str:
        """The statement with its numbers, as every page gives it."""
        volume = 100 * region_volume_share()
        if not self.measured:
            return (
                "the uniform draw finds no violation, so where violations lie is not measured "
                f"(the folded-arm region is {volume:.1f} % of Θ by volume)"
            )
        verb = (
            "concentrate there, as the paper found on the arm"
            if self.concentrated
            else "do not concentrate there, unlike the paper's on the arm"
        )
        return (
            f"{self.in_region:,} of the uniform draw's {self.uniform_violations:,} violating "
            f"configurations ({100 * self.share:.1f} %) lie in the folded-arm region, which "
            f"is {volume:.1f} % of Θ by volume: {self.factor:.1f} times its share (the "
            f"threshold is {CONCENTRATION_FACTOR:g}), so the violations {verb}"
        )


def in_region(poses: np.ndarray) -> np.ndarray:
    """Mask of the poses (n, 7) that lie in the folded-arm region, bounds included."""
    box = audit.folded_region()
    return np.all((poses >= box[:, 0]) & (poses <= box[:, 1]), axis=1)


def count(pose_set: PoseSet, violating) -> Concentration:
    """From one audit's violating poses: a boolean mask over `pose_set` or indices into it."""
    violating = np.asarray(violating)
    index = np.flatnonzero(violating) if violating.dtype == bool else violating.astype(np.int64)
    uniform = index[pose_set.component[index] == pose_set.names.index(audit.UNIFORM)]
    inside = int(np.count_nonzero(in_region(pose_set.poses[uniform])))
    return Concentration(int(len(uniform)), inside)


def of_lambdas(pose_set: PoseSet, lambdas, threshold: float = 0.0) -> Concentration:
    """From lambda_min at every pose of `pose_set`; a violation is lambda_min <= threshold."""
    return count(pose_set, np.asarray(lambdas) <= threshold)


def pooled(items) -> Concentration:
    """Several audits (e.g. every estimate of a build) pooled into one count."""
    return sum(items, Concentration())
