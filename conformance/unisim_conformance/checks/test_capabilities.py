"""Layer 6 - capability honesty: every declared capability works (exercised with a known
answer); every undeclared one raises ``UnsupportedCapabilityError`` (a NotImplementedError)
naming the backend; randomization terms outside the declared ones fail closed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from unisim_conformance import scene_path
from unisim_conformance._props import DECLARED_PROP_RULES, DECLARED_PROPS
from unisim_conformance._support import Props, all_getters, diff_report, home_ctrl, varied_quadruped_state
from unisim_core import (
    Capability,
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
    SceneCfg,
    TerrainCfg,
    UnsupportedCapabilityError,
)
from unisim_core.contract import quat as Q
from unisim_core.contract.randomization import MODEL_TERMS, TERM_SPECS

pytestmark = [pytest.mark.capabilities, pytest.mark.contract("1.0")]

C = Capability
MOCAP_XML = """<mujoco model="mocap_probe">
  <worldbody>
    <body name="target" mocap="true" pos="0.5 0 1">
      <geom type="sphere" size="0.05" contype="0" conaffinity="0" mass="0"/></body>
    <body name="box" pos="0 0 1"><freejoint name="root"/><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <geom type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0" mass="0"/></body>
  </worldbody>
</mujoco>
"""


# ---------------------------------------------------------------------------------- undeclared
def _call(cap, kit, tmp_path):
    """Invoke the API of ``cap`` on a backend (must raise when ``cap`` is undeclared)."""
    b = kit.make("quadruped", 2)
    ids = b.get_body_ids(["base"])
    z = np.zeros((2, 1, 3))
    calls = {
        C.SENSORS: lambda: b.get_sensor_data("imu_gyro"),
        C.BODY_FORCE: lambda: b.apply_body_force(ids, z),
        C.BODY_TORQUE: lambda: b.apply_body_force(ids, z, z),
        C.PUSH: lambda: b.push_robots([0.0, 1.0]),
        C.SITE_JACOBIAN: lambda: b.get_site_jacobian_w(0, np.arange(b.nv)),
        C.HEIGHT_SCAN: lambda: b.create_hfield_scanner(hfield_geom_id=0, offsets=np.zeros((1, 2)), frame_body_id=1),
        C.MOCAP: lambda: b.bind_mocap_pose("base"),
        C.PRE_STEP_CONTROL: lambda: b.set_pre_step_control(lambda be, c: c),
        C.PHYSICS_SNAPSHOT: lambda: b.get_physics_state(),
        C.RENDER: lambda: (b.init_renderer(headless=True), b.render()),
        C.VIDEO_CAPTURE: lambda: b.capture_video_frame(),
        C.PLAYBACK: lambda: b.run_playback(env=None, initialize=lambda: None, step=lambda: None, num_steps=1,
                                           output_video=str(tmp_path / "x.mp4")),
        C.INIT_RANDOMIZATION: lambda: b.apply_init_randomization(InitRandomizationPlan()),
        C.INTERVAL_RANDOMIZATION: lambda: b.apply_interval_randomization(IntervalRandomizationPlan()),
        C.RESET_RANDOMIZATION: lambda: b.set_state(np.array([0]), b.get_qpos()[:1], b.get_qvel()[:1],
                                                   randomization=ResetRandomizationPayload()),
        C.DEVICE_ARRAYS: lambda: b.get_device_arrays(),
        C.CONTACT_FORCES: lambda: b.bind_contact_forces(["base"]),
        C.CONTACT_FILTERS: lambda: b.bind_contact_forces(["base"], against=["world"]),
        C.CONTACT_TORQUES: lambda: b.bind_contact_forces(["base"], torques=True),
    }
    return b, calls.get(cap)


@pytest.mark.parametrize("cap", list(Capability), ids=lambda c: c.value)
def test_undeclared_raises(kit, cap, tmp_path):
    """An undeclared capability raises UnsupportedCapabilityError naming the backend and the
    capability, and writes nothing (qpos/qvel bitwise unchanged)."""
    if cap in kit.caps:
        pytest.skip(f"backend {kit.label!r} declares {cap.value!r} (exercised by capabilities::declared_works)")
    if cap is C.CONTACTS:
        pytest.skip("'contacts' has no API to call; an undeclared backend must not be asked for contact scenes")
    if cap is C.TERRAIN:
        # the contract's answer for "no terrain support" is None, not an error
        cfg = SceneCfg(str(scene_path("quadruped")), terrain=None)
        b = kit.make(cfg, 1)
        assert b.get_terrain_spawn_data() is None, "TERRAIN undeclared: get_terrain_spawn_data() must return None"
        return
    b, call = _call(cap, kit, tmp_path)
    before = (b.get_qpos(), b.get_qvel())
    with pytest.raises(UnsupportedCapabilityError) as info:
        result = call()
        pytest.fail(f"undeclared capability {cap.value!r} returned {type(result).__name__} instead of raising")
    assert isinstance(info.value, NotImplementedError)
    msg = str(info.value)
    assert cap.value in msg, f"error does not name the capability {cap.value!r}: {msg!r}"
    assert kit.label in msg or type(b).__name__ in msg, f"error does not name the backend {kit.label!r}: {msg!r}"
    assert np.array_equal(b.get_qpos(), before[0]) and np.array_equal(b.get_qvel(), before[1]), \
        "a rejected call changed the state"


def test_reported_capabilities_consistent(kit):
    """get_play_capabilities / get_dr_capabilities agree with ``capabilities``; derived
    capabilities have their prerequisites (PUSH needs BODY_FORCE, PLAYBACK needs VIDEO_CAPTURE)."""
    b = kit.make("free_body", 1)
    caps = b.capabilities
    play = b.get_play_capabilities()
    assert play.supports_render == (C.RENDER in caps)
    assert play.supports_video_capture == (C.VIDEO_CAPTURE in caps)
    assert play.supports_playback == (C.PLAYBACK in caps)
    dr = b.get_dr_capabilities()
    for phase, cap in (("init_terms", C.INIT_RANDOMIZATION), ("interval_terms", C.INTERVAL_RANDOMIZATION),
                       ("reset_terms", C.RESET_RANDOMIZATION)):
        terms = getattr(dr, phase)
        if cap not in caps:
            assert not terms, f"{phase} lists {sorted(terms)} but {cap.value!r} is not declared"
        assert set(terms) <= set(TERM_SPECS), f"{phase}: unknown terms {sorted(set(terms) - set(TERM_SPECS))}"
    if C.PUSH in caps:
        assert C.BODY_FORCE in caps
    if C.PLAYBACK in caps:
        assert C.VIDEO_CAPTURE in caps
    if C.BODY_TORQUE in caps:
        assert C.BODY_FORCE in caps


# ------------------------------------------------------------------------------------ declared
# Each exerciser runs one scenario of a declared capability and records each property on its own
# (``with p("name"):``); ``_props.DECLARED_PROPS`` lists them, one check id per capability and property.
def _sensors(kit, tmp_path, p):
    """free_body sensors: framepos == base position, framequat == base quaternion (wxyz); a bound
    view reads what get_sensor_data_batch returns, sliced per sensor."""
    b = kit.make("free_body", 2)
    qpos = np.array([[0.1, 0.2, 1.3, np.cos(0.4), 0, 0, np.sin(0.4)], [0, 0, 1, 1, 0, 0, 0]])
    b.set_state(np.arange(2), qpos, np.zeros((2, 6)))
    with p("framepos"):
        np.testing.assert_allclose(b.get_sensor_data("box_pos"), qpos[:, :3], atol=1e-5, err_msg="framepos sensor")
    with p("framequat"):
        np.testing.assert_allclose(b.get_sensor_data("box_quat"), qpos[:, 3:], atol=1e-5,
                                   err_msg="framequat sensor must be wxyz")
    view = b.bind_sensor_data(["box_quat", "box_pos"])
    with p("bound_view"):
        np.testing.assert_array_equal(view.read(), b.get_sensor_data_batch(["box_quat", "box_pos"]))
    with p("bound_slices"):
        np.testing.assert_array_equal(view.read()[:, view.slices["box_pos"]], b.get_sensor_data("box_pos"))


def _body_force(kit, tmp_path, p):
    """free_body (2 kg): 2 N along +x for one step gives dv = F/m dt (1e-6)."""
    b = kit.make("free_body", 1)
    b.apply_body_force(b.get_body_ids(["box"]), np.array([[[2.0, 0, 0]]]))
    b.step(np.zeros((1, 0)), 1)
    with p("velocity_change"):
        np.testing.assert_allclose(b.get_base_lin_vel()[0, 0], 1.0 * b.sim_dt, atol=1e-6, err_msg="F/m dt along +x")


def _body_torque(kit, tmp_path, p):
    """free_body (I_zz 0.25): 0.03 N m about z for one step gives dw = I^-1 tau dt (1e-6)."""
    b = kit.make("free_body", 1)
    b.apply_body_force(b.get_body_ids(["box"]), np.zeros((1, 1, 3)), np.array([[[0, 0, 0.03]]]))
    b.step(np.zeros((1, 0)), 1)
    with p("velocity_change"):
        np.testing.assert_allclose(b.get_base_ang_vel()[0], [0, 0, 0.12 * b.sim_dt], atol=1e-6,
                                   err_msg="I^-1 tau dt")


def _push(kit, tmp_path, p):
    """push_robots([1, 2]): horizontal forces in [1, 2] N per axis, none vertical (force_range),
    acting for the next step: dv = F/m dt (acts_next_step, 1e-6)."""
    b = kit.make("free_body", 3)
    f = b.push_robots([1.0, 2.0])
    with p("force_range"):
        assert f.shape == (3, 3) and np.all((f[:, :2] >= 1.0) & (f[:, :2] <= 2.0)) and not np.any(f[:, 2]), \
            f"push_robots([1, 2]) returned {f!r}: expected (3, 3), x and y in [1, 2], z zero"
    b.step(np.zeros((3, 0)), 1)
    with p("acts_next_step"):
        np.testing.assert_allclose(b.get_base_lin_vel()[:, :2], f[:, :2] / 2.0 * b.sim_dt, atol=1e-6,
                                   err_msg="push_robots force must act for the next step (dv = F/m dt)")


def _arm_fk(q):
    q1, a = q[0], q[1]
    bb, c = a + q[2], a + q[2] + q[3]
    r = 0.4 * np.sin(a) + 0.3 * np.sin(bb) + 0.1 * np.sin(c)
    z = 0.1 + 0.4 * np.cos(a) + 0.3 * np.cos(bb) + 0.1 * np.cos(c)
    return np.array([r * np.cos(q1), r * np.sin(q1), z])


def _site_jacobian(kit, tmp_path, p):
    """fixed_arm: jacp equals central finite differences of the closed-form FK of site 'ee'
    (error O(h^2) = 1e-10 for h = 1e-5, tolerance 1e-4 covers float32), jacr columns are the
    joint axes (z, then y rotated by q1), a dof subset selects columns."""
    b = kit.make("fixed_arm", 2)
    q = np.array([[0.3, 0.4, -0.7, 0.5], [-1.0, 0.1, 0.9, -0.2]])
    b.set_state(np.arange(2), q, np.zeros((2, 4)))
    site = int(b.get_site_ids(["ee"])[0])
    jacp, jacr = b.get_site_jacobian_w(site, np.arange(4))
    with p("shape"):
        assert jacp.shape == jacr.shape == (2, 3, 4), f"jacp {jacp.shape}, jacr {jacr.shape}: expected (2, 3, 4)"
    h = 1e-5
    for e in range(2):
        fd = np.stack([(_arm_fk(q[e] + h * np.eye(4)[j]) - _arm_fk(q[e] - h * np.eye(4)[j])) / (2 * h)
                       for j in range(4)], axis=1)
        with p("jacp"):
            np.testing.assert_allclose(jacp[e], fd, atol=1e-4, err_msg=f"jacp vs finite differences (env {e})")
        y = np.array([-np.sin(q[e, 0]), np.cos(q[e, 0]), 0.0])
        with p("jacr"):
            np.testing.assert_allclose(jacr[e], np.stack([[0, 0, 1.0], y, y, y], axis=1), atol=1e-5,
                                       err_msg=f"jacr columns = joint axes (env {e})")
    sub_p, _ = b.get_site_jacobian_w(site, np.array([2, 0]))
    with p("dof_selection"):
        np.testing.assert_allclose(sub_p, jacp[:, :, [2, 0]], atol=1e-6, err_msg="dof_indices column selection")
    _site_jacobian_free_root(kit, p)


#: quadruped: site "FL_foot" sits at (0, 0, -0.213) m in body "FL_calf" (scenes/SCENES.md).
FOOT_BODY, FOOT_OFFSET = "FL_calf", np.array([0.0, 0.0, -0.213])


def _integrate(qpos, qvel, h):
    """MuJoCo's mj_integratePos of the quadruped: the free root (world linear velocity, body angular
    velocity: q <- q exp(w h / 2)) and the hinges, for a step ``h``."""
    q = qpos.copy()
    q[:, :3] += h * qvel[:, :3]
    w = qvel[:, 3:6] * h
    angle = np.linalg.norm(w, axis=1, keepdims=True)
    dq = np.concatenate([np.cos(angle / 2), np.sin(angle / 2) * w / np.maximum(angle, 1e-300)], axis=1)
    q[:, 3:7] = Q.quat_mul(qpos[:, 3:7], dq)
    q[:, 7:] += h * qvel[:, 6:]
    return q


def _site_jacobian_free_root(kit, p):
    """quadruped, site FL_foot (a free root and three hinges): in random states, jacp @ qvel equals the
    site's velocity from central differences of its world position (velocity_fd: position from the
    contract's FL_calf pose, qpos moved by +-h qvel as MuJoCo integrates it; h = 1e-3, error O(h^2 w^3 r)
    ~ 2e-5 plus float32 rounding 6e-8 / h: tolerance 1e-3 m/s on velocities of ~1 m/s), and jacr @ qvel
    equals get_body_ang_vel_w of FL_calf (angular_velocity, 1e-4 rad/s: float32)."""
    b = kit.make("quadruped", 2)
    rng = np.random.default_rng(11)
    qpos = np.tile(b.get_qpos()[:1].astype(np.float64), (2, 1))
    quat = rng.normal(size=(2, 4))
    qpos[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    qpos[:, 7:] += rng.uniform(-0.3, 0.3, (2, b.nv - 6))
    qvel = rng.normal(0.0, 1.0, (2, b.nv))
    site, body = int(b.get_site_ids(["FL_foot"])[0]), b.get_body_ids([FOOT_BODY])

    def foot(q):
        b.set_state(np.arange(2), q, np.zeros((2, b.nv)))
        R = Q.matrix_from_quat(b.get_body_quat_w(body)[:, 0].astype(np.float64))
        return b.get_body_pos_w(body)[:, 0].astype(np.float64) + R @ FOOT_OFFSET

    h = 1e-3
    fd = (foot(_integrate(qpos, qvel, h)) - foot(_integrate(qpos, qvel, -h))) / (2 * h)
    b.set_state(np.arange(2), qpos, qvel)
    jacp, jacr = (j.astype(np.float64) for j in b.get_site_jacobian_w(site, np.arange(b.nv)))
    with p("velocity_fd"):
        np.testing.assert_allclose(np.einsum("nij,nj->ni", jacp, qvel), fd, atol=1e-3,
                                   err_msg="jacp @ qvel vs central differences of the FL_foot position")
    with p("angular_velocity"):
        np.testing.assert_allclose(np.einsum("nij,nj->ni", jacr, qvel), b.get_body_ang_vel_w(body)[:, 0], atol=1e-4,
                                   err_msg="jacr @ qvel vs get_body_ang_vel_w of FL_calf")


def _hfield_h(x):
    return np.where(x <= 0, 0.2 * (x + 2), 0.4)


def _height_scan(kit, tmp_path, p):
    """hfield_terrain: h(x, y) = 0.2 (x + 2) for x <= 0, 0.4 for x >= 0 (grid points and the
    linear region are exact; tolerance 2e-3 m), heights and distances below the ball; the same
    offsets turned by the ball's yaw (yaw_heights) and by its whole orientation (full_heights)."""
    b = kit.make("hfield_terrain", 1)
    geom = b.get_geom_id("terrain")
    ball = int(b.get_body_ids(["ball"])[0])
    qpos = np.array([[1.0, 0.0, 1.0, 1, 0, 0, 0]])
    b.set_state(np.array([0]), qpos, np.zeros((1, 6)))
    offsets = np.array([[0.0, 0.0], [-2.0, 0.0], [-1.5, 0.3], [-2.6, -1.0], [0.5, 0.5]])
    sc = b.create_hfield_scanner(hfield_geom_id=geom, offsets=offsets, frame_body_id=ball, alignment="world")
    h = sc.scan()
    with p("shape"):
        assert h.shape == (1, len(offsets)), f"scan() shape {h.shape}, expected (1, {len(offsets)})"
    with p("heights"):
        np.testing.assert_allclose(h[0], _hfield_h(1.0 + offsets[:, 0]), atol=2e-3, err_msg="scanned heights")
    d = b.create_hfield_scanner(hfield_geom_id=geom, offsets=offsets, frame_body_id=ball, alignment="world",
                                output="distance").scan()
    with p("distance"):
        np.testing.assert_allclose(d[0], 1.0 - _hfield_h(1.0 + offsets[:, 0]), atol=2e-3, err_msg="distance output")
    # yaw: the ball turned 90 degrees about z, body x along world +y, body y along world -x: x = 1 - oy
    b.set_state(np.array([0]), np.array([[1.0, 0.0, 1.0, np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]]),
                np.zeros((1, 6)))
    off = np.array([[0.0, 1.5], [0.7, -0.5], [-0.4, 2.6]])
    h = b.create_hfield_scanner(hfield_geom_id=geom, offsets=off, frame_body_id=ball, alignment="yaw").scan()
    with p("yaw_heights"):
        np.testing.assert_allclose(h[0], _hfield_h(1.0 - off[:, 1]), atol=2e-3,
                                   err_msg="yaw-aligned scan under a body yawed 90 degrees")
    # full: the ball pitched 60 degrees about y, body x along world (cos 60, 0, -sin 60): x = 1 + ox / 2
    # (a yaw-aligned scan would give x = 1 + ox: 0.12 m instead of 0.36 m at the first point)
    b.set_state(np.array([0]), np.array([[1.0, 0.0, 1.0, np.cos(np.pi / 6), 0, np.sin(np.pi / 6), 0]]),
                np.zeros((1, 6)))
    off = np.array([[-2.4, 0.0], [-1.0, 0.5], [0.6, -0.3]])
    h = b.create_hfield_scanner(hfield_geom_id=geom, offsets=off, frame_body_id=ball, alignment="full").scan()
    with p("full_heights"):
        np.testing.assert_allclose(h[0], _hfield_h(1.0 + 0.5 * off[:, 0]), atol=2e-3,
                                   err_msg="fully aligned scan under a body pitched 60 degrees")


