"""Deliberately broken backends for the kit's sameness checks of rules 4 (#38): each computes a
capability right where the presence checks look and wrong where only a known answer tells.

Referenced by ``test_kit_sameness.py``; ``EXPECTED`` maps each class to the checks it must fail.
"""

from __future__ import annotations

import numpy as np

from unisim_conformance._props import EFFECT_TERMS_4
from unisim_core.contract.heightfield import HeightScanner
from unisim_core.plugin.fake import FakeBackend


class _MisalignedScanner(HeightScanner):
    """Scans yaw-aligned requests in world axes and fully aligned ones yaw-aligned."""

    def __init__(self, backend, sampler, offsets, body_id, alignment, output):
        alignment = {"yaw": "world", "full": "yaw"}.get(alignment, alignment)
        super().__init__(backend, sampler, offsets, body_id, alignment, output)


class ScanAlignmentIgnored(FakeBackend):
    """Height scans right in world alignment (the presence check), wrong under a turned body."""

    name = "broken_scan_alignment"

    def _create_hfield_scanner(self, hfield_geom_id, offsets, frame_body_id, alignment, output):
        return _MisalignedScanner(self, self._height_field(hfield_geom_id), offsets, frame_body_id, alignment,
                                  output)


class JacobianFreeRootFrames(FakeBackend):
    """Site Jacobian with a free root's columns in the wrong frames (linear in the body frame, angular
    in the world frame): right on the fixed arm, wrong on the quadruped's foot."""

    name = "broken_jacobian_free_root"

    def _site_jacobian(self, site_id, dof_indices):
        jacp, jacr = (j.astype(np.float64) for j in super()._site_jacobian(site_id, np.arange(self.nv)))
        if self._root_v is not None:
            R = np.stack([jacr[:, :, self._root_v + 3 + i] for i in range(3)], axis=2)  # body axes in the world
            v = self._root_v
            jacp[:, :, v:v + 3] = R
            jacp[:, :, v + 3:v + 6] = np.einsum("nij,njk->nik", jacp[:, :, v + 3:v + 6], R.transpose(0, 2, 1))
            jacr[:, :, v + 3:v + 6] = np.eye(3)
        cast = lambda x: np.ascontiguousarray(x[:, :, dof_indices], dtype=self.np_dtype)
        return cast(jacp), cast(jacr)


#: The checks each broken backend must fail (and no other among those the test selects).
EXPECTED = {
    "ScanAlignmentIgnored": ("capabilities", ("capabilities::declared_works[height_scan-yaw_heights]",
                                              "capabilities::declared_works[height_scan-full_heights]")),
    "JacobianFreeRootFrames": ("capabilities", ("capabilities::declared_works[site_jacobian-velocity_fd]",
                                                "capabilities::declared_works[site_jacobian-angular_velocity]")),
}

try:
    from unisim_mujoco import MujocoBackend
except ImportError:  # the randomization one needs unisim-mujoco (its terms are MuJoCo's)
    MujocoBackend = None

if MujocoBackend is not None:

    class TermsStoredNotApplied(MujocoBackend):
        """The rules-4 randomization terms are stored (``get_model_field`` reads them back) but never
        reach the engine: the presence checks pass, the closed forms do not."""

        name = "broken_terms_not_applied"

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self._shadow = {t: super(TermsStoredNotApplied, self)._read_model_field(t) for t in EFFECT_TERMS_4}

        def _write_model_field(self, term, env_ids, target_ids, values):
            if term not in EFFECT_TERMS_4:
                return super()._write_model_field(term, env_ids, target_ids, values)
            self._shadow[term][np.ix_(env_ids, target_ids)] = values

        def _read_model_field(self, term):
            return self._shadow[term].copy() if term in EFFECT_TERMS_4 else super()._read_model_field(term)

    EXPECTED["TermsStoredNotApplied"] = ("dynamics", tuple(
        f"dynamics::randomized_term_takes_effect[{t}-randomized_env]" for t in EFFECT_TERMS_4))
