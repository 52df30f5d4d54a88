"""The contract of an exported policy: what it reads, in which order, and what its outputs drive.

A :class:`PolicyManifest` travels with an exported policy (``policy.onnx`` + ``policy.json``) and
says everything a controller needs to run it without the training code (SI units, radians):

- ``policy_file`` (relative to the manifest), its ``input_name``/``output_name``, ``obs_dim``, ``action_dim``;
- ``model_file`` it was trained on (and its ``model_sha256``), ``robot``, ``base_body``;
- rates: ``sim_dt`` s x ``decimation`` substeps per control step;
- ``joint_names`` in the policy's action order, ``default_joint_pos`` (rad), ``joint_range``, and the
  joint's place in the robot, ``joint_anchor_b`` (m) and ``joint_axis_b``: its anchor and axis in the
  base body's frame at the model's reference configuration (``qpos0``), read from the MJCF;
- ``observations``: the terms (:class:`ObsTerm`: ``name``, per-step ``size``, ``scale``, ``clip``,
  ``history``, and the training-time ``delay`` and ``noise``, both off at deploy) in order;
- ``command_names``/``command_ranges`` (the velocity command ``vx, vy`` m/s, ``wz`` rad/s);
- actions: ``a = clip(policy output, action_low, action_high)`` (float32), joint target
  ``= default_joint_pos + action_scale * a`` clipped to ``[target_low, target_high]``;
- ``actuation``: ``"position_servo"`` (the model's servos take the target as ``ctrl``; gains
  ``kp``/``kd`` per joint) or ``"actuator_model"`` (gear-1 motors driven by
  :mod:`unisim_core.tools.actuators` configs ``actuator_configs`` every substep; ``kp``/``kd`` theirs).

:func:`check_manifest` binds a manifest to a backend: every name and size is checked and a mismatch
is refused by name (:class:`ManifestMismatchError`), including a policy index whose name points at
another physical joint than the one it was trained on (joint order: the classic sim2sim bug).
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.quat import quat_apply, quat_apply_inverse, quat_mul

if TYPE_CHECKING:
    from unisim_core.contract.backend import SimBackend

__all__ = ["ObsTerm", "PolicyManifest", "ManifestBinding", "ManifestMismatchError", "ManifestWarning",
           "check_manifest", "joint_geometry", "file_sha256", "DEPLOY_TERMS", "FORMAT", "VERSION"]

FORMAT = "unisim-policy-manifest"
VERSION = 1
#: Observation terms a deploy loop computes from the contract's state (name -> meaning).
DEPLOY_TERMS = {
    "base_lin_vel_b": "base linear velocity in the base frame, m/s (3)",
    "base_ang_vel_b": "base angular velocity in the base frame, rad/s (3)",
    "projected_gravity": "unit gravity in the base frame (3)",
    "command": "the command, in command_names order (3)",
    "dof_pos_rel": "joint positions minus default_joint_pos, policy order, rad (joints)",
    "dof_vel": "joint velocities, policy order, rad/s (joints)",
    "last_action": "the previous control step's clipped action (joints)",
}
ACTUATIONS = ("position_servo", "actuator_model")


class ManifestMismatchError(InvalidInputError):
    """A manifest does not fit the backend (or the policy file) it is bound to; the message names
    every mismatching joint, term or quantity."""


class ManifestWarning(UserWarning):
    """Something of a manifest could not be checked (e.g. the joint geometry of a model the MJCF
    reader cannot read)."""


def _floats(value) -> tuple[float, ...]:
    return tuple(float(v) for v in value)


def _rows(value) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in value)


@attrs.frozen(kw_only=True)
class ObsTerm:
    """One observation term: ``size`` values per step, ``scale``d after ``clip`` (±), stacked over
    ``history`` steps (oldest first). ``delay`` ((min, max) control steps) and ``noise`` (the
    training-time ``NoiseCfg`` fields) are recorded from training and not applied at deploy."""

    name: str
    size: int
    scale: float = 1.0
    clip: float | None = None
    history: int = 1
    delay: tuple[int, int] = attrs.field(default=(0, 0), converter=lambda v: tuple(int(x) for x in v))
    noise: dict[str, Any] | None = None

    @property
    def width(self) -> int:
        """Columns of the observation this term fills (``size * history``)."""
        return self.size * self.history


@attrs.frozen(kw_only=True)
class PolicyManifest:
    """See the module docstring; arrays are tuples (per joint in policy order). :meth:`save` /
    :meth:`load` write and read the JSON file (infinities as the strings ``"inf"``/``"-inf"``)."""

    policy_file: str
    input_name: str = "obs"
    output_name: str = "actions"
    obs_dim: int
    action_dim: int
    model_file: str
    model_sha256: str
    robot: str
    base_body: str
    sim_dt: float
    decimation: int
    joint_names: tuple[str, ...] = attrs.field(converter=tuple)
    default_joint_pos: tuple[float, ...] = attrs.field(converter=_floats)
    joint_range: tuple[tuple[float, ...], ...] = attrs.field(converter=_rows)
    joint_anchor_b: tuple[tuple[float, ...], ...] = attrs.field(converter=_rows)
    joint_axis_b: tuple[tuple[float, ...], ...] = attrs.field(converter=_rows)
    observations: tuple[ObsTerm, ...] = attrs.field(converter=tuple)
    command_names: tuple[str, ...] = attrs.field(default=("vx", "vy", "wz"), converter=tuple)
    command_ranges: tuple[tuple[float, ...], ...] = attrs.field(converter=_rows)
    action_scale: float
    action_low: tuple[float, ...] = attrs.field(converter=_floats)
    action_high: tuple[float, ...] = attrs.field(converter=_floats)
    target_low: tuple[float, ...] = attrs.field(converter=_floats)
    target_high: tuple[float, ...] = attrs.field(converter=_floats)
    actuation: str
    kp: tuple[float, ...] = attrs.field(converter=_floats)
    kd: tuple[float, ...] = attrs.field(converter=_floats)
    actuator_configs: tuple[dict[str, Any], ...] = attrs.field(  # JSON's shapes: lists, not tuples
        default=(), converter=lambda v: tuple(_decode(_encode(dict(c))) for c in v))
    #: ``max |ONNX - torch|`` over the export's check observations (``None``: not checked).
    export_max_abs_diff: float | None = None

    def __attrs_post_init__(self) -> None:
        n = len(self.joint_names)
        problems = []
        if len(set(self.joint_names)) != n:
            problems.append(f"joint_names: a name appears twice in {list(self.joint_names)}")
        for field, width in (("default_joint_pos", None), ("joint_range", 2), ("joint_anchor_b", 3),
                             ("joint_axis_b", 3), ("action_low", None), ("action_high", None), ("target_low", None),
                             ("target_high", None), ("kp", None), ("kd", None)):
            value = getattr(self, field)
            if len(value) != n or (width and any(len(r) != width for r in value)):
                problems.append(f"{field}: expected {n} entries{f' of {width}' if width else ''} (one per joint "
                                f"of joint_names), got {len(value)}")
        if self.action_dim != n:
            problems.append(f"action_dim: expected {n} (the joints of joint_names), got {self.action_dim}")
        obs = sum(t.width for t in self.observations)
        if self.obs_dim != obs:
            problems.append(f"obs_dim: expected {obs} (the observation terms' sizes x history), got {self.obs_dim}")
        if len(self.command_ranges) != len(self.command_names):
            problems.append(f"command_ranges: expected {len(self.command_names)} (one per command name), got "
                            f"{len(self.command_ranges)}")
        for t in self.observations:
            expected = {"dof_pos_rel": n, "dof_vel": n, "last_action": n,
                        "command": len(self.command_names)}.get(t.name, 3)
            if t.name not in DEPLOY_TERMS:
                problems.append(f"observations: term {t.name!r} is not one a deploy loop computes; known: "
                                f"{list(DEPLOY_TERMS)}")
            elif t.size != expected:
                problems.append(f"observations: term {t.name!r} has size {t.size}, expected {expected}")
        if self.actuation not in ACTUATIONS:
            problems.append(f"actuation: expected one of {ACTUATIONS}, got {self.actuation!r}")
        elif (self.actuation == "actuator_model") != bool(self.actuator_configs):
            problems.append("actuator_configs: expected configs exactly when actuation is 'actuator_model'")
        if not (self.sim_dt > 0 and self.decimation >= 1):
            problems.append(f"sim_dt/decimation: expected > 0 and >= 1, got {self.sim_dt}, {self.decimation}")
        if problems:
            raise InvalidInputError("PolicyManifest: " + "; ".join(problems))

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        """The JSON document (sections ``policy``, ``model``, ``rates``, ``joints``, ``observations``,
        ``commands``, ``actions``, ``actuation``)."""
        doc = {
            "format": FORMAT, "version": VERSION,
            "policy": {"file": self.policy_file, "input": self.input_name, "output": self.output_name,
                       "obs_dim": self.obs_dim, "action_dim": self.action_dim,
                       "export_max_abs_diff": self.export_max_abs_diff},
            "model": {"file": self.model_file, "sha256": self.model_sha256, "robot": self.robot,
                      "base_body": self.base_body},
            "rates": {"sim_dt": self.sim_dt, "decimation": self.decimation,
                      "control_dt": self.sim_dt * self.decimation},
            "joints": {"names": list(self.joint_names), "default_pos": list(self.default_joint_pos),
                       "range": [list(r) for r in self.joint_range],
                       "anchor_b": [list(r) for r in self.joint_anchor_b],
                       "axis_b": [list(r) for r in self.joint_axis_b]},
            "observations": [attrs.asdict(t) for t in self.observations],
            "commands": {"names": list(self.command_names), "ranges": [list(r) for r in self.command_ranges]},
            "actions": {"scale": self.action_scale, "offset": "joints.default_pos", "low": list(self.action_low),
                        "high": list(self.action_high), "target_low": list(self.target_low),
                        "target_high": list(self.target_high)},
            "actuation": {"kind": self.actuation, "kp": list(self.kp), "kd": list(self.kd),
                          "configs": list(self.actuator_configs)},
        }
        return _encode(doc)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PolicyManifest:
        """Read :meth:`to_json`'s document; a missing section or key is refused by name."""
        doc = _decode(doc)
        if doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise InvalidInputError(f"manifest: expected format {FORMAT!r} version {VERSION}, got "
                                    f"{doc.get('format')!r} version {doc.get('version')!r}")

        def get(section: str, key: str) -> Any:
            try:
                return doc[section][key]
            except (KeyError, TypeError):
                raise InvalidInputError(f"manifest: missing {section}.{key}") from None

        try:
            terms = tuple(ObsTerm(**t) for t in doc["observations"])
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"manifest: observations: expected a list of terms with keys name, size, "
                                    f"scale, clip, history, delay, noise ({exc})") from None
        return cls(
            policy_file=get("policy", "file"), input_name=get("policy", "input"),
            output_name=get("policy", "output"), obs_dim=get("policy", "obs_dim"),
            action_dim=get("policy", "action_dim"), export_max_abs_diff=doc["policy"].get("export_max_abs_diff"),
            model_file=get("model", "file"), model_sha256=get("model", "sha256"), robot=get("model", "robot"),
            base_body=get("model", "base_body"), sim_dt=get("rates", "sim_dt"), decimation=get("rates", "decimation"),
            joint_names=get("joints", "names"), default_joint_pos=get("joints", "default_pos"),
            joint_range=get("joints", "range"), joint_anchor_b=get("joints", "anchor_b"),
            joint_axis_b=get("joints", "axis_b"), observations=terms, command_names=get("commands", "names"),
            command_ranges=get("commands", "ranges"), action_scale=get("actions", "scale"),
            action_low=get("actions", "low"), action_high=get("actions", "high"),
            target_low=get("actions", "target_low"), target_high=get("actions", "target_high"),
            actuation=get("actuation", "kind"), kp=get("actuation", "kp"), kd=get("actuation", "kd"),
            actuator_configs=get("actuation", "configs"))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> PolicyManifest:
        try:
            doc = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"manifest {str(path)!r}: not JSON ({exc})") from None
        return cls.from_json(doc)

    def policy_path(self, manifest_path: str | Path) -> Path:
        """The policy file of the manifest at ``manifest_path`` (``policy_file`` is relative to its folder)."""
        return Path(manifest_path).resolve().parent / self.policy_file


