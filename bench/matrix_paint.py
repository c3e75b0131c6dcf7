"""How long a filter change on /variants/ takes to paint, in Chromium, for a few selections.

    .venv/bin/python bench/matrix_paint.py [--rounds 5] [--chromium /usr/bin/chromium]

Starts `manage.py runserver --noreload` on a free loopback port with DEBUG off (the dev
database that `make setup` loads, collected static files, a fresh in-process cache), opens
/variants/ at 1440 px, then for each selection clicks its control and measures, inside the
page, from the click to the first frame painted after htmx has swapped the results in (two
animation frames after htmx:afterSettle), and how much of it was the response's arrival
(htmx:beforeSwap). Prints the first, the median and the worst of --rounds changes per
selection: the first meets an empty server cache (the server renders), later ones a filled
one. Stops the server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

import server  # bench/ is on the path when run as a script
from playwright.sync_api import sync_playwright
from server import PY, ROOT, free_port, stop, throwaway_key

# (what is measured, CSS selector of the control clicked, starting address)
SELECTIONS = [
    ("GPU SM90 on/off", 'input[name="gpu"][value="sm90"]', "/variants/"),
    ("library torchvision on/off", 'input[name="library"][value="torchvision"]', "/variants/"),
    (
        "branch build-pytorch/main on/off",
        'input[name="branch"][value="build-pytorch/main"]',
        "/variants/?gpu=sm90",
    ),
    ("Python 3.12 on/off", 'input[name="python"][value="3.12"]', "/variants/?library=pytorch"),
    ("next page / previous page", ".pagination a[rel=next], .pagination a[rel=prev]", "/variants/"),
]

# Click, then wait for htmx to settle the swap and for the next two frames (the second starts
# after the first has been painted); resolves with the elapsed milliseconds.
MEASURE = """(selector) => new Promise((resolve, reject) => {
  const control = document.querySelector(selector);
  if (!control) { reject(new Error('no control ' + selector)); return; }
  let start, arrived;
  document.body.addEventListener('htmx:beforeSwap', () => {
    arrived = performance.now() - start;
  }, {once: true});
  document.body.addEventListener('htmx:afterSettle', () => {
    requestAnimationFrame(() => requestAnimationFrame(
      () => resolve([performance.now() - start, arrived])));
  }, {once: true});
  start = performance.now();
  control.click();
})"""


def start_server(port: int) -> subprocess.Popen:
    # Production settings (DEBUG off: cached templates; whitenoise serves the collected static
    # files), with a throw-away key and an in-process cache.
    env = {
        "DJANGO_CACHE": "locmem",
        "DJANGO_DEBUG": "0",
        "DJANGO_HTTPS": "0",
        "DJANGO_SECRET_KEY": throwaway_key(),
    }
    subprocess.run(
        [str(PY), "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )
    runserver = [str(PY), "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    return server.start(runserver, port, env, subprocess.DEVNULL, timeout=60)


def measure(page, base: str, rounds: int) -> list[tuple[str, list[float]]]:
    results = []
    for label, selector, start in SELECTIONS:
        page.goto(base + start)
        times = [page.evaluate(MEASURE, selector) for _ in range(rounds)]
        results.append((label, times))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="filter changes per selection")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
    args = parser.parse_args()
    port = free_port()
    running = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            results = measure(page, f"http://127.0.0.1:{port}", args.rounds)
            nodes = page.evaluate("document.getElementsByTagName('*').length")
            browser.close()
    finally:
        stop(running)
    print(f"filter change → painted, {args.rounds} changes each (ms); DOM after: {nodes} nodes")
    print(f"{'selection':36} {'first':>7} {'median':>7} {'worst':>7}   {'response median':>15}")
    for label, pairs in results:
        times = [total for total, _ in pairs]
        arrived = statistics.median(response for _, response in pairs)
        print(
            f"{label:36} {times[0]:7.0f} {statistics.median(times):7.0f} {max(times):7.0f}"
            f"   {arrived:15.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
