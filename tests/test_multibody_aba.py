"""The SPOOK stepper of physid.multibody against Pinocchio's ABA (reduced coordinates).

A Furuta-like chain (paper A §4.3: a vertical arm hinge, a pendulum hinge along the arm) with a
motor of gain K and shaft inertia J_s on hinge 1 (F.3) and viscous friction b on hinge 2 (F.2),
at small compliance, is integrated by SPOOK in maximal coordinates and by RK4 on Pinocchio's
articulated-body forward dynamics with ``armature = J_s`` and ``tau = [K u, -b dq_2]``: the joint
angles agree to first order in h (SPOOK is a first-order, semi-implicit scheme).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import simulate, state_from_joints

FURUTA = Path(__file__).resolve().parents[1] / "examples" / "multibody" / "furuta.urdf"
G, K, JS, B2 = 9.81, 0.05, 1e-4, 1e-3
Q0, DQ0, HORIZON = np.array([0.0, 1.0]), np.array([0.5, 0.0]), 0.5


def _control(t: np.ndarray) -> np.ndarray:
    return np.sin(2 * np.pi * t)


def _aba_reference(model, h_ref: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    import pinocchio as pin

    pm = model.pin_model.copy()
    pm.armature[:] = [JS, 0.0]
    pm.gravity.linear[:] = [0.0, 0.0, -G]
    data = pm.createData()

    def rate(x: np.ndarray, t: float) -> np.ndarray:
        tau = np.array([K * _control(t), -B2 * x[3]])
        return np.concatenate([x[2:], pin.aba(pm, data, x[:2], x[2:], tau)])

    x, out = np.concatenate([Q0, DQ0]), []
    n = int(round(HORIZON / h_ref))
    for k in range(n + 1):
        out.append(x)
        t = k * h_ref
        k1 = rate(x, t)
        k2 = rate(x + h_ref / 2 * k1, t + h_ref / 2)
        k3 = rate(x + h_ref / 2 * k2, t + h_ref / 2)
        k4 = rate(x + h_ref * k3, t + h_ref)
        x = x + h_ref / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return h_ref * np.arange(n + 1), np.array(out)


def test_furuta_chain_matches_pinocchio_aba_to_first_order():
    cfg = {
        "gravity": [0, 0, -G],
        "defaults": {"compliance_linear": 1e-9, "compliance_rotational": 1e-9},
        "joints": {"hinge1": {"gain": K, "shaft_inertia": JS}, "hinge2": {"viscous": B2}},
    }
    model = load_model(FURUTA, cfg)
    t_ref, x_ref = _aba_reference(model)
    errors = []
    for h in (1e-3, 5e-4):
        n = int(round(HORIZON / h))
        u = np.column_stack([_control(h * np.arange(n)), np.zeros(n)])
        q0, v0 = state_from_joints(model, Q0, DQ0)
        sim = simulate(model, h, n, q0, v0, u)
        reference = np.column_stack([np.interp(sim.t, t_ref, x_ref[:, j]) for j in range(4)])
        errors.append(np.abs(sim.angles - reference[:, :2]).max())
        assert np.abs(sim.rates - reference[:, 2:]).max() < 40 * h
    # measured: 3.8e-3 rad at h = 1e-3, 1.9e-3 rad at h = 5e-4 over 0.5 s (pendulum swing ~1 rad)
    assert errors[1] < 2.5e-3
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.15)
