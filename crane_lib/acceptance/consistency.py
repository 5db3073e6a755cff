"""What the base parameters alone say about link-level physical consistency (paper Sec. VII-E).

The audit (11) tests positive definiteness of M(theta); full physical consistency (Wensing et
al.) asks that every link's 4x4 pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I)/2 * 1 - I   (I: the link's inertia about its
                                                            frame origin, h its first moment)

be positive definite. A base-parameter model carries link parameters only through the grouping
of Appendix A, so most of J is not decided by it; a link-level reconstruction (another stage,
`export/`) must search the non-identifiable part. Some of it is decided, though: on this arm
the grouping leaves link 7 ungrouped except for YY7, MZ7 and M7,

    ZZR7 = ZZ7,   XXR7 = XX7 - YY7,

and a positive definite J has a positive diagonal of Sigma whatever the products of inertia,
first moments and mass are:

    Sigma_xx = (YY + ZZ - XX)/2 = (ZZR7 - XXR7)/2 > 0,
    Sigma_yy = (XX + ZZ - YY)/2 = (ZZR7 + XXR7)/2 > 0,

that is ZZR7 > |XXR7|. (Sigma_zz = (XX + YY - ZZ)/2 can always be made positive by raising XX7
and YY7 together, which the base parameters do not see.) A base vector that violates it
admits no physically consistent link 7, whatever a reconstruction does with the free part.

`isolated_links` finds, from the derived grouping rather than by assertion, every link whose
ZZR and XXR have exactly this form; `necessary_conditions` evaluates the inequality on a base
vector. The inequality is necessary, not sufficient: the coupling of YY7, MZ7 and M7 into link
6's base parameters is the reconstruction's problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy

from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import N_LINKS


@dataclass(frozen=True)
class LinkCondition:
    """ZZRj > |XXRj| for an isolated link j: margin = ZZRj - |XXRj| = 2 min(Sigma_xx, Sigma_yy),
    kg·m^2."""

    link: int
    zzr: float
    xxr: float

    @property
    def margin(self) -> float:
        """ZZR minus |XXR| of the link (kg·m²): positive when the condition holds."""
        return float(self.zzr - abs(self.xxr))

    @property
    def holds(self) -> bool:
        """Whether ZZR > |XXR| holds for the link."""
        return self.margin > 0

    @property
    def sigma_diagonal(self) -> tuple[float, float]:
        """(Sigma_xx, Sigma_yy) of the link, kg·m^2, as the base parameters fix them."""
        return (self.zzr - self.xxr) / 2.0, (self.zzr + self.xxr) / 2.0

    @property
    def expression(self) -> str:
        """The condition as printed ("ZZR5 > |XXR5|")."""
        return f"ZZR{self.link} > |XXR{self.link}|"

    def violated_by(self) -> list[str]:
        """The base parameters that break the condition: ZZRj when it is not positive, else both."""
        if self.holds:
            return []
        return [f"ZZR{self.link}"] if self.zzr <= 0 else [f"ZZR{self.link}", f"XXR{self.link}"]


def isolated_links(model: DynamicModel) -> list[int]:
    """Links j whose base parameters are exactly ZZRj = ZZj and XXRj = XXj - YYj (read from the
    model's derived grouping)."""
    relations = tuple(
        (j, str(model.grouping.relation(f"ZZR{j}")), str(model.grouping.relation(f"XXR{j}")))
        for j in range(1, N_LINKS + 1)
        if f"ZZR{j}" in model.names and f"XXR{j}" in model.names
    )
    return _isolated(relations)


@lru_cache(maxsize=8)
def _isolated(relations: tuple) -> list[int]:
    links = []
    for j, zzr, xxr in relations:
        zz, xx, yy = (sympy.Symbol(f"{kind}{j}") for kind in ("ZZ", "XX", "YY"))
        if (
            sympy.expand(sympy.sympify(zzr) - zz) == 0
            and sympy.expand(sympy.sympify(xxr) - (xx - yy)) == 0
        ):
            links.append(j)
    return links


def necessary_conditions(model: DynamicModel, beta) -> list[LinkCondition]:
    """ZZRj > |XXRj| for every isolated link of `model`, evaluated on the base vector `beta`."""
    beta = model.parameter_vector(beta)
    index = {n: i for i, n in enumerate(model.names)}
    return [
        LinkCondition(j, float(beta[index[f"ZZR{j}"]]), float(beta[index[f"XXR{j}"]]))
        for j in isolated_links(model)
    ]


def inertia_entry(model: DynamicModel, beta, axis: int, poses) -> np.ndarray:
    """M(theta; beta)[axis, axis] (1-based axis) at each pose, kg·m^2."""
    return model.inertia_matrix(poses, beta)[:, axis - 1, axis - 1]
