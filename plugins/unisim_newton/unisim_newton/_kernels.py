"""The backend's own warp kernels: the contract's ``qvel`` from a Newton state, on the state's device,
and MuJoCo Warp's overflow flags gathered over the substeps of a step.

Newton's free-joint velocity is ``[v_com, w]`` (both world frame); MuJoCo's, the contract's, is
``[v_origin (world), w (body frame)]``. Converting on the device costs one replay of a captured
one-kernel graph (~1 µs on warp's CPU device) where the numpy form costs ~15 µs at one env and
~45 µs at 16, and on CUDA only the ``(n, nv)`` result crosses to the host.
"""

from __future__ import annotations

import numpy as np
import warp as wp

__all__ = ["QvelKernel", "gather_overflow"]


@wp.kernel(enable_backward=False)
def _gather_overflow(overflow: wp.array(dtype=wp.int32), mask: wp.int32, out: wp.array(dtype=wp.int32)):
    w = wp.tid()
    out[w] = out[w] | (overflow[w] & mask)


def gather_overflow(overflow: wp.array, mask: int, out: wp.array) -> None:
    """``out |= overflow & mask`` per world: ``SolverMuJoCo.step`` clears MuJoCo Warp's ``overflow``
    before each substep, so a step's flags are gathered after every substep (a launch: it may be captured)."""
    wp.launch(_gather_overflow, dim=out.shape[0], device=out.device, inputs=[overflow, mask, out])


@wp.func
def _rotate(w: wp.float64, u: wp.vec3d, v: wp.vec3d) -> wp.vec3d:
    # unisim_core.contract.quat.quat_apply's operations in their order: t = 2 u x v; v + w t + u x t
    t = wp.float64(2.0) * wp.cross(u, v)
    return v + w * t + wp.cross(u, t)


@wp.kernel(enable_backward=False)
def _contract_qvel(joint_q: wp.array2d(dtype=wp.float32), joint_qd: wp.array2d(dtype=wp.float32),
                   body_q: wp.array2d(dtype=wp.transform), body_qd: wp.array2d(dtype=wp.spatial_vector),
                   body_com: wp.array2d(dtype=wp.vec3), qd_src: wp.array(dtype=wp.int32),
                   free_da: wp.array(dtype=wp.int32), free_row: wp.array(dtype=wp.int32),
                   ball_qs: wp.array(dtype=wp.int32), ball_da: wp.array(dtype=wp.int32),
                   out: wp.array2d(dtype=wp.float64)):
    e = wp.tid()
    for c in range(qd_src.shape[0]):
        out[e, c] = wp.float64(joint_qd[e, qd_src[c]])
    for b in range(ball_da.shape[0]):  # parent-frame angular velocity -> body frame (the joint's rotation undone)
        bq = ball_qs[b]
        bd = ball_da[b]
        bw = wp.float64(joint_q[e, bq + 3])
        bu = wp.vec3d(wp.float64(joint_q[e, bq]), wp.float64(joint_q[e, bq + 1]), wp.float64(joint_q[e, bq + 2]))
        w_ball = _rotate(bw, -bu, wp.vec3d(out[e, bd], out[e, bd + 1], out[e, bd + 2]))
        for i in range(3):
            out[e, bd + i] = w_ball[i]
    for k in range(free_da.shape[0]):
        b = free_row[k]
        r = wp.transform_get_rotation(body_q[e, b])  # x, y, z, w
        qw = wp.float64(r[3])
        u = wp.vec3d(wp.float64(r[0]), wp.float64(r[1]), wp.float64(r[2]))
        tw = body_qd[e, b]
        v = wp.vec3d(wp.float64(tw[0]), wp.float64(tw[1]), wp.float64(tw[2]))
        ang = wp.vec3d(wp.float64(tw[3]), wp.float64(tw[4]), wp.float64(tw[5]))
        com = body_com[e, b]
        lever = _rotate(qw, u, wp.vec3d(wp.float64(com[0]), wp.float64(com[1]), wp.float64(com[2])))
        v_origin = v - wp.cross(ang, lever)
        w_body = _rotate(qw, -u, ang)
        da = free_da[k]
        for i in range(3):
            out[e, da + i] = v_origin[i]
            out[e, da + 3 + i] = w_body[i]


def _rows(array: wp.array, n: int) -> wp.array:
    """``array`` (flat over the worlds) viewed as ``(n, per world)`` rows, no copy."""
    return array.reshape((n, array.shape[0] // n))


class QvelKernel:
    """The contract's ``qvel`` ``(n, nv)`` float64 of a Newton state, computed on its device.

    ``qd_src``: the Newton dof of each contract column (free-joint columns overwritten);
    ``free``: ``(qvel column, Newton body row)`` per free joint; ``ball``: ``(Newton coordinate of the
    quaternion's x, qvel column)`` per ball joint (a unit ``[x y z w]``; its angular velocity turned into
    the body frame, as MuJoCo's). With ``capture``, each state's launch is captured once and replayed
    (a capture records, it does not run).
    """

    def __init__(self, model, n: int, qd_src: np.ndarray, free: list[tuple[int, int]], capture: bool,
                 ball: list[tuple[int, int]] = ()) -> None:
        device = model.device
        self._n, self._device, self._capture = n, device, capture
        ints = lambda values: wp.array(np.asarray(values, dtype=np.int32).reshape(-1), dtype=wp.int32, device=device)
        self._qd_src = ints(qd_src)
        self._free_da, self._free_row = ints([da for da, _ in free]), ints([row for _, row in free])
        self._ball_qs, self._ball_da = ints([qs for qs, _ in ball]), ints([da for _, da in ball])
        self._com = _rows(model.body_com, n)
        self._out = wp.zeros((n, len(qd_src)), dtype=wp.float64, device=device)
        self._host = self._out.numpy() if device.is_cpu else None  # a view of the device memory on the CPU
        self._graphs: dict[int, object] = {}

    def _launch(self, state) -> None:
        n = self._n
        wp.launch(_contract_qvel, dim=n, device=self._device,
                  inputs=[_rows(state.joint_q, n), _rows(state.joint_qd, n), _rows(state.body_q, n),
                          _rows(state.body_qd, n), self._com, self._qd_src, self._free_da, self._free_row,
                          self._ball_qs, self._ball_da, self._out])

    def __call__(self, state) -> np.ndarray:
        """``qvel`` of ``state``: a host array valid until the next call (copy it to keep it)."""
        graph = self._graphs.get(id(state))
        if graph is None and self._capture:
            with wp.ScopedDevice(self._device), wp.ScopedCapture(device=self._device) as capture:
                self._launch(state)
            graph = self._graphs[id(state)] = capture.graph
        if graph is None:
            self._launch(state)
        else:
            wp.capture_launch(graph)
        return self._host if self._host is not None else self._out.numpy()
