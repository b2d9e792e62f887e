"""The windows of an output-error refinement (:mod:`.output_error`) and their batched
simulation: each window of a recording starts from its own joint state and is simulated by
physid's SPOOK stepper with the parameters; its residuals are the simulated minus recorded angles
at the recorded samples divided by each joint's noise."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from physid.errors import InputError
from physid.multibody.step.simulate import Stepper, inertia_problem, state_from_joints

#: A window must span at least this many model steps of the refinement and sample periods of
#: every recording: each window's own first state (an angle and a rate per joint) takes two
#: samples of each joint, so only a third one says anything about the parameters (shorter
#: windows give stds orders of magnitude above the values).
MIN_WINDOW_INTERVALS = 2


def check_refine_options(
    recordings: Sequence, h_fit: float, h: float | None, window_seconds: Sequence[float]
) -> None:
    """InputError naming the option, before any fit, for a refinement that cannot refine:
    ``--refine-dt`` (``h``; None: the fit's ``h_fit``) coarser than both the fit's step and
    every recording's median sample period (a cruder model than the one it would replace, which
    also skips most samples), and a finite window shorter than :data:`MIN_WINDOW_INTERVALS`
    refinement steps or sample periods of a recording (its own first state takes all its
    samples)."""
    step = h_fit if h is None else float(h)
    periods = [(float(np.median(np.diff(np.asarray(rec.t, float)))), rec) for rec in recordings]
    if not periods:
        return
    finest, finest_rec = min(periods, key=lambda item: item[0])
    coarsest, coarsest_rec = max(periods, key=lambda item: item[0])
    limit = max(h_fit, finest)
    if step > limit * (1 + 1e-9):
        raise InputError(
            f"{step:g} s is coarser than both the fit's step (--dt {h_fit:g} s) and the median "
            f"sample period of {finest_rec.source or 'the recording'} ({finest:.6g} s): it "
            "would refine a cruder model than the fit's and skip most samples; give at most "
            f"{limit:.6g} s (finer steps simulate the model closer to the data)",
            source="--refine-dt",
        )
    shortest = MIN_WINDOW_INTERVALS * max(step, coarsest)
    for length in window_seconds:
        if np.isfinite(length) and length < shortest * (1 - 1e-9):
            what = (
                f"{MIN_WINDOW_INTERVALS} refinement steps of {step:g} s"
                if step >= coarsest
                else f"{MIN_WINDOW_INTERVALS} sample periods of "
                f"{coarsest_rec.source or 'the recording'} ({coarsest:.6g} s)"
            )
            raise InputError(
                f"a window of {length:g} s is shorter than {what}: a window's first angle and "
                "rate take two samples of each joint, so such windows say nothing about the "
                f"parameters; give windows of at least {shortest:.6g} s, or 'whole'",
                source="--refine-windows",
            )


class WindowProblem:
    """The windows of a fit's recordings and their batched simulation. ``fit``: a
    :class:`physid.multibody.estimate.fit.MultibodyFit` (its model, step, segments, states,
    estimated names and per-joint noise)."""

    def __init__(  # noqa: ANN001
        self, fit, recordings: list, h: float, window_seconds: float, known: dict | None = None
    ) -> None:
        from physid.multibody.estimate.observe import resample

        self.model, self.h, self.names = fit.model, float(h), list(fit.names)
        self.slots = np.array([fit.model.index(n) for n in self.names], int)
        # the stepper's own parameters serve its kinematics only (joint states; every rollout
        # gets its parameters): the fit's start, which can be simulated, whatever the fit's end
        self.stepper = Stepper(fit.model, self.h, chi=self.chi(fit.initial_values))
        self.m = len(fit.model.hinges)
        sigma = np.array([fit.noise[j]["std"] for j in fit.model.joint_names], float)
        self.inv_sigma = 1.0 / np.maximum(sigma, 1e-12)
        # the recordings at the refinement's step: angles at the steps nearest a sample
        self.segments = [resample(rec, self.h, None)[0] for rec in recordings]
        entries = self._windows(window_seconds)
        self.W = len(self.starts)
        if self.W == 0:
            raise InputError(
                f"no window of {window_seconds:g} s holds two measured samples: give windows "
                "longer than two sample periods",
                source="--refine-windows",
            )
        self._samples(entries)
        self.angles0, self.rates0 = self._first_states(fit, {} if known is None else known)
        self.pin_data = fit.model.pin_model.createData()

    def _windows(self, window_seconds: float) -> list[tuple]:
        """Cut every segment into windows of ``window_seconds`` (a short tail joins the window
        before it; a window with fewer than two samples is left out): their start step,
        length and segment, and per window its samples ``(step, joint, angle)``."""
        self.starts, self.lengths, self.segment_of, entries = [], [], [], []
        for s, seg in enumerate(self.segments):
            n = len(seg.y)
            whole = not np.isfinite(window_seconds) or window_seconds >= (n - 1) * self.h
            length = n - 1 if whole else max(1, int(round(window_seconds / self.h)))
            bounds = list(range(0, n - 1, length)) + [n - 1]
            if len(bounds) > 2 and bounds[-1] - bounds[-2] < length // 2:
                bounds.pop(-2)
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                seen = np.argwhere(seg.w[a : b + 1] > 0)  # (k, j) pairs, k from the start
                if len(seen) < 2:
                    continue
                self.starts.append(a)
                self.lengths.append(b - a)
                self.segment_of.append(s)
                entries.append((seen[:, 0], seen[:, 1], seg.y[a + seen[:, 0], seen[:, 1]]))
        return entries

    def _samples(self, entries: list[tuple]) -> None:
        """The windows' samples as padded (W, R) arrays and their controls (L, W, m)."""
        self.R = max((len(e[0]) for e in entries), default=0)
        self.steps = np.zeros((self.W, self.R), int)
        self.joint = np.zeros((self.W, self.R), int)
        self.y = np.zeros((self.W, self.R))
        self.mask = np.zeros((self.W, self.R), bool)
        for w, (k, j, y) in enumerate(entries):
            self.steps[w, : len(k)], self.joint[w, : len(k)], self.y[w, : len(k)] = k, j, y
            self.mask[w, : len(k)] = True
        self.L = max(self.lengths, default=0)
        self.u = np.zeros((self.L, self.W, self.m))
        for w, (a, n, s) in enumerate(zip(self.starts, self.lengths, self.segment_of, strict=True)):
            self.u[:n, w] = self.segments[s].u[a : a + n]

    def _first_states(self, fit, known: dict) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
        """Each window's first joint state: an earlier stage's (``known``: (segment, step) ->
        (angles, rates)) or the fit's estimated state at the nearest of its steps."""
        angles0, rates0 = [], []
        for a, s in zip(self.starts, self.segment_of, strict=True):
            if (s, a) in known:  # a window of an earlier stage started here
                angles0.append(known[s, a][0])
                rates0.append(known[s, a][1])
                continue
            i = min(int(round(a * self.h / fit.h)), len(fit.states.q[s]) - 1)
            q, v = fit.states.q[s][i][None], fit.states.v[s][i][None]
            angle, rate = self.stepper.joint_states(q, v)  # joint states do not depend on h
            angles0.append(angle[0])
            rates0.append(rate[0])
        return np.array(angles0), np.array(rates0)

    def chi(self, x: np.ndarray) -> np.ndarray:
        out = self.model.values.copy()
        out[self.slots] = x
        return out

    def state(self, angles: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The maximal-coordinate state of joint ``angles`` and ``rates``."""
        return state_from_joints(self.model, angles, rates, self.pin_data)

    def initial_state(self, w: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Window ``w``'s maximal-coordinate state with joint offsets ``d`` = (angles, rates)."""
        return self.state(self.angles0[w] + d[: self.m], self.rates0[w] + d[self.m :])

    def residuals(self, chi: np.ndarray, window: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """(B, R) residuals of trajectories ``b``: window ``window[b]`` started with joint
        offsets ``offsets[b]`` and simulated with parameters ``chi[b]``; ``inf`` rows for a
        parameter set that cannot be simulated (a body without positive inertia)."""
        B = len(window)
        q = np.empty((B, 7 * self.model.n_bodies))
        v = np.empty((B, 6 * self.model.n_bodies))
        for b in range(B):
            q[b], v[b] = self.initial_state(int(window[b]), offsets[b])
        ok = np.array([inertia_problem(self.model, c) is None for c in chi])
        out = np.full((B, self.R), np.inf)
        if not ok.any():
            return out
        chi_ok, w_ok = chi[ok], window[ok]
        q, v = q[ok], v[ok]
        wanted = np.zeros((self.L + 1, len(w_ok)), bool)
        rows, cols = np.nonzero(self.mask[w_ok])
        wanted[self.steps[w_ok][rows, cols], rows] = True
        # joint angles only at the steps that carry a sample (at 20 Hz and 1 ms, one in 50):
        # keeping every step's maximal state would take 0.4 GB for a 200,000-step recording
        seen = wanted.any(axis=1)
        angles = np.full((self.L + 1, len(w_ok), self.m), np.nan)
        if seen[0]:
            angles[0] = self.stepper.joint_states(q, v)[0]
        last = int(np.max(np.flatnonzero(seen), initial=0))
        with np.errstate(all="ignore"):
            for k in range(last):
                q, v, _ = self.stepper.step_batch(q, v, self.u[k, w_ok], chi_ok)
                if seen[k + 1]:
                    angles[k + 1] = self.stepper.joint_states(q, v)[0]
        sim = angles[self.steps[w_ok], np.arange(len(w_ok))[:, None], self.joint[w_ok]]
        error = np.angle(np.exp(1j * (sim - self.y[w_ok])))  # wrapped to (-pi, pi]
        r = np.where(self.mask[w_ok], error * self.inv_sigma[self.joint[w_ok]], 0.0)
        out[ok] = np.where(np.isfinite(r), r, np.inf)
        return out
