"""Building MJCF scenes as PhysX articulations: known answers and refusals by feature."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance import scene_path
from unisim_core import SceneCfg, UnsupportedCapabilityError, create_backend


def test_ball_rests_on_the_height_field_plateau():
    """hfield_terrain: the plateau is at z = 0.4 (elevation 1 x hz 0.4); the 0.1 m ball rests at 0.5."""
    b = create_backend("sapien", SceneCfg(model_file=str(scene_path("hfield_terrain"))), 1, 0.002)
    b.step(np.zeros((1, 0), np.float32), 600)
    assert b.get_qpos()[0, 2] == pytest.approx(0.5, abs=2e-3)
    assert b.get_qpos()[0, 0] == pytest.approx(1.0, abs=1e-3)


HFIELD = """<mujoco><option timestep="0.002"/><asset><hfield name="h" nrow="4" ncol="5" size="1.0 0.8 0.5 0.1"
  elevation="0 1 0.2 0.7 0.1  0.9 0 0.5 0.3 1  0.4 0.8 0 1 0.6  1 0.3 0.9 0 0.5"/></asset>
  <worldbody><geom name="terrain" type="hfield" hfield="h" pos="0.3 -0.2 0.1" euler="0 0 30"/></worldbody></mujoco>"""


def test_the_height_field_collides_on_mujocos_triangles(tmp_path):
    """A rough 4 x 5 field, rotated 30 degrees and raised: PhysX's static triangle mesh is MuJoCo's surface
    (each cell split along its (c, r)-(c+1, r+1) diagonal): rays cast down onto it at 300 points hit where
    MuJoCo's mj_ray hits its height field, within float32 (measured 4.8e-7 m; the other diagonal is up to
    0.37 m away at these points), and the shared sampler (the scanner's heights) agrees."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "hf.xml"
    path.write_text(HFIELD)
    b = create_backend("sapien", SceneCfg(str(path)), 1, 0.002)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    local = np.random.default_rng(1).uniform([-0.99, -0.79], [0.99, 0.79], size=(300, 2))
    xy = local @ np.array([[c, s], [-s, c]]) + [0.3, -0.2]
    down, geom = np.array([0.0, 0.0, -1.0], np.float32), np.zeros(1, np.int32)
    physx = [3.0 - b.sapien_scenes[0].physx_system.raycast(np.array([x, y, 3.0], np.float32), down, 10.0).distance
             for x, y in xy]
    ray = [3.0 - mujoco.mj_ray(m, d, np.array([x, y, 3.0]), down.astype(np.float64), None, 1, 1, geom) for x, y in xy]
    np.testing.assert_allclose(physx, ray, atol=2e-6)
    np.testing.assert_allclose(b._height_field(0)(xy), ray, atol=2e-6)


def test_a_ball_rolls_down_the_height_field_ramp_as_on_mujoco():
    """hfield_terrain, 1 s: a ball set on the 0.2 slope rolls down it within 2e-3 m of MuJoCo (measured
    1.2e-3); one dropped 0.3 m onto it within 1e-2 (6.9e-3: PhysX's rigid impact against MuJoCo's soft one)."""
    slope, r = np.arctan(0.2), 0.1
    q = np.zeros((2, 7))
    q[:, 3] = 1.0
    q[0, :3] = [-0.5 - r * np.sin(slope), 0.3, 0.3 + r / np.cos(slope) + 5e-4]
    q[1, :3] = [-0.2, -0.5, 0.9]
    out = []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(str(scene_path("hfield_terrain"))), 2, 0.002)
        b.set_state(np.arange(2), q, np.zeros((2, 6)))
        b.step(np.zeros((2, 0)), 500)
        out.append(b.get_qpos()[:, :3])
    assert out[0][0, 0] < -1.1  # it rolled about 0.7 m down
    np.testing.assert_allclose(out[1][0], out[0][0], atol=2e-3)
    np.testing.assert_allclose(out[1][1], out[0][1], atol=1e-2)


