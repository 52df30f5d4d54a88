"""External wrenches in the worker (capabilities ``body_force``, ``body_torque``, ``push``).

The contract stages a world-frame force and torque on bodies for the next ``step`` (all its
substeps), acting at each body frame's origin. Isaac Lab keeps an external wrench per link and
applies it at every ``write_data_to_sim`` (Isaac Lab 2.3 ``Articulation.set_external_force_and_torque``
with ``is_global=True`` and ``positions``: PhysX's ``apply_forces_and_torques_at_position`` with world
forces, torques and points; Isaac Lab 3.0 the same through ``permanent_wrench_composer
.set_forces_and_torques_index``). The point is the link origin, read before every substep (the body
moves). A wrench on a mocap body does nothing, as in MuJoCo (``_mocap``). Each env's gravity
difference (randomized ``gravity``, :class:`~._model_fields.ModelFields`) acts at the link's COM and
joins the same wrench: moved to the origin, ``F`` and ``(c - o) x F``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Wrenches"]


class Wrenches:
    """Staged wrenches (engine rows, Isaac link ids) and their per-substep application."""

    def __init__(self, session: Any) -> None:
        self._s = session
        self._staged: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._engine_has_one = False

    def stage(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        """World ``force``/``torque`` ``(n, k, 3)`` at the origins of MuJoCo bodies ``body_ids``,
        replacing what was staged on them."""
        body_ids = np.asarray(body_ids, dtype=np.int64)
        if np.any(body_ids == 0):
            from unisim_core.contract.errors import InvalidInputError

            raise InvalidInputError("body_ids: body 0 is the world; it cannot take an external force")
        links = self._s.body_ids[body_ids]
        keep = links >= 0  # not a mocap body: kinematic, without dofs (MuJoCo's xfrc_applied moves none either)
        links, force = links[keep], np.asarray(force)[:, keep]
        torque = None if torque is None else np.asarray(torque)[:, keep]
        n, L = self._s.n, self._s.num_links
        if self._staged is None:
            self._staged = (np.zeros(L, bool), np.zeros((n, L, 3)), np.zeros((n, L, 3)))
        mask, f, t = self._staged
        mask[links] = True
        f[:, links] = force
        t[:, links] = 0.0 if torque is None else torque

    def clear(self) -> None:
        self._staged = None

    def apply(self) -> None:
        """Before a substep's ``write_data_to_sim``: the staged wrenches plus the gravity differences
        (nothing, once cleared in the engine, when neither is there)."""
        s = self._s
        gravity = s.fields.gravity_changed
        if self._staged is None and not gravity:
            if self._engine_has_one:
                z = np.zeros((s.n, s.num_links, 3))
                s.lab.set_wrench(s.robot, z, z, z)
                self._engine_has_one = False
            return
        origin = s.link_table("body_link_pos_w")
        force = np.zeros((s.n, s.num_links, 3))
        torque = np.zeros_like(force)
        if self._staged is not None:
            force += self._staged[1]
            torque += self._staged[2]
        if gravity:
            fg = s.fields.gravity_wrenches()
            force += fg
            torque += np.cross(s.link_table("body_com_pos_w") - origin, fg)
        s.lab.set_wrench(s.robot, force, torque, origin)
        self._engine_has_one = True
