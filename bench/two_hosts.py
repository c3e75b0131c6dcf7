"""Load figure of two app servers against one, behind nginx, sharing one Redis cache.

    .venv/bin/python bench/two_hosts.py [--duration 4] [--connections 20] [--workers 1]

Starts a throwaway redis-server on a free loopback port, then scripts/serve-proxy.sh twice on
the configured database (DATABASE_URL, or SQLite): with HOSTS=1 and with HOSTS=2, each host a
gunicorn server of --workers sync workers, DJANGO_CACHE=redis. For each it runs wrk through
nginx (after a 1 s warm-up) on the matrix page, a variant page and the JSON API, and prints
requests/s and latency; then the two-server throughput as a multiple of the one-server one.
Client, nginx, servers and Redis share this machine's cores, so the multiple is bounded by them.
Never talks to anything but 127.0.0.1. Exit status 1 when any request failed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# bench/load.py's wrk runner and server helpers (bench/ is a folder of scripts, not a package).
sys.path.insert(0, str(Path(__file__).resolve().parent))
load = importlib.import_module("load")
server = importlib.import_module("server")
LUA, first_variant_url, run_wrk = load.LUA, load.first_variant_url, load.run_wrk
free_port = server.free_port


def serve(hosts: int, workers: int, redis_url: str, log) -> tuple[subprocess.Popen, str]:
    port = free_port()
    redis = {"HOSTS": str(hosts), "DJANGO_CACHE": "redis", "REDIS_URL": redis_url}
    return server.serve_proxy(port, workers, log, **redis), f"http://127.0.0.1:{port}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=4, help="seconds per target (default 4)")
    parser.add_argument("--connections", type=int, default=20, help="concurrent connections (20)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (2)")
    parser.add_argument("--workers", type=int, default=1, help="sync workers per server (1)")
    args = parser.parse_args()
    for program in ("wrk", "redis-server"):
        if not shutil.which(program):
            raise SystemExit(f"{program} is not installed: apt-get install {program}")
    targets = [
        ("matrix page /variants/", "/variants/"),
        ("variant detail page", first_variant_url()),
        ("JSON API /api/variants?gpu=sm90", "/api/variants?gpu=sm90"),
    ]
    redis_port = free_port()
    log = tempfile.NamedTemporaryFile("w", prefix="two-hosts-", suffix=".log", delete=False)
    lua = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    lua.write(LUA)
    lua.close()
    results: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        redis = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--dir", folder]
            + ["--save", "", "--appendonly", "no", "--maxmemory-policy", "volatile-lru"],
            stdout=log,
        )
        try:
            print(
                f"wrk through nginx: {args.connections} connections, {args.threads} threads, "
                f"{args.duration} s a target; {args.workers} sync worker(s) a server; Redis "
                f"cache; {os.cpu_count()} CPU cores shared by all"
            )
            print(f"{'servers':>7} {'target':34} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} errors")
            for hosts in (1, 2):
                running, base = serve(hosts, args.workers, f"redis://127.0.0.1:{redis_port}/0", log)
                try:
                    for label, path in targets:
                        r = run_wrk(
                            base + path, lua.name, args.duration, args.connections, args.threads
                        )
                        results.setdefault(hosts, {})[label] = r
                        print(
                            f"{hosts:7d} {label:34} {r['rps']:7.0f} {r['p50']:7.1f} "
                            f"{r['p99']:7.1f} {r['errors']:6d}"
                        )
                finally:
                    server.stop(running)
        finally:
            redis.terminate()
            redis.wait(timeout=10)
    os.unlink(lua.name)
    os.unlink(log.name)
    for label, _ in targets:
        ratio = results[2][label]["rps"] / results[1][label]["rps"]
        print(f"two servers / one, {label}: {ratio:.2f}x")
    return 1 if any(r["errors"] for run in results.values() for r in run.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
