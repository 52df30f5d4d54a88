"""pluggy hook specifications through which a loaded plugin contributes to UniSim.

A plugin module named by a ``unisim.backends`` entry point implements any of
these with ``@unisim_core.contract.hooks.hookimpl``. Each hook is called per plugin, so
one failing plugin never breaks another.
"""

from __future__ import annotations

import pluggy

PROJECT = "unisim"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = ["hookspec", "hookimpl", "PROJECT", "UniSimHookSpecs", "bench_hooks"]


class UniSimHookSpecs:
    """Hooks a backend plugin may implement."""

    @hookspec
    def unisim_backend_spec(self):
        """Return the plugin's :class:`~unisim_core.contract.registry.BackendSpec` (static facts,
        no engine import)."""

    @hookspec
    def unisim_diagnostics(self):
        """Return ``{check: result}`` strings describing the plugin's runtime (for ``unisim info``)."""

    @hookspec
    def unisim_conformance_scenes(self):
        """Return ``{scene name: MJCF path}`` extra scenes for the conformance kit."""

    @hookspec
    def unisim_raw_stepper(self):
        """Return ``fn(scene, n, sim_dt, nsteps, backend, ctrl) -> (call, close)``: the engine's own
        batched loop doing the work of ``backend.step(ctrl, nsteps)`` + ``get_qpos()`` + ``get_qvel()``
        for ``n`` envs of the MJCF file ``scene`` (mirroring ``backend``'s options and keyframe);
        ``unisim bench`` reports the contract's ratio to it."""

    @hookspec
    def unisim_step_cost_probe(self):
        """Return ``fn(scene, sim_dt, nsteps, backend, ctrl) -> call``: ONE env doing the raw loop's
        work on one thread with the engine's plain API (write ``ctrl``, which is ``(1, nu)``, step
        ``nsteps`` substeps, read qpos and qvel). Its cost per call is the unit of the physical
        limit, ``cost x N / threads``, that ``unisim bench`` reports each backend's fraction of."""

    @hookspec
    def unisim_renderer(self):
        """Return ``make(model_file, num_envs, width, height, spacing, offset_mode, camera) -> renderer``:
        offscreen frames of the MJCF ``model_file``'s scene fed by any backend's state (the core's
        default ``capture_video_frame``, :mod:`unisim_core.contract._playback`). The renderer has ``num_drawn``
        (envs drawn, the first ones), ``nq``, ``mocap_bodies`` (names, in mocap order),
        ``draw(qpos (num_drawn, nq), mocap_pos (num_drawn, M, 3) | None, mocap_quat (num_drawn, M, 4)
        wxyz | None) -> (height, width, 3) uint8`` and ``close()``."""

    @hookspec
    def unisim_zoo_causes(self):
        """Return ``{model label: cause}``: why this plugin's backend deviates from MuJoCo on a model of
        ``unisim zoo`` (labels as the zoo names them: ``unitree_go1``, ``gymnasium/ant``), each cause
        measured with the zoo's protocol on a copy of the model with one change (contacts off, Euler
        for RK4, MuJoCo's inertia written explicitly, ...) whose deviation vanishes or shrinks to the
        figure named. The zoo shows it beside the cell (``unisim_core.tools.zoo.documented_causes``)."""


def bench_hooks(package: str) -> tuple:
    """``(unisim_raw_stepper, unisim_step_cost_probe)`` implementations for a plugin whose
    ``<package>._bench`` module defines ``raw_stepper`` and ``step_cost_probe``: that module (and
    its engine) is imported only when ``unisim bench`` asks. The plugin module binds both names."""
    import importlib

    @hookimpl
    def unisim_raw_stepper():
        return importlib.import_module(f"{package}._bench").raw_stepper

    @hookimpl
    def unisim_step_cost_probe():
        return importlib.import_module(f"{package}._bench").step_cost_probe

    return unisim_raw_stepper, unisim_step_cost_probe
