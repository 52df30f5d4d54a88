"""Deliberately broken backends for the reliability rules of round three (issue #28): threads,
fork, close during a step, numpy subclasses, aliasing, model_info, memory, malformed files.

Each is the fake with one bug a real backend has had; ``EXPECTED`` maps it to the layer and the
check id it must fail (``test_kit_reliability.py``).
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.errors import InvalidInputError
from unisim_core.plugin.fake import FakeBackend


class UnguardedGetters(FakeBackend):
    """Reads its state without the call guard (as a backend whose getters bypass the base class)."""

    name = "broken_unguarded_getters"


# assigned after the class is made, so the base class's call guard does not wrap them
UnguardedGetters.get_qpos = FakeBackend.get_qpos.__wrapped__
UnguardedGetters.get_base_pos = FakeBackend.get_base_pos.__wrapped__


def _close_now(self) -> None:
    """close() that releases at once, whatever call is running."""
    if not self._closed:
        self._closed = True
        self._close()


class CloseNotDeferredFromThread(FakeBackend):
    """close() from another thread returns at once while a step is still running."""

    name = "broken_close_not_deferred_thread"
    close = _close_now


class CloseNotDeferredFromHook(FakeBackend):
    """close() from the pre-step hook lets the step run its remaining substeps on a closed backend."""

    name = "broken_close_not_deferred_hook"
    close = _close_now


class ReArmedAfterFork(FakeBackend):
    """Re-arms itself in a forked child: the child steps its copy of the parent's engine."""

    name = "broken_rearmed_after_fork"

    def _after_fork_in_child(self):
        self._forked, self._slot = False, [True]


class MaskedCtrlZeroed(FakeBackend):
    """Reads a masked ctrl as its filled values (masked entries become 0, as MuJoCo did)."""

    name = "broken_masked_ctrl_zeroed"

    def _check_ctrl(self, name, ctrl):
        if isinstance(ctrl, np.ma.MaskedArray):
            ctrl = np.ma.filled(ctrl, 0.0)
        return super()._check_ctrl(name, ctrl)


class AliasedForce(FakeBackend):
    """Keeps a reference to the caller's force array and reads it at the next step."""

    name = "broken_aliased_force"

    def apply_body_force(self, body_ids, force, torque=None):
        self._aliased = (np.asarray(body_ids), force)

    def _step(self, ctrl, nsteps):
        if getattr(self, "_aliased", None) is not None:
            ids, force = self._aliased
            self._xfrc[:, ids, :3] = force
            self._aliased = None
        super()._step(ctrl, nsteps)


class WritableModelInfo(FakeBackend):
    """Hands out model_info with writable qpos0 and gravity arrays (its own tables)."""

    name = "broken_writable_model_info"

    def _load_model_info(self):
        info = super()._load_model_info()
        object.__setattr__(info, "qpos0", np.array(info.qpos0))
        object.__setattr__(info, "gravity", np.array(info.gravity))
        return info


class WritableModelInfoRules2(WritableModelInfo):
    """The same bug in a backend written against kit rules 2 (before the read-only rule)."""

    name = "broken_writable_model_info_rules2"
    KIT_RULES = 2


class ShallowCopyable(FakeBackend):
    """copy.copy gives a second object owning the same engine state."""

    name = "broken_shallow_copyable"

    def __copy__(self):
        other = type(self).__new__(type(self))
        other.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_slot", "_owner")})
        return other


class ClaimsHugeNumEnvs(FakeBackend):
    """Accepts any num_envs by simulating one env and reporting the number it was given."""

    name = "broken_claims_huge_num_envs"

    def __init__(self, scene, num_envs, sim_dt, **options):
        super().__init__(scene, 1, sim_dt, **options)
        self._num_envs = num_envs


class UnnamedFileError(FakeBackend):
    """Reports a file that is not UTF-8 without naming it."""

    name = "broken_unnamed_file_error"

    def __init__(self, scene, num_envs, sim_dt, **options):
        with open(scene.model_file, "rb") as f:
            try:
                f.read().decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInputError("the model is not UTF-8 text") from None
        super().__init__(scene, num_envs, sim_dt, **options)


EXPECTED = {
    "UnguardedGetters": ("reliability", "reliability::concurrent_call_from_another_thread_is_refused"),
    "CloseNotDeferredFromThread": ("reliability", "reliability::close_from_another_thread_waits_for_the_step"),
    "CloseNotDeferredFromHook": ("reliability", "reliability::close_from_a_hook_is_deferred_to_the_end_of_the_step"),
    "ReArmedAfterFork": ("reliability", "reliability::forked_child_is_refused_and_the_parent_untouched"),
    "MaskedCtrlZeroed": ("reliability", "reliability::numpy_subclasses_and_array_likes_are_seen_through"),
    "AliasedForce": ("reliability", "reliability::staged_force_is_copied_at_the_boundary"),
    "WritableModelInfo": ("reliability", "reliability::model_info_arrays_are_read_only"),
    "ShallowCopyable": ("reliability", "reliability::pickling_and_copying_fail_closed"),
    "ClaimsHugeNumEnvs": ("reliability", "reliability::num_envs_beyond_memory_is_refused_naming_num_envs[1e30]"),
    "UnnamedFileError": ("reliability",
                         "reliability::malformed_model_files_are_unisim_errors_naming_the_file[non_utf8]"),
}
