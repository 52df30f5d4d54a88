"""A deliberately broken MJCF reader (a subclass of the MuJoCo backend): ``<body gravcomp>`` dropped.

Referenced by ``test_kit_gravcomp.py`` as ``broken_gravcomp_backends:GravcompDropped``; it must fail
each ``dynamics::mjcf_gravcomp`` check. It is the defect found in ``unisim_core.plugin.mjcf_lite`` (SAPIEN,
Genesis, the fake backend and the Isaac Sim worker read MJCF through it): the attribute was ignored,
so every compensated body fell with full gravity.
"""

from __future__ import annotations

from edited_scene import construct_edited

from unisim_mujoco import MujocoBackend


class GravcompDropped(MujocoBackend):
    """Loads the scene with every ``gravcomp`` attribute removed (a standalone file, as the kit's scene is)."""

    name = "broken_gravcomp_dropped"

    def __init__(self, scene, num_envs, sim_dt, **options) -> None:
        def drop(tree):
            for body in tree.iter("body"):
                body.attrib.pop("gravcomp", None)

        construct_edited(super().__init__, scene, drop, num_envs, sim_dt, **options)


#: The checks the broken backend must fail.
EXPECTED = tuple(f"dynamics::mjcf_gravcomp[{p}]" for p in ("float", "sink", "rise", "arm_full", "arm_half"))
