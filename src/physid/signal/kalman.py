"""Integrated-random-walk Kalman filter and fixed-interval smoother (paper C §3, eqs. 9-23).

Each column y(k) is an integrated random walk (IRW) seen in white noise: IRWSM 1 has the state
[x, Δx] (eqs. 9-12), IRWSM 2 [x, Δx, Δ²x] (eq. 23); process noise drives the last state only, with
variance NVR·σ_e² per nominal sample. The filter is in noise-variance-ratio form (eqs. 13-17), so
σ_e² is estimated afterwards from the normalised innovations (eq. 22) and scales P (eq. 18). The
fixed-interval smoother is the adjoint (Bryson-Frazier) form of Young's eqs. 19-20 (Durbin &
Koopman 2012 §4.4); it gives the same means and covariances as Rauch-Tung-Striebel (eq. 21), and
the tests check it against pykalman's RTS smoother. The NVR can be estimated per column by
maximum likelihood (CAPTAIN's ``irwsmopt``, §3.3).

Jittered sampling: with nominal step dt (median step) and r_k = (t_{k+1} - t_k)/dt, A_k = I + r_k S
(S the shift matrix; eq. 23 when r_k = 1) and the process-noise variance is scaled by r_k. States
stay in nominal-increment units; derivatives are Δx̂(k)/dt and Δ²x̂(k)/dt² (§3.2). These are
forward increments: Δx̂(k)/dt estimates dx/dt at t_k + dt/2, Δ²x̂(k)/dt² d²x/dt² at t_k + dt.

Speed, exactly: the covariance recursion depends on the NVR and timing only, so it runs once per
distinct NVR, in plain floats. With uniform sampling it is stationary (to 1e-14) after a transient;
from there filter and smoother are linear time-invariant ``scipy.signal.lfilter`` passes started
from the transient's last state. Both are driven by the innovations, never by y itself, so large
positions cannot leak into the increments through rounding.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, signal

from physid.errors import InputError

__all__ = [
    "IRWSmootherResult",
    "irw_smooth",
    "irwsm1_derivatives",
    "irwsm2_derivatives",
    "optimise_nvr",
]

# Steps this close (relative) to the median step are uniform: t = k*dt rounding, not jitter.
_UNIFORM_RTOL = 1e-9
# Stationary once no entry of P moves by more than this fraction of sqrt(P_ii P_jj) in a step.
_STEADY_RTOL = 1e-14
# Above this condition number an eigenbasis would lose accuracy: fall back to the plain loop.
_MAX_EIGENVECTOR_COND = 1e8


@dataclass(frozen=True)
class IRWSmootherResult:
    """Fixed-interval smoothed IRW states of every column of y (paper C §3)."""

    states: np.ndarray  # (N, n, n_x) smoothed [x, Δx(, Δ²x)] in units of y per nominal sample
    value: np.ndarray  # (N, n) smoothed signal x̂(k|N)
    derivative: np.ndarray  # (N, n) dx/dt ≈ Δx̂(k|N)/dt  [y units / s]
    second_derivative: np.ndarray | None  # (N, n) Δ²x̂/dt² (IRWSM 2; IRWSM 1: irwsm1_derivatives)
    state_std: np.ndarray  # (N, n, n_x) sqrt(diag P*(k|N)), P* = σ̂_e² P (eq. 18); the first n_x
    # rows are dominated by the rounding of the diffuse prior p0 (in any float64 implementation)
    nvr: np.ndarray  # (n,) noise-variance ratio Q_η/σ_e² used per column
    sigma2_e: np.ndarray  # (n,) measurement-noise variance estimate, eq. 22
    log_likelihood: np.ndarray  # (n,) Gaussian log-likelihood of the innovations, σ_e² profiled


@dataclass(frozen=True)
class _Timing:
    steps: np.ndarray  # (N-1,) r_k: step k -> k+1 in nominal samples (all 1 if uniform)
    dt_s: float  # nominal sample period [s]
    uniform: bool


@dataclass(frozen=True)
class _Covariance:
    """Data-independent, for one NVR, in σ_e² units (eqs. 14-17); rows k > k_ss equal row k_ss."""

    p_pred: np.ndarray  # (k_ss+1, n_x, n_x) P(k|k-1)
    p_filt: np.ndarray  # (k_ss+1, n_x, n_x) P(k|k)
    nu: np.ndarray  # (k_ss+1,) ν(k) = 1 + h P(k|k-1) hᵀ
    gain: np.ndarray  # (k_ss+1, n_x) g(k) = P(k|k-1) hᵀ / ν(k), eq. 16
    k_ss: int


def _transitions(steps: np.ndarray, n_x: int) -> np.ndarray:
    """A_k = I + r_k S, shape (len(steps), n_x, n_x); eq. 23 for r_k = 1."""
    return np.eye(n_x) + steps[:, None, None] * np.eye(n_x, k=1)


def _covariance_pass(nvr: float, timing: _Timing, n_x: int, p0: float) -> _Covariance:
    """Eqs. 14, 16, 17 on the upper triangle of P, in plain floats (far faster than numpy on
    2x2 or 3x3 matrices). The prior is diffuse: P(0|-1) = p0·I."""
    n = len(timing.steps) + 1
    steps = timing.steps.tolist()
    p = (p0, 0.0, p0) if n_x == 2 else (p0, 0.0, 0.0, p0, 0.0, p0)
    preds, filts, nus = [], [], []
    steady = False
    for k in range(n):
        preds.append(p)
        nu = 1.0 + p[0]  # correction, eqs. 16-17: P(k|k) = P - P hᵀ h P / ν
        if n_x == 2:
            a, b, c = p
            f = (a / nu, b / nu, c - b * b / nu)
        else:
            a, b, c, d, e, g = p
            f = (a / nu, b / nu, c / nu, d - b * b / nu, e - b * c / nu, g - c * c / nu)
        filts.append(f)
        nus.append(nu)
        if steady or k == n - 1:
            break
        r = steps[k]  # prediction, eq. 14, with A = I + r S and D Q_nvr Dᵀ = r·NVR·e_n e_nᵀ
        if n_x == 2:
            a, b, c = f
            new = (a + r * (2.0 * b + r * c), b + r * c, c + r * nvr)
        else:
            a, b, c, d, e, g = f
            new = (
                a + r * (2.0 * b + r * d),
                b + r * (c + d + r * e),
                c + r * e,
                d + r * (2.0 * e + r * g),
                e + r * g,
                g + r * nvr,
            )
        if timing.uniform and abs(new[0] - p[0]) <= _STEADY_RTOL * new[0]:
            diag = (new[0], new[2]) if n_x == 2 else (new[0], new[3], new[5])
            scale = [math.sqrt(diag[i] * diag[j]) for i in range(n_x) for j in range(i, n_x)]
            moves = zip(new, p, scale, strict=True)
            steady = all(abs(u - v) <= _STEADY_RTOL * s for u, v, s in moves)
        p = new
    full = [[0, 1], [1, 2]] if n_x == 2 else [[0, 1, 2], [1, 3, 4], [2, 4, 5]]
    p_pred, p_filt, nu = np.array(preds)[:, full], np.array(filts)[:, full], np.array(nus)
    return _Covariance(p_pred, p_filt, nu, p_pred[:, :, 0] / nu[:, None], len(nu) - 1)


def _left_mul(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """m @ x[l] for every l; x (L, n, c). One GEMM, much faster than einsum or stacked matmul."""
    return (x.swapaxes(1, 2) @ m.T).swapaxes(1, 2)


def _recurse(m: np.ndarray, u: np.ndarray, x_init: np.ndarray) -> np.ndarray:
    """x(j) = M(j) x(j-1) + u(j), j = 0..L-1, from x(-1) = x_init; u (L, n_x, c). A constant M
    (n_x, n_x) decouples in its eigenbasis M = V Λ V⁻¹ into first-order recursions
    z_i(j) = λ_i z_i(j-1) + w_i(j), each one exact lfilter pass from z(-1) = V⁻¹ x_init."""
    if m.ndim == 2 and len(u):
        lam, vec = np.linalg.eig(m)
        if np.linalg.cond(vec) < _MAX_EIGENVECTOR_COND:
            vinv = np.linalg.inv(vec)
            w = _left_mul(vinv, u)
            z0 = vinv @ x_init
            for i, lam_i in enumerate(lam):
                w[:, i] = signal.lfilter(
                    [1.0], [1.0, -lam_i], w[:, i], axis=0, zi=lam_i * z0[i][None, :]
                )[0]
            return _left_mul(vec, w).real
    m = np.broadcast_to(m, (len(u), *m.shape[-2:]))
    out, x = np.empty_like(u), x_init
    for j in range(len(u)):
        out[j] = x = m[j] @ x + u[j]
    return out


def _filter(yc: np.ndarray, cov: _Covariance, timing: _Timing) -> tuple[np.ndarray, np.ndarray]:
    """Predicted states x̂(k|k-1) (N, n_x, c) and innovations ε(k) (N, c), eqs. 13, 15, in
    innovation form: x̂(k|k) = x̂(k|k-1) + g ε(k), x̂(k+1|k) = A_k x̂(k|k). The prior mean
    [y(0), 0(, 0)] is 0 because the caller removed y(0) from every column."""
    (n, n_cols), n_x, k_ss, gain = yc.shape, cov.p_pred.shape[1], cov.k_ss, cov.gain
    a = _transitions(timing.steps, n_x)
    # Loop through the transient plus n_x steps (the whole record if not stationary)
    k_end = n - 1 if k_ss + n_x >= n - 1 else k_ss + n_x
    x_pred, eps, x_p = np.empty((n, n_x, n_cols)), np.empty((n, n_cols)), np.zeros((n_x, n_cols))
    for k in range(k_end + 1):
        x_pred[k] = x_p
        eps[k] = e = yc[k] - x_p[0]
        if k < n - 1:
            x_p = a[k] @ (x_p + gain[min(k, k_ss), :, None] * e)
    if k_end < n - 1:
        # Stationary: y = h x̂(k|k-1) + ε with x̂(k+1|k) = A x̂(k|k-1) + A g ε gives, by the
        # matrix determinant lemma, (1 - z⁻¹)^n_x y(k) = det(I - F z⁻¹) ε(k), F = (I - g h) A,
        # for k >= k_ss + n_x: an all-pole filter on the n_x-th difference of y (small input).
        g = gain[-1]
        den = np.poly(a[0] - np.outer(g, a[0, 0])).real
        zi = np.stack(
            [signal.lfiltic([1.0], den, eps[k_end::-1, j][:n_x]) for j in range(n_cols)], axis=1
        )
        u = np.diff(yc, n=n_x, axis=0)[k_end + 1 - n_x :]
        eps[k_end + 1 :] = signal.lfilter([1.0], den, u, axis=0, zi=zi)[0]
        # x̂(k|k) = A x̂(k-1|k-1) + g ε(k) with A = I + S is n_x nested cumulative sums
        x_f = np.empty((n - k_end, n_x, n_cols))
        x_f[0] = x_pred[k_end] + g[:, None] * eps[k_end]
        for i in reversed(range(n_x)):
            step = g[i] * eps[k_end + 1 :] + (x_f[:-1, i + 1] if i + 1 < n_x else 0.0)
            x_f[1:, i] = x_f[0, i] + np.cumsum(step, axis=0)
        x_pred[k_end + 1 :] = x_f[:-1]
        x_pred[k_end + 1 :, :-1] += x_f[:-1, 1:]
    return x_pred, eps


def _innovation_stats(eps: np.ndarray, nu: np.ndarray, n_x: int) -> tuple[np.ndarray, np.ndarray]:
    """σ̂_e² (eq. 22) and -2 × concentrated log-likelihood per column; the first n_x innovations
    are dominated by the diffuse prior and left out, as in eq. 22."""
    n = len(eps)
    nu_k = nu[np.minimum(np.arange(n_x, n), len(nu) - 1)]
    sigma2 = np.mean(eps[n_x:] ** 2 / nu_k[:, None], axis=0)
    log_sigma2 = np.log(np.maximum(sigma2, np.finfo(float).tiny))
    neg2ll = np.sum(np.log(nu_k)) + (n - n_x) * (log_sigma2 + 1.0 + math.log(2.0 * math.pi))
    return sigma2, neg2ll


def _smooth(
    x_pred: np.ndarray, eps: np.ndarray, cov: _Covariance, timing: _Timing
) -> tuple[np.ndarray, np.ndarray]:
    """Fixed-interval smoother, adjoint form (eqs. 19-20; D&K §4.4). With L(k) = A_k (I - g h):
        ρ(k) = hᵀ ε(k)/ν(k) + L(k)ᵀ ρ(k+1),     x̂(k|N) = x̂(k|k) + P(k|k) A_kᵀ ρ(k+1),
        M(k) = hᵀh/ν(k) + L(k)ᵀ M(k+1) L(k),    P(k|N) = P(k|k) - P(k|k) A_kᵀ M(k+1) A_k P(k|k),
    from ρ(N) = 0, M(N) = 0. Using P(k|k), not P(k|k-1), keeps the p0 = 1e6 prior out of the
    products from k = 1 on. Returns x̂(k|N) (N, n_x, c) and diag P(k|N) (N, n_x) / σ_e²."""
    (n, n_x, _), k_ss, gain = x_pred.shape, cov.k_ss, cov.gain
    a = _transitions(timing.steps, n_x)
    upto = np.minimum(np.arange(n), k_ss)
    hh = np.diag(np.eye(n_x)[0])  # hᵀh
    u = np.zeros_like(x_pred)
    u[:, 0] = eps / cov.nu[upto][:, None]
    rho, m_s = np.empty_like(u), np.empty((n, n_x, n_x))
    rho[-1], m_s[-1] = u[-1], hh / cov.nu[upto[-1]]
    if k_ss < n - 1:  # stationary region k = N-2 .. k_ss: LTI, backwards
        l_ss = a[0] - np.outer(a[0] @ gain[-1], hh[0])
        rho[k_ss:-1] = _recurse(l_ss.T, u[k_ss:-1][::-1], rho[-1])[::-1]
        m = m_s[-1]
        for k in range(n - 2, k_ss - 1, -1):  # M converges backwards; then it is constant
            m_s[k] = m_new = hh / cov.nu[-1] + l_ss.T @ m @ l_ss
            scale = np.sqrt(np.outer(np.diag(m_new), np.diag(m_new)))
            if np.all(np.abs(m_new - m) <= _STEADY_RTOL * scale):
                m_s[k_ss:k] = m_new
                break
            m = m_new
    # transient k = k_ss-1 .. 0 (the whole record if not stationary): time-varying
    l_tv = a[:k_ss] - (a[:k_ss] @ gain[:k_ss, :, None]) * hh[0]
    rho[:k_ss] = _recurse(l_tv.swapaxes(1, 2)[::-1], u[:k_ss][::-1], rho[k_ss])[::-1]
    for k in range(k_ss - 1, -1, -1):
        m_s[k] = hh / cov.nu[k] + l_tv[k].T @ m_s[k + 1] @ l_tv[k]
    r, p_f = timing.steps[:, None, None], cov.p_filt[upto]
    a_rho, a_m_a = rho[1:].copy(), m_s[1:].copy()  # A_kᵀ ρ(k+1), A_kᵀ M(k+1) A_k by shifts,
    a_rho[:, 1:] += r * rho[1:, :-1]  # as A_k = I + r_k S (no stacked tiny matmuls: slow)
    a_m_a[:, 1:] += r * m_s[1:, :-1]
    a_m_a[:, :, 1:] += r * a_m_a[:, :, :-1]
    x_s = x_pred + cov.gain[upto][:, :, None] * eps[:, None, :]  # x̂(k|k)
    x_s[:-1] += p_f[:-1] @ a_rho
    p_s_diag = np.diagonal(p_f, axis1=1, axis2=2).copy()
    p_s_diag[:-1] -= np.einsum("kij,kjl,kil->ki", p_f[:-1], a_m_a, p_f[:-1], optimize=True)
    return x_s, p_s_diag


def _floats(x, name: str) -> np.ndarray:
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: not numeric ({exc})") from exc


def _as_signals(y: np.ndarray, n_x: int) -> np.ndarray:
    """y as (N, n) floats, validated; 1-D y is one column."""
    arr = _floats(y, "y")
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise InputError(f"y: expected shape (N,) or (N, n), got {np.shape(y)}")
    if arr.shape[0] < max(3, n_x + 1):
        raise InputError(f"y: need at least {max(3, n_x + 1)} samples, got {arr.shape[0]}")
    bad = np.argwhere(~np.isfinite(arr))
    if len(bad):
        raise InputError(f"y: NaN or infinite value at row {bad[0, 0]}, column {bad[0, 1]}")
    return arr


def _timing(n: int, dt: float | None, t: np.ndarray | None) -> _Timing:
    if (dt is None) == (t is None):
        raise InputError("dt/t: give exactly one of dt (sample period [s]) or t (times [s])")
    if t is None:
        dt_s = _floats(dt, "dt")
        if not (dt_s.ndim == 0 and np.isfinite(dt_s) and dt_s > 0):
            raise InputError(f"dt: sample period must be a positive number of seconds, got {dt!r}")
        return _Timing(np.ones(n - 1), float(dt_s), True)
    t = _floats(t, "t")
    if t.shape != (n,):
        raise InputError(f"t: expected shape ({n},) to match y, got {t.shape}")
    if not np.all(np.isfinite(t)):
        raise InputError(f"t: NaN or infinite time at row {int(np.argmin(np.isfinite(t)))}")
    step_s = np.diff(t)
    if np.any(step_s <= 0):
        raise InputError(f"t: times must increase strictly (row {int(np.argmax(step_s <= 0)) + 1})")
    dt_s = float(np.median(step_s))
    steps = step_s / dt_s
    if np.all(np.abs(steps - 1.0) <= _UNIFORM_RTOL):
        return _Timing(np.ones(n - 1), dt_s, True)
    return _Timing(steps, dt_s, False)


def _prepare(y, dt, t, order: int, p0: float) -> tuple[np.ndarray, np.ndarray, _Timing, int]:
    if order not in (1, 2):
        raise InputError(f"order: must be 1 (IRWSM 1) or 2 (IRWSM 2), got {order!r}")
    if not (np.isfinite(p0) and p0 > 0):
        raise InputError(f"p0: prior variance must be positive and finite, got {p0!r}")
    n_x, arr = order + 1, _as_signals(y, order + 1)
    # The IRW model is shift-equivariant: smoothing y - y(0) and adding y(0) back is exact and
    # keeps large offsets (motor angles of tens of rad) out of the rounding of the increments.
    return arr - arr[0], arr[0], _timing(len(arr), dt, t), n_x


def _neg2_loglik(yc: np.ndarray, timing: _Timing, n_x: int, p0: float, nvr: float) -> np.ndarray:
    cov = _covariance_pass(nvr, timing, n_x, p0)
    return _innovation_stats(_filter(yc, cov, timing)[1], cov.nu, n_x)[1]


def _optimise(yc, timing: _Timing, n_x: int, p0: float, bounds: Sequence[float]) -> np.ndarray:
    """ML NVR per column (§3.3): minimise Σ log ν(k) + (N - n_x) log σ̂_e²(NVR) over log10 NVR on
    a one-per-decade grid (one covariance pass per grid NVR, shared by all columns), then by
    bounded Brent around each column's best grid point to 0.01 decade (2 %, << ML spread)."""
    lo, hi = (float(b) for b in bounds)
    if not (0 < lo < hi and np.isfinite(hi)):
        raise InputError(f"nvr_bounds: need 0 < lower < upper < inf, got {tuple(bounds)!r}")
    log_lo, log_hi = math.log10(lo), math.log10(hi)
    grid = np.linspace(log_lo, log_hi, max(math.ceil(log_hi - log_lo) + 1, 3))
    cost = np.array([_neg2_loglik(yc, timing, n_x, p0, 10.0**g) for g in grid])
    best = np.empty(yc.shape[1])
    for j in range(yc.shape[1]):
        i = int(np.argmin(cost[:, j]))
        res = optimize.minimize_scalar(
            lambda s, j=j: _neg2_loglik(yc[:, j : j + 1], timing, n_x, p0, 10.0**s)[0],
            bounds=(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]),
            method="bounded",
            options={"xatol": 0.01},
        )
        best[j] = res.x if res.fun <= cost[i, j] else grid[i]
        if min(best[j] - log_lo, log_hi - best[j]) < 0.05:
            warnings.warn(
                f"nvr: ML estimate for column {j} is at the bound 10^{best[j]:.2f}; "
                "widen nvr_bounds or fix the NVR",
                RuntimeWarning,
                stacklevel=3,
            )
    return 10.0**best


