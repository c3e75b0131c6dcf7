"""`scripts/serve-proxy.sh`: nginx in front of gunicorn, so slow clients cannot starve the workers.

One stack for the module: nginx on a free loopback port in front of gunicorn with two sync
workers (production settings, the configured database). Slow clients — half a header, one byte
of a promised body — are opened against nginx and a normal request must be answered within a
second; the same clients against gunicorn alone hold both workers, which is what the proxy is for.
"""

from __future__ import annotations

import json
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

import pytest
from django.conf import settings

from catalog.middleware import too_large_message

ROOT = Path(__file__).resolve().parent.parent
# /usr/sbin is not on an ordinary user's PATH.
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None
)
WORKERS = 2
SLOW_CLIENTS = 2 * WORKERS + 2

pytestmark = pytest.mark.skipif(
    NGINX is None, reason="needs Debian's nginx (apt-get install nginx; make test installs it)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 10, **headers: str) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


PAGES = ("/", "/variants/", "/api/variants?gpu=sm90")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """(nginx's base URL, gunicorn's base URL) while scripts/serve-proxy.sh runs, its pages
    rendered once (the figures below are about waiting, not about a cold render)."""
    port, upstream = free_port(), free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "UPSTREAM_PORTS": str(upstream),
        "WORKERS": str(WORKERS),
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "ACCESS_LOG": "/dev/null",
        "NGINX": NGINX,
        # The workers share their rendered pages, as under `make serve`, in a cache of their own.
        "DJANGO_CACHE": "file",
        "DJANGO_CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
        # collectstatic of its own: other test processes may be collecting at the same time.
        "DJANGO_STATIC_ROOT": str(tmp_path_factory.mktemp("static")),
    }
    # Its output goes to a file, never a pipe: a server left running would hold a pipe open and
    # block whoever reads it to the end.
    log = tmp_path_factory.mktemp("serve-proxy") / "stderr.log"
    server = subprocess.Popen(
        [str(ROOT / "scripts" / "serve-proxy.sh")],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if get(base + "/", timeout=5)[0] == 200:
                    break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail(f"serve-proxy.sh did not come up: {log.read_text()[-2000:]}")
        for _ in range(WORKERS + 1):
            for path in PAGES:
                get(base + path)
        yield base, f"http://127.0.0.1:{upstream}"
    finally:
        # The whole group, whether or not the script itself is still there: nginx and gunicorn
        # must not outlive the test.
        stop(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        stop(server.pid, signal.SIGKILL)
        server.wait(timeout=10)


def stop(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        pass


def slow_clients(base: str, count: int) -> list[socket.socket]:
    """`count` open connections that never finish their request: half of them stop in the middle
    of the headers, the other half after the first byte of a 1,000-byte body."""
    host, port = base.removeprefix("http://").split(":")
    sockets = []
    for i in range(count):
        s = socket.create_connection((host, int(port)), timeout=5)
        if i % 2:
            s.sendall(
                b"POST /api/recommend HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
            )
        else:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: sl")
        sockets.append(s)
    time.sleep(0.5)  # every connection accepted and stuck where it stopped
    return sockets


def still_waiting(s: socket.socket) -> bool:
    """Whether the connection is open with no answer yet."""
    s.setblocking(False)
    try:
        return s.recv(1) != b""  # data (an answer) or EOF: not waiting
    except BlockingIOError:
        return True
    finally:
        s.setblocking(True)


def timed_get(url: str, timeout: float) -> tuple[int, float]:
    started = time.monotonic()
    status = get(url, timeout=timeout)[0]
    return status, time.monotonic() - started


def test_a_normal_request_is_served_at_once_while_slow_clients_hang(stack):
    base, _ = stack
    hanging = slow_clients(base, SLOW_CLIENTS)
    try:
        for path in PAGES:
            status, seconds = timed_get(base + path, timeout=10)
            assert (status, seconds < 1) == (200, True), f"{path}: {status} in {seconds:.2f} s"
        assert all(still_waiting(s) for s in hanging), "nginx answered a slow client"
    finally:
        for s in hanging:
            s.close()


def test_a_body_over_the_limit_is_refused_by_nginx_with_django_s_sentence(stack):
    base, _ = stack
    limit = settings.MAX_REQUEST_BODY_BYTES
    message = too_large_message(limit)
    for path, content_type, expected in (
        ("/api/recommend", "application/json", json.dumps({"error": message})),
        ("/wizard/", "text/plain; charset=utf-8", message),
    ):
        request = urllib.request.Request(
            base + path, data=b"x" * (limit + 1), method="POST", headers={"Content-Type": "a/b"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 413
        assert refused.value.headers["Content-Type"] == content_type
        assert refused.value.read().decode().strip() == expected


def test_forwarded_headers_are_set_by_nginx_not_taken_from_the_client(stack):
    # /api/variants builds absolute URLs: they show the scheme and host Django believes in.
    base, _ = stack
    status, _, body = get(
        base + "/api/variants?gpu=sm90",
        **{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
    )
    assert status == 200
    assert json.loads(body)["results"][0]["url"].startswith(base + "/variants/")


def test_static_files_pass_through_with_whitenoise_s_headers(stack):
    base, _ = stack
    status, headers, body = get(base + "/static/css/site.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css") and body


def test_without_the_proxy_the_same_slow_clients_starve_gunicorn(stack):
    # It ties up the workers until the slow sockets close, then waits until they answer again.
    _, upstream = stack
    hanging = slow_clients(upstream, SLOW_CLIENTS)
    try:
        with pytest.raises(OSError):  # socket.timeout: no worker free to read the request
            timed_get(upstream + "/", timeout=1.5)
    finally:
        for s in hanging:
            s.close()
    status, _ = timed_get(upstream + "/", timeout=30)
    assert status == 200
