"""A robot described in MJCF (MuJoCo's XML), as the Pinocchio model physid identifies.

Two readers, each doing what it does well: Pinocchio's MJCF parser builds the kinematic tree
(joint frames, axes, names as in the MJCF), and MuJoCo compiles the file as MuJoCo itself would
simulate it — defaults and classes, ``<include>``, angles in degrees, inertias derived from
geoms or meshes (``inertiafromgeom``), bodies welded to their parent. The body inertias and the
joints' ``damping``, ``frictionloss`` and ``armature`` are then taken from MuJoCo's compiled
model: each MuJoCo body's inertia is moved into the frame of the Pinocchio joint that carries
it (a body without joints rides on its nearest jointed ancestor, as Pinocchio fuses it) and
summed. Those joint terms become the priors of viscous friction, Coulomb friction and armature
(:meth:`physid.robot.model.RobotModel.prior_parameters`).

The result is checked against MuJoCo before it is used: at random states the inverse dynamics
of the Pinocchio model (plus armature) must equal MuJoCo's ``mj_inverse`` with constraints,
damping and springs switched off (:func:`check_against_mujoco`). An MJCF feature that the rigid
chain cannot hold (spatial tendons, joint springs, a joint ``ref``, ball joints in an arm) is
refused by name instead of being identified wrong; joints coupled by a fixed tendon or an
equality (:func:`coupled_joints`) are refused where they stay in the model
(:func:`physid.robot.model.refuse_coupled_mjcf`), and held still they are fine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.errors import InputError, install_hint

# Relative agreement of the Pinocchio model with mj_inverse below which the MJCF is accepted.
# Both compute the same rigid-body dynamics in double precision (they agree to about 1e-13).
AGREEMENT_RELATIVE = 1e-8
ROOT_JOINT = "root_joint"  # the floating base added to a model without a free joint


def is_mjcf(path: str | Path) -> bool:
    """True when the file's root element is ``<mujoco>`` (the kind is read, not guessed from
    the suffix: both MJCF and URDF files are ``.xml`` in the wild)."""
    if not Path(path).is_file():  # a folder, a missing file, a FIFO (whose read would block)
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    body = head.split("?>", 1)[-1] if head.lstrip().startswith("<?xml") else head
    while body.lstrip().startswith("<!--"):
        _, closed, body = body.partition("-->")
        if not closed:  # an unclosed comment: no root element in reach
            return False
    return body.lstrip().startswith("<mujoco")


def _mujoco():
    try:
        import mujoco
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError(
            f"reading an MJCF model needs MuJoCo: {install_hint('mujoco', 'mujoco')}"
        ) from None
    return mujoco


# compiled numbers a NaN or infinity in the XML would reach (MuJoCo only warns on stderr)
FINITE_FIELDS = (
    "body_pos",
    "body_quat",
    "body_ipos",
    "body_iquat",
    "body_mass",
    "body_inertia",
    "jnt_axis",
    "jnt_pos",
    "jnt_range",
    "dof_damping",
    "dof_armature",
    "dof_frictionloss",
    "qpos0",
    "geom_size",
    "geom_pos",
    "actuator_gear",
)


def compile_mjcf(path: str | Path, held_still: tuple[str, ...] = ()):
    """MuJoCo's compiled model of the file (``mujoco.MjModel``), or one error line: a file
    MuJoCo rejects, or one whose numbers are not finite (``nan`` in the XML: MuJoCo compiles
    it with a warning on stderr, which is silenced here). ``held_still``: joints a joint
    equality holds at their reference position, without the actuators that drive only them
    (:func:`hold_still`)."""
    model = _compiled(path, None)
    if held_still:
        model = _compiled(
            path, lambda spec: hold_still(spec, held_still, idle_actuators(model, held_still))
        )
    numbers = {
        "option timestep": np.atleast_1d(model.opt.timestep),
        "option gravity": model.opt.gravity,
    }
    numbers.update({field: getattr(model, field) for field in FINITE_FIELDS})
    for field, values in numbers.items():
        if not np.all(np.isfinite(values)):
            raise InputError(
                f"MuJoCo compiled non-finite {field} values (nan or inf in the XML?)",
                source=str(path),
            )
    return model


def _compiled(path: str | Path, edit: Callable | None):  # noqa: ANN202 - mujoco.MjModel
    """The file compiled by MuJoCo, its spec first changed by ``edit`` if given; without the
    mesh geoms whose files are missing (:func:`without_missing_meshes`); or one error line."""
    from physid.files.io import quiet_stderr

    mujoco = _mujoco()
    try:
        with quiet_stderr():
            if edit is None:
                return mujoco.MjModel.from_xml_path(str(path))
            spec = mujoco.MjSpec.from_file(str(path))
            edit(spec)
            return spec.compile()
    except ValueError as error:
        message = " ".join(str(error).split())
        model = None
        if "Error opening file" in message:
            spec = mujoco.MjSpec.from_file(str(path))
            if edit is not None:
                edit(spec)
            model = without_missing_meshes(spec, Path(path).parent, str(path))
        if model is None:
            raise InputError(f"MuJoCo cannot load the MJCF: {message}", source=str(path)) from None
        return model


def idle_actuators(model, joints: tuple[str, ...]) -> tuple[str, ...]:  # noqa: ANN001
    """The named actuators of ``model`` (a ``mujoco.MjModel``) that drive only ``joints``: a
    joint transmission on one of them, or a fixed tendon of theirs alone (a gripper's split
    tendon)."""
    mujoco = _mujoco()
    held = {mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joints}
    idle = []
    for a in range(model.nu):
        kind, target = int(model.actuator_trntype[a]), int(model.actuator_trnid[a, 0])
        if kind == int(mujoco.mjtTrn.mjTRN_JOINT):
            only_held = target in held
        elif kind == int(mujoco.mjtTrn.mjTRN_TENDON):
            first = int(model.tendon_adr[target])
            wraps = range(first, first + int(model.tendon_num[target]))
            only_held = all(
                int(model.wrap_type[w]) == int(mujoco.mjtWrap.mjWRAP_JOINT)
                and int(model.wrap_objid[w]) in held
                for w in wraps
            )
        else:
            only_held = False
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        if only_held and name:
            idle.append(name)
    return tuple(idle)


def hold_still(spec, joints: tuple[str, ...], actuators: tuple[str, ...] = ()):  # noqa: ANN001, ANN201
    """``spec`` (a ``mujoco.MjSpec``, changed) with a joint equality (MJCF ``<equality><joint
    joint1=...>``, no ``joint2``) holding each of ``joints`` at its reference position ``qpos0``
    (MuJoCo's constraint ``q - q0 = polycoef[0]`` with ``polycoef[0] = 0``, soft as every MuJoCo
    constraint, default ``solref``), and without the named ``actuators`` (those that drive only
    these joints: no recording commands them). For joints no recording logs (a gripper's
    fingers beside an arm's log): a simulation moves every joint it has."""
    mujoco = _mujoco()
    for joint in joints:
        equality = spec.add_equality()
        equality.type = mujoco.mjtEq.mjEQ_JOINT
        equality.objtype = mujoco.mjtObj.mjOBJ_JOINT
        equality.name1 = joint
        equality.name = f"physid_hold_{joint}"
        equality.data[0] = 0.0
    for name in actuators:
        spec.delete(spec.actuator(name))
    return spec


def without_missing_meshes(spec, folder: Path, source: str):  # noqa: ANN001, ANN202
    """The model of ``spec`` (files relative to ``folder``) compiled without the mesh geoms
    whose files are missing (a robot folder copied without its ``assets/``: the meshes draw and
    collide, the dynamics need only the bodies' inertias), or None when no mesh file is missing
    or it still does not compile. A body that loses a mesh geom must state its ``<inertial>``
    (and the compiler must not take inertias from the geoms): its inertia would otherwise have
    come from the missing file, which is an error naming it."""
    mujoco = _mujoco()
    folder = folder / (spec.meshdir or "")

    def found(file: str) -> bool:
        return (folder / file).is_file() or Path(file).is_file()

    missing = {mesh.name: mesh for mesh in spec.meshes if mesh.file and not found(mesh.file)}
    if not missing:
        return None
    lost = [g for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH and g.meshname in missing]
    from_geoms = spec.compiler.inertiafromgeom == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE
    for geom in lost:
        body = geom.parent
        if from_geoms or not body.explicitinertial:
            raise InputError(
                f"mesh file '{missing[geom.meshname].file}' not found in {folder}, and body "
                f"'{body.name}' takes its inertia from it: give the meshes, or an <inertial> "
                "for that body",
                source=source,
            )
        spec.delete(geom)
    for mesh in missing.values():
        spec.delete(mesh)
    try:
        from physid.files.io import quiet_stderr

        with quiet_stderr():
            return spec.compile()
    except ValueError:
        return None


def _refuse_unsupported(mj, source: str) -> None:
    """Features of the MJCF that a chain of rigid bodies with joint friction cannot hold."""
    mujoco = _mujoco()
    name = lambda kind, k: mujoco.mj_id2name(mj, kind, k) or f"#{k}"  # noqa: E731
    joint_kind = mujoco.mjtObj.mjOBJ_JOINT
    for j in range(mj.njnt):
        kind = int(mj.jnt_type[j])  # numpy ints do not compare equal to the enum in a tuple
        if kind == int(mujoco.mjtJoint.mjJNT_BALL):
            raise InputError(
                f"joint '{name(joint_kind, j)}' is a ball joint: physid models revolute and "
                "prismatic joints (and a free base)",
                source=source,
            )
        if kind in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            if mj.qpos0[mj.jnt_qposadr[j]] != 0.0:
                raise InputError(
                    f"joint '{name(joint_kind, j)}' has ref={mj.qpos0[mj.jnt_qposadr[j]]:g}: "
                    "positions measured from a reference other than the body frame are not "
                    "supported; remove ref and rotate the body instead",
                    source=source,
                )
            if mj.jnt_stiffness[j] != 0.0:
                raise InputError(
                    f"joint '{name(joint_kind, j)}' has a spring (stiffness "
                    f"{mj.jnt_stiffness[j]:g}): not part of physid's joint model",
                    source=source,
                )
            if not mujoco.mj_id2name(mj, joint_kind, j):
                raise InputError(
                    f"joint #{j} (body '{name(mujoco.mjtObj.mjOBJ_BODY, mj.jnt_bodyid[j])}') has "
                    "no name: the recording's columns name joints, so every joint needs one",
                    source=source,
                )
    fixed = int(mujoco.mjtWrap.mjWRAP_JOINT)
    for k in range(mj.ntendon):  # a fixed tendon couples joints (coupled_joints); others pull
        wraps = range(mj.tendon_adr[k], mj.tendon_adr[k] + mj.tendon_num[k])
        if any(int(mj.wrap_type[w]) != fixed for w in wraps):
            raise InputError(
                f"tendon '{name(mujoco.mjtObj.mjOBJ_TENDON, k)}' is spatial: "
                "tendon forces are not part of physid's joint model",
                source=source,
            )


def gravity_compensated_joints(mj) -> dict[str, list[str]]:  # noqa: ANN001 - mujoco.MjModel
    """The joints whose actuator force leaves out a weight MuJoCo cancels by a passive force:
    joint -> the bodies beyond it with ``gravcomp`` (common in Menagerie arms). A joint with
    ``actuatorgravcomp`` takes that force through its actuator, which its logged actuator force
    then includes: not listed."""
    mujoco = _mujoco()
    body = lambda b: mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b) or f"body {b}"  # noqa: E731

    def beyond(root: int) -> list[int]:
        return [b for b in range(mj.nbody) if any(a == root for a in _ancestors(mj, b))]

    found = {}
    for j in range(mj.njnt):
        if mj.jnt_actgravcomp[j] != 0:
            continue
        carried = [body(b) for b in beyond(int(mj.jnt_bodyid[j])) if mj.body_gravcomp[b] != 0.0]
        if carried:
            found[mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint {j}"] = carried
    return found


def implicit_actuator_armature(mj) -> dict[str, float]:  # noqa: ANN001 - mujoco.MjModel
    """Per joint, the apparent armature ``timestep x kv`` that MuJoCo's implicit integrators
    (``implicit``, ``implicitfast``) add to a joint driven by an actuator with a velocity gain
    (a position servo's ``kv``, a general actuator's ``-biasprm[2]``): the actuator force
    logged at a step is computed at the step's start velocity, the integrator applies it at
    the step's end. {} for the Euler and RK4 integrators."""
    mujoco = _mujoco()
    kinds = mujoco.mjtIntegrator
    implicit = (int(kinds.mjINT_IMPLICIT), int(kinds.mjINT_IMPLICITFAST))
    if int(mj.opt.integrator) not in implicit:
        return {}
    found: dict[str, float] = {}
    for a in range(mj.nu):
        if int(mj.actuator_trntype[a]) != int(mujoco.mjtTrn.mjTRN_JOINT):
            continue
        gain = -float(mj.actuator_biasprm[a][2]) * float(mj.actuator_gear[a][0]) ** 2
        if gain > 0.0:
            joint = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, int(mj.actuator_trnid[a][0]))
            found[joint] = found.get(joint, 0.0) + float(mj.opt.timestep) * gain
    return found


