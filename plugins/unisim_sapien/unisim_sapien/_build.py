"""From an MJCF model (``mjcf_lite`` tables + :mod:`._mjcf_extra`) to SAPIEN PhysX articulations.

One ``sapien.Scene`` on its own ``PhysxCpuSystem`` per env. Each world child body is one
articulation: a free joint makes a floating root, no joint a fixed root at the body's pose, a
hinge/slide joint a fixed massless-in-effect anchor link at the world frame with the body as its
child. Every link, joint and articulation gets :data:`unisim_physx.MUJOCO_BODY_PROPERTIES`
and the drives of :func:`unisim_physx.physx_drives`; joints are ``revolute_unwrapped`` (an
unlimited PhysX ``revolute`` joint wraps at ±2π) or ``prismatic``, PhysX's joint axis (x) rotated
onto the MJCF axis.

Collision: MJCF ``contype``/``conaffinity`` are PhysX collision groups 0/1 (SAPIEN's filter is
MuJoCo's bitmask test); PhysX never collides shapes of one link or of a jointed parent/child
link pair. The pairs this gives are compared with ``LiteModel.collision_pairs()`` (MuJoCo's
filter) and a scene where they differ is refused (``contact_filter``).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sapien
from sapien import physx

from unisim_core import LiteModel, UnsupportedCapabilityError
from unisim_core.contract import quat as Q
from unisim_physx import MUJOCO_BODY_PROPERTIES, PhysxDrives, PhysxSolverConfig

from ._equality import Connect, JointTendon
from ._mjcf_extra import MeshFile

__all__ = ["Layout", "actors", "build_env", "check_scene", "check_tendons", "configure_engine", "friction_ranks",
           "layout_of", "posed", "welded_to_world", "world_pose"]

_NAME = "sapien"
_X_TO_Z = np.array([np.sqrt(0.5), 0.0, -np.sqrt(0.5), 0.0])  # rotates PhysX's +x (plane normal, capsule axis) onto +z
_FLOAT32_MAX = float(np.finfo(np.float32).max)  # PhysX's "no force limit"
_SHAPES = ("plane", "box", "sphere", "capsule", "cylinder", "hfield", "mesh", "ellipsoid")
#: PhysX has no ellipsoid: a convex hull of ``_ELLIPSOID_RINGS`` x ``_ELLIPSOID_SECTORS`` points on the
#: ellipsoid pushed out by ``_ELLIPSOID_PUSH``, so its surface is within 2.4 % of the radii (inside at face
#: centres, outside at the points); named in a SapienModellingWarning (docs/sapien.md).
_ELLIPSOID_RINGS, _ELLIPSOID_SECTORS = 12, 20
_ELLIPSOID_PUSH = 2.0 / (1.0 + np.cos(np.pi / _ELLIPSOID_RINGS) * np.cos(np.pi / _ELLIPSOID_SECTORS))
#: A body with several joints is a chain of links, one per joint, the body the last: each link before it
#: is a copy of the body scaled by this (mass and inertia; PhysX links need both > 0), so the joints
#: before the last carry this fraction of the body's inertia more than MuJoCo's (docs/sapien.md).
CHAIN_LINK_MASS = 1e-6


@dataclass(frozen=True)
class Layout:
    """Where the contract's quantities live in one env (the same for every env).

    ``tops``: per articulation, ``(top body, floating root?)``; ``body_link (nbody, 2)``:
    ``(articulation, link index)`` of each contract body (``-1`` for the world and bodies of a mocap
    body's kinematic actor);
    ``free``: per free joint ``(articulation, qpos column, qvel column, body)``;
    ``dof_src``: per hinge/slide joint in MJCF order (the drives' joint order)
    ``(articulation, active-joint index, qpos column, qvel column)``.
    """

    tops: tuple[tuple[int, bool], ...]
    body_link: np.ndarray
    free: tuple[tuple[int, int, int, int], ...]
    dof_src: np.ndarray


def _refuse(feature: str, detail: str) -> UnsupportedCapabilityError:
    return UnsupportedCapabilityError(_NAME, feature, detail)


def _colliding(lite: LiteModel) -> list[int]:
    return [g for g, row in enumerate(lite.geoms) if lite.contact and (row["contype"] or row["conaffinity"])]


def check_scene(lite: LiteModel, assets: list[MeshFile | None], path: str) -> None:
    """Refuse by feature what this mapping cannot build: a shape type PhysX lacks, an unreadable
    height field, a collision filter PhysX cannot express, a model whose moving bodies have no mass at all."""
    for g in _colliding(lite):
        kind = lite.geoms[g]["type"]
        if kind not in _SHAPES:
            raise _refuse(f"{kind}_geom", f"{path}: colliding geom {lite.geoms[g]['name'] or g!r} is a {kind}; "
                          f"PhysX shapes here: {', '.join(_SHAPES)}")
        if kind in ("plane", "hfield") and not welded_to_world(lite)[lite.geoms[g]["body"]]:
            raise _refuse(f"moving_{kind}", f"{path}: a {kind} geom on a moving body (PhysX: static only)")
        if kind == "mesh" and not isinstance(assets[g], MeshFile):
            raise _refuse("mesh_geom", f"{path}: the mesh file of colliding geom {lite.geoms[g]['name'] or g!r} was "
                          "not found")
    fixed = posed(lite)
    if not any(lite.body_mass[b] > 0.0 for b in range(1, len(lite.body_names)) if not fixed[b]):
        moving = [lite.body_names[b] for b in range(1, len(lite.body_names)) if not fixed[b]]
        if moving:
            raise _refuse("massless_body", f"{path}: the moving bodies {moving} have no mass at all; a moving PhysX "
                          "link needs mass and inertia > 0")
    for row in lite.joints:
        b = lite.body_parent[row["body"]]
        while b and not lite.body_mocap[b]:
            b = lite.body_parent[b]
        if b:
            raise _refuse("mocap_joint_child", f"{path}: joint {row['name']!r} is below mocap body "
                          f"{lite.body_names[b]!r}; a mocap body is a PhysX kinematic actor here, which no "
                          "articulation can hang from")
    if lite.contact_pairs:
        raise _refuse("contact_pair", f"{path}: <contact><pair> {lite.contact_pairs}; PhysX filters by groups only")
    bits = ignore_bits(lite)
    want, got = set(lite.collision_pairs()), set(_physx_pairs(lite, bits))
    if want != got:
        raise _refuse("contact_filter", f"{path}: MuJoCo tests geom pairs {sorted(want - got)} that PhysX would not "
                      f"and PhysX pairs {sorted(got - want)} that MuJoCo would not")


def actors(lite: LiteModel) -> list[int]:
    """Per body, the PhysX actor holding its geoms: 0 (the static actor) for a body welded to the world,
    the mocap body for one welded to a mocap body (a kinematic actor), else the body's own link."""
    out = [0]
    for b in range(1, len(lite.body_names)):
        p = lite.body_parent[b]
        out.append(b if lite.body_mocap[b] or lite.body_joint[b] >= 0 else out[p])
    return out


def friction_ranks(lite: LiteModel) -> np.ndarray:
    """Per geom, how much its contact pairs' friction matters (``_friction.physx_frictions``): 0 a plane or
    height field (the ground), 1 another geom on the static actor or a mocap body's kinematic actor, 2 a
    moving one."""
    actor = actors(lite)
    return np.array([0 if row["type"] in ("plane", "hfield") else 2 if _moving(lite, actor[row["body"]]) else 1
                     for row in lite.geoms], dtype=np.int64).reshape(-1)


def _moving(lite: LiteModel, actor: int) -> bool:
    """Whether PhysX simulates ``actor`` (an articulation link), not static or kinematic (a mocap body)."""
    return actor != 0 and not lite.body_mocap[actor]


def ignore_bits(lite: LiteModel) -> np.ndarray:
    """Per body, PhysX ignore-group bits (``set_collision_groups`` group 2, all shapes in one id group 3):
    two bodies sharing a bit never collide, so each bit is a group of bodies every pair of which PhysX's
    own filter would let collide and MuJoCo's filters out entirely (an ``<exclude>``, a weld parent/child
    across a jointless link), or cannot collide anyway. Greedily grown from the pairs still to ignore
    (pal_talos' 33 pairs, a gripper's fingertips pairwise, fit in fewer bits). More than 32 groups, or a
    pair filtered geom by geom, leaves a mismatch that :func:`check_scene` refuses (``contact_filter``)."""
    extra = set(_physx_pairs(lite, None)) - set(lite.collision_pairs())
    body = [g["body"] for g in lite.geoms]  # MJCF bodies: shapes of the static actor keep theirs
    pair = lambda a, b: (a, b) if a < b else (b, a)  # noqa: E731
    todo = sorted({pair(body[i], body[j]) for i, j in extra})
    ignore, keep = set(todo), {pair(body[i], body[j]) for i, j in lite.collision_pairs()}
    bits = np.zeros(len(lite.body_names), dtype=np.int64)
    for k in range(32):
        if not todo:
            break
        group = set(todo[0])
        for c in sorted({x for e in todo for x in e} - group, key=lambda c: -sum(c in e for e in todo)):
            if not any(pair(c, g) in keep for g in group) and any(pair(c, g) in ignore for g in group):
                group.add(c)
        for g in group:
            bits[g] |= 1 << k
        todo = [e for e in todo if not (e[0] in group and e[1] in group)]
    return bits


def welded_to_world(lite: LiteModel) -> list[bool]:
    """Per body, whether it is welded to the world (no joint or mocap body on its path to it): MuJoCo's
    weld 0, whose geoms are static. Their shapes go on the static world actor here, as in MuJoCo."""
    out = [True]
    for b in range(1, len(lite.body_names)):
        out.append(out[lite.body_parent[b]] and lite.body_joint[b] < 0 and not lite.body_mocap[b])
    return out


def posed(lite: LiteModel) -> list[bool]:
    """Per body, whether its pose is never the dynamics' (welded to the world, or to a mocap body: a
    mocap body is the fixed root of its own articulation, moved by ``set_root_pose``); such a link's
    mass and inertia are not used."""
    out = [True]
    for b in range(1, len(lite.body_names)):
        out.append(lite.body_joint[b] < 0 and (out[lite.body_parent[b]] or lite.body_mocap[b]))
    return out


def world_pose(lite: LiteModel, b: int, root: int = 0) -> sapien.Pose:
    """Body ``b``'s frame in the world (or in its ancestor ``root``'s frame)."""
    pose = sapien.Pose()
    chain = []
    while b != root:
        chain.append(b)
        b = lite.body_parent[b]
    for c in reversed(chain):
        pose = pose * _pose(lite.body_pos[c], lite.body_quat[c])
    return pose


def _physx_pairs(lite: LiteModel, bits: np.ndarray | None) -> list[tuple[int, int]]:
    """Geom pairs PhysX tests: not on one actor, not a jointed parent/child link pair, not sharing an
    ignore bit (``bits``), not both static or kinematic, and passing the contype/conaffinity groups."""
    G, parent, actor = lite.geoms, lite.body_parent, actors(lite)
    chain = [len(_joints_of(lite, b)) > 1 for b in range(len(lite.body_names))]

    def adjacent(p: int, c: int) -> bool:  # PhysX filters a link and its parent link (a chain puts links between)
        return parent[c] == p and not chain[c]

    cols = _colliding(lite)
    out = []
    for a, i in enumerate(cols):
        for j in cols[a + 1:]:
            bi, bj = actor[G[i]["body"]], actor[G[j]["body"]]
            mi, mj = _moving(lite, bi), _moving(lite, bj)
            if bi == bj or (mi and mj and (adjacent(bi, bj) or adjacent(bj, bi))):
                continue
            if bits is not None and bits[G[i]["body"]] & bits[G[j]["body"]]:
                continue
            if not (mi or mj):  # static and kinematic actors: PhysX never pairs them (MuJoCo: both static)
                continue
            if (G[i]["contype"] & G[j]["conaffinity"]) or (G[j]["contype"] & G[i]["conaffinity"]):
                out.append((i, j))
    return out


def configure_engine(config: PhysxSolverConfig, gravity: np.ndarray) -> None:
    """SAPIEN's process-wide PhysX scene config, read when a ``PhysxCpuSystem`` is created: the
    solver (PGS unless asked: TGS drifts on articulated chains, docs/sapien.md), bounce
    threshold, gravity; enhanced determinism, so a state written twice replays the same."""
    kwargs = {"gravity": np.asarray(gravity, dtype=np.float32), "enable_tgs": config.solver_type == "TGS",
              "enable_enhanced_determinism": True}
    if config.bounce_threshold_velocity is not None:
        kwargs["bounce_threshold"] = float(config.bounce_threshold_velocity)
    physx.set_scene_config(**kwargs)


def _pose(pos, quat) -> sapien.Pose:
    return sapien.Pose(np.asarray(pos, dtype=np.float32), np.asarray(quat, dtype=np.float32))


def _joint_frame(j: dict) -> np.ndarray:
    """Rotation taking PhysX's joint axis (+x) onto the MJCF joint axis (body frame), wxyz."""
    axis = np.asarray(j["axis"], dtype=np.float64)
    c = float(axis[0])
    if c < -1.0 + 1e-12:
        return np.array([0.0, 0.0, 0.0, 1.0])
    q = np.array([1.0 + c, 0.0, -axis[2], axis[1]])  # [1 + x.a, x × a]: np.cross costs ~80 µs a joint and env
    return q / np.linalg.norm(q)


def _add_shape(builder, lite: LiteModel, g: int, asset: MeshFile | None, mu: float,
               frame: sapien.Pose | None = None):
    """Add geom ``g`` to ``builder`` with a material of friction ``mu`` (static = dynamic, :mod:`._friction`);
    a height field's triangle mesh is returned instead (attach it). ``frame``: the body's pose in the
    builder's frame (a world-welded body's geoms on the static actor). Collision groups are set per
    shape after the build (:func:`_set_groups`)."""
    row = lite.geoms[g]
    pos, quat = np.asarray(row["pos"], dtype=np.float64), np.asarray(row["quat"], dtype=np.float64)
    mat = physx.PhysxMaterial(mu, mu, 0.0)
    kind, size = row["type"], np.asarray(row["size"], dtype=np.float64)
    if kind in ("capsule", "cylinder", "plane"):  # PhysX's axis / normal is x; MuJoCo's is z
        pose = _pose(pos, Q.quat_mul(quat, _X_TO_Z))
    else:
        pose = _pose(pos, quat)
    if frame is not None:
        pose = frame * pose
    if kind == "plane":
        builder.add_plane_collision(pose, material=mat)
    elif kind == "box":
        builder.add_box_collision(pose, half_size=size.tolist(), material=mat)
    elif kind == "sphere":
        builder.add_sphere_collision(pose, radius=float(size[0]), material=mat)
    elif kind == "capsule":
        builder.add_capsule_collision(pose, radius=float(size[0]), half_length=float(size[1]), material=mat)
    elif kind == "cylinder":
        builder.add_cylinder_collision(pose, radius=float(size[0]), half_length=float(size[1]), material=mat)
    elif kind == "ellipsoid":  # PhysX has none: the hull of a unit-sphere file, scaled by the radii
        builder.add_convex_collision_from_file(_unit_sphere_file(), pose, scale=size.tolist(), material=mat)
    elif kind == "mesh":  # PhysX cooks the file's convex hull, as MuJoCo collides a mesh
        builder.add_convex_collision_from_file(asset.path, pose, scale=list(asset.scale), material=mat)
    else:  # hfield: SAPIEN 3.0.3 exposes no PhysX height field; a static triangle mesh of MuJoCo's surface
        field = lite.hfields[row["hfield"]]  # (its base slab is not needed for contact from above)
        rx, ry, hz = (float(x) for x in field["size"][:3])
        data = np.asarray(field["data"], dtype=np.float64)  # row 0 at y = -ry, column 0 at x = -rx
        nr, nc = data.shape
        x, y = np.meshgrid(np.linspace(-rx, rx, nc), np.linspace(-ry, ry, nr))
        verts = np.stack([x.ravel(), y.ravel(), (data * hz).ravel()], axis=1).astype(np.float32)
        idx = np.arange(nr * nc).reshape(nr, nc)
        a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
        # MuJoCo's triangulation: each cell split along its (c, r)-(c+1, r+1) diagonal, both triangles facing +z
        tris = np.concatenate([np.stack([a, b, d], 1), np.stack([a, d, c], 1)]).astype(np.uint32)
        shape = physx.PhysxCollisionShapeTriangleMesh(verts, tris, [1.0, 1.0, 1.0], mat)
        shape.local_pose = pose
        return shape
    return None


@functools.cache
def _unit_sphere_file() -> str:
    """An OBJ of ``_ELLIPSOID_RINGS`` x ``_ELLIPSOID_SECTORS`` points (and the poles) on a sphere of radius
    ``_ELLIPSOID_PUSH``, written once per process to a temporary folder removed at exit."""
    folder = tempfile.mkdtemp(prefix="unisim-sapien-")
    atexit.register(shutil.rmtree, folder, True)
    theta = np.pi * np.arange(1, _ELLIPSOID_RINGS + 1) / (_ELLIPSOID_RINGS + 1)
    phi = 2.0 * np.pi * np.arange(_ELLIPSOID_SECTORS) / _ELLIPSOID_SECTORS
    t, f = np.meshgrid(theta, phi, indexing="ij")
    points = np.stack([np.sin(t) * np.cos(f), np.sin(t) * np.sin(f), np.cos(t)], axis=-1).reshape(-1, 3)
    points = _ELLIPSOID_PUSH * np.concatenate([[[0.0, 0.0, 1.0]], points, [[0.0, 0.0, -1.0]]])
    idx = 2 + np.arange(_ELLIPSOID_RINGS * _ELLIPSOID_SECTORS).reshape(_ELLIPSOID_RINGS, _ELLIPSOID_SECTORS)
    nxt = np.roll(idx, -1, axis=1)
    faces = [(1, int(a), int(b)) for a, b in zip(idx[0], nxt[0])]
    faces += [(int(a), int(c), int(d)) for r in range(_ELLIPSOID_RINGS - 1) for a, c, d in
              zip(idx[r], idx[r + 1], nxt[r + 1])]
    faces += [(int(a), int(d), int(b)) for r in range(_ELLIPSOID_RINGS - 1) for a, b, d in
              zip(idx[r], nxt[r], nxt[r + 1])]
    faces += [(len(points), int(b), int(a)) for a, b in zip(idx[-1], nxt[-1])]
    path = os.path.join(folder, "sphere.obj")
    with open(path, "w") as out:
        out.writelines(f"v {x:.9f} {y:.9f} {z:.9f}\n" for x, y, z in points)
        out.writelines(f"f {a} {b} {c}\n" for a, b, c in faces)
    return path


def layout_of(lite: LiteModel, arts: list) -> Layout:
    """The per-env layout, from one env's built articulations (PhysX orders links and active joints
    itself: they are found by the names :func:`build_env` gives them, ``b<body id>``, ``j<joint id>``)."""
    nb = len(lite.body_names)
    tops = _tops(lite)
    art_of = {b: a for a, (top, _) in enumerate(tops) for b in range(1, nb) if _under(lite, b, top)}
    body_link = np.full((nb, 2), -1, dtype=np.int64)
    for b in art_of:  # the other bodies are (welded to) mocap bodies: kinematic actors
        names = [link.name for link in arts[art_of[b]].get_links()]
        body_link[b] = (art_of[b], names.index(f"b{b}"))
    free, dof_src = [], []
    for j, row in enumerate(lite.joints):
        a = art_of[row["body"]]
        if row["type"] == "free":
            if lite.body_parent[row["body"]] != 0:
                raise _refuse("nested_free_joint", f"free joint {row['name']!r} below a world child")
            free.append((a, row["qposadr"], row["dofadr"], row["body"]))
        else:
            active = [joint.name for joint in arts[a].get_active_joints()]
            dof_src.append((a, active.index(f"j{j}"), row["qposadr"], row["dofadr"]))
    return Layout(tops=tuple(tops), body_link=body_link, free=tuple(free),
                  dof_src=np.array(dof_src, dtype=np.int64).reshape(-1, 4))


def _tops(lite: LiteModel) -> list[tuple[int, bool]]:
    """``(world child, floating root?)`` per articulation, in body order (mocap bodies are kinematic actors)."""
    out = []
    for b in range(1, len(lite.body_names)):
        if lite.body_parent[b] == 0 and not lite.body_mocap[b]:
            j = lite.body_joint[b]
            out.append((b, j >= 0 and lite.joints[j]["type"] == "free"))
    return out


def _set_groups(component, lite: LiteModel, geoms: list[int], path: str, bits: np.ndarray) -> dict[int, object]:
    """Each shape of ``component`` (in the order its geoms were added) gets its geom's MuJoCo
    contype/conaffinity as PhysX groups 0/1 and its MJCF body's ignore ``bits`` (group 2, id group
    3 = 1); a shape SAPIEN failed to cook (it skips those) refuses. Returns ``{geom: shape}``."""
    shapes = component.get_collision_shapes()
    if len(shapes) != len(geoms):
        names = [lite.geoms[g]["name"] or str(g) for g in geoms]
        raise _refuse("mesh_geom", f"{path}: PhysX built {len(shapes)} collision shapes for geoms {names} (a mesh "
                      "that does not cook into a convex hull)")
    for shape, g in zip(shapes, geoms):
        row = lite.geoms[g]
        shape.set_collision_groups([int(row["contype"]), int(row["conaffinity"]), int(bits[row["body"]]), 1])
    return dict(zip(geoms, shapes))


def build_env(lite: LiteModel, assets: list[MeshFile | None], drives: PhysxDrives,
              config: PhysxSolverConfig, dt: float, friction: np.ndarray, tendons: Sequence[JointTendon] = (),
              joins: Sequence[Connect] = (), scene: sapien.Scene | None = None,
              origin: tuple[float, float] = (0.0, 0.0), path: str = "") -> tuple[sapien.Scene, list, dict, dict]:
    """One env: its scene, articulations, ``{colliding geom: PhysX shape}`` and ``{mocap body: kinematic
    PhysxRigidDynamicComponent}`` (``configure_engine`` must have run). ``friction (G,)``: each geom's PhysX
    material friction (:func:`._friction.physx_frictions`); ``tendons``: the joint equalities as fixed tendons;
    ``joins``: the connect equalities as D6 joints with locked translations (``_equality``).
    ``scene``: add the articulations, placed at ``origin`` (x, y; m), to that scene instead, without its
    world geoms (the former ``benchmarks/sapien_overhead.py`` measured N articulations in one scene this way)."""
    cols = set(_colliding(lite))
    welded, fixed, bits = welded_to_world(lite), posed(lite), ignore_bits(lite)
    statics = [g for g in sorted(cols) if welded[lite.geoms[g]["body"]]]
    shapes: dict[int, object] = {}
    if scene is None:
        scene = sapien.Scene([physx.PhysxCpuSystem()])
        scene.set_timestep(dt)
    else:
        statics = []
    shift = sapien.Pose([float(origin[0]), float(origin[1]), 0.0])
    if statics:
        sb = scene.create_actor_builder()
        sb.set_physx_body_type("static")
        statics.sort(key=lambda g: lite.geoms[g]["type"] == "hfield")  # attached after the builder's shapes
        meshes = [_add_shape(sb, lite, g, assets[g], float(friction[g]), world_pose(lite, lite.geoms[g]["body"]))
                  for g in statics]
        world = sb.build_entity()
        comp = world.find_component_by_type(physx.PhysxRigidStaticComponent)
        for shape in meshes:
            if shape is not None:  # triangle meshes are attached directly (the builder reads files only)
                comp.attach(shape)
        shapes.update(_set_groups(comp, lite, statics, path, bits))
        _shape_offsets(comp.get_collision_shapes(), config)
        scene.add_entity(world)
    kinematic = {}
    actor = actors(lite)
    for m in (b for b in range(1, len(lite.body_names)) if lite.body_mocap[b]):
        kinematic[m] = _kinematic_actor(scene, lite, m, [g for g in sorted(cols) if actor[lite.geoms[g]["body"]] == m],
                                        assets, friction, config, path, bits, shapes)
    driven = [j for j, row in enumerate(lite.joints) if row["type"] in ("hinge", "slide")]
    damping = dict(zip(driven, drives.damping.tolist()))
    joint_drive = {f"j{j}": (a, d, f) for j, a, d, f in zip(driven, drives.armature.tolist(), drives.damping.tolist(),
                                                             drives.force_limit.tolist())}
    arts = []
    for top, floating in _tops(lite):
        ab = scene.create_articulation_builder()
        builders = {}
        tj = lite.body_joint[top]
        if tj >= 0 and not floating:  # anchor for a jointed world child
            anchor = ab.create_link_builder()
            anchor.set_name("anchor")
            anchor.set_mass_and_inertia(1.0, sapien.Pose(), [1.0, 1.0, 1.0])
            builders[0] = anchor
            ab.set_initial_pose(shift)
        else:
            ab.set_initial_pose(shift * _pose(lite.body_pos[top], lite.body_quat[top]))
        subtree = [b for b in range(top, len(lite.body_names)) if _under(lite, b, top)]
        for b in subtree:
            parent = builders.get(lite.body_parent[b] if b != top else 0)
            joints = [] if b == top and floating else _joints_of(lite, b)
            parent_pose = _pose(lite.body_pos[b], lite.body_quat[b])
            for j in joints[:-1]:  # several joints: a chain of light links in the body frame, the body last
                vb = ab.create_link_builder(parent)
                vb.set_name(f"v{j}")
                vb.set_mass_and_inertia(CHAIN_LINK_MASS * float(lite.body_mass[b]),
                                        _pose(lite.body_ipos[b], lite.body_iquat[b]),
                                        CHAIN_LINK_MASS * np.asarray(lite.body_inertia[b], dtype=np.float32))
                _set_joint(vb, lite.joints[j], j, parent_pose, damping[j])
                parent, parent_pose = vb, sapien.Pose()
            lb = ab.create_link_builder(parent)
            lb.set_name(f"b{b}")
            lb.set_mass_and_inertia(*link_inertia(lite, b, fixed))
            for g in sorted(cols):
                if lite.geoms[g]["body"] == b and not welded[b]:
                    _add_shape(lb, lite, g, assets[g], float(friction[g]))
            if joints:
                _set_joint(lb, lite.joints[joints[-1]], joints[-1], parent_pose, damping[joints[-1]])
            elif b != top:
                lb.set_joint_properties("fixed", [], parent_pose, sapien.Pose())
            builders[b] = lb
        art = ab.build(fix_root_link=not floating)
        for link in art.get_links():
            if link.name.startswith("b"):
                b = int(link.name[1:])
                shapes.update(_set_groups(link, lite, [g for g in sorted(cols) if lite.geoms[g]["body"] == b
                                                       and not welded[b]], path, bits))
        _mujoco_properties(art, joint_drive, config)
        _add_tendons(art, tendons)
        _gravity_off(art, lite, fixed)
        arts.append(art)
    _add_connects(scene, lite, arts, joins, shift)
    return scene, arts, shapes, kinematic


def _add_connects(scene: sapien.Scene, lite: LiteModel, arts: list, joins: Sequence[Connect],
                  shift: sapien.Pose) -> None:
    """Each connect equality as a PhysX D6 joint between its bodies' links (a body welded to the world, or the
    world: the joint's world side at the anchor's pose), its three translations locked, its rotations free."""
    if not joins:
        return
    link = {int(x.name[1:]): x for art in arts for x in art.get_links() if x.name.startswith("b")}
    for c in joins:
        ends = []
        for b, anchor in ((c.body1, c.anchor1), (c.body2, c.anchor2)):
            if b in link:
                ends.append((link[b], sapien.Pose(list(anchor))))
            else:  # the world or a body welded to it
                ends.append((None, shift * world_pose(lite, b) * sapien.Pose(list(anchor))))
        (body0, pose0), (body1, pose1) = ends if ends[1][0] is not None else ends[::-1]
        joint = scene.create_drive(body0, pose0, body1, pose1)
        for lock in (joint.set_limit_x, joint.set_limit_y, joint.set_limit_z):
            lock(0.0, 0.0)


def _kinematic_actor(scene, lite: LiteModel, m: int, geoms: list[int], assets, friction: np.ndarray,
                     config: PhysxSolverConfig, path: str, bits: np.ndarray, shapes: dict):
    """Mocap body ``m`` as a kinematic actor at its model pose holding ``geoms`` (its own and its welded
    descendants'), its centre of mass at its origin (the velocities PhysX reports are the origin's)."""
    builder = scene.create_actor_builder()
    builder.set_physx_body_type("kinematic")
    for g in geoms:
        _add_shape(builder, lite, g, assets[g], float(friction[g]), world_pose(lite, lite.geoms[g]["body"], m))
    entity = builder.build()
    entity.set_pose(world_pose(lite, m))
    comp = entity.find_component_by_type(physx.PhysxRigidDynamicComponent)
    comp.set_cmass_local_pose(sapien.Pose())
    shapes.update(_set_groups(comp, lite, geoms, path, bits))
    _shape_offsets(comp.get_collision_shapes(), config)
    return comp


def link_inertia(lite: LiteModel, b: int, fixed: list[bool]) -> tuple[float, sapien.Pose, np.ndarray]:
    """``(mass, inertial frame, principal inertia)`` of body ``b``'s link. A link the dynamics never move
    (``fixed``) gets any valid one (PhysX rejects zeros); a moving body without mass or inertia (a frame such as
    google_barkour_vb's camera mounts: MuJoCo merges it into its parent) gets CHAIN_LINK_MASS of the model's
    moving mass, and that times 1 cm² of inertia in each axis where it has none."""
    if fixed[b]:
        return 1.0, sapien.Pose(), np.ones(3, dtype=np.float32)
    mass, inertia = float(lite.body_mass[b]), np.asarray(lite.body_inertia[b], dtype=np.float64)
    if mass <= 0.0 or inertia.min() <= 0.0:
        light = CHAIN_LINK_MASS * sum(float(lite.body_mass[c]) for c in range(1, len(lite.body_names)) if not fixed[c])
        mass, inertia = max(mass, light), np.maximum(inertia, light * 1e-4)
    return mass, _pose(lite.body_ipos[b], lite.body_iquat[b]), inertia.astype(np.float32)


def check_tendons(lite: LiteModel, tendons: Sequence[JointTendon], path: str) -> None:
    """Refuse a joint equality between joints of two articulations (a PhysX fixed tendon lives in one)."""
    tops = [top for top, _ in _tops(lite)]
    for t in tendons:
        owners = {next(top for top in tops if _under(lite, lite.joints[j]["body"], top)) for j in t.joints}
        if len(owners) > 1:
            names = [lite.joints[j]["name"] for j in t.joints]
            raise _refuse("joint_equality", f"{path}: the joint equality of {names} couples two articulations "
                          "(world children); a PhysX fixed tendon lives in one")


def _add_tendons(art, tendons: Sequence[JointTendon]) -> None:
    """The fixed tendons whose joints are in ``art``: rooted at the links' common ancestor (a single joint's:
    its parent link), each joint's link with its coefficient, the links between with 0; the reciprocal
    coefficients are the coefficients (``_equality``)."""
    link_of = {joint.name: joint.child_link for joint in art.get_active_joints()}
    for t in tendons:
        names = [f"j{j}" for j in t.joints]
        if not all(n in link_of for n in names):
            continue
        paths = []  # per joint: its link, its parent, ..., the root link
        for n in names:
            path, link = [], link_of[n]
            while link is not None:
                path.append(link)
                link = link.parent
            paths.append(path)
        up = [[link.index for link in path] for path in paths]
        root = paths[0][1] if len(paths) == 1 else next(link for link in paths[0]
                                                        if all(link.index in ids for ids in up[1:]))
        chain, coefficients = [root], [0.0]
        for path, ids, c in zip(paths, up, t.coefficients):
            for link in reversed(path[:ids.index(root.index)]):
                if link.index not in [x.index for x in chain]:
                    chain.append(link)
                    coefficients.append(c if link is path[0] else 0.0)
        art.create_fixed_tendon(chain, coefficients, coefficients, rest_length=t.rest, stiffness=t.stiffness,
                                damping=t.damping)


def _joints_of(lite: LiteModel, b: int) -> list[int]:
    """The hinge/slide joints of body ``b``, in MuJoCo's order (each moves the body relative to the ones before)."""
    return [j for j, row in enumerate(lite.joints) if row["body"] == b and row["type"] in ("hinge", "slide")]


def _set_joint(lb, jt: dict, j: int, parent_pose: sapien.Pose, damping: float) -> None:
    """Link ``lb``'s inbound joint: MJCF joint ``jt`` (id ``j``), its frame on the MJCF axis at its anchor,
    ``parent_pose`` the link's frame in its parent's at q = 0 (the model pose)."""
    kind = "revolute_unwrapped" if jt["type"] == "hinge" else "prismatic"
    child = _pose(jt["pos"], _joint_frame(jt))
    lo, hi = np.asarray(jt["range"], dtype=np.float64) - jt["ref"]  # PhysX's 0 is the model pose
    lb.set_joint_name(f"j{j}")
    lb.set_joint_properties(kind, [[float(lo), float(hi)]], parent_pose * child, child,
                            friction=MUJOCO_BODY_PROPERTIES["joint_friction"], damping=damping)


def _gravity_off(art, lite: LiteModel, fixed: list[bool]) -> None:
    """MJCF ``gravcomp="1"`` on a moving body: MuJoCo's compensation ``-m g`` at its COM cancels its
    gravity exactly, which is PhysX's per-link disable-gravity (other values: :func:`gravcomp_forces`)."""
    for link in art.get_links():
        if link.name.startswith("b"):
            b = int(link.name[1:])
            if lite.body_gravcomp[b] == 1.0 and not fixed[b]:
                link.disable_gravity = True


def _under(lite: LiteModel, b: int, top: int) -> bool:
    while b != 0:
        if b == top:
            return True
        b = lite.body_parent[b]
    return False


def _mujoco_properties(art, joint_drive: dict[str, tuple[float, float, float]], config: PhysxSolverConfig) -> None:
    """MuJoCo's semantics on every link and joint (no damping, caps, sleep, friction coefficient),
    each joint's drive (``unisim_physx.physx_drives``: damping, force limit = frictionloss) and
    the per-body / per-shape solver values of ``config``."""
    P = MUJOCO_BODY_PROPERTIES
    art.set_sleep_threshold(P["sleep_threshold"])
    if config.solver_position_iteration_count is not None:
        art.set_solver_position_iterations(config.solver_position_iteration_count)
    if config.solver_velocity_iteration_count is not None:
        art.set_solver_velocity_iterations(config.solver_velocity_iteration_count)
    for link in art.get_links():
        link.set_linear_damping(P["linear_damping"])
        link.set_angular_damping(P["angular_damping"])
        link.set_max_linear_velocity(P["max_linear_velocity"])
        link.set_max_angular_velocity(P["max_angular_velocity"])
        if config.max_depenetration_velocity is not None:
            link.set_max_depenetration_velocity(config.max_depenetration_velocity)
        _shape_offsets(link.get_collision_shapes(), config)
    for joint in art.get_active_joints():
        joint.set_friction(P["joint_friction"])
        joint.set_max_velocity(P["max_joint_velocity"])
        armature, damping, force_limit = joint_drive[joint.name]
        joint.set_armature(np.array([armature], dtype=np.float32))
        joint.set_drive_properties(0.0, damping, min(force_limit, _FLOAT32_MAX))


def _shape_offsets(shapes, config: PhysxSolverConfig) -> None:
    for shape in shapes:
        if config.contact_offset is not None:
            shape.set_contact_offset(config.contact_offset)
        if config.rest_offset is not None:
            shape.set_rest_offset(config.rest_offset)