def _scene(tmp_path, body: str, extra: str = "") -> str:
    path = tmp_path / "s.xml"
    path.write_text(f"""<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>{body}</worldbody>
      {extra}</mujoco>""")
    return str(path)


_SPHERE = '<geom type="sphere" size="0.1" mass="1" contype="2" conaffinity="2"/>'
CHAIN = (f'<body name="b1" pos="0 0 1"><freejoint/>{_SPHERE}<body name="b2" pos="0 0 0.5"><joint type="hinge"/>'
         f'{_SPHERE}<body name="b3" pos="0 0 0.5"><joint type="hinge"/>{_SPHERE}</body></body></body>')


@pytest.mark.parametrize("body, extra, feature", [
    ('<body pos="0 0 1"><freejoint/><geom type="plane" size="1 1 0.1" mass="1"/></body>', "", "moving_plane"),
    ('<body pos="0 0 1"><freejoint/><geom name="a" type="sphere" size="0.1" mass="1"/></body>',
     '<contact><pair geom1="floor" geom2="a"/></contact>', "contact_pair"),
])
def test_scene_features_physx_cannot_build_are_refused_by_name(tmp_path, body, extra, feature):
    path = _scene(tmp_path, body, extra)
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("sapien", SceneCfg(model_file=path), 1, 0.002)
    assert info.value.capability == feature


MESH_ARM = """<mujoco><compiler angle="radian" meshdir="."/>
  <asset><mesh name="cube" file="cube.obj" scale="0.1 0.1 0.1"/></asset>
  <worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="base" pos="0 0 0.05"><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <geom name="base_geom" type="mesh" mesh="cube" mass="0"/>
      <body name="link" pos="0 0 0.2"><joint name="j" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
        <geom name="link_geom" type="mesh" mesh="cube" mass="0"/></body></body>
    <body name="drop" pos="0.5 0 0.5"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <geom name="drop_geom" type="mesh" mesh="cube" mass="0"/></body>
  </worldbody></mujoco>"""
CUBE = "".join(f"v {x} {y} {z}\n" for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)) + "".join(
    f"f {a} {b} {c}\n" for a, b, c in ((1, 3, 4), (1, 4, 2), (5, 6, 8), (5, 8, 7), (1, 2, 6), (1, 6, 5), (3, 7, 8),
                                        (3, 8, 4), (1, 5, 7), (1, 7, 3), (2, 4, 8), (2, 8, 6)))


def test_mesh_geoms_are_convex_hulls_and_world_welded_bodies_are_static(tmp_path):
    """A mesh geom collides as its file's convex hull (a 0.2 m cube, from an OBJ scaled by 0.1, rests with
    its centre at z = 0.1); a body welded to the world keeps its shapes on the static actor, as MuJoCo's
    weld 0 (floor and base do not collide, base and its jointed child are tested as in MuJoCo)."""
    (tmp_path / "cube.obj").write_text(CUBE)
    path = tmp_path / "arm.xml"
    path.write_text(MESH_ARM)
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    b.step(np.zeros((1, 0), np.float32), 500)
    assert b.get_qpos()[0, 3] == pytest.approx(0.1, abs=2e-3)  # the free cube's z (qpos: hinge, then x y z)
    base_link = b.sapien_articulations[0][0].get_links()[0]
    assert base_link.get_collision_shapes() == []
    assert len(b.sapien_scenes[0].physx_system.get_rigid_static_components()[0].get_collision_shapes()) == 2


