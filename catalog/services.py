"""Writes to the catalogue that more than one entry point shares.

`record_build` is used by `manage.py record-build` and by `POST /api/builds`: both only parse
their input and call it, so validation and locking live here once. `edit_variants` is
`manage.py edit-variants` and the variant admin's "Edit the selected variants" action.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import field as dataclass_field
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
    CpuIsa,
    GpuArchitecture,
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


# ---------------------------------------------------------------- edit-variants

# The values an imported recipe writes, as the admin shows them beside its text.
RECIPE_VALUE_FIELDS = (
    "nixpkgs_pin",
    "cuda_packages_attr",
    "python_attr",
    "gpu_targets",
    "cpu_flags",
    "platforms",
    "torch_version_override",
    "passthru",
)
# Fields edit-variants may set and match on: the admin form's, less the branch and the
# dependency (a variant's place is not an edit to its fields).
EDITABLE_VARIANT_FIELDS = (
    "pname",
    "library",
    "backend",
    "cuda_version",
    "gpu_arch",
    "cpu_isa",
    "platform",
    "python_version",
    "blas",
    "status",
    "use_case",
    "notes",
    "disabled_features",
    "extra_cmake_flags",
    "metadata_rev",
    *RECIPE_VALUE_FIELDS,
)
# Foreign keys are written by their slug.
SLUG_FIELDS = {"gpu_arch": (GpuArchitecture, "sm"), "cpu_isa": (CpuIsa, "slug")}


class EditRefused(Exception):
    """An edit the catalogue cannot make; the message is one sentence. Nothing was written."""


@dataclass
class VariantEdit:
    pname: str
    changes: list[tuple[str, str, str]]  # (field, old value, new value) as text
    diff: str = ""  # what export would now write for its recipe (imported variants)


@dataclass
class EditReport:
    matched: int = 0
    edits: list[VariantEdit] = dataclass_field(default_factory=list)


def parse_assignments(pairs, option: str) -> dict[str, str]:
    """["FIELD=VALUE", …] -> {field: raw value}, refusing unknown fields and repeats."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep:
            raise EditRefused(f"{option} {pair!r} is not FIELD=VALUE.")
        if name not in EDITABLE_VARIANT_FIELDS:
            raise EditRefused(
                f"{option} names {name!r}, which is not a variant field that can be edited; "
                f"choose from {', '.join(EDITABLE_VARIANT_FIELDS)}."
            )
        if name in parsed:
            raise EditRefused(f"{option} names {name} twice.")
        parsed[name] = raw
    return parsed


def shown(value) -> str:
    """A field value as edit-variants reads and prints it."""
    if isinstance(value, GpuArchitecture):
        return value.sm
    if isinstance(value, CpuIsa):
        return value.slug
    if isinstance(value, list | dict):
        return json.dumps(value)
    return "" if value is None else str(value)


def _field_value(name: str, raw: str):
    """The raw text of --set as the field's value (JSON for list and mapping fields)."""
    if name in SLUG_FIELDS:
        model, key = SLUG_FIELDS[name]
        if not raw:
            return None
        found = model.objects.filter(**{key: raw}).first()
        if found is None:
            known = ", ".join(model.objects.values_list(key, flat=True))
            raise EditRefused(f"--set {name}={raw}: no such {key}; known: {known}.")
        return found
    field = Variant._meta.get_field(name)
    if isinstance(field, models.JSONField):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise EditRefused(
                f"--set {name} takes JSON, e.g. {name}='{shown(field.get_default())}'."
            ) from None
        return value
    try:
        return field.to_python(raw)
    except ValidationError as exc:
        raise EditRefused(f"--set {name}={raw}: {' '.join(exc.messages)}") from None


def edit_variants(
    repository: str, branch: str, where: dict[str, str], values: dict[str, str], *, dry_run=False
) -> EditReport:
    """Set `values` on every variant of the branch whose fields read as `where` says (see
    `edit_selected`)."""

    def matching(variants: list[Variant]) -> list[Variant]:
        if not variants:
            raise EditRefused(f"{repository}:{branch} has no variants (or no such branch).")
        matched = [
            v for v in variants if all(shown(getattr(v, k)) == raw for k, raw in where.items())
        ]
        if not matched:
            condition = " and ".join(f"{k}={raw}" for k, raw in where.items())
            raise EditRefused(f"No variant of {repository}:{branch} has {condition}.")
        return matched

    if not values:
        raise EditRefused("Nothing to set: give at least one --set FIELD=VALUE.")
    queryset = Variant.objects.filter(branch__repository=repository, branch__name=branch)
    return _edit(queryset, matching, values, dry_run)


def edit_selected(pks, values: dict[str, str], *, dry_run=False) -> EditReport:
    """Set `values` on the variants with these primary keys (the admin's action). Each is
    validated as the admin validates it (full_clean); all are saved or, on any error or with
    dry_run, none. Each edit lists its changed fields and, for an imported recipe, the diff
    export-recipes will write."""

    def selected(variants: list[Variant]) -> list[Variant]:
        if not variants:
            raise EditRefused("No variants are selected.")
        return variants

    if not values:
        raise EditRefused("Nothing to set: choose a field and its value.")
    return _edit(Variant.objects.filter(pk__in=list(pks)), selected, values, dry_run)


def _edit(queryset, choose, values: dict[str, str], dry_run: bool) -> EditReport:
    """`values` set on the variants `choose` keeps of the queryset, in one transaction."""
    wanted = {name: _field_value(name, raw) for name, raw in values.items()}
    with transaction.atomic():
        report = _apply_edit(choose(_editable(queryset)), wanted)
        _finish_edit(dry_run)
    return report


def _finish_edit(dry_run: bool) -> None:
    """Roll a dry run back; otherwise store the edited branches' audit findings and the
    snapshots with the edit."""
    from catalog import cache

    if dry_run:
        transaction.set_rollback(True)
    else:
        cache.store_derived()


def _editable(queryset) -> list[Variant]:
    related = ("branch", "gpu_arch", "cpu_isa", "depends_on")
    return list(queryset.select_related(*related).order_by("pname"))


def _apply_edit(matched: list[Variant], wanted: dict) -> EditReport:
    from catalog.recipes.exporting import sync  # the exporter imports the core, not back

    report = EditReport(matched=len(matched))
    for variant in matched:
        changes = [
            (name, shown(getattr(variant, name)), shown(value))
            for name, value in wanted.items()
            if getattr(variant, name) != value
        ]
        if not changes:
            continue
        assign_changed(variant, wanted)
        try:
            variant.full_clean()
        except ValidationError as exc:
            raise EditRefused(
                f"{variant.pname}: {validation_message(exc).rstrip('.')}; nothing was changed."
            ) from None
        variant.save()
        edit = VariantEdit(variant.pname, changes)
        if variant.recipe_text:
            edit.diff = _export_diff(sync, variant)
        report.edits.append(edit)
    return report


def _export_diff(sync, variant: Variant) -> str:
    from catalog.recipes.nix.errors import EditError

    try:
        return sync.export_diff(variant)
    except EditError as exc:
        raise EditRefused(
            f"{variant.pname}: export could not write {exc.field} into its recipe ({exc.reason}); "
            "nothing was changed."
        ) from None
