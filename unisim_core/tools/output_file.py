"""Files the CLI writes (``--json``, ``--markdown``, ``--plot``): checked before a run, replaced
whole after it.

A write goes to a temporary file beside the target, is flushed to disk, then renamed over the
target: a failed write (full disk, file-size limit, ``/dev/full``) leaves the old file as it was
and names the file and the reason. A target is refused before the run when it could not be
written (missing folder, no permission, a folder) or is a symbolic link (renaming over a link
replaces the link, not the file it names: give the final path).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import IO

from unisim_core.contract.errors import UniSimError

__all__ = ["OutputFileError", "check_output_file", "write_output_file", "write_figure"]


class OutputFileError(UniSimError, OSError):
    """An output file cannot be (or could not be) written; the message names the flag and the file."""


def check_output_file(flag: str, path: str) -> None:
    """Refuse ``path`` before a run when ``write_output_file`` could not replace it."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.islink(path):
        raise OutputFileError(f"{flag}: {path!r} is a symbolic link (to {os.readlink(path)!r}); refusing to replace "
                              "the link with a file: give the path of the file itself")
    if os.path.isdir(path):
        raise OutputFileError(f"{flag}: {path!r} is a folder; expected a file path")
    if os.path.exists(path) and not os.path.isfile(path):
        raise OutputFileError(f"{flag}: {path!r} is not a regular file (a device, pipe or socket); "
                              "expected a file path")
    if not os.path.isdir(folder):
        raise OutputFileError(f"{flag}: the folder of {path!r} does not exist ({folder!r})")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".unisim-probe-")
    except OSError as exc:
        raise OutputFileError(f"{flag}: cannot write in the folder of {path!r}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def write_output_file(flag: str, path: str, write: Callable[[IO], object], *, binary: bool = False) -> None:
    """Write ``path`` through ``write(f)`` (``f`` an open text or binary file) into a temporary file
    beside it, then rename it over ``path``; on any failure the temporary file is removed, ``path``
    is left as it was and ``OutputFileError`` names the flag, the file and the reason."""
    check_output_file(flag, path)
    folder, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # keep the replaced file's permissions
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # as open(path, "w") would have made it
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise OutputFileError(f"{flag}: could not write {path!r}: {exc.strerror or exc}; "
                              f"{'the previous file is unchanged' if os.path.exists(path) else 'nothing was written'}"
                              ) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def write_figure(flag: str, path: str, fig) -> None:
    """A matplotlib figure as a PNG (100 dpi) at ``path`` through :func:`write_output_file`; the figure
    is closed either way."""
    import matplotlib.pyplot as plt

    try:
        write_output_file(flag, path, lambda f: fig.savefig(f, dpi=100, format="png"), binary=True)
    finally:
        plt.close(fig)
