"""Mixed load with a share of hostile requests, against gunicorn in production mode.

    .venv/bin/python bench/hostile_load.py [--duration 15] [--connections 50] [--share 0.05]
                                           [--workers 3] [--url http://127.0.0.1:8000]

Starts `scripts/serve.sh` (what `make serve` runs: DEBUG off, gunicorn sync workers) on a free
loopback port, unless --url names a server already running. Then two runs of --duration seconds,
each with --connections threads sending requests back to back (a new connection each, as
gunicorn's sync workers close them):
  1. ordinary requests only — pages (home, matrix, variant, wizard result) and POSTs to
     /api/recommend (answers as JSON and as a form, real nvidia-smi + lscpu pastes);
  2. the same, with --share of the requests replaced by hostile inputs (quadratic
     paste lines, 40,000 GPUs, a 65,000-line paste, deep JSON, 1,001 fields, a 200 MB upload,
     cache-busting query strings).
Prints, per run and request kind, the count, p50/p99 latency and the statuses seen; the errors
other than the intended refusals (5xx, dropped connections, time-outs, an ordinary request not
answered 200, a hostile one not answered 200/400/413); and ordinary requests' p99 without and
with the hostile share. Exit status 1 when there was any such error.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# Run as a script: bench/ (for load.py's helpers) is on the path; the project root is added there.
from load import first_variant_url
from server import ROOT, free_port, serve, stop

HOSTS = ROOT / "tests" / "data" / "hosts"
CLIENT_TIMEOUT = 40  # seconds: longer than gunicorn's 30 s worker time-out, so a kill shows
ORDINARY_OK = frozenset({200})
REFUSED_OK = frozenset({200, 400, 413})  # an answer, or the intended refusal


@dataclass(frozen=True)
class Kind:
    name: str
    method: str
    path: str
    body: bytes = b""
    content_type: str = ""
    hostile: bool = False
    random_query: bool = False  # append ?junk=<random> (a cache-busting query string)
    declared_length: int | None = None  # send this Content-Length, and only `body`
    ok: frozenset[int] = frozenset()  # the intended answers, where they are not the usual ones

    @property
    def accepted(self) -> frozenset[int]:
        return self.ok or (REFUSED_OK if self.hostile else ORDINARY_OK)


API = "/api/recommend"


def post_json(name: str, data: object, hostile: bool = False) -> Kind:
    return Kind(name, "POST", API, json.dumps(data).encode(), "application/json", hostile)


def post_form(name: str, data: dict | str, hostile: bool = False) -> Kind:
    body = data if isinstance(data, str) else urllib.parse.urlencode(data)
    return Kind(name, "POST", API, body.encode(), "application/x-www-form-urlencoded", hostile)


def ordinary_kinds(variant_path: str) -> list[Kind]:
    answers = {"os": "linux", "arch": "x86_64", "gpu": "H100", "isa": "avx512"}
    h100 = HOSTS / "h100-xeon"
    paste = {
        "nvidia_smi": (h100 / "nvidia-smi.txt").read_text(),
        "lscpu": (h100 / "lscpu.txt").read_text(),
    }
    wizard = {**answers, "has_gpu": "yes", "workload": "general", "library": "pytorch"}
    return [
        Kind("page: home", "GET", "/"),
        Kind("page: matrix /variants/", "GET", "/variants/"),
        Kind("page: variant detail", "GET", variant_path),
        Kind("page: wizard result", "GET", "/wizard/?" + urllib.parse.urlencode(wizard)),
        post_json("api: answers as JSON", answers),
        post_form("api: answers as a form", answers),
        post_json("api: nvidia-smi + lscpu paste", paste),
    ]


def hostile_kinds() -> list[Kind]:
    spaces = " " * 64_000
    return [
        post_json("hostile: lscpu 64 KB line", {"lscpu": f"Model name:    x{spaces}y\n"}, True),
        post_json(
            "hostile: nvidia-smi 64 KB row",
            {"nvidia_smi": f"|   0  NVIDIA H100 80GB HBM3{spaces}x |\n"},
            True,
        ),
        post_json("hostile: cpuinfo 64 KB value", {"cpuinfo": f"model name\t: x{spaces}y\n"}, True),
        post_json("hostile: 40,000 GPUs", {"gpu": ["H100"] * 40_000}, True),
        post_form("hostile: 65,000-line paste", {"paste": "9.0\n" * 65_000}, True),
        Kind(
            "hostile: JSON nested 1,000 deep",
            "POST",
            API,
            b"[" * 1000 + b"]" * 1000,
            "application/json",
            True,
        ),
        post_form("hostile: 1,001 form fields", "&".join(f"f{i}=1" for i in range(1001)), True),
        Kind(
            "hostile: 200 MB upload",
            "POST",
            API,
            b"--xyz\r\n" + b"x" * 65_536,
            "multipart/form-data; boundary=xyz",
            True,
            declared_length=200 * 1024 * 1024,
        ),
        Kind(
            "hostile: matrix, junk parameter",
            "GET",
            "/variants/",
            hostile=True,
            random_query=True,
            ok=frozenset({302}),  # redirected to the address without it: no new cache entry
        ),
    ]


@dataclass
class Sample:
    kind: Kind
    status: int | str  # an HTTP status, or the name of the exception
    seconds: float


def send(host: str, port: int, kind: Kind, rng: random.Random) -> Sample:
    path = kind.path
    if kind.random_query:
        path += f"?junk={rng.getrandbits(64):x}"
    started = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=CLIENT_TIMEOUT)
    try:
        conn.putrequest(kind.method, path)
        if kind.method == "POST":
            length = kind.declared_length or len(kind.body)
            conn.putheader("Content-Type", kind.content_type)
            conn.putheader("Content-Length", str(length))
        conn.endheaders()
        if kind.body:
            try:
                conn.send(kind.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before the body was read: the answer is still there to read
        response = conn.getresponse()
        response.read()
        status: int | str = response.status
    except (OSError, http.client.HTTPException) as exc:
        status = type(exc).__name__
    finally:
        conn.close()
    return Sample(kind, status, time.monotonic() - started)


@dataclass
class Run:
    label: str
    samples: list[Sample] = field(default_factory=list)
    seconds: float = 0.0

    def errors(self) -> list[Sample]:
        return [s for s in self.samples if s.status not in s.kind.accepted]

    def ordinary(self) -> list[float]:
        return [s.seconds for s in self.samples if not s.kind.hostile]


def run(
    host: str,
    port: int,
    label: str,
    kinds: list[Kind],
    hostile: list[Kind],
    share: float,
    duration: float,
    connections: int,
) -> Run:
    result, lock = Run(label), threading.Lock()
    deadline = time.monotonic() + duration

    def worker(n: int) -> None:
        rng = random.Random(n)  # the same sequence of kinds on every run
        while time.monotonic() < deadline:
            pool = hostile if hostile and rng.random() < share else kinds
            sample = send(host, port, rng.choice(pool), rng)
            with lock:
                result.samples.append(sample)

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.monotonic() - started
    return result


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile in milliseconds (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def report(result: Run) -> None:
    by_kind: dict[str, list[Sample]] = defaultdict(list)
    for sample in result.samples:
        by_kind[sample.kind.name].append(sample)
    ordinary = result.ordinary()
    print(
        f"\n{result.label}: {len(result.samples)} requests in {result.seconds:.1f} s, "
        f"{len(ordinary) / result.seconds:.0f} ordinary req/s"
    )
    print(f"{'kind':34} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}  statuses")
    for name in sorted(by_kind, key=lambda n: (n.startswith("hostile"), n)):
        samples = by_kind[name]
        seconds = [s.seconds for s in samples]
        statuses = Counter(str(s.status) for s in samples)
        errors = sum(s.status not in s.kind.accepted for s in samples)
        shown = ", ".join(f"{k}×{v}" for k, v in sorted(statuses.items()))
        print(
            f"{name:34} {len(samples):5d} {percentile(seconds, 0.5):8.0f} "
            f"{percentile(seconds, 0.99):8.0f} {errors:6d}  {shown}"
        )
    print(
        f"{'ordinary requests, all kinds':34} {len(ordinary):5d} "
        f"{percentile(ordinary, 0.5):8.0f} {percentile(ordinary, 0.99):8.0f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds per run (15)")
    parser.add_argument("--connections", type=int, default=50, help="concurrent clients (50)")
    parser.add_argument(
        "--share",
        type=float,
        default=0.05,
        help="fraction of hostile requests in the second run (0.05)",
    )
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (3, as serve)")
    parser.add_argument("--url", help="a running server (e.g. `make serve`) instead of a new one")
    args = parser.parse_args()
    if not 0 < args.share <= 1:
        parser.error("--share must be more than 0 and at most 1.")

    variant_path = first_variant_url()
    server = None
    if args.url:
        parsed = urllib.parse.urlsplit(args.url)
        host, port = parsed.hostname or "127.0.0.1", parsed.port or 80
    else:
        log = Path(tempfile.gettempdir()) / f"hostile-load-gunicorn-{os.getpid()}.log"
        port = free_port()
        with log.open("wb") as out:  # killed workers' tracebacks go here
            server = serve(port, args.workers, out)
        host = "127.0.0.1"
        print(f"gunicorn's output: {log}")
    try:
        kinds, hostile = ordinary_kinds(variant_path), hostile_kinds()
        base = f"http://{host}:{port}"
        for kind in kinds:  # each ordinary kind answers before anything is measured (warm-up)
            sample = send(host, port, kind, random.Random(0))
            if sample.status != 200:
                print(
                    f"{kind.name}: {kind.method} {kind.path} answered {sample.status}; "
                    f"is {base} the catalogue?",
                    file=sys.stderr,
                )
                return 1
        print(
            f"{args.connections} connections, {args.duration:.0f} s a run, gunicorn at {base}; "
            f"{os.cpu_count()} CPU cores shared by client and server"
        )
        alone = run(host, port, "ordinary only", kinds, [], 0, args.duration, args.connections)
        report(alone)
        mixed = run(
            host,
            port,
            f"with a {args.share:.0%} hostile share",
            kinds,
            hostile,
            args.share,
            args.duration,
            args.connections,
        )
        report(mixed)
        errors = alone.errors() + mixed.errors()
        print(f"\nerrors other than the intended refusals: {len(errors)}")
        for name, count in Counter(f"{s.kind.name}: {s.status}" for s in errors).most_common():
            print(f"  {count:5d}  {name}")
        print(
            f"ordinary requests' p99: {percentile(alone.ordinary(), 0.99):.0f} ms alone, "
            f"{percentile(mixed.ordinary(), 0.99):.0f} ms with the hostile share"
        )
        return 1 if errors else 0
    finally:
        if server is not None:
            stop(server)


if __name__ == "__main__":
    sys.exit(main())
