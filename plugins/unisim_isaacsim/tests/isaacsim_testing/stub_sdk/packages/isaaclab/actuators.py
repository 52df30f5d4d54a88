"""STUB ``isaaclab.actuators.ImplicitActuatorCfg`` (Isaac Lab 2.3.2 ``isaaclab/actuators/actuator_cfg.py``;
3.0.0 ``actuator_base_cfg.py``): the fields the worker sets."""

from isaaclab._cfg import MISSING, cfg_class

ImplicitActuatorCfg = cfg_class("ImplicitActuatorCfg", {
    "joint_names_expr": MISSING, "stiffness": MISSING, "damping": MISSING, "armature": None,
    "effort_limit_sim": None, "friction": None, "velocity_limit_sim": None})
