"""The finding codes of ``physid identify``, ``validate`` and ``payload`` (paper C and the trust
layer); documented in docs/findings.md and by ``physid codes``.

ID1xx: choices made by the user's folds (info). ID2xx: the fit and its solvers. ID3xx: what the
data decide and how sure the estimate is. ID4xx: the prior and plausibility. ID5xx: data that
look wrong though well-formed (suspect). ID6xx: the model against the data, held out. PL:
payload.
"""

from __future__ import annotations

from physid.findings import Severity, define

INFO, CAUTION, SUSPECT, ERROR = Severity.INFO, Severity.CAUTION, Severity.SUSPECT, Severity.ERROR

# ID1xx: choices (each is scored by blocked cross-validation of the training recordings)
CUTOFF_CHOICE = define(
    "ID101",
    "cutoff-choice",
    INFO,
    "the derivative filter's cut-off the folds chose",
    "The Butterworth cut-off (and with it the decimation) was chosen among candidates by blocked "
    "cross-validation on the training recordings; the conservative candidate wins unless another "
    "beats it by more than the folds' spread. The numbers hold every candidate's score.",
    "Nothing; to impose a cut-off, set filter.butterworth_cutoff_hz in the config.",
)
DEADBAND_CHOICE = define(
    "ID102",
    "deadband-choice",
    INFO,
    "the Coulomb deadband the folds chose",
    "The speed below which Coulomb friction is not switched (a fraction of each joint's RMS "
    "speed) was chosen by the folds.",
    "Nothing; to impose one, set joints.coulomb_deadband in the config.",
)
DELAY_CHOICE = define(
    "ID103",
    "torque-delay",
    INFO,
    "how late the torque is against the motion, and what was done",
    "The measured torque's delay against the motion, estimated with its standard deviation, and "
    "whether the folds supported pairing each torque with the earlier motion.",
    "Nothing when the folds decided; to impose a delay, set estimation.torque_delay in seconds.",
)
GRAVITY_CHOICE = define(
    "ID104",
    "gravity-choice",
    INFO,
    "the gravity direction: the URDF's or a fitted base tilt",
    "A tilt of the base (a levelling error) was estimated with its standard deviation and kept "
    "only where the folds support it; a tilt beyond a levelling error is not fitted.",
    "Nothing; set estimation.estimate_gravity_direction to true or false to impose it.",
)
FRICTION_SHAPES = define(
    "ID105",
    "friction-shapes",
    INFO,
    "the nonlinear friction shapes fitted",
    "Sigmoid or Stribeck friction shapes were fitted by variable projection after the linear "
    "terms.",
    "Nothing.",
)
DECIMATION = define(
    "ID106",
    "decimation",
    INFO,
    "the decimation of the filtered signals",
    "The filtered signals were low-passed and decimated for the least squares (paper C's "
    "parallel decimation); the cut-off follows the derivative cut-off.",
    "Nothing.",
)
REPEATED_MOTION = define(
    "ID107",
    "repeated-motion",
    INFO,
    "a recording repeats its motion: blocks by phase",
    "A recording repeats its motion with the period given; the jackknife's blocks and the "
    "plausibility choice's folds are quarters of that period, not time blocks that would hold "
    "near-replicates of each other.",
    "Nothing.",
)
DERIVATIVES_UNUSED = define(
    "ID108",
    "logged-derivatives-unused",
    INFO,
    "the recordings' dq_ columns are not used",
    "Velocities come from the positions through the chosen filter; logged velocities are a "
    "cut-off candidate only with ddq_ columns in every recording.",
    "Log ddq_ too if you want the logged derivatives considered.",
)
DERIVATIVES_WRONG = define(
    "ID109",
    "logged-derivatives-wrong",
    CAUTION,
    "logged derivatives are not the rates they claim",
    "A dq_ column is not its positions' rate, or a ddq_ not its velocity's (degrees, a sign, "
    "another joint's column, zeros): they are not used; the derivatives come from the positions.",
    "Fix the columns named; a mistake there may run through the rest of the log.",
)
WEIGHTING_CHOICE = define(
    "ID110",
    "weighting-choice",
    INFO,
    "the least squares' row weighting the folds chose",
    "Per-joint weights (each joint's rows by its residual level, paper C's WLS) or plain least "
    "squares (every row alike) was chosen by the folds for the consistent fit. The conservative "
    "one (WLS where the residuals are white noise, plain where they are mostly misfit) stays "
    "unless the other beats it by more than the folds' spread.",
    "Nothing; to impose one, set estimation.weighting to ols or wls in the config.",
)
# ID2xx: the fit and its solvers
SDP_INACCURATE = define(
    "ID201",
    "consistency-solver-inaccurate",
    CAUTION,
    "the consistency SDP stopped early",
    "Clarabel stopped at reduced accuracy and the Newton polish did not reach the optimum: the "
    "bodies are consistent, but the fit may be slightly suboptimal.",
    "Usually harmless; rescale the problem (SI units) or report it with the data.",
)
AT_NON_NEGATIVITY = define(
    "ID202",
    "held-at-zero",
    INFO,
    "terms held at 0 by the non-negativity constraint",
    "The consistent fit's constraint (friction and armature >= 0) is active for these terms: "
    "their standard deviation does not describe them.",
    "Nothing; read them as 'at most small'.",
)
RAISED_MARGIN = define(
    "ID203",
    "raised-margin-active",
    CAUTION,
    "a raised consistency margin holds bodies at its bound",
    "The consistency margin the config raised above the default holds these bodies' "
    "pseudo-inertia at its bound: their masses and inertias are the margin's, not the data's.",
    "Lower estimation.consistency_margin.",
)
SHAPES_NOT_CONVERGED = define(
    "ID204",
    "friction-shapes-not-converged",
    CAUTION,
    "the friction-shape fit did not converge",
    "The variable-projection fit of the nonlinear friction shapes stopped before convergence.",
    "Check the friction panels; record motion through the joints' low speeds.",
)
SHAPES_AT_BOUND = define(
    "ID206",
    "friction-shapes-at-bound",
    CAUTION,
    "friction shapes at the limit the data resolve",
    "A fitted sigmoid or Stribeck shape ended on its box: the transition is faster than the "
    "velocity estimate's noise or slower than the motion; its std does not hold.",
    "A linear friction model may do as well.",
)
CONSERVATIVE_RETRY = define(
    "ID205",
    "conservative-refit",
    CAUTION,
    "physid's choices failed; the conservative fit is kept",
    "The fit with the data-chosen preprocessing explained too little of the torque; with the "
    "conservative choices (paper C's cut-off, the URDF's gravity) it does not: physid's choice "
    "failed, not the data.",
    "Nothing; the conservative fit is reported.",
)
# ID3xx: identifiability and uncertainty
PRIOR_DECIDES = define(
    "ID301",
    "prior-decides",
    CAUTION,
    "the data do not determine these quantities",
    "The URDF prior decides these reported quantities, at least in part (source 'prior' in "
    "params.json): the data alone cannot tell them apart.",
    "Read them as the URDF's values; record motion that excites them to decide them.",
)
REGROUPED = define(
    "ID302",
    "moved-with-decided",
    INFO,
    "undetermined quantities moved with the decided ones",
    "Quantities the data do not decide on their own moved more than a prior std from the URDF's "
    "with the parameters the data do decide (consistency and the prior tie a body's mass, centre "
    "of mass and inertia together); marked 'regrouped' in params.json.",
    "Read them as undetermined.",
)
TOTAL_MASS_PRIOR = define(
    "ID303",
    "total-mass-prior-decides",
    CAUTION,
    "the total-mass prior decides the moving mass",
    "The configured total-mass prior is much tighter than what the data and the body priors say "
    "about the moving mass.",
    "Know that the moving mass is your prior's; widen it to let the data speak.",
)
CORRELATED_RESIDUALS = define(
    "ID304",
    "correlated-residuals",
    INFO,
    "residuals are serially correlated",
    "The residuals' lag-1 autocorrelation is high: paper C eq. 6 standard deviations are "
    "optimistic; params.json 'std' holds the Newey-West ones, which account for it.",
    "Nothing; use the reported 'std'.",
)
STILL_JOINT = define(
    "ID305",
    "still-joint",
    CAUTION,
    "a joint barely moves: its terms are held",
    "A joint that (almost) never moves cannot decide its friction and armature: they are held at "
    "the robot file's values and reported without a std.",
    "Record motion of that joint to identify its terms.",
)
JOINT_TERMS_UNDECIDED = define(
    "ID306",
    "joint-terms-undecided",
    CAUTION,
    "the motion cannot separate these joint terms",
    "A joint that moves one way only (or near-collinear joint-term columns) cannot separate its "
    "Coulomb friction from its offset: the prior decides the split.",
    "Record the joint turning both ways.",
)
UNIDENTIFIABLE = define(
    "ID307",
    "unidentifiable-base",
    CAUTION,
    "base parameters the data do not excite",
    "These base parameters lie outside the numerical rank of the data: the prior decides them.",
    "Record a richer excitation (physid excite designs one).",
)
TILT_MOVES_MASS = define(
    "ID308",
    "tilt-moves-mass",
    CAUTION,
    "the fitted base tilt moves the moving mass",
    "Estimating the base tilt moves the moving mass by more than its standard deviation: the two "
    "are coupled on these data.",
    "Level the base and set estimation.estimate_gravity_direction: false, or give the tilt.",
)
# ID4xx: the prior and plausibility
INCONSISTENT_PRIOR = define(
    "ID401",
    "inconsistent-urdf-body",
    CAUTION,
    "a URDF body no rigid body could have",
    "A body of the robot file is not physically consistent: its prior is lifted just inside the "
    "consistent set.",
    "Fix the body's inertial in the robot file.",
)
PLAUSIBILITY_PRIOR = define(
    "ID402",
    "prior-for-plausibility",
    INFO,
    "the bodies' prior tightened for plausible masses",
    "With the default prior the fit had implausible masses; a tighter body prior makes them "
    "plausible and is reported: the folds cannot tell it apart from the default one, or (residuals "
    "that are mostly the model's misfit) predict better with it beyond their spread, or it moves "
    "no mass beyond 2 of its std (the data leave the masses undecided).",
    "Nothing; the prior decides the masses the data cannot.",
)
DATA_ASK_IMPLAUSIBLE = define(
    "ID403",
    "implausible-masses-kept",
    CAUTION,
    "the data ask for implausible masses",
    "The nearest plausible fit predicts the training folds clearly worse: the implausible masses "
    "are kept.",
    "Check the robot file (a tool it lacks?) and the torque columns.",
)
IMPLAUSIBLE = define(
    "ID404",
    "implausible-masses",
    CAUTION,
    "body masses far from the URDF's",
    "Some body masses are outside 0.5-2 x the URDF's, or the moving mass outside 0.8-1.25 x.",
    "Check the robot file and the torque scale; a tighter prior decides them.",
)
PRIOR_TIGHTENED = define(
    "ID405",
    "prior-tightened",
    CAUTION,
    "the prior was tightened to beat the URDF on the folds",
    "With the default prior the model predicted the training folds worse than the URDF's own: "
    "the data cannot support that much freedom, and the prior's standard deviations were scaled "
    "down until it does not.",
    "Record a longer, richer excitation.",
)
MASSES_LEFT_TO_DATA = define(
    "ID406",
    "implausible-masses-left-to-data",
    INFO,
    "the prior was not tightened for the implausible masses",
    "The residuals are mostly the model's misfit, so the fit with the default prior is the "
    "conservative candidate; the folds do not show the plausible fit (a tighter body prior) "
    "better beyond their spread, and it would move a mass beyond 2 of its std from where the "
    "data put it: the masses the data chose stay (named in ID404).",
    "Nothing; if you trust the URDF's masses more than these data, state a tighter "
    "estimation.prior_std_relative.",
)
# ID5xx: suspect data
SAMPLE_RATE = define(
    "ID501",
    "implausible-sample-rate",
    SUSPECT,
    "the sample rate is not a robot recording's",
    "The median sample rate lies outside 10 Hz - 100 kHz (with speeds that rule out stamps in "
    "milliseconds).",
    "Give t in seconds.",
)
GUESSED_STEP = define(
    "ID502",
    "guessed-position-step",
    SUSPECT,
    "a position step whose right side is a guess",
    "The positions step during the recording (an encoder reset or glitch) and the torques cannot "
    "tell which side is right.",
    "Check the encoder, or give the sound part alone.",
)
DEGREES = define(
    "ID503",
    "angles-in-degrees",
    SUSPECT,
    "revolute positions look like degrees",
    "A revolute joint's positions exceed a turn or its URDF limit, or move faster than any joint.",
    "Set angle_unit: degrees in the config, or convert to radians.",
)
MILLIMETRES = define(
    "ID504",
    "positions-in-millimetres",
    SUSPECT,
    "prismatic positions look like millimetres",
    "A prismatic joint's positions reach 10 x its URDF travel.",
    "Convert them to metres.",
)
MOTIONLESS = define(
    "ID505",
    "robot-did-not-move",
    SUSPECT,
    "the robot did not move",
    "Every joint's position stays within its noise in every recording: the torques show one "
    "pose's static load, not the dynamics.",
    "Record an exciting motion (physid excite designs one).",
)
AT_LIMIT = define(
    "ID506",
    "pressed-against-limit",
    SUSPECT,
    "joints pressed against their position limits",
    "A stop carries torque the model does not have, which the fit would take for the joint's "
    "friction and offset.",
    "Leave those stretches out, or give the limits the robot has.",
)
DEAD_ENCODER = define(
    "ID507",
    "dead-encoder",
    SUSPECT,
    "a joint's position stays still while its torque moves",
    "A position sensor that stopped, a position column that is not this joint's, or a joint held "
    "by a brake.",
    "Check the joint's position column.",
)
COPIED_COLUMN = define(
    "ID508",
    "copied-column",
    SUSPECT,
    "two joints' columns are the same in every row",
    "One column was written over another.",
    "Fix the logging of the columns named.",
)
CONSTANT_TORQUE = define(
    "ID509",
    "constant-torque",
    SUSPECT,
    "a torque that is the same in every row",
    "A gravity-loaded joint's torque never changes: a torque that was not logged (or a passive "
    "joint).",
    "Log the torque, or leave the joint out (a passive joint: tau_ = 0 is fine).",
)
GRAVITY_ABSENT = define(
    "ID510",
    "gravity-absent",
    SUSPECT,
    "the torques carry none of the URDF's gravity torque",
    "Gravity compensated before logging, a simulation without gravity, or another gravity "
    "direction: masses fitted to these torques are not the robot's.",
    "Log the joint torque with gravity, or give the gravity the robot has.",
)
TORQUE_FAINT = define(
    "ID511",
    "torque-faint",
    SUSPECT,
    "the torques carry a small share of gravity's, one sign",
    "Every gravity-loaded joint carries less than half of its URDF gravity torque: gravity "
    "already subtracted, another unit or gain, or a URDF whose masses are not the robot's.",
    "Check the torque signal's definition and unit.",
)
COLUMN_FIX = define(
    "ID512",
    "column-mistake",
    SUSPECT,
    "a column mistake, named by its fix",
    "A position or torque negated, off by a quarter or half turn, an axis reversed, or two "
    "columns exchanged: after the fix named every gravity-loaded joint follows its gravity "
    "torque.",
    "Apply the fix named to the recording (or the URDF's axis).",
)
COLUMN_ORDER = define(
    "ID513",
    "column-order",
    SUSPECT,
    "torque columns may be in another order",
    "A joint's gravity torque is followed by another column, or not by its own.",
    "Check the joint order of the torque columns.",
)
TORQUE_SIGN = define(
    "ID514",
    "torque-sign",
    SUSPECT,
    "the torque sign looks flipped",
    "The measured torques are anti-correlated with the URDF's gravity torque on the whole robot.",
    "Negate the torques (a sensor reporting what the robot applies to the world?).",
)
TORQUE_SCALE = define(
    "ID515",
    "implausible-torque-scale",
    SUSPECT,
    "the torque scale is implausible",
    "The measured torques are far from the URDF's gravity torque in scale: other units, wrong "
    "drive gains, or a URDF whose masses are not the robot's.",
    "Give torques in N m, or currents as i_<joint> with drive gains.",
)
JOINT_OUT_OF_SCALE = define(
    "ID516",
    "joint-out-of-scale",
    SUSPECT,
    "one joint's torque is out of scale",
    "One joint's torque alone is out of scale against the others' (another unit, motor side, a "
    "wrong drive gain).",
    "Fix that joint's torque unit or gain.",
)
SCALES_DISAGREE = define(
    "ID517",
    "joint-scales-disagree",
    SUSPECT,
    "joints' torque scales disagree 3-fold",
    "Two gravity-loaded joints read gravity scales more than 3 x apart.",
    "Check the joint order and units of the torque columns.",
)
LIFT_SIGN = define(
    "ID518",
    "lift-sign",
    SUSPECT,
    "a vertical axis's force has the wrong sign",
    "A prismatic joint that lifts the arm carries a force of the wrong sign against the weight "
    "above it.",
    "Negate that joint's force column.",
)
TIME_SCALE = define(
    "ID519",
    "time-scale",
    SUSPECT,
    "the torques follow the motion on another time scale",
    "The torques fit the motion clearly better on a time scale other than the stamps': a wrong "
    "sample time, or stamps made up at a fixed step.",
    "Check the time column.",
)
UNEXPLAINED = define(
    "ID520",
    "torque-unexplained",
    SUSPECT,
    "the model leaves most of the torque unexplained",
    "The identified model explains little of the torque it was fitted to: noise, torque varying "
    "faster than the motion, or not this robot's torque.",
    "Check that the torque columns belong to this robot and this motion.",
)
JOINT_SCALE = define(
    "ID521",
    "joint-torque-scale",
    SUSPECT,
    "a joint's torque fits far better scaled",
    "One joint's torque column fits the model far better at another scale: a unit or gain error "
    "on that joint.",
    "Fix that joint's unit or drive gain.",
)
MOUNTING = define(
    "ID522",
    "gravity-direction",
    SUSPECT,
    "the torques show gravity far from the URDF's",
    "The torques are explained much better with gravity along another direction: a robot on a "
    "wall, a ceiling or an incline.",
    "Give gravity: [gx, gy, gz] in the config.",
)
GAIN_UNDECIDED = define(
    "ID523",
    "drive-gain-undecided",
    SUSPECT,
    "a drive gain the loaded run does not decide",
    "The known payload does not load this joint enough to decide its drive gain.",
    "Record the payload run with motion that loads every joint.",
)
# ID6xx: the model against the data
WORSE_THAN_URDF = define(
    "ID601",
    "worse-than-urdf",
    CAUTION,
    "predicts held-out data worse than the URDF's model",
    "The identified model predicts the validation recordings (or the training folds) worse than "
    "the robot file's own model.",
    "Keep the URDF's model for that motion, or record a longer, richer excitation.",
)
MISSED_JOINT = define(
    "ID602",
    "joint-torque-missed",
    CAUTION,
    "the model misses a joint's torque badly",
    "A joint's torque is predicted with a relative error above 25 %, beyond its noise, in "
    "training and held out: dynamics the model does not have (a friction shape, a cable, a "
    "sensor).",
    "Do not trust that joint's terms; see its torque and friction panels in the report.",
)
FASTER_HELD_OUT = define(
    "ID603",
    "faster-than-training",
    CAUTION,
    "a held-out joint moves much faster than in training",
    "Its friction and armature were fitted on speeds the held-out runs leave.",
    "Identify on a recording that moves it as fast.",
)
NEGATIVE_COULOMB = define(
    "ID604",
    "negative-coulomb",
    CAUTION,
    "least squares puts a Coulomb friction below zero",
    "The joint's torque pushes with the motion at every reversal, which no friction does.",
    "Check this joint's torque and position signs, or whether its drive compensates friction.",
)
OFFSET_DRIFT = define(
    "ID605",
    "offset-drift",
    CAUTION,
    "a joint's torque offset drifts",
    "The residual of a joint drifts over the recording(s): a sensor offset that moves.",
    "Record shorter runs, or re-zero the sensor between runs.",
)
NOT_HELD_OUT = define(
    "ID606",
    "validation-not-held-out",
    CAUTION,
    "validation samples are training samples",
    "The validation recordings share samples with the training ones: their error is no held-out "
    "error.",
    "Validate on other recordings.",
)
VALIDATION_FILTER = define(
    "ID607",
    "validation-filter",
    INFO,
    "a faster validation run got a filter for its band",
    "A held-out recording moves faster than the training ones: its derivatives use a wider "
    "cut-off.",
    "Nothing.",
)
UNTRAINED_MOTION = define(
    "ID608",
    "untrained-motion",
    CAUTION,
    "the recording leaves the trained motion",
    "The predicted recording moves outside the range or speed the identification was trained on.",
    "Read its errors as extrapolation.",
)
LIFT_LOAD = define(
    "ID609",
    "lift-load",
    CAUTION,
    "a lift axis carries a load the model lacks",
    "A prismatic axis carries a constant force the model's masses do not give it.",
    "Check the robot file for a counterweight or spring.",
)
TORQUE_SCALE_OFF = define(
    "ID610",
    "validation-torque-scale",
    CAUTION,
    "the torque reads a factor of the prediction",
    "Scaled by one factor, the prediction would explain the recording far better: a torque gain or "
    "unit that differs from the identification's recordings.",
    "Check the drive gains and the torque unit of the recording validated.",
)
HELD_OUT_JOINT = define(
    "ID611",
    "held-out-joint-error",
    CAUTION,
    "a joint predicted badly held out, not in training",
    "A joint's held-out torque error is high while its training error is not: the training "
    "motion does not determine what the held-out motion needs there (too short, too little of "
    "that joint's motion); no dynamics need be missing from the model.",
    "Record longer or richer motion of that joint, or validate on motion like the training's.",
)
# ID7xx: inputs as the workflow read them
SIMULATED_MODEL = define(
    "ID701",
    "simulated-model",
    INFO,
    "a note on the robot file",
    "A note on how physid reads the robot file (joints locked, gripper held, ...).",
    "Nothing.",
)
UNLOGGED_LOCKED = define(
    "ID702",
    "unlogged-joints-locked",
    INFO,
    "joints no recording logs are held",
    "Joints of the robot file that no recording logs were held still at their recorded or zero "
    "position.",
    "Nothing; log them to identify them.",
)
TORQUE_NOT_LOGGED = define(
    "ID703",
    "torque-not-logged",
    CAUTION,
    "a torque column is no torque",
    "A joint's torque column is constant or empty: the joint is left out of the fit.",
    "Log its torque to identify its terms.",
)
ROBOT_NOTE = define(
    "ID704",
    "robot-file-note",
    INFO,
    "a note on the robot model",
    "How physid reads the robot file (transmissions, locked joints, merged bodies).",
    "Nothing.",
)

