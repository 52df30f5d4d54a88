"""The backend's own warp kernels (row writes, wrenches at body origins, a health flag per world),
and the host views of the state on warp's CPU device.

Everything runs on the device of its arrays; nothing here copies to the host.
"""

from __future__ import annotations

import numpy as np
import warp as wp

__all__ = ["NONFINITE", "flat_rows", "host_views", "scatter_rows", "stage_wrench", "world_health"]

#: Bit of ``world_health``'s output for a non-finite qpos/qvel (above mjwarp's OverflowType bits).
NONFINITE = 1 << 30


@wp.kernel(enable_backward=False)
def _scatter(ids: wp.array(dtype=wp.int32), src: wp.array2d(dtype=wp.float32), dst: wp.array2d(dtype=wp.float32)):
    i, j = wp.tid()
    dst[ids[i], j] = src[i, j]


@wp.kernel(enable_backward=False)
def _wrench(bodies: wp.array(dtype=wp.int32), force: wp.array2d(dtype=wp.vec3), torque: wp.array2d(dtype=wp.vec3),
            xpos: wp.array2d(dtype=wp.vec3), xipos: wp.array2d(dtype=wp.vec3),
            xfrc: wp.array2d(dtype=wp.spatial_vector)):
    # MuJoCo applies xfrc_applied at the body COM: a force F at the frame origin p is F at the
    # COM c plus the couple (p - c) x F.
    w, k = wp.tid()
    b = bodies[k]
    f = force[w, k]
    xfrc[w, b] = wp.spatial_vector(f, torque[w, k] + wp.cross(xpos[w, b] - xipos[w, b], f))


@wp.kernel(enable_backward=False)
def _health(qpos: wp.array2d(dtype=wp.float32), qvel: wp.array2d(dtype=wp.float32), overflow: wp.array(dtype=wp.int32),
            mask: wp.int32, out: wp.array(dtype=wp.int32)):
    w = wp.tid()
    flag = overflow[w] & mask
    for i in range(qpos.shape[1]):
        if not wp.isfinite(qpos[w, i]):
            flag = flag | NONFINITE
    for i in range(qvel.shape[1]):
        if not wp.isfinite(qvel[w, i]):
            flag = flag | NONFINITE
    out[w] = flag


def flat_rows(arr: wp.array) -> wp.array:
    """A float32 alias ``(shape[0], rest)`` of a contiguous float-based array (vec/quat/spatial)."""
    width = wp.types.type_size_in_bytes(arr.dtype) // 4
    cols = int(np.prod(arr.shape[1:], dtype=np.int64)) * width
    return wp.array(ptr=arr.ptr, shape=(arr.shape[0], cols), dtype=wp.float32, device=arr.device, copy=False)


def host_views(d, device: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``d``'s ``(ctrl, qpos, qvel)`` ``(nworld, ·)`` float32 as numpy views of the engine's memory on
    warp's CPU device (written and read in place, no ``assign``/``.numpy()`` per call); ``None`` on CUDA."""
    return (d.ctrl.numpy(), d.qpos.numpy(), d.qvel.numpy()) if device == "cpu" else None


def scatter_rows(dst: wp.array, env_ids: np.ndarray, rows: np.ndarray) -> None:
    """``dst[env_ids] = rows`` for a float-based array ``dst`` (rows flattened per env)."""
    if not rows.size:
        return
    flat = flat_rows(dst)
    src = np.ascontiguousarray(rows, dtype=np.float32).reshape(len(env_ids), flat.shape[1])
    wp.launch(_scatter, dim=src.shape, device=dst.device,
              inputs=[wp.array(env_ids.astype(np.int32), dtype=wp.int32, device=dst.device),
                      wp.array(src, dtype=wp.float32, device=dst.device), flat])


def stage_wrench(bodies: wp.array, force: wp.array, torque: wp.array, d) -> None:
    """Write world wrenches at the body origins ``(nworld, len(bodies))`` into ``d.xfrc_applied``."""
    wp.launch(_wrench, dim=force.shape, device=force.device,
              inputs=[bodies, force, torque, d.xpos, d.xipos, d.xfrc_applied])


def world_health(d, mask: int, out: wp.array) -> None:
    """Write into ``out`` per world the ``mask`` bits of ``d.overflow`` plus ``NONFINITE`` (a launch:
    it may be captured into a graph after the substep)."""
    wp.launch(_health, dim=d.nworld, device=out.device, inputs=[d.qpos, d.qvel, d.overflow, mask, out])
