"""The all-pose positive-definiteness audit (11) of Sec. VI-E and Appendix D-G.

A model passes when the smallest eigenvalue of its 7x7 arm inertia matrix M(theta) is
positive at every configuration of a stated, finite pose set. The pose sets are built here
and exposed as functions, because the rescue SDP (Appendix D-E) and the audit chapter reuse
them:

* `audit_poses(seed)`: the dense audit, 221,875 configurations over the domain Theta (Sec.
  V-A): a 1x5x5x7x5x5x5 structured grid (21,875, identical for every seed), 150,000
  uniform draws over Theta and 50,000 uniform draws over the folded-arm region.
* `sparse_audit_poses(seed)`: the earlier version's audit, a 3^7 grid plus 5,000 uniform
  draws over its narrower domain.
* `manufacturer_audit_poses(seed)`: the dense construction with Theta replaced by the
  manufacturer's joint-limit box (and the folded region clipped to it).
* `box_corners()`, `uniform_poses(n, seed)`, `grid_poses(...)`: the pieces.

Grid placement: every grid axis is `numpy.linspace(lower, upper, points)`, endpoints
included; a joint with one point sits at the centre of its range. With endpoints included
the 2^6 corners of Theta over joints 2-7 are grid points (with theta1 at 0 instead of
+-180 deg), which is the paper's "64 grid configurations that coincide, up to theta1, with
constrained corners" (Sec. VI-E). On joints 3, 5, 7 the planes -180 deg and +180 deg are
the same physical angle; both are kept so that the count is the paper's.

Draw order (bit-for-bit reproducible): `rng = numpy.random.default_rng(seed)`, then
`rng.uniform(lower, upper, size=(150000, 7))` over Theta (row = one pose, columns joints
1..7, theta1 drawn too although M does not depend on it), then from the same generator
`rng.uniform(folded_lower, folded_upper, size=(50000, 7))`. Hence `uniform_poses(150000, s)`
equals the uniform part of `audit_poses(s)`. The sparse audit draws its 5,000 the same way
from its own `default_rng(seed)`.

Another arm (`model.arm`, an `arm_description.ArmDescription` other than the CRANE-X7): every
pose set above is built over that arm's own Theta (`arm.audit_domain`, (n_joints, 2)) with
n_joints columns, by the rule `audit_grid_counts(arm)` and `folded_region(arm)` state (one
point on joint 1, seven on the elbow, five on every other joint; the folded block narrows the
elbow to the bent half of its range; book/register_audit.md). The CRANE-X7's sets are built
from the paper's numbers exactly as before.

Angles are radians; eigenvalues kg·m^2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from crane_lib.errors import InputError
from crane_lib.model import robot_description
from crane_lib.model.dynamics import DynamicModel, is_crane_x7
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import N_LINKS, ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.paths import RESULTS_DIR

GRID, UNIFORM, FOLDED = "grid", "uniform", "folded"
# the grid rule on another arm (the CRANE-X7's counts read the same: 1, 7 on joint 4, 5 elsewhere)
ARM_GRID_FIRST, ARM_GRID_ELBOW, ARM_GRID_OTHER = 1, 7, 5
COMPONENTS = (GRID, UNIFORM, FOLDED)
DEFAULT_WORST_K = 20


def _range_rad(number_id: str) -> tuple[float, float]:
    number = paper(number_id)
    return float(np.deg2rad(number.value)), float(np.deg2rad(number.value_hi))


# ----------------------------------------------------------------------------- domains


@lru_cache(maxsize=1)
def _audit_domain() -> np.ndarray:
    wide, half, elbow = (
        _range_rad("audit_domain_j1357"),
        _range_rad("audit_domain_j26"),
        _range_rad("audit_domain_j4"),
    )
    domain = np.array([wide, half, wide, elbow, wide, half, wide])
    domain.flags.writeable = False
    return domain


def other_arm(arm):
    """The arm a pose set is built for: None for the CRANE-X7 (given as None, its description or
    a DynamicModel of it), else the ArmDescription (of a DynamicModel: `model.arm`)."""
    arm = getattr(arm, "arm", arm) if isinstance(arm, DynamicModel) else arm
    return None if is_crane_x7(arm) else arm


def n_joints_of(arm=None) -> int:
    """Arm joints of the pose sets of `arm` (the CRANE-X7: 7)."""
    arm = other_arm(arm)
    return N_LINKS if arm is None else arm.n_joints


def audit_domain(arm=None) -> np.ndarray:
    """Theta (Sec. V-A, D-G): (7, 2) [lower, upper] of joints 1..7 in radians; of another arm,
    its description's (n_joints, 2)."""
    arm = other_arm(arm)
    return _audit_domain().copy() if arm is None else np.array(arm.audit_domain, dtype=float)


