"""Which OpenGL platform MuJoCo draws offscreen frames with (this module never imports MuJoCo).

MuJoCo reads ``MUJOCO_GL`` (``egl``, ``osmesa``, ``glfw``) when ``mujoco`` is imported. A value the
user set is always honoured. On a Linux machine without a display and without that variable,
:func:`choose_platform` (run when ``unisim_mujoco`` is imported) picks ``egl`` where an EGL device
answers (a GPU, or Mesa's software llvmpipe through ``libegl-mesa0``), else ``osmesa`` where
``libOSMesa`` loads, else leaves the variable unset (the renderer then names both packages).
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["ENV", "OSMESA_LIBS", "egl_device_count", "osmesa_loads", "headless_default", "choose_platform",
           "requested_platform"]

ENV = "MUJOCO_GL"
#: Sonames of the OSMesa library (PyOpenGL loads the same).
OSMESA_LIBS = ("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so")


def egl_device_count() -> int:
    """EGL devices the system's ``libEGL.so.1`` lists (``eglQueryDevicesEXT``); 0 without EGL or
    without a vendor library behind it (GLVND's ``libEGL`` alone lists none)."""
    try:
        egl = ctypes.CDLL("libEGL.so.1")
    except OSError:
        return 0
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
    address = egl.eglGetProcAddress(b"eglQueryDevicesEXT")
    if not address:
        return 0
    query = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))(address)
    count = ctypes.c_int(0)
    return count.value if query(0, None, ctypes.byref(count)) else 0


def osmesa_loads() -> bool:
    """Whether an OSMesa library loads (Debian: ``libosmesa6``)."""
    for name in OSMESA_LIBS:
        try:
            ctypes.CDLL(name)
        except OSError:
            continue
        return True
    return False


def headless_default() -> str | None:
    """``"egl"`` where an EGL device answers, else ``"osmesa"`` where OSMesa loads, else ``None``."""
    if egl_device_count() > 0:
        return "egl"
    return "osmesa" if osmesa_loads() else None


def choose_platform(environ: dict | None = None, platform: str | None = None) -> str | None:
    """Set ``MUJOCO_GL`` on a Linux machine without a display when it is unset (before ``mujoco`` is
    imported); return the value in effect (``None``: unset, MuJoCo's own default, GLFW)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    current = environ.get(ENV)
    if current:
        return current
    if platform.startswith("linux") and not environ.get("DISPLAY") and not environ.get("WAYLAND_DISPLAY"):
        chosen = headless_default()
        if chosen is not None:
            environ[ENV] = chosen
        return chosen
    return None


def requested_platform(environ: dict | None = None) -> str:
    """The platform a renderer made now uses: ``MUJOCO_GL`` lowercased, else the headless default,
    else ``"glfw"`` (MuJoCo's default where a display exists)."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV, "").strip().lower()
    if value:
        return value
    if sys.platform.startswith("linux") and not environ.get("DISPLAY") and not environ.get("WAYLAND_DISPLAY"):
        return headless_default() or "egl"
    return "glfw"
