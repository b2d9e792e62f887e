"""Where the ``physid oe`` cost of a solve sits: its whitened squared residuals split by channel
(process noise per tangent block and joint, encoders, joint velocities, orientation, gyro,
accelerometer axes), by contact phase (nodes within 20 ms of a flag change, stance sets) and
by joint-velocity sign reversals. Diagnosis for the Go2-like crawl's model error
(``oe_mujoco_go2.py --split``); prints tables and returns the numbers as a dict."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from physid.oe.model.measurements import base_dofs
from physid.oe.model.phases import change_distance

LEGS = ("FL", "FR", "RL", "RR")
PARTS = ("hip", "thigh", "calf")


def _reversals(v: NDArray, half: int) -> NDArray[np.bool_]:
    """``(N + 1, n)``: within ``half`` nodes of a sign change of the measured joint velocity
    (smoothed over 5 nodes so that noise about zero is not counted as a reversal)."""
    kernel = np.ones(5) / 5
    smooth = np.column_stack([np.convolve(c, kernel, mode="same") for c in v.T])
    change = np.zeros_like(smooth, dtype=bool)
    change[1:] = np.sign(smooth[1:]) != np.sign(smooth[:-1])
    out = np.zeros_like(change)
    for shift in range(-half, half + 1):
        out |= np.roll(change, shift, axis=0)
    return out


def node_terms(problem, xs: NDArray, ws: NDArray, theta: NDArray) -> dict[str, NDArray]:  # noqa: ANN001
    """Whitened residuals of every node: ``w`` (N, 2 nv) process noise, ``obs`` (N + 1, m)
    sensors, ``acc`` (N, 3) accelerometer (NaN where not observed)."""
    nv = problem.dynamics.model.nv
    w = ws / problem.process_std_nodes
    obs = np.array([problem.node_residuals(k, xs[k], False)[0] for k in range(len(xs))])
    acc = np.full((problem.horizon, 3), np.nan)
    observed = [k for k in range(problem.horizon) if problem.acceleration_observed(k)]
    raw = problem.accelerometer_residuals(xs, ws, theta)
    acc[observed] = raw / problem.noise.accelerometer
    del nv
    return {"w": w, "obs": obs, "acc": acc}


def _row(name: str, sq: NDArray, mask: NDArray | None = None) -> tuple[str, float, int]:
    sel = sq if mask is None else sq[mask]
    sel = sel[np.isfinite(sel)]
    return name, float(sel.sum()), int(sel.size)


def split(problem, result, measured_v: NDArray, total: float | None = None) -> dict:  # noqa: ANN001
    """Print and return the cost's split (module docstring). ``measured_v`` (N + 1, 12): the
    recorded joint velocities (the reversals are found on them)."""
    model = problem.dynamics.model
    nv = model.nv
    bv = base_dofs(model)[1]
    nj = nv - bv
    terms = node_terms(problem, result.xs, result.ws, result.theta)
    w2, o2, a2 = terms["w"] ** 2, terms["obs"] ** 2, terms["acc"] ** 2
    n = problem.horizon
    flags = problem.contacts.flags
    near = change_distance(flags, n) <= 10  # 20 ms at 500 Hz
    rev = _reversals(measured_v, 3)[:n]
    rows = [
        _row("w base dq (lin, ang)", w2[:, :bv]),
        _row("w joint dq", w2[:, bv:nv]),
        _row("w base dv lin", w2[:, nv : nv + 3]),
        _row("w base dv ang", w2[:, nv + 3 : nv + 6]),
        _row("w joint dv", w2[:, nv + bv :]),
        _row("encoders", o2[:, :nj]),
        _row("joint velocities", o2[:, nj : 2 * nj]),
        _row("orientation", o2[:, 2 * nj : 2 * nj + 3]),
        _row("gyro", o2[:, 2 * nj + 3 : 2 * nj + 6]),
        _row("accelerometer x", a2[:, 0]),
        _row("accelerometer y", a2[:, 1]),
        _row("accelerometer z", a2[:, 2]),
    ]
    if o2.shape[1] > 2 * nj + 6:
        rows.append(_row("no-slip", o2[:, 2 * nj + 6 :]))
    total = sum(r[1] for r in rows) if total is None else total
    out = {"channels": {}, "phases": {}, "joints": {}, "reversal": {}}
    print(f"\ncost split (sum of squared whitened residuals; 2 x cost = {total:.0f}):")
    print(f"  {'channel':24s} {'sum':>9s} {'share':>6s} {'n':>7s} {'mean':>7s}")
    for name, s, c in rows:
        print(f"  {name:24s} {s:9.0f} {100 * s / total:5.1f}% {c:7d} {s / max(c, 1):7.3f}")
        out["channels"][name] = {"sum": s, "n": c}
    # by node class: near a flag change, and per stance set elsewhere
    jdv = w2[:, nv + bv :]
    per_node = w2.sum(1) + o2[:n].sum(1) + np.nan_to_num(a2).sum(1)
    classes = {"within 20 ms of a flag change": near}
    for leg in range(flags.shape[1]):
        classes[f"{LEGS[leg]} swinging, far"] = (~flags[:n, leg]) & ~near
    classes["4 feet down, far"] = flags[:n].all(1) & ~near
    print(f"\n  {'nodes':32s} {'n':>5s} {'cost/node':>9s} {'share':>6s} {'w joint dv/node':>15s}")
    for name, mask in classes.items():
        c = int(mask.sum())
        s = float(per_node[mask].sum())
        print(
            f"  {name:32s} {c:5d} {s / max(c, 1):9.2f} {100 * s / per_node.sum():5.1f}% "
            f"{jdv[mask].sum() / max(c, 1):15.2f}"
        )
        out["phases"][name] = {"n": c, "sum": s, "w_joint_dv": float(jdv[mask].sum())}
    # per joint: the process noise on its velocity, at reversals and elsewhere
    names = [f"{leg}_{p}" for leg in LEGS for p in PARTS]
    print(f"\n  {'joint':10s} {'w dv sum':>9s} {'at rev.':>8s} {'rev. nodes':>10s} {'v obs':>7s}")
    for j, name in enumerate(names):
        s = float(jdv[:, j].sum())
        r = float(jdv[rev[:, j], j].sum())
        print(
            f"  {name:10s} {s:9.0f} {100 * r / max(s, 1e-12):7.1f}% {int(rev[:, j].sum()):10d} "
            f"{o2[:, nj + j].sum():7.0f}"
        )
        out["joints"][name] = {
            "w_dv": s,
            "w_dv_at_reversals": r,
            "v_obs": float(o2[:, nj + j].sum()),
        }
    rev_share = float(jdv[rev].sum() / jdv.sum())
    out["reversal"] = {"share_w_joint_dv": rev_share, "share_nodes": float(rev.mean())}
    print(
        f"  joint-velocity process noise at reversals (+-3 nodes): {100 * rev_share:.1f} % of it "
        f"on {100 * rev.mean():.1f} % of the (node, joint) pairs"
    )
    # the mean accelerometer residual per axis and the mean base-velocity process noise
    acc_mean = np.nanmean(terms["acc"], axis=0) * problem.noise.accelerometer
    wv = result.ws[:, nv : nv + 3]
    print(
        f"  accelerometer mean residual {np.round(acc_mean, 4)} m/s^2; base dv process noise "
        f"mean {np.round(wv.mean(0) / problem.dynamics.dt, 4)} m/s^2 (as an acceleration)"
    )
    out["acc_mean"] = acc_mean.tolist()
    out["base_dv_mean_m_s2"] = (wv.mean(0) / problem.dynamics.dt).tolist()
    return out


def std_check(problem, result, payload_error: float) -> dict:  # noqa: ANN001
    """The trunk mass's std: Laplace (plain), reported (x the scalar inflation), sandwich
    (Newey-West of the node influences) and batch means of the influences over 2, 3, 4, 8
    time blocks; printed with |error| / std."""
    import time

    from physid.oe.solving.sandwich import long_run_covariance, node_influences

    started = time.process_time()
    lin = problem.linearize(result.xs, result.ws, result.theta, bias_columns=True)
    psi = node_influences(lin)
    sand, lags = long_run_covariance(psi)
    seconds = time.process_time() - started
    G = problem.dynamics.G[0]
    mass_var = lambda cov: float((G @ cov[:10, :10] @ G.T)[0, 0])  # noqa: E731
    reported = float(result.pi_covariance[0][0, 0])
    out = {
        "laplace": np.sqrt(reported / result.std_inflation),
        "reported": np.sqrt(reported),
        "sandwich": np.sqrt(mass_var(sand)),
        "sandwich_lags": lags,
        "sandwich_cpu_s": seconds,
        "newton_step_mass": float((G @ psi.sum(0)[:10])[0]),
    }
    n = psi.shape[0]
    for blocks in (2, 3, 4, 8):
        edges = np.linspace(0, n, blocks + 1).astype(int)
        sums = np.array([psi[a:b].sum(0) for a, b in zip(edges[:-1], edges[1:], strict=True)])
        sums -= sums.mean(0)
        cov = sums.T @ sums * blocks / max(blocks - 1, 1)
        out[f"blocks_{blocks}"] = np.sqrt(mass_var(cov))
    print(f"\n  trunk mass std [kg] (|error| {abs(payload_error):.4f} kg): |error|/std")
    for key, value in out.items():
        if key in ("sandwich_lags", "sandwich_cpu_s", "newton_step_mass"):
            continue
        print(f"  {key:10s} {value:.4f}  {abs(payload_error) / value:5.2f}")
    print(
        f"  sandwich: {lags} lags, {seconds:.1f} CPU s; sum of influences on the mass "
        f"{out['newton_step_mass']:.2e} kg"
    )
    return out
