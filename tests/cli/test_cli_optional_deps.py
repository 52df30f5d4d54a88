"""Optional dependencies the CLI touches: a missing one is an OptionalDependencyError naming what to
install, reported by ``unisim`` as a one-line error (exit 2), never a raw ModuleNotFoundError."""

from __future__ import annotations

import sys

import pytest

from unisim_core import OptionalDependencyError, cli
from unisim_core.tools import compare as C
from unisim_core.tools.compare_report import plot_trajectories


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError


def test_compare_plot_without_matplotlib_names_the_plot_extra(no_matplotlib, tmp_path, capsys):
    rc = cli.main(["compare", "--backends", "mujoco,fake", "--scene", "quadruped", "--steps", "2",
                   "--plot", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert rc == 2 and "unisim-contract[plot]" in err and "Traceback" not in err
    assert not (tmp_path / "p.png").exists()


def test_plot_trajectories_without_matplotlib_raises_optional_dependency_error(no_matplotlib, tmp_path):
    res = C.compare(["mujoco", "fake"], "quadruped", steps=2)
    with pytest.raises(OptionalDependencyError, match=r"unisim-contract\[plot\]"):
        plot_trajectories(res, str(tmp_path / "p.png"))


def test_check_without_the_kit_names_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "unisim_conformance", None)
    rc = cli.main(["check", "fake"])
    err = capsys.readouterr().err
    assert rc == 2 and "pip install 'unisim-conformance'" in err


def test_run_video_without_imageio_names_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "imageio", None)
    rc = cli.main(["run", "--backend", "fake", "--video", str(tmp_path / "v.mp4")])
    err = capsys.readouterr().err
    assert rc == 2 and "imageio[ffmpeg]" in err and not (tmp_path / "v.mp4").exists()