def _ancestors(mj, b: int) -> list[int]:  # noqa: ANN001
    """Body ``b`` and every body above it (to the world, body 0)."""
    chain = [b]
    while chain[-1] > 0:
        chain.append(int(mj.body_parentid[chain[-1]]))
    return chain


def coupled_joints(mj) -> dict[str, tuple[str, float]]:  # noqa: ANN001 - mujoco.MjModel
    """The MJCF's coupled joints, as URDF mimic joints are read
    (:func:`physid.robot.model.mimic_joints`): joint -> (a joint it is coupled to, its position
    when that one is at 0). A joint equality couples its two joints (the first follows the
    second; its constant term is the offset); a fixed tendon every joint it lists (a gripper's
    fingers driven together, as in MuJoCo Menagerie's Panda). Identification needs independent
    joints: coupled ones must be held still or moved by their recorded positions."""
    mujoco = _mujoco()
    joint = lambda k: mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, int(k))  # noqa: E731
    coupled: dict[str, tuple[str, float]] = {}
    for k in range(mj.ntendon):
        wraps = range(mj.tendon_adr[k], mj.tendon_adr[k] + mj.tendon_num[k])
        members = [joint(mj.wrap_objid[w]) for w in wraps]
        for a, b in zip(members, members[1:] + members[:1], strict=True):
            if a != b:
                coupled.setdefault(a, (b, 0.0))
    for k in range(mj.neq):
        kind = int(mj.eq_type[k])
        if kind == int(mujoco.mjtEq.mjEQ_JOINT) and mj.eq_obj2id[k] >= 0:
            first, second = joint(mj.eq_obj1id[k]), joint(mj.eq_obj2id[k])
            coupled[first] = (second, float(mj.eq_data[k][0]))
        elif kind == int(mujoco.mjtEq.mjEQ_JOINT):  # one joint held at a constant position
            coupled[joint(mj.eq_obj1id[k])] = (joint(mj.eq_obj1id[k]), float(mj.eq_data[k][0]))
        elif kind == int(mujoco.mjtEq.mjEQ_TENDON):
            for t in (mj.eq_obj1id[k], mj.eq_obj2id[k]):
                if t < 0:
                    continue
                for w in range(mj.tendon_adr[t], mj.tendon_adr[t] + mj.tendon_num[t]):
                    coupled.setdefault(joint(mj.wrap_objid[w]), (joint(mj.wrap_objid[w]), 0.0))
    return coupled


