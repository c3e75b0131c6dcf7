"""Writes to the catalogue that more than one entry point shares.

`record_build` is used by `manage.py record-build` and by `POST /api/builds`: both only parse
their input and call it, so validation and locking live here once.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from catalog.models import BuildRecord, Variant

BUILD_STATUSES = tuple(value for value, _ in BuildRecord.STATUSES)
# A successful rebuild of a published variant keeps it published.
STATUS_KEPT_ON_BUILT = {"published"}
COMMIT_RE = re.compile(r"[0-9a-fA-F]{4,40}")


class UnknownVariant(Exception):
    """No variant with that repository, branch and package name."""


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
) -> BuildRecord:
    """Add a BuildRecord to a variant and set the variant's status from it, atomically.

    The variant row is locked (SELECT … FOR UPDATE where the database supports it; SQLite
    takes its write lock when the transaction starts, see settings), so concurrent calls for
    the same variant queue: every record is kept and the status is the last one written.

    Raises UnknownVariant when no such variant exists and ValidationError (with a message per
    field) for bad input; nothing is written in either case.
    """
    if status not in BUILD_STATUSES:
        raise ValidationError(
            {"status": f"Status must be one of {', '.join(BUILD_STATUSES)}, not {status!r}."}
        )
    if duration_seconds is not None and (
        isinstance(duration_seconds, bool)
        or not isinstance(duration_seconds, int)
        or not 0 <= duration_seconds <= 2**31 - 1
    ):
        raise ValidationError(
            {"duration_seconds": "Duration must be a whole number of seconds, 0 or more."}
        )
    if commit and not COMMIT_RE.fullmatch(commit):
        raise ValidationError({"commit": "Commit must be a git hash: 4 to 40 hexadecimal digits."})
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
        )
        record.full_clean()
        record.save()
        if not (status == "built" and variant.status in STATUS_KEPT_ON_BUILT):
            if variant.status != status:
                variant.status = status
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
