"""Long recordings without holding them (issue 10 item 2): windows, chunked reductions and the
on-disk recording give what processing everything in memory gives."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.linalg

from physid.errors import InputError
from physid.files.config import EstimationConfig, FilterConfig, IdentifyConfig
from physid.offline.choose.delay import compensated
from physid.offline.observe import prediction, store, windows
from physid.offline.observe.least_squares import newey_west_covariance
from physid.offline.observe.observations import build_observations
from physid.offline.observe.prediction import predict_recording
from physid.offline.observe.preprocessing import resolve_preprocessing
from physid.offline.observe.reduced import ReductionAccumulator, reduce_observations
from physid.offline.pipeline import identify
from physid.recordings.streamed import open_recording
from physid.recordings.trajectory import Trajectory, load_trajectory, write_trajectory_csv
from physid.robot.regressor import observation_matrix
from physid.sim.arm import EXCURSION_RAD, FourierExcitation, arm6_model, true_parameters

ENCODER_RAD = 2.0 * np.pi / 2**18


def _recording(n_samples: int, jitter_s: float = 0.0, seed: int = 0) -> Trajectory:
    """The simulated six-axis arm at 1 kHz: Fourier excitation, encoder steps, 0.3 N m noise."""
    rng = np.random.default_rng(seed)
    model = arm6_model()
    theta = true_parameters(model, rng)
    excitation = FourierExcitation.random(
        rng, model.n_joints, base_frequency_hz=0.1, amplitude_rad=EXCURSION_RAD
    )
    t = np.arange(n_samples) / 1000.0 + jitter_s * rng.standard_normal(n_samples)
    q, dq, ddq = excitation(t)
    tau = observation_matrix(model, q, dq, ddq) @ theta + 0.3 * rng.standard_normal((len(t), 6))
    q = np.round(q / ENCODER_RAD) * ENCODER_RAD
    return Trajectory(t, q, tau, model.joint_names, source="simulated arm")


def _small_windows(monkeypatch) -> None:
    """Windows, prediction windows and the in-memory store far smaller than the recording."""
    monkeypatch.setattr(windows, "WINDOW_ROWS", 300)
    monkeypatch.setattr(windows, "RAW_WINDOW_SAMPLES", 7_000)
    monkeypatch.setattr(store, "MEMORY_BYTES", 0)
    monkeypatch.setattr(prediction, "DISPLAY_SAMPLES", 5_000)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(a)))


@pytest.mark.parametrize("jitter_s", [0.0, 2e-5])
def test_windowed_observations_equal_the_whole(monkeypatch, jitter_s):
    """Uniform and jittered (resampled) recordings: the windows' rows, concatenated, are the
    whole recording's observations (the filters' transients decay within the overlap)."""
    model = arm6_model()
    trajectory = _recording(30_000, jitter_s)
    options = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size).filter
    whole = build_observations(model, trajectory, options)
    monkeypatch.setattr(windows, "WINDOW_ROWS", 300)
    plan = windows.plan_recording(model, trajectory, options)
    assert plan.resample == (jitter_s > 0) and len(list(plan.owned_ranges())) > 5
    windowed = build_observations(model, trajectory, options)
    np.testing.assert_array_equal(whole.t, windowed.t)
    for name in ("W", "tau", "q", "dq"):  # measured: <= 5e-12 (ddq: 7e-11, rounding / dt^2)
        assert _relative(getattr(whole, name), getattr(windowed, name)) < 1e-10, name


def test_gravity_regressors_at_the_kept_rows_equal_the_decimated_ones():
    """The static unit-gravity regressors G(q) (tilt candidates) are built at the kept rows of
    the parallel decimation, not at the intermediate rate and filtered like W: G depends on the
    filtered positions alone, whose band the decimation filter passes with unit gain. Both ways,
    window by window (measured here: 1e-7 of G's largest entry, 26x decimation; real TX40 7e-8, KUKA
    1e-8). One intermediate row off, they differ by 8e-3."""
    from physid.offline.observe.gravity import static_gravity_regressors
    from physid.offline.observe.observations import _second_stage, observation_chunks
    from physid.offline.observe.passes import filtered_windows

    model = arm6_model()
    trajectory = _recording(20_000)
    options = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size).filter
    plan = windows.plan_recording(model, trajectory, options)
    assert plan.decimation is not None and plan.decimation.second.factor > 1
    chunks = list(observation_chunks(model, trajectory, options, gravity_regressors=True))
    decimated = [
        _second_stage(window, static_gravity_regressors(model, window.q))
        for window in filtered_windows("observations", trajectory, plan)
    ]
    assert len(chunks) == len(decimated)
    for chunk, reference in zip(chunks, decimated, strict=True):
        assert chunk.G.shape == reference.shape
        assert _relative(reference, chunk.G) < 1e-6


def test_inertial_columns_at_the_kept_rows_equal_the_decimated_ones(monkeypatch):
    """With Butterworth derivatives the inertial columns of W are built at the kept rows of the
    parallel decimation, not at every intermediate row and low-passed: they are within twice
    the states' band, which the decimation filter (3 x the derivative cut-off) passes. Against
    the columns built and filtered as paper C does: the same to 1e-5 of W's largest entry
    (measured 2.7e-7), the least-squares estimate to 1e-4 of its std (measured 2.2e-6); the
    inertial regressor evaluated at a decimation-th of the rows. Real logs, no config, the
    identification against the columns filtered: base parameters within 3e-4 of their std on
    the KUKA LWR4+ (2 -> 1), 4e-5 on the Staubli TX40, 0.028 on the xMate7p at 50 Hz. The
    Kalman smoothers' states have no band limit: built and filtered there."""
    from physid.files.config import FilterConfig
    from physid.offline.observe import observations
    from physid.offline.observe.least_squares import least_squares
    from physid.offline.observe.reduced import reduce_observations
    from physid.robot import regressor
    from physid.robot.regressor import base_parameters

    model = arm6_model()
    trajectory = _recording(20_000)
    options = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size).filter
    plan = windows.plan_recording(model, trajectory, options)
    assert observations.inertial_at_kept_rows(plan)
    evaluated = []
    inertial = observations.inertial_regressor

    def counted(model, q, dq, ddq, out=None):  # noqa: ANN001, ANN202
        evaluated.append(len(q))
        return inertial(model, q, dq, ddq, out=out)

    monkeypatch.setattr(observations, "inertial_regressor", counted)
    monkeypatch.setattr(regressor, "inertial_regressor", counted)  # observation_matrix's
    fast = build_observations(model, trajectory, options)
    rows = sum(evaluated)
    assert rows == fast.n_samples < 20_000 / 10
    monkeypatch.setattr(observations, "inertial_at_kept_rows", lambda plan: False)
    evaluated.clear()
    paper = build_observations(model, trajectory, options)
    assert sum(evaluated) > 10 * rows
    np.testing.assert_array_equal(fast.tau, paper.tau)
    assert _relative(paper.W, fast.W) < 1e-5
    columns = base_parameters(model).independent
    a, b = (least_squares(reduce_observations(o.W, o.tau), columns) for o in (paper, fast))
    assert np.max(np.abs(a.theta - b.theta) / a.std) < 1e-4
    smoothed = windows.plan_recording(model, trajectory, FilterConfig(method="irwsm2"))
    assert not observations.inertial_at_kept_rows(smoothed)


