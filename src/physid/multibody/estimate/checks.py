"""What a fit's inputs must satisfy before any work, and the sizes that follow from them: the
scale of a free swing (:func:`check_scale_fixed`), the recordings against the model step
(:func:`check_recordings`), the iteration and wall-clock budget (:func:`default_budget`) and the
default state error weight (:func:`default_kappa`)."""

from __future__ import annotations

import numpy as np

from physid.budget import Budget
from physid.errors import InputError
from physid.multibody.model.spec import MultibodyModel

SCALE_SLOTS = (
    "mass",
    "Ixx",
    "Iyy",
    "Izz",
    "Ixy",
    "Ixz",
    "Iyz",
    "viscous",
    "shaft_inertia",
    "coulomb",
)


def check_scale_fixed(model: MultibodyModel, names: list[str], recordings: list) -> None:
    """InputError when the estimate leaves the overall scale of the dynamics free.

    Scaling every mass, inertia, viscous coefficient, shaft inertia and motor gain by the same
    factor leaves the motion unchanged (up to the constraint compliance): the impulse residuals
    (eq. 3.7) scale with it, so the fit can drive them to zero by sending all of them to zero
    and match the angles exactly — a trivial optimum, not an estimate. The scale is fixed by one
    such number kept at a known value, or by a motor whose gain is known and whose control is
    not zero (the applied torque is the only absolute force a free swing has)."""
    wanted = set(names)
    for name, value in zip(model.names, model.values, strict=True):
        if name.rsplit(".", 1)[-1] in SCALE_SLOTS and value != 0.0 and name not in wanted:
            return
    for j, hinge in enumerate(model.hinges):
        gain = f"{hinge.name}.gain"
        driven = any(np.any(rec.control[:, j] != 0.0) for rec in recordings)
        if hinge.has_motor and driven and gain not in wanted and model.values[model.index(gain)]:
            return
    raise InputError(
        "every mass, inertia and friction coefficient is estimated and no motor of known gain "
        "acts: only their ratios are identifiable (the fit would send them all to zero); keep "
        "one of them at a known value (e.g. remove a body's mass from 'estimate')",
        source="estimate",
    )


# the most model steps of one fit (all recordings): 200 s at h = 1 ms; its Jacobian and
# normal equations grow with it (about 1 ms per step and LM iteration on a 1-hinge pendulum)
MAX_STEPS = 200_000
# the model step may be at most this many times finer than the recording's median sample
# period: a guard against t in ms (1000x). 50x, not 20x: a 20 Hz recording of a Furuta
# pendulum needs h = 1 ms for the discrete model to follow it (at 2.5 ms even the true
# parameters miss a MuJoCo simulation of it several times more)
MAX_UPSAMPLING = 50.0


#: Wall-clock seconds per model step and allowed LM iteration of the safety stop: about 20x
#: what a two-body fit costs on a loaded 2-core machine (~0.5 ms), so that the iterations
#: decide on any machine (the same data, the same numbers) and the clock stops only a run far
#: slower than it should be.
SECONDS_PER_STEP_ITERATION = 1e-2


def default_budget(steps: int, max_iterations: int) -> Budget:
    """The budget of a fit over ``steps`` model steps, shared by its LM runs (the fit, and when
    a body collapses the 10-iteration state-only start and the restart; the states-first start):
    as many iterations as they may take, and a wall-clock safety stop of 20 s +
    :data:`SECONDS_PER_STEP_ITERATION` per step and allowed iteration."""
    allowed = 2 * max_iterations + 10 + STATE_START_ITERATIONS
    seconds = 20.0 + SECONDS_PER_STEP_ITERATION * steps * allowed
    return Budget(seconds=seconds, iterations=allowed + 3)


def check_recordings(recordings: list, h: float) -> int:
    """The number of model steps of ``h`` over ``recordings``; an InputError when a value is
    not finite, when there are more steps than :data:`MAX_STEPS`, when ``h`` is
    :data:`MAX_UPSAMPLING` times finer than a recording's median sample period (time in ms?),
    or when no hinge moves beyond the noise of its angles (a pendulum at rest: any value of
    any parameter would fit)."""
    if not (np.isfinite(h) and 0 < h <= 1.0):
        raise InputError(f"the model step must be in (0, 1] s, got {h!r}", source="h")
    steps, moving = 0, []
    for rec in recordings:
        t = np.asarray(rec.t, float)
        if len(t) < 3:
            raise InputError(f"only {len(t)} samples; at least 3 are needed", source=rec.source)
        for what, values in (("t", t), ("angles", rec.angles), ("control", rec.control)):
            bad = np.flatnonzero(~np.all(np.isfinite(np.reshape(values, (len(t), -1))), axis=1))
            if bad.size:
                raise InputError(f"{what} row {bad[0] + 1} is not finite", source=rec.source)
        period = float(np.median(np.diff(t)))
        if period > MAX_UPSAMPLING * h * (1 + 1e-9):  # (0.05 / 0.0025 is 20 + 1e-15)
            raise InputError(
                f"the median sample period is {period:.6g} s, {period / h:.3g}x the model step "
                f"h = {h:g} s (at most {MAX_UPSAMPLING:g}x): is t in seconds? Otherwise use a "
                "larger --dt",
                source=rec.source,
            )
        steps += int((t[-1] - t[0]) / h) + 1
        y = np.asarray(rec.angles, float)
        noise = np.median(np.abs(np.diff(y, 2, axis=0)), axis=0) / 0.6745 / np.sqrt(6)
        moving.append(np.ptp(y, axis=0) > np.maximum(10 * noise, 1e-6))
    if steps > MAX_STEPS:
        raise InputError(
            f"{steps} model steps of h = {h:g} s over the recordings, more than {MAX_STEPS}: "
            "use a larger --dt or shorter recordings",
            source="--dt",
        )
    if recordings and not np.any(moving):
        spans = ", ".join(f"{np.ptp(r.angles):.3g}" for r in recordings)
        raise InputError(
            f"no hinge moves beyond the noise of its angles (largest range per recording "
            f"{spans} rad): the recording cannot identify the dynamics"
        )
    return steps


# LM iterations of the state-only start of low-rate recordings (identify's state_start): a
# few leave the states far above the noise floor, and the joint fit then turns dry friction
# into viscous; this many bring them near the floor
STATE_START_ITERATIONS = 40


def default_kappa(h: float) -> float:
    """The state error weight that weighs the impulse residuals like paper A's kappa = 100 at
    h = 0.01 s: ``100 (0.01 / h)^2``. An impulse residual is a force error times h, so a fixed
    kappa weighs the dynamics h^2 less at a finer step: kappa = 100 at h = 1e-3 falls in the
    overfitting regime of the paper's Fig. 7, the scaled weight validates several times better
    (docs/multibody.md)."""
    return 100.0 * (0.01 / h) ** 2
