"""The "which variant?" wizard (/wizard/) and its JSON API (/api/recommend).

Both read their input through catalog.wizard.inputs and write through catalog.wizard.output
(shared with `which-variant`), and ask the engine (catalog.wizard) over the catalogue
snapshot (queries.recommend_catalogue). The questions and their fields are the Step records
(catalog.wizard.steps): the page renders whichever step comes next by looping over its fields.

The wizard walks the steps one GET at a time: every answer so far is in the query string
(shareable; the back button works), each step is a plain GET form (htmx swaps the next step in
and pushes the URL), `?step=<id>` re-asks an answered step with its answer filled in. Pasting
tool output is a POST that redirects to a short URL of what was derived from it.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from catalog import queries
from catalog.wizard import inputs as wi
from catalog.wizard import output as wo
from catalog.wizard import steps
from catalog.wizard.readers import AnswerError

PASTE_FIELDS = ("nvidia_smi", "lscpu", "paste")
ECHO_LIMIT = 300_000  # characters of a refused paste shown again in its box


# ---------------------------------------------------------------------------------------------
# A step's form and the answers so far
# ---------------------------------------------------------------------------------------------


def _form_fields(step: steps.Step, given: dict, catalogue, values: dict) -> list[dict]:
    """The step's fields as the templates render them (catalog/wizard/field_<widget>.html)."""
    out = []
    for fld in step.fields:
        if not fld.widget:
            continue
        mine = given.get(fld.name, [])
        choices = fld.choices(catalogue, values) if callable(fld.choices) else fld.choices
        visible_multi = fld.multi and fld.widget in ("select", "text")
        out.append(
            {
                "field": fld,
                "template": f"catalog/wizard/field_{fld.widget}.html",
                "value": mine[0] if mine else fld.default,
                "values": mine,
                "extra": mine[1:] if visible_multi else [],  # kept as hidden inputs when editing
                "choices": choices,
            }
        )
    return out


def _distinct_gpus(detected: dict) -> list[dict]:
    """Identical GPUs once each, with how many there are (an 8-GPU server is one line, ×8)."""
    groups: dict = {}
    for gpu in detected.get("gpus", []):
        key = (gpu["name"], gpu["compute_capability"])
        groups.setdefault(key, {**gpu, "count": 0})["count"] += 1
    return list(groups.values())


def _choice_labels(fld: steps.Field, values: list, catalogue, state: dict) -> list[str]:
    choices = fld.choices(catalogue, state) if callable(fld.choices) else fld.choices
    labels = {c.value: c.label for c in choices}
    return [labels.get(v, v) for v in values]


def _answer_text(step: steps.Step, rec, params: dict, catalogue) -> str:
    """How an answered step reads in "Your answers"."""
    if step.summary is not None:
        text = step.summary(rec)
        if text:
            return text
    parts = []
    for fld in step.fields:
        values = [v for v in params.get(fld.name, []) if v]
        if values and fld.widget not in ("hidden", ""):
            parts += _choice_labels(fld, values, catalogue, rec.answers.values)
    return ", ".join(parts) or "none"


def _summary(rec, params: dict, pairs: list, current: steps.Step | None, catalogue) -> list[dict]:
    """The answered steps before the current one, each with a 'change' link."""
    out, earlier = [], []
    for step in steps.STEPS:
        if step is current:
            break
        mine = [(k, v) for k, v in pairs if k in step.names]
        if steps.applies(step, rec.answers.values) and mine:
            out.append(
                {
                    "id": step.id,
                    "question": step.question,
                    "answer": _answer_text(step, rec, params, catalogue),
                    "change_url": wo.wizard_url(earlier + mine + [("step", step.id)]),
                }
            )
        earlier += mine
    return out


def _step_context(step, pairs, catalogue, values) -> dict:
    given: dict = {}
    for k, v in pairs:
        given.setdefault(k, []).append(v)
    return {
        "step": step,
        "step_number": steps.STEPS.index(step) + 1,
        "step_count": len(steps.STEPS),
        "last_step": step is steps.STEPS[-1],
        "fields": _form_fields(step, given, catalogue, values),
        "hidden": [(k, v) for k, v in pairs if k not in step.names],
    }


def _render(request, context, status=200):
    partial = bool(request.htmx) and not request.htmx.history_restore_request
    template = "catalog/wizard.html#wizard" if partial else "catalog/wizard.html"
    context.setdefault("paste", {})
    context["start_url"] = reverse("catalog:wizard")
    return render(request, template, context, status=status)