def test_chunked_reduction_equals_the_one_shot_reduction():
    """Stacking chunks under the running triangular factor gives the same normal equations."""
    rng = np.random.default_rng(1)
    W = rng.standard_normal((900, 3, 7))
    W[:, 0, 5:] = 0.0  # structurally zero columns on joint 0
    W[:400, 2, 6] = 0.0  # a column that appears only in later chunks
    tau = rng.standard_normal((900, 3))
    whole = reduce_observations(W, tau)
    total = ReductionAccumulator()
    for rows in np.array_split(np.arange(900), 7):
        total.add(W[rows], tau[rows])
    chunked = total.system()
    columns = np.arange(7)
    for system in (whole, chunked):
        assert system.n_samples == 900
    X1, u1 = whole.stacked(columns)
    X2, u2 = chunked.stacked(columns)
    np.testing.assert_allclose(X2.T @ X2, X1.T @ X1, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(X2.T @ u2, X1.T @ u1, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(chunked.tau_norm2, np.sum(tau**2, axis=0), rtol=1e-13)
    np.testing.assert_array_equal(chunked.acting(columns), [5, 7, 7])


@pytest.mark.parametrize("block_columns", [5, 64])
def test_newey_west_in_column_blocks_equals_the_lag_sum(monkeypatch, block_columns):
    """The windowed-convolution evaluation, in blocks of 5 columns (8 blocks) or all at once,
    against the Bartlett-weighted lag sum written out."""
    from physid.offline.observe import least_squares

    monkeypatch.setattr(least_squares, "_SMOOTHED_BYTES", 8 * 3000 * block_columns)
    rng = np.random.default_rng(2)
    noise = rng.standard_normal((3000, 2))
    residual = noise + 0.8 * np.roll(noise, 1, axis=0)  # MA(1): serially correlated
    scores = rng.standard_normal((3000, 37)) * residual[:, :1]
    covariance, lags = newey_west_covariance(scores, residual, np.eye(37))
    omega = scores.T @ scores
    for lag in range(1, lags + 1):
        gamma = scores[lag:].T @ scores[:-lag]
        omega += (1.0 - lag / (lags + 1.0)) * (gamma + gamma.T)
    assert lags > 2
    np.testing.assert_allclose(covariance, omega, rtol=1e-9, atol=1e-9 * np.abs(omega).max())


def test_a_streamed_file_identifies_as_in_memory(tmp_path, monkeypatch):
    """The same CSV read in memory and streamed (blocks of 3,000 rows, windows of 300
    intermediate rows, observations spilled to disk): the least-squares estimate and its
    standard deviations agree to 1e-9 (the robust ones, which hold the jackknife of the
    consistent fit, too: measured 1.7e-11), the physically consistent estimate to 1e-7 of its
    standard deviation (measured 6e-10: the solver's point polished to the optimum; 3.5e-4
    before, the solver's tolerance), and the raw-torque errors to 1e-9."""
    path = write_trajectory_csv(tmp_path / "arm.csv", _recording(30_000))
    model = arm6_model()
    trajectory = load_trajectory(path, model)
    # The cut-off and the gravity direction fixed (their cross-validated choice runs the same
    # windowed code once per candidate: the test needs it once); the deadband stays automatic.
    cutoff = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size).filter
    config = replace(
        IdentifyConfig(),
        filter=FilterConfig(butterworth_cutoff_hz=cutoff.butterworth_cutoff_hz),
        estimation=replace(EstimationConfig(), estimate_gravity_direction=False),
    )
    a = identify(model, [trajectory], config)  # one window, all in memory
    _small_windows(monkeypatch)
    streamed = open_recording(path, model, block_rows=3_000)
    assert len(streamed.block_starts) == 11
    b = identify(model, [streamed], config)
    assert a.status == b.status == "ok"
    assert _relative(a.least_squares.theta, b.least_squares.theta) < 1e-9
    assert _relative(a.base_std, b.base_std) < 1e-9
    robust_a, robust_b = np.nan_to_num(a.base_std_robust), np.nan_to_num(b.base_std_robust)
    assert _relative(robust_a, robust_b) < 1e-9
    np.testing.assert_array_equal(a.model.coulomb_deadband, b.model.coulomb_deadband)
    assert np.max(np.abs(a.theta - b.theta) / a.theta_std) < 1e-7
    assert b.train.relative_error == pytest.approx(a.train.relative_error, rel=1e-9)
    assert b.train.n_samples == a.train.n_samples == 30_000
    assert len(b.train_fits[0].t) <= 5_000  # figures get every k-th sample
    assert b.train_fits[0].metrics.n_samples == 30_000


def test_a_streamed_file_validates_as_in_memory(tmp_path, monkeypatch):
    """Prediction at every recorded sample (jittered: derivatives on the uniform grid and
    interpolated back) gives the same errors from the file on disk."""
    path = write_trajectory_csv(tmp_path / "arm.csv", _recording(40_000, jitter_s=2e-5))
    model = arm6_model()
    trajectory = load_trajectory(path, model)
    options = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size).filter
    theta = true_parameters(model, np.random.default_rng(0))
    a = predict_recording(model, trajectory, options, theta).metrics  # one window
    _small_windows(monkeypatch)
    b = predict_recording(model, open_recording(path, model, block_rows=5_000), options, theta)
    assert b.display_every > 1
    assert b.metrics.relative_error == pytest.approx(a.relative_error, rel=1e-9)
    np.testing.assert_allclose(b.metrics.rmse, a.rmse, rtol=1e-9)
    # validate's checks of the data read a streamed file through its preview (they crashed)
    from physid.offline.checks.suspect import suspect_reasons
    from physid.recordings.streamed import preview

    streamed = open_recording(path, model, block_rows=5_000)
    assert suspect_reasons(model, [preview(streamed)]) == suspect_reasons(model, [trajectory])


