"""Load figures: a bounded wrk run against gunicorn (production settings) on 127.0.0.1.

    .venv/bin/python bench/load.py [--duration 4] [--connections 20] [--workers 2]

Starts `scripts/serve.sh` (DEBUG off, whitenoise, compressed hashed static, the database cache)
on a free loopback port, then for each target runs wrk for a fixed time (after a 1 s warm-up):
the matrix page, a filtered matrix partial (HX-Request), a variant detail page, the JSON API, the
wizard's result (when routed), and — the yardstick — the matrix page's HTML saved as a static file
and served by whitenoise. Prints requests/s, p50/p95/p99 latency, errors, and the matrix page's
throughput as a fraction of the static file's. Before that, in-process (Django's test client,
the dev settings), the cold render of the matrix page and of the filtered htmx partial: median
of 9 renders, each after a catalogue version bump (what the first visitor after a change pays).
Never talks to anything but 127.0.0.1; stops the server when done. Exit status 1 when any target
had errors.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from server import ROOT, fetch, free_port, serve, stop

# Run as a script (`python bench/load.py`), so the project root is not on the path by itself.
sys.path.insert(0, str(ROOT))

LUA = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(95), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def first_variant_url():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    import django

    django.setup()
    from catalog.models import Variant

    variant = (
        Variant.objects.select_related("branch")
        .filter(branch__repository="build-pytorch", branch__name="main", gpu_arch__sm="sm90")
        .order_by("pname")
        .first()
    )
    return variant.get_absolute_url()


PARTIAL = "/variants/?gpu=sm90&library=pytorch&python=3.13"


def cold_renders(client, rounds=9):
    """Median milliseconds of a cold render: the matrix page, then the htmx partial."""
    from catalog.cache import bump_version

    figures = []
    for path, headers in (("/variants/", {}), (PARTIAL, {"HTTP_HX_REQUEST": "true"})):
        client.get(path, **headers)  # templates compiled once, as in a running server
        times = []
        for _ in range(rounds):
            bump_version()
            start = time.perf_counter()
            client.get(path, **headers)
            times.append((time.perf_counter() - start) * 1000)
        figures.append(statistics.median(times))
    return figures


def run_wrk(url, lua, duration, connections, threads, headers=()):
    cmd = [
        "wrk",
        "-t",
        str(threads),
        "-c",
        str(connections),
        "-d",
        f"{duration}s",
        "--timeout",
        "10s",
        "-s",
        lua,
    ]
    for header in headers:
        cmd += ["-H", header]
    # warm-up (fills the fragment cache, starts the workers' connections)
    subprocess.run([*cmd[:6], "1s", *cmd[7:], url], capture_output=True, text=True, timeout=60)
    out = subprocess.run([*cmd, url], capture_output=True, text=True, timeout=duration + 60).stdout
    line = next((row for row in out.splitlines() if row.startswith("RESULT")), None)
    if line is None:
        raise SystemExit(f"wrk printed no result for {url}:\n{out}")
    requests, micros, p50, p95, p99, errors = map(int, line.split()[1:])
    return {
        "requests": requests,
        "rps": requests / (micros / 1e6),
        "p50": p50 / 1000,
        "p95": p95 / 1000,
        "p99": p99 / 1000,
        "errors": errors,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=4, help="seconds per target (default 4)")
    parser.add_argument("--connections", type=int, default=20, help="concurrent connections (20)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (2)")
    parser.add_argument(
        "--workers", type=int, default=2, help="gunicorn workers (2: one per core here)"
    )
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install wrk")

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    detail = first_variant_url()

    # The yardstick: the matrix page's own HTML as a static file. Rendered in-process (same
    # template, same data) and placed in STATIC_ROOT before gunicorn starts, so whitenoise
    # indexes it at startup like any collected file.
    from django.conf import settings
    from django.test import Client

    client = Client()
    page_ms, partial_ms = cold_renders(client)
    print(f"cold render, matrix page /variants/: {page_ms:.0f} ms (goal < 60)")
    print(f"cold render, htmx partial {PARTIAL}: {partial_ms:.0f} ms (goal < 25)")
    html = client.get("/variants/").content
    static_dir = Path(settings.STATIC_ROOT) / "bench"
    static_dir.mkdir(parents=True, exist_ok=True)
    (static_dir / "matrix.html").write_bytes(html)

    server = serve(port, args.workers)
    try:
        targets = [
            ("matrix page /variants/", "/variants/", ()),
            (
                "filtered partial (HX-Request)",
                PARTIAL,
                ("HX-Request: true",),
            ),
            ("variant detail page", detail, ()),
            ("JSON API /api/variants?gpu=sm90", "/api/variants?gpu=sm90", ()),
        ]
        # Every step answered, so the wizard renders its result (the recommended variant).
        wizard = (
            "/wizard/?os=linux&arch=x86_64&has_gpu=yes&gpu=H100&isa=avx512&workload=general"
            "&library=pytorch"
        )
        recommend = (
            "/api/recommend?os=linux&arch=x86_64&has_gpu=yes&gpu=H100&isa=avx512&workload=general"
        )
        for label, path in (("wizard result", wizard), ("recommend API", recommend)):
            status, body = fetch(base + path)
            if status == 200 and b"sm90-avx512" in body:
                targets.append((label, path, ()))
            else:
                where = path.split("?")[0]
                print(f"({label}: {where} answered {status} without a result; not measured)")
        targets.append(("yardstick: same HTML, static", "/static/bench/matrix.html", ()))

        for label, path, headers in targets:
            status, body = fetch(base + path, dict(h.split(": ", 1) for h in headers))
            if status != 200:
                raise SystemExit(f"{label}: {path} answered {status}")

        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
            lua.write(LUA)
        results = {}
        print(
            f"\nwrk: {args.connections} connections, {args.threads} threads, "
            f"{args.duration} s a target; "
            f"gunicorn {args.workers} sync workers; {os.cpu_count()} CPU cores (shared with wrk)"
        )
        print(
            f"{'target':38} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} "
            f"{'p99 ms':>8} {'errors':>6}"
        )
        for label, path, headers in targets:
            r = run_wrk(
                base + path, lua.name, args.duration, args.connections, args.threads, headers
            )
            results[label] = r
            print(
                f"{label:38} {r['requests']:8d} {r['rps']:8.0f} {r['p50']:8.1f} {r['p95']:8.1f} "
                f"{r['p99']:8.1f} {r['errors']:6d}"
            )
        os.unlink(lua.name)
        matrix = results["matrix page /variants/"]["rps"]
        static = results["yardstick: same HTML, static"]["rps"]
        print(
            f"\nmatrix page throughput / static file throughput = {matrix / static:.2f} "
            f"({len(html) // 1024} KiB of HTML; goal >= 0.5)"
        )
        return 1 if any(r["errors"] for r in results.values()) else 0
    finally:
        stop(server)
        shutil.rmtree(static_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