def _spatial_inertia(mass: float, com: np.ndarray, rotation: np.ndarray, principal: np.ndarray):
    """Pinocchio inertia of a body with principal moments ``principal`` about axes ``rotation``
    (columns) at ``com``, all in one frame."""
    about_com = rotation @ np.diag(principal) @ rotation.T
    return pin.Inertia(float(mass), np.asarray(com, float), 0.5 * (about_com + about_com.T))


def _inertias_from_mujoco(pm: pin.Model, mj) -> list[pin.Inertia]:
    """Per Pinocchio joint, the inertia of the MuJoCo bodies it carries, in the joint frame.

    Each body's inertia is read in its own frame (MuJoCo's ``body_ipos``, ``body_iquat``,
    ``body_inertia``) and placed through the Pinocchio frame of the same body name, so the two
    libraries' world frames need not agree (Pinocchio drops the placement of bodies welded to
    the world)."""
    mujoco = _mujoco()
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, pin.neutral(pm))
    inertias = [pin.Inertia.Zero() for _ in range(pm.njoints)]
    for body in range(1, mj.nbody):
        carrier = int(mj.body_weldid[body])
        if mj.body_mass[body] == 0.0:
            continue
        if carrier == 0:  # welded to the world: on the base physid added, if any
            if not pm.existJointName(ROOT_JOINT):
                continue
            joint_id = pm.getJointId(ROOT_JOINT)
        else:
            joint = int(mj.body_jntadr[carrier] + mj.body_jntnum[carrier] - 1)
            joint_id = pm.getJointId(mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, joint))
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, body)
        if not name or not pm.existFrame(name, pin.FrameType.BODY):
            raise InputError(
                f"body #{body} of the MJCF has mass but no name Pinocchio knows "
                "it by: name every body that has mass"
            )
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, mj.body_iquat[body])
        local = _spatial_inertia(
            mj.body_mass[body], mj.body_ipos[body], rotation.reshape(3, 3), mj.body_inertia[body]
        )
        world = pd.oMf[pm.getFrameId(name, pin.FrameType.BODY)].act(local)
        inertias[joint_id] += pd.oMi[joint_id].actInv(world)
    return inertias