# PL: payload
NO_PAYLOAD = define(
    "PL101",
    "no-payload-seen",
    CAUTION,
    "the data cannot tell the payload from none",
    "Least squares reads a payload mass within its noise of zero: its centre of mass and inertia "
    "are undetermined.",
    "Record with the payload moved through more of the workspace, or give its mass (--mass).",
)
PAYLOAD_UNSEEN = define(
    "PL102",
    "payload-undetermined",
    CAUTION,
    "payload quantities the motion never shows",
    "The recordings leave these payload quantities undetermined: their values are the fit's "
    "choice, not the payload's.",
    "Record motion that turns the payload about more axes.",
)
PAYLOAD_IMPLAUSIBLE = define(
    "PL501",
    "payload-implausible",
    SUSPECT,
    "a consistent payload that cannot be right",
    "A payload heavier than twice the robot, a negative free mass, a fit worse than the robot "
    "alone, a centre of mass beyond the robot's reach, or a mass unlike the one given.",
    "Check --data and --unloaded are not swapped, the torque units and drive gains, the link.",
)
PAYLOAD_ELSEWHERE = define(
    "PL502",
    "payload-elsewhere",
    SUSPECT,
    "the payload hangs on another link",
    "A payload on another end link explains the loaded torques far better than on the one given.",
    "Give the link the payload is on.",
)
