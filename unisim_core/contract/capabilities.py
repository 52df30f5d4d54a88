"""The capability model: one enum naming every optional feature of the contract."""

from __future__ import annotations

import enum

__all__ = ["Capability", "CONTRACT_VERSION", "parse_version", "version_in_range"]

#: Version of the SimBackend contract this core implements (major.minor).
CONTRACT_VERSION = "1.0"


class Capability(str, enum.Enum):
    """An optional feature. A backend lists those it honours in ``capabilities``.

    Calling a feature a backend does not declare raises
    :class:`~unisim_core.contract.errors.UnsupportedCapabilityError`.
    """

    CONTACTS = "contacts"  #: geometry collides (floors, feet, boxes on planes)
    CONTACT_FORCES = "contact_forces"  #: ``bind_contact_forces``: net contact force per body, contact state, air time
    CONTACT_FILTERS = "contact_filters"  #: ``bind_contact_forces(..., against=...)``: forces from chosen bodies only
    CONTACT_TORQUES = "contact_torques"  #: ``bind_contact_forces(..., torques=True)``: contact torques about COMs
    SENSORS = "sensors"  #: named model sensors through ``get_sensor_data``
    BODY_FORCE = "body_force"  #: world-frame external forces via ``apply_body_force``
    BODY_TORQUE = "body_torque"  #: world-frame external torques via ``apply_body_force``
    PUSH = "push"  #: ``push_robots`` (random planar push of the push body)
    SITE_JACOBIAN = "site_jacobian"  #: ``get_site_jacobian_w``
    HEIGHT_SCAN = "height_scan"  #: ``create_hfield_scanner`` on height-field terrain
    TERRAIN = "terrain"  #: ``get_terrain_spawn_data`` returns terrain metadata
    MOCAP = "mocap"  #: ``bind_mocap_pose``
    PRE_STEP_CONTROL = "pre_step_control"  #: ``set_pre_step_control`` callbacks per substep
    PHYSICS_SNAPSHOT = "physics_snapshot"  #: ``get_physics_state`` / ``set_physics_state``
    RENDER = "render"  #: ``init_renderer`` and ``render``
    VIDEO_CAPTURE = "video_capture"  #: ``capture_video_frame``
    PLAYBACK = "playback"  #: ``run_playback`` (offline video export)
    INIT_RANDOMIZATION = "init_randomization"  #: ``apply_init_randomization``
    INTERVAL_RANDOMIZATION = "interval_randomization"  #: ``apply_interval_randomization``
    RESET_RANDOMIZATION = "reset_randomization"  #: ``set_state(..., randomization=...)``
    DEVICE_ARRAYS = "device_arrays"  #: ``get_device_arrays`` (zero-copy DLPack views of the engine state)

    def __str__(self) -> str:
        return self.value


def parse_version(text: str) -> tuple[int, ...]:
    """``"1.2"`` → ``(1, 2)``. Raises ``ValueError`` naming the text when malformed."""
    try:
        return tuple(int(p) for p in text.strip().split("."))
    except ValueError:
        raise ValueError(f"malformed version {text!r}: expected dotted integers like '1.0'") from None


def version_in_range(version: str, spec: str) -> bool:
    """Whether ``version`` satisfies a comma-separated spec such as ``">=1.0,<2"``."""
    v = parse_version(version)
    ops = {
        ">=": lambda a, b: a >= b,
        "<=": lambda a, b: a <= b,
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        ">": lambda a, b: a > b,
        "<": lambda a, b: a < b,
    }
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        for sym in (">=", "<=", "==", "!=", ">", "<"):
            if clause.startswith(sym):
                bound = parse_version(clause[len(sym):])
                width = max(len(v), len(bound))
                pad = lambda t, n=width: t + (0,) * (n - len(t))  # noqa: E731
                if not ops[sym](pad(v), pad(bound)):
                    return False
                break
        else:
            raise ValueError(f"malformed version clause {clause!r} in {spec!r}")
    return True
