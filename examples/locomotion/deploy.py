"""Export the shipped policy (ONNX + manifest), then run it in the deploy loop on any backend.

    python examples/locomotion/deploy.py --export /tmp/quadruped       # policy.onnx + policy.json (needs torch)
    python examples/locomotion/deploy.py --manifest /tmp/quadruped/policy.json --backend motrix --command 0.5 0 0.3

The deploy part imports numpy, onnxruntime and unisim_core only (no torch, no gymnasium): the
loop a real robot's controller runs, with the backend standing in for the robot's SDK.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from unisim_core import SceneCfg, create_backend
from unisim_core.tools.deploy import PolicyController
from unisim_core.tools.policy_manifest import PolicyManifest

HERE = Path(__file__).resolve().parent


def export(out: Path) -> None:
    from unisim_gym import export_policy  # training side: torch

    out.mkdir(parents=True, exist_ok=True)
    m = export_policy(HERE / "policy.pt", out / "policy.onnx")
    print(f"wrote {out / 'policy.onnx'} and {out / 'policy.json'} (max |ONNX - torch| {m.export_max_abs_diff:.1e})")


def deploy(manifest_path: Path, backend_name: str, command: list[float], seconds: float) -> None:
    manifest = PolicyManifest.load(manifest_path)
    robot = create_backend(backend_name, SceneCfg(manifest.model_file, default_keyframe="home"), 1, manifest.sim_dt)
    with robot:
        robot.set_state(np.arange(1), robot.get_default_qpos()[None], np.zeros((1, robot.nv), robot.np_dtype))
        controller = PolicyController(manifest, robot, manifest_path=manifest_path)  # refuses a mismatch by name
        steps_per_s = round(1.0 / (manifest.sim_dt * manifest.decimation))
        for k in range(round(seconds * steps_per_s)):
            obs = controller.observe(command)  # read the state, build the observation the manifest describes
            action = controller.act(obs)  # the ONNX policy, clipped
            robot.step(controller.targets(action), manifest.decimation)  # joint targets to the actuators
            if (k + 1) % steps_per_s == 0:
                v = robot.get_base_lin_vel()[0]
                print(f"t={(k + 1) / steps_per_s:4.1f} s  base height {robot.get_base_pos()[0, 2]:.3f} m  "
                      f"world velocity ({v[0]:+.2f}, {v[1]:+.2f}) m/s  yaw rate {robot.get_base_ang_vel()[0, 2]:+.2f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--export", type=Path, metavar="DIR", help="write policy.onnx and policy.json into DIR")
    p.add_argument("--manifest", type=Path, help="run this exported policy in the deploy loop")
    p.add_argument("--backend", default="mujoco")
    p.add_argument("--command", type=float, nargs=3, default=(0.5, 0.0, 0.0), metavar=("VX", "VY", "WZ"),
                   help="base-frame command: m/s, m/s, rad/s (default: 0.5 0 0)")
    p.add_argument("--seconds", type=float, default=4.0)
    a = p.parse_args(argv)
    if a.export is None and a.manifest is None:
        p.error("expected --export DIR, --manifest FILE or both")
    if a.export is not None:
        export(a.export)
    if a.manifest is not None:
        deploy(a.manifest, a.backend, list(a.command), a.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