def _terrain(kit, tmp_path, p):
    """Spawn origins: a 2 x 2 grid, 1 m apart, centred on the terrain geom, on its surface."""
    cfg = SceneCfg(str(scene_path("hfield_terrain")),
                   terrain=TerrainCfg(hfield_geom="terrain", rows=2, cols=2, spacing=1.0))
    b = kit.make(cfg, 1, sim_dt=0.002)
    data = b.get_terrain_spawn_data()
    with p("spawn_data"):
        assert data is not None, "TERRAIN declared but get_terrain_spawn_data() returned None"
    if data is None:
        return
    o = np.asarray(data.origins, dtype=np.float64)
    with p("origins_grid"):
        assert o.shape == (4, 3), f"origins shape {o.shape}, expected (4, 3)"
        assert sorted(map(tuple, np.round(o[:, :2], 6))) == [(-0.5, -0.5), (-0.5, 0.5), (0.5, -0.5), (0.5, 0.5)], \
            f"origins x, y {o[:, :2].tolist()}: expected the 2 x 2 grid 1 m apart around 0"
    with p("origins_on_surface"):
        np.testing.assert_allclose(o[:, 2], _hfield_h(o[:, 0]), atol=2e-3, err_msg="origins on the surface")
    with p("sample_height"):
        np.testing.assert_allclose(np.asarray(data.sample_height(o[:, :2])).reshape(-1), _hfield_h(o[:, 0]),
                                   atol=2e-3, err_msg="sample_height at the origins")
    with p("geom_id"):
        assert data.hfield_geom_id == b.get_geom_id("terrain"), f"hfield_geom_id {data.hfield_geom_id}"
    with p("size"):
        np.testing.assert_allclose(data.size, (2, 2, 0.4, 0.1), atol=1e-6, err_msg="hfield size")


