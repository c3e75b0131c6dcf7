from django import forms
from django.contrib import admin, messages
from django.db import models
from django.utils.html import format_html

from catalog import audit_store, naming
from catalog.admin_jobs import BRANCH_JOBS, EDIT_SELECTED, run_admin_job
from catalog.models import (
    ApiToken,
    BinaryCache,
    Branch,
    BuildOutput,
    BuildRecord,
    CacheEntry,
    CpuIsa,
    DocPage,
    GpuArchitecture,
    GpuModel,
    SourceClaim,
    Variant,
)
from catalog.recipes.exporting import sync
from catalog.recipes.nix.errors import EditError
from catalog.services import RECIPE_VALUE_FIELDS


class StoresAuditFindings(admin.ModelAdmin):
    """An edit here changes the audit's stored findings (an architecture's, every branch's): they
    are computed again in the edit's own transaction, as the other writers do, so the editor
    pays for it and not the next visitor of /audit/."""

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        audit_store.refresh_stale()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        audit_store.refresh_stale()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        audit_store.refresh_stale()


class GpuModelInline(admin.TabularInline):
    model = GpuModel
    extra = 0


@admin.register(GpuArchitecture)
class GpuArchitectureAdmin(StoresAuditFindings):
    list_display = [
        "sm",
        "compute_capability",
        "name",
        "label",
        "min_driver",
        "min_cuda",
        "max_cuda",
    ]
    search_fields = ["sm", "name", "description", "models__name"]
    inlines = [GpuModelInline]


@admin.register(GpuModel)
class GpuModelAdmin(admin.ModelAdmin):
    list_display = ["name", "architecture", "segment"]
    list_filter = ["architecture", "segment"]
    search_fields = ["name", "aliases"]
    list_select_related = ["architecture"]


@admin.register(CpuIsa)
class CpuIsaAdmin(StoresAuditFindings):
    list_display = ["slug", "label", "arch", "rank", "flags", "disabled"]
    list_filter = ["arch"]
    search_fields = ["slug", "label", "hardware"]

    @admin.display(description="compiler flags")
    def flags(self, obj):
        return " ".join(obj.compiler_flags)

    @admin.display(description="disables")
    def disabled(self, obj):
        return ", ".join(obj.disabled_libraries) or "—"


@admin.register(Branch)
class BranchAdmin(StoresAuditFindings):
    list_display = [
        "name",
        "repository",
        "pytorch_version",
        "python_version",
        "cuda",
        "cudnn_version",
        "min_driver",
        "nixpkgs_pin",
        "is_default",
        "preference",
        "stated_variant_count",
    ]
    list_filter = ["repository", "python_version", "pytorch_version", "is_default"]
    search_fields = ["name", "purpose", "nixpkgs_pin"]
    actions = ["add_architecture", "drop_architecture", "derive_branch"]

    @admin.display(description="CUDA")
    def cuda(self, obj):
        return " / ".join(obj.cuda_versions)

    def _branch_job(self, request, queryset, action: str):
        """A maintainer job (`catalog.admin_jobs`) on the one selected branch."""
        branches = list(queryset[:2])
        if len(branches) != 1:
            self.message_user(request, "Select exactly one branch for this job.", messages.ERROR)
            return None
        branch = branches[0]
        return run_admin_job(self, request, BRANCH_JOBS[action], action, branch, [branch.pk])

    @admin.action(
        description="Add a GPU architecture or CPU ISA (preview the new recipes)",
        permissions=["change"],
    )
    def add_architecture(self, request, queryset):
        return self._branch_job(request, queryset, "add_architecture")

    @admin.action(
        description="Drop a GPU architecture (preview the stale recipes)", permissions=["change"]
    )
    def drop_architecture(self, request, queryset):
        return self._branch_job(request, queryset, "drop_architecture")

    @admin.action(
        description="Derive a release branch (preview its recipes)", permissions=["change"]
    )
    def derive_branch(self, request, queryset):
        return self._branch_job(request, queryset, "derive_branch")


