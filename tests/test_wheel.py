"""The wheel carries everything of ours: built into a temporary folder,
installed into a fresh virtual environment, it runs ``routecalc demo`` and
``routecalc serve`` outside the source tree.

To stay fast, the fresh environment borrows this environment's installed
dependencies (a ``.pth`` line naming their folder) and the wheel goes in
with ``--no-deps``: what it needs of ours, it must hold itself.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 240) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, ROOT, cwd=out)
    (built,) = out.glob("routecalc-*.whl")
    print(f"wheel {built.name}: {built.stat().st_size:,} bytes")
    return built


def test_the_wheel_holds_the_page_the_schemas_and_the_examples(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "service/static/index.html",
        "service/static/app.js",
        "service/static/style.css",
        "routecalc/schemas/position.schema.json",
        "routecalc/schemas/answer.schema.json",
        "routecalc/examples/1830-late.json",
        "routecalc/__main__.py",
    ):
        assert name in names, name
    assert not [n for n in names if "corpus" in n]  # the corpus stays in the source tree
    assert wheel.stat().st_size < 1_000_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_installed_wheel_runs_outside_the_tree(wheel, tmp_path):
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path).strip())
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel, cwd=tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    # the kernels as plain Python: a cold compile of the fresh install would take most of a minute
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": ""}
    where = run(
        python, "-c", "import routecalc, service; print(routecalc.__file__, service.__file__)", cwd=work, env=env
    )
    assert str(ROOT) not in where and str(venv) in where

    demo = run(venv / "bin" / "routecalc", "demo", cwd=work, env=env)
    assert "1830-late.json: NYC runs" in demo and "320" in demo and "status optimal" in demo
    assert run(python, "-m", "routecalc", "--version", cwd=work, env=env).startswith("routecalc ")
    schema = json.loads(run(venv / "bin" / "routecalc", "schema", "answer", cwd=work, env=env))
    assert schema["title"] == "routecalc answer"

    port = free_port()
    server = subprocess.Popen(
        [str(venv / "bin" / "routecalc"), "serve", "--port", str(port), "--log-level", "warning"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        health = None
        deadline = time.monotonic() + 120
        while health is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                    health = json.loads(response.read())
            except OSError:
                time.sleep(0.2)
        assert health is not None, server.stderr.read().decode()[-2000:] if server.poll() is not None else "no answer"
        assert health["status"] == "ok"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert b"<html" in response.read().lower()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/fixtures", timeout=5) as response:
            assert "1830-late" in [f["name"] for f in json.loads(response.read())]
    finally:
        server.terminate()
        server.wait(30)
