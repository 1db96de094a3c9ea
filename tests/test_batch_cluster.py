"""``routecalc batch --address`` on a real two-node Ray cluster on this machine
(``loopback_cluster``: two ``ray start`` nodes of one CPU each, stopped
whatever happens).

Its own suite (``pytest -m cluster``; ``make test`` runs it after the default run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from conftest import CORPUS
from loopback_cluster import loopback_cluster

from routecalc import batch
from routecalc.batch import EngineFigures, Settings, jobs_for, read_inputs, read_results, run_batch, run_ray

pytestmark = pytest.mark.cluster  # its own suite: make test runs it after the default one

SLICE = sorted(CORPUS.rglob("*.json"))[3::40]  # 13 positions of every corpus game


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, dict]]:
    """(address, environment) of a running two-node cluster."""
    with loopback_cluster() as running:
        yield running


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


def test_embedded_ray_solves_each_position_once(tmp_path):
    """The calling process and Ray's actors take from one queue: every position
    exactly once, optimal, whoever solved it; without the calling process
    helping, Ray's two actors solve them all."""
    files = sorted(CORPUS.rglob("*.json"))[1::10]  # 50 positions of every corpus game
    jobs = jobs_for(read_inputs(files), ["auto"])
    out = tmp_path / "ray.jsonl"
    run = run_batch(jobs, out, Settings(), engine="ray", workers=2)
    lines = read_results(out)
    assert sorted(line["file"] for line in lines) == sorted(map(str, files))
    for line in lines:
        assert line["answer"]["status"] == "optimal"
        assert line["answer"]["revenue"] == line["reference"]["optimum"]
    assert run.engine.engine == "ray"
    assert run.engine.driver_jobs == sum(line["pid"] == os.getpid() for line in lines)

    figures = EngineFigures()
    alone = list(run_ray(jobs, Settings(), workers=2, figures=figures, driver_helps=False))
    assert sorted(line["file"] for line in alone) == sorted(map(str, files))
    assert figures.driver_jobs == 0 and not any(line["pid"] == os.getpid() for line in alone)
    assert len({line["pid"] for line in alone}) <= 2 and figures.workers == 2
    assert figures.init_seconds is not None and figures.ready_seconds is not None
    assert {line["file"]: line["answer"]["revenue"] for line in alone} == {
        line["file"]: line["answer"]["revenue"] for line in lines
    }


def test_the_calling_process_and_ray_actors_share_the_queue(monkeypatch):
    """The calling process's first solve waits until Ray's actor is ready, so
    both take work from the one queue: every position exactly once, some
    solved here and some by the actor, all optimal."""
    files = sorted(CORPUS.rglob("*.json"))[2::10]  # 50 positions of every corpus game
    jobs = jobs_for(read_inputs(files), ["auto"])
    figures = EngineFigures()
    solve_here = batch.solve_job

    def once_ray_is_ready(job, settings, node):
        deadline = time.monotonic() + 240  # Ray starts in seconds; far slower on a busy shared machine
        while figures.ready_seconds is None:
            assert time.monotonic() < deadline, "Ray's actor never got ready"
            time.sleep(0.05)
        return solve_here(job, settings, node)

    monkeypatch.setattr(batch, "solve_job", once_ray_is_ready)  # the actors solve in their own processes
    lines = list(run_ray(jobs, Settings(), workers=2, figures=figures))
    assert sorted(line["file"] for line in lines) == sorted(map(str, files))
    here = [line for line in lines if line["pid"] == os.getpid()]
    assert 1 <= len(here) == figures.driver_jobs < len(lines)
    assert figures.workers == 1  # two CPUs: the calling process and one actor
    for line in lines:
        assert line["answer"]["status"] == "optimal"
        assert line["answer"]["revenue"] == line["reference"]["optimum"]