def _mocap(kit, tmp_path, p):
    """A mocap body: its initial pose, a per-env write read back (position, wxyz quaternion) and
    seen by get_body_pos_w (1e-6)."""
    path = tmp_path / "mocap_probe.xml"
    path.write_text(MOCAP_XML)
    b = kit.make(SceneCfg(str(path)), 2, sim_dt=0.002)
    bind = b.bind_mocap_pose("target")
    pos, quat = bind.get()
    with p("initial_pose"):
        np.testing.assert_allclose(pos, [[0.5, 0, 1]] * 2, atol=1e-6, err_msg="initial mocap position")
        np.testing.assert_allclose(quat, [[1, 0, 0, 0]] * 2, atol=1e-6, err_msg="initial mocap quaternion")
    q = np.array([[np.cos(0.3), 0, 0, np.sin(0.3)]])
    bind.set(np.array([[1.0, 2.0, 3.0]]), q, env_ids=np.array([1]))
    pos, quat = bind.get()
    with p("per_env_write"):
        np.testing.assert_allclose(pos, [[0.5, 0, 1], [1, 2, 3]], atol=1e-6, err_msg="mocap write is per env")
    with p("quat_wxyz"):
        np.testing.assert_allclose(quat[1], q[0], atol=1e-6, err_msg="mocap quaternion (wxyz)")
    tid = b.get_body_ids(["target"])
    with p("body_pos_w"):
        np.testing.assert_allclose(b.get_body_pos_w(tid)[:, 0], [[0.5, 0, 1], [1, 2, 3]], atol=1e-6,
                                   err_msg="mocap body world position after a write")


