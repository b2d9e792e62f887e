"""A planar ellipse thrown onto a plane in MuJoCo (soft contacts): impact snapshots and sliding.

The independent check of :mod:`physid.impacts.snapshot_fit` (paper D's impact law) against an
engine that knows nothing of it. The body is an ellipsoid with semi-axes (a, w, b) moving in the
world x–z plane (slide x, slide z, hinge about −y so that the angle is counter-clockwise in the
(x, z) plane); physid's planar (x, y, θ) is MuJoCo's (x, z, hinge). Its inertia about the hinge is
set (J = m · J/m), not computed from the geometry. Contacts use MuJoCo's default pyramidal cone,
condim 3, with the given ``solref``/``solimp``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from physid.impacts.snapshots import Snapshots


@dataclass(frozen=True)
class MujocoEllipse:
    """Body and contact settings [SI]: semi-axes ``a`` (x), ``b`` (z), ``width`` (y)."""

    a: float = 0.05
    b: float = 0.025
    width: float = 0.01
    mass: float = 0.064
    inertia_ratio: float = 756e-6
    mu: float = 0.35
    solref: tuple[float, float] = (0.002, 1.0)
    solimp: tuple[float, float, float] = (0.9, 0.95, 0.001)
    timestep: float = 1e-4

    def mjcf(self) -> str:
        """The model as MJCF text."""
        j = self.mass * self.inertia_ratio
        ref, imp = " ".join(map(repr, self.solref)), " ".join(map(repr, self.solimp))
        return f"""
<mujoco model="planar_ellipse">
  <option timestep="{self.timestep!r}" integrator="implicitfast"/>
  <default><geom solref="{ref}" solimp="{imp}" condim="3"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="50 50 0.1" friction="{self.mu!r} 0 0"/>
    <body name="ellipse" pos="0 0 0">
      <joint name="x" type="slide" axis="1 0 0" damping="0"/>
      <joint name="z" type="slide" axis="0 0 1" damping="0"/>
      <joint name="theta" type="hinge" axis="0 -1 0" damping="0"/>
      <inertial pos="0 0 0" mass="{self.mass!r}" diaginertia="{j!r} {j!r} {j!r}"/>
      <geom name="body" type="ellipsoid" size="{self.a!r} {self.width!r} {self.b!r}"
            friction="{self.mu!r} 0 0" contype="1" conaffinity="1"/>
    </body>
  </worldbody>
