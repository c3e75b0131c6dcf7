"""Ask Nix binary caches whether store paths are present: `GET {cache}/{hash}.narinfo`.

The binary-cache protocol answers 200 with a narinfo (`Key: value` lines: StorePath, URL,
Compression, FileSize, NarSize, References, …) when the path is there and 404 when it is not.
Anything else — a timeout, a refused connection, a 5xx, a narinfo for another path or without
NarSize — is an error: it is retried a bounded number of times and then reported as such, never
as "absent", so the caller can keep the last definitive answer.

Pure Python (urllib and a thread pool), no Django: `check-caches` and bench/check_caches.py
call `check`.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from catalog import naming

MAX_NARINFO_BYTES = 64 * 1024  # real narinfos are under 2 KiB even with many references
ABSENT_STATUSES = {404, 410}
RETRIED_STATUSES = {408, 429, 500, 502, 503, 504}
USER_AGENT = "pytorch-variant-catalogue check-caches"


class NarinfoError(ValueError):
    """A narinfo that does not say what the protocol promises."""


@dataclass(frozen=True)
class Narinfo:
    store_path: str
    nar_size: int
    file_size: int | None  # absent for uncompressed NARs
    references: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    cache_url: str
    store_hash: str
    present: bool | None  # None: no definitive answer (see error)
    file_size: int | None = None
    nar_size: int | None = None
    error: str = ""
    attempts: int = 1


@dataclass
class Stats:
    """What a run did: requests sent, retries, the most requests in flight at once, seconds."""

    requests: int = 0
    retries: int = 0
    max_in_flight: int = 0
    seconds: float = 0.0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def started(self) -> None:
        with self._lock:
            self.requests += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def finished(self) -> None:
        with self._lock:
            self._in_flight -= 1


def _size(fields: dict[str, str], key: str) -> int | None:
    if key not in fields:
        return None
    value = fields[key]
    if not value.isdigit():
        raise NarinfoError(f"{key} is not a whole number: {value[:40]!r}")
    return int(value)


def parse_narinfo(text: str, store_hash: str) -> Narinfo:
    """The fields of a narinfo for `store_hash`; NarinfoError if it is for another path or
    lacks StorePath or NarSize."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    try:
        path = naming.parse_store_path(fields.get("StorePath", ""))
    except naming.InvalidName:
        raise NarinfoError("no valid StorePath") from None
    if path.hash != store_hash:
        raise NarinfoError(f"StorePath is for {path.hash}, not {store_hash}")
    nar_size = _size(fields, "NarSize")
    if nar_size is None:
        raise NarinfoError("no NarSize")
    references = tuple(fields.get("References", "").split())
    return Narinfo(fields["StorePath"], nar_size, _size(fields, "FileSize"), references)


class _Retry(Exception):
    """A failure worth asking again (timeout, connection, 5xx, 429)."""


def _ask_once(url: str, store_hash: str, timeout: float) -> Narinfo | None:
    """One request: a Narinfo (present), None (absent); _Retry or NarinfoError otherwise."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_NARINFO_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code in ABSENT_STATUSES:
            return None
        if exc.code in RETRIED_STATUSES:
            raise _Retry(f"HTTP {exc.code}") from None
        raise NarinfoError(f"HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Retry(f"{type(reason).__name__}: {reason}"[:160]) from None
    if len(body) > MAX_NARINFO_BYTES:
        raise NarinfoError(f"narinfo larger than {MAX_NARINFO_BYTES} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise NarinfoError("narinfo is not UTF-8 text") from None
    return parse_narinfo(text, store_hash)


def ask(
    cache_url: str,
    store_hash: str,
    *,
    timeout: float = 10.0,
    retries: int = 2,
    backoff: float = 0.2,
    stats: Stats | None = None,
) -> Answer:
    """One cache's answer for one store hash, retrying transient failures `retries` times."""
    url = naming.narinfo_url(cache_url, store_hash)
    stats = stats or Stats()
    error = ""
    for attempt in range(1, retries + 2):
        if attempt > 1:
            with stats._lock:
                stats.retries += 1
            time.sleep(backoff * 2 ** (attempt - 2))
        stats.started()
        try:
            info = _ask_once(url, store_hash, timeout)
        except _Retry as exc:
            error = str(exc)
            continue
        except NarinfoError as exc:
            return Answer(cache_url, store_hash, None, error=str(exc)[:200], attempts=attempt)
        finally:
            stats.finished()
        if info is None:
            return Answer(cache_url, store_hash, False, attempts=attempt)
        return Answer(cache_url, store_hash, True, info.file_size, info.nar_size, "", attempt)
    return Answer(cache_url, store_hash, None, error=error[:200], attempts=retries + 1)


def check(
    pairs: Iterable[tuple[str, str]],
    *,
    workers: int = 16,
    timeout: float = 10.0,
    retries: int = 2,
    backoff: float = 0.2,
) -> tuple[list[Answer], Stats]:
    """Answers for every (cache URL, store hash) pair, at most `workers` requests in flight."""
    stats = Stats()
    started = time.perf_counter()
    pairs = list(dict.fromkeys(pairs))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        answers = list(
            pool.map(
                lambda pair: ask(
                    pair[0],
                    pair[1],
                    timeout=timeout,
                    retries=retries,
                    backoff=backoff,
                    stats=stats,
                ),
                pairs,
            )
        )
    stats.seconds = time.perf_counter() - started
    return answers, stats


__all__ = ["Answer", "Narinfo", "NarinfoError", "Stats", "ask", "check", "parse_narinfo"]