def optimise_nvr(
    y,
    *,
    dt: float | None = None,
    t=None,
    order: int = 1,
    bounds: Sequence[float] = (1e-14, 1e2),
    p0: float = 1e6,
) -> np.ndarray:
    """Maximum-likelihood NVR of every column of y, shape (n,) (paper C §3.3, CAPTAIN
    ``irwsmopt``): the Gaussian likelihood of the prediction errors ε(k) (eq. 22) with σ_e²
    concentrated out, over log10 NVR in ``bounds``. Warns if an estimate sits on a bound."""
    yc, _, timing, n_x = _prepare(y, dt, t, order, p0)
    return _optimise(yc, timing, n_x, p0, bounds)


def irw_smooth(
    y,
    *,
    dt: float | None = None,
    t=None,
    order: int = 1,
    nvr=None,
    nvr_bounds: Sequence[float] = (1e-14, 1e2),
    p0: float = 1e6,
) -> IRWSmootherResult:
    """Kalman filter + fixed-interval smoother on an IRW model, every column of y (N, n).

    Args:
        y: signals, shape (N,) or (N, n), one column per joint.
        dt: uniform sample period [s]; or
        t: sample times [s], shape (N,), strictly increasing, jitter allowed (module docstring).
        order: 1 for IRWSM 1 (eqs. 9-12), 2 for IRWSM 2 (eq. 23).
        nvr: Q_η/σ_e² per nominal sample (eqs. 12-14), a scalar or one per column; None
            estimates it per column by maximum likelihood within ``nvr_bounds`` (§3.3).
        p0: diffuse prior P(0|-1) = p0·I in NVR units around the prior mean [y(0), 0(, 0)].

    Filter eqs. 13-17 in NVR form, σ̂_e² by eq. 22, P* = σ̂_e² P (eq. 18), adjoint-form
    smoother (eqs. 19-21). Raises InputError on invalid input.
    """
    yc, y0, timing, n_x = _prepare(y, dt, t, order, p0)
    n, n_cols = yc.shape
    if nvr is None:
        nvr_cols = _optimise(yc, timing, n_x, p0, nvr_bounds)
    else:
        try:
            nvr_cols = np.broadcast_to(_floats(nvr, "nvr"), (n_cols,)).copy()
        except ValueError as exc:
            raise InputError(f"nvr: expected a scalar or {n_cols} values, got {nvr!r}") from exc
        if not np.all(np.isfinite(nvr_cols) & (nvr_cols >= 0)):
            raise InputError(f"nvr: noise-variance ratios must be finite and >= 0, got {nvr!r}")
    states, var_scaled = np.empty((n, n_cols, n_x)), np.empty((n, n_cols, n_x))
    sigma2, neg2ll = np.empty(n_cols), np.empty(n_cols)
    for value in np.unique(nvr_cols):  # covariances depend on the NVR only: once per value
        cols = np.flatnonzero(nvr_cols == value)
        cov = _covariance_pass(float(value), timing, n_x, p0)
        x_pred, eps = _filter(yc[:, cols], cov, timing)
        sigma2[cols], neg2ll[cols] = _innovation_stats(eps, cov.nu, n_x)
        x_s, p_diag = _smooth(x_pred, eps, cov, timing)
        states[:, cols] = x_s.transpose(0, 2, 1)
        var_scaled[:, cols] = p_diag[:, None, :] * sigma2[cols][None, :, None]
    states[:, :, 0] += y0
    second = states[:, :, 2] / timing.dt_s**2 if order == 2 else None
    return IRWSmootherResult(
        states,
        states[:, :, 0],
        states[:, :, 1] / timing.dt_s,
        second,
        np.sqrt(np.maximum(var_scaled, 0.0)),
        nvr_cols,
        sigma2,
        -0.5 * neg2ll,
    )


