"""``routecalc batch --address`` on a real two-node Ray cluster on this machine.

Its own suite (``pytest -m cluster``; ``make test`` runs it after the default run).
The head and a second node are started with ``ray start`` (one CPU each, so
the batch's two workers land one on each node), each in a private temporary
folder with its own ports and its own session token, and stopped at the
end whatever happens, by their process groups (never ``ray stop``, which
would stop every Ray on a shared machine).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CORPUS

from routecalc.batch import Settings, jobs_for, read_inputs, read_results, run_batch

pytestmark = pytest.mark.cluster  # its own suite: make test runs it after the default one

RAY = str(Path(sys.executable).with_name("ray"))
SLICE = sorted(CORPUS.rglob("*.json"))[3::40]  # 13 positions of every corpus game
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


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, dict]]:
    """(address, environment) of a running two-node cluster."""
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
            assert code == 0, f"ray start ({name}) failed:\n{(Path(folder) / f'{name}.log').read_text()[-3000:]}"
        yield address, env
    finally:
        for group in groups:
            stop(group)
        shutil.rmtree(folder, ignore_errors=True)


def test_batch_on_a_two_node_cluster(cluster, tmp_path):
    address, env = cluster
    out = tmp_path / "cluster.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "routecalc.cli",
            "batch",
            *map(str, SLICE),
            "-o",
            str(out),
            "--address",
            address,
            "--batch-size",
            "2",
            "--no-progress",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    remote = {line["file"]: line for line in read_results(out)}
    assert sorted(remote) == sorted(map(str, SLICE))
    nodes = {line["node"] for line in remote.values()}
    assert len(nodes) == 2, f"tasks ran on {nodes}, not on both nodes"
    assert "lines per node" in done.stderr

    local_out = tmp_path / "local.jsonl"
    run_batch(jobs_for(read_inputs(SLICE), ["auto"]), local_out, Settings(), engine="inline")
    local = {line["file"]: line for line in read_results(local_out)}
    for file, line in local.items():
        assert remote[file]["answer"]["revenue"] == line["answer"]["revenue"] == line["reference"]["optimum"]
        assert remote[file]["answer"]["status"] == line["answer"]["status"] == "optimal"
        assert remote[file]["answer"]["routes"] == line["answer"]["routes"]
    assert json.loads(out.read_text().splitlines()[0])["reference"]  # corpus figures travel with the lines