</mujoco>"""

    def model(self) -> mujoco.MjModel:
        return mujoco.MjModel.from_xml_string(self.mjcf())


def _contact_wrench(model: mujoco.MjModel, data: mujoco.MjData) -> tuple[float, float, float]:
    """Total normal force [N] and its weighted contact point (x, z) in the world."""
    fn, px, pz = 0.0, 0.0, 0.0
    force = np.zeros(6)
    for i in range(data.ncon):
        mujoco.mj_contactForce(model, data, i, force)
        fn += force[0]
        px += force[0] * data.contact[i].pos[0]
        pz += force[0] * data.contact[i].pos[2]
    return fn, px, pz


def throw_snapshots(
    body: MujocoEllipse,
    q0: tuple[float, float, float],
    v0: tuple[float, float, float],
    duration: float,
    *,
    model: mujoco.MjModel | None = None,
    min_approach: float = 0.1,
    max_event: float = 0.01,
) -> Snapshots:
    """Throw the body from planar pose ``q0`` with velocity ``v0`` and cut every contact event
    (consecutive steps with a contact) into a snapshot: pre = the velocity at the last contact-free
    step, post = the one at the first contact-free step after it, duration the time between; the
    contact point is the normal-force-weighted mean over the event, relative to the centre of mass
    at the same step. Only impacts are kept: events whose contact point approached the plane
    faster than ``min_approach`` [m/s] and that lasted at most ``max_event`` [s] (a body rocking
    or rolling on the plane makes contacts flicker on and off, and long ones); events still in
    contact at the end are dropped."""
    model = model or body.model()
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    data.qvel[:] = v0
    mujoco.mj_forward(model, data)
    rows: list[tuple] = []
    event: dict | None = None
    prev_v, prev_t = data.qvel.copy(), data.time
    for _ in range(int(round(duration / model.opt.timestep))):
        mujoco.mj_step(model, data)
        fn, px, pz = _contact_wrench(model, data)
        if data.ncon and fn > 0:
            if event is None:
                event = {"v_pre": prev_v.copy(), "t_pre": prev_t, "w": 0.0, "arm": np.zeros(2)}
            event["w"] += fn
            event["arm"] += (px - fn * data.qpos[0], pz - fn * data.qpos[1])
        elif event is not None:
            arm, v = event["arm"] / event["w"], event["v_pre"]
            span = data.time - event["t_pre"]
            if v[1] + v[2] * arm[0] < -min_approach and span <= max_event:  # u_n = n·(v + ω×GQ)
                rows.append((v, data.qvel.copy(), arm, span))
            event = None
        prev_v, prev_t = data.qvel.copy(), data.time
    n = len(rows)
    return Snapshots(
        v_pre=np.array([r[0] for r in rows]).reshape(n, 3),
        v_post=np.array([r[1] for r in rows]).reshape(n, 3),
        arm=np.array([r[2] for r in rows]).reshape(n, 2),
        normal=np.tile([0.0, 1.0], (n, 1)),
        duration=np.array([r[3] for r in rows]),
        mass=body.mass,
        labels=tuple(f"impact {i + 1}" for i in range(n)),
    )


def sliding_friction(body: MujocoEllipse, speed: float = 1.0, settle: float = 0.3) -> dict:
    """MuJoCo's effective sliding friction for these contact settings: the body rests on its
    flat side (settled for ``settle`` s), is given ``speed`` [m/s] along x and slides to rest.

    Returns the deceleration [m/s²] of the centre of mass over the sliding phase (speed between
    90 % and 10 % of the start) as ``mu_from_deceleration`` = −a/g, and the mean ratio of the
    tangential to the normal contact force over the same steps, ``mu_from_forces``.
    """
    model = body.model()
    data = mujoco.MjData(model)
    data.qpos[:] = (0.0, body.b, 0.0)
    for _ in range(int(round(settle / model.opt.timestep))):
        mujoco.mj_step(model, data)
    data.qvel[:] = (speed, 0.0, 0.0)
    times, speeds, ratios = [], [], []
    force = np.zeros(6)
    while data.qvel[0] > 0.1 * speed and data.time < settle + 10 * speed / 9.81 + 1:
        mujoco.mj_step(model, data)
        fn = ft = 0.0
        for i in range(data.ncon):
            mujoco.mj_contactForce(model, data, i, force)
            fn, ft = fn + force[0], ft + np.hypot(force[1], force[2])
        if data.qvel[0] < 0.9 * speed and fn > 0:
            times.append(data.time)
            speeds.append(data.qvel[0])
            ratios.append(ft / fn)
    g = -float(model.opt.gravity[2])
    slope = float(np.polyfit(times, speeds, 1)[0]) if len(times) > 2 else float("nan")
    return {
        "mu_from_deceleration": -slope / g,
        "mu_from_forces": float(np.mean(ratios)) if ratios else float("nan"),
        "sliding_time_s": float(times[-1] - times[0]) if times else 0.0,
        "final_spin_rad_s": float(data.qvel[2]),
    }


def throw_poses(
    body: MujocoEllipse,
    q0: tuple[float, float, float],
    v0: tuple[float, float, float],
    duration: float,
    fps: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Camera poses of a MuJoCo throw: times (n,) [s] and planar poses (n, 3) (x, y, θ) at
    ``fps`` frames/s (1/fps must be a whole number of MuJoCo steps), without noise."""
    model = body.model()
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    data.qvel[:] = v0
    mujoco.mj_forward(model, data)
    stride = round(1.0 / (fps * model.opt.timestep))
    times, poses = [0.0], [data.qpos.copy()]
    for k in range(1, int(round(duration / model.opt.timestep)) + 1):
        mujoco.mj_step(model, data)
        if k % stride == 0:
            times.append(data.time)
            poses.append(data.qpos.copy())
    return np.array(times), np.array(poses)
