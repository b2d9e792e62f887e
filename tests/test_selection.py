"""Blocked cross-validation (offline.folds, crossval, selection, choices; issue 24 item 2)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ONE_JOINT_PENDULUM

from physid.files.config import parse_config
from physid.offline.choose.selection import choose
from physid.offline.observe.crossval import CVScore
from physid.offline.observe.folds import FoldAccumulator, FoldPlan, combine, leave_out
from physid.offline.observe.reduced import reduce_observations
from physid.offline.pipeline import identify


def _score(label: str, folds: list[float]) -> CVScore:
    errors = np.array(folds)
    return CVScore(label, errors, float(np.sqrt(np.mean(errors**2))))


def test_a_candidate_must_beat_the_conservative_one_by_more_than_the_folds_spread():
    conservative = _score("10 x", [0.050, 0.040, 0.060, 0.050])
    consistent = _score("5 x", [0.045, 0.036, 0.055, 0.046])  # better on every fold
    erratic = _score("20 x", [0.010, 0.041, 0.061, 0.051])  # one lucky fold
    chosen = choose("cut-off", [conservative, consistent])
    assert chosen.label == "5 x" and "better" in chosen.reason
    kept = choose("cut-off", [conservative, erratic])
    assert erratic.total < conservative.total  # the lowest total...
    assert kept.label == "10 x" and "spread" in kept.reason  # ...loses: one fold carries it
    assert "(conservative)" in kept.note() and "20 x" in kept.note()
    assert choose("cut-off", [consistent, conservative], conservative=1).label == "5 x"


def test_fold_systems_combine_into_the_whole_reduction_exactly():
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 10.0, 400)
    W = rng.standard_normal((400, 3, 5))
    W[:, 0, 4] = 0.0  # a structurally zero column on one joint
    tau = rng.standard_normal((400, 3))
    extras = rng.standard_normal((400, 3, 2))
    plan = FoldPlan.of([type("R", (), {"t": t})()], n_folds=4)
    assert np.array_equal(np.bincount(plan.fold(0, t)), [100, 100, 100, 100])
    folds = FoldAccumulator(plan)
    for rows in np.array_split(np.arange(400), 7):  # chunks that straddle fold boundaries
        folds.add(0, t[rows], W[rows], tau[rows], extras[rows])
    systems = folds.systems()
    whole = reduce_observations(W, tau, extras)
    combined = combine(systems)
    gram = lambda s: np.einsum("jri,jrk->jik", s.R, s.R)  # noqa: E731
    assert np.allclose(gram(combined), gram(whole), atol=1e-10)
    assert np.allclose(np.einsum("jri,jr->ji", combined.R, combined.z),
                       np.einsum("jri,jr->ji", whole.R, whole.z), atol=1e-10)  # fmt: skip
    # leaving fold 2 out is the reduction of the other rows, on the standard columns
    others = plan.fold(0, t) != 2
    expected = reduce_observations(W[others], tau[others])
    left = leave_out(systems, 2)
    assert left.R.shape[2] == 5 and left.n_samples == 300
    assert np.allclose(gram(left), gram(expected), atol=1e-10)
    theta = rng.standard_normal(5)
    assert np.allclose(left.joint_residual2(np.arange(5), theta),
                       np.sum((tau[others] - W[others] @ theta) ** 2, axis=0))  # fmt: skip


@pytest.fixture(scope="module")
def demo_identification(arm_experiment):
    model = arm_experiment.model
    return identify(model, [arm_experiment.train.recorded], parse_config({}),
                    validation=[arm_experiment.validation.recorded])  # fmt: skip


def test_identify_records_every_choice_with_its_fold_scores(demo_identification):
    result = demo_identification
    whats = [choice.what for choice in result.choices.scored]
    assert whats[:2] == ["Butterworth cut-off", "Coulomb deadband"]
    assert "gravity direction" in whats
    cutoff = result.choices.scored[0]
    assert len(cutoff.scores) >= 3 and all(len(s.fold_errors) == 4 for s in cutoff.scores)
    assert cutoff.label == f"{result.preprocessing.filter.butterworth_cutoff_hz:.3g} Hz"
    assert result.preprocessing.cutoff_note.startswith("Butterworth cut-off:")
    assert any(f.code == "ID101" and f.message == cutoff.note() for f in result.findings)
    # level simulated data: no tilt (issue 28 item 4: the demo reported -0.84 / +1.33 deg)
    assert result.gravity is None
    check = result.prior_check
    assert check.better_than_urdf and check.identified.total < check.urdf.total
    assert check.identified.total <= check.ols.total * 1.02


def test_data_chosen_defaults_are_not_worse_than_paper_c_rules(arm_experiment,
                                                               demo_identification):  # fmt: skip
    """On the demo arm (held-out fresh excitation) the chosen preprocessing is no worse than
    the conservative one fitted directly. Measured: equal (the conservative wins)."""
    model = arm_experiment.model
    cutoff = demo_identification.choices.scored[0].scores[0].label  # the conservative candidate
    conservative = identify(
        model,
        [arm_experiment.train.recorded],
        parse_config(
            {
                "filter": {"butterworth_cutoff_hz": float(cutoff.split()[0])},
                "coulomb_deadband": 0,
                "estimation": {"estimate_gravity_direction": False},
            }
        ),  # fmt: skip
        validation=[arm_experiment.validation.recorded],
    )
    chosen = demo_identification.validation.relative_error
    assert chosen <= 1.02 * conservative.validation.relative_error


def test_a_pendulum_s_free_gravity_direction_is_not_a_levelling_error(tmp_path):
    """One joint about a horizontal axis: a tilt about that axis is the centre of mass's angle,
    one about the other horizontal axis turns gravity along the axis; the estimate read "tilt
    90.0, -106.6 deg (std 0.014, 337 deg), more than a levelling error" in a warning. The URDF's
    gravity is kept and said to be the data's only determined answer; the pendulum itself is
    identified (mass 1.5 kg at 0.2 m, viscous 0.1, Coulomb 0.3)."""
    import pinocchio as pin

    from physid.workflows import run_identify

    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(ONE_JOINT_PENDULUM, encoding="utf-8")
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    rng = np.random.default_rng(1)
    t = np.arange(10_000) / 500.0
    w, phase = rng.uniform(0.3, 1.2, 3), rng.uniform(0.0, 6.0, 3)
    q = 0.4 * np.sin(np.outer(t, w) + phase).sum(axis=1)
    dq = 0.4 * (w * np.cos(np.outer(t, w) + phase)).sum(axis=1)
    ddq = -0.4 * (w**2 * np.sin(np.outer(t, w) + phase)).sum(axis=1)
    states = zip(q[:, None], dq[:, None], ddq[:, None], strict=True)
    tau = np.array([pin.rnea(model, data, *x)[0] for x in states])
    tau += 0.1 * dq + 0.3 * np.tanh(dq / 0.01) + rng.normal(0.0, 0.02, t.size)
    csv = tmp_path / "pendulum.csv"
    np.savetxt(csv, np.column_stack([t, q, tau]), delimiter=",", header="t,q_hinge,tau_hinge",
               comments="")  # fmt: skip
    result = run_identify(urdf, [csv])
    (note,) = [n for n in result.preprocessing.notes if n.startswith("gravity direction")]
    assert "the URDF's: the data do not determine a tilt" in note, note
    assert not any("levelling error" in w for w in result.warnings)
    body = result.theta[result.model.layout.body_slice("hinge")]
    assert body[0] == pytest.approx(1.5, rel=0.01)
    assert body[1] / body[0] == pytest.approx(0.2, rel=0.01)


def _stops(seconds_moving: list[float], seconds_still: list[float], rate_hz: float = 100.0,
           still_noise: float = 1e-5):  # fmt: skip
    """A two-joint recording (t, q) at ``rate_hz``: moving and still stretches in turn, the
    second joint never moving (its sensor's noise only, std ``still_noise``)."""
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    speeds = []
    for moving, still in zip(seconds_moving, seconds_still, strict=True):
        n = int(moving * rate_hz)
        bump = np.sin(np.linspace(0.0, np.pi, n)) * rng.uniform(0.5, 1.5)
        speeds += [bump, np.zeros(int(still * rate_hz))]
    speed = np.concatenate(speeds)
    t = np.arange(len(speed)) / rate_hz
    q = np.column_stack([np.cumsum(speed) / rate_hz, still_noise * rng.standard_normal(len(t))])
    return SimpleNamespace(t=t, q=q)


def test_rests_are_the_stops_of_half_a_second_or_more_read_from_the_positions():
    from physid.offline.observe.crossval import rest_intervals

    recording = _stops([3.0, 3.0, 3.0], [1.0, 0.2, 2.0])  # stops of 1 s, 0.2 s (a turn), 2 s
    rests = rest_intervals(recording)
    assert len(rests) == 2
    # the stops lie at 3-4 s and 10.2-12.2 s (the 0.2 s one at 7 s is not a rest); the speed
    # read over 0.25 s and the slow ends of each move blur their edges by a few samples
    np.testing.assert_allclose(rests, [[3.0, 4.0], [10.2, 12.2]], atol=0.1)
    static_poses = _stops([1.0, 1.0], [3.0, 3.0])  # mostly at rest: every row scored
    assert len(rest_intervals(static_poses)) == 0


def test_a_still_joint_whose_noise_spans_more_than_the_still_bound_hides_no_rest():
    """A joint that never moves, read by a noisy sensor (0.3 mrad: it spans about 2 mrad, above
    the 1 mrad still bound) or a 12-bit encoder toggling between two ticks (1.5 mrad), has a
    speed that is noise, never below 5 % of its own RMS: counted as moving, it hid every rest
    (a real UR10e run with one still joint given that noise: 11 s of rests before, none)."""
    from physid.offline.observe.crossval import rest_intervals

    noisy = _stops([3.0, 3.0, 3.0], [1.0, 0.2, 2.0], still_noise=3e-4)
    assert np.ptp(noisy.q[:, 1]) > 1e-3
    np.testing.assert_allclose(rest_intervals(noisy), [[3.0, 4.0], [10.2, 12.2]], atol=0.1)
    tick = 2 * np.pi / 4096
    toggling = _stops([3.0, 3.0, 3.0], [1.0, 0.2, 2.0])
    toggling.q[:, 1] = tick * (np.random.default_rng(4).uniform(size=len(toggling.t)) < 0.3)
    np.testing.assert_allclose(rest_intervals(toggling), [[3.0, 4.0], [10.2, 12.2]], atol=0.1)


def test_rows_at_rest_are_not_scored(tmp_path):
    from physid.offline.observe.crossval import RawRows, cv_score
    from physid.robot.model import robot_from_urdf

    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(ONE_JOINT_PENDULUM, encoding="utf-8")
    model = robot_from_urdf(urdf)
    theta = np.zeros(model.layout.size)
    theta[model.layout.mass_indices] = 1.5  # any model: the torques below are its predictions
    rng = np.random.default_rng(1)
    dq = np.r_[rng.uniform(0.5, 2.0, 300), rng.uniform(-0.01, 0.01, 100)][:, None]
    q, ddq = rng.uniform(-1.0, 1.0, dq.shape), rng.standard_normal(dq.shape)
    rows = RawRows(q, dq, ddq, np.zeros_like(q))
    held = np.where(np.abs(dq) < 0.05, 5.0, 0.0)  # what static friction holds at rest
    measured = rows.regressor(model) @ theta + held
    scored = RawRows(q, dq, ddq, measured, np.abs(dq[:, 0]) >= 0.05)
    fit = lambda _system: theta  # noqa: E731
    assert cv_score("model", model, None, [scored], fit).total == pytest.approx(0.0, abs=1e-12)
    everything = RawRows(q, dq, ddq, measured)
    assert cv_score("model", model, None, [everything], fit).total > 0.1  # the rest's 5 N m


def test_recorded_velocities_and_accelerations_are_a_candidate_the_folds_may_choose(
    arm_experiment, demo_identification
):
    """A simulator logs its exact qvel and qacc: with ``dq_`` and ``ddq_`` columns in every
    training and held-out recording they join the cut-off candidates (method ``given``, no
    filter) and the folds choose. The demo arm at 100 Hz with its true derivatives: the
    recorded ones win the folds (by 0.053 points, spread 0.026) and predict the held-out run
    better than the filtered positions of the same rows (2.95 against 2.99 %). Without them no
    such candidate is offered, nor when a held-out recording lacks them (the fit must predict
    it). A MuJoCo Panda at 500 Hz so logged: chosen,
    1.94 against 3.79 % on the folds."""
    from dataclasses import replace

    def every_tenth(simulation, derivatives: bool):
        rows = slice(None, None, 10)
        recorded = simulation.recorded.rows(rows)
        if not derivatives:
            return recorded
        return replace(recorded, dq=simulation.dq[rows], ddq=simulation.ddq[rows])

    def fit(derivatives: bool, held_out_derivatives: bool):
        train = every_tenth(arm_experiment.train, derivatives)
        held_out = every_tenth(arm_experiment.validation, held_out_derivatives)
        return identify(arm_experiment.model, [train], parse_config({}), validation=[held_out])

    result = fit(True, True)
    cutoff = result.choices.scored[0]
    labels = [s.label for s in cutoff.scores]
    assert labels[-1] == "recorded dq_, ddq_ (no filter)" and len(labels) >= 3
    assert cutoff.label == labels[-1], cutoff.note()
    assert result.preprocessing.filter.method == "given"
    # the Coulomb deadband is still the folds' to choose: recorded velocities have no noise
    # estimate, so the candidates are the fractions of the RMS speed alone
    deadband = result.choices.scored[1]
    assert deadband.what == "Coulomb deadband" and len(deadband.scores) == 5
    filtered = fit(False, False)
    assert not any("recorded" in s.label for s in filtered.choices.scored[0].scores)
    assert result.validation.relative_error < filtered.validation.relative_error
    assert not any("recorded" in s.label for s in fit(True, False).choices.scored[0].scores)
    assert not any("recorded" in s.label for s in demo_identification.choices.scored[0].scores)


def test_a_fit_at_the_urdf_s_noise_floor_is_not_worse_than_the_urdf():
    """Where the URDF is the simulator's own model both sit at the noise floor: a PyBullet Panda
    (clean log, 240 Hz) scored 0.406913 % against the URDF's 0.406908 % on the folds and was
    called worse than the URDF, on three of six noise draws. Within URDF_TIE it is a tie; 5 %
    worse is not, and the note no longer says a tighter prior "got there" when it did not."""
    from physid.offline.choose.against_prior import URDF_TIE, PriorCheck, as_good_as

    def score(label: str, total: float) -> CVScore:
        return CVScore(label, np.full(4, total), total)

    urdf, ols = score("URDF", 0.00406908), score("OLS", 0.00406951)
    tie = PriorCheck(score("1", 0.00406913), urdf, ols, 1.0, (score("1", 0.00406913),))
    assert tie.better_than_urdf and tie.findings() == []
    assert as_good_as(score("x", URDF_TIE * 0.00406908), urdf)
    tried = (score("1", 0.0043), score("0.3", 0.00428), score("0.1", 0.00427))
    worse = PriorCheck(tried[-1], urdf, ols, 0.1, tried)
    assert not worse.better_than_urdf
    assert "still worse" in worse.note() and "to get there" not in worse.note()
    assert worse.findings()[0].message.startswith(
        "the identified model predicts the training folds worse"
    )


def test_worse_held_out_after_better_folds_is_not_blamed_on_short_training():
    """A PyBullet Panda with the simulator's link drag (which the model lacks) beat the URDF on
    its training folds (0.430 vs 0.482 %) and lost to it held out (0.827 vs 0.692 %): the
    warning said the training was too short. It now gives both comparisons and names what does
    not carry over; without the folds' verdict the old explanation stands."""
    from physid.offline.choose.against_prior import PriorCheck
    from physid.offline.observe.metrics import FitMetrics
    from physid.offline.stages.judge import worse_held_out

    def worse_than_urdf_held_out(identified, urdf, check):  # noqa: ANN001, ANN202
        metrics = FitMetrics(identified, np.ones(1), 1, np.ones(1))
        return worse_held_out(metrics, urdf, check).message

    def score(label: str, total: float) -> CVScore:
        return CVScore(label, np.full(4, total), total)

    folds = PriorCheck(score("1", 0.00430), score("URDF", 0.00482), score("OLS", 0.0044), 1.0,
                       (score("1", 0.00430),))  # fmt: skip
    warning = worse_than_urdf_held_out(0.00827, 0.00692, folds)
    assert "(0.827 % vs 0.692 % raw torque error)" in warning
    assert "on the training folds it predicted better (0.43 % vs 0.482 %)" in warning
    assert "too short" not in warning and "an effect the model lacks" in warning
    tie = PriorCheck(score("1", 0.00481), score("URDF", 0.00482), score("OLS", 0.0044), 1.0,
                     (score("1", 0.00481),))  # fmt: skip
    for check in (tie, None):
        assert "too short" in worse_than_urdf_held_out(0.00827, 0.00692, check)
