"""What a backend's construction can run out of, said in UniSim's words.

- :func:`env_memory_check`: an estimate of the memory ``num_envs`` envs need, checked against
  what this machine still has *before* the engine allocates (an engine asked for too much
  aborts the process, raises ``std::bad_alloc`` or numpy's ``MemoryError``).
- :func:`model_file_memory_check`: the same for the height fields and asset files of the model file,
  which must be regular files (a FIFO hangs a loader, ``/dev/zero`` never ends).
- :func:`construction_error`: what an engine raised while loading the scene or allocating the
  envs becomes a UniSim error naming the file (or ``num_envs``), chained to the original.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from unisim_core.contract.errors import EngineError, InvalidInputError, UniSimError, with_context

__all__ = ["available_memory", "env_memory_check", "model_file_memory_check", "construction_error"]

#: An estimate beyond this is refused whatever the machine (no address space holds it).
_ADDRESS_SPACE = float(2**63)
#: Engine messages that mean an allocation failed.
_ALLOC_FAILURES = ("bad_alloc", "maximum allowed dimension", "array is too big", "memory allocation",
                   "unable to allocate", "cannot allocate", "out of memory")


def _meminfo() -> dict[str, int]:
    with open("/proc/meminfo", encoding="ascii") as f:
        return {k: int(v.split()[0]) * 1024 for k, _, v in (line.partition(":") for line in f) if v.strip()}


def _cgroup_left() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
            return int(limit) - int(f.read().strip())
    except (OSError, ValueError):
        return None


def available_memory() -> tuple[int | None, str]:
    """``(bytes, source)``: memory this process can still allocate (``None`` where unknown)."""
    try:
        info = _meminfo()
        avail, source = info["MemAvailable"] + info.get("SwapFree", 0), "MemAvailable + SwapFree in /proc/meminfo"
    except (OSError, KeyError, ValueError):
        try:
            avail, source = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "free physical pages"
        except (OSError, ValueError, AttributeError):
            avail, source = None, "unknown"
    left = _cgroup_left()
    if left is not None and (avail is None or left < avail):
        avail, source = max(left, 0), "the cgroup's memory.max - memory.current"
    return avail, source


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return ""  # pragma: no cover


def env_memory_check(label: str, num_envs: int, bytes_per_env: float, what: str) -> None:
    """Refuse ``num_envs`` envs of ``bytes_per_env`` each (``what`` says what they hold) when the
    total exceeds the memory available, with an ``InvalidInputError`` naming ``num_envs``."""
    need = float(num_envs) * float(bytes_per_env)
    avail, source = available_memory()
    if need <= _ADDRESS_SPACE and (avail is None or need <= avail):
        return
    have = f"the {_size(avail)} available ({source})" if avail is not None else "any address space"
    raise InvalidInputError(
        f"num_envs: {num_envs} envs of backend {label!r} need about {_size(need)} ({_size(bytes_per_env)} per env: "
        f"{what}), more than {have}; use fewer envs per process, or shard them over processes or machines "
        f"(unisim-ray)")


#: ``<asset>`` elements whose ``file`` an engine reads, and the ``<compiler>`` folder each is found in.
_ASSET_DIRS = {"mesh": "meshdir", "hfield": "meshdir", "skin": "meshdir", "texture": "texturedir"}
#: Memory a loader holds per byte of a file, beyond the bytes themselves: an OBJ's text becomes
#: vertex and face lists (the reader's Python lists: ~16 bytes per byte of text), a binary STL's
#: 50-byte records float64 triangles (72 bytes), anything else (PNG, MSH) about its own size.
_PER_BYTE = {".obj": 16.0, ".stl": 1.5}


def model_file_memory_check(label: str, path: str) -> None:
    """Refuse a model file before an engine reads it when what it names cannot be read in bounded
    memory and time: height fields (``<hfield nrow ncol>``, float32 samples) or asset files
    (meshes, height-field images, textures, skins) needing more memory than is available, an asset
    that is not a regular file (a FIFO would hang every loader, ``/dev/zero`` would grow without
    end), or a binary STL whose header disagrees with its size (a sparse file of zeros)."""
    from unisim_core.contract.mjcf_tree import MjcfLiteError, read_tree

    try:
        root = read_tree(path)
    except (MjcfLiteError, ET.ParseError, OSError, UnicodeError, ValueError):
        return  # the engine names what is wrong with the file
    try:
        hfields = [(h.get("name", ""), int(h.get("nrow", 0)), int(h.get("ncol", 0))) for h in root.iter("hfield")]
    except ValueError:
        return
    need = sum(4.0 * r * c for _, r, c in hfields)
    avail, source = available_memory()
    if avail is not None and need > avail:
        name, r, c = max(hfields, key=lambda h: h[1] * h[2])
        raise InvalidInputError(
            f"scene.model_file: {path!r}: its height fields need about {_size(need)} (hfield {name!r} is {r} x {c}), "
            f"more than the {_size(avail)} available ({source}); backend {label!r} was not asked to load it")
    files = [(f, _asset_bytes(path, f)) for f in _asset_files(root, path)]
    total = sum(n for _, n in files)
    if avail is not None and total > avail:
        big, n = max(files, key=lambda fn: fn[1])
        raise InvalidInputError(
            f"scene.model_file: {path!r}: its asset files need about {_size(total)} to load ({big!r} alone "
            f"{_size(n)}), more than the {_size(avail)} available ({source}); backend {label!r} was not asked to "
            f"load it")


def _asset_files(root: ET.Element, path: str) -> list[str]:
    """The files ``<asset>`` elements name, resolved as MuJoCo does: ``<compiler meshdir texturedir>``
    (``assetdir`` for both) relative to the main file's folder; absolute paths as given."""
    main = os.path.dirname(os.path.abspath(path))
    dirs = {"meshdir": "", "texturedir": ""}
    for c in root.iter("compiler"):
        for key in dirs:
            dirs[key] = c.get(key, c.get("assetdir", dirs[key]))
    files = []
    for tag, key in _ASSET_DIRS.items():
        for e in root.iter(tag):
            for attr in ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback"):
                if e.get(attr):
                    files.append(os.path.join(main, dirs[key], e.get(attr)))
    return files


