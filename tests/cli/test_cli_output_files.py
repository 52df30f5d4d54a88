"""Files the CLI writes (#39): a failed write leaves the old file intact and names the file; a
target that cannot be written is refused before the run; a symbolic link or a device is refused.
Before #39 every ``--json``/``--markdown``/``--plot`` was ``open(path, "w")``: a full disk left a
truncated file with a raw ``OSError`` traceback, found only after the whole run."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys

import pytest

from unisim_core.tools.output_file import OutputFileError, check_output_file, write_output_file

GOOD = '{"old": "result"}\n'
COMPARE = [sys.executable, "-m", "unisim_core.tools.cli", "compare", "--backends", "fake,mujoco", "--scene", "pendulum",
           "--steps", "20"]


def _left_over(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".unisim-probe"))


def test_a_file_size_limit_mid_write_keeps_the_old_file_and_names_it(tmp_path):
    """RLIMIT_FSIZE at 1,000 bytes: the ~2.5 kB JSON fails to write (EFBIG, as a full disk's ENOSPC
    would); the old file keeps its bytes, no temporary file stays, the error names --json and the file."""
    out = tmp_path / "result.json"
    out.write_text(GOOD)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    run = subprocess.run([*COMPARE, "--json", str(out)], capture_output=True, text=True, timeout=120,
                         preexec_fn=limit, cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"--json: could not write {str(out)!r}" in run.stderr and "previous file is unchanged" in run.stderr
    assert "Traceback" not in run.stderr
    assert out.read_text() == GOOD and _left_over(tmp_path) == []


def test_an_unwritable_target_is_refused_before_the_run(tmp_path):
    run = subprocess.run([*COMPARE, "--json", str(tmp_path / "missing" / "r.json")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2 and "--json: the folder of" in run.stderr and "does not exist" in run.stderr
    assert "verdict" not in run.stdout, "the comparison ran before the target was checked"


def test_a_symbolic_link_or_a_device_is_refused(tmp_path):
    real = tmp_path / "real.json"
    real.write_text(GOOD)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(OutputFileError, match=r"--json: .*link\.json' is a symbolic link"):
        write_output_file("--json", str(link), lambda f: f.write("new"))
    assert real.read_text() == GOOD and link.is_symlink()
    with pytest.raises(OutputFileError, match=r"--markdown: '/dev/full' is not a regular file"):
        check_output_file("--markdown", "/dev/full")
    with pytest.raises(OutputFileError, match="is a folder"):
        check_output_file("--plot", str(tmp_path))


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "m.md"
    out.write_text(GOOD)
    out.chmod(0o640)

    def full(f):
        f.write("partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(OutputFileError, match=r"--markdown: could not write .*No space left on device"):
        write_output_file("--markdown", str(out), full)
    assert out.read_text() == GOOD and _left_over(tmp_path) == []
    write_output_file("--markdown", str(out), lambda f: f.write("# new\n"))
    assert out.read_text() == "# new\n" and (out.stat().st_mode & 0o777) == 0o640  # mode kept
    assert _left_over(tmp_path) == []

