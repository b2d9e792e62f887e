"""The time-stepping simulator against paper D §4: eq. (22), energy, Fig. 11, NLP vs LCP."""

import math

import numpy as np
import pytest

from physid.errors import InputError
from physid.impacts.geometry import Ellipse, Line, contact_frames, make_polygon
from physid.impacts.simulator import simulate

G = 9.81
BIG = Ellipse(1.5, 1.0)  # paper D §4: a = 1.5 m, b = 1 m, m = 10 kg, J = 2 kg m²
MASS, RATIO = 10.0, 0.2
GROUND = [Line(0.0, 0.0)]


def _drop(h: float, model: str, solver: str = "lcp"):
    return simulate(
        BIG,
        GROUND,
        [0.0, 10.0, 0.0],
        [0.0, 0.0, 0.0],
        inertia_ratio=RATIO,
        mu=0.5,
        restitution=0.0,
        dt=h,
        duration=1.45,
        mass=MASS,
        model=model,
        solver=solver,
    )


def test_flat_drop_single_impulse_eq22_irc_vs_igc_scatter() -> None:
    truth = MASS * math.sqrt(2 * G * (10.0 - 1.0))  # eq. (22): ≈ 133 N·s
    igc_errors = []
    for h in (1e-3, 2e-3, 5e-3):
        irc = _drop(h, "irc").impulse_normal[:, 0]
        big = np.flatnonzero(irc > 0.05 * truth)
        assert big.size == 1, "IRC concentrates the impact in one step"
        assert irc[big[0]] == pytest.approx(truth, rel=0.02)
        igc = _drop(h, "igc").impulse_normal[:, 0]
        big = np.flatnonzero(igc > 0.05 * truth)
        assert big.size == 2 and big[1] == big[0] + 1, "IGC splits it over two steps"
        assert igc[big].sum() == pytest.approx(truth, rel=0.02)  # momentum is still right
        igc_errors.append(igc.max() / truth - 1)
    # ... but the peak IGC impulse depends on where the ground falls within a step (Fig. 6, 7).
    assert max(abs(e) for e in igc_errors) > 0.05
    assert np.ptp(igc_errors) > 0.05


def test_irc_nlp_and_lcp_give_the_same_trajectory() -> None:
    kwargs = dict(
        inertia_ratio=756e-6, mu=0.5, restitution=0.2, dt=1 / 1200, duration=0.35, mass=0.064
    )
    shape, q0, v0 = Ellipse(0.05, 0.025), [0.0, 0.1, -0.785], [3.0, -5.0, 0.0]
    lcp = simulate(shape, GROUND, q0, v0, solver="lcp", **kwargs)
    nlp = simulate(shape, GROUND, q0, v0, solver="nlp", **kwargs)
    assert lcp.status == nlp.status == "ok"
    assert lcp.active.sum() > 100  # impacts, sliding and rolling were exercised
    # IPOPT meets the complementarity of eq. (20) to its tolerance, not exactly: 0.1 mm / mrad.
    np.testing.assert_allclose(nlp.q, lcp.q, atol=1e-4)
    np.testing.assert_allclose(nlp.impulse_normal, lcp.impulse_normal, atol=1e-5)
    np.testing.assert_allclose(nlp.impulse_tangent, lcp.impulse_tangent, atol=1e-5)


def test_igc_nlp_and_lcp_agree_on_the_flat_drop() -> None:
    lcp, nlp = _drop(5e-3, "igc", "lcp"), _drop(5e-3, "igc", "nlp")
    np.testing.assert_allclose(nlp.q, lcp.q, atol=1e-6)
    # Resting after the impact, c_n = m g h = 0.49 N·s per step to IPOPT's tolerance.
    np.testing.assert_allclose(nlp.impulse_normal, lcp.impulse_normal, atol=2e-3)


def _throw(restitution: float, mu: float, h: float = 1e-3, duration: float = 3.0):
    # Paper D §4.2/§4.4: q0 = (0, 5 m, 0), v0 = (10 m/s, -3 m/s, -8 rad/s).
    return simulate(
        BIG,
        GROUND,
        [0.0, 5.0, 0.0],
        [10.0, -3.0, -8.0],
        inertia_ratio=RATIO,
        mu=mu,
        restitution=restitution,
        dt=h,
        duration=duration,
        mass=MASS,
    )


def test_energy_conserved_without_friction_and_full_restitution() -> None:
    h = 1e-3
    sim = _throw(1.0, 0.0, h)
    energy = sim.energy()
    contact = sim.active.any(axis=1)
    assert 1 <= contact.sum() <= 10  # a few bounces, each one step
    assert np.max(np.abs(energy - energy[0])) < 1e-3 * energy[0]
    # Between impacts implicit Euler loses exactly ½ m g² h² per step (closed form).
    np.testing.assert_allclose(np.diff(energy)[~contact], -0.5 * MASS * G**2 * h**2, rtol=1e-6)


def test_energy_drops_only_at_impacts_by_the_restitution_loss() -> None:
    h, eps = 1e-3, 0.5
    sim = _throw(eps, 0.0, h, duration=1.0)
    d_energy = np.diff(sim.energy())
    contact = sim.active.any(axis=1)
    np.testing.assert_allclose(d_energy[~contact], -0.5 * MASS * G**2 * h**2, rtol=1e-6)
    # First impact: a frictionless single contact loses ½ (1 − ε²) ġ⁻² / (Nᵀ M⁻¹ N).
    k = int(np.flatnonzero(contact)[0])
    frames = contact_frames(BIG, GROUND, sim.q[k])
    n, arm = frames.normal[0], frames.arm[0]
    Ncol = np.r_[n, arm[0] * n[1] - arm[1] * n[0]]
    inv_mass = Ncol @ (Ncol / np.array([MASS, MASS, MASS * RATIO]))
    approach = Ncol @ sim.v[k]
    expected = -0.5 * (1 - eps**2) * approach**2 / inv_mass
    assert d_energy[k] == pytest.approx(expected, rel=0.02)
    assert np.all(d_energy[contact] < 1e-2 * abs(expected))  # contacts never create energy


