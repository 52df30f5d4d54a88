"""TEST DOUBLE of the Isaac Sim worker: same protocol, stand-in engine, no Isaac Sim.

``python -m isaacsim_testing.fake_isaac_worker`` accepts the INIT payload of
:func:`unisim_isaacsim._backend.init_payload` and serves the ops of the real worker, but simulates
with unisim_core's ``FakeBackend``. It deliberately speaks the wire layout an Isaac worker may
use, so the host's boundary handling is exercised end to end against a real subprocess:

- engine rows in a *permuted* order (row ``r`` holds env ``num_envs - 1 - r``), declared in
  ``env_rows`` as the real worker does from the articulation view's prim paths;
- quaternions **xyzw** in ``qpos`` and in the body orientation table (``quat_order: "xyzw"``);
- a solver readback with provenance, honest by default.

``UNISIM_FAKE_ISAAC_MODE`` (comma-separated) makes it misbehave: ``exit_in_init`` (dies during
INIT after writing to stderr), ``identity_rows``, ``wxyz``, and ``readback=<kind>`` with kind
``mismatch``, ``missing``, ``extra``, ``stage_as_engine`` (a stage read relabelled as a PhysX
view read) or ``unknown_source``. It never claims to be Isaac Sim: ``engine.name`` says what it is.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

MODE_ENV = "UNISIM_FAKE_ISAAC_MODE"
#: Where the real worker reads each field: the PhysX 107.3 articulation view has getters for the
#: shape offsets only; everything else is an authored stage value.
_HONEST_SOURCE = {
    "solver_position_iteration_count": "usd_stage",
    "solver_velocity_iteration_count": "usd_stage",
    "bounce_threshold_velocity": "usd_stage",
    "contact_offset": "physx_view",
    "rest_offset": "physx_view",
    "max_depenetration_velocity": "usd_stage",
    "gpu_max_rigid_contact_count": "usd_stage",
    "gpu_max_rigid_patch_count": "usd_stage",
}


def _modes() -> dict[str, str]:
    out = {}
    for item in filter(None, (p.strip() for p in os.environ.get(MODE_ENV, "").split(","))):
        key, _, value = item.partition("=")
        out[key] = value
    return out


def fake_readback(payload: dict[str, Any], num_envs: int, kind: str = "honest") -> dict[str, Any]:
    """What a worker would report for ``payload``; ``kind`` forges it for the failure tests."""
    from unisim_isaacsim._physx_solver import PhysxSolverConfig

    cfg = PhysxSolverConfig.from_payload(payload)
    report: dict[str, Any] = {}
    for field in cfg.configured_fields():
        value = getattr(cfg, field)
        stored = int(value) if isinstance(value, int) else float(np.float32(value))  # engine storage
        source = _HONEST_SOURCE[field]
        evidence = {"physx_view": ("rows", num_envs), "usd_stage": ("prims", 3)}[source]
        report[field] = {"value": stored, "source": source, evidence[0]: evidence[1]}
    fields = list(report)
    if kind == "mismatch" and fields:
        e = report[fields[0]]
        e["value"] = e["value"] + 1 if isinstance(e["value"], int) else e["value"] * 1.01
    elif kind == "missing" and fields:
        del report[fields[0]]
    elif kind == "extra":
        spare = next((f for f in _HONEST_SOURCE if f not in report), "bogus_field")
        report[spare] = {"value": 1, "source": "physx_view", "rows": num_envs}
    elif kind == "stage_as_engine":
        field = next(f for f in fields if report[f]["source"] == "usd_stage")
        report[field]["source"] = "physx_view"
    elif kind == "unknown_source" and fields:
        report[fields[0]]["source"] = "guess"
    return report


def factory(init: dict[str, Any], progress) -> dict[str, Any]:
    from unisim_core.plugin.worker import hosted
    from unisim_core.plugin.worker.shm import SlotSet

    modes = _modes()
    if "exit_in_init" in modes:
        sys.stderr.write("fake isaac worker: simulated Isaac Sim start-up failure (libcuda.so.1 not found)\n")
        sys.stderr.flush()
        raise SystemExit(3)
    n = int(init["num_envs"])
    readback = fake_readback(init["physx"], n, modes.get("readback", "honest"))
    progress("fake isaac worker: building the stand-in engine")
    options = {"np_dtype": init["np_dtype"]}
    if init.get("base_name") is not None:
        options["base_name"] = init["base_name"]
    inner = dict(hosted.factory({"target": "fake", "scene": init["scene"], "num_envs": n,
                                 "sim_dt": init["sim_dt"], "options": options}, progress))
    desc = inner["describe"]()
    info = hosted.info_from_plain(desc["info"])
    quat_cols = [int(info.joint_qposadr[j]) + (3 if t == "free" else 0)
                 for j, t in enumerate(info.joint_types) if t in ("free", "ball")]
    xyzw = "wxyz" not in modes
    env_rows = list(range(n)) if "identity_rows" in modes else list(range(n))[::-1]
    cameras = bool(init.get("enable_cameras"))
    state: dict[str, Any] = {"slots": None, "size": None, "frames": 0}

    def to_wire() -> None:  # the inner engine publishes wxyz; this worker speaks xyzw
        if not xyzw:
            return
        s = state["slots"]
        for c in quat_cols:
            s["qpos"][:, c:c + 4] = s["qpos"][:, [c + 1, c + 2, c + 3, c]]

    def describe() -> dict[str, Any]:
        return {**desc, "capabilities": ["pre_step_control"] + (["video_capture"] if cameras else []),
                "init_terms": [], "interval_terms": [], "reset_terms": [], "env_rows": env_rows,
                "quat_order": "xyzw" if xyzw else "wxyz", "solver_readback": readback,
                "engine": {"name": "fake-isaac (test double, unisim_core FakeBackend)", "device": init["device"],
                           "fixed_base": "free" not in info.joint_types}}

    def attach(descriptors: dict[str, Any]) -> None:
        inner["attach"](descriptors)
        state["slots"] = SlotSet.attach(descriptors)
        to_wire()

    def step(nsteps: int) -> None:
        inner["step"](nsteps)
        to_wire()

    def set_state(env_ids: list[int]) -> None:
        s, k = state["slots"], len(env_ids)
        if xyzw:
            for c in quat_cols:
                s["in_qpos"][:k, c:c + 4] = s["in_qpos"][:k, [c + 3, c, c + 1, c + 2]]
        inner["set_state"](env_ids)
        to_wire()

    def bodies() -> None:
        inner["bodies"]()
        if xyzw:
            q = state["slots"]["xquat"]
            q[...] = q[..., [1, 2, 3, 0]]

    def init_renderer(spacing, offset_mode, headless, capture, width, height, camera) -> None:
        if not cameras:
            raise RuntimeError("cameras are disabled (enable_cameras=False)")
        state["size"] = (height, width)

    def capture_frame() -> dict:
        h, w = state["size"] or (720, 1280)
        state["frames"] += 1
        frame = np.zeros((h, w, 3), dtype=np.uint8)
        frame[..., 0] = state["frames"] % 256  # a changing synthetic picture
        return hosted.pack_array(frame)

    def close() -> None:
        inner["close"]()
        if state["slots"] is not None:
            state["slots"].close()

    return {f.__name__: f for f in (describe, attach, step, set_state, bodies, init_renderer, capture_frame, close)}


factory.reusable = True  # the worker pool may hand this process the next backend (its modes stay its own)


if __name__ == "__main__":
    from unisim_isaacsim.worker import run

    run(factory)
