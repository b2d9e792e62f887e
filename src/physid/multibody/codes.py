"""The finding codes of ``physid.multibody`` (documented in docs/findings.md; ``physid codes``).

MB1xx: the inputs and the choices made before the fit; MB2xx: the equation-error fit (paper A
§3-4); MB3xx: the output-error refinement; MB4xx: simulations and numerics.
"""

from __future__ import annotations

from physid.findings import Severity, define

# ------------------------------------------------------------------ inputs and choices (MB1xx)
DEFAULT_ESTIMATE = define(
    "MB101",
    "default-estimate-set",
    Severity.INFO,
    "no 'estimate' in the config: the default set is estimated",
    "The config lists no parameters to estimate, so per hinge the principal inertia of its "
    "child about the hinge axis, its viscous friction and its constant Coulomb torque are "
    "estimated; the masses stay at the URDF's (they set the scale a free swing cannot).",
    "List the parameters under 'estimate:' in the config to choose others.",
)
IGNORED_COLUMNS = define(
    "MB102",
    "ignored-columns",
    Severity.INFO,
    "columns of a recording are not used",
    "The recording has columns the multibody estimator does not read (it reads t, q_<joint> "
    "and u_<joint> of motor hinges; dq_ columns are ignored: the rates are estimated states).",
    "Nothing, unless a column was meant to be read: check its name against the URDF's joints.",
)
QUANTIZED_ANGLES = define(
    "MB103",
    "quantized-angles",
    Severity.INFO,
    "a joint's angles are encoder counts: its noise is floored at the count's",
    "The angle differences of the joint are whole multiples of one step (an encoder's count), "
    "and a joint that stands still repeats the same count, which reads as no noise at all. Its "
    "noise is taken as at least the quantisation noise step/sqrt(12), which weighs its "
    "residuals.",
    "Nothing; give noise: {joint: rad} in the config if the encoder's noise is known better.",
)
START_REPAIRED = define(
    "MB104",
    "start-repaired",
    Severity.CAUTION,
    "an estimated inertia's start could not be simulated and was replaced",
    "The URDF or config gives an estimated mass or principal inertia that is zero or makes "
    "the body's inertia indefinite (a point mass, a violated triangle inequality). The fit "
    "starts from, and its prior is centred on, a plausible replacement: the hinge-to-centre "
    "distance squared times the mass over 3 (a slender rod) or the triangle inequality's "
    "least value.",
    "Give the body's inertia in the URDF or under bodies: in the config.",
)
PLAUSIBLE_BOX = define(
    "MB105",
    "plausibility-box",
    Severity.INFO,
    "estimated masses and inertias are kept within a factor of their start",
    "Each estimated mass and principal inertia is a log-normal prior centred on the URDF's "
    "(or the config's) value and is bounded to the plausibility box between that value "
    "divided and multiplied by the plausibility factor, unless the config's bounds say "
    "otherwise: an equation-error fit on low-rate data can otherwise collapse an "
    "unexcited body to zero, where it cannot be simulated.",
    "Give bounds.<name> in the config to widen a box you know to be too narrow.",
)
STATES_FIRST = define(
    "MB106",
    "states-first",
    Severity.INFO,
    "the states were estimated at the start parameters first",
    "--states-first: a state-only Levenberg-Marquardt run with the parameters fixed at their "
    "start gave the joint fit its starting states.",
    "Nothing.",
)
NOT_COMPILED = define(
    "MB107",
    "not-compiled",
    Severity.INFO,
    "--compile could not compile the residual functions",
    "The per-step functions run interpreted (slower, same numbers): no C compiler on PATH, or "
    "the compilation failed (the message says why).",
    "Install a C compiler (cc or gcc) or leave out --compile.",
)