def _align_to_samples(dq: np.ndarray, ddq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move forward-increment derivatives onto the sample instants.

    Δx̂(k)/dt estimates dx/dt at t_k + dt/2 and the second difference d²x/dt² at t_k + dt, so
    the value at t_k is the mean of two neighbouring first derivatives and the previous second
    derivative. Without this the regressor would mix q(t_k) with accelerations one sample
    ahead: a phase error of 2π f dt (2.5 % at 20 Hz and 5 kHz).
    """
    dq_at_samples, ddq_at_samples = dq.copy(), ddq.copy()
    dq_at_samples[1:] = 0.5 * (dq[1:] + dq[:-1])
    ddq_at_samples[1:] = ddq[:-1]
    return dq_at_samples, ddq_at_samples


def irwsm1_derivatives(
    t_or_dt, q, nvr=None, *, nvr_second=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IRWSM 1 as in paper C §4.1: smooth q to get q̂ and dq̂, then smooth dq̂ with the same
    algorithm to get ddq̂. ``t_or_dt`` is a sample period [s] or a time vector. ``nvr`` is for
    the first pass (None: ML), ``nvr_second`` for the second (None: same rule as ``nvr``).
    ML on the already smoothed dq̂ tends to run to the upper bound (it warns), so prefer a
    fixed second NVR, e.g. paper C's 1e-5. Outputs have q's shape, with the derivatives moved
    onto the sample instants (:func:`_align_to_samples`)."""
    timing = {"dt": t_or_dt} if np.ndim(t_or_dt) == 0 else {"t": t_or_dt}
    first = irw_smooth(q, **timing, order=1, nvr=nvr)
    # ML on the already smoothed dq̂ runs to the upper bound (paper C §4.3 warns that ML follows
    # the noise); by default the second pass reuses the first pass's NVR instead.
    nvr_second = first.nvr if nvr_second is None else nvr_second
    second = irw_smooth(first.derivative, **timing, order=1, nvr=nvr_second)
    shape = np.shape(q)
    dq, ddq = _align_to_samples(first.derivative, second.derivative)
    return first.value.reshape(shape), dq.reshape(shape), ddq.reshape(shape)


def irwsm2_derivatives(t_or_dt, q, nvr=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IRWSM 2 (paper C eq. 23): one smoothing pass with state [q, Δq, Δ²q] gives q̂, dq̂ and
    ddq̂. ``t_or_dt`` is a sample period [s] or a time vector. Outputs have q's shape, with the
    derivatives moved onto the sample instants (:func:`_align_to_samples`)."""
    res = irw_smooth(q, **{"dt" if np.ndim(t_or_dt) == 0 else "t": t_or_dt}, order=2, nvr=nvr)
    shape = np.shape(q)
    dq, ddq = _align_to_samples(res.derivative, res.second_derivative)
    return res.value.reshape(shape), dq.reshape(shape), ddq.reshape(shape)
