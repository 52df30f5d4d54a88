"""What the backend hands Genesis' importer and what it adds around it: the file flattened as MuJoCo reads
it (includes, asset folders), and height fields as terrain entities on MuJoCo's triangles."""

from __future__ import annotations

import os

import numpy as np
import pytest
from genesis_testutil import require_genesis

require_genesis()

from unisim_core import SceneCfg, UnsupportedCapabilityError, create_backend  # noqa: E402
from unisim_core import quat as Q  # noqa: E402
from unisim_core.plugin.mjcf_lite import read_tree  # noqa: E402
from unisim_genesis import GenesisBackend  # noqa: E402
from unisim_genesis._mjcf import flattened_mjcf  # noqa: E402

#: A bumpy 5 x 4 field (0.4 m square cells), offset and turned 30 degrees: every cell is non-planar, so
#: the diagonal each engine splits it along shows in the surface.
BUMPS = """<mujoco model="bumps">
  <asset>
    <hfield name="hf" nrow="5" ncol="4" size="0.6 0.8 0.3 0.1"
      elevation="0 1 0.2 0.7  0.5 0.1 0.9 0.3  0.8 0.4 0 0.6  0.2 0.9 0.5 0.1  0.6 0 0.3 1"/>
  </asset>
  <worldbody>
    <geom name="terrain" type="hfield" hfield="hf" pos="0.3 -0.2 0.05" euler="0 0 30"/>
    <body name="ball" pos="0 0 1"><freejoint name="root"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.004 0.004 0.004"/><geom type="sphere" size="0.05" mass="0"/>
    </body>
  </worldbody>
</mujoco>
"""


