"""The finding codes of ``physid.simfit`` (documented in docs/findings.md; ``physid codes``).

SF1xx: the recordings and the model as the fit reads them; SF2xx: the fit; SF3xx: the
held-out judgement.
"""

from __future__ import annotations

from physid.findings import Severity, define

# --- the recordings and the model ---------------------------------------------------------------
JOINTS_HELD_STILL = define(
    "SF102",
    "joints-held-still",
    Severity.INFO,
    "joints no recording logs held still",
    "Joints at the ends of the tree that no recording logs (a gripper beside an arm's log) are "
    "held at the MJCF's reference position by a joint equality and not tuned.",
    "Nothing, unless they moved in the runs: then log them.",
)
ACTUATORS_IDLE = define(
    "SF103",
    "actuators-idle",
    Severity.INFO,
    "actuators of joints held still left out",
    "The actuators that drive only joints held still (SF102) are left out of the fit's "
    "simulations with those joints.",
    "Nothing.",
)
GEOMS_OVERLAP = define(
    "SF104",
    "geoms-overlap",
    Severity.CAUTION,
    "collision geoms overlap at the recorded positions",
    "The model's collision geoms overlap at the measured positions: MuJoCo pushes them apart in "
    "every window and the fit tunes the joints against those contacts; unless the robot "
    "touched them there, the collision model is coarser than the robot.",
    "Exclude the pairs named (the message gives the MJCF <contact> lines) or give those geoms "
    'contype="0" conaffinity="0", and fit again.',
)
ACTUATORS_SWITCHED_OFF = define(
    "SF105",
    "actuators-switched-off",
    Severity.CAUTION,
    "the model's actuators switched off in the fit",
    "Logged tau_ torques drove the joints directly (qfrc_applied), so the model's actuators were "
    "switched off in every simulation of the fit: the tuned model reproduces the runs when the "
    "torques are applied to its joints, not through its actuators.",
    "Simulate the tuned model the same way, or drive its actuators with ctrl_ recordings.",
)
GRAVITY_COMPENSATED = define(
    "SF106",
    "gravity-compensated",
    Severity.CAUTION,
    "bodies cancel their own weight (gravcomp)",
    "Logged joint torques drive a model whose bodies carry MuJoCo's gravity compensation: right "
    "only if the logged torque leaves gravity out (a controller's torque above its own gravity "
    "compensation); a drive's total torque holds the weight too, and the arm is compensated "
    "twice.",
    'Set gravcomp="0" on those bodies for logs of the drives\' total torque.',
)

# --- the fit ------------------------------------------------------------------------------------
FRICTIONLOSS_OFF_PLATEAU = define(
    "SF201",
    "frictionloss-off-plateau",
    Severity.INFO,
    "a frictionloss start halved off MuJoCo's plateau",
    "At the file's value the rollouts did not depend on this frictionloss (MuJoCo's dry "
    "friction never reached it), where the fit has no gradient: its start was halved until "
    "they did (physid.simfit.plateau).",
    "Nothing.",
)
NOT_CONVERGED = define(
    "SF202",
    "not-converged",
    Severity.ERROR,
    "the solver used its evaluation budget",
    "Levenberg-Marquardt stopped at --max-evaluations before its convergence tests; the values "
    "are its best iterate, not a fit.",
    "Raise --max-evaluations, or start from values nearer the robot's.",
)
STALLED = define(
    "SF203",
    "stalled",
    Severity.ERROR,
    "no step from the start decreased the cost",
    "Levenberg-Marquardt found no step that decreased the cost from the start: nothing was "
    "fitted (a start on a flat cost, or a simulation that does not depend on the terms tuned).",
    "Check that the runs move the joints tuned, and fit from other start values.",
)
UNSTABLE_SIMULATION = define(
    "SF204",
    "unstable-simulation",
    Severity.ERROR,
    "MuJoCo's simulation went unstable during the fit",
    "MuJoCo reset diverging states (huge or non-finite accelerations) during the fit: the fit "
    "followed a broken simulation, so the values are not a fit.",
    "Check the torque unit and that the model can carry the logged torques.",
)
AT_BOUND = define(
    "SF205",
    "tuned-at-bound",
    Severity.CAUTION,
    "tuned values at a bound",
    "These tuned values ended at a bound (0, or the 0.1 s of a delay): the data wanted them "
    "beyond it, and their standard deviations do not describe them (a negative delay: the "
    "positions late, not the torque).",
    "Read them as undetermined; check the timing of the columns for a delay at 0.",
)
TRAINING_MISFIT = define(
    "SF206",
    "training-misfit",
    Severity.CAUTION,
    "the tuned model does not follow the training runs to their noise",
    "The tuned model follows its own training runs far worse than their position noise (over "
    "all joints or on one): effects the model lacks, or a local minimum (a joint that barely "
    "moves lets its terms trade off). The standard deviations are window-clustered and include "
    "this misfit.",
    "Hold the worst joints' terms with --hold, or fit from other start values.",
)
DELAY_NOT_IN_MJCF = define(
    "SF207",
    "delay-not-in-mjcf",
    Severity.INFO,
    "the delay has no MJCF field",
    "The estimated command-to-motion delay is not written into model_tuned.xml: MJCF has no "
    "field for it.",
    "Apply it to the commands, or as an actuator's dynamics.",
)

# --- the held-out judgement ---------------------------------------------------------------------
WORSE_HELD_OUT = define(
    "SF301",
    "worse-held-out",
    Severity.ERROR,
    "the tuned model follows the held-out runs worse",
    "Over windows whose initial states are estimated (the shooting error), the tuned model "
    "follows the held-out runs worse than the model as given.",
    "Keep the model file's values.",
)
WORSE_FOR_SOME_JOINTS = define(
    "SF302",
    "worse-for-some-joints",
    Severity.ERROR,
    "some joints follow the held-out runs worse",
    "The tuned model follows the held-out runs better as a whole but worse on the joints named "
    "(by more than 10 % and their position noise): their terms are not what the runs show (a "
    "local minimum, or terms the training runs cannot inform).",
    "Tune again with --hold on those joints (their terms keep the given values), or from other "
    "start values.",
)
OPEN_LOOP_WORSE = define(
    "SF303",
    "open-loop-worse",
    Severity.CAUTION,
    "open-loop simulation worse than the given model's",
    "The tuned model simulates the held-out runs open loop worse than the model as given at the "
    "shortest horizon; the status compares the shooting errors (the windows' states fitted), "
    "under which it is better.",
    "If open-loop simulation is the use, the given values may serve it better.",
)