def test_a_strided_read_of_a_streamed_file_holds_only_its_rows(tmp_path):
    """``q[a:b:k]`` of a file left on disk equals the in-memory rows and owns them: a strided
    view would keep all ``b - a`` rows read alive (the rest and fold finders read every 50th
    row of a 1e7-sample file in blocks: 480 MB held for 9.6 MB of positions)."""
    path = write_trajectory_csv(tmp_path / "arm.csv", _recording(3_000))
    model = arm6_model()
    streamed = open_recording(path, model, block_rows=500)
    rows = streamed.q[120:2_900:7]
    np.testing.assert_array_equal(rows, load_trajectory(path, model).q[120:2_900:7])
    assert rows.base is None or rows.base.nbytes == rows.nbytes


@pytest.mark.parametrize("delay_s", [0.0374, -0.0121])
def test_a_streamed_file_reads_its_torque_later_as_in_memory(tmp_path, delay_s):
    """A torque delay compensated in a file left on disk (blocks of 500 rows) gives, row range
    by row range, exactly the in-memory compensation (same kept rows, same interpolation,
    across block boundaries); two delays add."""
    path = write_trajectory_csv(tmp_path / "arm.csv", _recording(3_000, jitter_s=2e-5))
    model = arm6_model()
    whole = load_trajectory(path, model)
    streamed = open_recording(path, model, block_rows=500)
    expected = compensated(whole, delay_s)
    late = compensated(streamed, delay_s)
    assert late.n_samples == expected.n_samples < whole.n_samples
    np.testing.assert_array_equal(late.in_memory().t, expected.t)
    np.testing.assert_array_equal(late.in_memory().q, expected.q)
    np.testing.assert_allclose(late.in_memory().tau, expected.tau, rtol=0, atol=1e-12)
    part = late.time_slice(480, 1_530)  # three blocks
    np.testing.assert_allclose(part.tau, expected.tau[480:1_530], rtol=0, atol=1e-12)
    twice = compensated(compensated(streamed.part(100, 2_900), 0.01), delay_s).in_memory()
    once = compensated(whole, 0.01 + delay_s)
    assert np.isin(twice.t, once.t).all()
    np.testing.assert_allclose(twice.tau, once.tau[np.isin(once.t, twice.t)], rtol=0, atol=1e-12)


