"""Screenshots of the site for the README, taken in Chromium against a live dev server.

    .venv/bin/python docs/screenshots.py [--only matrix-phone] [--chromium /usr/bin/chromium]

Starts `manage.py runserver --noreload` on a free loopback port (the dev database that
`make setup` loads), then for each entry of SHOTS opens the address at that width and saves
docs/<name>.png — one element, or one screen's height from the top of <main> — rewriting a
PNG only when its bytes change. Add a page by appending to SHOTS. Stops the server.
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

SM90 = "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512"
SM61 = "build-pytorch/main/pytorch-python313-cuda12_8-sm61-avx"
CHOSEN = "gpu=sm90&isa=avx512&cuda=12.8&branch=build-pytorch%3Amain&library=pytorch"
# (file name without .png, address, viewport width in px, element to capture or None for one
# screen from the top of <main>).
SHOTS = [
    ("matrix-desktop", "/variants/", 1440, None),
    ("matrix-phone", "/variants/", 390, None),
    ("selector-desktop", f"/?{CHOSEN}", 1440, "#selector"),
    ("selector-phone", "/?gpu=sm61", 390, "#selector"),
    ("variant-desktop", f"/variants/{SM90}/", 1440, None),
    ("variant-phone", f"/variants/{SM90}/", 390, None),
    ("compare-desktop", f"/compare/?v={SM90}&v={SM61}", 1440, None),
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


def shoot(browser, url: str, width: int, element: str | None) -> bytes:
    viewport = {"width": width, "height": HEIGHTS.get(width, 900)}
    page = browser.new_page(viewport=viewport)
    try:
        page.goto(url)
        page.wait_for_load_state("networkidle")
        if element:
            return page.locator(element).screenshot()
        top = page.locator("main").bounding_box()["y"]
        return page.screenshot(full_page=True, clip={"x": 0, "y": top, **viewport})
    finally:
        page.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="take only this shot (repeatable)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
    args = parser.parse_args()
    shots = [s for s in SHOTS if not args.only or s[0] in args.only]
    if not shots:
        names = ", ".join(shot[0] for shot in SHOTS)
        raise SystemExit(f"--only names no shot; the shots are: {names}.")
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            for name, path, width, element in shots:
                out = DOCS / f"{name}.png"
                data = shoot(browser, f"http://127.0.0.1:{port}{path}", width, element)
                changed = not out.exists() or out.read_bytes() != data
                if changed:
                    out.write_bytes(data)
                state = "written" if changed else "unchanged"
                print(f"{out.relative_to(ROOT)}: {path} at {width} px, {state}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