# The fields an editor sets by hand, in the groups the admin shows them; the rest of a variant
# (its origin and the facts read from an imported recipe) is written by the importer.
VARIANT_FIELDSETS = [
    (None, ["pname", "branch", "library", "backend", "status"]),
    ("Target", ["gpu_arch", "cuda_version", "cpu_isa", "platform", "python_version", "blas"]),
    ("Recipe inputs", ["disabled_features", "extra_cmake_flags", "metadata_rev", "depends_on"]),
    ("Description", ["use_case", "notes"]),
]


class VariantAdminForm(forms.ModelForm):
    class Meta:
        model = Variant
        fields = [name for _title, names in VARIANT_FIELDSETS for name in names]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pname"].required = False
        self.fields["pname"].help_text = "Leave empty to use the name composed from the fields."

    def clean(self):
        data = super().clean()
        if not data.get("pname"):
            try:
                data["pname"] = naming.compose(
                    data.get("library", ""),
                    data.get("python_version", ""),
                    data.get("backend", ""),
                    data.get("cuda_version", ""),
                    data["gpu_arch"].sm if data.get("gpu_arch") else "",
                    data["cpu_isa"].slug if data.get("cpu_isa") else "",
                )
            except naming.InvalidName as exc:
                self.add_error("pname", f"No name can be composed: {exc}")
        return data


# A build log link typed without a scheme means https (Django 6's default, chosen now).
URL_HTTPS = {models.URLField: {"assume_scheme": "https"}}


class BuildRecordInline(admin.TabularInline):
    model = BuildRecord
    formfield_overrides = URL_HTTPS
    extra = 0
    fields = ["status", "started_at", "duration_seconds", "host", "commit", "log_url", "system"]
    show_change_link = True  # outputs and publication are on the build's own page


@admin.register(Variant)
class VariantAdmin(StoresAuditFindings):
    form = VariantAdminForm
    list_display = [
        "pname",
        "branch",
        "library",
        "backend",
        "gpu_arch",
        "cpu_isa",
        "cuda_version",
        "python_version",
        "platform",
        "status",
    ]
    list_filter = [
        "branch__repository",
        "branch",
        "library",
        "backend",
        "gpu_arch",
        "cpu_isa",
        "platform",
        "status",
    ]
    search_fields = ["pname", "use_case", "notes"]
    list_select_related = ["branch", "gpu_arch", "cpu_isa"]
    autocomplete_fields = ["depends_on"]
    readonly_fields = [
        "computed_pname",
        "origin",
        "recipe_path",
        "recipe_form",
        "recipe_source",
        "export_preview",
    ]
    inlines = [BuildRecordInline]
    actions = ["edit_selected"]
    # The composed name shows beside the name it replaces when left empty.
    fieldsets = [
        (title, {"fields": ["pname", "computed_pname", *names[1:]] if title is None else names})
        for title, names in VARIANT_FIELDSETS
    ]
    # An imported variant's recipe: its values as written (editable; export edits them in
    # place), its text as imported (read-only) and what export would change in it.
    imported_fieldset = (
        "Imported recipe",
        {
            "fields": [
                "origin",
                "recipe_path",
                "recipe_form",
                *RECIPE_VALUE_FIELDS,
                "export_preview",
                "recipe_source",
            ]
        },
    )

    def get_fieldsets(self, request, obj=None):
        if obj is not None and obj.recipe_text:
            return [*self.fieldsets, self.imported_fieldset]
        return self.fieldsets

    @admin.action(
        description="Edit the selected variants (preview the export diff, then confirm)",
        permissions=["change"],
    )
    def edit_selected(self, request, queryset):
        """One field set on every selected variant through `catalog.services.edit_selected`
        (`catalog.admin_jobs`)."""
        pks = list(queryset.values_list("pk", flat=True))
        return run_admin_job(self, request, EDIT_SELECTED, "edit_selected", pks, pks)

    @admin.display(description="recipe as imported")
    def recipe_source(self, obj):
        return format_html('<pre class="recipe-source">{}</pre>', obj.recipe_text)

    @admin.display(description="what export would change")
    def export_preview(self, obj):
        if not obj.recipe_text:
            return "—"
        try:
            diff = sync.export_diff(obj)
        except EditError as exc:
            return format_html(
                '<p class="errornote">Export cannot write this recipe: {} cannot be edited in '
                "place ({}); edit it in the file by hand.</p>",
                exc.field,
                exc.reason,
            )
        if not diff:
            return "Nothing: export writes the recipe exactly as imported."
        return format_html('<pre class="export-diff">{}</pre>', diff)

    @admin.display(description="name composed from the fields")
    def computed_pname(self, obj):
        if not obj.pk:
            return "— (shown after saving)"
        try:
            return obj.composed_pname()
        except naming.InvalidName as exc:
            return f"cannot compose: {exc}"


