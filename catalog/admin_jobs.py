"""The maintainer jobs as admin actions: select variants (edit) or one branch (add or drop an
architecture, derive a branch), fill a small form, see what export would write, confirm.

Each action calls the same service as its command (`catalog.services.edit_selected`,
`catalog.recipes.maintain`): the preview runs it as a dry run (rolled back), confirming runs it
again for real, all or nothing; a refusal is shown on the form and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.template.response import TemplateResponse

from catalog.recipes import maintain
from catalog.services import EDITABLE_VARIANT_FIELDS, EditRefused, edit_selected

REFUSALS = (EditRefused, maintain.MaintainRefused)


@dataclass(frozen=True)
class Preview:
    """One file or variant on the preview page: its heading, what changes, its export diff."""

    heading: str
    notes: list[str]
    diff: str


@dataclass(frozen=True)
class AdminJob:
    title: str
    form: type[forms.Form]
    # (the selection, the form's cleaned data, dry_run) -> the service's report
    run: Callable[[object, dict, bool], object]
    # the report -> (a sentence, the previews)
    shown: Callable[[object], tuple[str, list[Preview]]]


def run_admin_job(model_admin, request, job: AdminJob, action: str, selection, pks):
    """The action's page: the form, then (a bound, valid form) the preview, then on confirm the
    write and a message on the list. A refusal is the form's error; nothing is written."""
    bound = "_job" in request.POST
    form = job.form(request.POST if bound else None)
    summary, previews = "", None
    if bound and form.is_valid():
        confirm = "confirm" in request.POST
        try:
            report = job.run(selection, form.cleaned_data, not confirm)
        except REFUSALS as exc:
            form.add_error(None, str(exc))
        else:
            summary, previews = job.shown(report)
            if confirm:
                model_admin.message_user(request, summary, messages.SUCCESS)
                return None
    context = {
        **model_admin.admin_site.each_context(request),
        "title": job.title,
        "subject": selection,
        "form": form,
        "summary": summary,
        "previews": previews,
        "action": action,
        "pks": pks,
        "opts": model_admin.model._meta,
    }
    return TemplateResponse(request, "admin/catalog/maintain_job.html", context)


def _words(text: str) -> list[str]:
    return text.replace(",", " ").split()


# ---------------------------------------------------------------- edit the selected variants


class EditSelectedForm(forms.Form):
    field = forms.ChoiceField(choices=[(name, name) for name in EDITABLE_VARIANT_FIELDS])
    value = forms.CharField(
        required=False,
        help_text="as edit-variants takes it: JSON for lists, the slug for gpu_arch and cpu_isa, "
        "empty for none",
    )


def _edit_shown(report) -> tuple[str, list[Preview]]:
    previews = [
        Preview(
            edit.pname,
            [f"{name}: {old or '(none)'} → {new or '(none)'}" for name, old, new in edit.changes],
            edit.diff,
        )
        for edit in report.edits
    ]
    return f"{len(report.edits)} of {report.matched} variants change.", previews


EDIT_SELECTED = AdminJob(
    "Edit the selected variants",
    EditSelectedForm,
    lambda pks, data, dry_run: edit_selected(pks, {data["field"]: data["value"]}, dry_run=dry_run),
    _edit_shown,
)


# ---------------------------------------------------------------- jobs on one branch


def _job_shown(report: maintain.JobReport) -> tuple[str, list[Preview]]:
    previews = []
    for (path, model), diff in zip(report.files, report.diffs, strict=True):
        note = f"derived from {model}" if model else "stale: export-recipes --prune deletes it"
        previews.append(Preview(path, [note], diff))
    return report.summary + ".", previews


class AddArchitectureForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("architecture", "a GPU architecture"), ("isa", "a CPU ISA")], label="Add"
    )
    new = forms.CharField(label="Name", help_text="e.g. sm70, or avx512vnni for an ISA")
    like = forms.CharField(
        label="Modelled on", help_text="one the branch has, e.g. sm75 (or avx512)"
    )


def _add(branch, data: dict, dry_run: bool) -> maintain.JobReport:
    job = maintain.add_isa if data["kind"] == "isa" else maintain.add_architecture
    return job(branch.repository, branch.name, data["new"], data["like"], dry_run=dry_run)


class DropArchitectureForm(forms.Form):
    sm = forms.CharField(label="GPU architecture", help_text="e.g. sm61")


class DeriveBranchForm(forms.Form):
    name = forms.CharField(label="New branch", help_text="e.g. pytorch-2.11-python313")
    pytorch_version = forms.CharField(label="PyTorch version")
    python_version = forms.CharField(
        label="Python version", required=False, help_text="empty: the source branch's"
    )
    pins = forms.CharField(
        label="nixpkgs pins",
        required=False,
        help_text="CUDA=COMMIT, space-separated, e.g. 12.8=0123abc… (empty: the recipes' own)",
    )
    drop = forms.CharField(
        label="Drop architectures", required=False, help_text="space-separated, e.g. sm61 sm70"
    )


def _derive(branch, data: dict, dry_run: bool) -> maintain.JobReport:
    values = {k: data[k].strip() for k in ("pytorch_version", "python_version") if data[k]}
    return maintain.derive_branch(
        branch.repository,
        branch.name,
        data["name"].strip(),
        values,
        pins=maintain.parse_pairs(data["pins"].split(), "pins"),
        drop=_words(data["drop"]),
        dry_run=dry_run,
    )


BRANCH_JOBS = {
    "add_architecture": AdminJob(
        "Add an architecture or ISA", AddArchitectureForm, _add, _job_shown
    ),
    "drop_architecture": AdminJob(
        "Drop an architecture",
        DropArchitectureForm,
        lambda branch, data, dry_run: maintain.drop_architecture(
            branch.repository, branch.name, data["sm"], dry_run=dry_run
        ),
        _job_shown,
    ),
    "derive_branch": AdminJob("Derive a release branch", DeriveBranchForm, _derive, _job_shown),
}
