"""Where violations lie against the folded-arm region (acceptance.folded): counted on the uniform
draw only, set against the region's volume share, one threshold, the same sentence for any
audit or population of audits."""

from __future__ import annotations

import numpy as np

from crane_lib.acceptance import audit, folded


def _pose_set() -> audit.PoseSet:
    """Four uniform poses (two inside the folded region), one folded-block pose, one grid pose."""
    box = audit.folded_region()
    inside = 0.5 * (box[:, 0] + box[:, 1])
    outside = inside.copy()
    outside[3] = np.deg2rad(0.0)  # the elbow straight: outside the region
    poses = np.vstack([inside, inside, outside, outside, inside, outside])
    component = np.array([1, 1, 1, 1, 2, 0], dtype=np.int8)
    return audit.PoseSet(poses, component, (audit.GRID, audit.UNIFORM, audit.FOLDED), 1, "Theta")


def test_only_the_uniform_draw_is_counted_and_masks_equal_indices():
    pose_set = _pose_set()
    violating = np.array([True, False, True, True, True, True])
    found = folded.count(pose_set, violating)
    assert found == folded.Concentration(uniform_violations=3, in_region=1)
    assert folded.count(pose_set, np.flatnonzero(violating)) == found
    assert folded.of_lambdas(pose_set, np.where(violating, -1.0, 1.0)) == found


def test_the_verdict_follows_the_share_against_the_volume_share():
    volume = folded.region_volume_share()
    assert abs(100 * volume - 2.9) < 0.05  # the paper's 2.9 %
    inside = int(np.ceil(folded.CONCENTRATION_FACTOR * volume * 1000))
    assert folded.Concentration(1000, inside).concentrated
    assert not folded.Concentration(1000, inside - 2).concentrated
    assert folded.Concentration().concentrated is None
    assert "not measured" in folded.Concentration().phrase()
    assert "do not concentrate" in folded.Concentration(1000, 10).finding()
    assert "as the paper found" in folded.Concentration(1000, 500).finding()


def test_pooling_adds_the_counts():
    parts = [folded.Concentration(10, 1), folded.Concentration(0, 0), folded.Concentration(5, 4)]
    assert folded.pooled(parts) == folded.Concentration(15, 5)
    assert folded.pooled([]) == folded.Concentration()
