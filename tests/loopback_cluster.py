"""A real two-node Ray cluster on this machine (loopback), for the cluster test
and ``benchmarks/batch_engines.py --two-node``.

The head and a second node are started with ``ray start`` (one CPU each, so
a batch's two workers land one on each node), each in a private temporary
folder with its own ports and its own session token, and stopped at the
end whatever happens, by their process groups (never ``ray stop``, which
would stop every Ray on a shared machine).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
START_TIMEOUT = 240  # seconds: a node starts in 5 s on a quiet machine, far slower on a busy shared one


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def node_ports() -> list[str]:
    """Ports of one node's own servers: two nodes on one machine must not share them."""
    return [
        arg
        for option in (
            "--node-manager-port",
            "--object-manager-port",
            "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port",
            "--metrics-export-port",
        )
        for arg in (option, str(free_port()))
    ]


def stop(group: int) -> None:
    """End every process of one node (the ``ray start`` process group)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def loopback_cluster() -> Iterator[tuple[str, dict]]:
    """(address, environment) of a running two-node cluster, stopped on exit."""
    folder = tempfile.mkdtemp(prefix="rc-ray-", dir="/tmp")  # short: Ray's socket paths have a length limit
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    common = [
        "--node-ip-address",
        "127.0.0.1",
        "--num-cpus",
        "1",
        "--object-store-memory",
        str(80 * 2**20),
        "--temp-dir",
        folder,
        "--include-log-monitor",
        "false",
        "--disable-usage-stats",
    ]
    port = free_port()
    address = f"127.0.0.1:{port}"
    groups: list[int] = []
    try:
        for name, args in (
            (
                "head",
                ["--head", "--port", str(port), "--include-dashboard", "false", "--dashboard-port", str(free_port())],
            ),
            ("node", ["--address", address]),
        ):
            with open(Path(folder) / f"{name}.log", "w") as log:
                start = subprocess.Popen(
                    [RAY, "start", *args, *common, *node_ports()],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                groups.append(start.pid)  # its daemons stay in its process group after it returns
                code = start.wait(timeout=START_TIMEOUT)
            if code != 0:
                raise RuntimeError(f"ray start ({name}) failed:\n{(Path(folder) / f'{name}.log').read_text()[-3000:]}")
        yield address, env
    finally:
        for group in groups:
            stop(group)
        shutil.rmtree(folder, ignore_errors=True)
