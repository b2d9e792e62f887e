"""The finding codes of ``physid.impacts`` (documented in docs/findings.md; ``physid codes``).

IM0xx: shared by the pose and the snapshot fits; IM1xx: ``impacts identify`` (poses, paper D
eq. 27); IM2xx: ``impacts identify-snapshots`` (the impact law, eq. 4 with eqs. 10-15); IM3xx:
``impacts simulate``.
"""

from __future__ import annotations

from physid.findings import Severity, define

# --- shared ---------------------------------------------------------------------------------

MASS_FIXED = define(
    "IM001",
    "mass-fixed",
    Severity.INFO,
    "only J/m is identifiable; the mass is the one given",
    "Dividing the dynamics by the mass leaves only the ratio J/m (paper D §5.2, eq. 30 has a "
    "one-dimensional null space): the mass is fixed to the value given and only scales the "
    "reported impulses.",
    "Give the real mass (--mass) if the impulses matter; J/m and mu do not depend on it.",
)
FRICTION_LOWER_BOUND = define(
    "IM002",
    "friction-lower-bound",
    Severity.CAUTION,
    "mu is only a lower bound",
    "No contact slid in a way the data resolve (poses: raising mu by 10 % costs less than one "
    "standard deviation of the fit; snapshots: fewer than 3 sliding impacts), so mu is the "
    "least value consistent with the data (paper D Fig. 19), not an estimate.",
    "Use mu as a lower bound, or record impacts that slide (glancing, fast, spinning throws).",
)
INERTIA_RATIO_AT_BOUND = define(
    "IM003",
    "inertia-ratio-at-bound",
    Severity.ERROR,
    "J/m ran to a bound",
    "J/m ended within 0.1 % of its admissible interval from a bound (poses: 1e-4 rho^2 or "
    "rho^2, rho the largest body radius; snapshots: 1e-4 of --max-inertia-ratio or it): the "
    "data do not determine it and the value is the bound's.",
    "Record contacts that change the spin (off-centre impacts); for snapshots check "
    "--max-inertia-ratio and the contact geometry columns.",
)
UNKNOWN_COLUMNS = define(
    "IM004",
    "unknown-columns",
    Severity.INFO,
    "columns physid does not read",
    "A pose file holds columns besides t, x, y, theta and body; they are ignored.",
    "Nothing, unless a column meant to be read is misspelt.",
)

# --- identify: poses (paper D eq. 27) -------------------------------------------------------

