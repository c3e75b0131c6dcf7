"""Is a variant built, published, cached — and if not, what is nearest and how long to build?

Pure Python over plain rows (catalog.queries fetches them): the pages, the API, the selector and
the wizard all show the same summary.

Rules:
- A variant is *built* when it has a build record with status built.
- Its *publication* is the latest built record that names a Flox catalog and the latest that
  names a binary cache it was pushed to.
- It is *cached* in a cache when every output of its latest build that recorded outputs was
  present at that cache's last definitive answer. A failed later check does not change that
  answer; the summary says how old it is and that the last check failed.
- When it is cached nowhere, the *nearest cached* variant is the same library, backend,
  platform and Python on a GPU of the same family whose code this GPU can run (same compute
  capability major, minor the same or lower) and an ISA of the same architecture, the same
  level or lower; the same branch first, then the closest GPU, then the highest ISA.
- The *build-time estimate* is the median duration of the branch's built records, with the
  count it rests on; with none it says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from statistics import median


@dataclass(frozen=True)
class CacheCopy:
    name: str
    url: str
    priority: int
    present_since: datetime | None
    checked_at: datetime | None
    download_bytes: int | None  # compressed (FileSize) summed over the outputs
    nar_bytes: int | None
    last_error: str


def _total(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def cached_copies(output_count: int, entries: Iterable[dict]) -> list[CacheCopy]:
    """The caches holding every one of a build's `output_count` outputs, preferred first.

    `entries` are CacheEntry rows for those outputs with the cache's name, url and priority."""
    by_cache: dict[str, list[dict]] = {}
    for entry in entries:
        by_cache.setdefault(entry["cache__name"], []).append(entry)
    copies = []
    for name, rows in by_cache.items():
        if output_count == 0 or len(rows) < output_count or not all(r["present"] for r in rows):
            continue
        checked = [r["checked_at"] for r in rows if r["checked_at"]]
        since = [r["present_since"] for r in rows if r["present_since"]]
        copies.append(
            CacheCopy(
                name=name,
                url=rows[0]["cache__url"],
                priority=rows[0]["cache__priority"],
                present_since=max(since) if since else None,
                checked_at=min(checked) if checked else None,
                download_bytes=_total([r["file_size"] for r in rows]),
                nar_bytes=_total([r["nar_size"] for r in rows]),
                last_error="; ".join(sorted({r["error"] for r in rows if r["error"]})),
            )
        )
    return sorted(copies, key=lambda c: (c.priority, c.name))


@dataclass(frozen=True)
class Summary:
    built: bool
    built_at: datetime | None
    flox: str  # "org/package version" or ""
    pushed_to: str  # a binary cache URL the build said it pushed to, or ""
    caches: tuple[CacheCopy, ...]
    nar_bytes: int | None
    closure_bytes: int | None

    @property
    def cached(self) -> bool:
        return bool(self.caches)

    @property
    def download_bytes(self) -> int | None:
        return self.caches[0].download_bytes if self.caches else None

    def as_json(self) -> dict:
        """The fields /api/variants and the JSON answers carry."""
        return {
            "built": self.built,
            "built_at": self.built_at.isoformat() if self.built_at else None,
            "published": {"flox": self.flox or None, "binary_cache": self.pushed_to or None},
            "cached": self.cached,
            "caches": [
                {
                    "name": c.name,
                    "url": c.url,
                    "since": c.present_since.isoformat() if c.present_since else None,
                    "checked_at": c.checked_at.isoformat() if c.checked_at else None,
                    "download_bytes": c.download_bytes,
                    "last_check_failed": c.last_error or None,
                }
                for c in self.caches
            ],
            "download_bytes": self.download_bytes,
            "nar_bytes": self.nar_bytes,
            "closure_bytes": self.closure_bytes,
        }


NOT_BUILT = Summary(False, None, "", "", (), None, None)


def flox_label(build: dict) -> str:
    if not build.get("flox_catalog"):
        return ""
    name = build.get("flox_package") or ""
    label = f"{build['flox_catalog']}/{name}" if name else build["flox_catalog"]
    return f"{label} {build['flox_version']}".strip() if build.get("flox_version") else label


def summarise(builds: list[dict], output_counts: dict[int, int], entries: list[dict]) -> Summary:
    """One variant's summary from its built records (newest first), the number of outputs per
    build and the cache entries of its latest build with outputs."""
    if not builds:
        return NOT_BUILT
    latest = builds[0]
    with_outputs = next((b for b in builds if output_counts.get(b["id"])), None)
    flox = next((flox_label(b) for b in builds if b.get("flox_catalog")), "")
    pushed = next((b["published_cache_url"] for b in builds if b.get("published_cache_url")), "")
    copies = cached_copies(output_counts[with_outputs["id"]], entries) if with_outputs else []
    sized = with_outputs or latest
    return Summary(
        built=True,
        built_at=latest["started_at"],
        flox=flox,
        pushed_to=pushed,
        caches=tuple(copies),
        # The build's own figure, else what the cache's narinfo said.
        nar_bytes=sized.get("nar_size") or (copies[0].nar_bytes if copies else None),
        closure_bytes=sized.get("closure_size"),
    )


@dataclass(frozen=True)
class Estimate:
    median_seconds: float | None
    count: int

    def as_json(self) -> dict:
        return {
            "median_seconds": self.median_seconds,
            "based_on_builds": self.count,
            "text": self.text,
        }

    @property
    def text(self) -> str:
        if not self.count:
            return "no recorded builds on this branch to estimate from"
        hours, rest = divmod(int(self.median_seconds or 0), 3600)
        duration = f"{hours} h {rest // 60:02d} min" if hours else f"{max(1, rest // 60)} min"
        return f"about {duration} (median of {self.count} recorded build{'s' * (self.count > 1)})"


def estimate(durations: list[int]) -> Estimate:
    return Estimate(median(durations) if durations else None, len(durations))


def can_stand_in(candidate: dict, wanted: dict) -> bool:
    """Whether `candidate` runs where `wanted` would (see the module's rules). Both are dicts
    with library, backend, platform, python, family, cc (major, minor) or None, isa_arch,
    isa_rank (None for no ISA)."""
    same = ("library", "backend", "platform", "python", "family", "isa_arch")
    if any(candidate[k] != wanted[k] for k in same):
        return False
    if (candidate["cc"] is None) != (wanted["cc"] is None):
        return False
    if wanted["cc"] is not None:
        if candidate["cc"][0] != wanted["cc"][0] or candidate["cc"][1] > wanted["cc"][1]:
            return False
    if wanted["isa_rank"] is None:
        return candidate["isa_rank"] is None
    return candidate["isa_rank"] is not None and candidate["isa_rank"] <= wanted["isa_rank"]


def nearest(wanted: dict, candidates: Iterable[dict]) -> dict | None:
    """The cached candidate nearest to `wanted`: same branch, closest GPU, highest ISA."""
    fitting = [c for c in candidates if c["id"] != wanted["id"] and can_stand_in(c, wanted)]
    if not fitting:
        return None
    return min(
        fitting,
        key=lambda c: (
            c["branch_id"] != wanted["branch_id"],
            -(c["cc"][1] if c["cc"] else 0),
            -(c["isa_rank"] or 0),
            c["pname"],
        ),
    )
