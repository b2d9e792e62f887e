"""The concrete filter settings of one identification, chosen once for all training recordings.

Paper C §2.3 derives the Butterworth cut-off ``omega_q`` of the positions from the bandwidth of
the excitation (``omega_q = 10 omega_dyn``). physid measures that bandwidth on all training
recordings together (a windowed spectrum, :func:`physid.signal.butterworth.excitation_bandwidth_hz`)
so every recording is filtered alike, and records the result in ``params.json`` so that
``physid validate`` differentiates new recordings with the very same filter.

The parallel decimation (torques and regressor low-passed alike, §2.3 steps 3-4) defaults to
three times the derivative cut-off ``omega_q`` (:data:`DECIMATION_PER_CUTOFF`; capped at 40 % of
the sample rate), not paper C's ``2 omega_dyn``: the parameters are judged on how well they
predict the raw recorded torque, and the regressor carries products of velocities
(``dq_i dq_j``, Coriolis and centrifugal terms) whose spectrum reaches twice the states' band, so
decimating at ``omega_q`` itself cut both sides of the equation short of the torque it is
judged on. At ``3 omega_q`` the held-out error is that of no decimation, at a fraction of its
cost on fast-sampled recordings (docs/benchmarks.md, "Why the defaults are what they are").
(Paper C's ``2 omega_dyn`` throws away even more, and leaves a few dozen samples for a hundred
parameters on short slow recordings.) The decimation factor is lowered (the cut-off raised) until at
least :data:`MIN_EQUATIONS_PER_PARAMETER` equations per estimated parameter remain.

The same spectra give the velocity noise of the derivative filter per joint
(:func:`physid.signal.butterworth.derivative_noise_std`), the floor of the automatic Coulomb
deadband (:mod:`.deadband`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from physid.errors import InputError
from physid.files.config import METHODS, FilterConfig
from physid.recordings.trajectory import Trajectory
from physid.signal.butterworth import (
    Decimation,
    PooledSpectra,
    derivative_noise_std,
    measurable_bandwidth_hz,
    pooled_spectra,
    rule_of_thumb_cutoffs,
)

MIN_EQUATIONS_PER_PARAMETER = 20
# The decimation cut-off over the derivative cut-off (module docstring: the regressor's
# velocity products reach beyond the states' band). With sigmoid or Stribeck friction it is 1: their
# columns are nonlinear in the filtered velocity, and torque content above the states' band
# (the narrow static-friction peak at each reversal) that those columns cannot follow biased
# the static level (tests/test_friction_models.py).
DECIMATION_PER_CUTOFF = 3.0
DECIMATION_PER_CUTOFF_NONLINEAR_FRICTION = 1.0
_RAISE_STEP = 1.25  # geometric step of the decimation cut-off while too few equations remain


@dataclass(frozen=True)
class Preprocessing:
    """What was done to the signals: a :class:`FilterConfig` with every cut-off made concrete.

    ``filter.decimation_cutoff_hz == 0`` means no decimation. ``notes`` say what was chosen
    automatically and why (printed by the CLI, shown in the report).
    """

    filter: FilterConfig
    excitation_bandwidth_hz: float | None
    notes: tuple[str, ...] = ()
    velocity_noise_std: tuple[float, ...] | None = None  # per joint, joint units / s
    # per recording, what physid.recordings.timebase found and did
    # (physid.recordings.trajectory.checked_time_base)
    time_base: tuple[dict, ...] = ()
    # per recording, the rows dropped as duplicates and the corrupt samples repaired
    # (physid.recordings.trajectory.repaired_samples)
    row_repairs: tuple[dict, ...] = ()
    # how the derivative cut-off was set: paper C's rule, or the folds' choice
    cutoff_note: str | None = None

    @property
    def all_notes(self) -> tuple[str, ...]:
        """The cut-off's note (if any), then the others."""
        return ((self.cutoff_note,) if self.cutoff_note else ()) + self.notes

    def as_dict(self) -> dict:
        f = self.filter
        return {
            "time_base": list(self.time_base),
            "row_repairs": list(self.row_repairs),
            "method": f.method,
            "butterworth_cutoff_hz": f.butterworth_cutoff_hz,
            "decimation_cutoff_hz": f.decimation_cutoff_hz,
            "decimation_factor": f.decimation_factor,
            "nvr": f.nvr,
            "excitation_bandwidth_hz": self.excitation_bandwidth_hz,
            "velocity_noise_std": None
            if self.velocity_noise_std is None
            else list(self.velocity_noise_std),
            "notes": list(self.all_notes),
        }

    def summary(self) -> str:
        """One line for the terminal: the filter that was applied."""
        f = self.filter
        parts = [f"derivatives: {f.method}"]
        if f.method == "classical":
            parts[0] += f" (Butterworth {f.butterworth_cutoff_hz:.3g} Hz)"
        if f.method.startswith("irwsm"):
            parts[0] += f" (NVR {'maximum likelihood' if f.nvr is None else f'{f.nvr:g}'})"
        if f.decimation_cutoff_hz:
            parts.append(
                f"decimation: {f.decimation_cutoff_hz:.3g} Hz low-pass"
                + (f", factor {f.decimation_factor}" if f.decimation_factor else "")
            )
        else:
            parts.append("no decimation")
        if self.excitation_bandwidth_hz is not None:
            parts.append(f"excitation bandwidth {self.excitation_bandwidth_hz:.3g} Hz")
        return "; ".join(parts)