def elbow_joint(arm) -> int:
    """The elbow (1-based) of another arm: the first joint after joint 2 parallel to it."""
    from crane_lib.excitation.arms import elbow_joint as first_parallel

    return first_parallel(arm)


def folded_region(arm=None) -> np.ndarray:
    """The oversampled folded-arm region: Theta with joints 2, 4, 6 narrowed (Sec. VI-E). Another
    arm: its Theta with the elbow narrowed to the half of its range at the end farther from zero
    (the bent elbow; book/register_audit.md)."""
    arm = other_arm(arm)
    region = audit_domain(arm)
    if arm is not None:
        j = elbow_joint(arm) - 1
        lower, upper = region[j]
        middle = 0.5 * (lower + upper)
        region[j] = [lower, middle] if abs(lower) > abs(upper) else [middle, upper]
        return region
    for joint, number_id in (
        (2, "folded_region_j2"),
        (4, "folded_region_j4"),
        (6, "folded_region_j6"),
    ):
        region[joint - 1] = _range_rad(number_id)
    return region


def sparse_domain() -> np.ndarray:
    """Domain of the earlier version's audit (D-G): joints 1-3, 5-7 in +-90 deg, joint 4 in [-180,
    0] deg."""
    half, elbow = _range_rad("earlier_domain_j12357"), _range_rad("earlier_domain_j4")
    return np.array([half, half, half, elbow, half, half, half])


def manufacturer_box(arm=None) -> np.ndarray:
    """The manufacturer's joint limits of the seven arm joints (robot description), (7, 2) radians;
    of another arm, its description's joint limits of the n_joints arm joints."""
    arm = other_arm(arm)
    if arm is not None:
        return arm.joint_limits()[: arm.n_joints].copy()
    return robot_description.joint_limits_rad()[:N_LINKS].copy()


def check_box(box, name: str = "box", n_joints: int = N_LINKS) -> np.ndarray:
    """`box` as an (n_joints, 2) array of finite [lower, upper] rows, or an InputError."""
    box = np.asarray(box, dtype=float)
    if box.shape != (n_joints, 2) or not np.all(np.isfinite(box)) or np.any(box[:, 0] > box[:, 1]):
        raise InputError(
            name,
            f"array of shape {box.shape}",
            f"({n_joints}, 2) finite [lower, upper] rows in radians, lower <= upper",
        )
    return box


def intersect_boxes(a, b, n_joints: int = N_LINKS) -> np.ndarray:
    """The intersection of two boxes, or an InputError when it is empty on some joint."""
    a, b = check_box(a, "first box", n_joints), check_box(b, "second box", n_joints)
    out = np.column_stack([np.maximum(a[:, 0], b[:, 0]), np.minimum(a[:, 1], b[:, 1])])
    if np.any(out[:, 0] > out[:, 1]):
        raise InputError("box intersection", "empty on some joint", "overlapping boxes")
    return out


def volume_share(region, domain, n_joints: int = N_LINKS) -> float:
    """Volume of `region` as a share of `domain` (boxes over joints 2..7; theta1 is irrelevant)."""
    region, domain = check_box(region, n_joints=n_joints), check_box(domain, n_joints=n_joints)
    inter = intersect_boxes(region, domain, n_joints)
    widths = lambda box: box[1:, 1] - box[1:, 0]  # noqa: E731
    return float(np.prod(widths(inter) / widths(domain)))


# ----------------------------------------------------------------------------- pose sets


def grid_poses(box, points_per_joint, n_joints: int = N_LINKS) -> np.ndarray:
    """Structured grid, endpoints included: linspace per joint, one point = the centre; joint 1
    varies slowest."""
    box = check_box(box, n_joints=n_joints)
    points_per_joint = [int(p) for p in points_per_joint]
    if len(points_per_joint) != n_joints or min(points_per_joint) < 1:
        raise InputError(
            "grid points per joint", f"{points_per_joint}", f"{n_joints} positive integers"
        )
    axes = [
        np.array([0.5 * (lo + hi)]) if p == 1 else np.linspace(lo, hi, p)
        for (lo, hi), p in zip(box, points_per_joint)
    ]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, n_joints)