def _joint_terms_from_mujoco(pm: pin.Model, mj) -> None:
    """``damping``, ``frictionloss``, ``armature`` and the position range of every joint, as
    MuJoCo compiled them."""
    mujoco = _mujoco()
    for joint_id in range(1, pm.njoints):
        j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, pm.names[joint_id])
        if j < 0:
            continue
        dofs = slice(int(mj.jnt_dofadr[j]), int(mj.jnt_dofadr[j]) + pm.joints[joint_id].nv)
        v = slice(pm.joints[joint_id].idx_v, pm.joints[joint_id].idx_v + pm.joints[joint_id].nv)
        pm.damping[v] = mj.dof_damping[dofs]
        pm.friction[v] = mj.dof_frictionloss[dofs]
        pm.armature[v] = mj.dof_armature[dofs]
        if pm.joints[joint_id].nq == 1:
            # MuJoCo's compiled range (radians for a hinge, metres for a slide): Pinocchio's
            # reader turns a slide's range from degrees too under <compiler angle="degree">
            # (0.1 m read as 0.00175), and an unlimited joint has none
            q = pm.joints[joint_id].idx_q
            low, high = mj.jnt_range[j] if mj.jnt_limited[j] else (-np.inf, np.inf)
            pm.lowerPositionLimit[q], pm.upperPositionLimit[q] = low, high