def _pre_step(kit, tmp_path, p):
    """The callback runs once per substep with (backend, ctrl) (called_per_substep), sees fresh
    state (fresh_state), and its output is what the actuators get (output_replaces_ctrl, 1e-5)."""
    b = kit.make("fixed_arm", 2)
    seen, args = [], []

    def cb(backend, ctrl):
        args.append(backend is b and ctrl.shape == (2, 4))
        seen.append(backend.get_dof_pos()[0, 1].copy())
        out = np.zeros_like(ctrl)
        out[:, 1] = 5.0
        return out

    b.set_pre_step_control(cb)
    b.step(np.full((2, 4), 40.0), 3)
    with p("called_per_substep"):
        assert len(seen) == 3, f"pre-step callback called {len(seen)} times for nsteps=3"
        assert all(args), "the callback must get (the backend, ctrl of shape (num_envs, num_actuators))"
    with p("fresh_state"):
        assert len(seen) == 3 and seen[2] != seen[0], "callback did not see the state refreshed between substeps"
    b.set_pre_step_control(None)
    ref = kit.make("fixed_arm", 2)
    c = np.zeros((2, 4))
    c[:, 1] = 5.0
    ref.step(c, 1)
    ref.step(c, 1)
    ref.step(c, 1)
    with p("output_replaces_ctrl"):
        np.testing.assert_allclose(b.get_qpos(), ref.get_qpos(), rtol=1e-5, atol=1e-7,
                                   err_msg="the callback's output must replace ctrl")