def _draw(rng: np.random.Generator, n: int, box: np.ndarray) -> np.ndarray:
    return rng.uniform(box[:, 0], box[:, 1], size=(int(n), len(box)))


def uniform_poses(n: int, seed: int, box=None, arm=None) -> np.ndarray:
    """n poses uniform over `box` (default Theta of `arm`) from a fresh default_rng(seed);
    (n, 7) radians, (n, n_joints) on another arm."""
    n_joints = n_joints_of(arm)
    box = audit_domain(arm) if box is None else check_box(box, n_joints=n_joints)
    return _draw(np.random.default_rng(seed), n, box)


def box_corners(box=None, arm=None) -> np.ndarray:
    """The 2^7 = 128 corners of `box` (default Theta) over joints 1..7, (128, 7) radians; on
    another arm the 2^n_joints corners of its box."""
    n_joints = n_joints_of(arm)
    box = audit_domain(arm) if box is None else check_box(box, n_joints=n_joints)
    return grid_poses(box, [2] * n_joints, n_joints)


def audit_grid_counts(arm=None) -> list[int]:
    """Points per joint of the dense grid, 1x5x5x7x5x5x5 (Sec. VI-E), read from the paper's numbers.
    Another arm: one point on joint 1 (M never depends on it), seven on the elbow, five on every
    other joint, the rule that gives the CRANE-X7's counts with its elbow, joint 4."""
    arm = other_arm(arm)
    if arm is not None:
        counts = [ARM_GRID_OTHER] * arm.n_joints
        counts[0], counts[elbow_joint(arm) - 1] = ARM_GRID_FIRST, ARM_GRID_ELBOW
        return counts
    other, elbow, first = (
        int(paper(i).value)
        for i in ("audit_grid_points_other", "audit_grid_j4_points", "audit_grid_j1_points")
    )
    return [first, other, other, elbow, other, other, other]


@dataclass
class PoseSet:
    """Configurations of one audit, with the component each row belongs to."""

    poses: np.ndarray  # (n, 7) radians; (n, n_joints) on another arm
    component: np.ndarray  # (n,) index into `names`
    names: tuple[str, ...]
    seed: int | None
    domain: str

    def part(self, name: str) -> np.ndarray:
        """The poses of one component of the pose set (rad)."""
        return self.poses[self.component == self.names.index(name)]

    def counts(self) -> dict[str, int]:
        """The number of poses of each component."""
        return {name: int(np.sum(self.component == i)) for i, name in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.poses)


def _assemble(parts: list[tuple[str, np.ndarray]], seed, domain: str) -> PoseSet:
    names = tuple(name for name, _ in parts)
    component = np.concatenate(
        [np.full(len(p), i, dtype=np.int8) for i, (_, p) in enumerate(parts)]
    )
    return PoseSet(
        np.ascontiguousarray(np.vstack([p for _, p in parts])), component, names, seed, domain
    )


def _dense_poses(box: np.ndarray, folded: np.ndarray, seed: int, domain: str, arm=None) -> PoseSet:
    rng = np.random.default_rng(seed)
    uniform = _draw(rng, int(paper("audit_uniform_count").value), box)
    focused = _draw(rng, int(paper("audit_focused_count").value), folded)
    grid = grid_poses(box, audit_grid_counts(arm), len(box))
    return _assemble([(GRID, grid), (UNIFORM, uniform), (FOLDED, focused)], seed, domain)


def audit_poses(seed: int, arm=None) -> PoseSet:
    """The dense audit set over Theta: 21,875 grid + 150,000 uniform + 50,000 folded-arm poses;
    on another arm its own grid (`audit_grid_counts(arm)`), the same draw counts over its Theta."""
    arm = other_arm(arm)
    return _dense_poses(audit_domain(arm), folded_region(arm), seed, "Theta", arm)


def sparse_audit_poses(seed: int, arm=None) -> PoseSet:
    """The earlier version's audit: 3^7 grid (theta1 included, endpoints included) + 5,000 uniform
    draws; the CRANE-X7's only (its domain is the earlier version's, which no other arm has)."""
    if other_arm(arm) is not None:
        raise InputError(
            f"the sparse audit of the {other_arm(arm).name}",
            "asked for",
            "the CRANE-X7: the earlier version's domain exists for it only",
        )
    box = sparse_domain()
    points = int(paper("earlier_grid_points_per_joint").value)
    rng = np.random.default_rng(seed)
    uniform = _draw(rng, int(paper("earlier_uniform_count").value), box)
    return _assemble(
        [(GRID, grid_poses(box, [points] * N_LINKS)), (UNIFORM, uniform)],
        seed,
        "sparse (earlier version)",
    )


