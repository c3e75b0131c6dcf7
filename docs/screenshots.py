"""Screenshots of the site for the README, taken in Chromium against a live dev server.

    .venv/bin/python docs/screenshots.py [--only matrix-phone] [--chromium /usr/bin/chromium]

Starts `manage.py runserver --noreload` on a free loopback port (the dev database that
`make setup` loads), then for each entry of SHOTS opens the address at that width and saves
docs/<name>.png (the top of the page, one screen high, scaled 1:1). Add a page by appending to
SHOTS. Stops the server.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / ".venv" / "bin" / "python"
DOCS = ROOT / "docs"

# (file name without .png, address, viewport width in px); the height is one screen.
SHOTS = [
    ("matrix-desktop", "/variants/", 1440),
    ("matrix-phone", "/variants/", 390),
]
HEIGHTS = {390: 844, 1440: 900}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(PY), "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_CACHE": "locmem"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5):
                return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("runserver did not answer within 60 s (run `make setup` first).")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="take only this shot (repeatable)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
    args = parser.parse_args()
    shots = [s for s in SHOTS if not args.only or s[0] in args.only]
    if not shots:
        names = ", ".join(name for name, _, _ in SHOTS)
        raise SystemExit(f"--only names no shot; the shots are: {names}.")
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            for name, path, width in shots:
                page = browser.new_page(
                    viewport={"width": width, "height": HEIGHTS.get(width, 900)}
                )
                page.goto(f"http://127.0.0.1:{port}{path}")
                page.wait_for_load_state("networkidle")
                out = DOCS / f"{name}.png"
                page.screenshot(path=str(out))
                page.close()
                print(f"{out.relative_to(ROOT)}: {path} at {width} px")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
