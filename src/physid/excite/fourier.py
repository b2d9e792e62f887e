"""Finite Fourier series excitation (Swevers, Ganseman, Tükel, De Schutter, Van Brussel 1997,
"Optimal robot excitation and identification", IEEE T-RA 13(5), eqs. 8–9).

Per joint ``j``, with base pulsation ``w = 2 pi f0`` and harmonics ``l = 1..L``::

    q_j(t)   = q0_j + sum_l  a_jl/(w l) sin(w l t) - b_jl/(w l) cos(w l t)
    dq_j(t)  =        sum_l  a_jl cos(w l t) + b_jl sin(w l t)
    ddq_j(t) =        sum_l -a_jl w l sin(w l t) + b_jl w l cos(w l t)

the convention of :class:`physid.sim.arm.FourierExcitation`. The trajectory is periodic with
period ``1/f0``, so averaging over periods is possible, and its bandwidth is ``L f0``. Zero
velocity and acceleration at the start (hence at every period end) are the linear equalities
``sum_l a_jl = 0`` and ``sum_l l b_jl = 0``.

The coefficients of all joints are packed in one vector ``x`` (joint after joint:
``[q0_j, a_j1..a_jL, b_j1..b_jL]``), and ``q = P(t) X_j`` is linear in them: every position,
velocity and acceleration limit is a linear constraint on ``x``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FourierBasis:
    """Basis rows of a finite Fourier series with ``harmonics`` terms at ``base_frequency_hz``."""

    base_frequency_hz: float
    harmonics: int
    n_joints: int

    @property
    def period_s(self) -> float:
        return 1.0 / self.base_frequency_hz

    @property
    def per_joint(self) -> int:
        """Coefficients per joint: the offset, L cosine-velocity and L sine-velocity terms."""
        return 1 + 2 * self.harmonics

    @property
    def size(self) -> int:
        return self.n_joints * self.per_joint

    def rows(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Basis matrices ``P, V, A`` (K, 1 + 2L): ``q_j(t_k) = P[k] @ X[j]`` and so on."""
        t = np.atleast_1d(np.asarray(t, float))
        w = 2.0 * np.pi * self.base_frequency_hz
        wl = w * np.arange(1, self.harmonics + 1)
        phase = np.outer(t, wl)
        sin, cos = np.sin(phase), np.cos(phase)
        ones, zeros = np.ones((len(t), 1)), np.zeros((len(t), 1))
        P = np.hstack([ones, sin / wl, -cos / wl])
        V = np.hstack([zeros, cos, sin])
        A = np.hstack([zeros, -sin * wl, cos * wl])
        return P, V, A

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(offset (n,), a (n, L), b (n, L))`` of a packed coefficient vector."""
        X = np.asarray(x, float).reshape(self.n_joints, self.per_joint)
        L = self.harmonics
        return X[:, 0].copy(), X[:, 1 : 1 + L].copy(), X[:, 1 + L :].copy()

    def pack(self, offset: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.hstack([np.asarray(offset, float)[:, None], a, b]).reshape(-1)

    def evaluate(self, x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations (K, n) of coefficients ``x`` at times ``t``."""
        X = np.asarray(x, float).reshape(self.n_joints, self.per_joint)
        P, V, A = self.rows(t)
        return P @ X.T, V @ X.T, A @ X.T

    def end_condition_matrix(self) -> np.ndarray:
        """``E`` (2n, size) with ``E x = 0`` ⇔ zero velocity and acceleration at t = 0 (and so
        at every multiple of the period)."""
        L = self.harmonics
        E = np.zeros((2 * self.n_joints, self.size))
        for j in range(self.n_joints):
            start = j * self.per_joint
            E[2 * j, start + 1 : start + 1 + L] = 1.0  # dq(0) = sum_l a_jl
            E[2 * j + 1, start + 1 + L : start + 1 + 2 * L] = np.arange(1, L + 1)  # ddq(0) / w
        return E

    def project_end_conditions(self, x: np.ndarray) -> np.ndarray:
        """The nearest coefficients (Euclidean) that satisfy the end conditions exactly."""
        E = self.end_condition_matrix()
        x = np.asarray(x, float)
        return x - E.T @ np.linalg.solve(E @ E.T, E @ x)

    def random(self, rng: np.random.Generator) -> np.ndarray:
        """Random coefficients (standard normal, offsets 0) satisfying the end conditions."""
        X = rng.standard_normal((self.n_joints, self.per_joint))
        X[:, 0] = 0.0
        return self.project_end_conditions(X.reshape(-1))

    def grid(self, points_per_period: int, shift: float = 0.0) -> np.ndarray:
        """``points_per_period`` equally spaced times over one period (end excluded), moved by
        ``shift`` steps (0.5: midway, so no sample falls on the rest at t = 0, where the
        Coulomb column ``sign(dq)`` jumps)."""
        return (np.arange(points_per_period) + shift) * (self.period_s / points_per_period)
