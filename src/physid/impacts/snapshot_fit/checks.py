"""What any rigid body could do in one impact: the checks every snapshot passes before the fit.

An impact fails when, beyond a tolerance of :data:`CHECK_SIGMAS` velocity noise standard
deviations σ_v: its contact point does not approach the surface (u_n⁻ = n̄ᵀv⁻ ≥ 0); the normal
impulse pulls (Δv·n < 0); the contact point still enters the surface afterwards (u_n⁺ < 0); the
tangential impulse lies outside the friction cone of every μ ≤ μ_max; the spin changes against
the torque of the impulse (GQ × Δv and Δω of opposite signs: no J/m > 0, paper D eq. 31); or the
kinetic energy rises for every J/m within the bounds. The first failing check names the impact's
code (:mod:`physid.impacts.codes`, IM210-IM215).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.findings import Code
from physid.impacts.codes import (
    ENERGY_GAIN,
    NOT_APPROACHING,
    OUTSIDE_CONE,
    PULLING_IMPULSE,
    SPIN_AGAINST_TORQUE,
    STILL_ENTERING,
)
from physid.impacts.snapshot_fit.law import contact_columns

#: Tolerance of the rigid-body checks, in noise standard deviations σ_v.
CHECK_SIGMAS = 3.0
#: The checks in the order they are made: the first an impact fails names it.
ORDER: tuple[Code, ...] = (
    NOT_APPROACHING,
    PULLING_IMPULSE,
    STILL_ENTERING,
    OUTSIDE_CONE,
    SPIN_AGAINST_TORQUE,
    ENERGY_GAIN,
)


@dataclass(frozen=True)
class CheckSettings:
    """``bounds`` (low, high) of J/m [m²], ``mu_max``, the noise σ_v [m/s] and the median lever
    arm ``length`` [m] that turns an angular velocity into a velocity."""

    bounds: tuple[float, float]
    mu_max: float
    sigma_v: float
    length: float


@dataclass(frozen=True)
class Checked:
    """Per impact: the index into :data:`ORDER` of the first check it fails (-1: none) and the
    quantities the messages quote (u_n⁻, Δv·n, u_n⁺, |c_t|, Δω)."""

    failed: np.ndarray
    u_pre: np.ndarray
    c_n: np.ndarray
    u_post: np.ndarray
    c_t: np.ndarray
    spin: np.ndarray

    @property
    def passed(self) -> np.ndarray:
        return self.failed < 0

    def code(self, i: int) -> Code | None:
        return None if self.failed[i] < 0 else ORDER[int(self.failed[i])]


def check_impacts(
    arm: np.ndarray, normal: np.ndarray, v_pre: np.ndarray, dv: np.ndarray, s: CheckSettings
) -> Checked:
    """The checks of the module docstring for impacts with lever arms GQ ``arm`` (n, 2) [m],
    unit ``normal`` (n, 2), pre-impact velocities ``v_pre`` (n, 3) and velocity changes ``dv``
    (n, 3) (gravity's impulse removed)."""
    tol = CHECK_SIGMAS * s.sigma_v
    nbar, _ = contact_columns(arm, normal)
    v_post = v_pre + dv
    u_pre, u_post = np.einsum("ij,ij->i", nbar, v_pre), np.einsum("ij,ij->i", nbar, v_post)
    c_n = np.einsum("ij,ij->i", normal, dv[:, :2])
    c_t = np.abs(normal[:, 1] * dv[:, 0] - normal[:, 0] * dv[:, 1])  # |Δv·d+|
    torque = arm[:, 0] * dv[:, 1] - arm[:, 1] * dv[:, 0]  # GQ × Δv = (J/m) Δω
    speed = np.linalg.norm(v_pre[:, :2], axis=1) + np.linalg.norm(v_post[:, :2], axis=1)
    spin = np.abs(v_pre[:, 2]) + np.abs(v_post[:, 2])
    linear = 0.5 * (np.sum(v_post[:, :2] ** 2, axis=1) - np.sum(v_pre[:, :2] ** 2, axis=1))
    angular = 0.5 * (v_post[:, 2] ** 2 - v_pre[:, 2] ** 2)
    gains = [linear + r * angular - tol * (speed + r * spin / s.length) for r in s.bounds]
    fails = np.column_stack(
        [
            u_pre > -tol,
            c_n < -tol,
            u_post < -tol,
            c_t > s.mu_max * c_n + tol,
            (torque * dv[:, 2] < 0)
            & (np.abs(dv[:, 2]) * s.length > tol)
            & (np.abs(torque) > tol * s.length),
            np.minimum(*gains) > 0,
        ]
    )
    failed = np.where(fails.any(axis=1), np.argmax(fails, axis=1), -1)
    return Checked(failed, u_pre, c_n, u_post, c_t, dv[:, 2])


def reason(checked: Checked, i: int, s: CheckSettings) -> str:
    """Why impact ``i`` failed, with its numbers (one line)."""
    code = checked.code(i)
    if code is NOT_APPROACHING:
        return f"the contact point does not approach the surface (u_n = {checked.u_pre[i]:.3g} m/s)"
    if code is PULLING_IMPULSE:
        return f"the normal impulse pulls (Δv·n = {checked.c_n[i]:.3g} m/s)"
    if code is STILL_ENTERING:
        return (
            "the contact point still enters the surface after the impact "
            f"(u_n+ = {checked.u_post[i]:.3g} m/s)"
        )
    if code is OUTSIDE_CONE:
        return (
            f"tangential impulse {checked.c_t[i]:.3g} m/s exceeds mu_max = {s.mu_max:g} times "
            f"the normal one ({checked.c_n[i]:.3g} m/s)"
        )
    if code is SPIN_AGAINST_TORQUE:
        return (
            f"the spin changes by {checked.spin[i]:.3g} rad/s against the torque of the "
            "impulse: no J/m > 0 gives it"
        )
    low, high = s.bounds
    return f"the kinetic energy rises for every J/m in [{low:.3g}, {high:.3g}] m²"
