"""Writes to the catalogue that more than one entry point shares.

`record_build` is used by `manage.py record-build` and by `POST /api/builds`: both only parse
their input and call it, so validation and locking live here once.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from catalog import naming
from catalog.models import (
    MAX_BYTES,
    BinaryCache,
    BuildOutput,
    BuildRecord,
    CacheEntry,
    Variant,
)

BUILD_STATUSES = tuple(value for value, _ in BuildRecord.STATUSES)
# A successful rebuild of a published variant keeps it published.
STATUS_KEPT_ON_BUILT = {"published"}
MAX_OUTPUTS = 16  # a derivation's outputs (out, dev, lib, …): more is a mistake, not a build
SIZE_FIELDS = ("nar_size", "closure_size")
PUBLICATION_FIELDS = ("flox_catalog", "flox_package", "flox_version", "published_cache_url")


class UnknownVariant(Exception):
    """No variant with that repository, branch and package name."""


def _size_error(value) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BYTES:
        return f"must be a whole number of bytes from 0 to {MAX_BYTES}."
    return ""


def _check_build_fields(status, duration_seconds, commit, outputs, sizes, urls) -> list[str]:
    """Field errors that the model's own validation cannot see; the store paths, de-duplicated."""
    errors: dict[str, str] = {}
    if status not in BUILD_STATUSES:
        errors["status"] = f"Status must be one of {', '.join(BUILD_STATUSES)}, not {status!r}."
    if duration_seconds is not None and (
        _size_error(duration_seconds) or duration_seconds > 2**31 - 1
    ):
        errors["duration_seconds"] = "Duration must be a whole number of seconds, 0 or more."
    if commit and not naming.GIT_HASH_RE.fullmatch(commit):
        errors["commit"] = "Commit must be a git hash: 4 to 40 hexadecimal digits."
    for name, value in sizes.items():
        if value is not None and (reason := _size_error(value)):
            errors[name] = f"{name} {reason}"
    for name, value in urls.items():
        if value and not str(value).startswith(("http://", "https://")):
            errors[name] = f"{name} must be an http:// or https:// URL."
    paths = list(dict.fromkeys(outputs or ()))
    if reason := _outputs_error(paths, status):
        errors["outputs"] = reason
    if errors:
        raise ValidationError(errors)
    return paths


def _outputs_error(paths: list[str], status: str) -> str:
    if len(paths) > MAX_OUTPUTS:
        return f"At most {MAX_OUTPUTS} output store paths per build."
    if paths and status != "built":
        return "Only a finished build (status built) has output store paths."
    for path in paths:
        try:
            naming.parse_store_path(path)
        except naming.InvalidName as exc:
            return str(exc)
    return ""


def record_build(
    *,
    repository: str,
    branch: str,
    pname: str,
    status: str,
    duration_seconds: int | None = None,
    log_url: str = "",
    commit: str = "",
    host: str = "",
    started_at: datetime | None = None,
    outputs: list[str] | tuple[str, ...] = (),
    system: str = "",
    nixpkgs_rev: str = "",
    nar_size: int | None = None,
    closure_size: int | None = None,
    flox_catalog: str = "",
    flox_package: str = "",
    flox_version: str = "",
    published_cache_url: str = "",
) -> BuildRecord:
    """Add a BuildRecord (with its output store paths) to a variant and set the variant's
    status from it, atomically.

    The variant row is locked (SELECT … FOR UPDATE where the database supports it; SQLite
    takes its write lock when the transaction starts, see settings), so concurrent calls for
    the same variant queue: every record is kept and the status is the last one written.

    Raises UnknownVariant when no such variant exists and ValidationError (with a message per
    field) for bad input; nothing is written in either case.
    """
    paths = _check_build_fields(
        status,
        duration_seconds,
        commit,
        outputs,
        {"nar_size": nar_size, "closure_size": closure_size},
        {"log_url": log_url, "published_cache_url": published_cache_url},
    )
    if started_at is not None and timezone.is_naive(started_at):
        started_at = timezone.make_aware(started_at, timezone.get_current_timezone())

    with transaction.atomic():
        try:
            variant = (
                Variant.objects.select_for_update(of=("self",))
                .select_related("branch")
                .get(branch__repository=repository, branch__name=branch, pname=pname)
            )
        except Variant.DoesNotExist:
            raise UnknownVariant(
                f"No variant {pname!r} on branch {branch!r} of {repository!r}."
            ) from None
        record = BuildRecord(
            variant=variant,
            status=status,
            started_at=started_at or timezone.now(),
            duration_seconds=duration_seconds,
            log_url=log_url or "",
            commit=commit or "",
            host=host or "",
            system=system or "",
            nixpkgs_rev=nixpkgs_rev or "",
            nar_size=nar_size,
            closure_size=closure_size,
            flox_catalog=flox_catalog or "",
            flox_package=flox_package or "",
            flox_version=flox_version or "",
            published_cache_url=published_cache_url or "",
        )
        record.full_clean()
        record.save()
        BuildOutput.objects.bulk_create(BuildOutput(build=record, store_path=p) for p in paths)
        # A finished build that names where it was published publishes the variant.
        published = status == "built" and (flox_catalog or published_cache_url)
        new_status = "published" if published else status
        if not (new_status == "built" and variant.status in STATUS_KEPT_ON_BUILT):
            if variant.status != new_status:
                variant.status = new_status
                # save() (not update()) so post_save receivers, e.g. a cache version, run.
                variant.save(update_fields=["status"])
    return record


