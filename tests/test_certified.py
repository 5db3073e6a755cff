"""Certified feasibility over continuous boxes: the polynomial form, certificates, witnesses, budgets."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import audit, certified
from crane_lib.dynamics import model as shared_model

from .audit_cases import description_beta, elbow_strip_model

DEG = np.pi / 180


def _box_around(pose, half_width_deg):
    box = np.column_stack([pose - half_width_deg * DEG, pose + half_width_deg * DEG])
    return audit.intersect_boxes(box, audit.audit_domain())


def _lambda(poses, beta):
    mass = shared_model("reduced").inertia_matrix(poses, beta)[:, :7, :7]
    return np.linalg.eigvalsh(mass)[:, 0]


def test_trigonometric_form_reproduces_the_kernel():
    """M, dM and d2M from the Fourier coefficients equal the generated kernel and its finite differences."""
    beta = description_beta()
    poly = certified.trig_inertia(beta)
    assert poly.extraction_noise < 1e-15 and poly.tau_fp < 1e-8
    model = shared_model("reduced")
    poses = audit.uniform_poses(20, 11)
    value, grad, hess = np.empty((7, 7)), np.empty((6, 7, 7)), np.empty((6, 6, 7, 7))
    step = 1e-5
    for q in poses:
        certified._evaluate(q[1:], poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, value, grad, hess)
        np.testing.assert_allclose(value, model.inertia_matrix(q[None], beta)[0, :7, :7], atol=1e-14)
        for i in range(6):
            dq = np.zeros(7)
            dq[i + 1] = step
            fd = (model.inertia_matrix((q + dq)[None], beta)[0, :7, :7] - model.inertia_matrix((q - dq)[None], beta)[0, :7, :7]) / (2 * step)
            np.testing.assert_allclose(grad[i], fd, atol=1e-9)
            np.testing.assert_allclose(hess[i], (_grad_at(poly, q + dq) - _grad_at(poly, q - dq)) / (2 * step), atol=1e-8)


def _grad_at(poly, q):
    value, grad, hess = np.empty((7, 7)), np.empty((6, 7, 7)), np.empty((6, 6, 7, 7))
    certified._evaluate(q[1:], poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, value, grad, hess)
    return grad


def test_certifies_a_pd_model_on_a_box_and_never_overclaims():
    beta = description_beta()
    centre = np.deg2rad([0.0, 60.0, 30.0, -120.0, 45.0, 70.0, 10.0])
    box = _box_around(centre, 15.0)
    result = certified.certify(beta, margin=1e-3, box=box, max_boxes=200_000)
    assert result.status == certified.CERTIFIED, result.summary()
    assert result.boxes_processed >= 1 and result.boxes_certified >= 1
    # the proved bound is a lower bound of every sampled eigenvalue in the box
    samples = audit.uniform_poses(20_000, 3, box)
    assert result.certified_lambda_min >= 1e-3
    assert _lambda(samples, beta).min() >= result.certified_lambda_min
    # asking for a margin above the true minimum must not certify: a witness below the margin comes back
    above = float(_lambda(samples, beta).min()) + 1e-6
    refused = certified.certify(beta, margin=above, box=box, max_boxes=200_000)
    assert refused.status == certified.BELOW_MARGIN
    assert 0.0 < refused.witness_lambda < above
    assert _lambda(refused.witness_pose[None], beta)[0] == pytest.approx(refused.witness_lambda, rel=1e-12)


def test_returns_a_genuine_violating_pose():
    beta, _ = elbow_strip_model()
    result = certified.certify(beta)  # the whole of Theta; the grid prescreen finds the strip
    assert result.status == certified.VIOLATED
    assert _lambda(result.witness_pose[None], beta)[0] < 0.0
    assert result.witness_pose[3] > 0.0  # in the elbow strip, where the construction put it
    # and by branch and bound alone, on a box around the strip
    strip = audit.audit_domain()
    strip[3] = [0.0, strip[3, 1]]
    found = certified.certify(beta, box=strip, prescreen=False, max_boxes=500_000)
    assert found.status == certified.VIOLATED, found.summary()
    assert _lambda(found.witness_pose[None], beta)[0] == pytest.approx(found.witness_lambda, rel=1e-12) and found.witness_lambda < 0
    assert audit._check_box(strip) is not None and np.all((found.witness_pose[1:] >= strip[1:, 0]) & (found.witness_pose[1:] <= strip[1:, 1]))


def test_budget_exhausted_is_undecided_with_the_open_boxes():
    beta = description_beta()
    result = certified.certify(beta, margin=1e-3, max_boxes=3, batch=1, prescreen=False)
    assert result.status == certified.UNDECIDED
    assert len(result.unresolved_lower) >= 1
    domain = audit.audit_domain()
    assert np.all(result.unresolved_lower[:, 1:] >= domain[1:, 0] - 1e-12) and np.all(result.unresolved_upper[:, 1:] <= domain[1:, 1] + 1e-12)
