"""How ``physid simfit`` judges a fit: the held-out errors before and after tuning, the status
(:class:`physid.status.Status`) and the findings on the model, the fit and the judgement (codes
SF1xx-SF3xx of :mod:`physid.simfit.codes`).

The held-out judgement is the RMS joint-position error on the held-out runs: the shooting error
(windows of the training length whose initial states are estimated with the model fixed: what
the model can follow; the status compares these), and open-loop simulations of
:data:`HORIZONS_S` from the recorded states (an unstable system, an arm under gravity whose
controller's feedback is not in the model, diverges from any initial-state error there, whatever
its parameters: even the true model drifts by tens of mrad).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.findings import Finding
from physid.simfit.codes import (
    ACTUATORS_SWITCHED_OFF,
    AT_BOUND,
    DELAY_NOT_IN_MJCF,
    GRAVITY_COMPENSATED,
    NOT_CONVERGED,
    OPEN_LOOP_WORSE,
    STALLED,
    TRAINING_MISFIT,
    WORSE_FOR_SOME_JOINTS,
    WORSE_HELD_OUT,
)
from physid.simfit.shooting import open_loop_error, shooting_error
from physid.status import Status

HORIZONS_S = (0.5, 1.0, 2.0)
MISFIT_RATIO = 3.0  # training RMS / position noise above which the output says so
# A joint whose held-out shooting error grows by more than this factor (and by more than its
# position noise) under the tuned model is named (status worse_for_some_joints): a whole that
# improves many times over can hide one joint made worse (a frictionloss tuned onto MuJoCo's
# plateau, where the rollouts no longer depend on it); a good fit improves every joint
JOINT_WORSE = 1.1
WORSE_OVERALL = 1.001  # the tuned model's held-out shooting error over the given model's


@dataclass(frozen=True)
class JointErrors:
    """RMS joint-position errors [rad or m]: over every joint, and per joint."""

    total: float
    per_joint: dict[str, float]

    def as_dict(self) -> dict:
        return {"all": self.total, "per_joint": dict(self.per_joint)}


@dataclass(frozen=True)
class HeldOutErrors:
    """A model's errors on the held-out runs: the shooting error over windows of
    ``window_s`` and the open-loop errors per horizon [s] (module docstring)."""

    window_s: float
    shooting: JointErrors
    open_loop: dict[float, JointErrors]

    def as_dict(self) -> dict:
        """simfit.json's ``held_out_rms_rad`` entry: ``open loop <h> s`` per horizon, then
        ``shooting <window> s``."""
        out = {f"open loop {h:g} s": e.as_dict() for h, e in self.open_loop.items()}
        out[f"shooting {self.window_s:g} s"] = self.shooting.as_dict()
        return out


def held_out_errors(  # noqa: ANN001 - mujoco.MjModel, runs and index arrays
    model,
    runs: list,
    dofs,
    qpos,
    joints: tuple[str, ...],
    delay_s: float,
    window_s: float,
    noise: np.ndarray,
) -> HeldOutErrors:
    """The open-loop errors over :data:`HORIZONS_S` and the shooting error (initial states
    estimated, :func:`.shooting.shooting_error`) over windows of ``window_s`` of ``runs``."""

    def errors(total: float, per_joint: np.ndarray) -> JointErrors:
        return JointErrors(total, dict(zip(joints, per_joint.tolist(), strict=True)))

    open_loop = {
        h: errors(*open_loop_error(model, runs, h, dofs, qpos, delay_s)) for h in HORIZONS_S
    }
    shooting = errors(*shooting_error(model, runs, window_s, noise, dofs, qpos, delay_s))
    return HeldOutErrors(window_s, shooting, open_loop)


# Levenberg-Marquardt's termination codes (physid.numerics.condensed_lm) that are no fit
_SOLVER_STOPS = {0: (Status.NOT_CONVERGED, NOT_CONVERGED), -1: (Status.STALLED, STALLED)}


def fit_status(  # noqa: ANN001 - a condensed_lm.Solution
    solution,
    before: HeldOutErrors | None,
    after: HeldOutErrors | None,
    noise: dict[str, float] | None = None,
) -> tuple[Status, str, list[Finding]]:
    """The status, its one-line message and the findings behind it: the solver's (its
    termination code), then the held-out judgement (the shooting errors; per joint, a growth
    beyond :data:`JOINT_WORSE` and the joint's position noise ``noise`` [rad or m])."""
    if solution.status in _SOLVER_STOPS:
        status, code = _SOLVER_STOPS[solution.status]
        message = f"the solver stopped: {solution.message}"
        numbers = {"evaluations": solution.nfev, "solver_status": solution.status}
        return status, message, [code(message, numbers=numbers)]
    if before is not None and after is not None:
        judged = _judged(before, after, noise or {})
        if judged is not None:
            return judged
    return Status.OK, f"converged: {solution.message}", []


def _judged(
    before: HeldOutErrors, after: HeldOutErrors, noise: dict[str, float]
) -> tuple[Status, str, list[Finding]] | None:
    """The held-out judgement when it is not ok (None: ok)."""
    key = f"shooting {after.window_s:g} s"
    was, now = before.shooting, after.shooting
    if now.total > was.total * WORSE_OVERALL:
        message = (
            "the tuned model follows the held-out runs worse than the model as given "
            f"({key}: {now.total:.3g} vs {was.total:.3g} rad): keep the original values"
        )
        numbers = {"after_rad": now.total, "before_rad": was.total, "largest_ratio": WORSE_OVERALL}
        return Status.WORSE_THAN_URDF, message, [WORSE_HELD_OUT(message, numbers=numbers)]
    worse = {
        j: (b, e)
        for j, e in now.per_joint.items()
        if e > JOINT_WORSE * (b := was.per_joint[j]) and e - b > noise.get(j, 0.0)
    }
    if not worse:
        return None
    listed = ", ".join(f"{j} {1e3 * b:.3g} -> {1e3 * a:.3g} mrad" for j, (b, a) in worse.items())
    message = (
        f"the tuned model follows the held-out runs better as a whole ({key}: "
        f"{was.total:.3g} -> {now.total:.3g} rad) but worse on {listed}: their terms are not "
        "what the runs show (a local minimum, or terms the training runs cannot inform); tune "
        f"again with --hold {','.join(worse)} (their terms keep the given values), or from "
        "other start values"
    )
    numbers = {
        f"{j}_{when}_rad": v
        for j, (b, a) in worse.items()
        for when, v in (("before", b), ("after", a))
    }
    finding = WORSE_FOR_SOME_JOINTS(
        message, numbers=numbers | {"largest_ratio": JOINT_WORSE}, names=tuple(worse)
    )
    return Status.WORSE_FOR_SOME_JOINTS, message, [finding]


def open_loop_finding(before: HeldOutErrors | None, after: HeldOutErrors | None) -> Finding | None:
    """:data:`~physid.simfit.codes.OPEN_LOOP_WORSE` when the tuned model simulates the held-out
    runs open loop worse than the model as given at the shortest horizon, whatever the status
    (which compares the shooting errors: under feedback an open-loop simulation diverges from
    any initial-state error, so only its short horizons compare models). The shooting error
    can improve, and the status be ok, while the open loop grows worse at every horizon."""
    if before is None or after is None or not after.open_loop:
        return None
    first = min(after.open_loop)
    if after.open_loop[first].total <= 1.01 * before.open_loop[first].total:
        return None
    changes = ", ".join(
        f"{h:g} s {1e3 * before.open_loop[h].total:.3g} -> {1e3 * e.total:.3g}"
        for h, e in after.open_loop.items()
    )
    numbers = {
        f"open_loop_{h:g}s_{when}_rad": errors.open_loop[h].total
        for h in after.open_loop
        for when, errors in (("before", before), ("after", after))
    }
    return OPEN_LOOP_WORSE(
        f"the tuned model simulates the held-out runs open loop worse than the model as given "
        f"({changes} mrad): the status compares the shooting errors (the windows' states "
        "fitted); if open-loop simulation is the use, the given values may serve it better",
        numbers=numbers,
    )


def misfit_finding(solver: dict) -> Finding | None:
    """:data:`~physid.simfit.codes.TRAINING_MISFIT` when the tuned model follows its own
    training runs far worse than their position noise (RMS above :data:`MISFIT_RATIO` x, over
    all joints or on one; ``solver``: simfit.json's solver record): a status ``ok`` then says
    only that the solver converged. A model that holds the arm fits to about 1x; a local
    minimum (a barely moving joint's terms far from the truth) converges at tens of x; a real
    arm reads several x where the model does not hold everything the arm does."""
    ratio = solver.get("rms_over_noise")
    per_joint = solver.get("rms_over_noise_per_joint") or {}
    # one joint far off is said too: averaged over the joints, one whose terms sit in a local
    # minimum can leave the whole below the ratio
    worst_ratio = max(per_joint.values(), default=0.0)
    if ratio is None or not (ratio > MISFIT_RATIO or worst_ratio > MISFIT_RATIO):
        return None
    worst = sorted(per_joint.items(), key=lambda item: -item[1])[:3]
    by_joint = ", ".join(f"{joint} {value:.3g}" for joint, value in worst)
    return TRAINING_MISFIT(
        f"the tuned model follows the training runs to {ratio:.3g} x their position noise, not "
        "to the noise" + (f" (worst joints: {by_joint} x)" if by_joint else "") + ": effects "
        "the model lacks, or a local minimum (a joint that barely moves lets its terms trade "
        "off: hold its terms with --hold, or fit from other start values); the standard "
        "deviations are window-clustered and include this misfit",
        numbers={
            "rms_over_noise": ratio,
            "worst_joint_rms_over_noise": worst_ratio,
            "largest_ratio": MISFIT_RATIO,
        },
        names=tuple(joint for joint, _ in worst),
    )


def at_bound_finding(parameters: dict[str, dict]) -> Finding | None:
    """:data:`~physid.simfit.codes.AT_BOUND` naming the tuned values at a bound (simfit.json's
    ``parameters`` entries with ``at_bound``)."""
    bounded = [name for name, entry in parameters.items() if entry["at_bound"]]
    if not bounded:
        return None
    return AT_BOUND(
        f"at a bound (their std does not describe them): {', '.join(bounded)}",
        numbers={name: parameters[name]["value"] for name in bounded},
        names=bounded,
    )


def delay_finding(delay_s: float, std_s: float) -> Finding | None:
    """:data:`~physid.simfit.codes.DELAY_NOT_IN_MJCF` for a delay beyond twice its std."""
    if not delay_s > 2.0 * std_s > 0.0:
        return None
    return DELAY_NOT_IN_MJCF(
        f"delay {delay_s * 1e3:.3g} ms: no MJCF field (apply it to the commands, or as an "
        "actuator's dynamics)",
        numbers={"delay_s": delay_s, "std_s": std_s},
    )


def actuators_finding(model, driven: bool) -> Finding | None:  # noqa: ANN001 - mujoco.MjModel
    """:data:`~physid.simfit.codes.ACTUATORS_SWITCHED_OFF` when logged joint torques drove a
    model that has actuators: they were switched off in every simulation of the fit
    (:func:`.shooting.simulation_flags`), so the tuned model reproduces the runs when the
    torques are applied to its joints, not through its actuators."""
    if driven or model.nu == 0:
        return None
    return ACTUATORS_SWITCHED_OFF(
        f"the model's {model.nu} actuators were switched off in the fit: the logged tau_ "
        "torques drove the joints directly (qfrc_applied); simulate the tuned model the "
        "same way, or drive its actuators with ctrl_ recordings",
        numbers={"actuators": model.nu},
    )


def gravity_compensation_finding(model, driven: bool) -> Finding | None:  # noqa: ANN001
    """:data:`~physid.simfit.codes.GRAVITY_COMPENSATED` when logged joint torques drive a model
    whose bodies carry MuJoCo's gravity compensation (``gravcomp``, common in Menagerie arms):
    the simulation then cancels those bodies' weight itself, which is right only if the logged
    torque leaves gravity out (a controller's torque above its own gravity compensation); a
    drive's total torque holds the weight too, and the arm would be compensated twice."""
    from physid.robot.mjcf import gravity_compensated_joints

    # joints with actuatorgravcomp take that force through the actuators, which simulations
    # of logged torques switch off (shooting.simulation_flags): the weight is then not cancelled
    compensated = sorted(
        {b for bodies in gravity_compensated_joints(model).values() for b in bodies}
    )
    if driven or not compensated:
        return None
    shown = ", ".join(compensated[:4]) + (" ..." if len(compensated) > 4 else "")
    return GRAVITY_COMPENSATED(
        f"{len(compensated)} bodies of the model cancel their own weight (gravcomp: "
        f"{shown}): right only if the logged tau_ columns leave gravity out; a drive's "
        'total torque holds the weight too (set gravcomp="0" for such logs)',
        names=compensated,
    )