def _snapshot(kit, tmp_path, p):
    """Rows are [time, qpos, qvel, ...]; a restore reproduces every state read bitwise (tier
    "state"), and for tier "exact" the continuation too. Tier "state" continuations stay within
    the contact tier of the quadruped (base 5 mm, joints 1e-2 rad after 10 steps of PD hold)."""
    b = kit.make("quadruped", 2)
    tier = b.snapshot_tier
    with p("tier"):
        assert tier in ("exact", "state"), f"snapshot_tier {tier!r}: expected 'exact' or 'state'"
    qpos, qvel = varied_quadruped_state(b)
    b.set_state(np.arange(2), qpos, qvel)
    b.step(home_ctrl(b), 4)
    snap = b.get_physics_state()
    with p("shape"):
        assert snap.shape == (2, b.physics_state_size), f"snapshot {snap.shape}, expected (2, {b.physics_state_size})"
    with p("time_column"):
        np.testing.assert_allclose(snap[:, 0], 4 * b.sim_dt, rtol=1e-5, err_msg="snapshot time column")
    with p("qpos_columns"):
        np.testing.assert_allclose(snap[:, 1:1 + b.nq], b.get_qpos(), rtol=1e-6, atol=1e-6, err_msg="snapshot qpos")
    with p("qvel_columns"):
        np.testing.assert_allclose(snap[:, 1 + b.nq:1 + b.nq + b.nv], b.get_qvel(), rtol=1e-6, atol=1e-6,
                                   err_msg="snapshot qvel")
    reads = all_getters(b)
    b.step(home_ctrl(b), 10)
    a = b.get_qpos()
    b.set_physics_state(snap)
    changed = diff_report(reads, all_getters(b))
    with p("restore_reads"):
        assert not changed, f"reads after restoring a snapshot differ from those when it was taken: {changed}"
    b.step(home_ctrl(b), 10)
    with p("continuation"):
        if tier == "exact":
            assert np.array_equal(b.get_qpos(), a), \
                "tier 'exact': restore-then-step diverged from the original trajectory"
        else:
            np.testing.assert_allclose(b.get_qpos()[:, :3], a[:, :3], atol=5e-3,
                                       err_msg="tier 'state': base position after restore-then-step")
            np.testing.assert_allclose(b.get_qpos()[:, 7:], a[:, 7:], atol=1e-2,
                                       err_msg="tier 'state': joints after restore-then-step")


def _render(kit, tmp_path, p):
    """render() draws the current state: it returns None, can be called repeatedly, and neither
    steps nor changes the state (every read bitwise unchanged)."""
    b = kit.make("free_body", 1)
    b.step(np.zeros((1, 0)), 3)
    reads = all_getters(b)
    b.init_renderer(headless=True, width=64, height=48)
    results = (b.render(), b.render())
    with p("returns_none"):
        assert results == (None, None), f"render() must return None, got {results!r}"
    changed = diff_report(reads, all_getters(b))
    with p("state_unchanged"):
        assert not changed, f"init_renderer()/render() changed the state: {changed}"


#: Frame sameness: at most this fraction of pixels may differ from MuJoCo's frame of the same pose
#: by more than VIDEO_LEVELS (of 255) in a channel. Both frames come from one renderer on this
#: machine, so only the backend's read-back of the pose differs: measured on the 96x72 box frame,
#: float32 rounding flips no pixel, 1 mm or 0.5 degrees ~0.03 %; a 1 cm shift flips 0.3 % and a
#: quaternion read in xyzw order 2.4 %.
VIDEO_PIXELS, VIDEO_LEVELS = 1e-3, 24
VIDEO_CAMERA = {"lookat": (0.0, 0.0, 1.0), "distance": 1.5}


def _pose(i):
    """Known free-body poses: a shift along x and a turn about an oblique axis, both growing with i."""
    axis = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    return np.array([[0.1 + 0.05 * i, -0.05, 1.05, np.cos(0.35 + 0.1 * i), *(np.sin(0.35 + 0.1 * i) * axis)]])


