"""Offscreen video frames of any backend's state, drawn by MuJoCo's renderer.

Every backend reports ``qpos`` in MuJoCo's layout, so MuJoCo can draw any of them: the scene's
MJCF is compiled once into this renderer's own ``MjModel``; each frame writes every drawn env's
``qpos`` (and mocap body poses) into an ``MjData``, runs kinematics only (``mj_kinematics``,
``mj_comPos``, ``mj_camlight``, ``mj_tendon``) and renders. The core reaches this class through
the ``unisim_renderer`` hook (``unisim_core.contract._playback``), and reads the state through the contract.

Layout: env 0 is drawn with ``mjv_updateScene``; envs 1..k-1 (k = min(num_envs,
``MAX_RENDER_ENVS``)) add their dynamic geoms with ``mjv_addGeoms``. With ``offset_mode="grid"`` env
i is shifted to its cell of a square grid ``spacing`` m apart (display only, env 0 stays where it
is); with ``"none"`` every env is drawn where it is. Geoms use the model's sizes and colours
(per-env randomized ones are not shown).

Speed: the GL context, MuJoCo's render context (meshes and textures uploaded once), the scene and
the pixel buffer are made once per renderer; a frame costs the GL draw, a read-back and one copy.
On a software rasterizer (Mesa's llvmpipe, the CPU path of EGL and OSMesa) the draw is the whole
cost and grows with triangles × passes: quality ``"fast"`` (the default there, see
:func:`render_quality`) turns off shadows (a 4096² depth pass plus a lit pass per light),
reflections (the scene drawn again, mirrored) and multisampling, and merges mesh vertices closer
than one pixel at the camera's distance (vertex clustering, :func:`simplify_meshes`). Quality
``"full"`` draws the model's own visual settings, as ``mujoco.Renderer`` does.
"""

from __future__ import annotations

import math
import os

import mujoco
import numpy as np

from unisim_core.contract.config import CameraCfg
from unisim_core.contract.errors import EngineError, InvalidInputError, OptionalDependencyError

from ._gl import requested_platform

__all__ = ["VideoRenderer", "MAX_RENDER_ENVS", "QUALITY_ENV", "render_quality", "simplify_meshes",
           "grid_offsets", "gl_context"]

#: Most envs drawn in one frame.
MAX_RENDER_ENVS = 16
#: Environment variable choosing the render quality: ``auto`` (default), ``full`` or ``fast``.
QUALITY_ENV = "UNISIM_RENDER_QUALITY"
_SOFTWARE_GL = ("llvmpipe", "softpipe", "swrast", "swiftshader")
_GLFW_VALUES = ("glfw", "enable", "enabled", "on", "true", "1", "glx")
_DISABLED_VALUES = ("disable", "disabled", "off", "false", "0")
_GL_HINT = ("install Mesa's EGL (Debian/Ubuntu: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri) or "
            "OSMesa (apt-get install libosmesa6), or set MUJOCO_GL to a platform that works here")


def gl_context(width: int, height: int):
    """``(platform, context)``: an OpenGL context current on this thread, on ``MUJOCO_GL``'s platform
    (see ``unisim_mujoco._gl``). Raises ``OptionalDependencyError`` naming the missing library."""
    platform = requested_platform()
    if platform in _DISABLED_VALUES:
        raise OptionalDependencyError(f"MUJOCO_GL={os.environ.get('MUJOCO_GL')!r} disables MuJoCo's rendering; "
                                      f"unset it or set egl, osmesa or glfw to capture frames")
    try:
        if platform == "egl":
            from mujoco.egl import GLContext
        elif platform == "osmesa":
            from mujoco.osmesa import GLContext
        elif platform in _GLFW_VALUES:
            from mujoco.glfw import GLContext
        else:
            raise InvalidInputError(f"MUJOCO_GL: expected egl, osmesa or glfw, got {os.environ.get('MUJOCO_GL')!r}")
        ctx = GLContext(width, height)
        ctx.make_current()
    except (InvalidInputError, OptionalDependencyError):
        raise
    except Exception as exc:  # noqa: BLE001 - GL loaders fail with ImportError, OSError, RuntimeError, GLError...
        raise OptionalDependencyError(
            f"MuJoCo could not create an offscreen OpenGL context on platform {platform!r} "
            f"({type(exc).__name__}: {exc}); {_GL_HINT}") from exc
    return platform, ctx