# --------------------------------------------------------------- equation-error fit (MB2xx)
COLLAPSED_BODY = define(
    "MB201",
    "collapsed-body",
    Severity.SUSPECT,
    "a body's mass or inertia ran to the lower end of its plausibility box",
    "The equation-error fit drove an estimated mass or principal inertia to its lower bound. "
    "Paper A's impulse residuals shrink with a body's inertia, so a body the data barely "
    "excite (an arm at rest, samples far apart) lowers the cost by collapsing: the value is "
    "not a measurement.",
    "Read the refinement's finding (the output error decides it when it can run); otherwise "
    "fix the body at its URDF value, record motion that moves it, or use a finer --dt.",
)
AT_BOUND = define(
    "MB202",
    "estimate-at-bound",
    Severity.CAUTION,
    "an estimated parameter ended at a bound",
    "A friction term at 0 or a parameter at a bound of the config: the data did not decide "
    "it (too little sliding, or another term took its part). It is a bound, not a "
    "measurement, and its standard deviation describes nothing.",
    "For dry friction: --refine (the output error decides it on low-rate data), the other "
    "law (coulomb [N m] vs dry r*mu [m]), or a recording with more sliding; for a config "
    "bound: widen bounds.<name>.",
)
SHRUNK = define(
    "MB203",
    "shrunk-body",
    Severity.CAUTION,
    "a body's mass or inertia ended far below its start",
    "An estimated mass or principal inertia ended below 1 % of its start without reaching "
    "its bound: a body the data cannot hold up drifting toward zero, or a start far off.",
    "Compare with the refinement's value; fix it at a known value, or give a better start.",
)
RESTARTED = define(
    "MB204",
    "restarted",
    Severity.INFO,
    "a fit that collapsed a body was restarted from consistent states",
    "A body collapsed and Levenberg-Marquardt did not converge: the fit was restarted from "
    "states estimated at the start parameters; the restart is kept when its cost is lower.",
    "Nothing; the numbers say whether the restart was kept.",
)
NOT_IDENTIFIABLE = define(
    "MB205",
    "not-identifiable",
    Severity.CAUTION,
    "the data do not determine an estimated parameter",
    "Its standard deviation is larger than its value, or infinite (a direction of the "
    "parameters the residuals do not see): its value is the start's or the prior's, not the "
    "data's.",
    "Fix it at a known value, or record motion that excites it.",
)
NO_COVARIANCE = define(
    "MB206",
    "no-covariance",
    Severity.CAUTION,
    "the parameters' covariance could not be computed",
    "The linearised covariance (paper A eqs. 3.26-3.32) failed (a singular projection); the "
    "standard deviations are not available.",
    "Read the estimates without uncertainties, or refit with fewer parameters.",
)
REJECTED_STEPS = define(
    "MB207",
    "rejected-steps",
    Severity.INFO,
    "trial steps that overflowed were rejected",
    "Levenberg-Marquardt tried steps whose residuals were not finite (a state turned by more "
    "than the step bound, a parameter outside the simulatable set); each was rejected and "
    "the damping raised, as for any step that does not lower the cost.",
    "Nothing, unless the fit did not converge: then start closer or use a finer --dt.",
)
FALLBACK = define(
    "MB208",
    "physical-fallback",
    Severity.ERROR,
    "the fit ended where the model cannot be simulated: its start is reported",
    "The estimated parameters make a body's inertia indefinite (products of inertia beyond "
    "the principal ones) although every iterate was kept in the plausibility box; the start, "
    "which can be simulated, is reported instead.",
    "Fix the products of inertia, or estimate fewer of them.",
)
IMPLAUSIBLE = define(
    "MB209",
    "implausible-body",
    Severity.CAUTION,
    "a body's mass or inertia ended at the upper end of its plausibility box",
    "An estimated mass or principal inertia ran to the largest value its plausibility box "
    "allows: the data ask for more than the URDF makes plausible (a wrong URDF, a missing "
    "load), or another term is absorbed in it.",
    "Check the URDF's body; widen bounds.<name> in the config if the value is right.",
)

