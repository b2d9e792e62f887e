"""The URDF's bodies as a prior and a plausibility box of the estimated masses and principal
inertias, and a start that can be simulated.

Paper A's impulse residuals (eqs. 3.7-3.8) are momenta: they shrink with a body's inertia, so
an equation-error fit on data that barely excite a body (an arm at rest for half the recording,
samples 50 ms apart) lowers its cost by collapsing that body toward zero, where it cannot be
simulated. As in offline identify, the URDF's values (or the config's ``bodies:`` overrides) are
taken as what a CAD model is, a plausible guess:

- each estimated mass and principal inertia ``p`` is bounded to ``[p0 / F, p0 F]`` with the
  plausibility factor ``F`` = :data:`PLAUSIBLE_FACTOR` (the config's ``bounds:`` override it);
  a value at that bound is named with its numbers (``MB201``, ``MB209``), never silently kept;
- each gets a log-normal prior residual ``s ln(p / p0) / ln(PRIOR_FACTOR)``: one standard
  deviation is a factor :data:`PRIOR_FACTOR`, weighed like one angle residual at the noise
  (``s``, the smallest of the joints' weighted noise ``min(sigma_j, NOISE_REF)``: the scale of
  one whitened residual, :mod:`physid.multibody.estimate.observe`). It is a tie-breaker for
  what the data leave free and adds almost nothing the data decide (a fixed weight, not scaled
  to the noise, would pull a noise-free fit toward its start);
- a start that cannot be simulated (an estimated inertia of 0, a violated triangle inequality)
  is repaired before the fit (``MB104``); a fixed one is an input error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

import physid.multibody.codes as codes
from physid.errors import InputError
from physid.findings import Finding
from physid.multibody.estimate.observe import NOISE_REF
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.step.simulate import inertia_problem

INERTIAL_SLOTS = ("mass", "Ixx", "Iyy", "Izz")
#: An estimated mass or principal inertia stays within this factor of its start (both ways).
PLAUSIBLE_FACTOR = 10.0
#: One standard deviation of the log-normal prior: a factor of this much.
PRIOR_FACTOR = 3.0


def inertial(name: str) -> bool:
    return name.rsplit(".", 1)[-1] in INERTIAL_SLOTS


def plausibility_box(
    model: MultibodyModel, names: list[str], start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The box of the estimated ``names``: the model's (config) bounds, and for a mass or
    principal inertia the config does not bound ``[start / F, start F]`` (``F`` =
    :data:`PLAUSIBLE_FACTOR`)."""
    lower, upper = model.bounds(names)
    for k, name in enumerate(names):
        if inertial(name) and start[k] > 0:
            if name not in model.lower:
                lower[k] = start[k] / PLAUSIBLE_FACTOR
            if name not in model.upper:
                upper[k] = start[k] * PLAUSIBLE_FACTOR
    return lower, upper


def physical_start(
    model: MultibodyModel, names: list[str]
) -> tuple[MultibodyModel, tuple[Finding, ...]]:
    """``model`` with every estimated principal inertia that is not positive replaced
    (``MB104``) by ``m d^2 / 3``, ``d`` the hinge to centre-of-mass distance (a slender rod about
    its middle; ``1e-3`` of the body's largest principal inertia, or ``1e-6 m``, when ``d`` is
    0). An InputError names the parameter when the start still cannot be simulated (a fixed
    inertia, or products of inertia that make it indefinite)."""
    values, findings = model.values.copy(), []
    wanted = set(names)
    for body, hinge in zip(model.bodies, model.hinges, strict=True):
        mass = values[model.index(f"{body.name}.mass")]
        slots = [model.index(f"{body.name}.{s}") for s in ("Ixx", "Iyy", "Izz")]
        largest = max(values[slots])
        d2 = float(np.sum(np.asarray(hinge.p_child, float) ** 2))
        rod = mass * d2 / 3 if d2 > 0 else (1e-3 * largest if largest > 0 else 1e-6 * mass)
        for k in slots:
            if model.names[k] in wanted and not values[k] > 0:
                findings.append(
                    codes.START_REPAIRED(
                        f"{model.names[k]} = {values[k]:g} cannot be simulated: the fit starts "
                        f"from {rod:.4g} (m d^2 / 3)",
                        numbers={"given": values[k], "start": rod},
                        names=(model.names[k],),
                    )
                )
                values[k] = rod
    repaired = model.with_values(dict(zip(model.names, values, strict=True)))
    problem = inertia_problem(repaired, values)
    if problem is not None:
        raise InputError(f"{problem}; the fit cannot start there", source="config")
    return repaired, tuple(findings)


@dataclass(frozen=True)
class LogPrior:
    """Log-normal prior residuals ``weight ln(p_k / center_k)`` of the parameters at
    ``index`` (positions in the estimated vector)."""

    index: np.ndarray
    center: np.ndarray
    weight: float

    @classmethod
    def of(cls, names: list[str], start: np.ndarray, noise: float = NOISE_REF) -> LogPrior:
        """The prior of the masses and principal inertias among ``names`` around ``start``,
        one whitened unit being ``min(noise, NOISE_REF)`` [rad] (module docstring)."""
        index = np.array([k for k, n in enumerate(names) if inertial(n) and start[k] > 0], int)
        unit = min(float(noise), NOISE_REF)
        return cls(index, start[index].copy(), unit / np.log(PRIOR_FACTOR))

    def residual(self, p: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.weight * np.log(np.asarray(p, float)[self.index] / self.center)
        return np.where(np.isfinite(r), r, np.inf)

    def jacobian(self, p: np.ndarray, n_state: int, n_params: int) -> sp.csr_matrix:
        """``dr/d[states, p]``: ``weight / p_k`` on the prior's parameters."""
        rows = np.arange(len(self.index))
        values = self.weight / np.maximum(np.asarray(p, float)[self.index], 1e-300)
        shape = (len(self.index), n_state + n_params)
        return sp.csr_matrix((values, (rows, n_state + self.index)), shape)


class WithPrior:
    """A :class:`~physid.multibody.estimate.problem.Problem`'s residual with the prior's rows
    appended (the LM and the covariance see one least-squares problem)."""

    def __init__(self, problem, prior: LogPrior) -> None:  # noqa: ANN001
        self.problem, self.prior = problem, prior

    def residual(self, states, p: np.ndarray, jacobian: bool = True):  # noqa: ANN001, ANN201
        out = self.problem.residual(states, p, jacobian)
        if not len(self.prior.index):
            return out
        rp = self.prior.residual(p)
        if not jacobian:
            return np.concatenate([out, rp])
        r, J = out
        Jp = self.prior.jacobian(p, self.problem.n_state_vars, self.problem.n_params)
        return np.concatenate([r, rp]), sp.vstack([J, Jp], format="csr")