#: What Genesis' importer needs help with, in one scene: several joints on one body, joints with ``ref`` (an
#: actuator's law and a spring measured from 0 by MuJoCo, from qpos0 by Genesis), joint stiffness and limits,
#: unnamed bodies, a ball joint, a joint equality (polycoef), an inert fixed tendon, bodies with gravcomp 1 and
#: 0.5, motor, position, velocity and general (own ctrl gain: 0.4 u - 6 q - 0.5 qd) actuators, a motor on a site
#: (a wrench in the site frame, force-clamped), MuJoCo's default solref (Genesis' importer would put its own),
#: actuatorpos/magnetometer/cutoff/subtree sensors.
FEATURES = """<mujoco model="features">
  <compiler angle="radian"/>
  <option timestep="0.002" integrator="{integrator}"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="ax" type="slide" axis="1 0 0" ref="0.1" damping="1"/>
      <joint name="az" type="slide" axis="0 0 1" damping="1"/>
      <joint name="ay" type="hinge" axis="0 1 0" ref="0.3" stiffness="2" springref="0.3" range="-1 1"/>
      <inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <body pos="0 0 -0.3">
        <joint name="b1" type="hinge" axis="1 0 0" ref="0.2" range="-0.5 0.8"/>
        <inertial pos="0 0 -0.1" mass="0.5" diaginertia="0.01 0.01 0.01"/>
        <body pos="0 0 -0.3">
          <joint name="c1" type="hinge" axis="0 1 0" damping="0.1"/>
          <inertial pos="0 0 -0.1" mass="0.5" diaginertia="0.01 0.01 0.01"/>
        </body>
      </body>
    </body>
    <body name="held" pos="1 0 1" gravcomp="1">
      <joint name="h1" type="hinge" axis="0 1 0" damping="0.05"/>
      <joint name="h2" type="hinge" axis="1 0 0" damping="0.05"/>
      <inertial pos="0 0 -0.3" mass="2" diaginertia="0.02 0.02 0.01"/>
      <body name="half" pos="0 0 -0.4" gravcomp="0.5">
        <joint name="h3" type="hinge" axis="0 1 0" damping="0.05"/>
        <inertial pos="0.1 0 -0.2" mass="1" diaginertia="0.01 0.01 0.005"/>
      </body>
    </body>
    <body name="swing" pos="-1 0 1">
      <joint name="ball" type="ball" damping="0.05"/>
      <inertial pos="0.1 0.05 -0.3" mass="1" diaginertia="0.03 0.02 0.01"/>
      <site name="push" pos="0.1 0 -0.3" euler="0.3 0 0.5"/>
    </body>
  </worldbody>
  <equality><joint joint1="h2" joint2="c1" polycoef="0 0.5 0 0 0"/></equality>
  <tendon><fixed name="inert"><joint joint="ax" coef="1"/><joint joint="ay" coef="-1"/></fixed></tendon>
  <actuator>
    <position name="pax" joint="ax" kp="50" kv="2"/>
    <position name="pay" joint="ay" kp="20" kv="1"/>
    <position name="pb1" joint="b1" kp="10" kv="0.5"/>
    <motor name="mc1" joint="c1"/>
    <velocity name="vh1" joint="h1" kv="0.5"/>
    <general name="gh2" joint="h2" gainprm="0.4" biasprm="0 -6 -0.5" biastype="affine"/>
    <motor name="thrust" site="push" gear="1 0 0.5 0 0.2 0" ctrlrange="-1 1" forcerange="-0.15 0.15"/>
  </actuator>
  <sensor>
    <actuatorpos name="b1_length" actuator="pb1"/>
    <magnetometer name="compass" site="push"/>
    <framepos name="clipped" objtype="site" objname="push" cutoff="0.5"/>
    <jointvel name="c1_vel" joint="c1"/>
    <subtreecom name="a_com" body="a"/>
    <subtreelinvel name="held_vel" body="held"/>
    <subtreeangmom name="held_angmom" body="held"/>
    <frameyaxis name="push_y" objtype="site" objname="push"/>
    <framezaxis name="up" objtype="body" objname="world" reftype="site" refname="push"/>
  </sensor>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["implicitfast", "RK4"])
def test_file_features_follow_mujoco(tmp_path, integrator):
    """FEATURES held at fixed controls for 0.6 s: Genesis' qpos and sensors (the site's position clipped at
    its cutoff) equal MuJoCo's to 1e-12 with implicitfast (measured 5.6e-16, 6.7e-16). RK4, which the backend
    runs as MuJoCo's Runge-Kutta over Genesis' Euler forward dynamics, equals it to 1e-16 on hinges and
    slides; on the ball joint's quaternion MuJoCo 4.0.1's mj_RungeKutta differs from the same tableau built on
    mj_integratePos by ~3e-9 per step (a pure MuJoCo re-implementation shows it too), 7.4e-8 after 300 steps
    here (sensors 7.9e-8): tolerance 1e-6. Without the backend's corrections the joint equality alone moved
    1e-3 rad (Genesis' own solref) and every ref'd actuator pulled to another target."""
    path = tmp_path / "features.xml"
    path.write_text(FEATURES.format(integrator=integrator))
    traces, sensors = {}, {}
    for name in ("mujoco", "genesis"):
        sim = create_backend(name, SceneCfg(str(path)), 2, 0.002, np_dtype=np.float64)
        ctrl = np.tile(np.linspace(0.3, -0.2, sim.num_actuators), (2, 1))
        traces[name] = np.array([(sim.step(ctrl, 1), sim.get_qpos())[1] for _ in range(300)])
        sensors[name] = sim.get_sensor_data_batch(sim.model_info.sensor_names)
        sim.close()
    tol = 1e-12 if integrator == "implicitfast" else 1e-6
    np.testing.assert_allclose(traces["genesis"], traces["mujoco"], rtol=0, atol=tol)
    np.testing.assert_allclose(sensors["genesis"], sensors["mujoco"], rtol=0, atol=tol)
    assert np.ptp(traces["mujoco"][:, 0], axis=0).max() > 0.3  # it moves


@pytest.mark.parametrize(("extra", "feature"), [
    ('<tendon><fixed name="t" limited="true" range="-1 1"><joint joint="j" coef="1"/></fixed></tendon>',
     "fixed_tendon"),
    ('<equality><joint joint1="j" joint2="k" active="false"/></equality>', "joint_equality_inactive"),
    ("", "joint_springref"),
    ('<worldbody><body name="m" mocap="true" pos="0 0 2"><geom size="0.1"/></body>'
     '<body name="f" pos="0 0 3"><freejoint/><geom size="0.1"/></body></worldbody>', "mocap"),
])
def test_what_genesis_would_simulate_otherwise_is_refused(tmp_path, extra, feature):
    """Refused by name before anything is built: a tendon that acts (Genesis has no tendons), an equality that
    starts inactive (Genesis' importer activates every one), a spring toward another point than ref (Genesis
    pulls toward qpos0), a mocap body that collides (Genesis fixes it to its world link, which it cannot pose
    per env)."""
    spring = ' stiffness="1" springref="0.5"' if feature == "joint_springref" else ""
    path = tmp_path / "scene.xml"
    path.write_text(f'<mujoco><worldbody><body name="b"><joint name="j"{spring}/><inertial pos="0 0 0" mass="1" '
                    'diaginertia="1 1 1"/><body name="c"><joint name="k"/><inertial pos="0 0 0" mass="1" '
                    f'diaginertia="1 1 1"/></body></body></worldbody>{extra}</mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        GenesisBackend(SceneCfg(str(path)), 1, 0.002, device="cpu")
    assert info.value.capability == feature


def test_flattened_text_resolves_includes_and_asset_folders_as_mujoco(tmp_path):
    """A nested include is looked up from the main file's folder (Genesis' importer took the including file's
    path for a folder: pal_tiago), and <compiler assetdir> becomes the absolute meshdir/texturedir MuJoCo uses
    (Genesis' importer overrode it with its own folder: google_robot); an explicit meshdir wins over assetdir."""
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "leaf.xml").write_text('<mujoco><worldbody><body name="leaf"/></worldbody></mujoco>')
    (tmp_path / "robot.xml").write_text('<mujoco><compiler assetdir="assets" meshdir="meshes"/>'
                                        '<include file="parts/leaf.xml"/></mujoco>')
    (tmp_path / "scene.xml").write_text('<mujoco><include file="robot.xml"/></mujoco>')
    text = flattened_mjcf(read_tree(tmp_path / "scene.xml"), str(tmp_path / "scene.xml"))
    assert "<include" not in text and 'name="leaf"' in text and "assetdir" not in text
    assert f'meshdir="{os.path.join(tmp_path, "meshes")}"' in text
    assert f'texturedir="{os.path.join(tmp_path, "assets")}"' in text


def test_height_field_surface_is_mujocos_triangles(tmp_path):
    """Genesis' terrain height at 400 random points of a bumpy, offset, turned field equals the core's sampler
    (MuJoCo's triangulated surface, == mj_ray) to 1e-12 m: same samples, same placement, same diagonals (the
    other diagonal would differ by up to 0.24 m at a cell centre here)."""
    path = tmp_path / "bumps.xml"
    path.write_text(BUMPS)
    sim = GenesisBackend(SceneCfg(str(path)), 1, 0.002, device="cpu", np_dtype=np.float64)
    sampler = sim._height_field(sim.get_geom_id("terrain"))
    (terrain, _), = sim._terrains.values()
    local = np.random.default_rng(0).uniform([-0.59, -0.79], [0.59, 0.79], (400, 2))
    xy = Q.quat_apply(Q.quat_from_yaw(np.pi / 6), np.c_[local, np.zeros(400)])[:, :2] + [0.3, -0.2]
    genesis_z = terrain.get_terrain_height(xy).cpu().numpy().reshape(-1)
    np.testing.assert_allclose(genesis_z, sampler.at(xy[:, 0], xy[:, 1]), rtol=0, atol=1e-12)
    assert np.ptp(genesis_z) > 0.2
    sim.close()