def _mujoco_frames(backend, poses, width, height):
    """MuJoCo's frames of ``poses`` (the shared renderer fed each pose directly, no backend), or
    ``None`` when no renderer plugin is installed."""
    from unisim_core import CameraCfg, OptionalDependencyError
    from unisim_core.contract._playback import video_renderer

    try:
        make = video_renderer()
    except OptionalDependencyError:
        return None
    renderer = make(backend.scene.model_file, 1, width, height, 1.0, "grid", CameraCfg.coerce(VIDEO_CAMERA))
    try:
        return [renderer.draw(q) for q in poses]
    finally:
        renderer.close()


def _assert_same_frame(frame, ref, what):
    flipped = float((np.abs(frame.astype(np.int16) - ref).max(axis=2) > VIDEO_LEVELS).mean())
    assert flipped <= VIDEO_PIXELS, (f"{what}: {flipped:.2%} of pixels differ from MuJoCo's frame of the same pose "
                                     f"by more than {VIDEO_LEVELS} levels (tolerance {VIDEO_PIXELS:.1%})")


def _video(kit, tmp_path, p):
    """capture_video_frame(): a (72, 96, 3) uint8 frame whose pixels change when the body moves, and
    the frame of a known pose matches MuJoCo's frame of that pose (VIDEO_PIXELS, VIDEO_LEVELS)."""
    b = kit.make("free_body", 1)
    b.init_renderer(headless=True, capture=True, width=96, height=72, camera_kwargs=VIDEO_CAMERA)
    f1 = b.capture_video_frame()
    b.set_state(np.array([0]), _pose(0), np.zeros((1, 6)))
    f2 = b.capture_video_frame()
    with p("frame_shape"):
        assert f1.shape == (72, 96, 3) and f1.dtype == np.uint8, \
            f"frame {f1.shape} {f1.dtype}, expected (72, 96, 3) uint8"
    with p("pixels_change"):
        assert not np.array_equal(f1, f2), "moving the body did not change the pixels"
    ref = _mujoco_frames(b, [_pose(0)], 96, 72)
    if ref is None:
        p.skip("matches_mujoco", "no renderer plugin to draw MuJoCo's frame: pip install 'unisim-mujoco[video]'")
        return
    with p("matches_mujoco"):
        _assert_same_frame(f2, ref[0], "capture_video_frame")


def _playback(kit, tmp_path, p):
    """run_playback(): one frame per step, frame i of the state after step i (a known pose set by
    each step: MuJoCo's frame of that pose within VIDEO_PIXELS), encoded into an mp4 of num_steps
    frames (skipped without imageio)."""
    if importlib.util.find_spec("imageio") is None:
        pytest.skip("PLAYBACK check needs imageio[ffmpeg] (pip install 'imageio[ffmpeg]')")
    import imageio.v2 as imageio

    b = kit.make("free_body", 1)
    out = tmp_path / "play.mp4"
    steps, frames = iter(range(4)), []
    path = b.run_playback(env=None, initialize=lambda: None,
                          step=lambda: b.set_state(np.array([0]), _pose(next(steps)), np.zeros((1, 6))),
                          num_steps=4, output_video=str(out), camera_kwargs=VIDEO_CAMERA,
                          on_frame=lambda i, f: frames.append(f))
    with p("mp4_written"):
        assert path is not None and out.is_file() and out.stat().st_size > 0, "no mp4 written"
        with imageio.get_reader(str(out)) as reader:
            count = reader.count_frames()
        assert count == 4, f"the mp4 holds {count} frames, expected 4 (num_steps)"
    ref = _mujoco_frames(b, [_pose(i) for i in range(4)], *frames[0].shape[1::-1])
    if ref is None:
        p.skip("frames_match_mujoco", "no renderer plugin to draw MuJoCo's frames: pip install 'unisim-mujoco[video]'")
        return
    with p("frames_match_mujoco"):
        assert len(frames) == 4, f"on_frame saw {len(frames)} frames, expected 4"
        for i, (frame, want) in enumerate(zip(frames, ref)):
            _assert_same_frame(frame, want, f"playback frame {i}")


def _device_arrays(kit, tmp_path, p):
    """The DLPack views alias the engine state: a view taken before ``step``/``set_state``
    holds the state the numpy getters return after them (a copy would be stale). Checked
    where the views live in host memory (kDLCPU), the only place numpy can read them."""
    b = kit.make("free_body", 2)
    views = b.get_device_arrays()
    if views.qpos.__dlpack_device__()[0] != 1:
        pytest.skip(f"views live on {views.device!r}; aliasing is checked on CPU")
    qpos, qvel, ctrl = (np.from_dlpack(v) for v in (views.qpos, views.qvel, views.ctrl))
    pos, quat = np.from_dlpack(views.body_pos_w), np.from_dlpack(views.body_quat_w)
    with p("shapes"):
        assert qpos.shape == (2, b.nq) and qvel.shape == (2, b.nv) and ctrl.shape == (2, b.num_actuators), \
            f"qpos {qpos.shape}, qvel {qvel.shape}, ctrl {ctrl.shape}"
        assert pos.shape == (2, b.num_bodies, 3) and quat.shape == (2, b.num_bodies, 4), \
            f"body_pos_w {pos.shape}, body_quat_w {quat.shape}"
        assert np.from_dlpack(views.sensordata).shape[0] == 2, "sensordata rows"
    b.set_state(np.array([1]), np.array([[0.3, -0.2, 1.5, np.cos(0.2), 0, 0, np.sin(0.2)]]), np.ones((1, 6)))
    b.step(np.zeros((2, 0)), 3)
    with p("qpos_live"):
        np.testing.assert_allclose(qpos, b.get_qpos(), rtol=1e-6, atol=1e-7, err_msg="qpos view is not live")
    with p("qvel_live"):
        np.testing.assert_allclose(qvel, b.get_qvel(), rtol=1e-6, atol=1e-7, err_msg="qvel view is not live")
    box = b.get_body_ids(["box"])
    with p("body_pos_live"):
        np.testing.assert_allclose(pos[:, box], b.get_body_pos_w(box), rtol=1e-6, atol=1e-7,
                                   err_msg="body_pos_w view is not live")
    with p("body_quat_live"):
        np.testing.assert_allclose(quat[:, box], b.get_body_quat_w(box), rtol=1e-6, atol=1e-7,
                                   err_msg="body_quat_w view is not live (wxyz)")
    with p("buffer_stable"):
        assert np.from_dlpack(b.get_device_arrays().qpos).__array_interface__["data"][0] == \
            qpos.__array_interface__["data"][0], "get_device_arrays() moved the qpos buffer"


