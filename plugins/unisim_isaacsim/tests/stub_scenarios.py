"""Scenarios run on the SDK stubs in a process of their own (``python stub_scenarios.py JSON``, JSON a list
of ``[name, device, model]``): each replays a PRE-FIX code path of the worker (or the fixed one) against a
stub rule on a fresh stub stage; the process prints one JSON line, ``{"name device model": result}``.
Used by test_isaacsim_stub_sdk.py; the stubs never load into the pytest process."""

from __future__ import annotations

import json
import sys
import tempfile

from isaacsim_testing.stub_sdk import install

install()

import isaaclab.sim as sim_utils  # noqa: E402
import numpy as np  # noqa: E402
import omni.usd  # noqa: E402
import torch  # noqa: E402
from isaaclab.actuators import ImplicitActuatorCfg  # noqa: E402
from isaaclab.app import AppLauncher  # noqa: E402
from isaaclab.assets import Articulation, ArticulationCfg  # noqa: E402
from isaaclab.sim.converters import MjcfConverter, MjcfConverterCfg  # noqa: E402
from isaacsim_testing.stub_sdk import lab_major  # noqa: E402

from unisim_core.plugin.mjcf_lite import load_mjcf  # noqa: E402
from unisim_isaacsim import worker  # noqa: E402
from unisim_isaacsim._layout import root_body_name  # noqa: E402
from unisim_isaacsim._usd_scene import isolate_articulation_root  # noqa: E402

ROBOT = "/World/envs/env_0/Robot"
DEVICE = "cuda:0"  # the scenario's (main sets it)


def _app():
    return AppLauncher(headless=True, device=DEVICE, enable_cameras=False).app


def _sim():
    physics = {"physx": sim_utils.PhysxCfg()} if lab_major() == 2 else {}
    if lab_major() == 3:
        import isaaclab_physx.physics as physx

        physics = {"physics": physx.PhysxCfg()}
    return sim_utils.SimulationContext(sim_utils.SimulationCfg(dt=0.005, device=DEVICE, **physics))


def _convert(model: str) -> str:
    _app().get_extension_manager().set_extension_enabled_immediate(worker.MJCF_IMPORTER, True)  # result ignored
    return MjcfConverter(MjcfConverterCfg(asset_path=model, usd_dir=tempfile.mkdtemp(), fix_base=False,
                                          make_instanceable=False, force_usd_conversion=True)).usd_path


def _robot(model: str, joint_pos: dict[str, float], *, move_fixed_root: bool):
    """Spawn ``model`` as env 0 and build its Articulation; ``move_fixed_root=False`` is the pre-fix root."""
    sim = _sim()
    usd = _convert(model)
    cfg = sim_utils.UsdFileCfg(usd_path=usd)
    cfg.func(ROBOT, cfg)
    info = load_mjcf(model).model_info()
    top = root_body_name(info.body_names, info.body_parent)
    fixed = move_fixed_root and not any(t == "free" for t in info.joint_types)
    root = isolate_articulation_root(omni.usd.get_context().get_stage(), ROBOT, top, fixed_base=fixed)
    acts = {"all": ImplicitActuatorCfg(joint_names_expr=[".*"], stiffness=10.0, damping=1.0)}
    robot = Articulation(ArticulationCfg(prim_path="/World/envs/env_.*/Robot", actuators=acts,
                                         init_state=ArticulationCfg.InitialStateCfg(joint_pos=joint_pos),
                                         articulation_root_prim_path=root[len(ROBOT):]))
    return sim, robot, info


def scenario(name: str, model: str) -> dict:
    if name == "init_qpos0":  # pre-fix: InitialStateCfg.joint_pos from qpos0 (0 for every hinge)
        sim, robot, info = _robot(model, {".*": 0.0}, move_fixed_root=True)
        sim.reset()
        return {"reset": "ok"}
    if name == "converter_name":  # pre-fix: the model file handed to the converter as it is named
        return {"usd": _convert(model)}
    if name == "extension_ignored":  # pre-fix: enable_extension's result ignored, the converter runs anyway
        usd = _convert(model)
        _sim()
        cfg = sim_utils.UsdFileCfg(usd_path=usd)
        cfg.func(ROBOT, cfg)
        return {"spawn": "ok"}
    if name == "fixed_root":  # pre-fix: ArticulationRootAPI left on the welded root body
        moved = {}
        for move in (False, True):
            omni.usd.get_context().__init__()
            sim, robot, info = _robot(model, {"elbow": 1.0}, move_fixed_root=move)
            sim.reset()
            moved[str(move)] = {"fixed_base": robot.is_fixed_base, "joints": sorted(robot.joint_names)}
        return moved
    if name == "refresh":  # pre-fix _refresh (every buffer dropped) vs the fixed one, after a joint write
        sim, robot, info = _robot(model, {"elbow": 1.0}, move_fixed_root=True)
        sim.reset()
        lab = worker._Lab2() if lab_major() == 2 else worker._Lab3()
        out = {}
        for label in ("prefix", "fixed"):
            J = len(robot.joint_names)
            target = np.full((1, J), 0.5 if label == "prefix" else 0.7)
            lab.write_joints(robot, torch.as_tensor(target, dtype=torch.float32, device=DEVICE),
                             torch.as_tensor(np.zeros((1, J)), dtype=torch.float32, device=DEVICE),
                             torch.as_tensor([0], dtype=torch.long, device=DEVICE))
            if label == "prefix":
                sim.forward()
                for buf in vars(robot.data).values():
                    if hasattr(buf, "timestamp") and hasattr(buf, "data"):
                        buf.timestamp = -1.0
                robot.update(0.0)
            else:
                lab.refresh(sim, robot)
            read = lab.tensor(robot.data.joint_pos).detach().cpu().numpy()[0]
            out[label] = float(np.max(np.abs(read - target[0])))
        return out
    if name == "contact_report":  # pre-fix: a ContactSensor over bodies without PhysxContactReportAPI
        from isaaclab.sensors import ContactSensor, ContactSensorCfg

        from unisim_isaacsim._usd_helpers import apply_contact_report

        out = {}
        for apply in (False, True):
            omni.usd.get_context().__init__()
            sim, robot, info = _robot(model, {".*_calf_joint": -1.8}, move_fixed_root=True)
            stage = omni.usd.get_context().get_stage()
            if apply:
                apply_contact_report(stage)
            top = root_body_name(info.body_names, info.body_parent)
            sensor = ContactSensor(ContactSensorCfg(prim_path=f"{ROBOT.replace('env_0', 'env_.*')}/{top}/.*"))
            try:
                sim.reset()
                out[str(apply)] = {"bodies": sensor.body_names}
            except RuntimeError as exc:
                out[str(apply)] = {"error": str(exc)}
        return out
    raise ValueError(f"unknown scenario {name!r}")


def main(specs: list[list[str]]) -> dict:
    global DEVICE
    out = {}
    for name, device, model in specs:
        omni.usd.get_context().__init__()  # a fresh stage and simulation context per scenario
        sim_utils.SimulationContext.instance_ = None
        DEVICE = device
        try:
            out[f"{name} {device} {model}"] = scenario(name, model)
        except Exception as exc:  # the test asserts on the stub's error
            out[f"{name} {device} {model}"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
