"""Certified feasibility over continuous boxes: the polynomial form, certificates, witnesses,
budgets."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.acceptance import audit, certified
from crane_lib.model.dynamics import model as shared_model

from .audit_cases import description_beta, elbow_strip_model

DEG = np.pi / 180


def _box_around(pose, half_width_deg):
    box = np.column_stack([pose - half_width_deg * DEG, pose + half_width_deg * DEG])
    return audit.intersect_boxes(box, audit.audit_domain())


def _lambda(poses, beta):
    mass = shared_model("reduced").inertia_matrix(poses, beta)[:, :7, :7]
    return np.linalg.eigvalsh(mass)[:, 0]


def test_trigonometric_form_reproduces_the_kernel():
    """M, dM and d2M from the Fourier coefficients equal the generated kernel and its finite
    differences."""
    beta = description_beta()
    poly = certified.trig_inertia(beta)
    assert poly.extraction_noise < 1e-15 and poly.tau_fp < 1e-8
    model = shared_model("reduced")
    poses = audit.uniform_poses(20, 11)
    value, grad, hess = np.empty((7, 7)), np.empty((6, 7, 7)), np.empty((6, 6, 7, 7))
    step = 1e-5
    for q in poses:
        certified._evaluate(
            q[1:], poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, value, grad, hess
        )
        np.testing.assert_allclose(
            value, model.inertia_matrix(q[None], beta)[0, :7, :7], atol=1e-14
        )
        for i in range(6):
            dq = np.zeros(7)
            dq[i + 1] = step
            fd = (
                model.inertia_matrix((q + dq)[None], beta)[0, :7, :7]
                - model.inertia_matrix((q - dq)[None], beta)[0, :7, :7]
            ) / (2 * step)
            np.testing.assert_allclose(grad[i], fd, atol=1e-9)
            np.testing.assert_allclose(
                hess[i], (_grad_at(poly, q + dq) - _grad_at(poly, q - dq)) / (2 * step), atol=1e-8
            )


def _grad_at(poly, q):
    value, grad, hess = np.empty((7, 7)), np.empty((6, 7, 7)), np.empty((6, 6, 7, 7))
    certified._evaluate(
        q[1:], poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, value, grad, hess
    )
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
    # asking for a margin above the true minimum must not certify: a witness below the margin comes
    # back
    above = float(_lambda(samples, beta).min()) + 1e-6
    refused = certified.certify(beta, margin=above, box=box, max_boxes=200_000)
    assert refused.status == certified.BELOW_MARGIN
    assert 0.0 < refused.witness_lambda < above
    assert _lambda(refused.witness_pose[None], beta)[0] == pytest.approx(
        refused.witness_lambda, rel=1e-12
    )


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
    assert (
        _lambda(found.witness_pose[None], beta)[0] == pytest.approx(found.witness_lambda, rel=1e-12)
        and found.witness_lambda < 0
    )
    assert audit.check_box(strip) is not None and np.all(
        (found.witness_pose[1:] >= strip[1:, 0]) & (found.witness_pose[1:] <= strip[1:, 1])
    )


def test_budget_exhausted_is_undecided_with_the_open_boxes():
    beta = description_beta()
    result = certified.certify(beta, margin=1e-3, max_boxes=3, batch=1, prescreen=False)
    assert result.status == certified.UNDECIDED
    assert len(result.unresolved_lower) >= 1
    domain = audit.audit_domain()
    assert np.all(result.unresolved_lower[:, 1:] >= domain[1:, 0] - 1e-12) and np.all(
        result.unresolved_upper[:, 1:] <= domain[1:, 1] + 1e-12
    )


def test_a_models_checks_share_a_budget_of_boxes_that_no_clock_shortens(monkeypatch):
    """certify_model's budget counts boxes, so its records are the same on a slow machine: here
    every clock reading is a day later than the last, and the checks still run their boxes."""
    clock = iter(range(0, 10**9, 86_400))
    monkeypatch.setattr(certified.time, "perf_counter", lambda: float(next(clock)))
    entries = certified.certify_model(description_beta(), (0.0, 0.0), max_boxes=3)
    assert [e["status"] for e in entries] == [certified.UNDECIDED] * 2
    assert [e["boxes_processed"] for e in entries] == [3, 1]  # the second gets what is left


# ----------------------------------------------------------------------------- the Bernstein bound


def _rescued_model():
    """An accepted-like model: the description's wrist pushed non-PD (ZZR6 - 0.0058), rescued at eps
    = 1e-3."""
    from crane_lib.acceptance import rescue as rescue_stage

    model = shared_model("reduced")
    beta = description_beta().copy()
    beta[model.names.index("ZZR6")] -= 0.0058
    return rescue_stage.rescue_over_theta(model, beta, epsilon=1e-3).result.parameters.values


def _bernstein_basis(s):
    """Degree-4 Bernstein basis on [-1, 1] at s."""
    from math import comb

    x = 0.5 * (s + 1.0)
    return np.array([comb(4, k) * x**k * (1 - x) ** (4 - k) for k in range(5)])


def test_bernstein_coefficients_reproduce_the_weighted_kernel():
    """sum_beta B_beta b_beta(s) equals prod (1 + t^2)^2 (M - shift I) from the generated kernel, on
    boxes anywhere."""
    beta = description_beta()
    model = shared_model("reduced")
    form = certified.bernstein_form(certified.trig_inertia(beta), 2e-4)
    rng = np.random.default_rng(5)
    domain = audit.audit_domain()[1:]
    for _ in range(3):
        half = rng.uniform(0.05, certified.BERNSTEIN_MAX_HALF, 6)
        centre = rng.uniform(domain[:, 0], domain[:, 1])
        mats = certified.bernstein_matrices(form, centre, half).reshape((5,) * 6 + (7, 7))
        tau = np.tan(half / 2)
        for s in rng.uniform(-1, 1, size=(4, 6)):
            value = mats
            for j in range(6):
                value = np.tensordot(_bernstein_basis(s[j]), value, axes=([0], [0]))
            t = s * tau
            theta = centre + 2 * np.arctan(t)
            kernel = model.inertia_matrix(np.r_[0.0, theta][None], beta)[
                0, :7, :7
            ] - form.shift * np.eye(7)
            np.testing.assert_allclose(value, np.prod((1 + t**2) ** 2) * kernel, atol=1e-12)


def test_bernstein_bound_never_exceeds_the_sampled_minimum():
    """On random sub-boxes of Theta (many near the worst pose), asking for a margin just above the
    densely
    sampled minimum of lambda_min (numpy eigvalsh on the kernel's M) is never certified; just below
    it, on
    small boxes, it is (so the test has teeth)."""
    beta = _rescued_model()
    poly = certified.trig_inertia(beta)
    worst = audit.audit(beta, seed=1).worst_pose[1:]
    rng = np.random.default_rng(11)
    domain = audit.audit_domain()[1:]
    tight = 0
    for trial in range(12):
        half = np.deg2rad(rng.choice([1.0, 3.0, 8.0]) * rng.uniform(0.5, 1.0, 6))
        centre = (
            worst + rng.uniform(-1, 1, 6) * half
            if trial % 2
            else rng.uniform(domain[:, 0], domain[:, 1])
        )
        corners = (
            centre
            + half * np.array(np.meshgrid(*([[-1.0, 1.0]] * 6), indexing="ij")).reshape(6, -1).T
        )
        inside = centre + half * rng.uniform(-1, 1, size=(4000, 6))
        poses = np.vstack([corners, inside, centre[None]])
        sampled = _lambda(np.column_stack([np.zeros(len(poses)), poses]), beta).min()
        for margin, expect in (
            (sampled + 1e-7, False),
            (sampled - 0.02 * abs(sampled) - 1e-6, None),
        ):
            form = certified.bernstein_form(poly, max(margin, 0.0)) if margin >= 0 else None
            if form is None:
                continue
            ok = np.zeros(1, dtype=np.bool_)
            certified._bernstein_boxes(
                centre[None],
                half[None],
                form.row_data,
                form.row_offset,
                form.fp_entry,
                form.diag_bound,
                ok,
            )
            if expect is False:
                assert not ok[0], (
                    f"certified margin {margin:.6g} above the sampled minimum {sampled:.6g} on box "
                    f"{centre}, {half}"
                )
            elif half.max() < np.deg2rad(2.0):
                tight += bool(ok[0])
    assert tight >= 1


def test_bernstein_needs_far_fewer_boxes_than_taylor():
    """Around the folded pose of the Taylor test, +-30 deg: the Bernstein bound certifies; Taylor,
    given twice as many boxes, cannot."""
    beta = description_beta()
    centre = np.deg2rad([0.0, 60.0, 30.0, -120.0, 45.0, 70.0, 10.0])
    box = _box_around(centre, 30.0)
    new = certified.certify(beta, margin=1e-3, box=box)
    old = certified.certify(
        beta, margin=1e-3, box=box, method="taylor", max_boxes=2 * new.boxes_processed
    )
    assert new.status == certified.CERTIFIED, new.summary()
    assert old.status == certified.UNDECIDED or old.boxes_processed > 2 * new.boxes_processed
    samples = audit.uniform_poses(20_000, 4, box)
    assert _lambda(samples, beta).min() >= 1e-3


def test_a_small_dent_is_found_by_branch_and_bound_alone():
    """The rescued model asked for a margin just above its true minimum over a box holding its worst
    pose:
    no certificate, and the witness is a genuine pose below the margin (no grid prescreen)."""
    beta = _rescued_model()
    worst = audit.audit(beta, seed=1).worst_pose
    box = _box_around(worst, 20.0)
    lam = _lambda(worst[None], beta)[0]
    result = certified.certify(beta, margin=lam + 1e-6, box=box, prescreen=False, max_boxes=200_000)
    assert result.status == certified.BELOW_MARGIN, result.summary()
    assert _lambda(result.witness_pose[None], beta)[0] < lam + 1e-6
    assert np.all((result.witness_pose[1:] >= box[1:, 0]) & (result.witness_pose[1:] <= box[1:, 1]))
