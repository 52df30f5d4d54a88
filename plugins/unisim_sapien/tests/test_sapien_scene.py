"""Building MJCF scenes as PhysX articulations: known answers and refusals by feature."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance import scene_path
from unisim_core import SceneCfg, UnsupportedCapabilityError, create_backend


def test_ball_rests_on_the_height_field_plateau():
    """hfield_terrain: the plateau is at z = 0.4 (elevation 1 x hz 0.4); the 0.1 m ball rests at 0.5."""
    b = create_backend("sapien", SceneCfg(model_file=str(scene_path("hfield_terrain"))), 1, 0.002)
    b.step(np.zeros((1, 0), np.float32), 600)
    assert b.get_qpos()[0, 2] == pytest.approx(0.5, abs=2e-3)
    assert b.get_qpos()[0, 0] == pytest.approx(1.0, abs=1e-3)


def _scene(tmp_path, body: str, extra: str = "") -> str:
    path = tmp_path / "s.xml"
    path.write_text(f"""<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>{body}</worldbody>
      {extra}</mujoco>""")
    return str(path)


_SPHERE = '<geom type="sphere" size="0.1" mass="1" contype="2" conaffinity="2"/>'
CHAIN = (f'<body name="b1" pos="0 0 1"><freejoint/>{_SPHERE}<body name="b2" pos="0 0 0.5"><joint type="hinge"/>'
         f'{_SPHERE}<body name="b3" pos="0 0 0.5"><joint type="hinge"/>{_SPHERE}</body></body></body>')


@pytest.mark.parametrize("body, extra, feature", [
    ('<body pos="0 0 1"><freejoint/><geom type="ellipsoid" size="0.1 0.2 0.3" mass="1"/></body>', "", "ellipsoid_geom"),
    ('<body pos="0 0 1"><freejoint/><geom name="a" type="sphere" size="0.1" mass="1"/></body>',
     '<contact><pair geom1="floor" geom2="a"/></contact>', "contact_pair"),
    (CHAIN, '<contact><exclude body1="b1" body2="b3"/></contact>', "contact_filter"),
    (CHAIN, "", None),
])
def test_scene_features_physx_cannot_build_are_refused_by_name(tmp_path, body, extra, feature):
    """An <exclude> of a grandparent/grandchild pair is a filter PhysX's groups cannot express; without
    it both engines collide that pair (and neither a jointed parent/child pair), so it is built."""
    path = _scene(tmp_path, body, extra)
    if feature is None:
        create_backend("sapien", SceneCfg(model_file=path), 1, 0.002).close()
        return
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("sapien", SceneCfg(model_file=path), 1, 0.002)
    assert info.value.capability == feature