def test_a_mesh_scale_from_its_default_class_is_applied(tmp_path):
    """``<mesh class=...>`` takes its scale from the default class (trossen_wx250s' meshes are in mm, scaled by
    0.001 there; read as 1, their hulls were 1000x too large and the arm blew up): the cube rests at z = 0.1."""
    (tmp_path / "cube.obj").write_text(CUBE)
    path = tmp_path / "arm.xml"
    path.write_text(MESH_ARM.replace('<mesh name="cube" file="cube.obj" scale="0.1 0.1 0.1"/>',
                                     '<mesh name="cube" file="cube.obj" class="mm"/>').replace(
        "<asset>", '<default><default class="mm"><mesh scale="0.1 0.1 0.1"/></default></default><asset>'))
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    b.step(np.zeros((1, 0), np.float32), 500)
    assert b.get_qpos()[0, 3] == pytest.approx(0.1, abs=2e-3)


def test_an_accelerometer_on_a_world_site_reads_minus_gravity(tmp_path):
    """A static point's proper acceleration is -g: (0, 0, +9.81) m/s², before and after steps."""
    path = tmp_path / "world_imu.xml"
    path.write_text("""<mujoco><worldbody><site name="ws" pos="0 0 1"/>
      <body name="b" pos="0 0 1"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>
      </worldbody><sensor><accelerometer name="acc" site="ws"/></sensor></mujoco>""")
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 2, 0.002)
    np.testing.assert_allclose(b.get_sensor_data("acc"), [[0, 0, 9.81]] * 2, atol=1e-6)
    b.step(np.zeros((2, 0), np.float32), 3)
    np.testing.assert_allclose(b.get_sensor_data("acc"), [[0, 0, 9.81]] * 2, atol=1e-6)


def test_an_exclude_becomes_a_shared_ignore_bit(tmp_path):
    """<exclude body1="b1" body2="b3"> (a grandparent/grandchild pair PhysX's own filter would test):
    the two bodies' shapes share a PhysX ignore bit (group 2, same id group 3), no other body has one;
    without the exclude nobody does (both engines then test that pair and neither a jointed parent/child)."""
    for extra, want in (('<contact><exclude body1="b1" body2="b3"/></contact>', [1, 0, 1]), ("", [0, 0, 0])):
        b = create_backend("sapien", SceneCfg(model_file=_scene(tmp_path, CHAIN, extra)), 1, 0.002)
        links = {link.name: link for link in b.sapien_articulations[0][0].get_links()}
        groups = [links[f"b{k}"].get_collision_shapes()[0].get_collision_groups() for k in (1, 2, 3)]
        assert [g[2] for g in groups] == want and all(g[3] == 1 for g in groups)


@pytest.mark.parametrize("integrator", ["implicitfast", "Euler"])
def test_a_friction_joints_damping_is_mujocos_implicit_damping(tmp_path, integrator):
    """A frictionloss joint's damping (its drive carries the friction bound) is explicit with MuJoCo's dt D as
    armature, i.e. MuJoCo's (M + dt D) update: a link so light that damping x dt / I = 9.8 (explicit damping
    blew up; it was refused) follows MuJoCo within 1e-4 rad over 0.3 s (measured 6e-8 implicitfast, 7.3e-5
    Euler, whose servo kv is explicit), and a 100x heavier one within 1e-3 (3.5e-4: MuJoCo's soft friction)."""
    for mass, inertia, tol in ((0.01, 0.000002, 1e-4), (1.0, 0.0002, 1e-3)):
        path = tmp_path / "f.xml"
        path.write_text(f"""<mujoco><compiler angle="radian"/><option integrator="{integrator}"/><worldbody>
          <body name="b"><joint name="j" type="hinge" axis="0 1 0" damping="0.5" frictionloss="0.01"/>
          <inertial pos="0.1 0 0" mass="{mass}" diaginertia="{inertia} {inertia} {inertia}"/></body></worldbody>
          <actuator><position joint="j" kp="2" kv="0.1"/></actuator></mujoco>""")
        pair = [create_backend(name, SceneCfg(model_file=str(path)), 1, 0.002) for name in ("mujoco", "sapien")]
        err = 0.0
        for b in pair:
            b.set_state(np.array([0]), np.array([[0.3]]), np.array([[2.0]]))
        for _ in range(150):
            for b in pair:
                b.step(np.array([[-0.2]]), 1)
            err = max(err, abs(float(pair[0].get_qpos()[0, 0] - pair[1].get_qpos()[0, 0])))
        assert err < tol, (mass, err)