def render_quality(gl_renderer: str, requested: str | None = None) -> str:
    """``"full"`` or ``"fast"``: ``UNISIM_RENDER_QUALITY`` when set, else ``"fast"`` on a software
    rasterizer (``gl_renderer``, OpenGL's ``GL_RENDERER`` string, names llvmpipe, softpipe...)."""
    value = (os.environ.get(QUALITY_ENV, "") if requested is None else requested).strip().lower() or "auto"
    if value not in ("auto", "full", "fast"):
        raise InvalidInputError(f"{QUALITY_ENV}: expected 'auto', 'full' or 'fast', got {value!r}")
    if value != "auto":
        return value
    return "fast" if any(s in gl_renderer.lower() for s in _SOFTWARE_GL) else "full"


def simplify_meshes(model: mujoco.MjModel, cell: float) -> None:
    """Merge each mesh's vertices that share a ``cell``-sized cube (m, in the mesh frame): faces keep
    the first vertex of each cube, faces that collapse or repeat are dropped, in place (only faces
    are rewritten; normals and texture coordinates keep their per-corner indices). Draws only:
    call before the render context is made."""
    for i in range(model.nmesh):
        va, vn = model.mesh_vertadr[i], model.mesh_vertnum[i]
        fa, fn = model.mesh_faceadr[i], model.mesh_facenum[i]
        if fn == 0:
            continue
        cubes = np.floor(model.mesh_vert[va:va + vn] / cell).astype(np.int64)
        _, first, inverse = np.unique(cubes, axis=0, return_index=True, return_inverse=True)
        faces = first[inverse.ravel()][model.mesh_face[fa:fa + fn]]
        a, b, c = faces.T
        alive = np.nonzero((a != b) & (b != c) & (a != c))[0]
        _, unique = np.unique(np.sort(faces[alive], axis=1), axis=0, return_index=True)
        keep = alive[np.sort(unique)]
        k = len(keep)
        for table in (model.mesh_facenormal, model.mesh_facetexcoord):
            if table.shape[0]:
                table[fa:fa + k] = table[fa:fa + fn][keep]
        model.mesh_face[fa:fa + k] = faces[keep]
        model.mesh_facenum[i] = k


