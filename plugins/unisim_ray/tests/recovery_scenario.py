"""One trajectory run on a Ray backend and an in-process reference, with faults injected into the
Ray backend before a step, a set_state and a randomization (shared by the single-node and the
multi-node fault tests).

Every compare is bit for bit: with MuJoCo inside, a rebuilt shard restores its envs' full
integration state (warm start included), re-applies the model writes and staged wrenches, and
retries the call, so its continuation is the in-process one exactly.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import unisim_core
from unisim_core import InitRandomizationPlan, IntervalRandomizationPlan, RandomizationOp, SceneCfg, create_backend

SCENE = SceneCfg(Path(unisim_core.__file__).parent / "scenes" / "quadruped.xml", default_keyframe="home")
TESTS = Path(__file__).resolve().parent
N = 6  # two shards: envs [0:3) and [3:6)


def kill_and_confirm(actor, within_s: float = 30.0) -> None:
    """``ray.kill`` (asynchronous), then wait until the actor no longer answers, so that the next
    call is the one that finds it dead."""
    import ray

    ray.kill(actor, no_restart=True)
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            ray.get(actor.ping.remote(), timeout=within_s)
        except ray.exceptions.RayActorError:
            return
    raise AssertionError(f"actor still answers {within_s:g} s after ray.kill")


def runtime_env(die_once_dir: Path | None = None) -> dict:
    """Shards import ``faulty_mujoco`` from this folder (and may die once per place, see there)."""
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    if die_once_dir is not None:
        env["UNISIM_TEST_DIE_ONCE"] = str(die_once_dir)
    return {"env_vars": env}


def make_pair(made: list, **ray_opts) -> tuple:
    """``(ray backend over 2 shards of FaultyMujoco, in-process FaultyMujoco)`` on the same envs."""
    from faulty_mujoco import FaultyMujoco

    common = dict(np_dtype=np.float64, divergence="reset", seed=5)
    ref = create_backend(FaultyMujoco, SCENE, N, 0.005, threads=1, **common)
    made.append(ref)
    ray_opts.setdefault("actor_options", {"runtime_env": runtime_env()})
    b = create_backend("ray", SCENE, N, 0.005, inner="faulty_mujoco:FaultyMujoco", shards=2,
                       inner_options={"threads": 1}, progress=False, **common, **ray_opts)
    made.append(b)
    return b, ref


def assert_same(b, ref, where: str) -> None:
    """State, bodies, sensors, physics snapshot and randomized fields equal bit for bit."""
    ids = np.arange(ref.num_bodies)
    names = list(ref.model_info.sensor_names)
    reads = {"qpos": lambda x: x.get_qpos(), "qvel": lambda x: x.get_qvel(),
             "bodies": lambda x: np.concatenate(x.get_body_state_w(ids), axis=-1),
             "snapshot": lambda x: x.get_physics_state(),
             "body_mass": lambda x: x.get_model_field("body_mass"), "gravity": lambda x: x.get_model_field("gravity"),
             "actuator_kp": lambda x: x.get_model_field("actuator_kp")}
    if names:
        reads["sensors"] = lambda x: x.get_sensor_data_batch(names)
    for name, read in reads.items():
        got, want = read(b), read(ref)
        assert np.array_equal(got, want), f"{where}: {name} differs (max {np.abs(got - want).max()})"


def run(b, ref, fault: Callable[[str, int], dict]) -> None:
    """Randomize and step both; before a step (with a wrench staged), a set_state and a
    randomization, ``fault(call, shard)`` breaks that shard of ``b`` and returns the sentinel
    overrides (if any) that both backends get in that call. Compared after every call."""
    rng = np.random.default_rng(11)
    hold = np.tile(ref.get_default_qpos()[7:].astype(np.float32), (N, 1))

    def ctrl() -> np.ndarray:
        return (hold + rng.uniform(-0.1, 0.1, hold.shape)).astype(np.float32)

    def both(call) -> None:
        call(ref)
        call(b)

    def steps(count: int) -> None:
        for _ in range(count):
            u = ctrl()
            ref.step(u, 2)
            b.step(u, 2)

    both(lambda x: x.apply_init_randomization(InitRandomizationPlan([
        RandomizationOp(term="body_mass", values=np.array([[1.3], [0.7], [1.1]]), env_ids=[0, 4, 2],
                        target_ids=[1], operation="scale"),
        RandomizationOp(term="gravity", values=np.tile([0.0, 0.4, -9.0], (N, 1))),
    ])))
    steps(20)
    assert_same(b, ref, "before faults")

    # a step, with a wrench staged on every shard before the fault
    force = rng.normal(0, 5, (N, 1, 3))
    both(lambda x: x.apply_body_force(np.array([ref.base_body_id]), force))
    u = ctrl()
    u[4, 0] = fault("step", 1).get("ctrl", u[4, 0])
    both(lambda x: x.step(u, 2))
    assert_same(b, ref, "step after a fault")

    # a set_state of envs on both shards
    envs = np.array([5, 1])
    qpos = ref.get_qpos()[envs] + 0.01
    qvel = rng.normal(0, 0.1, (2, ref.nv))
    qvel[1, -1] = fault("set_state", 0).get("qvel", qvel[1, -1])
    both(lambda x: x.set_state(envs, qpos.copy(), qvel.copy()))
    assert_same(b, ref, "set_state after a fault")

    # a randomization of envs on both shards (the model writes before it replayed on the rebuilt shard)
    mass = np.array([[1.2], [0.9]])
    mass_env3 = fault("randomization", 1).get("body_mass")
    kp = np.full((N, 1), 30.0)
    plan = IntervalRandomizationPlan([
        RandomizationOp(term="body_mass", values=mass if mass_env3 is None else np.array([[1.2], [mass_env3]]),
                        env_ids=[1, 3], target_ids=[2], operation="scale" if mass_env3 is None else "set"),
        RandomizationOp(term="actuator_kp", values=kp, target_ids=[0], operation="set"),
    ])
    both(lambda x: x.apply_interval_randomization(plan))
    assert_same(b, ref, "randomization after a fault")
    steps(10)
    assert_same(b, ref, "end")