def test_streamed_reading_names_rows_of_the_whole_file(tmp_path):
    """Errors found in a later block name the file's own row and line, and the time check runs
    over the whole file (a step back across a block boundary)."""
    model = arm6_model()
    path = write_trajectory_csv(tmp_path / "arm.csv", _recording(2_000))
    lines = path.read_text().splitlines()
    bad_cell = lines.copy()
    bad_cell[1501] = bad_cell[1501].replace(",", ",x", 1)
    (tmp_path / "cell.csv").write_text("\n".join(bad_cell) + "\n")
    with pytest.raises(InputError, match=r"row 1501 \(line 1502\)"):
        open_recording(tmp_path / "cell.csv", model, block_rows=500)
    step_back = lines.copy()
    cells = step_back[1001].split(",")
    cells[0] = "0.5"
    step_back[1001] = ",".join(cells)
    (tmp_path / "time.csv").write_text("\n".join(step_back) + "\n")
    with pytest.raises(InputError, match="not strictly increasing at row 1001"):
        open_recording(tmp_path / "time.csv", model, block_rows=500)
    header, *rows = lines
    zero = [",".join(r.split(",")[:7] + ["0"] * 6) for r in rows]
    (tmp_path / "zero.csv").write_text("\n".join([header, *zero]) + "\n")
    with pytest.raises(InputError, match="every torque is zero"):
        open_recording(tmp_path / "zero.csv", model, block_rows=500)