def _dr_values(term, n_targets):
    spec = TERM_SPECS[term]
    shape = (1,) + ((n_targets,) if spec.target else ()) + spec.value_shape
    return np.full(shape, 0.5)


def _dr_phase(kit, phase, p):
    """Each declared model term of ``phase`` changes only the targeted env (targeted_env) and ids
    (targeted_ids), by the value written (value_read_back, 1e-6; read back with get_model_field);
    state terms change only the targeted env's velocity (state_terms); a step after each stays
    finite (finite_after_step)."""
    b = kit.make("quadruped", 3)
    terms = sorted(getattr(b.get_dr_capabilities(), f"{phase}_terms"))
    with p("terms_listed"):
        assert terms, f"{phase} randomization declared but no terms listed"
    counts = b._counts()
    for name, kinds in (("targeted_env", MODEL_TERMS), ("value_read_back", MODEL_TERMS)):
        if not set(terms) & set(kinds):
            p.skip(name, f"no model term among the declared {phase} terms {terms}")
    if not any(TERM_SPECS[t].target is not None for t in terms if t in MODEL_TERMS):
        p.skip("targeted_ids", f"no targeted model term among the declared {phase} terms {terms}")
    if not any(TERM_SPECS[t].kind == "state" for t in terms if t not in MODEL_TERMS):
        p.skip("state_terms", f"no state term among the declared {phase} terms {terms}")
    for term in terms:
        spec = TERM_SPECS[term]
        tid = None if spec.target is None else np.array([counts[spec.target] - 1])
        operation = "set" if term in ("body_force", "body_torque") else "add"
        op = RandomizationOp(term=term, env_ids=np.array([1]), target_ids=tid, values=_dr_values(term, 1),
                             operation=operation)
        before_field = b.get_model_field(term) if term in MODEL_TERMS else None
        before_v = b.get_qvel()
        if phase == "init":
            b.apply_init_randomization(InitRandomizationPlan([op]))
        elif phase == "interval":
            b.apply_interval_randomization(IntervalRandomizationPlan([op]))
        else:
            b.set_state(np.array([1]), b.get_qpos()[1:2], b.get_qvel()[1:2],
                        randomization=ResetRandomizationPayload([op]))
        if term in MODEL_TERMS:
            after = b.get_model_field(term)
            with p("targeted_env"):
                changed = np.argwhere(np.any((after != before_field).reshape(after.shape[0], -1), axis=1)).ravel()
                assert changed.tolist() == [1], f"{phase} {term}: envs changed {changed.tolist()}, expected [1]"
            if tid is not None:
                with p("targeted_ids"):
                    rows = np.flatnonzero(np.any((after[1] != before_field[1]).reshape(after.shape[1], -1), axis=1))
                    assert rows.tolist() == tid.tolist(), \
                        f"{phase} {term}: ids changed {rows.tolist()}, expected {tid}"
            with p("value_read_back"):
                want = before_field[1].astype(np.float64) + (0.5 if tid is None else 0.5 * (np.arange(
                    after.shape[1])[(...,) + (None,) * (after.ndim - 2)] == tid[0]))
                np.testing.assert_allclose(after[1], want, rtol=1e-6, atol=1e-6,
                                           err_msg=f"{phase} {term}: value read back after adding 0.5 to env 1")
        elif spec.kind == "state":
            with p("state_terms"):
                dv = b.get_qvel() - before_v
                assert np.any(dv[1]) and not np.any(dv[[0, 2]]), \
                    f"{phase} {term}: velocity change not limited to env 1"
        b.step(home_ctrl(b), 1)
        with p("finite_after_step"):
            assert np.isfinite(b.get_qpos()).all(), f"{phase} {term}: non-finite qpos after a step"


def _dr_unsupported(kit, phase, p):
    """A model term the phase does not declare is rejected (undeclared_rejected) with nothing
    written (undeclared_writes_nothing)."""
    b = kit.make("quadruped", 2)
    allowed = set(getattr(b.get_dr_capabilities(), f"{phase}_terms"))
    others = sorted(t for t in MODEL_TERMS if t not in allowed)
    if not others:
        for name in ("undeclared_rejected", "undeclared_writes_nothing"):
            p.skip(name, f"every model term is declared for {phase} randomization")
        return
    term = others[0]
    spec = TERM_SPECS[term]
    op = RandomizationOp(term=term, env_ids=np.array([0]), target_ids=None if spec.target is None else np.array([0]),
                         values=_dr_values(term, 1), operation="scale")
    q, v = b.get_qpos(), b.get_qvel()
    with p("undeclared_rejected"):
        with pytest.raises((ValueError, NotImplementedError)):
            if phase == "init":
                b.apply_init_randomization(InitRandomizationPlan([op]))
            elif phase == "interval":
                b.apply_interval_randomization(IntervalRandomizationPlan([op]))
            else:
                b.set_state(np.array([0]), q[:1], v[:1], randomization=ResetRandomizationPayload([op]))
    with p("undeclared_writes_nothing"):
        assert np.array_equal(b.get_qpos(), q) and np.array_equal(b.get_qvel(), v), f"rejected {term} wrote state"


