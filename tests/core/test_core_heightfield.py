"""Height fields in the core: ``mjcf_lite`` reads ``<hfield>`` exactly as MuJoCo compiles it (inline,
zeros, PNG, binary; checked against ``mujoco.MjModel.hfield_data``), and ``unisim_core.contract.heightfield``'s
sampler, scanner and terrain spawn data give MuJoCo's surface (``mj_ray``) and known answers."""

from __future__ import annotations

import os
import struct
import zlib

import numpy as np
import pytest
from core_helpers import make, write_scene

from unisim_core import SceneCfg, TerrainCfg
from unisim_core.contract import quat as Q
from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.plugin.fake import FakeBackend
from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf


def _png(arr: np.ndarray, depth: int, ctype: int) -> bytes:
    """A PNG of ``arr`` ``(h, w[, channels])``; rows cycle through the five filter types."""
    h, w = arr.shape[:2]
    raw = np.ascontiguousarray(arr.astype(">u2" if depth == 16 else np.uint8)).view(np.uint8).reshape(h, -1)
    bpp = raw.shape[1] // w
    out, prior = b"", np.zeros(raw.shape[1], dtype=np.int64)
    for r in range(h):
        kind, line = r % 5, raw[r].astype(np.int64)
        left = np.concatenate([np.zeros(bpp, np.int64), line[:-bpp]])
        upleft = np.concatenate([np.zeros(bpp, np.int64), prior[:-bpp]])
        p = left + prior - upleft
        pa, pb, pc = abs(p - left), abs(p - prior), abs(p - upleft)
        paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prior, upleft))
        pred = [0, left, prior, (left + prior) // 2, paeth][kind]
        out += bytes([kind]) + ((line - pred) & 0xFF).astype(np.uint8).tobytes()
        prior = line

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(out)) + chunk(b"IEND", b"")


HFIELDS = """<asset>
  <hfield name="inline" nrow="3" ncol="4" size="1 2 0.5 0.2" elevation="1 2 3 4  5 6 7 9  0 -1 3 2"/>
  <hfield name="zeros" nrow="2" ncol="3" size="1 1 1 1"/>
  <hfield name="flat" nrow="2" ncol="2" size="1 1 1 1" elevation="3 3 3 3"/>
  <hfield name="g8" file="g8.png" size="2 1 0.3 0.1"/>
  <hfield name="g16" file="g16.png" size="2 1 0.3 0.1"/>
  <hfield name="rgb" file="rgb.png" size="2 1 0.3 0.1"/>
  <hfield name="ga" file="ga.png" size="2 1 0.3 0.1"/>
  <hfield name="rgba16" file="rgba16.png" size="2 1 0.3 0.1"/>
  <hfield name="bin" file="h.bin" size="3 3 1 0.5"/>
</asset>"""


@pytest.fixture
def hfield_scene(tmp_path):
    rng = np.random.default_rng(7)
    files = {"g8.png": _png(rng.integers(0, 256, (7, 9)), 8, 0),
             "g16.png": _png(rng.integers(0, 65536, (6, 5)), 16, 0),
             "rgb.png": _png(rng.integers(0, 256, (4, 6, 3)), 8, 2),
             "ga.png": _png(rng.integers(0, 256, (5, 4, 2)), 8, 4),
             "rgba16.png": _png(rng.integers(0, 65536, (3, 8, 4)), 16, 6),
             "h.bin": struct.pack("<ii", 4, 3) + rng.random((4, 3)).astype("<f4").tobytes()}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    geoms = "".join(f'<geom name="{n}" type="hfield" hfield="{n}" pos="{3 * i} {-3 * i} 0.5"/>'
                    for i, n in enumerate(["inline", "zeros", "flat", "g8", "g16", "rgb", "ga", "rgba16", "bin"]))
    return write_scene(tmp_path, HFIELDS + f"""<worldbody>{geoms}
      <body name="shelf" pos="-5 5 3" euler="0 0 40"><geom name="turned" type="hfield" hfield="g8" pos="0.5 0 0.1"
        euler="0 0 25"/></body>
      <body name="ball" pos="-10 -10 3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
    </worldbody>""")


