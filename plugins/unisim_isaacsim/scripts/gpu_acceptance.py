"""GPU acceptance of the Isaac Sim backend: run on a machine with Isaac Sim and an RTX GPU.

    UNISIM_ISAACSIM_PYTHON=~/isaacsim/python.sh python plugins/unisim_isaacsim/scripts/gpu_acceptance.py report.json

Runs in the host interpreter (no SDK import here); the worker runs in Isaac Sim's python. One
installation is one Isaac Lab generation: run it once per installation (Isaac Sim 5.1 + Isaac Lab
2.3, Isaac Sim 6 + Isaac Lab 3.0); ``--expect-isaaclab 2|3`` fails the run when the worker detects
another one. Checks, under a 5-minute budget:

- the quadruped (floating base): INIT with every PhysX solver field set and the readback verified
  (each field's provenance is reported), one step, a partial reset, a turned root quaternion
  surviving ``set_state`` (the worker's quaternion-order conversion), 1 s of the PD-held quadruped
  next to in-process MuJoCo (it must keep standing like MuJoCo: base within 5 cm, joints within
  0.1 rad; the deviations and the ``contact`` tier verdict of ``unisim compare`` are reported), its
  feet's contact forces summing to its weight M g (5 %; the worker's ContactSensor mapping), a
  captured frame;
- the capabilities the worker computes (``capability_checks``; each cell named by its check): the
  kinematic sensors, the host's site Jacobian and a flight of the quadruped 1 m above the floor
  (no contacts: the answers are MuJoCo's, in-process, from the same state and inputs) under a staged
  force and torque on the base, a push, a randomized base mass and a randomized gravity, the
  randomized fields read back, a physics snapshot restoring every read;
- the height field (the kit's ``hfield_terrain``: a ramp rising to a 0.4 m plateau, a free ball;
  ``terrain_checks``): spawn data and a height scan from the ball (computed in the host from the MJCF
  and the worker's poses) equal MuJoCo's, and balls dropped on the plateau rest on the triangle mesh
  the worker authored (centre 0.5 m up, as in MuJoCo);
- the box on a mocap platform (``tests/models/box_on_platform.xml``; ``platform_checks``): the mocap
  platform's pose read back per env as the kit's mocap check wants it; after 0.2 s at rest next to
  MuJoCo, the contact forces against chosen bodies (box from platform +m g, from the world 0, platform
  from box -m g) and their moments about each body's centre of mass (the box's 0, the platform's
  (0, 0.03 m g, 0)) like MuJoCo's; the platform raised 5 cm in 1 mm writes carries the box up like MuJoCo;
- the welded arm (``tests/models/welded_arm.xml``): a fixed-base articulation,
  default joint positions clipped into range (its elbow excludes 0), 0.5 s held at "home" next to
  MuJoCo (joints within 0.1 rad, the welded mount still), a frame drawn in the host from the
  worker's state (no cameras) equal to MuJoCo's renderer's frame of the same qpos.

Writes a JSON report and exits 0 only when every check passed (2 when the runtime is missing, 1 on
a failed check).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

BUDGET_S = 300.0
DT = 0.005
ARM = Path(__file__).resolve().parents[1] / "tests" / "models" / "welded_arm.xml"
PLATFORM = ARM.with_name("box_on_platform.xml")
#: Loose bounds for "stands like MuJoCo" (different contact models; the tight figures are reported).
STANDING = {"base_pos": 0.05, "dof_pos": 0.1}
TURNED = np.array([0.9, 0.1, -0.2, 0.3]) / np.linalg.norm([0.9, 0.1, -0.2, 0.3])  # wxyz


@dataclasses.dataclass(frozen=True)
class Horizons:
    """Steps of each part of the run (substeps of ``DT``; ``settle``/``lift``: control steps of 4 substeps).
    The GPU run uses the defaults; the tests on the SDK stubs, whose physics is not judged, shorter ones."""

    parity: int = 200  # 1 s of the quadruped next to MuJoCo
    arm: int = 100  # 0.5 s of the welded arm
    terrain: int = 200  # 1 s of the balls on the height field
    settle: int = 10  # 0.2 s of the box on the platform
    lift: int = 50  # the platform rises 1 mm per control step


PHYSX = dict(solver_position_iteration_count=8, solver_velocity_iteration_count=2, bounce_threshold_velocity=0.3,
             contact_offset=0.02, rest_offset=0.001, max_depenetration_velocity=5.0,
             gpu_max_rigid_contact_count=2**21, gpu_max_rigid_patch_count=2**19)


def parity_with_mujoco(b, scene, steps: int) -> dict:
    """Max deviations of ``b`` from in-process MuJoCo over ``steps`` of the PD-held default pose."""
    from unisim_core.contract.factory import create_backend
    from unisim_core.tools.compare import TIERS, deviation_series, record_trajectory, verdict

    mine = record_trajectory(b, "isaacsim", steps)
    with create_backend("mujoco", scene, b.num_envs, DT) as ref:
        theirs = record_trajectory(ref, "mujoco", steps)
    dev = {k: float(np.max(v)) for k, v in deviation_series(theirs, mine).items()}
    status, failed = verdict(dev, TIERS["contact"])
    return {"max_dev": dev, "contact_tier": {"verdict": status, "failed": failed},
            "base_height_end_m": {"isaacsim": float(mine.base_pos[-1, 0, 2]),
                                  "mujoco": float(theirs.base_pos[-1, 0, 2])}}


def run(num_envs: int, device: str, backend_cls=None, expect_isaaclab: int | None = None,
        horizons: Horizons = Horizons()) -> dict:
    """All checks (``backend_cls``: ``IsaacSimBackend`` unless a test double)."""
    from unisim_core import SceneCfg
    from unisim_core.scenes import scene_path
    from unisim_isaacsim._backend import IsaacSimBackend

    report: dict = {"ok": False, "num_envs": num_envs, "device": device, "checks": {}, "timings_s": {}}
    checks, timings = report["checks"], report["timings_s"]
    t0 = time.perf_counter()
    scene = SceneCfg(scene_path("quadruped"), default_keyframe="home")
    b = (backend_cls or IsaacSimBackend)(scene, num_envs, DT, physx=PHYSX, device=device, headless=True,
                                         enable_cameras=True, init_timeout_s=BUDGET_S)
    try:
        timings["init"] = time.perf_counter() - t0
        report["engine"] = b.engine_info
        report["env_rows"] = list(b.env_rows)
        if expect_isaaclab is not None:
            order = {2: "wxyz", 3: "xyzw"}[expect_isaaclab]
            checks["isaaclab_generation"] = b.engine_info.get("native_quat_order") == order
        report["solver_readback"] = b.solver_readback  # verified strictly during construction
        checks["readback_verified"] = sorted(b.solver_readback) == sorted(PHYSX)
        checks["readback_sources"] = {f: e["source"] for f, e in b.solver_readback.items()}

        t = time.perf_counter()
        q0 = b.get_qpos()
        ctrl = np.tile(b.get_default_dof_pos(), (num_envs, 1)).astype(np.float32)
        b.step(ctrl, 4)
        q1 = b.get_qpos()
        timings["step"] = time.perf_counter() - t
        checks["step_finite_and_moves"] = bool(np.isfinite(q1).all() and not np.array_equal(q0, q1))

        t = time.perf_counter()
        default = b.get_default_qpos()[None, :]
        b.set_state(np.array([1]), default, np.zeros((1, b.nv)))
        q2 = b.get_qpos()
        timings["partial_reset"] = time.perf_counter() - t
        others = [i for i in range(num_envs) if i != 1]
        checks["partial_reset_env1"] = bool(np.allclose(q2[1], default[0], atol=1e-4))
        checks["partial_reset_others_untouched"] = bool(np.array_equal(q2[others], q1[others]))
        turned = default.copy()
        turned[0, 3:7] = TURNED
        b.set_state(np.array([0]), turned, np.zeros((1, b.nv)))
        checks["turned_root_quat_roundtrip"] = bool(np.allclose(b.get_qpos()[0, 3:7], TURNED, atol=1e-4))
        b.set_state(np.array([0]), default, np.zeros((1, b.nv)))

        t = time.perf_counter()
        report["parity_vs_mujoco"] = parity = parity_with_mujoco(b, scene, horizons.parity)
        timings["parity"] = time.perf_counter() - t
        checks["stands_like_mujoco"] = all(parity["max_dev"][k] <= bound for k, bound in STANDING.items())
        checks["contact_forces_declared"] = "contact_forces" in {c.value for c in b.capabilities}
        if checks["contact_forces_declared"]:  # the ContactSensor mapping: the standing feet carry M g
            feet = b.bind_contact_forces([f"{leg}_calf" for leg in ("FL", "FR", "RL", "RR")])
            b.step(ctrl, 4)
            report["feet_contact_fz_n"] = fz = feet.read()[..., 2].sum(axis=1).tolist()
            weight = float(np.sum(b.model_info.body_mass)) * 9.81
            checks["feet_carry_the_weight"] = bool(np.allclose(fz, weight, rtol=0.05))

        t = time.perf_counter()
        report["capabilities"] = capability_checks(b, scene, checks)
        timings["capabilities"] = time.perf_counter() - t

        t = time.perf_counter()
        b.init_renderer(capture=True, headless=True, width=320, height=240)
        frame = b.capture_video_frame()
        timings["capture"] = time.perf_counter() - t
        checks["frame_shape"] = list(frame.shape)
        checks["frame_nonblank"] = bool(frame.shape == (240, 320, 3) and frame.std() > 0)
    finally:
        b.close()
    t = time.perf_counter()
    report["terrain"] = terrain_checks(num_envs, device, backend_cls or IsaacSimBackend, checks, horizons.terrain)
    timings["terrain"] = time.perf_counter() - t
    t = time.perf_counter()
    report["platform"] = platform_checks(num_envs, device, backend_cls or IsaacSimBackend, checks, horizons)
    timings["platform"] = time.perf_counter() - t
    t = time.perf_counter()
    report["fixed_base"] = fixed_base_checks(num_envs, device, backend_cls or IsaacSimBackend, checks, horizons.arm)
    timings["fixed_base"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    checks["under_budget"] = timings["total"] < BUDGET_S
    report["ok"] = all(v is True for k, v in checks.items() if isinstance(v, bool))
    return report


#: The capabilities ``capability_checks`` exercises (declared by the worker or computed in the host).
CAPABILITY_CELLS = ("sensors", "body_force", "body_torque", "push", "site_jacobian", "physics_snapshot",
                    "init_randomization", "interval_randomization", "reset_randomization")
#: Flight tolerances vs MuJoCo: the same rigid-body dynamics without contacts, float32 PhysX and PhysX's
#: articulation solver (reported exactly; 2 % of the velocity change a check produces).
FLIGHT_RTOL = 0.02


def _flight(b, ref, wrench=None, push=None, steps: int = 10) -> dict:
    """The quadruped 1 m up, at rest, joints held at home, ``steps`` substeps on ``b`` and on MuJoCo
    ``ref`` with the same optional base ``wrench`` ``(force, torque)`` per env (or the forces ``push`` that
    ``push_robots`` staged on ``b``, staged on ``ref`` by hand); returns
    the base velocity changes ``{"isaacsim": (lin, ang), "mujoco": ...}`` (world frame)."""
    n = b.num_envs
    q = np.tile(b.get_default_qpos(), (n, 1))
    q[:, 2] += 1.0
    ctrl = np.tile(b.get_default_dof_pos(), (n, 1)).astype(np.float32)
    out = {}
    for name, x in (("isaacsim", b), ("mujoco", ref)):
        x.set_state(np.arange(n), q, np.zeros((n, x.nv)))
        v0 = np.concatenate([x.get_base_lin_vel(), x.get_base_ang_vel()], axis=1).astype(np.float64)
        base = x.get_body_ids(["base"])
        if wrench is not None:
            x.apply_body_force(base, wrench[0][:, None], wrench[1][:, None])
        if push is not None and x is ref:  # b's push is staged by push_robots (it survives set_state)
            x.apply_body_force(base, np.concatenate([push, np.zeros((n, 1))], axis=1)[:, None])
        x.step(ctrl, steps)
        v1 = np.concatenate([x.get_base_lin_vel(), x.get_base_ang_vel()], axis=1).astype(np.float64)
        out[name] = v1 - v0
    return out


def _same(dv: dict, what: slice) -> tuple[bool, float]:
    a, m = dv["isaacsim"][:, what], dv["mujoco"][:, what]
    err = float(np.max(np.abs(a - m)))
    return bool(err <= FLIGHT_RTOL * max(float(np.max(np.abs(m))), 1e-9)), err


def capability_checks(b, scene, checks: dict) -> dict:
    """The worker's capabilities against in-process MuJoCo (see the module docstring); every check is
    named ``<capability>_<what>``, so a GPU run proves each cell. A test double without them reports
    ``capabilities_declared`` False and skips the rest."""
    from unisim_core import InitRandomizationPlan, RandomizationOp
    from unisim_core.contract.factory import create_backend

    declared = {c.value for c in b.capabilities}
    checks["capabilities_declared"] = all(c in declared for c in CAPABILITY_CELLS)
    if not checks["capabilities_declared"]:
        return {"missing": [c for c in CAPABILITY_CELLS if c not in declared]}
    n, report = b.num_envs, {}
    with create_backend("mujoco", scene, n, DT) as ref:
        rng = np.random.default_rng(0)
        q = np.tile(b.get_default_qpos(), (n, 1))
        q[:, 7:] += rng.uniform(-0.2, 0.2, size=q[:, 7:].shape)
        qd = rng.normal(0.0, 0.5, size=(n, b.nv))
        for x in (b, ref):
            x.set_state(np.arange(n), q, qd)
        kinematic = ("imu_pos", "imu_quat", "imu_vel", "imu_gyro")
        report["sensor_max_dev"] = dev = {s: float(np.max(np.abs(b.get_sensor_data(s) - ref.get_sensor_data(s))))
                                          for s in kinematic}
        checks["sensors_kinematic_match_mujoco"] = all(v <= 1e-4 for v in dev.values())
        site = int(b.get_site_ids(["imu"])[0])
        jb, jm = b.get_site_jacobian_w(site, np.arange(b.nv)), ref.get_site_jacobian_w(site, np.arange(b.nv))
        report["site_jacobian_max_dev"] = err = float(max(np.max(np.abs(x - y)) for x, y in zip(jb, jm)))
        checks["site_jacobian_matches_mujoco"] = err <= 1e-4

        f = np.zeros((n, 3))
        f[:, 0] = 40.0
        dv = _flight(b, ref, wrench=(f, np.zeros((n, 3))))
        checks["body_force_flight_like_mujoco"], report["body_force_dv_err"] = _same(dv, slice(0, 3))
        tau = np.zeros((n, 3))
        tau[:, 2] = 2.0
        dv = _flight(b, ref, wrench=(np.zeros((n, 3)), tau))
        checks["body_torque_flight_like_mujoco"], report["body_torque_dw_err"] = _same(dv, slice(3, 6))
        pushed = b.push_robots([-30.0, 30.0])[:, :2]
        dv = _flight(b, ref, push=pushed, steps=1)
        checks["push_flight_like_mujoco"], report["push_dv_err"] = _same(dv, slice(0, 2))

        base = b.get_body_ids(["base"])
        plan = InitRandomizationPlan([
            RandomizationOp(term="body_mass", env_ids=np.arange(n), target_ids=base,
                            values=np.full((n, 1), 1.5), operation="scale"),
            RandomizationOp(term="gravity", env_ids=np.arange(n), values=np.tile([[0.0, 0.0, 2.0]], (n, 1)),
                            operation="add")])
        for x in (b, ref):
            x.apply_init_randomization(plan)
        checks["init_randomization_reads_back"] = bool(
            np.allclose(b.get_model_field("body_mass"), ref.get_model_field("body_mass"), rtol=1e-6)
            and np.allclose(b.get_model_field("gravity"), ref.get_model_field("gravity"), rtol=1e-6))
        dv = _flight(b, ref, wrench=(f, np.zeros((n, 3))))
        checks["init_randomization_mass_and_gravity_flight_like_mujoco"], report["randomized_dv_err"] = _same(
            dv, slice(0, 3))
        checks["interval_randomization_declared_terms"] = "body_mass" in b.get_dr_capabilities().interval_terms
        checks["reset_randomization_declared_terms"] = "body_mass" in b.get_dr_capabilities().reset_terms

        snap = b.get_physics_state()
        ids = np.arange(b.num_bodies)
        reads = (b.get_qpos(), b.get_body_pos_w(ids), b.get_sensor_data("imu_acc"))
        b.step(np.tile(b.get_default_dof_pos(), (n, 1)).astype(np.float32), 5)
        b.set_physics_state(snap)
        checks["physics_snapshot_restores_reads"] = all(
            np.array_equal(x, y) for x, y in zip(reads, (b.get_qpos(), b.get_body_pos_w(ids),
                                                         b.get_sensor_data("imu_acc"))))
    return report


def host_frame_is_mujocos(b, scene) -> bool:
    """Without cameras, frames are drawn in this process from the worker's state: the frame equals
    MuJoCo's renderer drawing the same qpos."""
    from unisim_core import CameraCfg
    from unisim_core.contract._playback import video_renderer

    b.init_renderer(capture=True, width=160, height=120)
    frame = b.capture_video_frame()
    ref = video_renderer()(scene.model_file, b.num_envs, 160, 120, 1.0, "grid", CameraCfg())
    try:
        return bool(np.array_equal(frame, ref.draw(b.get_qpos())))
    finally:
        ref.close()


