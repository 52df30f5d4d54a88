"""The shared renderer (``unisim_mujoco._render``): the pixels of raw ``mujoco.Renderer``, the batch
layout, the mesh simplification of quality "fast", mocap poses from the contract, the GL platform
choice and its errors."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from mujoco_testutil import QUADRUPED, kit

from unisim_core import CameraCfg
from unisim_core.contract.errors import InvalidInputError, OptionalDependencyError
from unisim_mujoco import _gl
from unisim_mujoco._render import QUALITY_ENV, VideoRenderer, gl_context, grid_offsets, render_quality, simplify_meshes

CAMERA = CameraCfg(distance=1.5, azimuth=120.0, elevation=-25.0, lookat=(0.0, 0.0, 0.25))
GO1 = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "menagerie" / "unitree_go1" / "scene.xml"


def _posed_qpos(m: mujoco.MjModel, n: int) -> np.ndarray:
    """A raised, turned quadruped with bent legs, shifted along x per env."""
    qpos = np.tile(m.qpos0, (n, 1))
    qpos[:, 0] = 0.3 * np.arange(n)
    qpos[:, 2] = 0.45
    qpos[:, 3:7] = [np.cos(0.4), 0.2 * np.sin(0.4), 0.3 * np.sin(0.4), np.sqrt(0.87) * np.sin(0.4)]
    qpos[:, 7:] = np.linspace(-0.6, 0.6, m.nq - 7)
    return qpos


def _raw_frame(model: mujoco.MjModel, qpos: np.ndarray, flags: np.ndarray, width: int, height: int,
               camera: CameraCfg = CAMERA) -> np.ndarray:
    """What ``mujoco.Renderer`` draws of ``qpos`` (after ``mj_forward``) with the same camera and flags."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    cam = mujoco.MjvCamera()
    cam.distance, cam.azimuth, cam.elevation = camera.distance, camera.azimuth, camera.elevation
    cam.lookat[:] = camera.lookat
    with mujoco.Renderer(model, height, width) as raw:
        raw.update_scene(data, cam)
        raw.scene.flags[:] = flags
        return raw.render()


@pytest.mark.parametrize("quality", ["full", "fast"])
def test_frame_is_raw_mujocos_frame_of_the_same_state(monkeypatch, quality):
    """One env: the renderer's frame equals mujoco.Renderer's of the same qpos on the same model and
    render settings, pixel for pixel (kinematics only is all a frame needs)."""
    monkeypatch.setenv(QUALITY_ENV, quality)
    r = VideoRenderer(str(QUADRUPED), 1, 96, 72, 1.0, "grid", CAMERA)
    try:
        assert r.quality == quality and r.platform in ("egl", "osmesa", "glfw")
        qpos = _posed_qpos(r.model, 1)
        frame = r.draw(qpos)
        want = _raw_frame(r.model, qpos[0], np.array(r._scene.flags), 96, 72)
        assert frame.shape == (72, 96, 3) and frame.dtype == np.uint8
        np.testing.assert_array_equal(frame, want)
        assert bool(r._scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW]) == (quality == "full")
    finally:
        r.close()


def test_batch_layout_grid_and_none():
    """offset_mode="none": two envs in one state draw exactly the one-env frame (env 1 on top of env 0);
    "grid" moves env 1 to its own cell (grid_offsets: env 0 at the origin, spacing m apart)."""
    np.testing.assert_allclose(grid_offsets(4, 2.0, "grid"), [[0, 0, 0], [0, 2, 0], [2, 0, 0], [2, 2, 0]])
    np.testing.assert_array_equal(grid_offsets(3, 2.0, "none"), np.zeros((3, 3)))
    frames = {}
    for n, mode in ((1, "none"), (2, "none"), (2, "grid")):
        r = VideoRenderer(str(QUADRUPED), n, 96, 72, 1.0, mode, CAMERA)
        try:
            assert r.num_drawn == n
            frames[n, mode] = r.draw(np.tile(_posed_qpos(r.model, 1), (n, 1)))
        finally:
            r.close()
    np.testing.assert_array_equal(frames[2, "none"], frames[1, "none"])
    assert np.abs(frames[2, "grid"].astype(int) - frames[1, "none"]).max(axis=2).astype(bool).mean() > 0.01


def _midpoint(verts: list, cache: dict, a: int, b: int) -> int:
    key = (min(a, b), max(a, b))
    if key not in cache:
        verts.append((verts[a] + verts[b]) / 2)
        cache[key] = len(verts) - 1
    return cache[key]