def pinocchio_world_rotation(pm: pin.Model, mj) -> np.ndarray:  # noqa: ANN001
    """The rotation of Pinocchio's world frame in MuJoCo's world (3, 3): Pinocchio's MJCF
    parser takes the root body's frame for its world and drops that body's ``pos`` and
    ``quat`` (Menagerie's UR5e base turns half a turn about z). Read from the first body both
    place, at the reference configuration; the identity for a root body at the world's
    orientation. A vector in Pinocchio's frame ``v`` is ``R @ v`` in MuJoCo's world."""
    mujoco = _mujoco()
    data = mujoco.MjData(mj)
    mujoco.mj_kinematics(mj, data)
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, pin.neutral(pm))
    for b in range(1, mj.nbody):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)
        if name and pm.existFrame(name, pin.FrameType.BODY):
            frame = pd.oMf[pm.getFrameId(name, pin.FrameType.BODY)]
            return data.xmat[b].reshape(3, 3) @ frame.rotation.T
    return np.eye(3)


def check_against_mujoco(pm: pin.Model, mj, source: str, samples: int = 5) -> float:
    """Largest relative difference between the inverse dynamics of ``pm`` (its armature
    included, as Pinocchio's RNEA does) and MuJoCo's
    ``mj_inverse`` (constraints, damping and springs off) at random states; refuses the model
    beyond :data:`AGREEMENT_RELATIVE`, naming the joint."""
    mujoco = _mujoco()
    if pm.nq != mj.nq or pm.nv != mj.nv:
        raise InputError(
            f"Pinocchio reads {pm.nv} degrees of freedom, MuJoCo {mj.nv}: an MJCF construct "
            "physid cannot map",
            source=source,
        )
    check = mj  # the caller's compiled model: only its simulation flags are changed
    check.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    check.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_DAMPER
    check.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SPRING
    data, pd = mujoco.MjData(check), pm.createData()
    rng = np.random.default_rng(0)
    worst, where = 0.0, ""
    free = pm.nq != pm.nv
    for _ in range(samples):
        q = (
            pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
            if free
            else rng.uniform(-1.0, 1.0, pm.nq)
        )
        v, a = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
        qpos = q.copy()
        if free:  # Pinocchio stores the quaternion x, y, z, w; MuJoCo w, x, y, z
            qpos[3:7] = [q[6], q[3], q[4], q[5]]
        data.qpos[:], data.qvel[:], data.qacc[:] = qpos, v, a
        mujoco.mj_inverse(check, data)
        expected = data.qfrc_inverse
        got = pin.rnea(pm, pd, q, v, a)  # Pinocchio's RNEA includes the model's armature
        scale = max(float(np.max(np.abs(expected))), 1e-9)
        errors = np.abs(got - expected) / scale
        if errors.max() > worst:
            worst = float(errors.max())
            where = _dof_name(pm, int(np.argmax(errors)))
    if worst > AGREEMENT_RELATIVE:
        raise InputError(
            f"the MJCF's dynamics differ from MuJoCo's own by {worst:.2g} (relative) at joint "
            f"'{where}': it uses a feature physid cannot represent",
            source=source,
        )
    return worst