def validation_message(exc: ValidationError) -> str:
    """One line out of a ValidationError: "field: message; other: message"."""
    if hasattr(exc, "message_dict"):
        return "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
    return " ".join(exc.messages)


def assign_changed(obj: models.Model, values: dict) -> bool:
    """Set the fields whose value differs; True when any did (so only changed rows are saved)."""
    changed = False
    for name, value in values.items():
        if getattr(obj, name) != value:
            setattr(obj, name, value)
            changed = True
    return changed


# --- binary caches -----------------------------------------------------------------------------


def sync_binary_caches(configured: list[dict]) -> int:
    """Add or update the BinaryCache rows that settings name (by name); rows added in the admin
    stay. Returns how many rows changed. ValidationError for a bad name or URL."""
    changed = 0
    with transaction.atomic():
        for entry in configured:
            cache = BinaryCache.objects.filter(name=entry["name"]).first() or BinaryCache(
                name=entry["name"]
            )
            values = {"url": entry["url"], "priority": entry.get("priority", 50)}
            if assign_changed(cache, values) or cache.pk is None:
                cache.full_clean()
                cache.save()
                changed += 1
    return changed


def latest_outputs() -> list[BuildOutput]:
    """The outputs of each variant's most recent build that recorded any: what people would
    download today (an older build's paths are history, not availability)."""
    latest = (
        BuildRecord.objects.filter(variant=models.OuterRef("build__variant"), outputs__isnull=False)
        .order_by("-started_at", "-id")
        .values("id")[:1]
    )
    return list(
        BuildOutput.objects.filter(build=models.Subquery(latest)).order_by("store_path", "id")
    )


def store_cache_answers(answers: list[tuple[BuildOutput, BinaryCache, object]]) -> dict:
    """Write each (output, cache, narinfo.Answer): a definitive answer replaces the entry (and
    `present_since` starts when a path first appears); an error keeps the last definitive
    answer and only notes the error and its time. One transaction; counts by outcome.

    Most answers repeat the last one: those rows get one UPDATE of their time per few hundred
    rows, failures one per distinct error; only new or changed answers are written row by row
    (bulk_update's CASE per row is slow on thousands)."""
    now = timezone.now()
    existing = {
        (e.output_id, e.cache_id): e
        # By cache only: one bounded read (outputs × caches) with no parameter per output.
        for e in CacheEntry.objects.filter(cache__in={c.pk for _, c, _ in answers})
    }
    counts = {"present": 0, "absent": 0, "error": 0}
    new, changed, same, failed = [], [], [], {}
    for output, cache, answer in answers:
        entry = existing.get((output.pk, cache.pk))
        outcome = "error" if answer.present is None else "present" if answer.present else "absent"
        counts[outcome] += 1
        if entry is None:
            entry = CacheEntry(output=output, cache=cache)
            _apply_answer(entry, answer, now)
            new.append(entry)
        elif answer.present is None:
            failed.setdefault(answer.error[:200], []).append(entry.pk)
        elif (entry.present, entry.file_size, entry.nar_size) == (
            answer.present,
            answer.file_size if answer.present else None,
            answer.nar_size if answer.present else None,
        ):
            same.append(entry.pk)
        else:
            _apply_answer(entry, answer, now)
            changed.append(entry)
    with transaction.atomic():
        CacheEntry.objects.bulk_create(new, batch_size=500)
        CacheEntry.objects.bulk_update(changed, CACHE_ENTRY_FIELDS, batch_size=100)
        for chunk in _chunks(same):
            CacheEntry.objects.filter(pk__in=chunk).update(checked_at=now, error="", error_at=None)
        for error, pks in failed.items():
            for chunk in _chunks(pks):
                CacheEntry.objects.filter(pk__in=chunk).update(error=error, error_at=now)
    return counts


def _chunks(items: list, size: int = 500):
    for start in range(0, len(items), size):
        yield items[start : start + size]


CACHE_ENTRY_FIELDS = [
    "present",
    "file_size",
    "nar_size",
    "checked_at",
    "present_since",
    "error",
    "error_at",
]


def _apply_answer(entry: CacheEntry, answer, now: datetime) -> None:
    if answer.present is None:
        entry.error, entry.error_at = answer.error[:200], now
        return
    if answer.present and not entry.present:
        entry.present_since = now
    elif not answer.present:
        entry.present_since = None
    entry.present, entry.checked_at = answer.present, now
    entry.file_size = answer.file_size if answer.present else None
    entry.nar_size = answer.nar_size if answer.present else None
    entry.error, entry.error_at = "", None
