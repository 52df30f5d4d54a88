"""Property names of the checks split in kit rules 3 whose ids the kit's rules table lists too
(``_rules.SPLIT``): one source for the checks' parametrizations and the old id -> new ids table."""

from __future__ import annotations

__all__ = ["DECLARED_PROPS", "DECLARED_PROP_RULES", "BAD_INPUT_CASES", "BAD_INPUT_PROPS", "FORCE_CASE_PROPS", "READS",
           "COPY_PROPS", "EFFECT_TERMS", "EFFECT_TERMS_4", "EFFECT_ENVS", "REPLAY_PROPS", "bad_input_props"]

_DR = ("terms_listed", "targeted_env", "targeted_ids", "value_read_back", "state_terms", "finite_after_step",
       "undeclared_rejected", "undeclared_writes_nothing")
#: ``capabilities::declared_works[CAP-PROP]``: the properties each capability's exerciser records.
DECLARED_PROPS: dict[str, tuple[str, ...]] = {
    "contacts": ("rests_on_plane",), "contact_forces": ("resting_force",), "contact_filters": ("resting_force",),
    "contact_torques": ("resting_torque",),
    "sensors": ("framepos", "framequat", "bound_view", "bound_slices"), "body_force": ("velocity_change",),
    "body_torque": ("velocity_change",), "push": ("force_range", "acts_next_step"),
    "site_jacobian": ("shape", "jacp", "jacr", "dof_selection", "velocity_fd", "angular_velocity"),
    "height_scan": ("shape", "heights", "distance", "yaw_heights", "full_heights"),
    "terrain": ("spawn_data", "origins_grid", "origins_on_surface", "sample_height", "geom_id", "size"),
    "mocap": ("initial_pose", "per_env_write", "quat_wxyz", "body_pos_w"),
    "pre_step_control": ("called_per_substep", "fresh_state", "output_replaces_ctrl"),
    "physics_snapshot": ("tier", "shape", "time_column", "qpos_columns", "qvel_columns", "restore_reads",
                         "continuation"),
    "render": ("returns_none", "state_unchanged"),
    "video_capture": ("frame_shape", "pixels_change", "matches_mujoco"),
    "playback": ("mp4_written", "frames_match_mujoco"), "init_randomization": _DR, "interval_randomization": _DR,
    "reset_randomization": _DR,
    "device_arrays": ("shapes", "qpos_live", "qvel_live", "body_pos_live", "body_quat_live", "buffer_stable"),
}

#: Properties of ``DECLARED_PROPS`` added after the rest of their capability: ``(cap, prop)`` -> rules.
DECLARED_PROP_RULES: dict[tuple[str, str], int] = {
    ("video_capture", "matches_mujoco"): 4, ("playback", "frames_match_mujoco"): 4,
    ("site_jacobian", "velocity_fd"): 4, ("site_jacobian", "angular_velocity"): 4,
    ("height_scan", "yaw_heights"): 4, ("height_scan", "full_heights"): 4,
}

#: ``bad_input::rejected[CASE-PROP]``: the rejected calls, and what each one must do.
BAD_INPUT_CASES = (
    "step_ctrl_shape", "step_ctrl_envs", "step_ctrl_nan", "step_ctrl_inf", "step_ctrl_bool_dtype",
    "step_ctrl_object_dtype", "step_nsteps_zero", "step_nsteps_float", "set_state_env_out_of_range",
    "set_state_env_negative", "set_state_env_duplicate", "set_state_env_float", "set_state_qpos_shape",
    "set_state_qpos_rows", "set_state_qvel_shape", "set_state_qpos_nan", "set_state_qvel_inf", "set_state_zero_quat",
    "unknown_body", "unknown_joint", "unknown_site", "unknown_keyframe", "bare_string_names", "body_id_out_of_range",
    "rows_env_out_of_range", "unknown_sensor", "force_shape", "force_nan",
)
BAD_INPUT_PROPS = ("raises", "names_argument", "state_unchanged")
FORCE_CASE_PROPS = BAD_INPUT_PROPS + ("force_not_staged",)


def bad_input_props(case: str) -> tuple[str, ...]:
    return FORCE_CASE_PROPS if case.startswith("force") else BAD_INPUT_PROPS


#: ``state::nsteps_equals_repeated_steps[READ]``: the reads of ``_support.all_getters`` by name
#: (every sensor under get_sensor_data).
READS = ("get_qpos", "get_qvel", "get_base_pos", "get_base_quat", "get_base_lin_vel", "get_base_ang_vel", "get_dof_pos",
         "get_dof_vel", "get_body_pos_w", "get_body_quat_w", "get_body_lin_vel_w", "get_body_ang_vel_w",
         "get_body_pos_b", "get_body_quat_b", "get_body_lin_vel_b", "get_body_ang_vel_b", "get_sensor_data",
         "get_physics_state")
#: ``surface::copy_body_state_w_matches[PROP]``.
COPY_PROPS = ("out_pos", "out_quat", "out_lin_vel", "out_ang_vel", "returns_buffers")
#: ``dynamics::randomized_term_takes_effect[TERM-ENV]``.
EFFECT_TERMS = ("actuator_kd", "actuator_kp", "body_mass", "dof_armature", "dof_damping", "gravity")
#: The terms kit rules 4 added to it, each on its own closed form.
EFFECT_TERMS_4 = ("body_com_offset", "body_inertia", "dof_frictionloss", "geom_friction", "geom_size")
EFFECT_ENVS = ("randomized_env", "nominal_env")
#: ``determinism::reset_reproduces_trajectory[PROP]``.
REPLAY_PROPS = ("qpos_trajectory", "final_reads")