def test_gravcomp_is_disabled_gravity_or_a_force_at_the_com_as_mujoco(tmp_path):
    """MJCF gravcomp (google_robot's arm, i2rt_yam...): MuJoCo adds -gravcomp m g at each body's COM. Here
    gravcomp 1 disables the link's gravity in PhysX (read back) and other values add that force before
    every substep. Kit scene gravcomp (1, 0.5, 2 on free bodies, 1 and 0.5 on hinge arms) after 100 steps:
    MuJoCo's qpos within 1e-5 ("sink" at 0.9009 m, "rise" at 1.198 m, arm_half 0.29935 rad; ignored,
    every body fell as with gravcomp 0: 0.8018 m, 0.5934 rad). An accelerometer on a gravcomp 0.5 body
    reads MuJoCo's +g/2 after set_state (probe substep) and after a step. actuatorgravcomp (the compensation
    through the actuators, clamped by actuatorfrcrange) is refused by name."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    from unisim_conformance import SCENES_DIR

    path = str(SCENES_DIR / "gravcomp.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 100)
    b = create_backend("sapien", SceneCfg(model_file=path), 2, 0.002)
    b.step(np.zeros((2, 0), np.float32), 100)
    np.testing.assert_allclose(b.get_qpos(), np.tile(d.qpos, (2, 1)), atol=1e-5)
    # one articulation per world child (gravcomp 1, 0.5, 2, 1, 0.5), its body the last link: 0.5 and 2 get the force
    assert [art.get_links()[-1].disable_gravity for art in b.sapien_articulations[0]] == [
        True, False, False, True, False]

    imu = tmp_path / "imu.xml"
    imu.write_text('<mujoco><worldbody><body name="sink" pos="0 0 1" gravcomp="0.5"><freejoint/>'
                   '<inertial pos="0 0 0" mass="2" diaginertia="0.1 0.1 0.1"/><site name="s"/></body></worldbody>'
                   '<sensor><accelerometer name="acc" site="s"/></sensor></mujoco>')
    b = create_backend("sapien", SceneCfg(model_file=str(imu)), 1, 0.002)
    np.testing.assert_allclose(b.get_sensor_data("acc")[0], [0, 0, 0.5 * 9.81], atol=1e-3)
    b.step(np.zeros((1, 0), np.float32), 3)
    np.testing.assert_allclose(b.get_sensor_data("acc")[0], [0, 0, 0.5 * 9.81], atol=1e-3)
    np.testing.assert_allclose(b.get_base_lin_vel()[0], [0, 0, -0.5 * 9.81 * 0.006], atol=1e-6)

    agc = tmp_path / "agc.xml"
    agc.write_text('<mujoco><worldbody><body name="arm" pos="0 0 1" gravcomp="1"><joint name="j" axis="0 1 0" '
                   'actuatorgravcomp="true"/><inertial pos="0.25 0 0" mass="1" diaginertia="0.001 0.02 0.02"/>'
                   '</body></worldbody><actuator><motor name="m" joint="j"/></actuator></mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("sapien", SceneCfg(model_file=str(agc)), 1, 0.002)
    assert info.value.capability == "joint_actuatorgravcomp"


def test_each_env_holds_a_thread_key_and_a_batch_that_would_spend_them_is_refused():
    """A PhysX CPU system holds one of the process's POSIX thread-specific keys (glibc: 1024) while it
    lives: with them spent, importing torch deadlocked. A batch that would leave fewer than KEY_MARGIN
    is refused by num_envs before any system is made; the keys come back when the backend is freed."""
    import ctypes
    import gc

    from unisim_core import InvalidInputError
    from unisim_sapien._thread_keys import KEY_MARGIN, free_thread_keys

    scene = SceneCfg(model_file=str(scene_path("pendulum")))
    create_backend("sapien", scene, 1, 0.002).close()  # the engine's one-time keys (its first use) are taken
    gc.collect()
    before = free_thread_keys(2000)
    b = create_backend("sapien", scene, 3, 0.002)
    assert free_thread_keys(2000) == before - 3
    b.close()
    del b
    gc.collect()
    assert free_thread_keys(2000) == before
    libc, held = ctypes.CDLL(None), []
    try:  # hold all but KEY_MARGIN + 4 keys: 5 envs are one too many, 4 fit
        for _ in range(before - KEY_MARGIN - 4):
            key = ctypes.c_ulong()
            assert libc.pthread_key_create(ctypes.byref(key), None) == 0
            held.append(key)
        with pytest.raises(InvalidInputError, match=r"num_envs: .* expected at most 4 envs, got 5"):
            create_backend("sapien", scene, 5, 0.002)
        assert free_thread_keys(2000) == KEY_MARGIN + 4  # nothing was built
        create_backend("sapien", scene, 4, 0.002).close()
    finally:
        for key in held:
            libc.pthread_key_delete(key)


@pytest.mark.parametrize("axis", [[1, 0, 0], [0, 0, 1], [0, -1, 0], [-1, 0, 0], [-1, 1e-3, 0], [0.3, -0.5, 0.8]])
def test_joint_frame_turns_physx_x_onto_the_mjcf_axis(axis):
    from unisim_core.contract import quat as Q
    from unisim_sapien._build import _joint_frame

    a = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    q = _joint_frame({"axis": a})
    assert np.linalg.norm(q) == pytest.approx(1.0)
    np.testing.assert_allclose(Q.quat_apply(q, [1.0, 0.0, 0.0]), a, atol=1e-12)


TABLE = """<mujoco><option timestep="0.002"/><worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
  <body name="table" pos="0 0 0.2"><geom name="top" type="box" size="0.3 0.3 0.05" mass="5"/></body>
  <body name="box" pos="0 0 0.35"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="2"/></body>
  <body name="ball" pos="1 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