def _dr(phase):
    def run(kit, tmp_path, p):
        _dr_phase(kit, phase, p)
        _dr_unsupported(kit, phase, p)
    run.__doc__ = f"{phase} randomization: declared terms are targeted; undeclared terms fail closed."
    return run


def _contacts(kit, tmp_path, p):
    """box_on_plane: the box rests on the floor (z = 0.1 m, within 5 mm after 0.5 s)."""
    b = kit.make("box_on_plane", 1)
    b.step(np.zeros((1, 0)), int(0.5 / b.sim_dt))
    z = float(b.get_base_pos()[0, 2])
    with p("rests_on_plane"):
        assert abs(z - 0.1) < 5e-3, f"box resting on the plane at z={z:.4f}, expected 0.1 (fell through?)"


def _contact_forces(kit, tmp_path, p):
    """box_on_plane at rest: the box's net contact force is (0, 0, m g), 1 % (see the contacts layer)."""
    b = kit.make("box_on_plane", 1)
    c = b.bind_contact_forces(["box"])
    b.step(np.zeros((1, 0)), int(0.3 / b.sim_dt))
    with p("resting_force"):
        np.testing.assert_allclose(c.read()[0, 0], [0.0, 0.0, 9.81], atol=0.0981, err_msg="resting box contact force")


def _contact_filters(kit, tmp_path, p):
    """box_on_plane at rest: the force on the box from the world is (0, 0, m g), 1 %."""
    b = kit.make("box_on_plane", 1)
    c = b.bind_contact_forces(["box"], against=["world"])
    b.step(np.zeros((1, 0)), int(0.3 / b.sim_dt))
    with p("resting_force"):
        np.testing.assert_allclose(c.read()[0, 0], [0.0, 0.0, 9.81], atol=0.0981, err_msg="resting box vs world")


def _contact_torques(kit, tmp_path, p):
    """box_on_plane at rest: the contact torque about the box's COM is (0, 0, 0), 1 % of m g x 0.1 m
    (see the contacts layer), read in np_dtype as (1, 1, 3)."""
    b = kit.make("box_on_plane", 1)
    c = b.bind_contact_forces(["box"], torques=True)
    b.step(np.zeros((1, 0)), int(0.3 / b.sim_dt))
    with p("resting_torque"):
        t = c.read_torque()
        assert t.shape == (1, 1, 3) and t.dtype == b.np_dtype, f"read_torque(): {t.shape} {t.dtype}"
        np.testing.assert_allclose(t[0, 0], 0.0, atol=0.00981, err_msg="resting box contact torque about its COM")


EXERCISERS = {
    C.CONTACTS: _contacts, C.CONTACT_FORCES: _contact_forces, C.CONTACT_FILTERS: _contact_filters,
    C.CONTACT_TORQUES: _contact_torques,
    C.SENSORS: _sensors, C.BODY_FORCE: _body_force, C.BODY_TORQUE: _body_torque,
    C.PUSH: _push, C.SITE_JACOBIAN: _site_jacobian, C.HEIGHT_SCAN: _height_scan, C.TERRAIN: _terrain,
    C.MOCAP: _mocap, C.PRE_STEP_CONTROL: _pre_step, C.PHYSICS_SNAPSHOT: _snapshot, C.RENDER: _render,
    C.VIDEO_CAPTURE: _video, C.PLAYBACK: _playback, C.INIT_RANDOMIZATION: _dr("init"),
    C.INTERVAL_RANDOMIZATION: _dr("interval"), C.RESET_RANDOMIZATION: _dr("reset"),
    C.DEVICE_ARRAYS: _device_arrays,
}
DECLARED_IDS = [pytest.param(cap, prop, id=f"{cap.value}-{prop}",
                             marks=[pytest.mark.rules(r) for r in [DECLARED_PROP_RULES.get((cap.value, prop))] if r])
                for cap in Capability for prop in DECLARED_PROPS[cap.value]]


def _exercise(kit, cap, tmp_path):
    props = Props()
    EXERCISERS[cap](kit, tmp_path, props)
    return props


@pytest.mark.parametrize("cap,prop", DECLARED_IDS)
def test_declared_works(kit, cap, prop, tmp_path):
    """A declared capability is exercised against a known answer (see each exerciser), one
    property per check over one scenario per capability."""
    if cap not in kit.caps:
        pytest.skip(f"backend {kit.label!r} does not declare capability {cap.value!r}")
    kit.shared(f"capabilities.declared.{cap.value}", lambda k: _exercise(k, cap, tmp_path)).verdict(prop)


def test_undeclared_scene_feature_fails_closed(kit):
    """Randomization on a backend: a term name that does not exist is a KeyError/ValueError."""
    if not ({C.INIT_RANDOMIZATION, C.RESET_RANDOMIZATION} & kit.caps):
        with pytest.raises(UnsupportedCapabilityError):
            kit.make("free_body", 1).get_model_field("body_mass")
        return
    with pytest.raises((KeyError, ValueError)):
        kit.make("free_body", 1).get_model_field("no_such_term")