FREE_FLIGHT = define(
    "IM101",
    "free-flight",
    Severity.ERROR,
    "the poses show no contact",
    "A contact-free ballistic flight explains the poses to within the noise and stays clear of "
    "every surface (paper D §5.3): they carry no information on J/m or mu; no NLP was solved.",
    "Check --surface (the line's angle and offset) and the units of x and y, or record a throw "
    "that hits a surface.",
)
NO_CONTACT = define(
    "IM102",
    "no-contact-impulse",
    Severity.ERROR,
    "the fitted trajectory has no contact",
    "The reconstruction's total normal impulse is below 1e-3 of the gravity impulse over the "
    "recording: the fit explains the poses without contact, so J/m and mu are not determined.",
    "Check --surface and the units of the poses; record a throw that hits a surface.",
)
NO_SPIN_CHANGE = define(
    "IM103",
    "no-spin-change",
    Severity.ERROR,
    "the contacts do not change the spin",
    "J/m is seen only through the change of angular velocity the contact impulses cause "
    "(paper D eq. 31); the contacts change it by less than 3 times the angular-velocity noise "
    "of a frame difference (e.g. a body dropped flat).",
    "Record impacts off the centre of mass (a tilted or spinning body).",
)
FLAT_OBJECTIVE = define(
    "IM104",
    "flat-objective",
    Severity.ERROR,
    "the objective has no clear minimum in J/m",
    "The standard deviation of J/m from the objective's curvature exceeds 30 % of the estimate, "
    "or the re-solves at J/m (1 +- 2 %) did not both end higher: the data do not pin J/m down.",
    "Record more impacts or a faster camera; pool several throws (repeat --data).",
)
AMBIGUOUS_INERTIA_RATIO = define(
    "IM105",
    "ambiguous-inertia-ratio",
    Severity.CAUTION,
    "another start fits as well at another J/m",
    "A converged solve from another warm start ends with an objective within 2 sqrt(6 N_m) "
    "(two standard deviations of the noise's chi^2) of the best but more than 2 standard "
    "deviations away in J/m: the reported standard deviation does not cover this ambiguity.",
    "Treat J/m as known only to within the two values named; pool more throws (repeat --data).",
)
BUDGET_SPENT = define(
    "IM106",
    "budget-spent",
    Severity.ERROR,
    "the solves stopped at their budget",
    "All IPOPT solves together used their iteration budget (or the wall-clock safety stop): "
    "the estimates are the best iterate, not a converged fit. Valid throws use a fraction of "
    "it; poses in the wrong unit or of another body run into it.",
    "Check the units of t, x, y, theta, --shape and --surface; a valid long recording may need "
    "IdentifyOptions(iteration_budget=...).",
)
SOLVER_FAILED = define(
    "IM107",
    "solver-failed",
    Severity.ERROR,
    "IPOPT did not converge",
    "The best solve ended without IPOPT's convergence test (its return status is named): the "
    "estimates are its last iterate.",
    "Check the poses for outliers and the noise given (--noise); try a finer --max-substep.",
)
FIT_ABOVE_NOISE = define(
    "IM108",
    "fit-above-noise",
    Severity.CAUTION,
    "the reconstruction misses the poses by more than the noise",
    "The best fit's chi^2 (with the weights 1/sigma^2 of --noise and --noise-angle) exceeds "
    "3 N_m + 3 sqrt(6 N_m), the 3-sigma bound of a chi^2 of 3 N_m degrees of freedom: the "
    "noise is larger than given, or the rigid-impact model misses something (soft contact, a "
    "wrong shape or surface); the standard deviations then understate the error.",
    "Give the real noise level, check --shape and --surface, and read J/m and mu with care.",
)
RETRIED_STARTS = define(
    "IM109",
    "retried-inertia-starts",
    Severity.INFO,
    "solved again from other J/m starts",
    "The first solves did not fit the poses to the noise level, so every warm start was solved "
    "again from J/m = 0.3 and 0.7 rho^2; the lowest objective was kept.",
    "Nothing; diagnostics.starts lists every solve.",
)

# --- identify-snapshots: the impact law -----------------------------------------------------