def preprocessing_from_dict(document: dict, source: str = "params.json") -> Preprocessing:
    """Read back :meth:`Preprocessing.as_dict` (as written into ``params.json``)."""
    try:
        method = document["method"]
        if method not in METHODS:
            raise ValueError(f"method {method!r} is not one of {list(METHODS)}")
        number = lambda key: None if document.get(key) is None else float(document[key])  # noqa: E731
        factor = document.get("decimation_factor")
        filter_config = FilterConfig(
            method=method,
            butterworth_cutoff_hz=number("butterworth_cutoff_hz"),
            decimation_cutoff_hz=number("decimation_cutoff_hz"),
            decimation_factor=None if factor is None else int(factor),
            nvr=number("nvr"),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"preprocessing: unreadable ({error})", source=source) from None
    bandwidth = document.get("excitation_bandwidth_hz")
    noise = document.get("velocity_noise_std")
    try:
        noise = None if noise is None else tuple(float(x) for x in noise)
    except (TypeError, ValueError):
        raise InputError(
            "preprocessing.velocity_noise_std: not a list of numbers", source=source
        ) from None
    return Preprocessing(
        filter_config, None if bandwidth is None else float(bandwidth), velocity_noise_std=noise
    )


def is_resolved(options: FilterConfig) -> bool:
    """True when ``options`` says exactly what to do (no cut-off left to a rule of thumb)."""
    if options.method == "classical" and options.butterworth_cutoff_hz is None:
        return False
    return options.decimation_cutoff_hz is not None or (
        options.method == "given" and not options.decimation_factor
    )


