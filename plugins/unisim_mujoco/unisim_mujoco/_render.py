"""Offscreen frames of a batch: several envs composed into one MuJoCo scene.

Env 0 is drawn with ``mjv_updateScene``; envs 1..k-1 (k = min(num_envs,
``MAX_RENDER_ENVS``)) add their dynamic geoms with ``mjv_addGeoms``. With
``offset_mode="grid"`` env i is shifted to its cell of a square grid
``spacing`` m apart (display only); with ``"none"`` every env is drawn where it
is. Geoms use the shared model (per-env randomized sizes are not shown).
Needs an OpenGL context: headless Linux uses ``MUJOCO_GL=egl`` (set by
``unisim_mujoco`` when no display is present).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from unisim_core.config import CameraCfg
from unisim_core.errors import EngineError, InvalidInputError

__all__ = ["BatchRenderer", "MAX_RENDER_ENVS"]

#: Most envs drawn in one frame.
MAX_RENDER_ENVS = 16


class BatchRenderer:
    def __init__(self, model: mujoco.MjModel, num_envs: int, width: int, height: int, spacing: float,
                 offset_mode: str, camera: CameraCfg) -> None:
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, height)
        self.model = model
        self.count = min(num_envs, MAX_RENDER_ENVS)
        try:
            max_geom = max(1000, 2 * model.ngeom * self.count + 100)
            self.renderer = mujoco.Renderer(model, height, width, max_geom=max_geom)
        except Exception as exc:  # noqa: BLE001 - GL context errors come in many types
            raise EngineError(f"MuJoCo could not create an offscreen renderer ({exc}); on a headless machine "
                              "set MUJOCO_GL=egl (or osmesa) before importing mujoco") from exc
        self.datas = [mujoco.MjData(model) for _ in range(self.count)]
        side = math.ceil(math.sqrt(self.count))
        idx = np.arange(self.count)
        self.offsets = np.zeros((self.count, 3))
        if offset_mode == "grid":
            self.offsets[:, 0] = (idx // side - (side - 1) / 2) * spacing
            self.offsets[:, 1] = (idx % side - (side - 1) / 2) * spacing
            self.offsets -= self.offsets[0]  # env 0 stays where it is
        self.cam = mujoco.MjvCamera()
        self.cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.cam.distance = camera.distance
        self.cam.azimuth = camera.azimuth
        self.cam.elevation = camera.elevation
        self.track = -1
        if camera.track_body is not None:
            self.track = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, camera.track_body)
            if self.track < 0:
                raise InvalidInputError(f"camera_kwargs.track_body: unknown body {camera.track_body!r}")
        self.lookat = None if camera.lookat is None else np.array(camera.lookat)
        self.opt = mujoco.MjvOption()
        self.pert = mujoco.MjvPerturb()

    def capture(self, batch) -> np.ndarray:
        for i, d in enumerate(self.datas):
            batch.get_data(i, d)  # the state; the poses drawn are computed here
            mujoco.mj_kinematics(self.model, d)
        d0 = self.datas[0]
        if self.lookat is not None:
            self.cam.lookat[:] = self.lookat
        elif self.track >= 0:
            self.cam.lookat[:] = d0.xpos[self.track]
        else:
            self.cam.lookat[:] = self.model.stat.center + self.offsets.mean(axis=0)
        scn = self.renderer.scene
        self.renderer.update_scene(d0, self.cam, self.opt)
        for i in range(1, self.count):
            start = scn.ngeom
            mujoco.mjv_addGeoms(self.model, self.datas[i], self.opt, self.pert,
                                int(mujoco.mjtCatBit.mjCAT_DYNAMIC), scn)
            for g in range(start, scn.ngeom):
                scn.geoms[g].pos[:] = scn.geoms[g].pos + self.offsets[i]
        return self.renderer.render().copy()

    def close(self) -> None:
        self.renderer.close()