def manufacturer_audit_poses(seed: int, arm=None) -> PoseSet:
    """The dense construction over the manufacturer's joint-limit box, folded region clipped to that
    box."""
    arm = other_arm(arm)
    box = manufacturer_box(arm)
    folded = intersect_boxes(folded_region(arm), box, len(box))
    return _dense_poses(box, folded, seed, "manufacturer joint limits", arm)


POSE_SETS = {
    "dense": audit_poses,
    "sparse": sparse_audit_poses,
    "manufacturer": manufacturer_audit_poses,
}


# ----------------------------------------------------------------------------- the audit


@dataclass
class AuditResult:
    """Outcome of one audit (11) of one model on one pose set; what the rescue, Table IX and the
    acceptance read. A violation is a pose with lambda_min <= `threshold` (0 for the audit (11)).

    passed                   no pose of the set violates
    lambda_min               smallest eigenvalue of the 7x7 arm inertia matrix over all poses
                             (kg·m^2)
    worst_pose               the pose where it is reached, (7,) radians (theta1 included though M
                             ignores it)
    worst_component          the component of the pose set it belongs to (GRID, UNIFORM or FOLDED)
    violations               violating poses per component, counts (not fractions: the folded block
                             oversamples on purpose)
    pose_counts              poses per component
    component_lambda_min     lambda_min per component (kg·m^2)
    worst_poses              the k poses with the smallest lambda_min, (k, 7) radians, ascending,
                             ties by
                             pose index (deterministic); k = the `worst_k` the audit was asked for
    worst_lambdas            their lambda_min (k,), kg·m^2
    worst_components         their components
    non_pd_fraction_uniform  violations / draws of the uniform component only (Table X's non-PD
                             share);
                             None when the set has no uniform component
    seed                     the seed of the pose set's random components (None for a fixed set)
    domain                   which domain the set covers ("Theta", "sparse (earlier version)", ...)
    threshold                the violation threshold (kg·m^2): 0 for the audit, eps/2 in the
                             rescue's check
    elapsed_s                run time (left out of comparisons and of to_dict, so reruns are
                             identical)
    """

    passed: bool
    lambda_min: float
    worst_pose: np.ndarray
    worst_component: str
    violations: dict[str, int]
    pose_counts: dict[str, int]
    component_lambda_min: dict[str, float]
    worst_poses: np.ndarray
    worst_lambdas: np.ndarray
    worst_components: list[str]
    non_pd_fraction_uniform: float | None
    seed: int | None
    domain: str
    threshold: float = 0.0
    elapsed_s: float = field(default=0.0, compare=False)

    @property
    def n_poses(self) -> int:
        """The number of poses audited over all components."""
        return int(sum(self.pose_counts.values()))

    @property
    def n_violations(self) -> int:
        """The number of violating poses over all components."""
        return int(sum(self.violations.values()))

    @classmethod
    def from_dict(cls, d: dict) -> "AuditResult":
        """One audit as a record stores it (`to_dict`), back in its own form."""
        worst = d.get("worst") or []
        return cls(
            passed=bool(d["passed"]),
            lambda_min=float(d["lambda_min"]),
            worst_pose=np.asarray(d["worst_pose_rad"], dtype=float),
            worst_component=d["worst_component"],
            violations={k: int(v) for k, v in d["violations"].items()},
            pose_counts={k: int(v) for k, v in d["pose_counts"].items()},
            component_lambda_min={k: float(v) for k, v in d["component_lambda_min"].items()},
            worst_poses=np.array([w["pose_rad"] for w in worst], dtype=float).reshape(
                -1, len(d["worst_pose_rad"])
            ),
            worst_lambdas=np.array([w["lambda_min"] for w in worst], dtype=float),
            worst_components=[w["component"] for w in worst],
            non_pd_fraction_uniform=d.get("non_pd_fraction_uniform"),
            seed=d.get("seed"),
            domain=d.get("domain", "Theta"),
            threshold=float(d.get("threshold", 0.0)),
        )

    def to_dict(self) -> dict:
        """JSON-ready summary (radians and kg·m^2); the run time is left out so that reruns are
        identical."""
        return {
            "domain": self.domain,
            "seed": self.seed,
            "passed": self.passed,
            "threshold": self.threshold,
            "lambda_min": self.lambda_min,
            "worst_pose_rad": self.worst_pose.tolist(),
            "worst_component": self.worst_component,
            "violations": self.violations,
            "pose_counts": self.pose_counts,
            "component_lambda_min": self.component_lambda_min,
            "non_pd_fraction_uniform": self.non_pd_fraction_uniform,
            "worst": [
                {"lambda_min": float(lam), "pose_rad": pose.tolist(), "component": comp}
                for lam, pose, comp in zip(
                    self.worst_lambdas, self.worst_poses, self.worst_components
                )
            ],
        }