def test_the_chunked_reduction_handles_a_rank_one_chunk():
    """A chunk with fewer rows than columns (the last window of a recording) is absorbed."""
    rng = np.random.default_rng(3)
    W, tau = rng.standard_normal((50, 1, 6)), rng.standard_normal((50, 1))
    total = ReductionAccumulator()
    total.add(W[:48], tau[:48])
    total.add(W[48:], tau[48:])
    R_whole = scipy.linalg.qr(np.column_stack([W[:, 0], tau]), mode="r")[0][:7]
    R_chunked = np.column_stack([total.system().R[0], total.system().z[0]])
    np.testing.assert_allclose(np.abs(R_chunked), np.abs(R_whole), rtol=1e-10, atol=1e-12)


def test_a_killed_runs_spilled_recording_is_removed_by_the_next(tmp_path, monkeypatch):
    """The folder of a process that no longer exists goes; a live process's stays."""
    import os
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / "physid-recording-999999999-dead"  # no such pid
    live = tmp_path / f"physid-recording-{os.getpid()}-live"
    for folder in (stale, live):
        folder.mkdir()
        (folder / "block_0_q.npy").write_bytes(b"x")
    path = write_trajectory_csv(tmp_path / "arm.csv", _recording(3_000))
    recording = open_recording(path, arm6_model(), block_rows=1_000)
    assert not stale.exists() and live.exists()
    assert recording.spill.folder.parent == tmp_path


def test_a_store_view_keeps_what_is_read_again_and_gives_it_back_when_dropped():
    """A chain of views keeps the transformed chunks of the view read (its parent, read only
    through it, keeps none), within the budget, and a dropped view's bytes return to it: the
    views of rejected candidates must not stop the chosen ones from keeping theirs."""
    import gc

    from physid.offline.observe.observations import Observations

    calls = {"outer": 0}

    def outer(chunk: Observations) -> Observations:
        calls["outer"] += 1
        return replace(chunk, W=2.0 * chunk.W)

    kept = store.ObservationStore()
    rows = np.arange(50.0)
    chunk = Observations(rows, np.ones((50, 2, 3)), np.ones((50, 2)), *(np.ones((50, 2)),) * 3, {})
    for recording in (0, 1):
        kept.append(chunk, recording)
    inner = kept.mapped(lambda c: replace(c, W=c.W + 1.0))
    view = inner.mapped(outer)
    for _ in range(3):
        assert [float(c.W[0, 0, 0]) for c in view] == [4.0, 4.0]
    assert calls["outer"] == 2  # transformed once per chunk, then read from what it keeps
    assert inner._kept == {} and len(view._kept) == 2
    assert kept._chunks.kept_bytes == 2 * store._bytes(view._kept[0]) > 0
    del view
    gc.collect()
    assert kept._chunks.kept_bytes == 0
