"""The Yoshida-Khalil sufficient condition (acceptance.yoshida_khalil): it certifies the twin's
truth, refuses a model that is not positive definite, and never certifies a model that the
audit finds indefinite somewhere."""

import numpy as np
import pytest

from crane_lib.acceptance import yoshida_khalil as yk
from crane_lib.model.dynamics import model as shared_model
from crane_lib.twin.truth import load_truth


@pytest.fixture(scope="module")
def setting():
    model = shared_model("reduced")
    truth = model.base_from_standard(load_truth()).values
    return model, truth, yk.problem(model)


def test_truth_is_certified_with_its_own_links(setting):
    model, truth, prob = setting
    found = yk.virtual_links(truth, model, prob)
    assert found.certified and found.margin > 0 and found.min_rotor >= 0
    # the virtual parameters found reproduce the base parameters they certify
    phi = np.array([found.virtual[n] for n in prob.standard])
    np.testing.assert_allclose(prob.matrix @ phi, yk.target(truth, prob), atol=1e-14)


def test_spatial_inertia_is_the_link_matrix():
    p = yk.spatial_inertia(2.0, 0.1, 0.0, 3.0, 0.2, 4.0, 0.5, -0.3, 0.7, 1.5)
    v = np.array([0.3, -1.0, 2.0])  # angular velocity; linear velocity w at the origin
    w = np.array([1.0, 0.5, -0.2])
    x = np.concatenate([v, w])
    inertia = np.array([[2.0, 0.1, 0.0], [0.1, 3.0, 0.2], [0.0, 0.2, 4.0]])
    moment = np.array([0.5, -0.3, 0.7])
    # twice the kinetic energy of a body with these parameters: v.L.v + m|w|^2 + 2 w.(v x l)
    energy = v @ inertia @ v + 1.5 * w @ w + 2 * w @ np.cross(v, moment)
    assert x @ p @ x == pytest.approx(energy)


def test_counterexample_is_refused(setting):
    model, truth, prob = setting
    bad = truth.copy()
    # the last joint's diagonal entry of M is ZZR7 + IA7 at every pose: make it negative
    names = list(model.names)
    bad[names.index("ZZR7")] = -bad[names.index("IA7")] - 1e-4
    lam = model.arm_min_eigenvalue(np.zeros((1, 8)), bad)
    assert lam[0] < 0  # the model really is indefinite
    assert not yk.virtual_links(bad, model, prob).certified


def test_certified_models_are_positive_definite_everywhere(setting):
    model, truth, prob = setting
    rng = np.random.default_rng(20261205)
    poses = np.zeros((3000, 8))
    poses[:, :7] = rng.uniform(-np.pi, np.pi, (3000, 7))  # the condition claims every theta
    verdicts = []
    for scale in (0.05, 0.3, 1.0, 2.0):
        for _ in range(6):
            beta = truth * (1 + scale * rng.standard_normal(truth.size))
            found = yk.virtual_links(beta, model, prob)
            lam = model.arm_min_eigenvalue(poses, beta).min()
            verdicts.append((found.certified, lam))
            if found.certified:
                assert lam > 0, f"certified, yet lambda_min = {lam:.3g} at a random pose"
    # not vacuous: the draws contain both verdicts, and some refused models are indefinite
    assert any(c for c, _ in verdicts) and not all(c for c, _ in verdicts)
    assert any(not c and lam <= 0 for c, lam in verdicts)


def test_the_condition_is_the_chain_models_too():
    """Another arm's chain model (the SO-101): its twin's truth is certified, and making its last
    axis's constant diagonal entry negative is refused."""
    from crane_lib.model.arm_description import load_arm
    from crane_lib.twin.truth import truth_parameters

    model = shared_model("reduced", arm=load_arm("so101"))
    truth = model.base_from_standard(truth_parameters("so101")).values
    prob = yk.problem(model)
    assert yk.virtual_links(truth, model, prob).certified
    n, names = model.n_joints, list(model.names)
    diagonal = [k for k in (f"ZZR{n}", f"ZZ{n}") if k in names][0]
    bad = truth.copy()
    rotor = truth[names.index(f"IA{n}")] if f"IA{n}" in names else 0.0
    bad[names.index(diagonal)] = -rotor - 1e-4
    assert model.arm_min_eigenvalue(np.zeros((1, model.n_axes)), bad)[0] < 0
    assert not yk.virtual_links(bad, model, prob).certified