#: Rest height of the hfield scene's ball on the plateau (0.4 m + radius 0.1 m) and the bound on both
#: engines' sinking (MuJoCo's soft contact, PhysX's rest offset).
BALL_REST_Z, BALL_REST_TOL = 0.5, 0.01


def terrain_checks(num_envs: int, device: str, backend_cls, checks: dict, steps: int) -> dict:
    """The kit's height-field scene (cells ``height_scan`` and ``terrain``): the host's spawn data and scan
    equal MuJoCo's for the same state; a ball dropped per env on the plateau rests on the field."""
    from unisim_conformance import scene_path as kit_scene
    from unisim_core import SceneCfg, TerrainCfg
    from unisim_core.contract.factory import create_backend

    scene = SceneCfg(str(kit_scene("hfield_terrain")), terrain=TerrainCfg(hfield_geom="terrain", rows=2, cols=2))
    b = backend_cls(scene, num_envs, DT, device=device, headless=True, init_timeout_s=BUDGET_S)
    report: dict = {}
    try:
        declared = {c.value for c in b.capabilities}
        checks["terrain_declared"] = {"height_scan", "terrain"} <= declared
        with create_backend("mujoco", scene, num_envs, DT) as ref:
            q = np.tile(b.get_default_qpos(), (num_envs, 1))
            q[:, 0] = np.linspace(0.3, 1.7, num_envs)  # on the plateau (x >= 0)
            q[:, 1] = np.linspace(-1.0, 1.0, num_envs)
            q[:, 2] = 0.8
            for x in (b, ref):
                x.set_state(np.arange(num_envs), q, np.zeros((num_envs, x.nv)))
            tb, tr = b.get_terrain_spawn_data(), ref.get_terrain_spawn_data()
            checks["terrain_spawn_data_matches_mujoco"] = bool(np.allclose(tb.origins, tr.origins, atol=1e-9))
            kw = dict(hfield_geom_id=ref.get_geom_id("terrain"), frame_body_id=ref.get_body_ids(["ball"])[0],
                      offsets=np.array([[-2.0, 0.0], [-1.0, 0.5], [0.0, 0.0], [0.3, -0.4]]), alignment="yaw")
            got, want = (x.create_hfield_scanner(**kw).scan() for x in (b, ref))
            report["height_scan_max_dev"] = float(np.max(np.abs(got - want)))
            checks["height_scan_matches_mujoco"] = report["height_scan_max_dev"] <= 1e-5
            empty = np.zeros((num_envs, 0), np.float32)
            for x in (b, ref):
                x.step(empty, steps)
            z = {"isaacsim": b.get_qpos()[:, 2].tolist(), "mujoco": ref.get_qpos()[:, 2].tolist()}
        report["ball_z_end_m"] = z
        checks["terrain_ball_rests_on_the_field_like_mujoco"] = all(
            abs(v - BALL_REST_Z) <= BALL_REST_TOL for side in z.values() for v in side)
    finally:
        b.close()
    return report


