"""A real Nix binary cache over HTTP for tests and bench/check_caches.py: http.server on
127.0.0.1 in a thread, serving narinfos for the store paths it is given.

The first path segment picks how the cache behaves, so one server plays several caches:
    /ok/…        200 narinfo for known hashes, 404 for others
    /slow/…      like ok, after `slow_seconds`
    /broken/…    500 always
    /flaky/…     500 on a hash's first request, then like ok
    /garbled/…   200 with a narinfo for another path
    /down/…      closes the connection without an answer
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def narinfo_text(store_path: str, nar_size: int, file_size: int) -> str:
    return (
        f"StorePath: {store_path}\nURL: nar/{store_path[11:43]}.nar.xz\nCompression: xz\n"
        f"FileSize: {file_size}\nNarSize: {nar_size}\nReferences: {store_path[11:]}\n"
    )


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many checks connect at once


class CacheServer:
    def __init__(self, slow_seconds: float = 1.0) -> None:
        self.narinfos: dict[str, str] = {}
        self.slow_seconds = slow_seconds
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.seen: set[str] = set()
        self.lock = threading.Lock()
        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.owner = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def add(self, store_path: str, nar_size: int = 1000, file_size: int = 400) -> None:
        self.narinfos[store_path[11:43]] = narinfo_text(store_path, nar_size, file_size)

    def __enter__(self) -> CacheServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    @property
    def owner(self) -> CacheServer:
        return self.server.owner  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        owner = self.owner
        with owner.lock:
            owner.requests += 1
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
        try:
            self._answer()
        finally:
            with owner.lock:
                owner.in_flight -= 1

    def _first_request(self, store_hash: str) -> bool:
        with self.owner.lock:
            first = store_hash not in self.owner.seen
            self.owner.seen.add(store_hash)
        return first

    def _answer(self) -> None:
        _, mode, name = self.path.split("/", 2)
        store_hash = name.removesuffix(".narinfo")
        if mode == "down":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if mode == "broken" or (mode == "flaky" and self._first_request(store_hash)):
            return self._send(503 if mode == "flaky" else 500, "busy")
        if mode == "slow":
            time.sleep(self.owner.slow_seconds)
        text = self.owner.narinfos.get(store_hash)
        if text is None:
            return self._send(404, "404")
        if mode == "garbled":
            text = text.replace(store_hash, "0" * 32)
        return self._send(200, text)

    def _send(self, status: int, text: str) -> None:
        body = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/x-nix-narinfo")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): nothing to answer
