"""The shapes of nonlinear joint friction, fitted jointly with the linear parameters by variable
projection (models in :mod:`physid.robot.friction`).

For fixed shape parameters ``s`` (sigmoid ``phi2, phi3``; Stribeck ``vs``) the identification
model ``tau = W(s) theta`` is linear, so the problem is separable (Golub and Pereyra 1973):

    min_s  V(s) = min_theta ||w (tau - W(s) theta)||^2.

:func:`fit_friction_shapes` minimises V by Levenberg-Marquardt (:mod:`physid.numerics.small_lm`)
on Kaufman's (1975) variable-projection Jacobian ``J = P_perp (dW/ds theta)``, where ``P_perp``
projects out the columns of ``W`` (the step is the Gauss-Newton step of the joint problem with
``theta`` at its optimum).
Everything runs on the exact per-joint reduction (:mod:`.reduced`) of ``[W(s) | dW/ds]``, one pass
over the training windows per evaluation: the derivative columns are low-passed and decimated
like the others (the filter is linear, so ``dW/ds theta`` of the filtered columns is the filtered
``dW/ds theta``). Positive shapes (``phi2``, ``vs``) are searched in log coordinates, ``phi3``
in units of the joint's RMS speed; the start is the best of :data:`START_FRACTIONS` of each
joint's RMS speed (the same fraction for all joints), since V is not convex in the shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from physid.files.config import FilterConfig
from physid.findings import Finding
from physid.numerics.linalg import unit_norm_columns
from physid.numerics.small_lm import LMStop, minimise
from physid.offline.choose.deadband import DEADBAND_NOISE_STDS
from physid.offline.codes import FRICTION_SHAPES, SHAPES_AT_BOUND, SHAPES_NOT_CONVERGED
from physid.offline.observe.least_squares import least_squares
from physid.offline.observe.observations import Observations, friction_chunks, friction_windows
from physid.offline.observe.preprocessing import Preprocessing
from physid.offline.observe.reduced import ReducedSystem, ReductionAccumulator
from physid.offline.observe.store import ObservationStore
from physid.offline.observe.windows import Recording
from physid.robot.friction import SHAPE_PARAMETERS, initial_shape
from physid.robot.model import RobotModel
from physid.robot.regressor import base_parameters, data_rank_deficiency, friction_shape_pairs

START_FRACTIONS = (0.01, 0.03, 0.1, 0.3)  # transition speed / the joint's RMS speed
MAX_ITERATIONS = 40
RELATIVE_TOLERANCE = 1e-7  # stop when an accepted step lowers V by less than this fraction
SHIFT_LIMIT = 3.0  # |phi3| <= SHIFT_LIMIT x RMS speed
# Positive shapes stay within these multiples of the joint's RMS speed scale (phi2 in 1/speed).
SCALE_LIMITS = (1e-4, 30.0)


# How the variable-projection search ended: the shared Levenberg-Marquardt's stop
ShapeSearch = LMStop


@dataclass(frozen=True)
class FrictionShapeFit:
    """The fitted shapes, their linearised standard deviations and how the search went."""

    names: tuple[str, ...]  # "<joint>.<shape>", e.g. "joint_1.phi2"
    values: np.ndarray  # (k,)
    std: np.ndarray  # (k,) from the variable-projection Jacobian, white-residual assumption
    iterations: int
    evaluations: int  # passes over the training data
    cost_history: tuple[float, ...]  # weighted residual V / ||w tau||^2 after each accepted step
    status: ShapeSearch
    start_fraction: float
    start_costs: dict[float, float]  # start fraction -> relative V
    at_bound: tuple[str, ...] = ()  # shapes that ended on their box (_Chart): not data-decided

    def findings(self) -> list[Finding]:
        """What the user must know: shapes the box decided, a search that did not converge."""
        out = []
        if self.at_bound:
            out.append(
                SHAPES_AT_BOUND(
                    "friction shapes at the limit of what the data resolve (their std does not "
                    f"hold): {', '.join(self.at_bound)}; the transition is faster than the "
                    "velocity estimate's noise/deadband or slower than the motion: a linear "
                    "model may do as well",
                    names=self.at_bound,
                )
            )
        if self.status is not ShapeSearch.CONVERGED:
            out.append(
                SHAPES_NOT_CONVERGED(
                    f"friction shape search ended with status {self.status}",
                    numbers={"iterations": self.iterations},
                )
            )
        return out

    def as_finding(self) -> Finding:
        """The fitted shapes as an ``info`` finding."""
        return FRICTION_SHAPES(
            self.note(),
            numbers=self.std_by_name
            | {f"{n}.value": v for n, v in zip(self.names, self.values.tolist(), strict=True)},
            names=self.names,
        )

    @property
    def std_by_name(self) -> dict[str, float]:
        return dict(zip(self.names, self.std.tolist(), strict=True))

    def as_dict(self) -> dict:
        """The record written to params.json (``extra.friction_shapes``)."""
        return {
            "method": "variable projection (Golub-Pereyra), Levenberg-Marquardt",
            "names": list(self.names),
            "values": self.values.tolist(),
            "std": self.std.tolist(),
            "status": str(self.status),
            "iterations": self.iterations,
            "passes_over_data": self.evaluations,
            "relative_cost_history": list(self.cost_history),
            "start_fraction_of_rms_speed": self.start_fraction,
            "start_relative_costs": {str(k): v for k, v in self.start_costs.items()},
            "at_bound": list(self.at_bound),
        }

    def note(self) -> str:
        listed = ", ".join(
            f"{name} {value:.4g} +- {std:.2g}"
            for name, value, std in zip(self.names, self.values, self.std, strict=True)
        )
        return (
            f"friction shapes by variable projection ({self.status}, {self.iterations} "
            f"iterations, {self.evaluations} passes; start {self.start_fraction:g} x RMS speed): "
            f"{listed}"
        )


@dataclass(frozen=True)
class _Evaluation:
    model: RobotModel
    system: ReducedSystem  # standard columns, then one extra column per shape pair
    theta: np.ndarray  # (p,) least squares on the base columns, 0 elsewhere
    cost: float  # ||w (tau - W theta)||^2


def _shapes_of(model: RobotModel) -> np.ndarray:
    return np.concatenate([np.asarray(model.shape_of(j), float) for j in range(model.n_joints)])


def _with_shapes(model: RobotModel, values: np.ndarray) -> RobotModel:
    shapes, k = [], 0
    for joint in model.joint_names:
        size = len(SHAPE_PARAMETERS[model.layout.friction_of(joint)])
        shapes.append(tuple(float(v) for v in values[k : k + size]))
        k += size
    return replace(model, friction_shape=tuple(shapes))


def with_initial_shapes(model: RobotModel, rms_speed: np.ndarray, fraction: float) -> RobotModel:
    """``model`` with every nonlinear joint's shape started at ``fraction`` x its RMS speed."""
    return replace(
        model,
        friction_shape=tuple(
            initial_shape(model.layout.friction_of(joint), fraction * rms_speed[j])
            for j, joint in enumerate(model.joint_names)
        ),
    )


