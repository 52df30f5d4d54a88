"""Hot-path cost of the call guard (one thread at a time, fork check): `python benchmarks/guard_overhead.py`.

For each backend, one env (N=1, where a fixed per-call cost weighs most), the quadruped, the same
backend object is called through its guarded public method (``sim.step``) and through the
unguarded function the guard wraps (``type(sim).step.__wrapped__``), in alternating rounds
(``unisim_core.tools.bench.measure``); the table is the median per call and the ratio. The
in-process call guard also covers ``get_qpos`` (and every public getter); a worker-hosted
backend adds its client's one-call-at-a-time lock and SIGINT deferral to every round trip,
measured on ``get_body_pos_w`` (one round trip) against the client's unguarded exchange.
"""

from __future__ import annotations

import sys

import numpy as np

from unisim_core import SceneCfg, create_backend
from unisim_core.scenes import scene_path
from unisim_core.tools.bench import measure


def _unguarded(sim, name: str):
    fn = getattr(type(sim), name).__wrapped__
    return lambda *a: fn(sim, *a)


def rows(backend: str, isolation: str = "inprocess", budget_s: float = 2.0) -> list[tuple[str, float, float]]:
    sim = create_backend(backend, SceneCfg(scene_path("quadruped"), default_keyframe="home"), 1, 0.005,
                         isolation=isolation)
    try:
        ctrl = np.zeros((1, sim.num_actuators), dtype=sim.np_dtype)
        raw_step, raw_qpos = _unguarded(sim, "step"), _unguarded(sim, "get_qpos")
        calls = {"step guarded": lambda: sim.step(ctrl), "step unguarded": lambda: raw_step(ctrl),
                 "get_qpos guarded": sim.get_qpos, "get_qpos unguarded": raw_qpos}
        if isolation == "subprocess":
            client = sim._client
            exchange = type(client)._exchange

            def raw_trip():  # the client's exchange without its lock and SIGINT deferral
                client._worker.chan.pack({"op": "bodies", "args": {}})
                exchange(client, "bodies", None, None)

            calls.update({"round trip guarded": lambda: client.request("bodies"), "round trip unguarded": raw_trip})
        t = measure(calls, budget_s)
        out = []
        for what in ("step", "get_qpos", "round trip"):
            if f"{what} guarded" in t:
                g, u = t[f"{what} guarded"], t[f"{what} unguarded"]
                out.append((what, g, u))
        return out
    finally:
        sim.close()


def main(backends: list[str]) -> None:
    print(f"{'backend':<22} {'call':<11} {'guarded us':>11} {'unguarded us':>13} {'cost us':>8} {'ratio':>6}")
    for spec in backends:
        name, _, iso = spec.partition("@")
        for what, g, u in rows(name, iso or "inprocess"):
            print(f"{spec:<22} {what:<11} {g * 1e6:11.2f} {u * 1e6:13.2f} {(g - u) * 1e6:8.2f} {g / u:6.3f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["fake", "mujoco", "motrix", "mujoco@subprocess"])