def _sphere_model(subdiv: int = 3) -> mujoco.MjModel:
    """A unit icosphere mesh (radius 0.1 m) subdivided ``subdiv`` times."""
    t = (1 + 5 ** 0.5) / 2
    verts = [np.array(v, float) for v in ((-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
                                          (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1))]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
             (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(subdiv):
        cache, new = {}, []
        for a, b, c in faces:
            ab, bc, ca = (_midpoint(verts, cache, *e) for e in ((a, b), (b, c), (c, a)))
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    v = np.array([x / np.linalg.norm(x) * 0.1 for x in verts])
    spec = mujoco.MjSpec()
    spec.add_mesh(name="ball", uservert=v.ravel().tolist(), userface=np.array(faces).ravel().tolist())
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="ball")
    return spec.compile()


def test_simplify_meshes_merges_vertices_closer_than_a_cell():
    """Known answers on a 1280-face icosphere of radius 0.1 m about its centre (edges ~1.5 cm): a 1 mm
    cell keeps every face; with a 1 m cell the mesh lies in the 8 cells around the origin, so at most
    8 vertices remain; a 3 cm cell keeps fewer faces. Every face kept has three vertices in three
    different cells, none twice, all of them original vertices (on the sphere)."""
    sizes, used = {}, {}
    for cell in (1e-3, 1.0, 0.03):
        m = _sphere_model()
        before = m.mesh_facenum[0]
        simplify_meshes(m, cell)
        faces = m.mesh_face[:m.mesh_facenum[0]]
        sizes[cell], used[cell] = len(faces), len(np.unique(faces))
        cubes = np.floor(m.mesh_vert[faces] / cell).astype(int)
        assert all(len({tuple(c) for c in f}) == 3 for f in cubes)
        assert len({tuple(sorted(f)) for f in faces}) == len(faces)
        np.testing.assert_allclose(np.linalg.norm(m.mesh_vert[faces.ravel()], axis=1), 0.1, rtol=1e-5)
    assert before == 1280 and sizes[1e-3] == 1280 and used[1e-3] == 642
    assert 0 < used[1.0] <= 8 and 0 < sizes[0.03] < 400


def test_fast_quality_meshes_are_invisible_at_one_pixel(monkeypatch):
    """Quality "fast" merges mesh vertices within one pixel at the camera's distance (8 mm here): on a
    94k-face corpus robot (Unitree Go1) it draws 5.5k faces, and at most 1 % of the pixels differ by
    more than 24 levels from the unsimplified model drawn with the same flags (measured: 0.46 %)."""
    if not GO1.is_file():
        pytest.skip(f"the Menagerie corpus is not at {GO1.parents[1]} (../shared/corpus/menagerie)")
    monkeypatch.setenv(QUALITY_ENV, "fast")
    camera = CameraCfg(distance=1.2, lookat=(0.0, 0.0, 0.2))
    r = VideoRenderer(str(GO1), 1, 160, 120, 1.0, "grid", camera)
    try:
        qpos = r.model.key_qpos[0] if r.model.nkey else r.model.qpos0
        frame, flags = r.draw(qpos[None]), np.array(r._scene.flags)
    finally:
        r.close()
    full = mujoco.MjModel.from_xml_path(str(GO1))
    full.vis.quality.offsamples = 0
    assert r.model.mesh_facenum.sum() * 6 < full.mesh_facenum.sum() == 93959
    want = _raw_frame(full, qpos, flags, 160, 120, camera)
    assert (np.abs(frame.astype(int) - want).max(axis=2) > 24).mean() <= 0.01


def test_mocap_bodies_are_drawn_where_the_contract_says(make, tmp_path):
    """A mocap body moved through bind_mocap_pose is drawn at its new pose: the backend's frame equals
    the renderer's frame of the same qpos and mocap pose, and differs from the model pose's frame."""
    xml = tmp_path / "mocap.xml"
    xml.write_text("""<mujoco><worldbody><light pos="0 0 3" dir="0 0 -1"/>
      <body name="target" mocap="true" pos="0 0 1"><geom type="box" size="0.2 0.1 0.05" rgba="1 0 0 1"/></body>
      <body name="ball" pos="0 0 0.5"><freejoint/><geom size="0.1" mass="1" contype="0" conaffinity="0"/></body>
    </worldbody></mujoco>""")
    sim = make(xml, num_envs=2)
    camera = CameraCfg(distance=2.5, lookat=(0.0, 0.0, 0.8))
    sim.init_renderer(0.0, offset_mode="none", capture=True, width=96, height=72, camera_kwargs=camera)
    pos, quat = np.array([[0.3, -0.2, 1.1]]), np.array([[np.cos(0.4), 0, 0, np.sin(0.4)]])
    sim.bind_mocap_pose("target").set(pos, quat, env_ids=np.array([0]))
    frame = sim.capture_video_frame()
    r = VideoRenderer(str(xml), 2, 96, 72, 0.0, "none", camera)
    try:
        assert r.mocap_bodies == ("target",)
        qpos = sim.get_qpos()
        moved = np.array([[[0.3, -0.2, 1.1]], [[0.0, 0.0, 1.0]]]), np.array([quat, [[1.0, 0, 0, 0]]])
        np.testing.assert_array_equal(frame, r.draw(qpos, *moved))
        assert not np.array_equal(frame, r.draw(qpos))
    finally:
        r.close()


def test_visual_model_with_other_joints_is_refused(make):
    sim = make(QUADRUPED, scene_kwargs={"visual_model_file": str(kit("free_body.xml"))})
    with pytest.raises(InvalidInputError, match=r"scene.visual_model_file: .*nq=7.*nq=19"):
        sim.init_renderer(capture=True, width=32, height=24)
    assert sim._video is None


def test_a_failed_init_renderer_keeps_the_renderer_made_before(make):
    sim = make(QUADRUPED)
    sim.init_renderer(capture=True, width=32, height=24)
    before, frame = sim._video, sim.capture_video_frame()
    with pytest.raises(InvalidInputError, match="camera_kwargs.track_body: unknown body 'nope'"):
        sim.init_renderer(capture=True, width=32, height=24, camera_kwargs={"track_body": "nope"})
    assert sim._video is before
    np.testing.assert_array_equal(sim.capture_video_frame(), frame)


def test_render_quality_auto_follows_the_rasterizer(monkeypatch):
    monkeypatch.delenv(QUALITY_ENV, raising=False)
    assert render_quality("llvmpipe (LLVM 15.0.6, 256 bits)") == "fast"
    assert render_quality("NVIDIA H200/PCIe/SSE2") == "full"
    monkeypatch.setenv(QUALITY_ENV, "full")
    assert render_quality("llvmpipe (LLVM 15.0.6, 256 bits)") == "full"
    monkeypatch.setenv(QUALITY_ENV, "best")
    with pytest.raises(InvalidInputError, match="UNISIM_RENDER_QUALITY: expected 'auto', 'full' or 'fast', got 'best'"):
        render_quality("llvmpipe")


@pytest.mark.parametrize("set_by_user, display, egl, osmesa, want", [
    ("osmesa", None, 1, False, "osmesa"),  # the user's choice is kept, even where EGL exists
    (None, None, 1, True, "egl"),
    (None, None, 0, True, "osmesa"),  # no EGL device: the OSMesa fallback
    (None, None, 0, False, None),  # neither: left unset, the renderer names both packages
    (None, ":0", 1, True, None),  # a display: MuJoCo's own default (GLFW)
])
def test_gl_platform_choice(monkeypatch, set_by_user, display, egl, osmesa, want):
    monkeypatch.setattr(_gl, "egl_device_count", lambda: egl)
    monkeypatch.setattr(_gl, "osmesa_loads", lambda: osmesa)
    environ = {k: v for k, v in (("MUJOCO_GL", set_by_user), ("DISPLAY", display)) if v is not None}
    assert _gl.choose_platform(environ, "linux") == (want or set_by_user)
    assert environ.get("MUJOCO_GL") == (want or set_by_user)
    assert _gl.choose_platform({}, "darwin") is None


def test_gl_platform_errors_name_the_variable(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "vulkan")
    with pytest.raises(InvalidInputError, match="MUJOCO_GL: expected egl, osmesa or glfw, got 'vulkan'"):
        gl_context(8, 8)
    monkeypatch.setenv("MUJOCO_GL", "disable")
    with pytest.raises(OptionalDependencyError, match="MUJOCO_GL='disable' disables MuJoCo's rendering"):
        gl_context(8, 8)


def test_this_machine_renders_on_egl():
    """The project's machines (and CI) have Mesa's EGL: the headless default is EGL, not OSMesa."""
    assert _gl.egl_device_count() >= 1 and _gl.headless_default() == "egl"