def resolvable_speed(model: RobotModel, preprocessing: Preprocessing) -> np.ndarray:
    """Per joint, the slowest speed over which a change of friction can be read from the data:
    the Coulomb deadband, and ``DEADBAND_NOISE_STDS`` x the velocity estimate's noise std."""
    speed = np.zeros(model.n_joints)
    if model.coulomb_deadband is not None:
        speed = np.maximum(speed, model.coulomb_deadband)
    if preprocessing.velocity_noise_std is not None:
        noise = np.asarray(preprocessing.velocity_noise_std, float)
        speed = np.maximum(speed, DEADBAND_NOISE_STDS * noise)
    return speed


@dataclass(frozen=True)
class _Chart:
    """The search coordinates of the shapes and their box. Positive shapes (``phi2`` [1/speed],
    ``vs`` [speed]) are searched as logarithms, ``phi3`` in units of the joint's RMS speed.

    The box keeps every transition speed (the sigmoid's width ``4 / phi2``, the Stribeck ``vs``)
    between ``resolvable`` and ``SCALE_LIMITS[1]`` x the RMS speed: a change of friction over
    speeds the velocity estimate cannot resolve (its noise, the Coulomb deadband) is not in the
    data, and a fit allowed there trades a vanishing column for a huge coefficient (a static
    friction hundreds of times the true one over a transition speed nobody can see).
    """

    logarithmic: np.ndarray  # (k,) bool
    scale: np.ndarray  # (k,) the joint's RMS speed
    low: np.ndarray  # (k,) box in chart coordinates
    high: np.ndarray

    @classmethod
    def of(cls, model: RobotModel, rms_speed: np.ndarray, resolvable: np.ndarray) -> _Chart:
        logarithmic, scale, low, high = [], [], [], []
        for j, joint in enumerate(model.joint_names):
            rms = max(float(rms_speed[j]), 1e-6)
            slowest = min(max(SCALE_LIMITS[0] * rms, float(resolvable[j])), 0.5 * rms)
            fastest = SCALE_LIMITS[1] * rms
            for name in SHAPE_PARAMETERS[model.layout.friction_of(joint)]:
                logarithmic.append(name != "phi3")
                scale.append(rms)
                if name == "phi3":
                    low.append(-SHIFT_LIMIT)
                    high.append(SHIFT_LIMIT)
                elif name == "phi2":  # width 4 / phi2 between slowest and fastest
                    low.append(np.log(4.0 / fastest))
                    high.append(np.log(4.0 / slowest))
                else:
                    low.append(np.log(slowest))
                    high.append(np.log(fastest))
        return cls(*(np.array(a) for a in (logarithmic, scale, low, high)))

    def to_chart(self, values: np.ndarray) -> np.ndarray:
        return np.where(self.logarithmic, np.log(np.abs(values) + 1e-300), values / self.scale)

    def from_chart(self, y: np.ndarray) -> np.ndarray:
        return np.where(self.logarithmic, np.exp(y), y * self.scale)

    def clip(self, y: np.ndarray) -> np.ndarray:
        return np.clip(y, self.low, self.high)

    def slope(self, y: np.ndarray) -> np.ndarray:
        """d(shape)/d(chart coordinate) per shape parameter."""
        return np.where(self.logarithmic, np.exp(y), self.scale)


