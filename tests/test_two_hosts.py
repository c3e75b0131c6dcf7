"""Two app servers over one PostgreSQL and one Redis: a write through one is served by the other
at once.

Two gunicorn servers (scripts/serve.sh, one sync worker each, production settings) on their own
loopback ports share a database of their own (created beside DATABASE_URL's, migrated, loaded,
dropped afterwards) and the Redis cache (REDIS_URL, or a redis-server this module starts). Each
server keeps its last responses in memory (catalog.cache), keyed by the catalogue version it
reads from Redis on every request: a build recorded through A must retire B's copy too.
Run by `make test-postgres` (scripts/with-postgres.sh and scripts/with-redis.sh).
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
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_SERVER = shutil.which("redis-server")
VARIANT = ("build-pytorch", "main", "pytorch-python313-cuda12_8-sm90-avx512")

pytestmark = [
    pytest.mark.skipif(
        not DATABASE_URL.startswith(("postgres://", "postgresql://")),
        reason="needs PostgreSQL (DATABASE_URL): make test-postgres runs it",
    ),
    pytest.mark.skipif(
        not os.environ.get("REDIS_URL") and REDIS_SERVER is None,
        reason="needs Redis: REDIS_URL, or Debian's redis-server (apt-get install redis-server)",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url: str, body: dict | None = None, **headers: str) -> tuple[int, dict, bytes]:
    """The answer to a request that names one host for both servers, as behind a proxy."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Host": "127.0.0.1", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture(scope="module")
def redis_url():
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen(
            [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", folder]
            + ["--save", "", "--appendonly", "no", "--maxmemory-policy", "volatile-lru"],
            stdout=subprocess.DEVNULL,
        )
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            server.terminate()
            server.wait(timeout=10)


@pytest.fixture(scope="module")
def database_url():
    """A database of its own beside DATABASE_URL's, so the servers' writes touch no other test's."""
    import psycopg

    name = f"catalogue_hosts_{os.getpid()}"
    base, _, _ = DATABASE_URL.rpartition("/")
    with psycopg.connect(DATABASE_URL, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(DATABASE_URL, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# Run in the servers' environment: a superuser's API token (its secret printed), and a fresh
# catalogue version, so that nothing Redis held before this run can be served.
TOKEN_SCRIPT = """
from django.contrib.auth.models import User
from django.core.cache import cache
from catalog.cache import STATUS_KEY, STRUCTURE_KEY
from catalog.models import ApiToken
user = User.objects.create_superuser("ci", "ci@example.org", None)
print(ApiToken.issue(user, "two hosts")[1])
cache.delete_many([STRUCTURE_KEY, STATUS_KEY])
"""


@pytest.fixture(scope="module")
def hosts(redis_url, database_url):
    """(base URL of A, base URL of B, an API token) while both servers run."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DJANGO_CACHE": "redis",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "ACCESS_LOG": "/dev/null",
        "WORKERS": "1",
        "PY": sys.executable,
        # collectstatic of its own: other test processes may be collecting at the same time.
        "DJANGO_STATIC_ROOT": tempfile.mkdtemp(prefix="catalogue-static-"),
    }

    def manage(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    subprocess.run(
        [str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env={**env, "PREPARE": "only"}, check=True
    )
    manage("load-catalogue", "-v", "0")
    token = manage("shell", "-v", "0", "-c", TOKEN_SCRIPT).split()[-1]

    servers, bases = [], []
    try:
        for _ in range(2):
            port = free_port()
            servers.append(
                subprocess.Popen(
                    [str(ROOT / "scripts" / "serve.sh")],
                    cwd=ROOT,
                    env={**env, "PREPARE": "0", "BIND": f"127.0.0.1:{port}"},
                    start_new_session=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            bases.append(f"http://127.0.0.1:{port}")
        for base in bases:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if request(base + "/api/variants?gpu=sm90")[0] == 200:
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline, f"{base} did not come up"
                time.sleep(0.3)
        yield bases[0], bases[1], token
    finally:
        for server in servers:
            os.killpg(server.pid, signal.SIGTERM)
        for server in servers:
            server.wait(timeout=20)
        shutil.rmtree(env["DJANGO_STATIC_ROOT"], ignore_errors=True)


def status_in_listing(base: str) -> tuple[str, str]:
    """The variant's status as /api/variants lists it, and the answer's ETag."""
    status, headers, body = request(base + "/api/variants?gpu=sm90")
    assert status == 200
    rows = {(r["repository"], r["branch"], r["pname"]): r for r in json.loads(body)["results"]}
    return rows[VARIANT]["status"], headers["ETag"]


def test_a_build_recorded_through_one_server_is_served_by_the_other_at_once(hosts):
    a, b, token = hosts
    before, tag = status_in_listing(b)
    assert before != "failed"
    # B answers from its cache now (its in-process memo and Redis): the same answer again.
    assert status_in_listing(b) == (before, tag)
    assert status_in_listing(a) == (before, tag)

    repository, branch, pname = VARIANT
    build = {"repository": repository, "branch": branch, "pname": pname, "status": "failed"}
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    status, _, body = request(a + "/api/builds", build, **headers)
    assert status == 201, body

    after, new_tag = status_in_listing(b)
    assert (after, new_tag != tag) == ("failed", True)
    assert status_in_listing(a) == (after, new_tag)