def violation_rate(results: list[AuditResult], component: str) -> float:
    """Violating poses over poses of one component, pooled over audits (e.g. the five seeds);
    NaN when the audits have no pose in that component."""
    poses = sum(r.pose_counts.get(component, 0) for r in results)
    return sum(r.violations.get(component, 0) for r in results) / poses if poses else float("nan")


def folded_rate_ratio(results: list[AuditResult]) -> float:
    """How much more often the oversampled folded-arm block finds violations than the uniform draw
    (Sec. VI-E), pooled over audits: the ratio of the two violation rates. NaN when neither finds
    any, inf when only the folded block does."""
    folded, uniform = violation_rate(results, FOLDED), violation_rate(results, UNIFORM)
    if folded == 0 and uniform == 0:
        return float("nan")
    return float("inf") if uniform == 0 else folded / uniform


def _model(model: DynamicModel | None) -> DynamicModel:
    model = shared_model("reduced") if model is None else model
    return model


def arm_lambda_min(beta, poses, model: DynamicModel | None = None) -> np.ndarray:
    """lambda_min of the 7x7 arm inertia matrix (another arm's n_joints block) per pose, kg·m^2."""
    return _model(model).arm_min_eigenvalue(poses, beta)


def audit_pose_set(
    beta,
    pose_set: PoseSet,
    model: DynamicModel | None = None,
    worst_k: int = DEFAULT_WORST_K,
    threshold: float = 0.0,
) -> AuditResult:
    """Evaluate lambda_min on every pose of `pose_set`; pass when none is <= threshold (the
    compiled routine of `DynamicModel.arm_min_eigenvalue(exact_order=False)`: eigvalsh's value
    wherever it could decide the verdict, the violations or the worst poses)."""
    start = time.perf_counter()
    lam = _model(model).arm_min_eigenvalue(pose_set.poses, beta, exact_order=False)
    bad = lam <= threshold
    violations, counts, component_min = {}, {}, {}
    for i, name in enumerate(pose_set.names):
        in_part = pose_set.component == i
        counts[name] = int(in_part.sum())
        violations[name] = int(np.count_nonzero(bad & in_part))
        component_min[name] = float(lam[in_part].min()) if counts[name] else float("nan")
    k = min(int(worst_k), len(lam))
    candidates = np.arange(len(lam))
    if 0 < k < len(lam):  # every pose at or below the k-th value, those tied with it included
        candidates = np.flatnonzero(lam <= np.partition(lam, k - 1)[k - 1])
    # ascending lambda, ties by pose index: the same k whatever order the other values are in
    worst = candidates[np.lexsort((candidates, lam[candidates]))][:k]
    i_min = int(worst[0]) if k else int(np.argmin(lam))
    uniform_share = (
        violations[UNIFORM] / counts[UNIFORM] if UNIFORM in counts and counts[UNIFORM] else None
    )
    return AuditResult(
        passed=not bool(bad.any()),
        lambda_min=float(lam[i_min]),
        worst_pose=pose_set.poses[i_min].copy(),
        worst_component=pose_set.names[pose_set.component[i_min]],
        violations=violations,
        pose_counts=counts,
        component_lambda_min=component_min,
        worst_poses=pose_set.poses[worst].copy(),
        worst_lambdas=lam[worst].copy(),
        worst_components=[pose_set.names[c] for c in pose_set.component[worst]],
        non_pd_fraction_uniform=uniform_share,
        seed=pose_set.seed,
        domain=pose_set.domain,
        threshold=float(threshold),
        elapsed_s=time.perf_counter() - start,
    )