def _dof_name(pm: pin.Model, dof: int) -> str:
    for joint_id in range(1, pm.njoints):
        start = pm.joints[joint_id].idx_v
        if start <= dof < start + pm.joints[joint_id].nv:
            return pm.names[joint_id]
    return "?"


def load_mjcf(path: str | Path, *, floating_base: bool = False) -> pin.Model:
    """The Pinocchio model of an MJCF file (module docstring), checked against MuJoCo.

    ``floating_base``: the MJCF's own free joint is the floating base (as a URDF's added
    ``root_joint``: position, then quaternion x, y, z, w); without one, one is added.
    """
    from physid.files.io import quiet_stderr

    path = Path(path)
    if not path.is_file():
        raise InputError(f"MJCF file not found: {path}")
    mj = compile_mjcf(path)
    _refuse_unsupported(mj, str(path))
    mujoco = _mujoco()
    has_free = bool(np.any(mj.jnt_type == int(mujoco.mjtJoint.mjJNT_FREE)))
    try:
        with quiet_stderr():
            if floating_base and not has_free:
                pm = pin.buildModelFromMJCF(str(path), pin.JointModelFreeFlyer(), ROOT_JOINT)
                if isinstance(pm, tuple):  # Pinocchio 4 returns (model, constraint models)
                    pm = pm[0]
            else:
                pm = pin.buildModelFromMJCF(str(path))
    except Exception as error:  # Pinocchio raises plain RuntimeError/ValueError
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"cannot parse MJCF: {message}", source=str(path)) from None
    if has_free and not floating_base:
        raise InputError(
            "the MJCF's root body has a free joint: this command identifies a fixed-base robot; "
            "remove the free joint (or use a floating-base command)",
            source=str(path),
        )
    for joint_id, inertia in enumerate(_inertias_from_mujoco(pm, mj)):
        if joint_id > 0:
            pm.inertias[joint_id] = inertia
    _joint_terms_from_mujoco(pm, mj)
    # <option gravity>: the robot's gravity (a file for a ceiling-mounted arm says it there),
    # in the frame Pinocchio's world is: the root body's, whose placement its parser drops
    rotation = np.eye(3) if has_free else pinocchio_world_rotation(pm, mj)
    pm.gravity = pin.Motion(rotation.T @ np.array(mj.opt.gravity, float), np.zeros(3))
    if not (floating_base and not has_free):  # an added base has no MuJoCo twin to compare
        check_against_mujoco(pm, mj, str(path))
    return pm