def _kept_equations(
    trajectories: list[Trajectory], cutoff_hz: float, n_joints: int, factor: int | None = None
) -> int:
    """Equations left after decimating at ``cutoff_hz`` by ``factor`` (None: the automatic
    factor of that cut-off)."""
    total = 0
    for trajectory in trajectories:
        rate = trajectory.sample_rate_hz
        if factor:
            decimation = Decimation(rate, cutoff_hz, factor)
        else:
            decimation = Decimation.for_cutoff(rate, cutoff_hz)
        margin = decimation.settling_samples
        total += max(0, (trajectory.n_samples - 2 * margin) // decimation.factor)
    return total * n_joints


def decimation_ceiling_hz(sample_rate_hz: float, factor: int | None = None) -> float:
    """The highest decimation cut-off: 80 % of the Nyquist frequency after decimating by
    ``factor`` (the configured one; None: the automatic factor, which is chosen for the cut-off,
    so 40 % of the sample rate, the cap of :meth:`Decimation.for_cutoff`)."""
    return 0.4 * sample_rate_hz / (factor or 1)


def resolve_preprocessing(
    options: FilterConfig,
    trajectories: list[Trajectory],
    n_parameters: int,
    *,
    decimation_per_cutoff: float = DECIMATION_PER_CUTOFF,
    spectra: PooledSpectra | None = None,
) -> Preprocessing:
    """Make every cut-off of ``options`` concrete for these training recordings (``spectra``:
    their :func:`~physid.signal.butterworth.pooled_spectra`, when the caller has them).

    An unset Butterworth cut-off is ``omega_q = 10 omega_dyn`` of the pooled excitation bandwidth;
    an unset decimation cut-off is ``omega_q`` as well (module docstring), raised until at least
    20 equations per parameter remain, and dropped (no decimation) if the ceiling (40 % of the
    sample rate) leaves too few. A user-given decimation is kept, with a note when it leaves
    too few.
    The ``given`` method is not decimated unless asked to.
    """
    notes: list[str] = []
    if spectra is None:
        spectra = pooled_spectra([(t.q, t.sample_rate_hz) for t in trajectories])
    omega_dyn, omega_q, _ = rule_of_thumb_cutoffs(spectra)
    butterworth = options.butterworth_cutoff_hz
    cutoff_note = None
    if options.method == "classical" and butterworth is None:
        butterworth = omega_q
        cutoff_note = (
            f"Butterworth cut-off {omega_q:.3g} Hz: 10 x the excitation bandwidth {omega_dyn:.3g} "
            "Hz (paper C)"
        )
    decimation, factor = _decimation(
        options, trajectories, n_parameters, butterworth or omega_q, decimation_per_cutoff, notes
    )
    velocity_noise = None
    if options.method != "given":
        cutoff = butterworth if options.method == "classical" else omega_q
        velocity_noise = tuple(float(x) for x in derivative_noise_std(spectra, cutoff))
        if options.method != "classical":
            notes.append(
                f"velocity noise estimated for a Butterworth at {omega_q:.3g} Hz (the smoother's "
                "own noise gain is not computed)"
            )
    resolved = replace(
        options,
        butterworth_cutoff_hz=butterworth,
        decimation_cutoff_hz=float(decimation),
        decimation_factor=factor if decimation else None,  # else per recording, from the cut-off
    )
    return Preprocessing(resolved, omega_dyn, tuple(notes), velocity_noise, cutoff_note=cutoff_note)


def _decimation(
    options: FilterConfig,
    trajectories: list[Trajectory],
    n_parameters: int,
    cutoff_hz: float,
    decimation_per_cutoff: float,
    notes: list[str],
) -> tuple[float, int | None]:
    """The decimation cut-off [Hz] (0: none) and factor for the derivative cut-off
    ``cutoff_hz`` (module docstring of :func:`resolve_preprocessing`); what was done is added
    to ``notes``."""
    n_joints = trajectories[0].q.shape[1]
    recordings = [(t.q, t.sample_rate_hz) for t in trajectories]
    needed = MIN_EQUATIONS_PER_PARAMETER * n_parameters
    decimation = options.decimation_cutoff_hz
    factor = options.decimation_factor
    lowest_rate = min(rate for _, rate in recordings)
    if decimation is None and options.method == "given" and not factor:
        decimation = 0.0
    elif decimation is None and factor:  # the factor is the user's: only the cut-off is ours
        omega_f = decimation_per_cutoff * cutoff_hz
        decimation = min(omega_f, decimation_ceiling_hz(lowest_rate, factor))
        notes.append(
            f"decimation cut-off {decimation:.3g} Hz: {decimation_per_cutoff:g} x the derivative "
            "cut-off"
            if decimation == omega_f
            else f"decimation cut-off {decimation:.3g} Hz: 80 % of the Nyquist frequency after "
            f"decimating by the configured factor {factor} ({decimation_per_cutoff:g} x the "
            f"derivative cut-off, {omega_f:.3g} Hz, would alias)"
        )
        if _kept_equations(trajectories, decimation, n_joints, factor) < needed:
            notes.append(
                f"the configured decimation factor {factor} leaves fewer than "
                f"{MIN_EQUATIONS_PER_PARAMETER} equations per parameter ({n_parameters} "
                "parameters)"
            )
    elif decimation is None:
        ceiling = decimation_ceiling_hz(lowest_rate)
        omega_f = min(decimation_per_cutoff * cutoff_hz, ceiling)
        decimation = omega_f
        while _kept_equations(trajectories, decimation, n_joints) < needed and decimation < ceiling:
            decimation = min(decimation * _RAISE_STEP, ceiling)
        if _kept_equations(trajectories, decimation, n_joints) < needed:
            notes.append(
                f"no decimation: even at {decimation:.3g} Hz fewer than "
                f"{MIN_EQUATIONS_PER_PARAMETER} equations per parameter would remain"
            )
            decimation = 0.0
        elif decimation > omega_f * (1 + 1e-9):
            notes.append(
                f"decimation cut-off raised from {omega_f:.3g} Hz ({decimation_per_cutoff:g} x the "
                f"derivative cut-off, or 40 % of the sample rate) to "
                f"{decimation:.3g} Hz to keep >= {MIN_EQUATIONS_PER_PARAMETER} equations per "
                f"parameter ({n_parameters} parameters)"
            )
        else:
            notes.append(
                f"decimation cut-off {decimation:.3g} Hz: {decimation_per_cutoff:g} x the "
                "derivative cut-off (or 40 % of the sample rate)"
            )
    elif decimation > 0 and _kept_equations(trajectories, decimation, n_joints) < needed:
        notes.append(
            f"the configured decimation ({decimation:g} Hz) leaves fewer than "
            f"{MIN_EQUATIONS_PER_PARAMETER} equations per parameter ({n_parameters} parameters)"
        )
    return decimation, factor


CUTOFF_FACTORS = (1.0, 0.5, 2.0)  # of the conservative 10 x excitation bandwidth
DISTINCT_CUTOFFS = 1.25  # candidates closer than this ratio to a kept one are dropped


def cutoff_candidates(
    options: FilterConfig,
    trajectories: list[Trajectory],
    n_parameters: int,
    *,
    decimation_per_cutoff: float = DECIMATION_PER_CUTOFF,
    recorded_derivatives: bool = False,
) -> list[Preprocessing]:
    """The preprocessings whose Butterworth cut-off the training data may choose between
    (:mod:`physid.offline.choose.selection`), the conservative one (paper C's ``10 omega_dyn``)
    first: half and twice it, and the positions' measurable band
    (:func:`physid.signal.butterworth.measurable_bandwidth_hz`), all below 40 % of the sample
    rate; last, with ``recorded_derivatives`` (every recording has ``dq_`` and ``ddq_``
    columns), those velocities and accelerations as recorded (method ``given``, no filter, no
    decimation). A simulator logs its exact ones, which follow a transient (a servo's start)
    that no cut-off of the positions can. A cut-off the user set, or another
    derivative method, has no alternatives."""
    spectra = pooled_spectra([(t.q, t.sample_rate_hz) for t in trajectories])
    per = {"decimation_per_cutoff": decimation_per_cutoff, "spectra": spectra}
    conservative = resolve_preprocessing(options, trajectories, n_parameters, **per)
    if options.method != "classical" or options.butterworth_cutoff_hz is not None:
        return [conservative]
    base = conservative.filter.butterworth_cutoff_hz
    # a configured decimation factor bounds the band the decimated data keep: a cut-off above
    # it would differentiate what the decimation then removes (and its own decimation cut-off
    # would alias above the decimated Nyquist frequency)
    cap = decimation_ceiling_hz(spectra.lowest_rate_hz, options.decimation_factor)
    wanted = [base * f for f in CUTOFF_FACTORS[1:]]
    wanted.append(min(measurable_bandwidth_hz(spectra), cap))
    kept = [base]
    for cutoff in wanted:
        cutoff = min(cutoff, cap)
        if all(max(cutoff / k, k / cutoff) >= DISTINCT_CUTOFFS for k in kept):
            kept.append(cutoff)
    candidates = [conservative]
    for cutoff in kept[1:]:
        chosen = replace(options, butterworth_cutoff_hz=cutoff)
        resolved = resolve_preprocessing(chosen, trajectories, n_parameters, **per)
        candidates.append(
            replace(resolved, excitation_bandwidth_hz=conservative.excitation_bandwidth_hz)
        )
    if recorded_derivatives:
        recorded = resolve_preprocessing(
            replace(options, method="given"), trajectories, n_parameters, **per
        )
        candidates.append(
            replace(recorded, excitation_bandwidth_hz=conservative.excitation_bandwidth_hz)
        )
    return candidates


# A held-out recording whose excitation bandwidth exceeds the training's by more than this factor
# moves faster than the motion the training filter was chosen on (held_out_filter).
HELD_OUT_FASTER = 1.25


def _slower_filter(options: FilterConfig, recording: Trajectory) -> tuple[FilterConfig, str] | None:
    """The training's filter with its cut-offs brought within a held-out ``recording`` sampled
    too slowly for them (above :func:`decimation_ceiling_hz` of its rate: 40 %), and a note;
    None when it carries them: otherwise a run held out at a lower rate than the training
    fails after the whole fit, blaming a decimation_factor nobody set."""
    rate = recording.sample_rate_hz
    ceiling = decimation_ceiling_hz(rate)
    derivative = options.butterworth_cutoff_hz if options.method == "classical" else None
    too_high = [
        (name, value)
        for name, value in (
            ("derivative", derivative),
            ("decimation", options.decimation_cutoff_hz),
        )
        if value is not None and value > ceiling
    ]
    if not too_high:
        return None
    lowered = replace(options, decimation_cutoff_hz=None, decimation_factor=None)
    capped = ""
    if derivative is not None and derivative > ceiling:
        lowered = replace(lowered, butterworth_cutoff_hz=ceiling)
        capped = f"derivatives at {ceiling:.3g} Hz and "
    listed = ", ".join(f"{name} {value:.3g} Hz" for name, value in too_high)
    return lowered, (
        f"{recording.source}: sampled at {rate:.4g} Hz, too slowly for the training's cut-offs "
        f"({listed}, above 40 % of its rate): predicted with {capped}the decimation resolved "
        "on it"
    )


def held_out_filter(
    options: FilterConfig, training_bandwidth_hz: float | None, recording: Trajectory
) -> tuple[FilterConfig, str | None]:
    """The derivative filter that predicts a held-out ``recording``: the training's, unless the
    recording moves faster than the training runs (its excitation bandwidth above
    :data:`HELD_OUT_FASTER` x theirs) and paper C's conservative cut-off for its own band (10 x
    its bandwidth, at most 40 % of its rate) is above that factor x the training's; then that
    one, the decimation resolved on the recording, and a note.

    The cut-off chosen on the training runs' folds does not speak for a faster motion: the
    training filter cuts into the faster run's own band, and the held-out error it reports is
    the filter's lag, not the model's."""
    slower = _slower_filter(options, recording)
    if slower is not None:
        return slower
    cutoff = options.butterworth_cutoff_hz
    if options.method != "classical" or cutoff is None or not training_bandwidth_hz:
        return options, None
    bandwidth, own_cutoff, _ = rule_of_thumb_cutoffs([(recording.q, recording.sample_rate_hz)])
    # the bandwidth is floored at the spectrum's resolution, 10 / duration: a 5 s held-out run
    # reads 2 Hz however slowly it moves, which is no evidence of a faster motion
    resolution = 10.0 * recording.sample_rate_hz / len(recording.q)
    # and both by a margin: a held-out run a little faster would otherwise change the cut-off by
    # a hair, a change of nothing with a warning
    if (
        bandwidth <= HELD_OUT_FASTER * max(training_bandwidth_hz, resolution)
        or own_cutoff <= HELD_OUT_FASTER * cutoff
    ):
        return options, None
    note = (
        f"{recording.source}: moves faster than the training runs (excitation bandwidth "
        f"{bandwidth:.3g} Hz against {training_bandwidth_hz:.3g} Hz): predicted with derivatives "
        f"at {own_cutoff:.3g} Hz (10 x its bandwidth) instead of the training's {cutoff:.3g} Hz, "
        "which would attenuate its motion and overstate the model's error"
    )
    faster = replace(
        options, butterworth_cutoff_hz=own_cutoff, decimation_cutoff_hz=None, decimation_factor=None
    )
    return faster, note