def _asset_bytes(model: str, path: str) -> float:
    """Memory a loader needs for the asset file ``path``; refuses one that is not a regular file or
    a binary STL whose 84-byte header disagrees with its size. 0 for a missing file (the engine
    names it)."""
    import stat

    try:
        st = os.stat(path)  # follows links: a link to /dev/zero is a character device
    except OSError:
        return 0.0
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(
            st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InvalidInputError(f"scene.model_file: {model!r} names the asset file {path!r}, which is {kind}; "
                                "an asset must be a regular file (nothing was read)")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".stl":
        with open(path, "rb") as f:
            head = f.read(84)
        n = int.from_bytes(head[80:84], "little") if len(head) == 84 else 0
        if n < 1 or st.st_size < 84 + 50 * n:
            raise InvalidInputError(
                f"scene.model_file: {model!r} names the mesh {path!r}: not a binary STL of {st.st_size} bytes (its "
                f"header gives {n} triangles, {84 + 50 * n} bytes); MuJoCo's loaders read binary STL with at least "
                "one triangle (nothing else was read)")
        return (84 + 50 * n) * (1 + _PER_BYTE[ext])
    return st.st_size * (1 + _PER_BYTE.get(ext, 0.0))


def _scene_and_envs(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[str | None, Any]:
    scene = args[0] if args else kwargs.get("scene")
    path = getattr(scene, "model_file", None)
    return (path if isinstance(path, str) else None), (args[1] if len(args) > 1 else kwargs.get("num_envs"))


def construction_error(label: str, args: Sequence[Any], kwargs: Mapping[str, Any], exc: Exception) -> Exception:
    """The error a backend constructor called with ``args``/``kwargs`` should raise for ``exc``:
    ``exc`` itself when it is already clear (a UniSim error naming what it should, a programming
    error such as a ``TypeError``), else a UniSim error naming the model file or ``num_envs``."""
    from unisim_core.contract.mjcf_tree import MjcfLiteError

    path, num_envs = _scene_and_envs(args, kwargs)
    if path is None:
        return exc
    if isinstance(exc, UniSimError):
        named = path in str(exc) or os.path.basename(path) in str(exc)
        return exc if named or not isinstance(exc, MjcfLiteError) else with_context(exc, path)
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, MemoryError) or (isinstance(exc, ValueError | RuntimeError)
                                        and any(s in str(exc).lower() for s in _ALLOC_FAILURES)):
        return InvalidInputError(f"num_envs: backend {label!r} could not allocate {num_envs} envs of {path!r} "
                                 f"({text}); use fewer envs per process, or shard them (unisim-ray)")
    if isinstance(exc, UnicodeError):
        return InvalidInputError(f"scene.model_file: {path!r} is not UTF-8 text ({exc}); an MJCF model file "
                                 f"is UTF-8 encoded XML")
    if isinstance(exc, ValueError | KeyError | IndexError | ArithmeticError | SyntaxError):
        return InvalidInputError(f"scene.model_file: backend {label!r} could not load {path!r}: {text}")
    if isinstance(exc, RuntimeError | OSError):
        return EngineError(f"backend {label!r} failed to build {path!r} with {num_envs} envs: {text}")
    return exc