class BuildOutputInline(admin.TabularInline):
    model = BuildOutput
    extra = 0
    fields = ["store_path"]


@admin.register(BuildRecord)
class BuildRecordAdmin(admin.ModelAdmin):
    formfield_overrides = URL_HTTPS
    list_display = [
        "variant",
        "status",
        "started_at",
        "duration_seconds",
        "system",
        "nar_size",
        "flox_catalog",
        "host",
        "commit",
    ]
    list_filter = ["status", "system", "variant__branch"]
    search_fields = ["variant__pname", "host", "commit", "outputs__store_path"]
    list_select_related = ["variant"]
    autocomplete_fields = ["variant"]
    inlines = [BuildOutputInline]
    fieldsets = [
        (None, {"fields": ["variant", "status", "started_at", "duration_seconds"]}),
        ("Where it ran", {"fields": ["host", "commit", "log_url", "system", "nixpkgs_rev"]}),
        ("What it produced", {"fields": ["nar_size", "closure_size"]}),
        (
            "Where it was published",
            {"fields": ["flox_catalog", "flox_package", "flox_version", "published_cache_url"]},
        ),
    ]


@admin.register(BinaryCache)
class BinaryCacheAdmin(admin.ModelAdmin):
    """The caches `check-caches` asks; settings' BINARY_CACHES adds or updates rows by name."""

    formfield_overrides = URL_HTTPS
    list_display = ["name", "url", "priority", "enabled"]
    list_editable = ["priority", "enabled"]


@admin.register(CacheEntry)
class CacheEntryAdmin(admin.ModelAdmin):
    """Answers written by `check-caches`: read them here, do not type them."""

    list_display = ["output", "cache", "present", "file_size", "checked_at", "error"]
    list_filter = ["cache", "present"]
    search_fields = ["output__store_path", "output__build__variant__pname"]
    list_select_related = ["output", "cache"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(DocPage)
class DocPageAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "order", "sources"]
    search_fields = ["title", "body"]


@admin.register(SourceClaim)
class SourceClaimAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "subject", "acknowledged", "source"]
    list_filter = ["kind", "acknowledged"]
    search_fields = ["key", "subject", "statement", "resolution"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens for POST /api/builds. The secret is shown once, in the message after "Save";
    only its SHA-256 is stored, so a lost secret means a new token."""

    list_display = ["name", "user", "created", "last_used", "revoked"]
    list_filter = ["revoked"]
    search_fields = ["name", "user__username"]
    list_select_related = ["user"]
    fields = ["user", "name", "revoked", "created", "last_used"]
    readonly_fields = ["created", "last_used"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        # A token's owner is fixed once it exists: issue a new token for another user.
        return [*self.readonly_fields, "user"] if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if not change:
            import secrets

            secret = ApiToken.PREFIX + secrets.token_urlsafe(32)
            obj.key_hash = ApiToken.hash_secret(secret)
            super().save_model(request, obj, form, change)
            self.message_user(
                request,
                f"The token's secret is {secret} — copy it now; it is stored hashed and will "
                "not be shown again. Send it as 'Authorization: Bearer <secret>'.",
                messages.WARNING,
            )
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        count = queryset.update(revoked=True)
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)
