"""The process-wide limit on envs: each SAPIEN ``PhysxCpuSystem`` holds one POSIX thread-specific key
while it lives (measured on SAPIEN 3.0.3: 1,000 systems, 1,000 keys, all back when they are freed), and
glibc gives a process 1,024 (``PTHREAD_KEYS_MAX``). With them spent, whatever creates a
thread-local next fails or hangs: importing torch after 1,024 envs deadlocked in pybind11's
``PyGILState_Ensure``, and the interpreter's exit aborted ("Couldn't create autoTSSkey mapping").
A batch that would leave fewer than :data:`KEY_MARGIN` keys is refused before any system is made.
"""

from __future__ import annotations

import ctypes

from unisim_core import InvalidInputError

__all__ = ["KEY_MARGIN", "check_thread_keys", "free_thread_keys"]

#: Thread-specific keys left for the rest of the process (its libraries' thread-locals).
KEY_MARGIN = 64


def free_thread_keys(needed: int) -> int:
    """How many more keys ``pthread_key_create`` gives this process, counted up to ``needed`` by
    creating them and deleting them again at once; ``needed`` where the C library has no POSIX
    thread keys (Windows: no such limit to count)."""
    try:
        libc = ctypes.CDLL(None)
        create, delete = libc.pthread_key_create, libc.pthread_key_delete
    except (AttributeError, OSError, TypeError):
        return needed
    keys = []
    try:
        while len(keys) < needed:
            key = ctypes.c_ulong()  # pthread_key_t: unsigned int (glibc) or unsigned long (macOS)
            if create(ctypes.byref(key), None) != 0:
                break
            keys.append(key)
    finally:
        for key in keys:
            delete(key)
    return len(keys)


def check_thread_keys(num_envs: int) -> None:
    """Refuse ``num_envs`` PhysX CPU systems that would leave fewer than :data:`KEY_MARGIN` keys."""
    free = free_thread_keys(num_envs + KEY_MARGIN)
    if free < num_envs + KEY_MARGIN:
        raise InvalidInputError(
            f"num_envs: SAPIEN's CPU PhysX holds one of this process's POSIX thread-specific keys per env "
            f"(glibc gives 1024 a process) and {free} are free, of which {KEY_MARGIN} stay for the other "
            f"libraries: expected at most {max(free - KEY_MARGIN, 0)} envs, got {num_envs}. Spread larger batches "
            f"over processes (the 'ray' backend's shards, or isolation='subprocess' per backend)")
