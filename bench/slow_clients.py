"""Slow clients against gunicorn alone and behind nginx (scripts/serve-proxy.sh).

    .venv/bin/python bench/slow_clients.py [--workers 3] [--slow 3]

Starts scripts/serve-proxy.sh (production settings, WORKERS sync workers, the file cache in a
temporary folder) on free loopback ports. Then, for gunicorn's own port and for nginx's, opens
--slow connections that never finish their request (half of them stop inside the headers, the
others after one byte of a promised 1,000-byte body) and times a normal `GET /` while they hang:
one request against gunicorn alone (it waits until gunicorn's 30 s timeout frees a worker), the
median and worst of 20 behind nginx. Never talks to anything but 127.0.0.1; stops the servers
when done. Exit status 1 when nginx did not answer within a second.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from server import free_port, nginx, serve_proxy, stop


def timed_get(url: str, timeout: float = 60) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(url, timeout=timeout) as response:
        response.read()
    return time.monotonic() - started


def slow_clients(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2:
            s.sendall(
                b"POST /api/recommend HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
            )
        else:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: sl")
        sockets.append(s)
    time.sleep(0.5)
    return sockets


def start(port: int, upstream: int, workers: int, cache_dir: str, log) -> subprocess.Popen:
    cache = {"DJANGO_CACHE": "file", "DJANGO_CACHE_DIR": cache_dir}
    return serve_proxy(port, workers, log, UPSTREAM_PORTS=str(upstream), **cache)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3, help="gunicorn sync workers (3)")
    parser.add_argument("--slow", type=int, default=3, help="slow connections (3)")
    args = parser.parse_args()
    if not os.access(nginx(), os.X_OK):
        raise SystemExit("nginx is not installed: apt-get install nginx")
    port, upstream = free_port(), free_port()
    # The servers' own output (gunicorn's worker timeouts among it) goes to a log file.
    log = tempfile.NamedTemporaryFile("w", prefix="slow-clients-", suffix=".log", delete=False)
    with tempfile.TemporaryDirectory() as cache_dir:
        server = start(port, upstream, args.workers, cache_dir, log)
        try:
            for _ in range(args.workers + 1):  # every worker has rendered the page once
                timed_get(f"http://127.0.0.1:{port}/")
            print(f"{args.slow} slow connections, gunicorn {args.workers} sync workers, GET /")

            hanging = slow_clients(port, args.slow)
            times = [timed_get(f"http://127.0.0.1:{port}/", timeout=10) for _ in range(20)]
            for s in hanging:
                s.close()
            behind = statistics.median(times) * 1000, max(times) * 1000
            print(f"behind nginx:    median {behind[0]:.0f} ms, worst {behind[1]:.0f} ms (20)")

            hanging = slow_clients(upstream, args.slow)
            alone = timed_get(f"http://127.0.0.1:{upstream}/", timeout=60)
            for s in hanging:
                s.close()
            print(f"gunicorn alone:  {alone * 1000:.0f} ms (1 request)")
        finally:
            stop(server)
    os.unlink(log.name)
    return 0 if behind[1] < 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