class _Passes:
    """Evaluations of V and its Jacobian, one pass over the training windows each."""

    def __init__(
        self,
        trajectories: list[Recording],
        options: FilterConfig,
        store: ObservationStore,
        weighting: str,
        note: Callable[[str], None],
    ) -> None:
        self.trajectories, self.options, self.store = trajectories, options, store
        self.weighting, self.note = weighting, note
        self.count = 0
        # The states do not depend on the shapes. The Kalman smoothers' states are kept for the
        # search: their maximum-likelihood NVR search would otherwise run once per evaluation and
        # dominate the run; the Butterworth states are cheap to recompute, and a recording
        # streamed from disk stays there.
        self._windows: dict[int, list] = {}
        self.columns: np.ndarray | None = None
        self.weights: np.ndarray | None = None

    def windows(self, model: RobotModel, k: int) -> list | None:
        """Recording ``k``'s filtered windows, kept after the first pass when they are the
        Kalman smoothers' (None: recompute them)."""
        if not self.options.method.startswith("irwsm"):
            return None
        if k not in self._windows:
            self._windows[k] = friction_windows(model, self.trajectories[k], self.options)
        return self._windows[k]

    def blocks(self, model: RobotModel, chunk: Observations, joint_block: np.ndarray) -> np.ndarray:
        n_inertial = model.layout.n_inertial
        fitted = model.fitted[None, :, None]
        return np.concatenate([chunk.W[..., :n_inertial], joint_block * fitted], axis=-1)

    def evaluate(self, model: RobotModel) -> _Evaluation:
        self.count += 1
        self.note("friction shapes")
        total = ReductionAccumulator()
        fitted = model.fitted[None, :, None]
        for k, trajectory in enumerate(self.trajectories):
            pairs = friction_chunks(model, trajectory, self.options, self.windows(model, k))
            for chunk, (block, derivative) in zip(self.store.of_recording(k), pairs, strict=True):
                total.add(self.blocks(model, chunk, block), chunk.tau, derivative * fitted)
        system = replace(total.system(), fitted=None if np.all(model.fitted) else model.fitted)
        if self.columns is None:  # the base columns these data excite, fixed for the search
            columns = base_parameters(model).independent
            X, _ = system.stacked(columns)
            self.columns = np.delete(columns, data_rank_deficiency(X))
            self.weights = least_squares(system, self.columns, self.weighting).weights
        X, u = system.stacked(self.columns, self.weights)
        scaled, norms = unit_norm_columns(X)
        solution, *_ = np.linalg.lstsq(scaled, u, rcond=1e-12)
        theta = np.zeros(system.n_standard)
        theta[self.columns] = solution / norms
        residual = u - X @ theta[self.columns]
        return _Evaluation(model, system, theta, float(residual @ residual))

    def jacobian(self, evaluation: _Evaluation, pairs: np.ndarray, n_shape: int) -> np.ndarray:
        """Kaufman's variable-projection Jacobian (rows of the reduced system, n_shape)."""
        system, theta = evaluation.system, evaluation.theta
        p = system.n_standard
        extras, _ = system.stacked(p + np.arange(len(pairs)), self.weights)
        derivative = np.zeros((extras.shape[0], n_shape))
        for k, (index, shape) in enumerate(pairs):
            derivative[:, shape] += theta[index] * extras[:, k]
        X, _ = system.stacked(self.columns, self.weights)
        projection, *_ = np.linalg.lstsq(X, derivative, rcond=1e-12)
        return -(derivative - X @ projection)


