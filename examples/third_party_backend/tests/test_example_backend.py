"""The example third-party backend: the full conformance kit from its own directory, its refusals,
its options' messages, and closed forms of its integrator that the kit does not cover."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from unisim_core import SceneCfg, UnsupportedCapabilityError, cli
from unisim_core.contract import quat as Q
from unisim_example_backend import ExampleBackend

kit = pytest.importorskip("unisim_conformance", reason="the example is checked with unisim-conformance")
from unisim_conformance.runner import run_kit  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
REFUSED = {"box_on_plane": "contacts", "box_stack": "contacts", "hfield_terrain": "contacts",
           "quadruped": "floating_base_joints"}


def make(scene: str, num_envs: int = 1, **options) -> ExampleBackend:
    return ExampleBackend(kit.scene_cfg(scene), num_envs, kit.scene_dt(scene), **options)


def test_the_whole_kit_passes_from_the_example_directory():
    """`cd examples/third_party_backend && pytest --pyargs unisim_conformance`, as the README says."""
    run = run_kit(cwd=HERE, pythonpath=[str(HERE)])
    assert run.rc == 0, run.out[-4000:]
    outcomes = run.outcomes()
    assert "failed" not in outcomes.values()
    assert {v for k, v in outcomes.items() if k.startswith("coverage::scene_coverage[")} == {"passed"}
    # every closed form runs and passes, except those needing a capability the example does not declare
    dynamics = {k: v for k, v in outcomes.items() if k.startswith("dynamics::")}
    skipped = {k: run.reason(k) for k, v in dynamics.items() if v != "passed"}
    assert len(skipped) < len(dynamics)
    for check in ("motor_torque_acceleration", "force_clamped_to_forcerange", "velocity_actuator_gain",
                  "joint_damping_decay", "armature_effective_inertia", "joint_limit_stops", "frictionloss_stops",
                  "frame_and_imu_sensors_definition", "accelerometer_at_rest_and_in_free_fall",
                  "body_velocity_at_frame_origin"):
        ids = [k for k in dynamics if k.split("[")[0] == f"dynamics::{check}"]  # one id per property
        assert ids and all(dynamics[k] == "passed" for k in ids), check
    # ... or a sensor type the example refuses by its MJCF feature name (dynamics::mjcf_force_sensors), or
    # gravity compensation, which its reader (mjcf_lite) refuses (dynamics::mjcf_gravcomp)
    refusals = tuple(f"refused {kind}_sensor" for kind in ("touch", "force", "torque")) + ("refused body_gravcomp",)
    assert all("does not declare capability" in r or any(x in r for x in refusals) for r in skipped.values()), skipped
    assert "scenes loaded 7 / 12" in run.out


@pytest.mark.parametrize(("scene", "feature"), sorted(REFUSED.items()))
def test_refusals_name_a_declared_scene_feature(scene, feature):
    with pytest.raises(UnsupportedCapabilityError, match=f"does not support capability '{feature}'") as info:
        make(scene)
    assert info.value.capability == feature and feature in ExampleBackend.UNSUPPORTED_SCENE_FEATURES
    assert str(kit.scene_path(scene)) in str(info.value)  # the detail names the file


def test_a_feature_outside_the_readers_subset_is_refused_by_name(tmp_path):
    path = tmp_path / "tendon.xml"
    path.write_text('<mujoco><tendon><fixed name="t"/></tendon></mujoco>')
    with pytest.raises(UnsupportedCapabilityError, match="'fixed_tendon'.*<tendon>") as info:
        ExampleBackend(SceneCfg(path), 1, 0.002)
    assert info.value.capability == "fixed_tendon"  # unisim_core.plugin.mjcf_features' name


@pytest.mark.parametrize(("option", "message"), [
    ("substeps=0", "substeps: expected an int >= 1, got 0"),
    ("substeps=True", "substeps: expected an int >= 1, got True"),
    ("np_dtype=int8", "np_dtype: expected float32 or float64, got int8"),
    ("seed=-1", "seed: expected a non-negative int, got -1"),
])
def test_bad_options_name_the_option_and_the_values_through_the_cli(capsys, option, message):
    rc = cli.main(["run", "--backend", "example", "--steps", "1", "--num-envs", "1", "--option", option])
    assert rc == 2 and capsys.readouterr().err.strip() == f"unisim run: error: {message}"


@pytest.mark.parametrize(("scene", "steps", "torque"), [
    ("double_pendulum", 1500, 0.0), ("fixed_arm", 250, 0.2), ("actuated_hinges", 300, 3.0),
    ("frictionloss_hinge", 300, 3.0)])
def test_trees_match_mujocos_semi_implicit_euler(scene, steps, torque):
    """Fixed-base hinge trees against MuJoCo built from the same file: MuJoCo's implicitfast is the
    same semi-implicit Euler with implicit damping and servo kv, so from a random state under random
    (clamped) ctrl the joint-space dynamics (mass matrix, bias, damping, armature, servos, forcerange,
    frictionloss) agree to round-off: 1e-9 rad after 1.5 s of the chaotic double pendulum. Joints
    stay inside their limits (ours are hard stops, MuJoCo's soft constraints), but for actuated_hinges'
    independent limited_joint, driven into its stop and left out."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    dt = kit.scene_dt(scene)
    b = make(scene)
    m = mujoco.MjModel.from_xml_path(str(kit.scene_path(scene)))
    m.opt.timestep = dt
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    d.qpos[:] = m.qpos0 + rng.uniform(-0.2, 0.2, m.nq)
    d.qvel[:] = rng.normal(0.0, 1.0, m.nv)
    d.ctrl[:] = torque * rng.uniform(-1.0, 1.0, m.nu)
    b.set_state(np.array([0]), d.qpos[None], d.qvel[None])
    low, high = b.get_joint_range().T
    stopped = np.zeros(m.nq, dtype=bool)
    for _ in range(steps):
        b.step(d.ctrl[None].copy())
        mujoco.mj_step(m, d)
        stopped |= (b.get_qpos()[0] <= low) | (b.get_qpos()[0] >= high)
    assert stopped.tolist() == [name == "limited_joint" for name in b.model_info.joint_names] or not stopped.any()
    np.testing.assert_allclose(b.get_qpos()[0, ~stopped], d.qpos[~stopped], rtol=0, atol=1e-9)
    np.testing.assert_allclose(b.get_qvel()[0, ~stopped], d.qvel[~stopped], rtol=0, atol=1e-8)


def test_pendulum_small_angle_period():
    """q'' = -(g/L) sin q with L = 1, I = m L^2 + 1e-6: T = 2 pi sqrt(L/g) (1 + q0^2/16) = 2.00638 s for
    q0 = 0.05 rad. Semi-implicit Euler is symplectic: its period error at h = 1 ms is O((w h)^2) ~ 1e-6
    relative, below the 1 ms sampling of the zero crossings (the tolerance)."""
    b = make("pendulum")
    b.set_state(np.array([0]), np.array([[0.05]]), np.zeros((1, 1)))
    q = np.empty(4500)
    for k in range(len(q)):
        b.step(np.zeros((1, 0)))
        q[k] = b.get_qpos()[0, 0]
    up = np.flatnonzero((q[:-1] < 0) & (q[1:] >= 0))
    period = np.diff(up) * 1e-3
    assert len(period) == 1 and abs(period[0] - 2 * np.pi / np.sqrt(9.81) * (1 + 0.05 ** 2 / 16)) <= 1.5e-3


def test_torque_free_spin_about_a_principal_axis_keeps_angular_momentum():
    """A free body spinning about its major axis z (I = 0.25, stable) with gravity acting on the COM only:
    world angular momentum R I w is conserved; explicit Euler on Euler's equations drifts O(h) per
    step, ~1e-6 relative over 1000 steps for w = (0.01, 0.01, 5) rad/s (tolerance 1e-4)."""
    b = make("free_body")
    w0 = np.array([[0.0, 0.0, 0.0, 0.01, 0.01, 5.0]])
    b.set_state(np.array([0]), b.get_qpos(), w0)
    inertia = np.diag([0.1, 0.2, 0.25])

    def momentum():
        return Q.quat_apply(b.get_qpos()[0, 3:7], inertia @ b.get_qvel()[0, 3:6])

    start = momentum()
    b.step(np.zeros((1, 0)), 1000)
    np.testing.assert_allclose(momentum(), start, rtol=0, atol=1e-4 * np.linalg.norm(start))


def test_substeps_split_sim_dt():
    """substeps=k integrates k steps of sim_dt / k: 1 s of free fall from rest with k = 4 equals 4 s of
    steps of 1/4 the size (z = 1 - g h^2 N(N+1)/2, exact for semi-implicit Euler: 1e-12)."""
    b = make("free_body", substeps=4)
    b.step(np.zeros((1, 0)), 500)  # 1 s at sim_dt 2 ms
    h, steps = 0.002 / 4, 2000
    assert b.get_qpos()[0, 2] == pytest.approx(1 - 9.81 * h * h * steps * (steps + 1) / 2, abs=1e-12)
