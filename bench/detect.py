"""Hardware detection on adversarial tool output: milliseconds per parser and for the whole
dispatcher, on inputs of about 256 KB each (tests/hostile_inputs.py), plus one POST of each to
/api/recommend through Django's test client (the request a hostile client would send).

    python bench/detect.py [-n 5]

Every parser reads line by line with a bounded line length and no backtracking pattern, so each
figure should stay in the tens of milliseconds (under 100 ms each).
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.wizard import detect  # noqa: E402
from catalog.wizard.detect.facts import split_lines  # noqa: E402
from tests.hostile_inputs import inputs  # noqa: E402

PARSERS = {source: parse for source, _markers, parse in detect.PARSERS}


def timed(fn, runs: int) -> float:
    """Median milliseconds of `runs` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs per figure (median)")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    import django

    django.setup()
    from django.test import Client

    client = Client()
    print(
        f"{'input':<28} {'KB':>5} {'parser':>26} {'parser ms':>10} {'detect ms':>10} "
        f"{'POST ms':>8} {'status':>6}"
    )
    for name, (source, text) in inputs().items():
        own, whole, post, status = measure(client, source, text, args.n)
        print(
            f"{name:<28} {len(text.encode()) // 1024:>5} {source:>26} {own:>10.1f} "
            f"{whole:>10.1f} {post:>8.1f} {status:>6}"
        )


def measure(client, source: str, text: str, runs: int) -> tuple[float, float, float, int]:
    """Median ms of the input's own parser, of the whole dispatcher and of one POST, and the
    POST's status code."""
    lines = split_lines(text)
    if source in PARSERS:
        own = timed(lambda: PARSERS[source](lines), runs)
    else:  # the CSV parser (it reads the lines the others left) or all of them
        own = timed(lambda: detect.nvidia_smi_csv.parse(lines, set()), runs)
    whole = timed(lambda: detect.detect(text), runs)
    field = "lscpu" if source in ("lscpu", "/proc/cpuinfo", "sysctl", "uname") else "nvidia_smi"
    status = []
    post = timed(
        lambda: status.append(
            client.post("/api/recommend", {field: text, "os": "linux"}).status_code
        ),
        runs,
    )
    return own, whole, post, status[-1]


if __name__ == "__main__":
    main()
