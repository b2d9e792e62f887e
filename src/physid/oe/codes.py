"""The finding codes of ``physid.oe`` (documented in docs/findings.md; ``physid codes``).

OE1xx: what physid made of the inputs (the recording, the robot file, the config) and the
choices it made for them; OE2xx: what the solve and its fit say about the result.
"""

from __future__ import annotations

from physid.findings import Severity, define

HELD_JOINTS = define(
    "OE101",
    "held-joints",
    Severity.CAUTION,
    "joints the recording does not log are held still",
    "The robot file has joints the recording has no q_ column for (a gripper's fingers beside an "
    "arm's log); they are held still at the positions named, their bodies riding on their "
    "parents, as physid identify and online hold them.",
    "Nothing, if those joints did not move; else log them (q_ and tau_ columns).",
)
UNKNOWN_COLUMNS = define(
    "OE102",
    "unread-columns",
    Severity.CAUTION,
    "columns of the recording are not used",
    "The recording has columns physid oe does not read (their names are not in the trajectory "
    "contract of docs/oe.md); a misspelt joint or sensor column is ignored this way.",
    "Check the names listed: rename a column that was meant to be read, or drop it.",
)
REGRIDDED = define(
    "OE103",
    "regridded",
    Severity.INFO,
    "a jittery log resampled on a uniform grid",
    "The time stamps jitter by more than 1 % of their median step; optimal estimation needs one "
    "node per constant step, so every column was resampled at the median step (commands and "
    "contact flags held, the rest interpolated).",
    "Nothing; log at a steadier rate to keep the original samples.",
)
SENSOR_NOT_USED = define(
    "OE104",
    "sensor-not-used",
    Severity.CAUTION,
    "a force/torque sensor physid cannot model is not used",
    "A sensor's ft_<frame>_* columns were read, but the wrench at that frame cannot be modelled "
    "(for example a foot's, which would include the unknown contact force); its columns are "
    "left out of the estimate.",
    "Nothing, or give the sensor of a frame whose subtree has no contact.",
)
FREE_FLIGHT = define(
    "OE105",
    "no-contact-flags",
    Severity.CAUTION,
    "no contact flags: the robot is modelled in free flight",
    "A floating base without contact_<frame> columns is modelled with no foot on the ground; a "
    "legged robot that stands or walks then needs its ground forces from the process noise, "
    "and the estimate is far off (a trunk can come out thousands of times its mass).",
    "Give the feet's contact flags as contact_<frame> columns (docs/oe.md).",
)
BASE_VELOCITY_UNOBSERVED = define(
    "OE106",
    "base-velocity-unobserved",
    Severity.INFO,
    "the base's linear velocity is not measured",
    "Without base_v* or acc_* columns the base's linear velocity is observed only through the "
    "dynamics and the legs.",
    "Give acc_* (the IMU's accelerometer) when the log has it, or noise.foot_velocity.",
)
RADIUS_CHOSEN = define(
    "OE107",
    "contact-radius-chosen",
    Severity.INFO,
    "the feet's radius chosen",
    "The config gives no contacts.radius: the feet's radius is the robot file's collision "
    "spheres on the contact frames, else fitted to the stance feet's rolling in the recording "
    "(0 when the data cannot tell); result.json soft_contacts.radius says which.",
    "Nothing; give contacts.radius to set it.",
)
CONTACT_AT_SPHERE = define(
    "OE108",
    "contact-at-sphere-centre",
    Severity.INFO,
    "a foot rolls about its collision sphere's centre",
    "A contact frame's collision sphere is centred off the frame: the foot rolls about the "
    "sphere's centre, where the contact is modelled (unless a force/torque sensor measures the "
    "wrench at the frame, which then stays the contact point).",
    "Nothing.",
)
FLOOR_CHOSEN = define(
    "OE109",
    "contact-change-floor-chosen",
    Severity.INFO,
    "the process-noise floor near contact changes chosen",
    "The config gives no noise.contact_change_v: the floor on the velocity process noise near "
    "contact flag changes, and its window, were chosen from the one-step defects at the "
    "initial guess (variance components); result.json soft_contacts.contact_change says how.",
    "Nothing; give noise.contact_change_v (0: none) to set it.",
)
JOINT_TERMS_FROM_MJCF = define(
    "OE110",
    "joint-terms-from-mjcf",
    Severity.INFO,
    "the MJCF's joint terms are in the dynamics",
    "An MJCF is a simulator's model: its armature, damping and frictionloss move the robot, so "
    "the dynamics include them (Coulomb smoothed over joints.coulomb_speed), held at its values.",
    "Nothing; a config 'joints: {}' leaves them out, 'joints: {estimate: all}' fits them.",
)
JOINT_TERMS_ESTIMATED = define(
    "OE111",
    "joint-terms-estimated",
    Severity.INFO,
    "joint friction and armature estimated with the bodies",
    "The joint terms named are estimated with the bodies, as logarithms: a value the robot file "
    "or the config gives is the start and the centre of a log-normal prior (joints.prior_std), "
    "an undeclared one starts small under a wide prior. Without a config 'joints' entry this is "
    "the default for a robot file that declares none: a real joint's friction and rotor inertia "
    "left out go into the process noise and bias or stall the solve.",
    "Nothing; result.json and params.json 'joints' hold the values and where each came from.",
)
NO_JOINT_TERMS = define(
    "OE112",
    "no-joint-terms",
    Severity.CAUTION,
    "the dynamics have no joint friction or armature",
    "The config's 'joints' gives no joint term and estimates none: a real leg's or arm's "
    "friction and rotor inertia then go into the process noise, which can stall or bias the "
    "solve.",
    "Drop the 'joints' entry (they are then estimated), or give 'joints: {estimate: all}'.",
)
COULOMB_WIDTHS = define(
    "OE113",
    "coulomb-widths",
    Severity.INFO,
    "the Coulomb friction's smoothing widened around fast reversals",
    "Each joint's Coulomb friction is smoothed as tanh(v / v_c). Where the recorded joint "
    "velocity jumps across zero by more than 2 v_c between two samples (a swinging leg's "
    "reversal), the friction would flip sign within one node, where the solver's linear model of "
    "it is wrong and the gaps there do not close; around each such reversal (2 nodes either "
    "side) v_c is widened to half the jump. Everywhere else, and on joints that reverse slowly, "
    "v_c keeps the default, so slow motion keeps its full friction.",
    "Nothing; give joints.coulomb_speed to set one width for every joint.",
)
SOFT_FEET = define(
    "OE114",
    "soft-feet-estimated",
    Severity.INFO,
    "the feet's compliance and floor spring estimated with the bodies",
    "The contacts are soft (MuJoCo's soft contact): a foot point yields under its force by a "
    "compliance C and a critically damped spring of time constant tau returns it to the "
    "floor's height, so a loaded foot sinks by C tau^2 per newton and lands without an "
    "impulse. Both were estimated from the data under wide priors; result.json "
    "contact_compliance has them with their std. A compliance near its prior's floor means "
    "rigid feet.",
    "Nothing (contacts.compliance: estimate asked for it); 0, the default, gives paper B's "
    "rigid feet (then a touch-down is a plastic impact).",
)
NOISE_MISFIT = define(
    "OE201",
    "noise-model-misfit",
    Severity.CAUTION,
    "the noise model does not fit the data",
    "The reduced chi-square of the fit is above 3: the residuals are larger than the noise "
    "standard deviations given. The reported standard deviations are widened by its root and "
    "by the residuals' serial correlation, but the estimate may be biased.",
    "Check the contact flags, the noise config and the commands (docs/oe.md, 'Checking the fit').",
)
CONFOUNDED_JOINT_TERM = define(
    "OE202",
    "joint-term-confounded",
    Severity.CAUTION,
    "a joint term decided by its prior moves with a body",
    "The data do not tell this joint term (its posterior is its prior) and it is correlated "
    "above 0.5 with an estimated body's parameters: its prior decides those too.",
    "Give the joint term's value under 'joints', or record motion that separates them.",
)
MASS_CHANGE = define(
    "OE203",
    "mass-beyond-robot-file",
    Severity.INFO,
    "an estimated body's mass against the robot file's",
    "The estimated mass minus the robot file's, with its standard deviation: what the body "
    "carries beyond the file's (a payload, if the file's is the bare robot).",
    "Nothing.",
)
BIAS_UNSETTLED = define(
    "OE204",
    "accelerometer-bias-unsettled",
    Severity.CAUTION,
    "the accelerometer bias did not settle",
    "The rounds that alternate the solve and the accelerometer's constant bias (8 at most) "
    "ended with the bias still moving by more than 1e-3 m/s^2 per round; the estimate is that "
    "of the last round's bias and the status is not_converged.",
    "Check the acc_* columns against imu.frame (a wrong frame reads as a bias that keeps "
    "moving); set imu.estimate_bias: false when the accelerometer is calibrated.",
)
UNMODELLED_BASE_FORCE = define(
    "OE205",
    "unmodelled-base-force",
    Severity.CAUTION,
    "the process noise holds the floating base up: a force the model lacks",
    "The process noise on the floating base's linear velocity has a mean beyond 3 standard "
    "errors of the noise model: a vertical force the dynamics do not produce (soft feet that "
    "sink and creep under the rigid point contacts, late contact flags). A mass on the base "
    "and a constant vertical force are confounded, so the base body's mass may be off by about "
    "|F_z| / g; that bound is added to its mass variance (the reported mass std includes it).",
    "Read the mass with that std; stiffer or better-timed contacts (or a contact model that "
    "follows the feet) remove the force.",
)