def test_hfield_data_and_sizes_equal_mujocos_compile(hfield_scene):
    """Every source (inline, zeros, flat, PNG gray/RGB/gray+alpha/RGBA at 8 and 16 bits with all five
    filters, binary) gives MuJoCo's float32 hfield_data bit for bit, its hfield_size, its hfield
    geoms' geom_size and (for a geom on a turned static body) its world pose (1e-12)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    lite = load_mjcf(hfield_scene, accept={"hfield"})
    m = mujoco.MjModel.from_xml_path(str(hfield_scene))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    assert [h["name"] for h in lite.hfields] == [m.hfield(i).name for i in range(m.nhfield)]
    for i, h in enumerate(lite.hfields):
        ref = m.hfield_data[m.hfield_adr[i]:m.hfield_adr[i] + m.hfield_nrow[i] * m.hfield_ncol[i]]
        assert (h["nrow"], h["ncol"]) == (m.hfield_nrow[i], m.hfield_ncol[i]) == h["data"].shape, h["name"]
        np.testing.assert_array_equal(h["data"], ref.reshape(h["nrow"], h["ncol"]), err_msg=h["name"])
        np.testing.assert_array_equal(h["size"], m.hfield_size[i])
    info = lite.model_info()
    for g, row in enumerate(lite.geoms):
        if row["type"] == "hfield":
            assert row["hfield"] == m.geom_dataid[g]
            np.testing.assert_allclose(info.geom_size[g], m.geom_size[g], rtol=1e-12, err_msg=row["name"])
            pos, quat = lite.geom_pose_w(g)
            np.testing.assert_allclose(pos, d.geom_xpos[g], atol=1e-12)
            np.testing.assert_allclose(Q.matrix_from_quat(quat), d.geom_xmat[g].reshape(3, 3), atol=1e-12)
    assert lite.geoms[-1]["hfield"] == -1
    with pytest.raises(ValueError, match="moves"):
        lite.geom_pose_w(len(lite.geoms) - 1)


def test_sampler_from_lite_equals_mujocos_rays(hfield_scene):
    """The sampler built from the lite tables equals the one from the mjModel's arrays (1e-12) and
    MuJoCo's own ray casts (mj_ray's 1e-7) on a turned geom of a turned static body, and on a flat
    field (its base at the geom's z)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's ray cast")
    lite = load_mjcf(hfield_scene, accept={"hfield"})
    m = mujoco.MjModel.from_xml_path(str(hfield_scene))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    rng = np.random.default_rng(1)
    for name in ("turned", "inline", "bin", "flat"):
        g = [row["name"] for row in lite.geoms].index(name)
        ours, theirs = HFieldSampler.from_lite(lite, g), HFieldSampler.from_mjmodel(m, g)
        local = rng.uniform(-0.95, 0.95, (60, 2)) * m.hfield_size[m.geom_dataid[g], :2]
        xy = d.geom_xpos[g, :2] + local @ d.geom_xmat[g].reshape(3, 3)[:2, :2].T
        np.testing.assert_allclose(ours(xy), theirs(xy), atol=1e-12, err_msg=name)
        hit = np.zeros(1, np.int32)
        top = 10.0
        ray = []
        for x, y in xy:
            dist = mujoco.mj_ray(m, d, np.array([x, y, top]), np.array([0, 0, -1.0]), None, 1, -1, hit)
            assert hit[0] == g, (name, x, y, hit[0])
            ray.append(top - dist)
        np.testing.assert_allclose(ours(xy), ray, atol=1e-7, err_msg=name)


def test_hfield_geom_is_refused_unless_accepted(hfield_scene):
    with pytest.raises(MjcfLiteError, match="height field") as err:
        load_mjcf(hfield_scene)
    assert err.value.feature == "hfield"


@pytest.mark.parametrize("case", ["crc", "truncated", "palette", "bomb", "rows", "bin_size", "missing", "fifo",
                                  "size", "no_data", "unknown"])
def test_bad_hfield_sources_raise_naming_the_file(tmp_path, monkeypatch, case):
    good = _png(np.arange(12).reshape(3, 4), 8, 0)
    attrs, feature, match = 'file="h.png"', None, "h.png"
    if case == "crc":
        (tmp_path / "h.png").write_bytes(good[:-5] + b"\x00" + good[-4:])
        match = "CRC"
    elif case == "truncated":
        (tmp_path / "h.png").write_bytes(good[:40])
    elif case == "palette":
        (tmp_path / "h.png").write_bytes(good[:25] + b"\x03" + good[26:])
        feature, match = "hfield_file", "color type 3"
    elif case == "bomb":  # a 1e5 x 1e5 header: refused from the header, nothing inflated
        header = struct.pack(">IIBBBBB", 100_000, 100_000, 16, 6, 0, 0, 0)
        ihdr = struct.pack(">I", 13) + b"IHDR" + header + struct.pack(">I", zlib.crc32(b"IHDR" + header))
        (tmp_path / "h.png").write_bytes(good[:8] + ihdr + good[33:])
        match = "more than"
    elif case == "rows":
        attrs, match = 'nrow="1" ncol="3" elevation="1 2 3"', "at least 2 x 2"
    elif case == "bin_size":
        (tmp_path / "h.bin").write_bytes(struct.pack("<ii", 3, 3) + b"\x00" * 8)
        attrs, match = 'file="h.bin"', "binary height field"
    elif case == "missing":
        pass
    elif case == "fifo":
        os.mkfifo(tmp_path / "h.png")
        match = "regular file"
    elif case == "size":
        attrs, match = 'nrow="2" ncol="2" size="1 1 0 1"', "positive"
    elif case == "no_data":
        attrs, match = "", "no file and no nrow"
    elif case == "unknown":
        attrs, match = 'nrow="2" ncol="2"', "not an <asset><hfield>"
    if "size=" not in attrs:
        attrs += ' size="1 1 1 1"'
    geom = 'hfield="other"' if case == "unknown" else 'hfield="h"'
    path = write_scene(tmp_path, f'<asset><hfield name="h" {attrs}/></asset>'
                                 f'<worldbody><geom type="hfield" {geom}/></worldbody>')
    if case == "bomb":
        import unisim_core.contract.construction as construction

        monkeypatch.setattr(construction, "available_memory", lambda: (2**30, "test"))
    with pytest.raises(MjcfLiteError, match=match) as err:
        load_mjcf(path, accept={"hfield"})
    assert err.value.feature == feature


def _ramp_backend(tmp_path, cls=FakeBackend, **scene):
    """hfield_terrain (h = 0.2 (x + 2) for x <= 0, 0.4 beyond) with its geom turned 90 degrees about z
    and moved to (0.5, -0.3, 0.1): the ramp then rises along world +y, h = 0.1 + 0.2 (y + 0.3 + 2)."""
    from core_helpers import SCENES

    text = SCENES["hfield_terrain"].read_text().replace('pos="0 0 0" friction', 'pos="0.5 -0.3 0.1" euler="0 0 90" '
                                                                                 'friction')
    path = tmp_path / "turned.xml"
    path.write_text(text)
    return cls(SceneCfg(model_file=str(path), **scene), 2, 0.002, np_dtype=np.float64)


def _turned_h(y):
    return 0.1 + np.where(y + 0.3 <= 0, 0.2 * (y + 0.3 + 2), 0.4)


@pytest.mark.parametrize("alignment", ["world", "yaw", "full"])
def test_scanner_alignments_have_known_answers(tmp_path, alignment):
    """Offsets (along the body's x, then y) under a body at (0.5, -1.0, 1) yawed 90 degrees and
    pitched 60 degrees: world keeps them on world axes; yaw turns them by 90 degrees (body x is world
    +y); full turns them by the whole orientation (body x is world +y shortened by cos 60). Heights of
    the turned ramp h = 0.1 + 0.2 (y + 2.3) below y = -0.3 and 0.5 above; distances are z - h."""
    b = _ramp_backend(tmp_path)
    yaw, pitch = np.pi / 2, np.pi / 3
    q = np.array([np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)])
    q = np.array([q[0] * np.cos(pitch / 2), -q[3] * np.sin(pitch / 2), q[0] * np.sin(pitch / 2),
                  q[3] * np.cos(pitch / 2)])  # yaw then pitch about the body y axis
    qpos = np.tile([0.5, -1.0, 1.0, *q], (2, 1))
    b.set_state(np.arange(2), qpos, np.zeros((2, 6)))
    off = np.array([[0.4, 0.0], [0.0, 0.3], [-0.5, 0.2]])
    geom, ball = b.get_geom_id("terrain"), int(b.get_body_ids(["ball"])[0])
    h = b.create_hfield_scanner(hfield_geom_id=geom, offsets=off, frame_body_id=ball, alignment=alignment).scan()
    d = b.create_hfield_scanner(hfield_geom_id=geom, offsets=off, frame_body_id=ball, alignment=alignment,
                                output="distance").scan()
    dx, dy = {"world": (off[:, 0], off[:, 1]), "yaw": (-off[:, 1], off[:, 0]),
              "full": (-off[:, 1], off[:, 0] * np.cos(pitch))}[alignment]
    assert np.all(np.abs(dx) < 1.5)  # inside the field along x, where it is flat
    y = -1.0 + dy
    np.testing.assert_allclose(h, np.tile(_turned_h(y), (2, 1)), atol=1e-12)
    np.testing.assert_allclose(d, 1.0 - h, atol=1e-12)
    assert h.dtype == np.float64 and h.shape == (2, 3)


