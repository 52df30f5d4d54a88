"""Run the real Isaac Sim worker on the SDK STUBS for one model and print one JSON object.

``python -m isaacsim_testing.stub_sdk_run MODEL.xml [--isaaclab 2|3] [--device cuda:0|cpu]`` (with
``plugins/unisim_isaacsim/tests`` on ``PYTHONPATH``: this test support is not in the wheel)

The host (:class:`~unisim_isaacsim._backend.IsaacSimBackend`) starts ``worker.py`` in a subprocess
of this interpreter with the stubs of :mod:`isaacsim_testing.stub_sdk` installed there, then
INIT, a reset to the default state, a ``set_state`` round trip, a few steps holding the default
position and a body readback. The physics is a stub: the JSON says whether the worker's code paths
and the SDK's preconditions hold, not how Isaac Sim moves the model::

    {"init": "ok" | "<error>", "isaaclab": 2, "engine": {...}, "steps": k, "qpos_finite": true,
     "set_state_max_error": 0.0, "bodies_finite": true, "fixed_base": false, "stub": "..."}
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .host import LocalWorkerHost
from .stub_sdk import LAB_ENV
from .stub_sdk.engine import STUB

__all__ = ["StubSdkIsaacSim", "run", "main"]

STEPS = 5


class StubSdkIsaacSim(LocalWorkerHost):
    """The Isaac Sim host whose worker runs on the SDK stubs (``stub_sdk_worker``, reused by the worker pool)."""

    worker_module = "isaacsim_testing.stub_sdk_worker"


def run(model: str, isaaclab: int = 2, *, device: str = "cuda:0", num_envs: int = 3, keyframe: str | None = None,
        python: str = sys.executable, **options: Any) -> dict[str, Any]:
    """Drive the real worker on the stubs for ``model``; the report :func:`main` prints.

    ``python`` runs the worker (this interpreter by default); ``options`` are
    :class:`~unisim_isaacsim._options.IsaacSimOptions` (with ``enable_cameras=True`` a frame is
    captured and its shape reported as ``frame``).
    """
    from unisim_core import SceneCfg
    from unisim_core.plugin.mjcf_lite import load_mjcf
    from unisim_isaacsim._runtime import PYTHON_ENV

    if isaaclab not in (2, 3):
        raise ValueError(f"isaaclab: expected 2 or 3, got {isaaclab!r}")
    saved = {k: os.environ.get(k) for k in (LAB_ENV, PYTHON_ENV)}
    os.environ[LAB_ENV], os.environ[PYTHON_ENV] = str(isaaclab), python
    report: dict[str, Any] = {"init": "ok", "isaaclab": isaaclab, "device": device, "stub": STUB}
    backend = None
    try:
        if keyframe is None:
            keyframe = "home" if "home" in load_mjcf(model).keyframes else None
        backend = StubSdkIsaacSim(SceneCfg(model, default_keyframe=keyframe), num_envs, 0.005, device=device,
                                  init_timeout_s=120.0, call_timeout_s=60.0, **options)
    except Exception as exc:  # the report carries INIT's error
        report["init"] = f"{type(exc).__name__}: {exc}"
        return report
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        report["engine"] = dict(backend.engine_info)
        report["fixed_base"] = bool(report["engine"]["fixed_base"])
        n, envs = backend.num_envs, np.arange(backend.num_envs)
        default = np.tile(backend.get_default_qpos(), (n, 1))
        backend.set_state(envs, default, np.zeros((n, backend.nv)))  # the reset
        info = backend.model_info
        probe = default.copy()
        probe[:, -1] += 0.01 * envs  # a distinct state per env
        if info.joint_types[0] == "free":  # a turned root: the quaternion order must survive both ways
            probe[:, 3:7] = np.array([0.9, 0.1, -0.2, 0.3]) / np.linalg.norm([0.9, 0.1, -0.2, 0.3])
        backend.set_state(envs, probe, np.zeros((n, backend.nv)))
        report["set_state_max_error"] = float(np.max(np.abs(backend.get_qpos() - probe)))
        backend.set_state(envs, default, np.zeros((n, backend.nv)))
        held = np.where(info.actuator_kp > 0, default[0, info.joint_qposadr[info.actuator_joint]], 0.0)
        ctrl = np.tile(held, (n, 1))  # position actuators hold the default pose, motors idle
        steps = 0
        for _ in range(STEPS):
            backend.step(ctrl)
            steps += 1
        report["steps"] = steps
        report["qpos_finite"] = bool(np.isfinite(backend.get_qpos()).all() and np.isfinite(backend.get_qvel()).all())
        pos = backend.get_body_pos_w(np.arange(backend.num_bodies))
        report["bodies_finite"] = bool(np.isfinite(pos).all())
        if options.get("enable_cameras"):
            first = backend.capture_video_frame()  # the worker creates its default 640x480 camera
            backend.init_renderer(capture=True, width=64, height=48, camera_kwargs={"lookat": [0.0, 0.0, 0.2]})
            report["frames"] = [list(first.shape), list(backend.capture_video_frame().shape)]
    finally:
        backend.close()
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m isaacsim_testing.stub_sdk_run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="MJCF model file")
    parser.add_argument("--isaaclab", type=int, choices=(2, 3), default=2, help="Isaac Lab generation to stub")
    parser.add_argument("--device", default="cuda:0", help="worker device (the stub models the GPU pipeline)")
    parser.add_argument("--num-envs", type=int, default=3)
    args = parser.parse_args(argv)
    report = run(args.model, args.isaaclab, device=args.device, num_envs=args.num_envs)
    print(json.dumps(report, sort_keys=True))
    return 0 if report["init"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