</worldbody></mujoco>"""


def test_contact_filters_name_the_bodies_as_mujoco_also_a_world_welded_one(tmp_path):
    """A box resting on a table welded to the world (its geom on PhysX's static actor) and a ball on the floor:
    against=["table"] reads the box's weight m g, against=["world"] none for the box and the ball's for the
    ball, as MuJoCo (whose contacts name each geom's own body); within 1 % of m g."""
    path = tmp_path / "table.xml"
    path.write_text(TABLE)
    reads = {}
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(str(path)), 2, 0.002)
        on_table = b.bind_contact_forces(["box", "ball"], against=["table"])
        on_world = b.bind_contact_forces(["box", "ball"], against=["world"])
        b.step(np.zeros((2, 0)), 150)
        reads[name] = on_table.read()[:, :, 2], on_world.read()[:, :, 2]
    for name, (table, world) in reads.items():
        np.testing.assert_allclose(table, [[2 * 9.81, 0.0]] * 2, atol=0.0981 * 2, err_msg=name)
        np.testing.assert_allclose(world, [[0.0, 9.81]] * 2, atol=0.0981, err_msg=name)


PADDLE = """<mujoco><option timestep="0.002"/><worldbody>
  <geom name="floor" type="plane" size="3 3 0.1" friction="0.5 0.005 0.0001"/>
  <body name="paddle" mocap="true" pos="-0.3 0 0.1"><geom type="box" size="0.05 0.3 0.1" friction="0.5 0.005 0.0001"/>
  </body>
  <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1" friction="0.5 0.005 0.0001"/>
  </body></worldbody></mujoco>"""


def test_a_mocap_paddle_pushes_a_box_as_on_mujoco(tmp_path):
    """A mocap paddle (PhysX: a kinematic actor) written every 5 substeps 5 mm further (0.5 m/s) sweeps into
    a 1 kg box (friction 0.5): PhysX moves it by kinematic targets at that speed, so the box rides on its face
    at x_paddle + 0.15 (1e-3 m) with the paddle's velocity (1e-3 m/s), pushed by mu m g = 4.905 N (contact
    filter against the paddle, 1 %); the paddle touching the floor makes no contact (MuJoCo: both static).
    MuJoCo teleports the paddle at the first substep and its soft contact lets the face sink about 1 cm:
    within 0.02 m of it."""
    path = tmp_path / "paddle.xml"
    path.write_text(PADDLE)
    out = {}
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(str(path)), 1, 0.002)
        bind = b.bind_mocap_pose("paddle")
        push = b.bind_contact_forces(["box"], against=["paddle"])
        for k in range(100):
            bind.set(np.array([[-0.3 + 0.005 * (k + 1), 0.0, 0.1]]), np.array([[1.0, 0.0, 0.0, 0.0]]))
            b.step(np.zeros((1, 0)), 5)
        out[name] = b.get_qpos()[0, :3], b.get_qvel()[0, 0], push.read()[0, 0]
    (pos, vel, force), ref = out["sapien"], out["mujoco"][0]
    np.testing.assert_allclose(pos, [0.2 + 0.15, 0.0, 0.1], atol=1e-3)
    assert vel == pytest.approx(0.5, abs=1e-3)
    np.testing.assert_allclose(force, [0.5 * 9.81, 0.0, 0.0], atol=0.05)
    np.testing.assert_allclose(pos, ref, atol=0.02)
    b = create_backend("sapien", SceneCfg(str(path)), 1, 0.002)
    b.step(np.zeros((1, 0)), 5)  # the paddle rests its face on the floor: PhysX lists no such pair
    listed = [{type(c).__name__ for c in contact.bodies} for contact in b.sapien_scenes[0].physx_system.get_contacts()]
    assert {"PhysxRigidStaticComponent", "PhysxArticulationLinkComponent"} in listed  # the box on the floor
    assert {"PhysxRigidStaticComponent", "PhysxRigidDynamicComponent"} not in listed


