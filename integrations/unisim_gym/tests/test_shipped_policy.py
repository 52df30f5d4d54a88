"""The policy shipped in examples/locomotion (trained on MuJoCo only) on MuJoCo and, unchanged, on MotrixSim.

Bounds were measured first (see the numbers in each test) and are stated with a margin: these runs
are seeded (commands, resets) but not bit-reproducible across machines and library builds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from unisim_gym import evaluate_velocity_policy, load_policy

POLICY = Path(__file__).resolve().parents[3] / "examples" / "locomotion" / "policy.pt"


@pytest.fixture(scope="module")
def policy():
    return load_policy(POLICY)


def test_policy_file_is_small():
    assert POLICY.stat().st_size < 300_000  # bytes: TorchScript actor + observation normalizer


def test_shipped_policy_return_on_mujoco(policy):
    """16 envs x one 10 s episode. Measured: mean return 9.83 (seed 0; 9.39 with seed 1); standing
    still (zero action) gets 6.71. Stated bound: > 8.5."""
    ev = evaluate_velocity_policy(policy, "mujoco", num_envs=16, episodes_per_env=1, seed=0)
    assert ev.episodes == 16 and ev.mean_return > 8.5, ev


def test_shipped_policy_tracks_velocity_on_motrix(policy):
    """Sim2sim, no retraining: 16 envs x one 10 s episode on MotrixSim. Measured: v_xy error 0.317 m/s
    and 1 fall in 16 episodes (seed 0; 0.276 m/s and 1 fall with seed 1); standing still scores
    0.453 m/s. Stated bounds: < 0.39 m/s, at most 3 falls in 16 episodes."""
    ev = evaluate_velocity_policy(policy, "motrix", num_envs=16, episodes_per_env=1, seed=0)
    assert ev.lin_vel_error < 0.39 and ev.falls_per_100 <= 18.75, ev
