"""Starting and stopping the site for a benchmark: a free loopback port, one of the project's
serve scripts (or runserver) in a process group of its own, a wait until `/` answers 200, and a
stop that ends the whole group. bench/ is a folder of scripts, not a package: they import this
with bench/ on the path, as a script's own folder is."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / ".venv" / "bin" / "python"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, headers: dict | None = None, timeout: float = 30) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_until_up(base: str, server: subprocess.Popen, timeout: float = 90) -> None:
    """Until `base` + "/" answers 200; SystemExit when the server exits or takes too long."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}; see its output.")
        try:
            if fetch(base + "/", timeout=5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the server did not answer within {timeout} s.")


def throwaway_key() -> str:
    return secrets.token_urlsafe(50)


def start(
    command: list[str],
    port: int,
    env: dict[str, str],
    log: IO | int | None = None,
    timeout: float = 90,
) -> subprocess.Popen:
    """`command` (scripts/serve.sh, scripts/serve-proxy.sh, runserver) with `env` added to this
    process's, in a process group of its own so that `stop` ends its workers too; its output to
    `log` (a file, or subprocess.DEVNULL) or, without one, to this script's own. Returns once
    port `port` answers `/`."""
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=None if log is None else subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", server, timeout)
    except SystemExit:
        stop(server)
        raise
    return server


def serve(port: int, workers: int, log: IO | int | None = None, **env: str) -> subprocess.Popen:
    """scripts/serve.sh (what `make serve` runs: gunicorn, DEBUG off) on `port`."""
    settings = {"PORT": str(port), "WORKERS": str(workers), "ACCESS_LOG": "/dev/null"}
    settings["PY"] = str(PY)
    return start([str(ROOT / "scripts" / "serve.sh")], port, {**settings, **env}, log)


def serve_proxy(
    port: int, workers: int, log: IO | int | None = None, **env: str
) -> subprocess.Popen:
    """scripts/serve-proxy.sh (nginx before gunicorn) on `port`, with a throw-away secret key."""
    settings = {
        "PORT": str(port),
        "WORKERS": str(workers),
        "ACCESS_LOG": "/dev/null",
        "DJANGO_SECRET_KEY": throwaway_key(),
        "NGINX": nginx(),
    }
    return start([str(ROOT / "scripts" / "serve-proxy.sh")], port, {**settings, **env}, log, 120)


def nginx() -> str:
    return shutil.which("nginx") or "/usr/sbin/nginx"


def stop(server: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM to the server's whole process group, SIGKILL if it is not gone in `timeout`."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=timeout)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
