"""A local Ray instance started by the backend is private to this machine and user (#39).

Before #39, ``create_backend("ray", ...)`` without a cluster left six listeners (GCS, raylet,
driver, workers) bound to all interfaces, its session and socket folders were mode 0777 without
the sticky bit and the auth token file 0644; ``RAY_ADDRESS=127.0.0.1:1`` (no cluster there) gave
no error in 60 s, Ray dialling the machine's address instead. Each case runs in a fresh
interpreter (a Ray session is per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

pytest.importorskip("ray")

PROBE = textwrap.dedent("""
    import json, os, socket, stat
    import numpy as np
    import ray
    from unisim_core import SceneCfg, create_backend
    from unisim_core.scenes import scene_path

    b = create_backend("ray", SceneCfg(scene_path("quadruped")), num_envs=2, sim_dt=0.005, inner="mujoco", shards=1)
    b.step(np.zeros((2, b.num_actuators)), 1)

    def ray_pids():  # this process and its descendants (GCS, raylet, workers): not another test's cluster
        parent = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    parent[int(pid)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
        mine, grew = {os.getpid()}, True
        while grew:
            more = {pid for pid, ppid in parent.items() if ppid in mine} - mine
            mine |= more
            grew = bool(more)
        return [str(pid) for pid in mine]

    inodes = set()
    for pid in ray_pids():
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            pass

    def addr(hexaddr, v6):
        raw = bytes.fromhex(hexaddr)
        if not v6:
            return socket.inet_ntop(socket.AF_INET, raw[::-1])
        words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
        return socket.inet_ntop(socket.AF_INET6, words)

    listeners = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in inodes:  # LISTEN, a Ray process's socket
                    local, port = cols[1].split(":")
                    listeners.append(f"{addr(local, v6)}:{int(port, 16)}")
    node = ray._private.worker.global_worker.node
    token = os.environ.get("RAY_AUTH_TOKEN_PATH")
    folder = os.path.dirname(token)
    print(json.dumps({"listeners": listeners, "folder_mode": stat.S_IMODE(os.stat(folder).st_mode),
                      "token": token, "token_mode": stat.S_IMODE(os.stat(token).st_mode),
                      "session_in_folder": node._session_dir.startswith(folder + os.sep), "folder": folder,
                      "gcs": ray.get_runtime_context().gcs_address}))
    b.close()
""")


def test_a_local_instance_listens_on_loopback_only_with_private_files():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "RAY_ADDRESS": ""})
    assert out.returncode == 0, out.stderr[-3000:]
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(facts["listeners"]) >= 4, facts  # GCS, raylet (2), driver, shard worker
    public = [a for a in facts["listeners"] if not a.rpartition(":")[0].removeprefix("::ffff:").startswith("127.")
              and not a.startswith("::1:")]
    assert not public, f"Ray listens beyond the loopback interface: {public}"
    assert facts["gcs"].startswith("127.0.0.1:"), facts["gcs"]
    assert facts["folder_mode"] == 0o700 and facts["session_in_folder"], facts
    assert facts["token"].startswith(facts["folder"]) and facts["token_mode"] == 0o600, facts
    assert not os.path.exists(facts["folder"]), "the private folder outlived the process"


def test_a_cluster_address_nobody_answers_is_an_error_naming_it_within_seconds():
    code = ("from unisim_core import SceneCfg, create_backend\n"
            "from unisim_core.scenes import scene_path\n"
            "try:\n"
            "    create_backend('ray', SceneCfg(scene_path('quadruped')), num_envs=2, sim_dt=0.005, inner='mujoco')\n"
            "except Exception as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "RAY_ADDRESS": "127.0.0.1:1"})
    assert time.monotonic() - t0 < 30, "refusing an unreachable cluster took 30 s or more"
    assert "EngineError no Ray cluster answers at '127.0.0.1:1'" in out.stdout, out.stdout + out.stderr[-2000:]
