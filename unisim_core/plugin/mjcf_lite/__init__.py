"""A small, public MJCF reader (stdlib ``xml.etree`` + numpy) for engines without MJCF name tables.

:func:`load_mjcf` parses a file into a :class:`LiteModel`: plain tables (bodies in MuJoCo's
depth-first order, joints with ``qpos``/``qvel`` addresses, actuators, sensors, sites, geoms,
keyframes) and :meth:`LiteModel.model_info`, the contract's :class:`~unisim_core.contract.model.ModelInfo`.
It is what the fake backend, the Isaac Sim worker and third-party backends
(``examples/third_party_backend``) build their models from. Angles are converted to radians,
orientations to unit wxyz quaternions, axes normalized; defaults classes are resolved.

What it derives as MuJoCo's compiler does (each checked against ``mujoco.MjModel`` in
``tests/core/test_core_mjcf_lite.py``): ``<include>`` (:func:`read_tree`: the main file's folder
first, then the including file's); ``<default>`` classes (nested, ``class``/``childclass``);
inertia from geoms (``<compiler inertiafromgeom inertiagrouprange>``, geom ``mass``/``density``,
``shellinertia``, ``fromto``; several geoms diagonalised as ``mju_eig3`` does), mesh inertia
(binary STL, OBJ and inline ``vertex``/``face`` meshes, ``<mesh inertia="legacy|exact|shell" scale
refpos refquat>``, ``meshdir``; the mesh geom's inertial frame is the mesh's principal frame, while
the geom table keeps the file's pose), primitive geoms fitted to a mesh (``<geom type="capsule"
mesh=...>``: size and frame from the mesh's inertia box, or its bounding box under ``<compiler
fitaabb>``, times ``fitscale``; :mod:`._fit`), ``<compiler settotalmass>`` and ``fullinertia``; keyframe
quaternions normalised (a zero one becomes the identity); a hinge's ``ref`` as its ``qpos0``;
``inheritrange``; a joint's ``actuatorfrcrange`` folded into its one actuator's ``forcerange``;
geoms and sites numbered body by body; unnamed bodies, joints and ``<freejoint/>`` (name ``""``);
a body without ``<inertial>`` given no mass framed at its own pose (MuJoCo 4); ``<asset><model>`` +
``<attach model body prefix>`` (:mod:`._attach`: the subtree with its own defaults and compiler
conventions, prefixed names, the actuators/sensors/equalities/tendons/contacts acting on it, its keys).
``<frame>`` (:mod:`._frame`: dissolved into the poses of the bodies, joints, geoms and sites it holds).

The subset it reads (everything else raises :class:`MjcfLiteError`):

- ``<compiler angle eulerseq="xyz" autolimits inertiafromgeom inertiagrouprange>``; ``<option
  timestep gravity>`` with ``<flag gravity contact>`` (any other flag at MuJoCo 4's default, which changes
  nothing; one off its default only when the caller's engine reads the file's flags itself: ``option_flag``);
- bodies (``pos``, one of ``quat``/``euler``/``axisangle``/``xyaxes``/``zaxis``), one joint per
  body: ``<freejoint>``/``type="free"`` on a world child, ``hinge``, ``slide`` with ``pos axis
  range limited damping armature ref``; only when the caller accepts them (:data:`OPTIONAL_FEATURES`):
  ball joints (``ball_joint``: qpos ``wxyz``, 3 dofs, range ``[0, max]``),
  ``frictionloss``, ``stiffness``/``springref`` (``joint_stiffness``), several hinge/slide joints
  on one body (``multi_joint_body``, gymnasium's ``rootx``/``rootz``/``rooty``), a body's non-zero
  ``gravcomp`` (``body_gravcomp``, :attr:`LiteModel.body_gravcomp`) and a joint's
  ``actuatorgravcomp="true"`` above such a body (``joint_actuatorgravcomp``);
- sites; geoms as table values (``name type size fromto friction solref solimp contype
  conaffinity``; a mesh geom's ``size`` is left 0; a mesh geom giving mass whose inertia is not
  derived (``inertia="convex"``, other file formats) is refused as ``mesh_inertia``);
  ``light``/``camera`` skipped;
- joint actuators ``<motor gear>``, ``<position kp kv inheritrange>``, ``<velocity kv>`` with
  ``ctrlrange``/``forcerange`` (and their ``*limited``); a position actuator's ``dampratio`` only
  when the caller accepts it (``dampratio``: its engine resolves it as MuJoCo's compiler does), kv
  then from the mass matrix at ``qpos0`` as MuJoCo computes it (:mod:`._dampratio`);
- sensors ``jointpos jointvel framepos framequat framelinvel frameangvel gyro velocimeter
  accelerometer`` (frame sensors on sites, bodies or xbodies);
- ``<key name qpos>``; ``mesh``/``hfield``/``texture``/``material`` assets and ``<contact>``
  pairs are accepted (the reader records them, it does not collide anything: see
  :meth:`LiteModel.collision_pairs`);
- height fields, only when the caller collides with them (``accept={"hfield"}``; otherwise a
  ``type="hfield"`` geom raises with feature ``hfield``): ``<hfield>`` assets (inline ``elevation``,
  ``nrow``/``ncol`` zeros, PNG and MuJoCo's binary files) into :attr:`LiteModel.hfields` with the
  samples MuJoCo compiles (:mod:`._hfield`), each geom's ``hfield`` id, and
  :meth:`LiteModel.geom_pose_w` for static geoms;
- mocap bodies, only when the caller poses them (``accept={"mocap"}``): :attr:`LiteModel.body_mocap`,
  ``ModelInfo.mocap_body_names``, and MuJoCo's collision filter for them (a mocap body is its own weld, static);
- grippers and hands, each only when accepted: actuators on tendons (``tendon_transmission``:
  :attr:`LiteModel.tendons` with a fixed tendon's joints and coefficients, the actuator's ``tendon``, its
  ``dampratio`` kv through the tendon's moment), ``<general>`` servos with their own ctrl gain
  (``general_actuator``: ``gain u - kp q - kv qd``), spatial tendons and tendon equalities counted
  (``spatial_tendon``, ``tendon_equality``), ``tendonpos``, ``subtreecom``, ``subtreelinvel`` and frame-axis
  sensors (``<tag>_sensor``); frame sensors of geoms (``objtype="geom"``) always.

Outside the subset (tendons, equality constraints, ball joints, several joints in one body or joint
stiffness unless accepted, other actuators, transmissions or sensors, ``boundmass``/
``boundinertia``/``balanceinertia``, ...) :class:`MjcfLiteError` names the file, the element and
the attribute, and its ``feature`` is the :mod:`unisim_core.plugin.mjcf_features` name (``"fixed_tendon"``,
``"weld_equality"``, ``"site_transmission"``, ``"ball_joint"``, ``"mesh_inertia"``, ...) so a
backend refuses the scene with ``UnsupportedCapabilityError(self.name, exc.feature, str(exc))``:
a scene is never silently simulated as something else.
"""

from __future__ import annotations

from unisim_core.contract.mjcf_tree import read_tree
from unisim_core.plugin.mjcf_lite._dampratio import mass_matrix0
from unisim_core.plugin.mjcf_lite._errors import MjcfLiteError
from unisim_core.plugin.mjcf_lite._model import (
                                                 FRAME_AXES,
                                                 SENSOR_DIMS,
                                                 LiteModel,
                                                 collision_candidates,
                                                 in_reference_frame,
)
from unisim_core.plugin.mjcf_lite._reader import OPTIONAL_FEATURES, load_mjcf

__all__ = ["MjcfLiteError", "LiteModel", "load_mjcf", "read_tree", "collision_candidates", "OPTIONAL_FEATURES",
           "FRAME_AXES", "SENSOR_DIMS", "in_reference_frame", "mass_matrix0"]