def test_terrain_spawn_data_on_a_turned_geom(tmp_path):
    """A 2 x 3 grid 0.5 m apart centred on the geom at (0.5, -0.3), on the surface; the sampler is the
    terrain's (size read from the asset)."""
    b = _ramp_backend(tmp_path, terrain=TerrainCfg(hfield_geom="terrain", rows=2, cols=3, spacing=0.5))
    data = b.get_terrain_spawn_data()
    np.testing.assert_allclose(data.origins[:, 0], np.tile([0.0, 0.5, 1.0], 2))
    np.testing.assert_allclose(data.origins[:, 1], np.repeat([-0.55, -0.05], 3))
    np.testing.assert_allclose(data.origins[:, 2], _turned_h(data.origins[:, 1]), atol=1e-12)
    assert data.size == (2.0, 2.0, 0.4, 0.1) and data.hfield_geom_id == b.get_geom_id("terrain")
    with pytest.raises(InvalidInputError, match="scene.terrain.hfield_geom"):
        _ramp_backend(tmp_path, terrain=TerrainCfg(hfield_geom="ball_geom")).get_terrain_spawn_data()


def test_scans_are_the_same_on_mujoco_and_the_fake(tmp_path):
    """One sampler, one scanner: MuJoCo and the lite-based fake scan the same state identically (the
    contract's body poses agree to float64 rounding)."""
    pytest.importorskip("unisim_mujoco", reason="compares with unisim-mujoco")
    from unisim_mujoco import MujocoBackend

    fake, mj = _ramp_backend(tmp_path), _ramp_backend(tmp_path, cls=MujocoBackend)
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 4))
    qpos = np.concatenate([rng.uniform(-1, 1, (2, 2)), np.ones((2, 1)), q / np.linalg.norm(q, axis=1)[:, None]], 1)
    off = rng.uniform(-1, 1, (20, 2))
    for b in (fake, mj):
        b.set_state(np.arange(2), qpos, np.zeros((2, 6)))
    for alignment in ("world", "yaw", "full"):
        kw = dict(hfield_geom_id=fake.get_geom_id("terrain"), offsets=off, frame_body_id=1, alignment=alignment)
        np.testing.assert_allclose(fake.create_hfield_scanner(**kw).scan(), mj.create_hfield_scanner(**kw).scan(),
                                   atol=1e-12, err_msg=alignment)


