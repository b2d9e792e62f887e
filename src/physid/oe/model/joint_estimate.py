"""Joint terms estimated with the bodies: armature, viscous and Coulomb
friction of every actuated joint as extra entries of theta, after the bodies' 10 each.

Each estimated value is carried as its logarithm, ``s = log(value)``: every s is a positive
value (a negative armature makes M indefinite, a negative friction pumps energy) and a
Gauss-Newton step moves it by a factor, so one scale fits a 0.01 kg m^2 leg rotor and a
1 kg m^2 industrial drive. The prior (where the robot file declares the value) is log-normal
about it, ``|s - log(value_file)| / prior_log_std``; a value the file does not declare starts
at :data:`START` with a wide log-normal prior about it (:data:`UNDECLARED_LOG_STD`, a factor 20
at one std): where the data cannot tell a value (an armature of a joint that barely
accelerates), that prior holds it and the output says ``source: prior``, instead of a
logarithm drifting to minus infinity (where it loses its curvature and every coupling, so no
standard deviation can be given for it or for what it is confounded with).

The dynamics of :mod:`physid.oe.model.dynamics` solve ``(M + armature + dt D_eff(v)) a + h = B u - D
v - F_c tanh(v / v_c) (+ Jc^T lambda)``; the derivative of its residual with respect to the
joint values, the columns :meth:`JointEstimate.torque_columns` adds to ``dID/dtheta`` (paper B
eq. 17 extended), is per joint j ::

    armature_j: a_j       viscous_j: v_j + dt a_j
    coulomb_j:  tanh(v_j / v_c) + dt a_j sech^2(v_j / v_c) / v_c

times ``value_j`` for ``d/ds_j``; ``da/ds = -K^-1`` of them (K: M_eff, or the KKT matrix in
contact). In an impact only the armature acts: ``M (v+ - v)``, the column ``(v+ - v)_j``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from physid.errors import InputError


class _JointValues(Protocol):
    """What this module reads of :class:`physid.oe.model.dynamics.JointTerms` (a dataclass; that
    module imports this one, so it is not imported here)."""

    armature: NDArray[np.float64]
    viscous: NDArray[np.float64]
    coulomb: NDArray[np.float64]

    def speed(self, node: int | None = None) -> float | NDArray[np.float64]: ...


JointTerms = TypeVar("JointTerms", bound=_JointValues)

KINDS = ("armature", "viscous", "coulomb")
CONFIG_NAMES = {"armature": "armature", "damping": "viscous", "friction": "coulomb"}
UNITS = {"armature": "kg m^2", "viscous": "N m s/rad", "coulomb": "N m"}
# where an undeclared value starts: small against any robot's rotor and friction, and
# log-steps (a factor e each, physid.oe.solving.solver's max_log_step) reach 100x it in 5 iterations
START = {"armature": 1e-4, "viscous": 1e-2, "coulomb": 1e-2}
UNDECLARED_LOG_STD = 3.0


@dataclass(frozen=True)
class JointEstimate:
    """Which joint terms theta estimates: ``kinds`` (subset of :data:`KINDS`) on the velocity
    coordinates ``dofs`` (a free-flyer's six excluded), theta's tail ordered kind by kind;
    ``prior_log_std``: the log-normal prior's standard deviation about a declared value
    (1: within a factor e at one std)."""

    kinds: tuple[str, ...]
    dofs: tuple[int, ...]
    prior_log_std: float = 1.0

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown or not self.kinds or len(set(self.kinds)) != len(self.kinds):
            raise InputError(f"estimated joint terms must be some of {KINDS}, got {self.kinds}")
        if not self.dofs:
            raise InputError("no actuated joint to estimate joint terms on")
        if not (np.isfinite(self.prior_log_std) and self.prior_log_std > 0):
            raise InputError(f"joints.prior_std must be > 0, got {self.prior_log_std}")

    @property
    def size(self) -> int:
        return len(self.kinds) * len(self.dofs)

    def labels(self, dof_names: Sequence[str]) -> list[tuple[str, str]]:
        """``(joint name, kind)`` of each tail entry, in theta's order."""
        return [(dof_names[d], kind) for kind in self.kinds for d in self.dofs]

    def values(self, joints: JointTerms, kind: str) -> NDArray[np.float64]:
        return np.asarray(getattr(joints, kind), dtype=float)[list(self.dofs)]

    def start(self, joints: JointTerms) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(s0, prior std)`` of the tail: the log of the declared values and
        ``prior_log_std``; ``START`` and ``UNDECLARED_LOG_STD`` where the value is 0."""
        s0, std = [], []
        for kind in self.kinds:
            declared = self.values(joints, kind)
            s0.append(np.log(np.where(declared > 0, declared, START[kind])))
            std.append(np.where(declared > 0, self.prior_log_std, UNDECLARED_LOG_STD))
        return np.concatenate(s0), np.concatenate(std)

    def apply(self, joints: JointTerms, s: NDArray) -> JointTerms:
        """The joint terms with the tail ``s`` written in (values ``exp(s)``)."""
        values = np.exp(np.asarray(s, dtype=float)).reshape(len(self.kinds), len(self.dofs))
        changes = {}
        for kind, row in zip(self.kinds, values, strict=True):
            full = np.asarray(getattr(joints, kind), dtype=float).copy()
            full[list(self.dofs)] = row
            changes[kind] = full
        return replace(joints, **changes)

    def torque_columns(
        self,
        joints: JointTerms,
        v: NDArray,
        a: NDArray,
        dt: float,
        friction: bool = True,
        node: int | None = None,
    ) -> NDArray[np.float64]:
        """``d residual / d s`` ``(nv, size)`` (module docstring); ``friction=False``: an
        impact's columns (``a`` then the velocity jump, only the armature acts); ``node``: whose
        Coulomb width (:meth:`JointTerms.speed`)."""
        nv, dofs = v.size, np.asarray(self.dofs)
        out = np.zeros((nv, self.size))
        vd, ad = v[dofs], a[dofs]
        speed = np.broadcast_to(np.asarray(joints.speed(node), dtype=float), v.shape)[dofs]
        t = np.tanh(vd / speed)
        for i, kind in enumerate(self.kinds):
            if kind == "armature":
                column = ad
            elif not friction:
                continue
            elif kind == "viscous":
                column = vd + dt * ad
            else:
                column = t + dt * ad * (1.0 - t * t) / speed
            cols = i * len(dofs) + np.arange(len(dofs))
            out[dofs, cols] = column * self.values(joints, kind)
        return out

    def summary(
        self,
        joints: JointTerms,
        declared: JointTerms,
        s_std: NDArray,
        prior_std: NDArray,
        dof_names: Sequence[str],
    ) -> dict[str, dict]:
        """Per joint name (params.json's ``joints`` layout): each estimated value, its standard
        deviation (delta method, ``value * std(s)``), its source and its prior (the robot
        file's value, None where it declares none). The source is ``prior`` where the posterior
        std is at least 0.9x the prior's (the data did not narrow it), ``unidentified`` where
        the data leave it free and no prior holds it (std NaN), else ``data``."""
        out: dict[str, dict] = {}
        for i, (name, kind) in enumerate(self.labels(dof_names)):
            value = float(self.values(joints, kind)[i % len(self.dofs)])
            before = float(self.values(declared, kind)[i % len(self.dofs)])
            if not np.isfinite(s_std[i]):
                source = "unidentified"
            elif np.isfinite(prior_std[i]) and s_std[i] >= 0.9 * prior_std[i]:
                source = "prior"
            else:
                source = "data"
            entry = out.setdefault(name, {"std": {}, "source": {}, "prior": {}})
            entry[kind] = value
            entry["std"][kind] = float(value * s_std[i])
            entry["source"][kind] = source
            entry["prior"][kind] = before if before > 0 else None
        return out
