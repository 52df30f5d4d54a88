"""A small, public MJCF reader (stdlib ``xml.etree`` + numpy) for engines without MJCF name tables.

:func:`load_mjcf` parses a file into a :class:`LiteModel`: plain tables (bodies in MuJoCo's
depth-first order, joints with ``qpos``/``qvel`` addresses, actuators, sensors, sites, geoms,
keyframes) and :meth:`LiteModel.model_info`, the contract's :class:`~unisim_core.model.ModelInfo`.
It is what the fake backend, the Isaac Sim worker and third-party backends
(``examples/third_party_backend``) build their models from. Angles are converted to radians,
orientations to unit wxyz quaternions, axes normalized; defaults classes are resolved.

The subset it reads (everything else raises :class:`MjcfLiteError`):

- ``<compiler angle eulerseq="xyz" autolimits>``; ``<option timestep gravity>`` with
  ``<flag gravity contact>``; ``<default>`` classes (nested, ``class``/``childclass``);
- bodies (``pos``, one of ``quat``/``euler``/``axisangle``), an explicit
  ``<inertial pos quat mass diaginertia>`` (massless bodies may omit it), at most one joint per
  body: ``<freejoint>``/``type="free"`` on a world child, ``hinge``, ``slide`` with ``pos axis
  range limited damping armature`` (``frictionloss`` only when the caller accepts it, see
  :data:`OPTIONAL_FEATURES`);
- sites (``pos``, orientation); geoms as table values only (``name type size fromto friction
  solref solimp contype conaffinity``; no meshes); ``light``/``camera`` are skipped;
- joint actuators ``<motor gear>``, ``<position kp kv>``, ``<velocity kv>`` with
  ``ctrlrange``/``forcerange`` (and their ``*limited``);
- sensors ``jointpos jointvel framepos framequat framelinvel frameangvel gyro velocimeter
  accelerometer`` (frame sensors on sites, bodies or xbodies);
- ``<key name qpos>``; ``hfield``/``texture``/``material`` assets and ``<contact>`` pairs are
  accepted (the reader records them, it does not collide anything: see
  :meth:`LiteModel.collision_pairs`).

Outside the subset (``<include>``, meshes, tendons, equality constraints, ball joints, several
joints in one body, joint stiffness, other actuators or sensors, inertia from geoms, mocap
bodies, ...) :class:`MjcfLiteError` names the file, the element and the attribute, and its
``feature`` names the scene feature (``"mesh"``, ``"tendon"``, ``"ball_joint"``, ...) so a
backend can refuse the scene with ``UnsupportedCapabilityError(self.name, exc.feature, str(exc))``:
a scene is never silently simulated as something else.
"""

from __future__ import annotations

from ._errors import MjcfLiteError
from ._includes import read_tree
from ._reader import OPTIONAL_FEATURES, SENSOR_DIMS, LiteModel, collision_candidates, load_mjcf

__all__ = ["MjcfLiteError", "LiteModel", "load_mjcf", "read_tree", "collision_candidates", "OPTIONAL_FEATURES",
           "SENSOR_DIMS"]
