"""Versioned kit rules: which rules a check belongs to, what a backend declares, ids that were split.

The kit's rules are numbered (``KIT_RULES``, the newest). A backend says which rules it was
written against with the class attribute ``KIT_RULES = N`` (``unisim_core.SimBackend.KIT_RULES``;
``None``, the default, is read as rules 1, the first release). Every check belongs to the rules
that introduced it: its ``rules(N)`` marker (on the function, a module's ``pytestmark`` or a
``pytest.param``), else its layer's entry in ``LAYER_RULES``. A failure of a check newer than the
backend's declared rules is reported as *new since rules M* with the CHANGELOG entry that says
what to add (``unisim check`` and the kit's summary name it); it still fails.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KIT_RULES", "RULES", "LAYER_RULES", "SPLIT", "rules_of", "declared_rules", "split_into"]

#: The newest rules this kit applies.
KIT_RULES = 4

#: One line per rules version (the CHANGELOG's "Kit rules N" sections say what a backend adds).
RULES = {
    1: "kit 0.1.0: surface, conventions, state, determinism, physics, capabilities, bad_input, parity",
    2: "dynamics, reference, coverage and reliability layers; refusals declared in UNSUPPORTED_SCENE_FEATURES "
       "(strict); KNOWN_KIT_DEVIATIONS; snapshot tiers; actuator gain values",
    3: "one property per check id (split ids, see SPLIT); non-root link velocities at the frame origin; "
       "getters return fresh arrays in np_dtype; contact forces and torques; MJCF touch/force/torque sensors; the "
       "reliability checks of threads, fork, array-likes, staged forces, read-only model info, pickling, memory and "
       "malformed files",
    4: "sameness, not only presence: capabilities proven equal on scenes with known answers; many contacts held "
       "at once (no contact dropped in silence)",
}

#: Rules that introduced each layer's checks (a ``rules(N)`` marker overrides it per check).
LAYER_RULES = {
    "surface": 1, "conventions": 1, "state": 1, "determinism": 1, "physics": 1, "capabilities": 1,
    "bad_input": 1, "parity": 1, "dynamics": 2, "reference": 2, "coverage": 2, "reliability": 2, "contacts": 3,
}

#: Ids of rules 2 split in rules 3 (one property per id): old id -> new ids. A declaration that
#: names an old id matches nothing; the kit names its new ids so the author declares only the
#: ones that fail.
SPLIT: dict[str, tuple[str, ...]] = {}


def _split(old: str, params: list[str] | tuple[str, ...], name: str | None = None) -> None:
    base = name or old.split("[", 1)[0]
    pre = old[old.index("[") + 1:-1] + "-" if "[" in old else ""
    SPLIT[old] = tuple(f"{base}[{pre}{p}]" for p in params)


for _old, _params in {
    "conventions::yaw_quat_wxyz": ["get_base_quat", "get_body_quat_w", "get_qpos", "get_body_pose_w"],
    "conventions::ang_vel_frames": ["get_base_ang_vel", "get_body_ang_vel_w", "get_body_ang_vel_b", "get_qvel"],
    "conventions::lin_vel_frames": ["get_base_lin_vel", "get_body_lin_vel_w", "get_body_lin_vel_b"],
    "conventions::base_frame_identity": ["get_body_pos_b", "get_body_quat_b", "get_body_pos_w", "get_body_quat_w",
                                         "get_base_pos"],
    "conventions::hinge_body_orientation": ["get_body_quat_w", "get_dof_pos"],
    "conventions::ctrl_range_layout": ["quadruped", "fixed_arm", "joint_range"],
    "conventions::joint_index_helpers": ["actuator_joint_names", "dof_pos", "dof_vel", "dof_coverage",
                                         "default_dof_pos"],
    "conventions::root_state_layout": ["free_root", "non_root_rejected"],
    "state::set_state_visible_immediately": ["base_pos", "body_pos_w", "base_lin_vel"],
    "state::get_set_round_trip": ["get_qpos", "get_qvel", "get_base_pos", "get_base_quat", "get_dof_pos",
                                  "get_body_pos_w"],
    "state::keyframe_and_default_round_trip": ["keyframe_values", "keyframe_round_trip", "default_qpos",
                                               "default_round_trip", "default_keyframe"],
    "physics::free_fall": ["z", "vz", "xy"],
    "physics::pendulum_period": ["period", "amplitude"],
    "physics::body_force_acceleration": ["staged_step", "cleared_after"],
    "physics::box_friction_threshold": ["below", "above"],
    "dynamics::position_actuator_gain_and_steady_state": ["gain", "peak_time", "steady_state"],
    "dynamics::joint_limit_stops": ["position", "velocity"],
    "dynamics::frictionloss_stops": ["decelerating", "stopped", "travel"],
    "dynamics::joint_sensors_equal_state": ["damped_pos", "damped_vel", "motor_pos", "motor_vel"],
    "dynamics::frame_and_imu_sensors_definition": ["imu_pos", "imu_quat", "imu_linvel", "imu_angvel", "imu_vel",
                                                   "imu_gyro"],
    "dynamics::accelerometer_at_rest_and_in_free_fall": ["at_rest", "free_fall"],
    "dynamics::gyro_of_a_swinging_hinge": ["gyro", "jointvel"],
    "dynamics::body_velocity_at_frame_origin": ["root_lin_w", "root_ang_w", "root_lin_w_after_step"],
    "surface::getters_return_copies": ["get_qpos", "get_base_pos", "get_dof_pos"],
    "state::set_state_subset_isolation": ["untouched_envs_unchanged", "listed_envs_changed"],
    "determinism::identical_envs_stay_identical": ["qpos_trajectory", "final_reads"],
    "determinism::two_instances_agree": ["qpos_trajectory", "final_reads"],
    "coverage::scene_coverage": ["declared_refusals", "declarations_used", "articulated_scene_loads"],
}.items():
    _split(_old, _params)
for _scene in ("quadruped", "pendulum"):
    _split(f"surface::getter_shapes_dtypes[{_scene}]", ["shape", "dtype", "contiguous", "finite"])
for _scene in ("quadruped", "fixed_arm", "pendulum"):
    _split(f"surface::model_tables_consistent[{_scene}]", ["actuators", "dofs", "bodies", "geoms", "defaults",
                                                            "gravity"])
for _scene in ("quadruped", "actuated_hinges"):
    _split(f"surface::actuator_gains_values[{_scene}]", ["kp", "kd"])


def _rules3_split() -> None:
    """The bundled checks split last in rules 3 (their property names live in ``_props``)."""
    from . import _props as P

    for cap, props in P.DECLARED_PROPS.items():
        _split(f"capabilities::declared_works[{cap}]", props)
    for case in P.BAD_INPUT_CASES:
        _split(f"bad_input::rejected[{case}]", P.bad_input_props(case))
    for term in P.EFFECT_TERMS:
        _split(f"dynamics::randomized_term_takes_effect[{term}]", P.EFFECT_ENVS)
    _split("surface::copy_body_state_w_matches", P.COPY_PROPS)
    _split("state::nsteps_equals_repeated_steps", P.READS)
    _split("determinism::reset_reproduces_trajectory", P.REPLAY_PROPS)


_rules3_split()


def _reference_split() -> None:
    from .reference import list_references
    from .reference.replay import QUANTITIES

    for name in list_references():
        _split(f"reference::trajectory[{name}]", QUANTITIES)


_reference_split()


#: Capabilities added after kit rules 1: a check parametrized by one (``cap``) belongs to these rules.
CAPABILITY_RULES = {"contact_forces": 3, "contact_filters": 3, "contact_torques": 3}


def rules_of(item: Any, layer: str) -> int:
    """The rules that introduced a kit item: its closest ``rules(N)`` marker, else the rules of the
    capability it is parametrized by (``CAPABILITY_RULES``), else its layer's."""
    mark = item.get_closest_marker("rules")
    if mark is not None and mark.args:
        return int(mark.args[0])
    cap = getattr(getattr(item, "callspec", None), "params", {}).get("cap")
    if cap is not None and str(getattr(cap, "value", cap)) in CAPABILITY_RULES:
        return CAPABILITY_RULES[str(getattr(cap, "value", cap))]
    return LAYER_RULES.get(layer, KIT_RULES)


def declared_rules(backend: Any) -> tuple[int, bool]:
    """``(rules, declared)``: the backend's ``KIT_RULES`` (an int >= 1), or ``(1, False)`` when unset."""
    value = getattr(backend, "KIT_RULES", None)
    if value is None:
        return 1, False
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"KIT_RULES of {type(backend).__name__}: expected an int >= 1 (kit rules version), "
                        f"got {value!r}")
    return value, True


def split_into(key: str) -> tuple[str, ...] | None:
    """The new ids of an id split in rules 3 (``None`` for an id that was not split)."""
    return SPLIT.get(key)