def fit_friction_shapes(
    model: RobotModel,
    trajectories: list[Recording],
    options: FilterConfig,
    store: ObservationStore,
    rms_speed: np.ndarray,
    *,
    resolvable_speed: np.ndarray | None = None,
    weighting: str = "wls",
    note: Callable[[str], None] | None = None,
) -> tuple[RobotModel, ObservationStore, ReducedSystem, FrictionShapeFit]:
    """Fit the friction shapes of ``model``'s nonlinear joints (module docstring).

    ``store`` holds the training observations of ``trajectories`` (in order) as collected; their
    inertial columns are kept and the joint-term block is rebuilt for each trial shape.
    ``rms_speed`` (n,) is each joint's RMS speed, the scale of the shapes; ``resolvable_speed``
    (n,) the slowest speed over which a change of friction can be read from the velocity
    estimate (:class:`_Chart`). Returns the model with the fitted shapes, the store and reduced
    system of its observations, and the fit's record.
    """
    passes = _Passes(trajectories, options, store, weighting, note or (lambda _m: None))
    resolvable = np.zeros(model.n_joints) if resolvable_speed is None else resolvable_speed
    chart = _Chart.of(model, rms_speed, np.asarray(resolvable, float))

    def start(fraction: float) -> RobotModel:
        shapes = _shapes_of(with_initial_shapes(model, rms_speed, fraction))
        return _with_shapes(model, chart.from_chart(chart.clip(chart.to_chart(shapes))))

    starts = {fraction: passes.evaluate(start(fraction)) for fraction in START_FRACTIONS}
    tau2 = sum(float(np.sum((chunk.tau * passes.weights) ** 2)) for chunk in store) or 1.0
    start_fraction = min(starts, key=lambda f: starts[f].cost)
    current = starts[start_fraction]
    pairs = friction_shape_pairs(current.model)
    names = tuple(
        f"{joint}.{name}"
        for joint in model.joint_names
        for name in SHAPE_PARAMETERS[model.layout.friction_of(joint)]
    )

    def evaluate(y: np.ndarray) -> tuple[float, _Evaluation]:
        evaluation = passes.evaluate(_with_shapes(model, chart.from_chart(y)))
        return evaluation.cost, evaluation

    def linearize(y: np.ndarray, evaluation: _Evaluation) -> tuple[np.ndarray, np.ndarray]:
        jacobian = passes.jacobian(evaluation, pairs, len(names)) * chart.slope(y)
        return jacobian, _residual(passes, evaluation)

    search = minimise(
        evaluate,
        linearize,
        chart.to_chart(_shapes_of(current.model)),
        max_iterations=MAX_ITERATIONS,
        converged=lambda _y0, _y1, before, after: (before - after) / before < RELATIVE_TOLERANCE,
        project=chart.clip,
        start=(current.cost, current),
    )
    y, current, status, iterations = search.y, search.state, search.stop, search.iterations
    history = [cost / tau2 for cost in search.costs]
    values = chart.from_chart(y)
    margin = 1e-6 * np.maximum(1.0, np.abs(y))
    on_box = (y <= chart.low + margin) | (y >= chart.high - margin)
    at_bound = tuple(name for name, hit in zip(names, on_box, strict=True) if hit)
    std = _shape_std(passes, current, pairs, len(names))
    fitted_model = _with_shapes(model, values)
    final_store, system = _final_observations(passes, fitted_model)
    record = FrictionShapeFit(
        names,
        values,
        std,
        iterations,
        passes.count + 1,
        tuple(history),
        status,
        start_fraction,
        {f: e.cost / tau2 for f, e in starts.items()},
        at_bound,
    )
    return fitted_model, final_store, system, record


