"""Screenshots of the selector, a variant page and the compare page, desktop and phone.

Serves the dev database (`make setup` loads it) with `manage.py runserver` on a free port and
drives Debian's Chromium (CHROMIUM_PATH to use another) with Playwright. A PNG is rewritten only
when its bytes change.

    .venv/bin/python docs/screenshots_select.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
DESKTOP = {"width": 1440, "height": 1000}
PHONE = {"width": 390, "height": 844}
SM90 = "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512"
CHOSEN = "gpu=sm90&isa=avx512&cuda=12.8&branch=build-pytorch%3Amain&library=pytorch"
# (file, path, viewport, element to capture; None: one screen's height from the top of <main>)
SHOTS = [
    ("selector-desktop.png", f"/?{CHOSEN}", DESKTOP, "#selector"),
    ("selector-phone.png", "/?gpu=sm61", PHONE, "#selector"),
    ("variant-desktop.png", f"/variants/{SM90}/", DESKTOP, None),
    ("variant-phone.png", f"/variants/{SM90}/", PHONE, None),
    (
        "compare-desktop.png",
        f"/compare/?v={SM90}&v=build-pytorch/main/pytorch-python313-cuda12_8-sm61-avx",
        DESKTOP,
        None,
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    path.write_bytes(data)
    return True


def shoot(base: str) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for name, path, viewport, element in SHOTS:
            page = browser.new_page(viewport=viewport)
            page.goto(base + path)
            if element:
                data = page.locator(element).screenshot()
            else:
                top = page.locator("main").bounding_box()["y"]
                clip = {"x": 0, "y": top, **viewport}
                data = page.screenshot(full_page=True, clip=clip)
            changed = write_if_changed(DOCS / name, data)
            print(f"{name}: {'written' if changed else 'unchanged'} ({len(data):,} bytes)")
            page.close()
        browser.close()


def main() -> int:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(base + "/")
        shoot(base)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