def _max_gap_and_vx(mu: float) -> tuple[float, float, np.ndarray]:
    # Fig. 11: tangent contact q0 = (0, 1 m, 0) — y0 = b, so the gap is exactly zero — v0 = 15 m/s.
    sim = simulate(
        BIG,
        GROUND,
        [0.0, 1.0, 0.0],
        [15.0, 0.0, 0.0],
        inertia_ratio=RATIO,
        mu=mu,
        restitution=0.0,
        dt=1e-3,
        duration=1.0,
        mass=MASS,
    )
    gaps = np.array([contact_frames(BIG, GROUND, q).gap[0] for q in sim.q])
    return float(gaps.max()), float(sim.v[-1, 0]), sim.energy()


def test_sliding_ellipse_leaps_for_large_mu_and_slides_for_small_mu() -> None:
    gap_hi, _, _ = _max_gap_and_vx(0.8)
    gap_lo, vx_lo, energy_lo = _max_gap_and_vx(0.2)
    gap_0, _, energy_0 = _max_gap_and_vx(0.0)
    assert gap_hi > 0.3  # takes a leap (paper: μ ≥ 0.4)
    assert gap_lo < 1e-2 and vx_lo > 10.0  # keeps sliding (paper: μ < 0.4)
    assert np.all(np.diff(energy_lo) < 0) and energy_lo[-1] < 0.9 * energy_lo[0]  # Fig. 12
    assert gap_0 < 1e-6 and np.ptp(energy_0) < 1e-9 * energy_0[0]


def test_polygon_on_a_slope_settles_without_sinking() -> None:
    square = make_polygon(np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]))
    slope = [Line(-0.2, 0.0)]
    sim = simulate(
        square,
        slope,
        [0.0, 0.2, 0.3],
        [0.5, 0.0, 2.0],
        inertia_ratio=square.uniform_inertia_ratio(),
        mu=0.8,
        restitution=0.1,
        dt=1e-3,
        duration=1.5,
    )
    gaps = np.array([contact_frames(square, slope, q).gap.min() for q in sim.q])
    assert sim.status == "ok" and gaps.min() > -5e-3
    assert np.abs(sim.v[-100:]).max() < 0.05  # μ = 0.8 > tan 0.2: it comes to rest


def test_body_starting_inside_the_environment_is_rejected() -> None:
    with pytest.raises(InputError, match="q0.*inside surface 1"):
        simulate(
            BIG,
            GROUND,
            [0.0, 0.9, 0.0],
            [0.0, 0.0, 0.0],
            inertia_ratio=RATIO,
            mu=0.5,
            restitution=0.0,
            dt=1e-3,
            duration=0.1,
        )
    with pytest.raises(InputError, match="restitution"):
        simulate(
            BIG,
            GROUND,
            [0.0, 2.0, 0.0],
            [0.0, 0.0, 0.0],
            inertia_ratio=RATIO,
            mu=0.5,
            restitution=1.5,
            dt=1e-3,
            duration=0.1,
        )


def test_a_frame_rate_below_one_frame_per_run_is_one_error():
    """Fuzzed: --fps 1e-300 made an astronomically large stride (an IndexError traceback)."""
    from physid.errors import InputError
    from physid.impacts.poses import frame_stride

    with pytest.raises(InputError, match="below one frame"):
        frame_stride(1e-300, 5e-4)


def test_a_step_solver_failure_is_a_status_with_a_finding(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    """Lemke failing (a secondary ray) on the first contact step: the trajectory ends at that
    step, the status is numerical_failure with IM301 naming its time (the first contact step of
    the same throw simulated without the failure); ``impacts simulate`` writes the poses up to it
    and exits 3 (it was a one-line error, exit 2, nothing written)."""
    from click.testing import CliRunner

    import physid.impacts.simulator as simulator
    from physid.cli import main
    from physid.impacts.steppers import StepSolution

    clean = _drop(1e-3, "irc")
    first = int(np.flatnonzero(clean.active.any(axis=1))[0])

    def failing(data, model):  # noqa: ANN001, ANN202
        return StepSolution(data.v, np.zeros(0), np.zeros(0), np.zeros(0), False, "secondary ray")

    monkeypatch.setattr(simulator, "solve_step_lcp", failing)
    sim = _drop(1e-3, "irc")
    assert sim.status == "numerical_failure" and sim.t.size == first + 1
    (finding,) = sim.findings
    assert finding.code == "IM301" and finding.numbers["t_s"] == pytest.approx(clean.t[first])
    assert "--solver nlp" in sim.message
    np.testing.assert_array_equal(sim.q, clean.q[: first + 1])
    out = tmp_path / "poses.csv"
    result = CliRunner().invoke(
        main,
        [
            "impacts",
            "simulate",
            "--shape",
            "ellipse:1.5,1",
            "--surface",
            "line:0,0",
            "--q0",
            "0,10,0",
            "--v0",
            "0,0,0",
            "--mu",
            "0.5",
            "--restitution",
            "0",
            "--inertia-ratio",
            "0.2",
            "--duration",
            "1.45",
            "--fps",
            "100",
            "--noise",
            "0",
            "--dt",
            "1e-3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 3, result.output
    assert result.output.startswith("status: numerical_failure - step solver failed at t = ")
    assert "error IM301" in result.output
    rows = out.read_text().splitlines()
    assert rows[0] == "t,x,y,theta" and float(rows[-1].split(",")[0]) <= clean.t[first]
