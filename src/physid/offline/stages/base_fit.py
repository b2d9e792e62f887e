"""Stage 3: base parameters, what the data excite, (weighted) least squares (paper C eqs. 4-6)
under the weighting the folds choose (:mod:`physid.offline.choose.weighting`), essential
parameters, and the joint terms' prior.

A joint that barely moves cannot decide its velocity-driven terms (its ``sign(dq)`` column is the
sign of velocity noise): they are not excited, and are held at their prior without a std.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.body.inertia import check_consistency
from physid.files.config import IdentifyConfig
from physid.findings import Finding
from physid.offline.choose.training import still_joints
from physid.offline.choose.weighting import Weighting, choose_weighting
from physid.offline.codes import (
    INCONSISTENT_PRIOR,
    JOINT_TERMS_UNDECIDED,
    ROBOT_NOTE,
    STILL_JOINT,
    UNIDENTIFIABLE,
)
from physid.offline.fit.consistent import ConsistentProblem
from physid.offline.fit.essential import EssentialParameters, essential_parameters
from physid.offline.fit.joint_prior import JointPrior, joint_prior
from physid.offline.observe.crossval import CVScore, moving_in
from physid.offline.observe.least_squares import LeastSquaresResult, least_squares
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.stages.prepare import Prepared
from physid.robot.model import RobotModel
from physid.robot.regressor import BaseParameters, base_parameters, data_rank_deficiency

STILL_JOINT_TERMS = ("fv", "fc", "fs", "phi1", "Ia")  # driven by the joint's own motion
STILL_REASON = "the joint barely moves"  # why they are held (params.json joint_prior.held)


@dataclass(frozen=True)
class BaseFit:
    """The base parameters and their least-squares fit on the excited ones."""

    base: BaseParameters
    excited: np.ndarray  # (b,) bool: base parameters these data identify
    columns: np.ndarray  # the excited base parameters' columns (standard indices)
    least_squares: LeastSquaresResult
    essential: EssentialParameters
    prior: np.ndarray  # (p,) the URDF's parameters
    joint: JointPrior  # the joint terms' prior, still joints held
    still: dict[str, str]  # joint -> how it barely moves
    findings: tuple[Finding, ...]
    weighting: Weighting | None = None  # how the least squares' weighting was chosen

    @property
    def score(self) -> CVScore | None:
        """The consistent fit's cross-validated score under the weighting used, if scored."""
        return None if self.weighting is None else self.weighting.score


def fit_base(
    prepared: Prepared, config: IdentifyConfig, problem: ConsistentProblem | None = None
) -> BaseFit:
    """Stage 3 (module docstring); ``problem``: the compiled consistent fit, for the folds'
    choice of the weighting (without it, an ``auto`` weighting is WLS)."""
    model, training = prepared.model, prepared.training
    store, system = training.store, training.system
    estimation = config.estimation
    base = base_parameters(model)
    still = still_joints(model, store, moving_in(prepared.train))
    excited = excited_parameters(system, base, tuple(still))
    columns = base.independent[excited]
    prior = model.prior_parameters()
    joint = joint_prior(model, store, prior, training.preprocessing.velocity_noise_std)
    weighting = None
    if problem is not None and prepared.shapes is None:  # the folds hold the linear model
        weighting = choose_weighting(
            model, training, columns, estimation, problem, joint, prepared.score
        )
        ls = weighting.least_squares
    else:
        ls = least_squares(system, columns, estimation.weighting)
    essential = essential_parameters(
        system,
        columns,
        tuple(np.asarray(base.short_names)[excited]),
        ls.weights,
        ratio=estimation.essential_ratio,
    )
    # a still joint's friction is held whole, and a joint left out of the fit has no equation:
    # their one-way offset is not news
    unfitted = {j for k, j in enumerate(model.joint_names) if not model.fitted[k]}
    kept = {
        name: why
        for name, why in joint.reasons.items()
        if name.rsplit(".", 1)[0] not in {*still, *unfitted}
    }
    joint = held_still(model, replace(joint, reasons=kept), still)
    findings = [ROBOT_NOTE(n) for n in model.notes]
    findings += [] if weighting is None else weighting.findings()
    findings += [
        STILL_JOINT(
            f"joint '{j}' barely moves ({how}): its friction and armature are held at the URDF's "
            "values (unidentifiable)",
            names=(j,),
        )
        for j, how in still.items()
    ]
    findings += inconsistent_prior_findings(model, prior)
    findings += [JOINT_TERMS_UNDECIDED(why, names=(name,)) for name, why in kept.items()]
    if not excited.all():
        unexcited = [n for n, e in zip(base.short_names, excited, strict=True) if not e]
        findings.append(
            UNIDENTIFIABLE(
                f"{len(unexcited)} of {base.size} base parameters lie outside the data's numerical "
                f"rank (the prior decides them): {', '.join(unexcited)}",
                numbers={"unexcited": len(unexcited)},
                names=unexcited,
            )
        )
    return BaseFit(
        base, excited, columns, ls, essential, prior, joint, still, tuple(findings), weighting
    )


def excited_parameters(
    system: ReducedSystem, base: BaseParameters, still_joints: tuple[str, ...] = ()
) -> np.ndarray:
    """Base parameters these data identify: within the numerical rank of the base regressor,
    and not a velocity-driven term of a joint that never moves."""
    excited = np.ones(base.size, dtype=bool)
    X, _ = system.stacked(base.independent)
    excited[data_rank_deficiency(X)] = False
    for k, name in enumerate(base.short_names):
        joint, _, term = name.split(" ")[0].rpartition(".")
        if joint in still_joints and term in STILL_JOINT_TERMS:
            excited[k] = False
    return excited


def held_still(model: RobotModel, joint: JointPrior, still: dict[str, str]) -> JointPrior:
    """``joint`` with the friction and armature of the joints that barely move held at their
    prior with std 0: their columns are velocity noise, on which the torque prior's std (a share
    of the joint's torque over its column's size) is no prior at all, and whose variance would
    carry into the parameters they couple with; they are reported without a std."""
    layout = model.layout
    terms = [
        (index, layout.names[index])
        for j in still
        for t in STILL_JOINT_TERMS
        if (index := layout.joint_term_index(j, t)) is not None
    ]
    if not terms:
        return joint
    indices, names = (list(x) for x in zip(*terms, strict=True))
    held = joint.holding(indices, names, STILL_REASON)
    std = held.std.copy()
    std[indices] = 0.0
    return replace(held, std=std)


def inconsistent_prior_findings(model: RobotModel, prior: np.ndarray) -> list[Finding]:
    """The URDF bodies that no rigid body could have (their prior is lifted, not trusted)."""
    findings = []
    for joint in model.layout.body_joints:
        report = check_consistency(prior[model.layout.body_slice(joint)], name=joint)
        if not report.consistent:
            findings.append(
                INCONSISTENT_PRIOR(
                    f"URDF body '{joint}' is not physically consistent ({report.reason}); its "
                    "prior is lifted just inside the consistent set and counts as 'tiny body'",
                    names=(joint,),
                )
            )
    return findings