MOCAP_CHILD = """<mujoco><worldbody><body name="hand" mocap="true" pos="0 0 1">
  <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
  <body name="finger" pos="0.1 0 -0.05" euler="0 0 30"><geom type="capsule" size="0.01 0.03" mass="0.1"/>{joint}</body>
  </body></worldbody></mujoco>"""


def test_a_mocap_bodys_welded_child_follows_it_and_a_jointed_one_is_refused(tmp_path):
    """A body welded to a mocap body is part of its kinematic actor: after a written pose (rotated 90 degrees
    about x) its world pose is MuJoCo's, before and after a step (1e-6). A joint below a mocap body is refused
    by name (no articulation hangs from a kinematic actor)."""
    path = tmp_path / "hand.xml"
    path.write_text(MOCAP_CHILD.format(joint=""))
    q = np.array([[np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]])
    reads = []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(str(path)), 1, 0.002)
        b.bind_mocap_pose("hand").set(np.array([[0.3, -0.2, 0.8]]), q)
        finger = b.get_body_ids(["finger"])
        before = b.get_body_pos_w(finger)[0, 0], b.get_body_quat_w(finger)[0, 0]
        b.step(np.zeros((1, 0)), 3)
        reads.append((*before, b.get_body_pos_w(finger)[0, 0], b.get_body_quat_w(finger)[0, 0]))
    for got, want in zip(reads[1], reads[0]):
        np.testing.assert_allclose(got, want, atol=1e-6)
    path.write_text(MOCAP_CHILD.format(joint='<joint type="hinge"/>'))
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("sapien", SceneCfg(str(path)), 1, 0.002)
    assert info.value.capability == "mocap_joint_child"


