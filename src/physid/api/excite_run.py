"""API face of ``physid excite``: an optimised excitation trajectory for a robot (finite Fourier
series, Swevers et al. 1997; docs/excitation.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from physid.api.results import Named, Outcome
from physid.api.robot_runs import EXCITE
from physid.errors import check_numbers
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike
    from physid.excite.design import ExcitationResult


@one_blas_thread
def excite_design(
    urdf: PathLike,
    *,
    config: PathLike | None = None,
    duration: float | None = None,
    harmonics: int = 5,
    base_frequency: float | None = None,
    criterion: Literal["cond", "logdet"] = "cond",
    seed: int = 0,
    verbose: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ExciteResult:
    """Design an excitation trajectory for the robot of ``urdf`` (``physid excite``): a Fourier
    series per joint optimised by IPOPT under the joint limits, the nominal torques' effort
    limits and, from the robot file's collision geometry, self-collision.

    Args:
        urdf: The robot (URDF or MJCF): kinematics, nominal inertias and joint limits.
        config: A YAML config: the identify keys that shape the model and an ``excitation``
            section (limits, margin, prior, grids, iterations, time limit, sample rate).
        duration: The length of the written trajectory [s], a whole number of periods (None:
            one period; alone, it sets the period).
        harmonics: The harmonics of the Fourier series per joint.
        base_frequency: The base frequency [Hz] (None: 1 / ``duration``, else 0.1 Hz).
        criterion: ``cond`` (the condition number of the column-scaled base regressor) or
            ``logdet`` (log det of the base parameters' information matrix, D-optimal).
        seed: The seed of the first random start (the config's ``excitation.starts`` starts
            use ``seed``, ``seed + 1``, ...).
        verbose: Print IPOPT's iteration log.
        progress: Receives a progress line every few seconds.

    Returns:
        An :class:`ExciteResult`: ``status`` (ok, not_converged, time_limit, stalled or
        numerical_failure; not_converged too when the dense check finds a limit broken),
        ``findings`` (codes EX1xx-EX2xx), ``message`` (the condition number before and after),
        ``to_dict()`` (the summary JSON), ``raw`` (the
        :class:`~physid.excite.design.ExcitationResult`); ``save(out)`` writes the trajectory
        CSV ``out`` and the summary beside it.
    """
    from physid.excite.workflow import design_run

    numbers = {"duration": duration, "harmonics": harmonics, "base_frequency": base_frequency}
    check_numbers(EXCITE, numbers | {"seed": seed})  # before the model is loaded
    run = design_run(
        urdf,
        config_path=config,
        duration_s=duration,
        harmonics=harmonics,
        base_frequency_hz=base_frequency,
        criterion=criterion,
        seed=seed,
        verbose=verbose,
        progress=progress,
    )
    result = run.result
    return ExciteResult(
        result.status,
        verdict(result),
        Named(),
        run.summary,
        result,
        run.write,
        False,
        findings=result.findings,
    )


def verdict(result: ExcitationResult) -> str:
    """One line on the design: the condition number of the start and of the result."""
    return (
        f"condition number {result.start_quality.condition_number:.4g} -> "
        f"{result.quality.condition_number:.4g} ({result.iterations} IPOPT iterations, "
        f"{result.ipopt_status})"
    )


@dataclass(frozen=True)
class ExciteResult(Outcome):
    """:func:`excite_design`'s result: ``save(out, summary=None)`` writes the trajectory CSV and the
    summary (default: ``out`` with the suffix .json)."""

    def save(self, out: str | Path, summary: str | Path | None = None) -> Path:
        """Write the trajectory CSV ``out`` and its summary JSON (atomically)."""
        return self.write(Path(out), summary)
