"""Run by ``test_worker_reliability.py`` in a fresh interpreter: forks with backends alive.

``python fork_probe.py NAME[@subprocess] ...`` builds each backend (quadruped, 2 envs, one step),
then

1. ``os.fork()``: the child tries ``step`` on each, then exits *normally* (``sys.exit``: the
   interpreter's own finalization, where an engine's destructor could hang) without touching
   anything else;
2. ``multiprocessing`` with the ``fork`` start method: the child process tries ``step``;

and prints one JSON line: per backend, what each child got, and whether the parent's state is
unchanged and it still steps (a subprocess backend: its worker still runs).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time

import numpy as np

from unisim_core import SceneCfg, create_backend
from unisim_core.scenes import scene_path


def _try_step(backend) -> str:
    try:
        backend.step(np.zeros((2, backend.num_actuators)))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        return f"{type(exc).__name__}: {exc}"
    return "stepped"


def _mp_child(backend, queue) -> None:
    queue.put(_try_step(backend))


def _wait(pid: int, timeout: float) -> int | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def main(specs: list[str]) -> None:
    scene = SceneCfg(scene_path("quadruped"), default_keyframe="home")
    backends = {}
    for spec in specs:
        name, _, iso = spec.partition("@")
        b = create_backend(name, scene, 2, 0.005, isolation=iso or "inprocess")
        b.step(np.zeros((2, b.num_actuators)))
        backends[spec] = b
    before = {spec: b.get_qpos().copy() for spec, b in backends.items()}
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        report = {spec: _try_step(b) for spec, b in backends.items()}
        os.write(wfd, json.dumps(report).encode())
        os.close(wfd)
        sys.exit(0)  # a normal exit: the interpreter finalizes (and must not hang on the engines)
    os.close(wfd)
    code = _wait(pid, 20)
    with os.fdopen(rfd, "rb") as f:
        fork_report = json.loads(f.read() or b"{}")
    ctx = multiprocessing.get_context("fork")
    mp_report = {}
    for spec, b in backends.items():
        queue = ctx.Queue()
        p = ctx.Process(target=_mp_child, args=(b, queue))
        p.start()
        p.join(20)
        if p.is_alive():
            p.kill()
            p.join()
            mp_report[spec] = "hung"
        else:
            mp_report[spec] = queue.get(timeout=5) if not queue.empty() else f"no answer (exit {p.exitcode})"
    out = {"fork_exit": code, "fork": fork_report, "multiprocessing": mp_report, "parent": {}}
    for spec, b in backends.items():
        unchanged = bool(np.array_equal(b.get_qpos(), before[spec]))
        out["parent"][spec] = {"unchanged": unchanged, "steps": _try_step(b) == "stepped",
                               "worker_alive": getattr(b, "_client", None) is None or b._client.returncode is None}
        b.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