SIGN_CONVENTION = define(
    "IM201",
    "contact-sign-convention",
    Severity.SUSPECT,
    "another sign convention of the contact geometry fits clearly more impacts",
    "With some parts of the contact Jacobian rows jn = (n, GQ x n), jt = (t, GQ x t) negated "
    "(another tool's convention for the tangent, the angular column or the normal), clearly "
    "more impacts are consistent: they pass the rigid-body checks and the impact law fitted "
    "under that convention misses them by less than the outlier bound (McNemar's test on the "
    "impacts consistent under one convention only, at 3 standard deviations). The finding "
    "names the columns to negate and gives J/m and mu under that convention; the estimates "
    "reported are those of the data as given.",
    "Negate the named columns in the file (or fix the exporter's convention) and run again.",
)
PARAMETER_AT_BOUND = define(
    "IM202",
    "parameter-at-bound",
    Severity.CAUTION,
    "an estimate sits at its bound",
    "J/m or mu is within 0.1 % of its interval from a bound, or nearer to it than its standard "
    "deviation: the bound, not the impacts, holds it, and its standard deviation does not "
    "describe it. With residuals far above the noise (IM203) the status is at_bound.",
    "Widen the bound named (--max-inertia-ratio, --mu-max) or check the impacts.",
)
RESIDUALS_ABOVE_NOISE = define(
    "IM203",
    "residuals-above-noise",
    Severity.CAUTION,
    "the impact law misses the impacts by more than the noise",
    "The robust standard deviation of the residuals is above 5 sigma_v (a law that fits "
    "impacts with velocity noise sigma_v gives about 1.4): the law does not fit them at this "
    "estimate, or the noise is larger than --noise-velocity.",
    "Give the real noise level; check the contact geometry columns and their sign convention.",
)
NOT_APPROACHING = define(
    "IM210",
    "impact-not-approaching",
    Severity.CAUTION,
    "impacts whose contact point does not approach the surface",
    "The pre-impact velocity of the contact point along the normal is not negative (beyond "
    "3 sigma_v): no impact happens; these impacts are left out of the fit.",
    "Check the normal's direction (from the surface into the body) and the pre/post columns.",
)
PULLING_IMPULSE = define(
    "IM211",
    "impact-impulse-pulls",
    Severity.CAUTION,
    "impacts whose normal impulse pulls",
    "The velocity change along the normal is negative (beyond 3 sigma_v): a contact can only "
    "push; these impacts are left out of the fit.",
    "Check the normal's direction and that pre and post are not swapped.",
)
STILL_ENTERING = define(
    "IM212",
    "impact-still-entering",
    Severity.CAUTION,
    "impacts whose contact point still enters the surface afterwards",
    "The post-impact velocity of the contact point along the normal is negative (beyond "
    "3 sigma_v): the impact did not stop the approach; these impacts are left out of the fit.",
    "Check the post samples (taken after the contact ended?) and the contact point.",
)
OUTSIDE_CONE = define(
    "IM213",
    "impact-outside-friction-cone",
    Severity.CAUTION,
    "impacts whose tangential impulse exceeds every admissible mu",
    "The tangential velocity change exceeds --mu-max times the normal one (beyond 3 sigma_v): "
    "no Coulomb friction within the bound gives it; these impacts are left out of the fit.",
    "Check the tangent and the contact point, or raise --mu-max.",
)
SPIN_AGAINST_TORQUE = define(
    "IM214",
    "impact-spin-against-torque",
    Severity.CAUTION,
    "impacts whose spin changes against the torque of the impulse",
    "The change of angular velocity has the opposite sign of GQ x (the impulse): no J/m > 0 "
    "gives it; these impacts are left out of the fit. Many of them point to a sign convention "
    "of the contact point or of omega (IM201).",
    "Check the contact point columns (px, py or jn_w, jt_w) and the sense of omega.",
)
ENERGY_GAIN = define(
    "IM215",
    "impact-energy-gain",
    Severity.CAUTION,
    "impacts whose kinetic energy rises",
    "The kinetic energy after the impact exceeds the one before for every J/m within the "
    "bounds (beyond the noise): no passive contact gives it; these impacts are left out.",
    "Check the velocity columns' units and that pre and post are not swapped.",
)
LAW_OUTLIER = define(
    "IM216",
    "impact-law-outlier",
    Severity.CAUTION,
    "impacts the law misses at the estimate",
    "The impact's residual exceeds 5 robust standard deviations (and 5 sigma_v) at the "
    "estimate; it is kept, its weight limited by the robust loss.",
    "Look at these impacts (impacts.csv): two contacts at once, a mis-cut event, an outlier.",
)

# --- simulate -------------------------------------------------------------------------------

STEP_FAILED = define(
    "IM301",
    "step-solver-failed",
    Severity.ERROR,
    "the per-step solver failed",
    "One time step's complementarity problem was not solved (Lemke's secondary ray, or IPOPT's "
    "failure): the trajectory stops there and the poses written end at that time.",
    "Use the other per-step solver (--solver lcp or nlp) or a smaller --dt.",
)
