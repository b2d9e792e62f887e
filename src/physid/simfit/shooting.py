"""Multiple shooting through MuJoCo's batched ``rollout`` (the residuals of :mod:`.problem`).

Decision variables ``z = [x, d_1, ..., d_W]``: the tuned parameters ``x`` (:class:`Parameters`)
and, per window ``w``, the offsets ``d_w = (dq, dv)`` of its initial position and velocity from
the measured position and the Savitzky-Golay velocity. Residuals, all divided by the position
noise: for every window, the simulated minus measured position at each recorded sample in it,
and the initial position offset itself (the first sample is a measurement too); plus a weak
prior ``(x - x0) / s`` that keeps a parameter the motion cannot reveal at its starting value
(and says so through its standard deviation). Window offsets touch only their own window's
residuals: the Jacobian's sparsity lets finite differences perturb every window at once, so one
evaluation of the Jacobian costs ``len(x) + 2 n`` batched rollouts.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from physid.errors import InputError
from physid.files.io import quiet_stderr
from physid.simfit.problem import Parameters, Run, windows

# The trust-region steps of the sparse problem are solved by LSMR; with SciPy's default
# tolerances those steps are inexact and the fits crawl along the flat directions (measured on
# benchmarks/simfit.py: 60 evaluations, cost still falling by 1e-6 per step, not converged;
# with these, 12-21 evaluations to a lower cost and parameter errors below 3 %)
EXACT_STEPS = {"atol": 1e-12, "btol": 1e-12}
PRIOR_RELATIVE = 3.0  # prior std of a parameter: this many times its start value (or scale)
PRIOR_FLOOR = {"damping": 0.1, "armature": 0.01, "frictionloss": 0.1, "delay": 0.01,
               "kp": 1.0, "kv": 0.1, "gain": 0.1}  # fmt: skip


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
        ]
        if not self.windows:
            raise InputError(f"the recordings are shorter than one {window_s:g} s window "
                             "(is t in seconds?)")  # fmt: skip
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

    @property
    def size(self) -> int:
        return self.n_global + len(self.windows) * self.n_state

    def start(self) -> np.ndarray:
        return np.concatenate([self.x0, np.zeros(len(self.windows) * self.n_state)])

    @property
    def driven(self) -> bool:
        """Whether the runs drive the model's actuators (``ctrl``) rather than the joints."""
        return self.runs[0].ctrl is not None

    def _controls(self, delay_s: float) -> np.ndarray:
        """qfrc_applied (W, nstep, nv), or the actuators' ctrl (W, nstep, nu) for driven runs,
        at every step of every window: the logged command ``delay_s`` earlier (linear
        interpolation; held at the ends)."""
        width = self.model.nu if self.driven else self.model.nv
        out = np.zeros((len(self.windows), self.nstep, width))
        for w, (r, a, _) in enumerate(self.windows):
            run = self.runs[r]
            times = run.t[a] + self.h * np.arange(self.nstep) - delay_s
            if self.driven:
                for k in range(width):
                    out[w, :, k] = np.interp(times, run.t, run.ctrl[:, k])
            else:
                for k, dof in enumerate(self.dofs):
                    out[w, :, dof] = np.interp(times, run.t, run.tau[:, k])
        return out

    def simulate(self, x: np.ndarray, offsets: np.ndarray, models=None) -> np.ndarray:
        """Simulated joint positions (W, nstep + 1, n) from each window's start, under ``x``."""
        from mujoco import rollout

        model = self.model if models is None else models
        delay = self.parameters.apply(self.model, self.dofs, x) if models is None else 0.0
        states = np.tile(self.template, (len(self.windows), 1))
        n = len(self.dofs)
        for w, (r, a, _) in enumerate(self.windows):
            states[w, 1 + self.qpos] = self.runs[r].q[a] + offsets[w, :n]
            states[w, 1 + self.model.nq + self.dofs] = self.velocities[r][a] + offsets[w, n:]
        control = self._controls(delay)
        kind = "mjSTATE_CTRL" if self.driven else "mjSTATE_QFRC_APPLIED"
        spec = int(getattr(self.mujoco.mjtState, kind))
        with quiet_stderr():  # MuJoCo's instability warnings: counted (unstable_steps) instead
            result, _ = rollout.rollout(
                model, self.datas, states, control, control_spec=spec, nstep=self.nstep
            )
        trajectory = result[:, :, 1 + self.qpos]
        first = states[:, None, 1 + self.qpos]
        return np.concatenate([first, trajectory], axis=1)

    def unstable_steps(self) -> int:
        """How often MuJoCo found a non-finite or huge acceleration and reset the state (its
        mjWARN_BADQACC) in the rollouts so far."""
        bad = int(self.mujoco.mjtWarning.mjWARN_BADQACC)
        return sum(int(data.warning[bad].number) for data in self.datas)

    def residual(self, z: np.ndarray) -> np.ndarray:
        x = z[: self.n_global]
        offsets = z[self.n_global :].reshape(len(self.windows), self.n_state)
        simulated = self.simulate(x, offsets)
        parts = []
        grid = self.h * np.arange(self.nstep + 1)
        n = len(self.dofs)
        for w, (r, a, b) in enumerate(self.windows):
            run = self.runs[r]
            times = run.t[a + 1 : b + 1] - run.t[a]
            predicted = np.column_stack(
                [np.interp(times, grid, simulated[w, :, k]) for k in range(n)]
            )
            parts.append(((predicted - run.q[a + 1 : b + 1]) / self.noise).ravel())
            parts.append(offsets[w, :n] / self.noise)
        parts.append((x - self.x0) / self.prior_std)
        return np.concatenate(parts)

    def sparsity(self) -> scipy.sparse.csr_matrix:
        """Which residual rows each decision variable can move (:meth:`residual`'s layout)."""
        n = len(self.dofs)
        rows, cols, row = [], [], 0
        for w, (_, a, b) in enumerate(self.windows):
            count = (b - a) * n + n
            block = np.arange(row, row + count)
            own = self.n_global + w * self.n_state + np.arange(self.n_state)
            rows.append(np.repeat(block, self.n_state + self.n_global))
            cols.append(np.tile(np.concatenate([own, np.arange(self.n_global)]), count))
            row += count
        prior = np.arange(row, row + self.n_global)
        rows.append(prior)
        cols.append(np.arange(self.n_global))
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        shape = (row + self.n_global, self.size)
        return scipy.sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)


