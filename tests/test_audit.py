"""The all-pose PD audit: pose sets, agreement with an independent engine, and what sampling
decides."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.acceptance import audit
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper

from .audit_cases import elbow_strip_model
from .conftest import pinocchio_arm, random_link_inertials, standard_from_inertials

SUBSET_STRIDE = 97  # every 97th audit pose: about 2,300 configurations from all three components


def _inside(poses, box):
    return np.all((poses >= box[:, 0]) & (poses <= box[:, 1]), axis=1)


def test_dense_pose_set_construction():
    first, second = audit.audit_poses(1), audit.audit_poses(2)
    counts = first.counts()
    assert counts == {
        "grid": int(paper("audit_grid_count").value),
        "uniform": int(paper("audit_uniform_count").value),
        "folded": int(paper("audit_focused_count").value),
    }
    assert len(first) == int(paper("audit_pose_count").value) == 221_875
    # the grid is deterministic, the random parts change with the seed
    np.testing.assert_array_equal(first.part("grid"), second.part("grid"))
    assert not np.array_equal(first.part("uniform"), second.part("uniform"))
    assert not np.array_equal(first.part("folded"), second.part("folded"))
    np.testing.assert_array_equal(first.poses, audit.audit_poses(1).poses)  # reproducible
    # every pose in Theta; the folded block in its region, whose bounds are the paper's
    domain, folded = audit.audit_domain(), audit.folded_region()
    assert _inside(first.poses, domain).all()
    assert _inside(first.part("folded"), folded).all()
    np.testing.assert_allclose(np.rad2deg(folded[[1, 3, 5]]), [[30, 90], [-160, -75], [55, 90]])
    assert audit.volume_share(folded, domain) == pytest.approx(
        paper("folded_region_volume_share").value / 100, abs=0.0005
    )
    # the uniform part is exactly uniform_poses(150000, seed): the draw order is the documented one
    np.testing.assert_array_equal(first.part("uniform"), audit.uniform_poses(150_000, 1))
    # grid: 1x5x5x7x5x5x5 with endpoints, theta1 at the centre
    grid = first.part("grid")
    assert [len(np.unique(grid[:, j])) for j in range(7)] == [1, 5, 5, 7, 5, 5, 5]
    assert np.all(grid[:, 0] == 0.0)
    np.testing.assert_allclose(np.unique(grid[:, 3]), np.linspace(domain[3, 0], domain[3, 1], 7))
    # the 64 corners of Theta over joints 2-7 are grid points (Sec. VI-E)
    corners = audit.box_corners()
    assert corners.shape == (128, 7) and len(np.unique(corners, axis=0)) == 128
    as_grid = {tuple(np.round(r, 12)) for r in grid[:, 1:]}
    assert len({tuple(np.round(r, 12)) for r in corners[:, 1:]} & as_grid) == int(
        paper("audit_shared_grid_configs").value
    )


def test_sparse_and_manufacturer_pose_sets():
    sparse = audit.sparse_audit_poses(3)
    assert sparse.counts() == {"grid": 2187, "uniform": 5000} and len(sparse) == int(
        paper("earlier_audit_total").value
    )
    assert _inside(sparse.poses, audit.sparse_domain()).all()
    np.testing.assert_array_equal(sparse.part("grid"), audit.sparse_audit_poses(4).part("grid"))
    box = audit.manufacturer_box()
    manufacturer = audit.manufacturer_audit_poses(1)
    assert len(manufacturer) == 221_875 and _inside(manufacturer.poses, box).all()


def _pinocchio_lambda_min(links, armature, poses):
    pin = pytest.importorskip("pinocchio")
    arm = pinocchio_arm(links, 9.80665)
    data = arm.createData()
    out = np.empty(len(poses))
    for i, q in enumerate(poses):
        mass = pin.crba(arm, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T + np.diag(armature)
        out[i] = np.linalg.eigvalsh(mass)[0]
    return out


@pytest.mark.parametrize("rotor_shift", [0.0, -1.0])
def test_audit_matches_pinocchio_and_eigvalsh(rng, rotor_shift):
    """lambda_min, verdict and violation counts equal numpy's eigvalsh on Pinocchio's CRBA (no
    products of inertia)."""
    model = DynamicModel("reduced")
    links = [
        (m, np.array([0.0, 0.0, c[2]]), np.diag(np.diag(i)))
        for m, c, i in random_link_inertials(rng)
    ]
    rotor = rng.uniform(1e-3, 1e-2, 8)
    full = audit.audit_poses(5)
    subset = audit.PoseSet(
        full.poses[::SUBSET_STRIDE], full.component[::SUBSET_STRIDE], full.names, 5, "subset"
    )
    reference = _pinocchio_lambda_min(links, rotor[:7], subset.poses)
    if (
        rotor_shift
    ):  # make the model non-PD on part of the subset: a negative rotor inertia on axis 7
        rotor[6] = -np.quantile(reference, 0.2) - rotor[6]
        reference = _pinocchio_lambda_min(links, rotor[:7], subset.poses)
    beta = model.base_from_standard(standard_from_inertials(links, rotor, np.zeros(8), np.zeros(8)))
    result = audit.audit_pose_set(beta, subset, model, worst_k=5)
    ours = audit.arm_lambda_min(beta, subset.poses, model)
    np.testing.assert_allclose(ours, reference, rtol=1e-9, atol=1e-12)
    assert result.lambda_min == pytest.approx(reference.min(), rel=1e-9)
    np.testing.assert_allclose(result.worst_lambdas, np.sort(reference)[:5], rtol=1e-9)
    for i, name in enumerate(subset.names):
        assert result.violations[name] == int(np.sum(reference[subset.component == i] <= 0.0))
    assert result.passed == bool(reference.min() > 0.0)
    assert result.passed == (rotor_shift == 0.0)


def test_audit_result_bookkeeping():
    beta, _ = elbow_strip_model()
    result = audit.audit(beta, seed=2, worst_k=50)
    assert not result.passed
    assert result.n_poses == 221_875
    assert result.non_pd_fraction_uniform == result.violations["uniform"] / 150_000
    assert (
        np.all(np.diff(result.worst_lambdas) >= 0) and result.worst_lambdas[0] == result.lambda_min
    )
    lam = audit.arm_lambda_min(beta, result.worst_poses)
    np.testing.assert_allclose(lam, result.worst_lambdas, rtol=1e-12)
    # a higher threshold (the rescue's eps/2) counts at least as many
    assert audit.audit(beta, seed=2, threshold=5e-4).n_violations >= result.n_violations


def test_dense_audit_catches_what_the_sparse_audit_misses():
    """A model non-PD only on the elbow strip theta4 in (0, 9] deg, outside the sparse domain."""
    beta, _ = elbow_strip_model()
    for seed in (1, 2, 3, 4, 5):
        dense = audit.audit(beta, seed)
        sparse = audit.audit(beta, seed, kind="sparse")
        assert not dense.passed and dense.violations["uniform"] > 0 and dense.violations["grid"] > 0
        assert sparse.passed and sparse.lambda_min > 0
    # the violations sit where the construction put them: theta4 > 0, outside the sparse domain
    poses = audit.audit_poses(1).poses
    bad = poses[audit.arm_lambda_min(beta, poses) <= 0]
    assert len(bad) and np.all(bad[:, 3] > 0.0)
    assert not _inside(bad, audit.sparse_domain()).any()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="audit kind"):
        audit.audit(np.ones(39), kind="everything")
    with pytest.raises(ValueError, match="base parameters"):
        audit.audit(np.ones(12))


class _GivenLambda:
    """A stand-in model whose lambda_min at the audit's poses are given."""

    def __init__(self, lam):
        self.lam = np.asarray(lam, dtype=float)

    def arm_min_eigenvalue(self, q, beta, exact_order=True):
        return self.lam


def test_worst_poses_tied_at_the_kth_place_are_the_lowest_indices(rng):
    """Poses tied exactly at the k-th value (the grid holds theta = -180 and +180 deg twice) are
    kept by pose index, whatever the values elsewhere: a partial sort alone keeps whichever of them
    its pivots happen to leave in front."""
    n, k = 2_000, 20
    poses = audit.PoseSet(
        rng.uniform(-1.0, 1.0, (n, 7)), np.zeros(n, dtype=int), (audit.UNIFORM,), 1, "Theta"
    )
    tied = np.sort(rng.choice(np.arange(100, n), 40, replace=False))
    for draw in range(5):
        lam = rng.uniform(1.0, 2.0, n)  # the other values, drawn anew each time
        lam[:10] = np.linspace(0.1, 0.5, 10)
        lam[tied] = 0.75  # 40 poses share the 11th to 50th places
        found = audit.audit_pose_set(np.zeros(1), poses, _GivenLambda(lam), worst_k=k)
        expected = np.concatenate([np.arange(10), tied[: k - 10]])
        np.testing.assert_array_equal(found.worst_poses, poses.poses[expected])
        np.testing.assert_array_equal(found.worst_lambdas, lam[expected])