def test_sampler_refuses_moving_and_tilted_geoms(tmp_path):
    path = write_scene(tmp_path, '<asset><hfield name="h" nrow="2" ncol="2" size="1 1 1 1"/></asset><worldbody>'
                                 '<geom name="tilted" type="hfield" hfield="h" euler="10 0 0"/>'
                                 '<body pos="0 0 1"><freejoint/><geom name="moving" type="hfield" hfield="h"/>'
                                 '<geom type="sphere" size="0.1" mass="1"/></body></worldbody>')
    lite = load_mjcf(path, accept={"hfield"})
    with pytest.raises(InvalidInputError, match="tilted"):
        HFieldSampler.from_lite(lite, 0)
    with pytest.raises(InvalidInputError, match="moves"):
        HFieldSampler.from_lite(lite, 1)
    b = make(path, 1)
    with pytest.raises(InvalidInputError, match="expected an hfield"):
        b.create_hfield_scanner(hfield_geom_id=2, offsets=np.zeros((1, 2)), frame_body_id=1)


def test_height_scan_needs_a_height_field_primitive(tmp_path):
    """Declaring height_scan or terrain without ``_height_field`` (or the scanner / spawn-data
    primitive itself) is refused when the class is first built, naming both."""
    from unisim_core import Capability, SimBackend

    class NoSampler(FakeBackend):
        CAPABILITIES = FakeBackend.CAPABILITIES - {Capability.TERRAIN}
        _height_field = SimBackend._height_field  # the base's: not implemented

    with pytest.raises(TypeError, match=r"does not implement _height_field\(\) or _create_hfield_scanner\(\)"):
        NoSampler(SceneCfg(model_file=str(write_scene(tmp_path, "<worldbody/>"))), 1, 0.01)