# ---------------------------------------------------------------------------------------------
# The wizard
# ---------------------------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request", "HX-History-Restore-Request")  # a step is a fragment for htmx
def wizard(request):
    if request.method == "POST":
        return _paste(request)
    catalogue = queries.recommend_catalogue()
    params: dict = {}
    try:
        params = wi.read_query(request)
        parsed = wi.parse(params, strict=False)
        rec = wi.decide(parsed.answers, catalogue, partial=True)
    except AnswerError as exc:
        return _bad_step(request, catalogue, exc, params)
    a = rec.answers
    pairs = wo.answer_pairs(parsed.params)
    editing = steps.STEP_BY_ID.get(request.GET.get("step", ""))
    if editing is not None and not steps.applies(editing, a.values):
        editing = None
    step = editing or steps.next_step(a.values, a.given)
    context = {
        "detected": rec.detected,
        "detected_gpus": _distinct_gpus(rec.detected),
        "folded": bool(pairs),
    }
    if step is not None:
        context.update(_step_context(step, pairs, catalogue, a.values))
        context["summary"] = _summary(rec, parsed.params, pairs, step, catalogue)
        if request.GET.get("asked") == step.id and editing is None:
            context["error"] = "Choose or type an answer to go on."
            return _render(request, context, 400)
        return _render(request, context)
    body = wo.with_availability(wo.api_body(rec, parsed), queries.availability_json)
    results = [
        {
            **r,
            "commands": wo.commands(r["variant"]) if r["variant"] else [],
            # Status first, then the same steps as the selector and the variant page.
            "answer": queries.build_answer(
                r["variant"]["repository"], r["variant"]["branch"], r["variant"]["pname"]
            )
            if r["variant"]
            else None,
        }
        for r in wo.results(body)
    ]
    context.update(
        {
            "summary": _summary(rec, parsed.params, pairs, None, catalogue),
            "body": body,
            "results": results,
            "several": len(results) > 1,
            "api_url": wo.api_url(pairs),
            "cli": wo.cli_line(pairs),
        }
    )
    return _render(request, context)


def _bad_step(request, catalogue, exc: AnswerError, params: dict):
    """A 400 page: the step the bad answer belongs to, the user's values (as far as they could
    be read) kept in its form, the message beside it."""
    step = steps.STEP_OF.get(exc.field) or steps.STEPS[0]
    pairs = [
        (k, v.replace("\x00", ""))  # a refused NUL is not echoed
        for k, vs in params.items()
        if k in steps.FIELDS and steps.FIELDS[k].public
        for v in vs
        if len(v) <= steps.FIELDS[k].max_length
    ]
    context = _step_context(step, pairs, catalogue, {})
    context.update({"error": exc.message, "error_field": exc.field, "folded": True})
    return _render(request, context, 400)


def _check_workload(workload: str) -> None:
    try:
        steps.FIELDS["workload"].read([workload])
    except AnswerError as exc:
        raise exc.on("workload") from None


def _paste(request):
    """POST: detect answers from pasted tool output, then continue at a short URL of them."""
    catalogue = queries.recommend_catalogue()
    context: dict = {"paste": {}, "paste_field": ""}
    try:
        params = wi.read_form(request)
    except AnswerError as exc:
        context["paste_error"] = exc.message
        return render(request, "catalog/wizard.html", context, status=400)
    # What was pasted is shown again on an error (not NULs, and not an oversized text).
    texts = {k: (params.get(k) or [""])[0] for k in PASTE_FIELDS}
    context["paste"] = {
        k: t.replace("\x00", "")
        for k, t in texts.items()
        if isinstance(t, str) and len(t) <= ECHO_LIMIT
    }
    workload = (params.get("workload") or ["general"])[0]
    context["paste"]["workload"] = workload
    try:
        _check_workload(workload)
        if not any(isinstance(t, str) and t.strip() for t in texts.values()):
            raise AnswerError(
                "Paste the output of nvidia-smi and lscpu (or /proc/cpuinfo) first.", "nvidia_smi"
            )
        parsed = wi.parse({k: params.get(k, []) for k in PASTE_FIELDS}, strict=True)
        given = {"workload": workload}
        rec = wi.decide({**parsed.answers, **given}, catalogue, partial=True)
    except AnswerError as exc:
        context["paste_error"] = exc.message
        known = (*PASTE_FIELDS, "workload")
        context["paste_field"] = exc.field if exc.field in known else "nvidia_smi"
        return render(request, "catalog/wizard.html", context, status=400)
    return redirect(wo.wizard_url(wo.result_pairs(rec.answers, catalogue, given)))


# ---------------------------------------------------------------------------------------------
# The API
# ---------------------------------------------------------------------------------------------


def _error(message: str, field: str = "", status: int = 400) -> JsonResponse:
    body = {"error": message}
    if field:
        body["field"] = field
    return JsonResponse(body, status=status)


@csrf_exempt  # a read-only answer: no session, no side effects
def api_recommend(request):
    """GET (query string) or POST (form or JSON body) -> the recommendation as JSON;
    bad input -> 400 {"error", "field"}."""
    if request.method not in ("GET", "HEAD", "POST"):
        response = _error(f"Method {request.method} is not allowed: use GET or POST.", status=405)
        response["Allow"] = "GET, HEAD, POST"
        return response
    try:
        parsed = wi.parse(wi.read_request(request), strict=True)
        if not parsed.answers:
            raise AnswerError(
                "No answers given: send e.g. os=linux&arch=x86_64&gpu=H100&"
                "cpu_flags=..., or paste nvidia_smi and lscpu output."
            )
        rec = wi.decide(parsed.answers)
    except AnswerError as exc:
        return _error(exc.message, exc.field)
    body = wo.with_availability(wo.api_body(rec, parsed), queries.availability_json)
    return JsonResponse(body, json_dumps_params={"indent": 1})