def grid_offsets(count: int, spacing: float, offset_mode: str) -> np.ndarray:
    """``(count, 3)`` display offsets, m: a square grid ``spacing`` apart with env 0 at zero, or zeros."""
    offsets = np.zeros((count, 3))
    if offset_mode == "grid":
        side = math.ceil(math.sqrt(count))
        idx = np.arange(count)
        offsets[:, 0] = (idx // side - (side - 1) / 2) * spacing
        offsets[:, 1] = (idx % side - (side - 1) / 2) * spacing
        offsets -= offsets[0]
    return offsets


def _load(model_file: str) -> mujoco.MjModel:
    try:
        return mujoco.MjModel.from_xml_path(model_file)
    except (ValueError, mujoco.FatalError) as exc:
        raise EngineError(f"MuJoCo's renderer could not load {model_file!r}: {exc}") from exc


class VideoRenderer:
    """Frames of ``num_envs`` envs of the MJCF ``model_file`` (the ``unisim_renderer`` hook's product).

    - ``num_drawn``: envs drawn per frame (the first ones), ``nq``: the qpos width it expects.
    - ``mocap_bodies``: names of the named mocap bodies, in mocap order (unnamed ones stay at their
      model pose).
    - ``draw(qpos, mocap_pos, mocap_quat)``: ``qpos (num_drawn, nq)``, mocap poses
      ``(num_drawn, len(mocap_bodies), 3/4)`` (world, wxyz) or ``None`` (their model poses) →
      ``(height, width, 3)`` uint8 RGB.
    - ``platform`` (``egl``, ``osmesa``, ``glfw``), ``gl_renderer`` (OpenGL's name of the
      rasterizer), ``quality`` (``full`` or ``fast``).
    """

    def __init__(self, model_file: str, num_envs: int, width: int, height: int, spacing: float,
                 offset_mode: str, camera: CameraCfg) -> None:
        model = _load(model_file)
        self.model = model
        self.nq = int(model.nq)
        self.num_drawn = min(int(num_envs), MAX_RENDER_ENVS)
        self.track = -1
        if camera.track_body is not None:
            self.track = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, camera.track_body)
            if self.track < 0:
                raise InvalidInputError(f"camera_kwargs.track_body: unknown body {camera.track_body!r}")
        mocap = [(int(model.body_mocapid[b]), b, mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or "")
                 for b in range(model.nbody) if model.body_mocapid[b] >= 0]
        mocap = sorted((m, b, name) for m, b, name in mocap if name)
        self.mocap_bodies = tuple(name for _, _, name in mocap)
        self._mocap_ids = np.array([m for m, _, _ in mocap], dtype=np.int64)
        bodies = [b for _, b, _ in mocap]
        self._mocap_pose0 = model.body_pos[bodies].copy(), model.body_quat[bodies].copy()

        self.platform, self._gl = gl_context(width, height)
        self._mjr = None
        try:
            from OpenGL import GL

            self.gl_renderer = (GL.glGetString(GL.GL_RENDERER) or b"").decode(errors="replace")
            self.quality = render_quality(self.gl_renderer)
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, height)
            if self.quality == "fast":
                model.vis.quality.offsamples = 0
                model.vis.quality.shadowsize = 64  # shadows are off: no 4096² depth texture
                pixel = 2.0 * camera.distance * math.tan(math.radians(model.vis.global_.fovy) / 2) / height
                simplify_meshes(model, pixel)
            self._mjr = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._mjr)
        except BaseException:
            self.close()
            raise
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._rgb = np.empty((height, width, 3), dtype=np.uint8)
        self._scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom * self.num_drawn + 100))
        if self.quality == "fast":
            self._scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            self._scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        self.datas = [mujoco.MjData(model) for _ in range(self.num_drawn)]
        self.offsets = grid_offsets(self.num_drawn, spacing, offset_mode)
        self.cam = mujoco.MjvCamera()
        self.cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.cam.distance = camera.distance
        self.cam.azimuth = camera.azimuth
        self.cam.elevation = camera.elevation
        self.lookat = None if camera.lookat is None else np.array(camera.lookat)
        self.opt = mujoco.MjvOption()
        self.pert = mujoco.MjvPerturb()
        self._dynamic = int(mujoco.mjtCatBit.mjCAT_DYNAMIC)
        self._all = int(mujoco.mjtCatBit.mjCAT_ALL)

    def draw(self, qpos: np.ndarray, mocap_pos: np.ndarray | None = None,
             mocap_quat: np.ndarray | None = None) -> np.ndarray:
        """The frame of these states (see the class docstring for shapes)."""
        m = self.model
        for i, d in enumerate(self.datas):
            d.qpos[:] = qpos[i]
            if self._mocap_ids.size:
                pos, quat = (mocap_pos[i], mocap_quat[i]) if mocap_pos is not None else self._mocap_pose0
                d.mocap_pos[self._mocap_ids] = pos
                d.mocap_quat[self._mocap_ids] = quat
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_camlight(m, d)
            if m.ntendon:
                mujoco.mj_tendon(m, d)
        d0 = self.datas[0]
        if self.lookat is not None:
            self.cam.lookat[:] = self.lookat
        elif self.track >= 0:
            self.cam.lookat[:] = d0.xpos[self.track]
        else:
            self.cam.lookat[:] = m.stat.center + self.offsets.mean(axis=0)
        scn = self._scene
        mujoco.mjv_updateScene(m, d0, self.opt, self.pert, self.cam, self._all, scn)
        for i in range(1, self.num_drawn):
            start = scn.ngeom
            mujoco.mjv_addGeoms(m, self.datas[i], self.opt, self.pert, self._dynamic, scn)
            for g in range(start, scn.ngeom):
                scn.geoms[g].pos[:] += self.offsets[i]
        self._gl.make_current()
        mujoco.mjr_render(self._rect, scn, self._mjr)
        mujoco.mjr_readPixels(self._rgb, None, self._rect, self._mjr)
        return self._rgb[::-1].copy()  # OpenGL's rows run bottom-up

    def close(self) -> None:
        """Free the render context and the GL context (idempotent)."""
        gl, self._gl = getattr(self, "_gl", None), None
        if gl is None:
            return
        try:
            gl.make_current()
            if self._mjr is not None:
                self._mjr.free()
                self._mjr = None
        finally:
            gl.free()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the GL libraries may be gone
            pass