def _residual(passes: _Passes, evaluation: _Evaluation) -> np.ndarray:
    X, u = evaluation.system.stacked(passes.columns, passes.weights)
    return u - X @ evaluation.theta[passes.columns]


def _shape_std(
    passes: _Passes,
    evaluation: _Evaluation,
    pairs: np.ndarray,
    n_shape: int,
) -> np.ndarray:
    """Linearised standard deviations of the shapes: ``sigma^2 (J^T J)^-1`` with Kaufman's
    Jacobian in the shapes' own units (the residual taken as white)."""
    jacobian = passes.jacobian(evaluation, pairs, n_shape)
    rows = evaluation.system.n_rows
    dof = max(rows - len(passes.columns) - n_shape, 1)
    sigma2 = evaluation.cost / dof
    try:
        covariance = sigma2 * np.linalg.inv(jacobian.T @ jacobian)
    except np.linalg.LinAlgError:
        return np.full(n_shape, np.inf)
    return np.sqrt(np.clip(np.diag(covariance), 0.0, None))


def _final_observations(
    passes: _Passes, model: RobotModel
) -> tuple[ObservationStore, ReducedSystem]:
    """The training observations and their reduced system under the fitted shapes."""
    store, total = ObservationStore(), ReductionAccumulator()
    for k, trajectory in enumerate(passes.trajectories):
        pairs = friction_chunks(model, trajectory, passes.options, passes.windows(model, k))
        for chunk, (block, _) in zip(passes.store.of_recording(k), pairs, strict=True):
            W = passes.blocks(model, chunk, block)
            store.append(replace(chunk, W=W, joint_terms=()), k)
            total.add(W, chunk.tau, chunk.G)  # G: the gravity-direction fit comes next
    system = total.system()
    fitted = None if np.all(model.fitted) else model.fitted
    return store, replace(system, fitted=fitted)
