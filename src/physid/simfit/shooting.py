"""Multiple shooting through MuJoCo's batched ``rollout`` (the residuals of :mod:`.problem`).

Decision variables ``z = [x, d_1, ..., d_W]``: the tuned parameters ``x`` (:class:`Parameters`)
and, per window ``w``, the offsets ``d_w = (dq, dv)`` of its initial position and velocity from
the recorded position and the Savitzky-Golay velocity. Residuals, all divided by the position
noise: for every window, the simulated minus recorded position at each recorded sample in it,
and the initial position offset itself (the first sample is a measurement too); plus a weak
prior ``(x - x0) / s`` that keeps a parameter the motion cannot reveal at its starting value
(and says so through its standard deviation). Window offsets touch only their own window's
residuals: the Jacobian's sparsity lets finite differences perturb every window at once, so one
evaluation of the Jacobian costs ``len(x) + 2 n`` batched rollouts (:meth:`Shooting.jacobian`,
in the block form :mod:`physid.numerics.condensed_lm` condenses; the nominal rollout is the
point's own).
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import numpy as np

from physid.errors import InputError
from physid.files.io import quiet_stderr
from physid.numerics.condensed_lm import Blocks, solve
from physid.simfit.problem import Parameters, Run, windows

# Relative finite-difference step: MuJoCo's iterative constraint solver (frictionloss, limits)
# leaves ~1e-10 noise in a state, which SciPy's default 1.5e-8 step turns into Jacobian errors
# that cost the fit about twice the evaluations; 1e-5 stays well above that noise.
DIFF_STEP = 1e-5
TOLERANCE = 1e-6  # the solver's ftol and xtol, for the fit and the held-out scorer alike
PRIOR_RELATIVE = 3.0  # prior std of a parameter: this many times its start value (or scale)
PRIOR_FLOOR = {
    "damping": 0.1,
    "armature": 0.01,
    "frictionloss": 0.1,
    "delay": 0.01,
    "kp": 1.0,
    "kv": 0.1,
    "gain": 0.1,
}


class Shooting:
    """The windows of one run on one model, and the residual of any ``z``."""

    def __init__(
        self,
        model,
        runs: list[Run],
        parameters: Parameters,
        window_s: float,
        noise: np.ndarray,
        dofs: np.ndarray,
        qpos: np.ndarray,
        stride: int = 1,
    ) -> None:
        import mujoco

        self.mujoco = mujoco
        self.model = model
        self.runs, self.parameters = runs, parameters
        self.dofs, self.qpos = dofs, qpos
        self.noise = noise
        self.h = float(model.opt.timestep)
        self.windows = [
            (r, a, b) for r, run in enumerate(runs) for a, b in windows(run.t, window_s)
        ][::stride]
        if not self.windows:
            raise InputError(
                f"the recordings are shorter than one {window_s:g} s window (is t in seconds?)"
            )
        self.velocities = [run.velocity() for run in runs]
        spans = [runs[r].t[b] - runs[r].t[a] for r, a, b in self.windows]
        self.nstep = int(np.ceil(max(spans) / self.h)) + 1
        self.spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
        data = mujoco.MjData(model)
        mujoco.mj_resetData(model, data)
        self.template = np.zeros(mujoco.mj_stateSize(model, self.spec))
        mujoco.mj_getState(model, data, self.template, self.spec)
        self.datas = [mujoco.MjData(model)]
        self.x0 = parameters.values(model, dofs)
        kinds = [name.rsplit(".", 1)[-1] for name in parameters.names]
        self.prior_std = np.maximum(
            PRIOR_RELATIVE * np.abs(self.x0), [PRIOR_FLOOR[k] for k in kinds]
        )
        self.n_global = len(self.x0)
        self.n_state = 2 * len(dofs)
        self._precompute()
        self._controls_cache: dict[float, np.ndarray] = {}

    def _precompute(self) -> None:
        """Per window, zero-padded to the longest: the recorded positions after the start,
        the model step each falls in and its linear-interpolation weight (the residual's
        ``np.interp`` onto the step grid, as index arithmetic), and the starting state."""
        grid = self.h * np.arange(self.nstep + 1)
        longest = max(b - a for _, a, b in self.windows)
        n, count = len(self.dofs), len(self.windows)
        self.step_index = np.zeros((count, longest), dtype=int)
        self.weight = np.zeros((count, longest))
        self.measured = np.zeros((count, longest, n))
        self.valid = np.zeros((count, longest), dtype=bool)
        self.q_start = np.array([self.runs[r].q[a] for r, a, _ in self.windows])
        self.v_start = np.array([self.velocities[r][a] for r, a, _ in self.windows])
        for w, (r, a, b) in enumerate(self.windows):
            times = self.runs[r].t[a + 1 : b + 1] - self.runs[r].t[a]
            k = np.clip(np.searchsorted(grid, times, side="right") - 1, 0, self.nstep - 1)
            self.step_index[w, : b - a] = k
            self.weight[w, : b - a] = np.clip((times - grid[k]) / (grid[k + 1] - grid[k]), 0, 1)
            self.measured[w, : b - a] = self.runs[r].q[a + 1 : b + 1]
            self.valid[w, : b - a] = True

    @property
    def size(self) -> int:
        return self.n_global + len(self.windows) * self.n_state

    @property
    def residual_count(self) -> int:
        """Rows of the residual (:meth:`blocks` unpadded): every window's positions and start,
        and the prior."""
        n = len(self.dofs)
        return sum((b - a) * n + n for _, a, b in self.windows) + self.n_global

    @property
    def driven(self) -> bool:
        """Whether the runs drive the model's actuators (``ctrl``) rather than the joints."""
        return self.runs[0].ctrl is not None

    @functools.cached_property
    def touches(self) -> bool:
        """Whether any contact can arise in the model (its geometry is not tuned: once)."""
        from physid.robot.collisions import can_touch

        return can_touch(self.model)

    def _controls(self, delay_s: float) -> np.ndarray:
        """qfrc_applied (W, nstep, nv), or the actuators' ctrl (W, nstep, nu) for driven runs,
        at every step of every window: the logged command ``delay_s`` earlier. A logged torque
        is a measurement: linearly interpolated. A ``ctrl_`` command is held from one sample to
        the next, as a servo holds its target (:func:`held_step_means`). Both are held at the
        ends."""
        if delay_s in self._controls_cache:
            return self._controls_cache[delay_s]
        if len(self._controls_cache) > 4:  # the delay of the current point and its FD step
            self._controls_cache.clear()
        width = self.model.nu if self.driven else self.model.nv
        out = np.zeros((len(self.windows), self.nstep, width))
        for w, (r, a, _) in enumerate(self.windows):
            run = self.runs[r]
            times = run.t[a] + self.h * np.arange(self.nstep) - delay_s
            if self.driven:  # the samples the window's steps hold: not the whole run's
                first = max(int(np.searchsorted(run.t, times[0], side="right")) - 1, 0)
                last = int(np.searchsorted(run.t, times[-1] + self.h, side="right"))
                out[w] = held_step_means(run.t[first:last], run.ctrl[first:last], times, self.h)
            else:
                for k, dof in enumerate(self.dofs):
                    out[w, :, dof] = np.interp(times, run.t, run.tau[:, k])
        self._controls_cache[delay_s] = out
        return out

    def simulate(self, x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Simulated joint positions (W, nstep + 1, n) from each window's start, under ``x``."""
        from mujoco import rollout

        delay = self.parameters.apply(self.model, self.dofs, x)
        states = np.tile(self.template, (len(self.windows), 1))
        n = len(self.dofs)
        states[:, 1 + self.qpos] = self.q_start + offsets[:, :n]
        states[:, 1 + self.model.nq + self.dofs] = self.v_start + offsets[:, n:]
        control = self._controls(delay)
        kind = "mjSTATE_CTRL" if self.driven else "mjSTATE_QFRC_APPLIED"
        spec = int(getattr(self.mujoco.mjtState, kind))
        flags = simulation_flags(self.model, self.driven, self.touches)
        with quiet_stderr(), flags:  # MuJoCo's instability
            result, _ = rollout.rollout(  # warnings: counted (unstable_steps) instead
                self.model, self.datas, states, control, control_spec=spec, nstep=self.nstep
            )
        trajectory = result[:, :, 1 + self.qpos]
        first = states[:, None, 1 + self.qpos]
        return np.concatenate([first, trajectory], axis=1)

    def unstable_steps(self) -> int:
        """How often MuJoCo found a non-finite or huge acceleration and reset the state (its
        mjWARN_BADQACC) in the rollouts so far."""
        bad = int(self.mujoco.mjtWarning.mjWARN_BADQACC)
        return sum(int(data.warning[bad].number) for data in self.datas)

    def blocks(self, x: np.ndarray, offsets: np.ndarray) -> Blocks:
        """The residual of ``(x, offsets)`` per window (W, R: the positions after the start,
        zero-padded, then the start's offset) and the prior's (:meth:`residual`'s terms)."""
        simulated = self.simulate(x, offsets)
        rows = np.arange(len(self.windows))[:, None]
        low = simulated[rows, self.step_index]
        high = simulated[rows, self.step_index + 1]
        predicted = low + self.weight[:, :, None] * (high - low)
        error = np.where(self.valid[:, :, None], (predicted - self.measured) / self.noise, 0.0)
        n = len(self.dofs)
        r = np.concatenate(
            [error.reshape(len(self.windows), -1), offsets[:, :n] / self.noise], axis=1
        )
        return Blocks(r, (x - self.x0) / self.prior_std)

    def jacobian(
        self, x: np.ndarray, offsets: np.ndarray, at: Blocks, bounds, step: float
    ) -> Blocks:
        """``at`` with the Jacobian blocks filled by forward differences (relative ``step``,
        SciPy's rule ``step max(1, |z|)``, turned inward at a bound): one batched rollout of
        every window per parameter, one per state component (each window's offsets touch only
        its own residuals, so all windows move at once); the nominal rollout is ``at``'s. A
        parameter whose bounds coincide (fixed: the held-out scorer's delay) gets a zero column
        without a rollout: the solver never moves it."""
        lower, upper = bounds
        G = np.zeros((*at.r.shape, self.n_global))
        for k in range(self.n_global):
            if lower[k] == upper[k]:
                continue
            h = step * max(1.0, abs(x[k]))
            h = -h if x[k] + h > upper[k] else h
            moved = x.copy()
            moved[k] += h
            G[:, :, k] = (self.blocks(moved, offsets).r - at.r) / (moved[k] - x[k])
        S = np.empty((*at.r.shape, self.n_state))
        for j in range(self.n_state):
            moved = offsets.copy()
            moved[:, j] += step * np.maximum(1.0, np.abs(offsets[:, j]))
            delta = moved[:, j] - offsets[:, j]
            S[:, :, j] = (self.blocks(x, moved).r - at.r) / delta[:, None]
        self.parameters.apply(self.model, self.dofs, x)  # the model as the point says
        return Blocks(at.r, at.rp, G, S, 1.0 / self.prior_std)


def held_step_means(t: np.ndarray, values: np.ndarray, starts: np.ndarray, h: float) -> np.ndarray:
    """The mean over each model step ``[start, start + h)`` of ``values`` (N, k) held from each
    sample time ``t`` to the next (zero-order hold; the first value before ``t[0]``, the last
    after ``t[-1]``): exact for a servo that holds each target, and, unlike the held value at
    the step's start, continuous in a delay that shifts ``starts`` (its finite-difference
    derivative exists). Linear interpolation of a target held at 30 Hz leads the hold by half a
    frame, which the fit would read as a command delay that is not there."""
    steps = np.diff(t)
    # the integral of the held signal at each sample time, extended linearly beyond the ends
    integral = np.vstack(
        [np.zeros((1, values.shape[1])), np.cumsum(values[:-1] * steps[:, None], axis=0)]
    )

    def at(times: np.ndarray) -> np.ndarray:
        inside = np.column_stack(
            [np.interp(times, t, integral[:, k]) for k in range(values.shape[1])]
        )
        before = np.minimum(times - t[0], 0.0)[:, None] * values[0]
        after = np.maximum(times - t[-1], 0.0)[:, None] * values[-1]
        return inside + before + after

    return (at(starts + h) - at(starts)) / h


@contextmanager
def simulation_flags(model, driven: bool, touches: bool | None = None):  # noqa: ANN001
    """``model`` simulated as the logged runs drive it, and no slower than it must be, while
    the block runs (its flags restored after):

    - runs that log joint torques (not ``driven``) apply them as ``qfrc_applied``, so the
      model's actuators are switched off: left on with ``ctrl = 0``, a position servo (a
      Menagerie arm's ``<position>`` or affine ``<general>``) would pull every joint towards 0
      on top of the logged torque;
    - sensors never change the motion, and the fit reads positions from the state;
    - a one-tree model's constraints (joint frictionloss and limits, contacts within the
      tree) form one island whatever the state, so island discovery is pure overhead: off,
      the same rollouts bit for bit in about a tenth less CPU per step;
    - a model in which no two geoms can touch (:func:`physid.robot.collisions.can_touch`: an
      arm exported from a URDF without collision shapes) still runs MuJoCo's collision
      pipeline every step: contacts off, the same rollouts bit for bit in less CPU per step
      (``touches``: its answer, computed once per model by the caller)."""
    import mujoco

    from physid.robot.collisions import can_touch

    bits = mujoco.mjtDisableBit
    off = int(bits.mjDSBL_SENSOR)
    if not driven:
        off |= int(bits.mjDSBL_ACTUATION)
    if model.ntree <= 1:
        off |= int(bits.mjDSBL_ISLAND)  # MuJoCo >= 3.3.6 (pyproject): discovery on by default
    if not (can_touch(model) if touches is None else touches):
        off |= int(bits.mjDSBL_CONTACT)
    flags = int(model.opt.disableflags)
    model.opt.disableflags = flags | off
    try:
        yield
    finally:
        model.opt.disableflags = flags


def open_loop_error(
    model,
    runs: list[Run],
    horizon_s: float,
    dofs: np.ndarray,
    qpos: np.ndarray,
    delay_s: float = 0.0,
) -> tuple[float, np.ndarray]:
    """RMS position error (all joints, and per joint) of open-loop simulations of ``horizon_s``
    from the recorded positions and Savitzky-Golay velocities, back to back over the runs
    (``model`` as it is; the logged torque ``delay_s`` earlier)."""
    parameters = Parameters((), (), delay=True)
    shooting = Shooting(model, runs, parameters, horizon_s, np.ones(len(dofs)), dofs, qpos)
    offsets = np.zeros((len(shooting.windows), shooting.n_state))
    states = shooting.simulate(np.array([delay_s]), offsets)
    grid = shooting.h * np.arange(shooting.nstep + 1)
    errors = []
    for w, (r, a, b) in enumerate(shooting.windows):
        run = runs[r]
        times = run.t[a + 1 : b + 1] - run.t[a]
        predicted = np.column_stack(
            [np.interp(times, grid, states[w, :, k]) for k in range(len(dofs))]
        )
        errors.append(predicted - run.q[a + 1 : b + 1])
    errors = np.concatenate(errors)
    return float(np.sqrt(np.mean(errors**2))), np.sqrt(np.mean(errors**2, axis=0))


def shooting_error(
    model,
    runs: list[Run],
    window_s: float,
    noise: np.ndarray,
    dofs: np.ndarray,
    qpos: np.ndarray,
    delay_s: float = 0.0,
    max_evaluations: int = 40,
) -> tuple[float, np.ndarray]:
    """RMS position error (all joints, per joint) over windows of ``window_s`` whose initial
    states are estimated with the model held fixed: how well the model *can* follow the runs.
    Open loop, an unstable system (an arm under gravity, a controller's feedback missing from
    the model) diverges from any initial-state error within a fraction of a second, whatever
    its parameters; this error measures the model, not the divergence. The window states are
    fitted by the fit's own condensed Levenberg-Marquardt (:func:`.solver.solve`, the delay
    held by its bounds): each window is its own small problem."""
    shooting = Shooting(model, runs, Parameters((), (), delay=True), window_s, noise, dofs, qpos)
    fixed = np.array([delay_s])
    solution = solve(
        shooting.blocks,
        lambda x, d, at: shooting.jacobian(x, d, at, (fixed, fixed), DIFF_STEP),
        fixed,
        np.zeros((len(shooting.windows), shooting.n_state)),
        (fixed, fixed),
        max_nfev=max_evaluations,
        ftol=TOLERANCE,
        xtol=TOLERANCE,
        secant_steps=2,
    )
    n = len(dofs)
    positions = solution.residual[:, :-n].reshape(len(shooting.windows), -1, n) * noise
    errors = positions[shooting.valid]
    return float(np.sqrt(np.mean(errors**2))), np.sqrt(np.mean(errors**2, axis=0))