# ------------------------------------------------------------------ refinement (MB3xx)
REFINED = define(
    "MB301",
    "refined",
    Severity.INFO,
    "the output-error refinement's values are reported",
    "The parameters were refined by multiple shooting of the identified model over windows "
    "of the recordings (the dynamics hard, the angle errors at the samples divided by their "
    "noise); the numbers give the windowed cost and the simulation error before and after.",
    "Nothing.",
)
REFINEMENT_NOT_USED = define(
    "MB302",
    "refinement-not-used",
    Severity.CAUTION,
    "the refinement did worse than the equation-error values: they are kept",
    "The refinement ended with a windowed cost above that of the equation-error values on the "
    "same windows, or with standard deviations above the values and 100x the equation-error "
    "ones (the windows do not determine them). result.json 'refinement' has its values.",
    "Use longer windows (--refine-windows) or more evaluations (--refine-evaluations).",
)
REFINEMENT_AT_BOUND = define(
    "MB303",
    "refinement-at-bound",
    Severity.CAUTION,
    "the refinement left a parameter at a bound",
    "The output-error refinement ended with a parameter at a bound: the recordings' motion "
    "does not decide it (a friction term that never acts, a body that never moves).",
    "Record motion that excites it, or fix it at a known value.",
)
REFINEMENT_SKIPPED = define(
    "MB304",
    "refinement-skipped",
    Severity.CAUTION,
    "the refinement could not run",
    "The output-error refinement simulates constant Coulomb torques only, not r*mu or "
    "Stribeck friction, and needs at least one estimated parameter.",
    "Use the constant-torque law (coulomb) to have dry friction refined.",
)
REFINEMENT_AUTO = define(
    "MB305",
    "refinement-by-default",
    Severity.INFO,
    "the equation error's bias was likely: the short-window refinement ran",
    "The equation-error fit collapsed a body to the lower end of its plausibility box, or "
    "estimated dry friction from samples further apart than two model steps (its free states "
    "between samples let viscous friction take the dry friction's part, with nothing at a "
    "bound): the output-error refinement over 1 s windows ran by default to decide them.",
    "Nothing; --no-refine skips it, --refine runs the full refinement (longer windows).",
)
UNPHYSICAL_REFINEMENT_START = define(
    "MB306",
    "refinement-start-replaced",
    Severity.INFO,
    "the refinement started from the config's values",
    "The equation-error values could not be simulated or simulated the windows worse than the "
    "config's (start) values: the refinement started from those.",
    "Nothing.",
)

MISFIT = define(
    "MB307",
    "model-misfit",
    Severity.CAUTION,
    "the refined model misses the samples by more than their noise",
    "Simulated through the refinement's windows, the identified model misses a joint's samples "
    "by more than twice its noise: the estimates are the best of this discrete model (its "
    "step, its friction law), a bias their standard deviations do not describe. On a 20 Hz "
    "Furuta at h = 10 ms the arm's Coulomb torque came out 12 % (5 std) low with the model "
    "2.5x off the noise; refined at 2 ms, 0.6 % (1.4 std) at the noise (docs/multibody.md).",
    "Refine at a finer model step (--refine-dt, with the config's damping about twice it), or "
    "read the estimates as this model's, not the mechanism's.",
)

# ------------------------------------------------------------- simulations, numerics (MB4xx)
NOT_SIMULATABLE = define(
    "MB401",
    "not-simulatable",
    Severity.ERROR,
    "the identified model cannot be simulated",
    "A body of the reported parameters has no positive mass or no positive definite inertia: "
    "no simulation error is given and the model cannot be used in a simulator.",
    "Read the collapsed-body finding; fix that body at a known value.",
)
CONSTRAINT_VIOLATED = define(
    "MB402",
    "constraint-violated",
    Severity.SUSPECT,
    "a simulation opened its hinges: the trajectory is not the mechanism's",
    "The largest holonomic constraint violation exceeds the limit: the control is too strong "
    "for the step (a unit slip: a control in the wrong unit), or the compliance too large.",
    "Check the control's unit and magnitude; use a smaller --dt or a stiffer compliance.",
)
LCP_FAILURES = define(
    "MB403",
    "lcp-failures",
    Severity.CAUTION,
    "Lemke's algorithm ended on a ray at some steps",
    "The dry-friction complementarity problem of some steps had no solution found (a ray); "
    "those steps used Lemke's last point.",
    "Use a smaller --dt or a softer friction_compliance.",
)
NUMERICAL_WARNING = define(
    "MB404",
    "numerical-warning",
    Severity.CAUTION,
    "NumPy reported overflow or invalid values during the run",
    "An arithmetic overflow or invalid value (a NaN) was met and caught: the counts and the "
    "first message say where. The status reports whether the result is usable.",
    "Check the data for outliers and the config for extreme values; report it if it recurs.",
)
SIMULATION_ERROR = define(
    "MB405",
    "simulation-error",
    Severity.INFO,
    "the identified model simulated from the first state",
    "The RMS angle error per joint of the identified model simulated from the first estimated "
    "state, at the measured samples, over the first second and the whole recording, and its "
    "ratio to the joint's noise (paper A §4.5's validation).",
    "Nothing; a ratio far above 1 says the model does not reproduce the motion.",
)
