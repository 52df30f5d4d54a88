"""Bounded model loading (#39): asset files are checked before any engine reads them.

Before #39 the MJCF reader of the non-MuJoCo engines read whole mesh files: a 4 GB sparse STL gave a
bare ``MemoryError``, a mesh linked to ``/dev/zero`` grew to 2.9 GB (MotrixSim's loader 2.1 GB), and
a FIFO hung all three loaders (the lite reader, MotrixSim's, MuJoCo's). Now the contract refuses
such a file by name before the engine sees it, whatever the backend, and the lite reader reads an
STL only as far as its header says. Each case runs in a child process with a timeout, so a
regression fails instead of hanging the suite."""

from __future__ import annotations

import importlib.util
import os
import struct
import subprocess
import sys
import textwrap

import pytest

from unisim_core.plugin.mjcf_lite import MjcfLiteError
from unisim_core.plugin.mjcf_lite._mesh import read_mesh

SCENE = """<mujoco model="mesh_probe">
  <compiler meshdir="assets"/>
  <asset><mesh name="m" file="part.stl"/></asset>
  <worldbody>
    <body name="b" pos="0 0 1"><freejoint/><geom type="mesh" mesh="m" mass="1"/></body>
  </worldbody>
</mujoco>
"""
#: The engines' own loaders and the lite reader (fake); an engine not installed is skipped (the numpy 1.26
#: subset of .ci/run has MuJoCo only, and allows skips; the main environment has both).
BACKENDS = [pytest.param(name, marks=pytest.mark.skipif(importlib.util.find_spec(f"unisim_{name}") is None,
                                                        reason=f"unisim-{name} is not installed"))
            for name in ("mujoco", "motrix")] + ["fake"]


def _scene(tmp_path, make_mesh):
    (tmp_path / "assets").mkdir()
    make_mesh(str(tmp_path / "assets" / "part.stl"))
    (tmp_path / "scene.xml").write_text(SCENE)
    return str(tmp_path / "scene.xml")


def _construct(backend: str, path: str) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))  # a loader reading on gets MemoryError
        from unisim_core import SceneCfg, create_backend
        try:
            create_backend({backend!r}, SceneCfg({path!r}), num_envs=1, sim_dt=0.01)
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fifo_mesh_is_refused_without_blocking(tmp_path, backend):
    path = _scene(tmp_path, os.mkfifo)
    out = _construct(backend, path)
    assert "InvalidInputError" in out.stdout and "which is a FIFO" in out.stdout and "part.stl" in out.stdout, \
        out.stdout + out.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mesh_linked_to_dev_zero_is_refused(tmp_path, backend):
    path = _scene(tmp_path, lambda p: os.symlink("/dev/zero", p))
    out = _construct(backend, path)
    assert "InvalidInputError" in out.stdout and "which is a device" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sparse_4_gb_stl_is_refused_by_its_header(tmp_path, backend):
    """A 4 GB file of zeros (sparse: no disk used) whose header gives 0 triangles."""
    def sparse(p):
        with open(p, "wb") as f:
            f.truncate(4 * 2**30)

    path = _scene(tmp_path, sparse)
    out = _construct(backend, path)
    assert "InvalidInputError" in out.stdout and "header gives 0 triangles" in out.stdout, out.stdout + out.stderr


def test_the_lite_reader_reads_an_stl_as_far_as_its_header_and_no_fifo(tmp_path):
    stl = tmp_path / "tri.stl"
    tri = bytes(80) + struct.pack("<I12f2x", 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0)  # count, normal, 3 vertices
    stl.write_bytes(tri + bytes(10**6))  # trailing bytes beyond the header's one record are never read
    v = read_mesh(str(stl))
    assert v.shape == (1, 3, 3) and v[0].tolist() == [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 0]]
    fifo = tmp_path / "pipe.obj"
    os.mkfifo(fifo)
    with pytest.raises(MjcfLiteError, match="not a regular file"):
        read_mesh(str(fifo))