def _encode(value):
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise InvalidInputError("manifest: NaN is not a valid manifest value")
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, str) and value in ("inf", "-inf"):
        return float(value)
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def joint_geometry(model_file: str | Path, joint_names: Sequence[str], base_body: str) -> tuple[np.ndarray, np.ndarray]:
    """``(anchor (J, 3) m, axis (J, 3))`` of ``joint_names`` in ``base_body``'s frame at the model's
    reference configuration (every body at its MJCF pose, MuJoCo's ``qpos0``), read from the MJCF
    (:mod:`unisim_core.plugin.mjcf_lite`; raises its ``MjcfLiteError`` on a model outside its subset)."""
    from unisim_core.plugin.mjcf_lite import OPTIONAL_FEATURES, load_mjcf

    lite = load_mjcf(str(model_file), accept=OPTIONAL_FEATURES)
    nb = len(lite.body_names)
    pos, quat = np.zeros((nb, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (nb, 1))
    for b in range(1, nb):  # parents precede children
        p = lite.body_parent[b]
        pos[b] = pos[p] + quat_apply(quat[p], np.asarray(lite.body_pos[b], float))
        quat[b] = quat_mul(quat[p], np.asarray(lite.body_quat[b], float))
    if base_body not in lite.body_names:
        raise InvalidInputError(f"base_body: no body {base_body!r} in {model_file}")
    base = lite.body_names.index(base_body)
    by_name = {j["name"]: j for j in lite.joints}
    anchors, axes = [], []
    for name in joint_names:
        j = by_name[name]
        b = j["body"]
        anchor_w = pos[b] + quat_apply(quat[b], np.asarray(j["pos"], float))
        anchors.append(quat_apply_inverse(quat[base], anchor_w - pos[base]))
        axes.append(quat_apply_inverse(quat[base], quat_apply(quat[b], np.asarray(j["axis"], float))))
    return np.asarray(anchors).reshape(-1, 3), np.asarray(axes).reshape(-1, 3)


@attrs.frozen
class ManifestBinding:
    """A manifest resolved on a backend (:func:`check_manifest`), per policy joint ``i``:
    ``ctrl_cols[i]`` its actuator's ``ctrl`` column, ``qpos_cols[i]``/``qvel_cols[i]`` its columns
    of ``get_qpos``/``get_qvel``; ``root_qpos``/``root_qvel`` the free base's first columns;
    ``same_model``: the backend loads the file the policy was trained on (same SHA-256)."""

    ctrl_cols: np.ndarray
    qpos_cols: np.ndarray
    qvel_cols: np.ndarray
    root_qpos: int
    root_qvel: int
    same_model: bool


def _fmt(v: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"


def _joint_order_problems(m: PolicyManifest, model_file: str, geometry_tol: float) -> tuple[list[str], set[int]]:
    """Policy indices whose recorded geometry is not their named joint's in ``model_file``; where
    it is another listed joint's, name both (a swap or reordering of ``joint_names``). Returns the
    problems and the indices they explain."""
    try:
        anchor, axis = joint_geometry(model_file, m.joint_names, m.base_body)
    except Exception as exc:  # MjcfLiteError: a model outside the reader's subset
        warnings.warn(ManifestWarning(f"joint order not checked against the joint geometry: {model_file} could "
                                      f"not be read by unisim_core.plugin.mjcf_lite ({exc})"), stacklevel=3)
        return []
    rec_anchor, rec_axis = np.asarray(m.joint_anchor_b), np.asarray(m.joint_axis_b)

    def same(i: int, j: int) -> bool:  # the manifest's record i describes the model's joint j
        return (np.abs(rec_anchor[i] - anchor[j]).max() <= geometry_tol
                and np.abs(rec_axis[i] - axis[j]).max() <= geometry_tol)

    wrong = [i for i in range(len(m.joint_names)) if not same(i, i)]
    problems, named = [], set()
    for i in wrong:
        match = [j for j in wrong if j != i and same(i, j)]
        if match:
            j = match[0]
            pair = tuple(sorted((m.joint_names[i], m.joint_names[j])))
            if pair not in named:
                named.add(pair)
                problems.append(f"joint order: joints {pair[0]!r} and {pair[1]!r} are swapped in "
                                f"joint_names (policy index {i} was trained on the joint the model calls "
                                f"{m.joint_names[j]!r}: anchor {_fmt(rec_anchor[i])} m, axis {_fmt(rec_axis[i])} in "
                                f"the base frame; index {j} on {m.joint_names[i]!r})"
                                if same(j, i) else
                                f"joint order: policy index {i} ({m.joint_names[i]!r}) was trained on the joint the "
                                f"model calls {m.joint_names[j]!r} (anchor {_fmt(rec_anchor[i])} m, axis "
                                f"{_fmt(rec_axis[i])} in the base frame): joint_names is reordered")
        else:
            problems.append(f"joint {m.joint_names[i]!r} (policy index {i}): the manifest places it at anchor "
                            f"{_fmt(rec_anchor[i])} m, axis {_fmt(rec_axis[i])}; the model at {_fmt(anchor[i])} m, "
                            f"axis {_fmt(axis[i])} (base frame, tolerance {geometry_tol:g})")
    return problems, set(wrong)


def check_manifest(manifest: PolicyManifest, backend: SimBackend, *, geometry_tol: float = 1e-3,
                   gain_rtol: float = 1e-6) -> ManifestBinding:
    """Bind ``manifest`` to ``backend`` or refuse it, naming every mismatch (``ManifestMismatchError``).

    Checked: the base body; the physics step (``backend.sim_dt == manifest.sim_dt``); every joint
    name (known to the backend, driven by exactly one actuator, no actuator left undriven); each
    joint's range; each policy index's joint geometry (anchor and axis in the base frame,
    ``geometry_tol`` m / unit) against the joint it names in the backend's MJCF — an index whose
    name points at another physical joint is refused naming both; the actuation (position servos
    with the manifest's gains within ``gain_rtol``, or torque motors for an actuator model).
    Reads the backend's model tables only: its state does not change."""
    m, b = manifest, backend
    problems: list[str] = []
    base = b.model_info.body_names[b.base_body_id]
    if base != m.base_body:
        problems.append(f"base_body: the manifest's base is {m.base_body!r}, the backend's {base!r}")
    if not math.isclose(b.sim_dt, m.sim_dt, rel_tol=1e-9):
        problems.append(f"sim_dt: the policy was trained at {m.sim_dt} s per physics step, the backend steps "
                        f"{b.sim_dt} s (create it with sim_dt={m.sim_dt})")
    act_joints = list(b.get_actuator_joint_names())
    unknown = [j for j in m.joint_names if j not in act_joints]
    if unknown:
        problems.append(f"joint_names: {unknown} are not joints the backend's actuators drive ({act_joints})")
    twice = sorted({j for j in act_joints if act_joints.count(j) > 1})
    if twice:
        problems.append(f"joint_names: joints {twice} are driven by several actuators of the backend")
    undriven = [a for a, j in zip(b.get_actuator_names(), act_joints) if j not in m.joint_names]
    if undriven:
        problems.append(f"joint_names: the backend's actuators {undriven} drive joints the policy does not "
                        f"({[j for j in act_joints if j not in m.joint_names]})")
    if problems:
        raise ManifestMismatchError("manifest does not fit backend " + repr(b.name) + ": " + "; ".join(problems))
    names = list(m.joint_names)
    problems, explained = _joint_order_problems(m, b.scene.model_file, geometry_tol)
    rng = b.get_joint_range().astype(np.float64)[b.get_joint_dof_pos_indices(names)]
    for i, name in enumerate(names):
        if i not in explained and not np.allclose(rng[i], m.joint_range[i], rtol=0.0, atol=1e-6):
            problems.append(f"joint {name!r}: range {_fmt(rng[i])} on the backend, {_fmt(m.joint_range[i])} in "
                            "the manifest")
    ctrl_cols = np.array([act_joints.index(j) for j in names], dtype=np.int64)
    kp, kd = (g.astype(np.float64)[ctrl_cols] for g in b.get_actuator_gains())
    if m.actuation == "position_servo":
        motors = [names[i] for i in range(len(names)) if kp[i] == 0]
        if motors:
            problems.append(f"actuation: the policy drives position servos, but the backend drives {motors} with "
                            "torque motors (no position gain)")
        for i, name in enumerate(names):
            if name not in motors and not (math.isclose(kp[i], m.kp[i], rel_tol=gain_rtol)
                                           and math.isclose(kd[i], m.kd[i], rel_tol=gain_rtol, abs_tol=1e-12)):
                problems.append(f"joint {name!r}: servo gains kp {kp[i]:g}, kd {kd[i]:g} on the backend, kp "
                                f"{m.kp[i]:g}, kd {m.kd[i]:g} in the manifest")
    else:
        servos = [names[i] for i in range(len(names)) if kp[i] or kd[i]]
        if servos:
            problems.append(f"actuation: the policy's actuator model writes torques, but the backend drives "
                            f"{servos} with position/velocity servos (expected gear-1 <motor> actuators)")
    if problems:
        raise ManifestMismatchError("manifest does not fit backend " + repr(b.name) + ": " + "; ".join(problems))
    root = b.get_root_state_layout(base)
    same = Path(b.scene.model_file).is_file() and file_sha256(b.scene.model_file) == m.model_sha256
    return ManifestBinding(ctrl_cols=ctrl_cols, qpos_cols=b.get_joint_state_qpos_indices(names),
                           qvel_cols=b.get_joint_state_qvel_indices(names), root_qpos=root.qpos_start,
                           root_qvel=root.qvel_start, same_model=same)