#: The platform scene's box (kg) and its centre of mass off its centre (m, along x).
BOX_MASS, BOX_COM_X = 1.0, 0.03
PLATFORM_Z = 0.15  # the platform's model height (m)
#: Force tolerance: 5 % of the box's weight (PhysX's rigid contacts vs MuJoCo's soft ones at rest). Moment
#: tolerances as the kit's contact torque checks: 1 % (resting box) and 2 % of m g x 0.1 m.
FORCE_RTOL, REST_TORQUE_TOL, TORQUE_TOL = 0.05, 0.0098, 0.0196
LIFT_M = 0.001  # the platform's rise per control step of the lift (m)
#: Bound on the box's height difference from MuJoCo's after the lift (m).
LIFT_TOL = 0.01


def platform_checks(num_envs: int, device: str, backend_cls, checks: dict, horizons: Horizons) -> dict:
    """The box on the mocap platform (cells ``mocap``, ``contact_filters``, ``contact_torques``) next to
    MuJoCo from the same state and writes. A backend refusing the scene (a test double) reports
    ``mocap_declared`` False and skips the rest."""
    from unisim_core import SceneCfg, UnsupportedCapabilityError
    from unisim_core.contract.factory import create_backend

    scene = SceneCfg(str(PLATFORM))
    try:
        b = backend_cls(scene, num_envs, DT, device=device, headless=True, init_timeout_s=BUDGET_S)
    except UnsupportedCapabilityError as exc:
        checks["mocap_declared"] = False
        return {"refused": str(exc)}
    report: dict = {}
    mg = BOX_MASS * 9.81
    try:
        declared = {c.value for c in b.capabilities}
        checks["mocap_declared"] = "mocap" in declared
        checks["contact_filters_declared"] = "contact_filters" in declared
        checks["contact_torques_declared"] = "contact_torques" in declared
        if not {"mocap", "contact_filters", "contact_torques"} <= declared:
            return report
        n, envs = num_envs, np.arange(num_envs)
        with create_backend("mujoco", scene, n, DT) as ref:
            mocap = {"isaacsim": b.bind_mocap_pose("platform"), "mujoco": ref.bind_mocap_pose("platform")}
            pos, quat = mocap["isaacsim"].get()
            checks["mocap_initial_pose"] = bool(np.allclose(pos, [[0, 0, PLATFORM_Z]] * n, atol=1e-5)
                                                and np.allclose(quat, [[1, 0, 0, 0]] * n, atol=1e-5))
            turned = np.array([[np.cos(0.3), 0.0, 0.0, np.sin(0.3)]])
            mocap["isaacsim"].set(np.array([[1.0, 2.0, 3.0]]), turned, env_ids=np.array([n - 1]))
            pos, quat = mocap["isaacsim"].get()
            body = b.get_body_ids(["platform"])
            checks["mocap_per_env_write_reads_back"] = bool(
                np.allclose(pos[-1], [1, 2, 3], atol=1e-5) and np.allclose(quat[-1], turned[0], atol=1e-5)
                and np.allclose(pos[:-1], [0, 0, PLATFORM_Z], atol=1e-5)
                and np.allclose(b.get_body_pos_w(body)[:, 0], pos, atol=1e-5))
            level = np.tile([[0.0, 0.0, PLATFORM_Z]], (n, 1))
            identity = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
            out = {}
            for name, x in (("isaacsim", b), ("mujoco", ref)):
                mocap[name].set(level, identity)
                x.set_state(envs, np.tile(x.get_default_qpos(), (n, 1)), np.zeros((n, x.nv)))
                bind = {k: x.bind_contact_forces(["box"], against=[k]) for k in ("platform", "world")}
                bind["on_platform"] = x.bind_contact_forces(["platform"], against=["box"])
                tau = x.bind_contact_forces(["box", "platform"], torques=True)
                empty = np.zeros((n, 0), np.float32)
                for _ in range(horizons.settle):
                    x.step(empty, 4)
                out[name] = {k: v.read()[:, 0].tolist() for k, v in bind.items()}
                out[name]["torque"] = tau.read_torque().tolist()
                for k in range(1, horizons.lift + 1):
                    mocap[name].set(level + [0.0, 0.0, k * LIFT_M], identity)
                    x.step(empty, 4)
                out[name]["box_z_lifted"] = x.get_qpos()[:, 2].tolist()
                out[name]["platform_z_lifted"] = mocap[name].get()[0][:, 2].tolist()
        report.update(out)
        got, want = out["isaacsim"], out["mujoco"]
        up = np.array([0.0, 0.0, mg])
        checks["contact_filters_box_on_platform_like_mujoco"] = bool(
            np.allclose(got["platform"], up, atol=FORCE_RTOL * mg) and np.allclose(got["platform"], want["platform"],
                                                                                   atol=FORCE_RTOL * mg)
            and np.allclose(got["world"], 0.0, atol=FORCE_RTOL * mg)
            and np.allclose(got["on_platform"], -up, atol=FORCE_RTOL * mg))
        tau_got, tau_want = np.asarray(got["torque"]), np.asarray(want["torque"])
        checks["contact_torques_resting_box_about_its_com"] = bool(np.max(np.abs(tau_got[:, 0])) <= REST_TORQUE_TOL)
        checks["contact_torques_platform_like_mujoco"] = bool(
            np.allclose(tau_got[:, 1], [0.0, BOX_COM_X * mg, 0.0], atol=TORQUE_TOL)
            and np.allclose(tau_got[:, 1], tau_want[:, 1], atol=TORQUE_TOL))
        checks["mocap_holds_the_written_pose"] = bool(
            np.allclose(got["platform_z_lifted"], PLATFORM_Z + horizons.lift * LIFT_M, atol=1e-5))
        checks["mocap_platform_lifts_the_box_like_mujoco"] = bool(
            np.allclose(got["box_z_lifted"], want["box_z_lifted"], atol=LIFT_TOL))
    finally:
        b.close()
    return report