TENDON = """<mujoco><default><tendon {default}/></default><worldbody>
  <body name="a"><joint name="ja" type="hinge" axis="0 1 0"/>
    <inertial pos="0 0 -0.1" mass="1" diaginertia="1e-3 1e-3 1e-3"/>
  <body name="b" pos="0 0 -0.2"><joint name="jb" type="hinge" axis="0 1 0"/>
    <inertial pos="0 0 -0.1" mass="1" diaginertia="1e-3 1e-3 1e-3"/></body></body></worldbody>
  <tendon><fixed name="ab" {attrs}><joint joint="ja" coef="-1"/><joint joint="jb" coef="1"/></fixed></tendon>
</mujoco>"""


@pytest.mark.parametrize("default, attrs, acting", [
    ("", "", None),  # gymnasium humanoid's hip-knee tendons: a length only
    ("", 'stiffness="10"', "stiffness"), ('damping="1"', "", "damping"), ("", 'range="-1 1"', "limits"),
    ("", 'limited="true" range="-1 1"', "limits"), ("", 'frictionloss="0.1"', "frictionloss"),
])
def test_an_inert_fixed_tendon_is_read_and_an_acting_one_refused_by_name(tmp_path, default, attrs, acting):
    """A fixed tendon with no stiffness, damping, friction, armature or limits (default classes applied) changes
    nothing in MuJoCo: the scene builds and swings as MuJoCo's (1e-5 rad); one that acts is refused as fixed_tendon
    naming the tendon and what it does."""
    path = tmp_path / "t.xml"
    path.write_text(TENDON.format(default=default, attrs=attrs))
    if acting is None:
        out = []
        for name in ("mujoco", "sapien"):
            b = create_backend(name, SceneCfg(model_file=str(path)), 1, 0.002)
            b.set_state(np.array([0]), np.array([[0.5, -0.3]]), np.zeros((1, 2)))
            b.step(np.zeros((1, 0)), 100)
            out.append(b.get_qpos()[0])
        np.testing.assert_allclose(out[1], out[0], atol=1e-5)
        return
    with pytest.raises(UnsupportedCapabilityError, match=f"ab: {acting}") as info:
        create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    assert info.value.capability == "fixed_tendon"


FRAME = """<mujoco><worldbody><body name="arm" pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0"/>
  <inertial pos="0.2 0 0" mass="1" diaginertia="1e-3 1e-3 1e-3"/>
  <body name="camera" pos="0.3 0 0.05" euler="0 0 20"/></body></worldbody></mujoco>"""


def test_a_massless_frame_body_is_a_light_link_that_follows_its_parent(tmp_path):
    """A body without mass or inertia welded to a moving one (google_barkour_vb's camera mounts; MuJoCo merges
    it into its parent) is a link of CHAIN_LINK_MASS of the model's mass: the arm swings as MuJoCo's (1e-5 rad
    over 0.3 s) and the frame's world pose is MuJoCo's (1e-5). A model whose moving bodies have no mass at all
    is still refused."""
    path = tmp_path / "frame.xml"
    path.write_text(FRAME)
    reads = []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(model_file=str(path)), 1, 0.002)
        b.step(np.zeros((1, 0)), 150)
        cam = b.get_body_ids(["camera"])
        reads.append((b.get_qpos()[0], b.get_body_pos_w(cam)[0, 0], b.get_body_quat_w(cam)[0, 0]))
    for got, want in zip(reads[1], reads[0]):
        np.testing.assert_allclose(got, want, atol=1e-5)
    assert abs(reads[0][0][0]) > 0.5  # it swung
    path.write_text(FRAME.replace('<inertial pos="0.2 0 0" mass="1" diaginertia="1e-3 1e-3 1e-3"/>', ""))
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    assert info.value.capability == "massless_body"