def audit(
    beta,
    seed: int = 1,
    kind: str = "dense",
    model: DynamicModel | None = None,
    worst_k: int = DEFAULT_WORST_K,
    threshold: float = 0.0,
) -> AuditResult:
    """The audit (11): `kind` "dense" (Sec. VI-E, default), "sparse" (earlier version) or
    "manufacturer".

    `beta` is a ParameterSet of the model's base parameters (or an array in `model.names` order).
    The pose set is that of the model's arm (`model.arm`; the CRANE-X7's by default).
    """
    if kind not in POSE_SETS:
        raise InputError("audit kind", repr(kind), f"one of {sorted(POSE_SETS)}")
    arm = other_arm(model)
    poses = POSE_SETS[kind](seed) if arm is None else POSE_SETS[kind](seed, arm)
    return audit_pose_set(beta, poses, model, worst_k, threshold)


def audit_seeds(
    beta,
    seeds=(1, 2, 3, 4, 5),
    kind: str = "dense",
    model: DynamicModel | None = None,
    worst_k: int = DEFAULT_WORST_K,
) -> list[AuditResult]:
    """The same audit repeated over seeds (Table IX); only the random components change."""
    return [audit(beta, s, kind, model, worst_k) for s in seeds]


def as_beta(params, model: DynamicModel | None = None) -> np.ndarray:
    """Base-parameter vector in the model's order from a ParameterSet or an array."""
    model = _model(model)
    if isinstance(params, ParameterSet):
        return params.ordered(model.names, source="base parameters")
    return model.parameter_vector(params)


# ----------------------------------------------------------------------------- where violations lie


def lambda_min_map(
    beta,
    pose_set: PoseSet,
    joints=(2, 4),
    bins: int = 30,
    model: DynamicModel | None = None,
    box=None,
) -> dict:
    """Smallest lambda_min of the poses of `pose_set` falling in each cell of a 2-D grid over two
    joints (1-based numbers), for a map of where a model's margin is smallest.

    Returns {"edges": (edges_a, edges_b) in radians, "lambda_min": (bins, bins) array, NaN
    where no pose falls, "violations": (bins, bins) counts of lambda_min <= 0}.
    """
    arm = other_arm(model)
    box = audit_domain(arm) if box is None else check_box(box, n_joints=n_joints_of(arm))
    a, b = (int(j) - 1 for j in joints)
    lam = arm_lambda_min(beta, pose_set.poses, model)
    edges = [np.linspace(box[j, 0], box[j, 1], bins + 1) for j in (a, b)]
    ia = np.clip(np.searchsorted(edges[0], pose_set.poses[:, a], side="right") - 1, 0, bins - 1)
    ib = np.clip(np.searchsorted(edges[1], pose_set.poses[:, b], side="right") - 1, 0, bins - 1)
    cell = ia * bins + ib
    low = np.full(bins * bins, np.inf)
    np.minimum.at(low, cell, lam)
    low[np.isinf(low)] = np.nan
    count = np.bincount(cell[lam <= 0.0], minlength=bins * bins)
    return {
        "edges": tuple(edges),
        "lambda_min": low.reshape(bins, bins),
        "violations": count.reshape(bins, bins),
    }


def minimal_pd_break(beta, pose, depth: float, model: DynamicModel | None = None) -> np.ndarray:
    """A constructed non-PD model: the smallest change of `beta` (Euclidean, base parameters) that
    brings the Rayleigh quotient of M(pose) along its lambda_min eigenvector v down to -depth.

    M is linear in beta, so v^T M(pose; beta + d) v = lambda_min + g.d with g_k = v^T B_k v, and
    the minimum-norm d reaching -depth is -(lambda_min + depth) g / |g|^2. The result has
    lambda_min(M(pose)) <= -depth. Used only to demonstrate the rescue when no estimate of a
    build violates; it is not an identification result.
    """
    model = _model(model)
    beta = model.parameter_vector(beta)
    n = model.n_joints
    pose = np.asarray(pose, dtype=float).reshape(1, n)
    eigenvalues, eigenvectors = np.linalg.eigh(model.inertia_matrix(pose, beta)[0, :n, :n])
    v = eigenvectors[:, 0]
    g = np.empty(model.n_parameters)
    for k in range(model.n_parameters):
        unit = np.zeros(model.n_parameters)
        unit[k] = 1.0
        g[k] = v @ model.inertia_matrix(pose, unit)[0, :n, :n] @ v
    return beta - (eigenvalues[0] + float(depth)) * g / float(g @ g)


# Sec. VI-E: every OLS estimate of the build re-evaluated over the domain (one record)
OLS_AUDITS_PATH = RESULTS_DIR / "audits" / "ols_dense_seed1.json"  # screen.audit_estimates