def fixed_base_checks(num_envs: int, device: str, backend_cls, checks: dict, steps: int) -> dict:
    """The welded arm: a fixed-base articulation holding "home" like MuJoCo, its mount still."""
    from unisim_core import SceneCfg

    scene = SceneCfg(ARM, default_keyframe="home")
    b = backend_cls(scene, num_envs, DT, device=device, headless=True, init_timeout_s=BUDGET_S)
    try:
        checks["arm_fixed_base"] = b.engine_info.get("fixed_base") is True
        mount = b.model_info.body_names.index("mount")
        before = b.get_body_pos_w(np.array([mount]))
        home = np.tile(b.get_default_qpos(), (num_envs, 1))
        b.set_state(np.arange(num_envs), home, np.zeros((num_envs, b.nv)))
        checks["arm_home_set"] = bool(np.allclose(b.get_qpos(), home, atol=1e-4))
        parity = parity_with_mujoco(b, scene, steps)
        moved = float(np.max(np.abs(b.get_body_pos_w(np.array([mount])) - before)))
        checks["arm_holds_like_mujoco"] = parity["max_dev"]["dof_pos"] <= STANDING["dof_pos"]
        checks["arm_mount_still"] = moved < 1e-4
        checks["arm_host_frame_is_mujocos"] = host_frame_is_mujocos(b, scene)
    finally:
        b.close()
    return {"max_dev": parity["max_dev"], "mount_moved_m": moved, "engine": b.engine_info}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", help="where to write the JSON report")
    p.add_argument("--num-envs", type=int, default=4)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--expect-isaaclab", type=int, choices=(2, 3), default=None,
                   help="fail unless the worker detects this Isaac Lab generation")
    args = p.parse_args(argv)
    from unisim_isaacsim._runtime import find_runtime

    if find_runtime() is None:
        report = {"ok": False, "skipped": "Isaac Sim runtime not found (set UNISIM_ISAACSIM_PYTHON)"}
        rc = 2
    else:
        try:
            report = run(args.num_envs, args.device, expect_isaaclab=args.expect_isaaclab)
        except Exception as exc:  # the report carries the failure
            report = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        rc = 0 if report["ok"] else 1
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2, default=str)
    print(json.dumps({k: report.get(k) for k in ("ok", "checks", "timings_s", "skipped", "error")}, default=str))
    return rc


if __name__ == "__main__":
    sys.exit(main())
