"""Which dynamics applies at each node (paper B eq. 16): the phase dispatch.

Without a contact schedule every node uses the free dynamics of :mod:`physid.oe.model.dynamics`.
With one, node k integrates the contact phase of the feet in contact at node k (eqs. 2-3) and,
when node k+1 adds feet (touch-down), applies the impulse reset map Delta of the contact set of
node k+1 to the result::

    x_{k+1} = Delta_{c_{k+1}}( f_{c_k}(x_k; theta | u_k) ) (+) w_k     (touch-down at k+1)
    x_{k+1} = f_{c_k}(x_k; theta | u_k) (+) w_k                        (otherwise)

Soft feet (:mod:`physid.oe.model.compliance`) have no reset map: their contact force is
finite, and the spring-damper lands the foot over the nodes that follow the touch-down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.contact import (
    ContactModels,
    contact_acceleration,
    contact_acceleration_derivatives,
    impulse,
    impulse_derivatives,
)
from physid.oe.model.dynamics import ParametrizedModel


class PhasedProblem(Protocol):
    """What the phase dispatch reads of a problem
    (:class:`~physid.oe.solving.problem.OEProblem`)."""

    dynamics: ParametrizedModel
    contacts: ContactSchedule
    u: NDArray  # (N, nu) inputs per node


class ContactSchedule:
    """The known contact sequence: ``flags[k, i]`` is True when ``frames[i]`` touches at node k
    (``N + 1`` rows); contacts are rigid 3D point contacts at those frames' origins."""

    def __init__(
        self,
        model: pin.Model,
        frames: Sequence[str],
        flags: NDArray,
        points: NDArray | None = None,
    ) -> None:
        self.flags = np.asarray(flags, dtype=bool)
        self.points = None if points is None else np.asarray(points, dtype=float)
        if self.points is not None and self.points.shape != (*self.flags.shape, 3):
            raise InputError(f"contact points must be (N+1, {len(frames)}, 3)")
        if self.flags.ndim != 2 or self.flags.shape[1] != len(frames):
            raise InputError(f"contact flags must be (N+1, {len(frames)}), got {self.flags.shape}")
        self.frames = tuple(frames)
        self.models = ContactModels(model, frames)

    def use(self, k: int) -> None:
        """Put node k's contact points (round feet) on the contact models."""
        if self.points is not None:
            self.models.set_points(dict(zip(self.frames, self.points[k], strict=True)))

    def active(self, k: int) -> tuple[str, ...]:
        return tuple(f for f, on in zip(self.frames, self.flags[k], strict=True) if on)

    def touchdown(self, k: int) -> bool:
        """True when node ``k`` (>= 1) adds a foot to the contact set of node ``k - 1``."""
        return bool(np.any(self.flags[k] & ~self.flags[k - 1]))


def flag_changes(flags: NDArray) -> NDArray[np.int64]:
    """The nodes ``c`` whose contact set differs from node ``c + 1``'s (a change between
    them), of ``(N + 1, n_frames)`` contact flags."""
    return np.flatnonzero(np.any(flags[1:] != flags[:-1], axis=1))


def change_distance(flags: NDArray, horizon: int) -> NDArray[np.int64]:
    """Per node k < N, the distance [nodes] to the nearest flag change (a change between nodes
    c and c + 1 is at distance ``|k - c|``); a large number without changes."""
    changed = flag_changes(flags)
    k = np.arange(horizon)
    if changed.size == 0:
        return np.full(horizon, np.iinfo(np.int64).max // 2)
    return np.min(np.abs(k[:, None] - changed[None, :]), axis=1)


def step(
    problem: PhasedProblem, k: int, x: NDArray, a: NDArray | None = None
) -> NDArray[np.float64]:
    """``f_p(x_k; theta | u_k)`` of the phase of node k, with the reset map if any;
    ``a``: :func:`acceleration` at ``(k, x)`` if already computed."""
    sched = problem.contacts
    y = problem.dynamics.euler_step(x, acceleration(problem, k, x) if a is None else a)
    if sched is not None and sched.touchdown(k + 1) and problem.dynamics.soft_start.rigid:
        sched.use(k + 1)
        y = impulse(problem.dynamics, sched.models, sched.active(k + 1), y)
    return y


def acceleration(problem: PhasedProblem, k: int, x: NDArray) -> NDArray[np.float64]:
    """Acceleration ``a_k`` of node k's phase (before a touch-down reset at k+1)."""
    dyn, sched, nq = problem.dynamics, problem.contacts, problem.dynamics.model.nq
    dyn.use_node(k)
    tau = dyn.tau(x, problem.u[k])
    if sched is None:
        return pin.aba(dyn.model, dyn.data, x[:nq], x[nq:], tau).copy()
    sched.use(k)
    return contact_acceleration(dyn, sched.models, sched.active(k), x[:nq], x[nq:], tau)


def acceleration_derivatives(
    problem: PhasedProblem, k: int, x: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(a_k, da_k/dx, da_k/dtheta)`` of node k's phase (eqs. 17-18)."""
    sched = problem.contacts
    problem.dynamics.use_node(k)
    if sched is None:
        return problem.dynamics.free_acceleration_derivatives(x, problem.u[k])
    sched.use(k)
    return contact_acceleration_derivatives(
        problem.dynamics, sched.models, sched.active(k), x, problem.u[k]
    )


def step_derivatives(
    problem: PhasedProblem,
    k: int,
    x: NDArray,
    accel: tuple[NDArray, NDArray, NDArray] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(f_p, df_p/dx, df_p/dtheta)`` of :func:`step` (chain rule through the reset map);
    ``accel``: :func:`acceleration_derivatives` at ``(k, x)`` if already computed."""
    dyn, sched = problem.dynamics, problem.contacts
    y, Fx, Ft = dyn.euler_derivatives(x, *(accel or acceleration_derivatives(problem, k, x)))
    if sched is not None and sched.touchdown(k + 1) and dyn.soft_start.rigid:
        sched.use(k + 1)
        y, Dx, Dt = impulse_derivatives(dyn, sched.models, sched.active(k + 1), y)
        Fx, Ft = Dx @ Fx, Dx @ Ft + Dt
    return y, Fx, Ft