def open_loop_error(
    model,
    runs: list[Run],
    horizon_s: float,
    dofs: np.ndarray,
    qpos: np.ndarray,
    delay_s: float = 0.0,
) -> tuple[float, np.ndarray]:
    """RMS position error (all joints, and per joint) of open-loop simulations of ``horizon_s``
    from the measured positions and Savitzky-Golay velocities, back to back over the runs
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
    its parameters; this error measures the model, not the divergence."""
    import scipy.optimize

    shooting = Shooting(model, runs, Parameters((), (), delay=True), window_s, noise, dofs, qpos)
    fixed = np.array([delay_s])
    n = len(dofs)

    def residual(offsets: np.ndarray) -> np.ndarray:
        return shooting.residual(np.concatenate([fixed, offsets]))[:-1]

    sparsity = shooting.sparsity()[:-1, 1:]
    solution = scipy.optimize.least_squares(
        residual,
        np.zeros(shooting.size - 1),
        jac_sparsity=sparsity,
        x_scale="jac",
        max_nfev=max_evaluations,
        method="trf",
        tr_options=EXACT_STEPS,
    )
    rows, start = [], 0
    for _, a, b in shooting.windows:
        count = (b - a) * n
        rows.append(solution.fun[start : start + count].reshape(-1, n) * noise)
        start += count + n
    errors = np.concatenate(rows)
    return float(np.sqrt(np.mean(errors**2))), np.sqrt(np.mean(errors**2, axis=0))
