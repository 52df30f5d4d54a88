"""Helpers to start the sample workers in real subprocesses."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from unisim_core.worker import WorkerClient

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}


def module_argv(factory: str) -> list[str]:
    """Launch through `python -m unisim_core.worker sample_workers:<factory>`."""
    return [sys.executable, "-m", "unisim_core.worker", f"sample_workers:{factory}"]


def script_argv(factory: str, *extra: str) -> list[str]:
    """Launch sample_workers.py as a script (safe_errors=(ValueError,), optional version)."""
    return [sys.executable, str(HERE / "sample_workers.py"), factory, *extra]


def shm_names() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith("unisim-")}


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture
def start():
    """start(argv, **kw) -> WorkerClient; every client is closed at teardown."""
    clients: list[WorkerClient] = []

    def _start(argv: list[str], **kw) -> WorkerClient:
        kw.setdefault("init_timeout", 20.0)
        kw.setdefault("call_timeout", 10.0)
        client = WorkerClient(argv, env=ENV, **kw)
        clients.append(client)
        return client

    yield _start
    for c in clients:
        c.close()
