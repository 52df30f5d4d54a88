"""Rendering and offline playback of the contract.

Mixed into :class:`~unisim_core.contract.backend.SimBackend`: validates the public arguments, then
calls the backend's rendering primitives (``_init_renderer``, ``_render``, ``_capture_frame``).

Their default is one renderer for every backend: every backend reports ``qpos`` in MuJoCo's
layout, so a plugin implementing the ``unisim_renderer`` hook (unisim-mujoco: MuJoCo's renderer)
draws the scene's MJCF (``scene.visual_model_file`` when set) from the contract's state,
``get_qpos()`` and the world poses of the mocap bodies. The core imports no renderer: without
such a plugin, capturing a frame raises ``OptionalDependencyError`` naming what to install.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import BackendPlayRenderPlan, CameraCfg
from unisim_core.contract.errors import InvalidInputError, OptionalDependencyError
from unisim_core.contract.validation import check_int

__all__ = ["Playback", "write_video", "video_renderer", "RENDERER_HINT"]

#: What to install for frames when no plugin offers a renderer.
RENDERER_HINT = "pip install 'unisim-mujoco[video]'"


def video_renderer() -> Callable[..., Any]:
    """``make(model_file, num_envs, width, height, spacing, offset_mode, camera) -> renderer`` of the
    first installed plugin (by backend name) implementing the ``unisim_renderer`` hook (see
    :mod:`unisim_core.contract.hooks`). ``OptionalDependencyError`` when none is installed."""
    from unisim_core.contract.registry import list_backends, plugin_hook

    for record in list_backends():
        if record.status == "ok":
            make = plugin_hook(record.name, "unisim_renderer")
            if make is not None:
                return make
    raise OptionalDependencyError(f"video frames need a renderer plugin and none is installed: {RENDERER_HINT} "
                                  f"(MuJoCo's renderer draws the state of any backend)")


class Playback:
    """``init_renderer``, ``render``, ``capture_video_frame`` and ``run_playback``, and the default
    rendering primitives (the shared renderer of the ``unisim_renderer`` hook)."""

    #: The shared renderer made by the default ``_init_renderer`` (``None``: not made).
    _video: Any = None
    #: Contract body ids of the renderer's mocap bodies (``None``: the scene has none).
    _video_mocap: np.ndarray | None = None

    def init_renderer(self, spacing: float = 1.0, *, offset_mode: str = "grid", headless: bool = False,
                      capture: bool = False, width: int = 1280, height: int = 720,
                      camera_kwargs: CameraCfg | Mapping[str, Any] | None = None) -> None:
        """Create the renderer. ``capture=True`` enables ``capture_video_frame``."""
        needed = Capability.VIDEO_CAPTURE if capture else Capability.RENDER
        self._require(needed)
        camera = CameraCfg.coerce(camera_kwargs)
        if offset_mode not in ("grid", "none"):
            raise InvalidInputError(f"offset_mode: expected 'grid' or 'none', got {offset_mode!r}")
        if isinstance(spacing, bool) or not isinstance(spacing, int | float) or not np.isfinite(spacing) or spacing < 0:
            raise InvalidInputError(f"spacing: expected a finite number >= 0 (m), got {spacing!r}")
        width = check_int("width", width, 1, 8192)
        height = check_int("height", height, 1, 8192)
        self._init_renderer(float(spacing), offset_mode, bool(headless), bool(capture), width, height, camera)

    def render(self) -> None:
        """Draw one frame through the interactive renderer."""
        self._require(Capability.RENDER)
        self._render()

    def capture_video_frame(self) -> np.ndarray:
        """``(height, width, 3)`` uint8 RGB frame of the current state."""
        self._require(Capability.VIDEO_CAPTURE)
        return self._capture_frame()

    # ------------------------------------------------------------------ default primitives
    def _init_renderer(self, spacing: float, offset_mode: str, headless: bool, capture: bool,
                       width: int, height: int, camera: CameraCfg) -> None:
        """Primitive (VIDEO_CAPTURE), default: the shared renderer, drawing offscreen (``headless``
        is moot). A visual model must have the physics model's ``nq`` (the same joints). A renderer
        made before is replaced once the new one is made (kept when making it fails)."""
        model_file = self.scene.visual_model_file or self.scene.model_file
        renderer = video_renderer()(model_file, self.num_envs, width, height, spacing, offset_mode, camera)
        try:
            if renderer.nq != self.nq:
                raise InvalidInputError(f"scene.visual_model_file: {model_file!r} has nq={renderer.nq}, the "
                                        f"backend's model nq={self.nq}; a visual model needs the same joints")
            mocap = list(renderer.mocap_bodies)
            mocap_ids = self.get_body_ids(mocap) if mocap else None
        except BaseException:
            renderer.close()
            raise
        self._release_renderer()
        self._video, self._video_mocap = renderer, mocap_ids

    def _capture_frame(self) -> np.ndarray:
        """Primitive (VIDEO_CAPTURE), default: the shared renderer draws the first envs' ``get_qpos()``
        and mocap body poses (``get_body_pose_w``)."""
        if self._video is None:
            self.init_renderer(capture=True, headless=True)
        video = self._video
        k = video.num_drawn
        pos = quat = None
        if self._video_mocap is not None:
            pos, quat = self.get_body_pose_w(self._video_mocap)
            pos, quat = pos[:k], quat[:k]
        return video.draw(self.get_qpos()[:k], pos, quat)

    def _render(self) -> None:
        """Primitive (RENDER): draw one frame interactively (no default: the shared renderer is offscreen)."""
        raise self._unsupported(Capability.RENDER)

    def _release_renderer(self) -> None:
        """Free the shared renderer, if made (``close()`` calls it)."""
        video, self._video = self._video, None
        if video is not None:
            video.close()

    def resolve_play_render_plan(self, *, play_render_mode: str | None, play_steps: int | None,
                                 output_video: str | None) -> BackendPlayRenderPlan:
        """``play_render_mode``: ``"video"`` (needs PLAYBACK) or ``None``/``"none"``."""
        mode = play_render_mode or "none"
        if mode not in ("video", "none"):
            raise InvalidInputError(f"play_render_mode: expected 'video', 'none' or None, got {mode!r}")
        if mode == "video":
            self._require(Capability.PLAYBACK)
        steps = 0 if play_steps is None else check_int("play_steps", play_steps, 0)
        return BackendPlayRenderPlan(mode=mode, num_steps=steps,
                                     output_video=None if output_video is None else str(output_video))

    def run_playback(self, *, env: Any, initialize: Callable[[], Any], step: Callable[[], Any],
                     num_steps: int | None, output_video: str | None = None, render_spacing: float | None = None,
                     render_offset_mode: str | None = None, headless: bool | None = None,
                     record_video: bool | None = None, frame_state_getter: Callable[[], Any] | None = None,
                     camera_kwargs: CameraCfg | Mapping[str, Any] | None = None,
                     debug_overlay_getter: Callable[[], Any] | None = None,
                     on_frame: Callable[[int, np.ndarray], np.ndarray | None] | None = None) -> str | None:
        """Offline playback: ``initialize()``, then ``num_steps`` × (``step()``, capture a frame),
        encoding the frames to ``output_video`` (mp4, needs ``imageio[ffmpeg]``).

        ``on_frame(i, frame)`` may return a replacement frame of the same shape/dtype.
        Returns the video path (``None`` when no video was recorded).
        """
        self._require(Capability.PLAYBACK)
        if debug_overlay_getter is not None:
            raise NotImplementedError(f"backend {self._label} does not support debug overlays")
        steps = check_int("num_steps", num_steps if num_steps is not None else 0, 1)
        record = bool(record_video) if record_video is not None else output_video is not None
        if record and output_video is None:
            raise InvalidInputError("output_video: a path is required when record_video is true")
        frames: list[np.ndarray] = []
        self.init_renderer(render_spacing if render_spacing is not None else 1.0,
                           offset_mode=render_offset_mode or "grid", headless=True if headless is None else headless,
                           capture=True, camera_kwargs=camera_kwargs)
        initialize()
        for i in range(steps):
            step()
            if frame_state_getter is not None:
                frame_state_getter()
            if record:
                frame = self.capture_video_frame()
                if on_frame is not None:
                    new = on_frame(i, frame)
                    if new is not None:
                        if not isinstance(new, np.ndarray) or new.shape != frame.shape or new.dtype != frame.dtype:
                            raise InvalidInputError(f"on_frame: expected a {frame.dtype} array of shape "
                                                    f"{frame.shape}, got {getattr(new, 'shape', type(new))}")
                        frame = new
                frames.append(frame)
        if not record:
            return None
        write_video(str(output_video), frames, fps=max(1, round(1.0 / max(self.sim_dt, 1e-6) / 10)))
        return str(output_video)


def write_video(path: str, frames: Sequence[np.ndarray], fps: int) -> None:
    """Encode ``(H, W, 3)`` uint8 frames to an mp4 (H.264) with imageio's ffmpeg plugin."""
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise OptionalDependencyError(
            "video export needs imageio with ffmpeg: pip install 'imageio[ffmpeg]'"
        ) from None
    with imageio.get_writer(path, fps=fps, codec="libx264", macro_block_size=1) as writer:
        for f in frames:
            writer.append_data(f)