def test_many_excluded_pairs_share_ignore_bits(tmp_path):
    """Nine finger bodies on a base, every pair of them excluded (36 body pairs, more than PhysX's 32 ignore
    bits one per pair; pal_talos has 33): the pairs are grouped, one bit for the nine, and the scene builds with
    exactly MuJoCo's collision pairs (check_scene compares them)."""
    from unisim_sapien._build import ignore_bits

    fingers = "".join(f'<body name="f{i}" pos="{0.05 * i} 0 0"><joint type="hinge" axis="0 1 0"/>'
                      f'<geom type="sphere" size="0.04" mass="0.1"/></body>' for i in range(9))
    excludes = "".join(f'<exclude body1="f{i}" body2="f{j}"/>' for i in range(9) for j in range(i + 1, 9))
    path = tmp_path / "hand.xml"
    path.write_text(f"""<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="palm" pos="0 0 0.5"><freejoint/><geom type="box" size="0.3 0.05 0.01" mass="1"/>{fingers}</body>
      </worldbody><contact>{excludes}</contact></mujoco>""")
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    bits = ignore_bits(b._lite)
    assert len({int(x) for x in bits[2:]}) == 1 and bin(int(bits[2])).count("1") == 1  # one bit, all nine fingers


SITE_MOTOR = """<mujoco><option timestep="0.002" gravity="0 0 -9.81"/><worldbody>
  <body name="box" pos="0 0 1"><freejoint/><inertial pos="0.02 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
    <site name="thrust" pos="0.1 0.05 0" euler="20 10 0"/></body></worldbody>
  <actuator><motor name="t" site="thrust" gear="0 0 1 0 0 -0.05" ctrlrange="0 15"/>
    <motor name="m" site="thrust" gear="0 0 0 0.1 0 0" ctrlrange="-1 1"/></actuator></mujoco>"""


def test_site_motors_are_mujocos_wrench_at_the_site(tmp_path):
    """Two motors on a tilted, off-centre site (a drone's thrust with a yaw moment, and a roll moment; a ctrl past
    the ctrlrange clamped as MuJoCo clamps it): the wrench along gear in the site's frame, at the site. One
    substep from rest gives MuJoCo's velocities within 1e-5 (the wrench itself); over 0.3 s, the box tumbling at
    ~7 rad/s, within 2e-3 of MuJoCo's qpos (measured 5.2e-4: the two engines' rigid-body integration)."""
    path = tmp_path / "site.xml"
    path.write_text(SITE_MOTOR)
    first, out = [], []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(model_file=str(path)), 1, 0.002)
        b.step(np.array([[20.0, 0.5]]), 1)
        first.append(b.get_qvel()[0])
        b.step(np.array([[20.0, 0.5]]), 149)
        out.append(b.get_qpos()[0])
    assert np.abs(first[0]).min() > 1e-4  # every velocity component moves
    np.testing.assert_allclose(first[1], first[0], atol=1e-5)
    assert np.abs(out[0][:3] - [0.0, 0.0, 1.0]).max() > 0.2
    np.testing.assert_allclose(out[1], out[0], atol=2e-3)


def test_an_ellipsoid_collides_as_a_hull_within_its_stated_tolerance(tmp_path):
    """PhysX has no ellipsoid: a flat one (radii 0.1, 0.2, 0.05) rests on the floor at its z radius within the
    stated 2.4 %, with a SapienModellingWarning naming the geom."""
    from unisim_sapien import SapienModellingWarning

    path = _scene(tmp_path, '<body pos="0 0 0.2"><freejoint/><geom name="egg" type="ellipsoid" '
                            'size="0.1 0.2 0.05" mass="1"/></body>')
    with pytest.warns(SapienModellingWarning, match="egg"):
        b = create_backend("sapien", SceneCfg(model_file=path), 1, 0.002)
    b.step(np.zeros((1, 0)), 400)
    assert b.get_qpos()[0, 2] == pytest.approx(0.05, rel=0.024)
