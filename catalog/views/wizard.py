"""The "which variant?" wizard (/wizard/) and its JSON API (/api/recommend).

Both read their input through catalog.wizard_input (shared with `which-variant`) and ask the
engine (catalog.recommend) over the catalogue snapshot (selectors.recommend_catalogue).

The wizard walks the engine's tree one step per GET: every answer so far is in the query string
(shareable; the back button works), each step is a plain GET form (htmx swaps the next step in
and pushes the URL), `?step=<id>` re-asks an answered step with its answer filled in. Pasting
tool output is a POST (too big for a URL) that redirects to the wizard with what it detected.
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

from catalog import selectors
from catalog import wizard_input as wi
from catalog.recommend import choices_for, tree

PASTE_FIELDS = ("nvidia_smi", "lscpu", "paste")
TOO_BIG = "The pasted text is too large: paste at most 256 KB of nvidia-smi, lscpu or /proc/cpuinfo output."


# ---------------------------------------------------------------------------------------------
# Answers <-> query string
# ---------------------------------------------------------------------------------------------

def _params_of(answers: dict) -> list[tuple[str, str]]:
    """Engine answers -> public (name, value) pairs, in the tree's order."""
    pairs = []
    for step in tree.STEPS:
        for name in wi.STEP_FIELDS[step.id]:
            key = wi.FIELDS[name]
            if name == "gpu" and answers.get("gpus"):
                for g in answers["gpus"]:
                    pairs.append(("gpu", g.get("name", "")))
                    pairs.append(("compute_cap", g.get("compute_capability", "")))
                continue
            if name == "compute_cap" and answers.get("gpus"):
                continue
            if key not in answers:
                continue
            value = answers[key]
            if isinstance(value, (list, tuple)):
                value = " ".join(str(v) for v in value)
            if value == "" and name not in wi.CONSTRAINTS:
                continue
            pairs.append((name, str(value)))
    return pairs


def _step_pairs(pairs, step_id):
    names = set(wi.STEP_FIELDS[step_id])
    return [(k, v) for k, v in pairs if k in names]


def _url(pairs) -> str:
    return reverse("catalog:wizard") + ("?" + urlencode(pairs) if pairs else "")


def _distinct_gpus(gpus) -> list[dict]:
    """Identical GPUs once each, with how many there are (an 8-GPU server is one line, ×8)."""
    groups: dict = {}
    for gpu in gpus or []:
        key = (gpu.get("name") or "", str(gpu.get("compute_capability") or ""))
        if key in groups:
            groups[key]["count"] += 1
        else:
            groups[key] = {**gpu, "count": 1}
    return list(groups.values())


def _answer_text(step, pairs, catalogue, detected) -> str:
    values = dict(pairs)
    labels = {c.value: c.label for c in (step.choices or choices_for(step, catalogue))}
    if step.id in ("os", "arch", "workload"):
        return labels.get(values.get(step.id, ""), values.get(step.id, ""))
    if step.id == "gpu":
        return {"yes": "Yes", "no": "No"}.get(values.get("has_gpu", ""), values.get("has_gpu", ""))
    if step.id == "gpu_model":
        text = ", ".join(
            f"{g['name'] or 'GPU'}{f' ×{n}' if (n := g['count']) > 1 else ''} (compute capability {g['compute_capability']})"
            for g in _distinct_gpus(detected.get("gpus"))
        )
        if values.get("driver"):
            text += f"; driver {values['driver']}"
        return text
    if step.id == "cpu":
        cpu = detected.get("cpu") or {}
        if values.get("cpu_flags"):
            name = cpu.get("label") or cpu.get("model") or "this CPU"
            flags = cpu.get("isa_features") or []
            return f"{name}: flags {' '.join(flags)}" if flags else f"{name} (flags given)"
        return labels.get(values.get("isa", ""), values.get("isa", ""))
    if step.id == "constraints":
        given = [f"{k} {v}" for k, v in pairs if v]
        return ", ".join(given) or "none"
    return ", ".join(v for _, v in pairs)


def _summary(pairs, answers, current_id, catalogue, detected):
    """The answered steps before the current one, each with a 'change' link."""
    out = []
    earlier = []
    for step in tree.STEPS:
        if step.id == current_id:
            break
        mine = _step_pairs(pairs, step.id)
        if tree.applies(step, answers) and mine:
            out.append({
                "id": step.id,
                "question": step.question,
                "answer": _answer_text(step, mine, catalogue, detected),
                "change_url": _url(earlier + mine + [("step", step.id)]),
            })
        earlier += mine
    return out


# ---------------------------------------------------------------------------------------------
# The wizard
# ---------------------------------------------------------------------------------------------

def _step_context(step, pairs, catalogue, answers):
    values = {}
    for k, v in _step_pairs(pairs, step.id):
        # A refused NUL is not echoed back into the form.
        values.setdefault(k, v.replace("\x00", ""))
    choices = list(step.choices or choices_for(step, catalogue))
    if step.id == "cpu" and answers.get("arch"):
        arch = tree.ARCH_ALIASES.get(str(answers["arch"]).lower(), "")
        isa_arch = {i.slug: i.arch for i in catalogue.isas}
        choices = [c for c in choices if not arch or isa_arch.get(c.value) == arch]
    mine = set(wi.STEP_FIELDS[step.id])
    hidden = [(k, v) for k, v in pairs if k not in mine]
    return {
        "step": step,
        "step_number": [s.id for s in tree.STEPS].index(step.id) + 1,
        "step_count": len(tree.STEPS),
        "choices": choices,
        "values": values,
        "hidden": hidden,
        "libraries": tree.LIBRARY_CHOICES,
        "pythons": choices_for("constraints", catalogue) if step.id == "constraints" else (),
    }


def _render(request, context, status=200):
    partial = bool(request.htmx) and not request.htmx.history_restore_request
    template = "catalog/wizard.html#wizard" if partial else "catalog/wizard.html"
    return render(request, template, context, status=status)


def _result_context(body):
    results = []
    for result in wi.results(body):
        results.append({**result, "commands": wi.commands(result["variant"]) if result["variant"] else []})
    return results


def wizard(request):
    if request.method == "POST":
        return _paste(request)
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    catalogue = selectors.recommend_catalogue()
    context = {"paste": {}, "paste_error": None}
    try:
        parsed = wi.parse(wi.params_from_querydict(request.GET), strict=False)
    except wi.InputError as exc:
        return _bad_step(request, catalogue, exc, {}, [], context)
    answers = parsed.answers
    pairs = _params_of(answers)
    try:
        rec = wi.decide(answers, catalogue, partial=True)
    except wi.InputError as exc:
        return _bad_step(request, catalogue, exc, answers, pairs, context)
    detected = rec.detected
    editing = tree.STEP_BY_ID.get(request.GET.get("step", ""))
    if editing is not None and not tree.applies(editing, answers):
        editing = None
    step = editing or tree.next_step(answers)
    context.update({"detected": detected, "detected_gpus": _distinct_gpus(detected.get("gpus")), "pairs": pairs,
                    "start_url": reverse("catalog:wizard")})
    status = 200
    if step is not None:
        context.update(_step_context(step, pairs, catalogue, answers))
        context["summary"] = _summary(pairs, answers, step.id, catalogue, detected)
        asked = request.GET.get("asked", "")
        if asked == step.id and editing is None and step.required:
            context["error"] = "Choose or type an answer to go on."
            status = 400
        return _render(request, context, status)
    body = wi.api_body(rec, parsed)
    context.update({
        "summary": _summary(pairs, answers, None, catalogue, detected),
        "body": body,
        "results": _result_context(body),
        "several": len(wi.results(body)) > 1,
        "api_url": reverse("catalog:api-recommend") + "?" + urlencode([(k, v) for k, v in pairs if v]),
        "cli": _cli_line(pairs),
    })
    return _render(request, context)


def _cli_line(pairs) -> str:
    import shlex

    parts = ["python manage.py which-variant"]
    for k, v in pairs:
        if not v or k in ("has_gpu", "cpu_vendor", "cpu_model", "cpu_parts", "driver_cuda"):
            if k == "has_gpu" and v == "no":
                parts.append("--gpu none")
            continue
        parts.append(f"--{k.replace('_', '-')} {shlex.quote(v)}")
    return " ".join(parts)


def _bad_step(request, catalogue, exc, answers, pairs, context):
    """A 400 page: the step the bad answer belongs to, with the message beside its field."""
    step_id = wi.FIELD_STEP.get(exc.field) or (tree.next_step(answers).id if tree.next_step(answers) else "os")
    step = tree.STEP_BY_ID[step_id]
    # Keep the user's bad value in the form so it can be corrected.
    raw = [(k, v) for k, v in request.GET.items() if k in wi.STEP_FIELDS[step_id] and len(v) <= wi.MAX_FLAGS]
    pairs = [(k, v) for k, v in pairs if k not in wi.STEP_FIELDS[step_id]] + raw
    context.update(_step_context(step, pairs, catalogue, answers))
    context.update({"detected": {}, "summary": _summary(pairs, answers, step_id, catalogue, {}),
                    "error": exc.message, "error_field": exc.field, "pairs": pairs})
    return _render(request, context, 400)


def _paste(request):
    """POST: detect answers from pasted tool output, then continue the wizard with them."""
    catalogue = selectors.recommend_catalogue()
    context = {"paste": {}, "paste_error": None, "paste_field": "", "step": None}
    try:
        post = request.POST
    except RequestDataTooBig:
        context["paste_error"] = TOO_BIG
        return render(request, "catalog/wizard.html", context, status=400)
    # What was pasted is shown again on an error (not NULs, and not an oversized text).
    context["paste"] = {
        k: post.get(k, "").replace("\x00", "") for k in PASTE_FIELDS if len(post.get(k, "")) <= 300_000
    }
    params = {k: post.getlist(k) for k in PASTE_FIELDS}
    workload = post.get("workload", "general")
    context["paste"]["workload"] = workload
    try:
        if workload not in tree.ISA_PREFERENCE:
            raise wi.InputError(f"Unknown workload {workload!r}: choose one of {', '.join(tree.ISA_PREFERENCE)}.", "workload")
        if not any(v.strip() for vs in params.values() for v in vs):
            raise wi.InputError("Paste the output of nvidia-smi and lscpu (or /proc/cpuinfo) first.", "nvidia_smi")
        parsed = wi.parse(params, strict=True)
        answers = {**parsed.answers, "workload": workload, **{c: "" for c in wi.CONSTRAINTS}}
        # The form says to leave nvidia-smi empty when there is no NVIDIA GPU: on Linux an empty
        # box is that answer, unless the other boxes held GPU output.
        gpu_known = any(k in answers for k in ("gpu", "gpus", "compute_capability", "has_gpu"))
        if not any(v.strip() for v in params["nvidia_smi"]) and not gpu_known and answers.get("os") != "darwin":
            answers["has_gpu"] = "no"
        wi.decide(answers, catalogue, partial=True)
    except wi.InputError as exc:
        context["paste_error"] = exc.message
        context["paste_field"] = exc.field if exc.field in (*PASTE_FIELDS, "workload") else "nvidia_smi"
        return render(request, "catalog/wizard.html", context, status=400)
    pairs = _params_of(answers) + [("detected", "1")]
    return redirect(_url(pairs), permanent=False)


# ---------------------------------------------------------------------------------------------
# The API
# ---------------------------------------------------------------------------------------------

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _error(message, field="", status=400):
    body = {"error": message}
    if field:
        body["field"] = field
    return JsonResponse(body, status=status)


@csrf_exempt  # a read-only answer: no session, no side effects
def api_recommend(request):
    """GET (query string) or POST (form or JSON body) -> the recommendation as JSON; 400 {"error"}."""
    if request.method not in ("GET", "HEAD", "POST"):
        response = _error(f"Method {request.method} is not allowed: use GET or POST.", status=405)
        response["Allow"] = "GET, HEAD, POST"
        return response
    try:
        if request.method == "POST":
            if request.content_type == "application/json":
                params = wi.params_from_json(request.body)
            elif request.content_type in FORM_TYPES:
                params = wi.params_from_querydict(request.POST)
            else:
                raise wi.InputError(
                    f"Unsupported content type {request.content_type or '(none)'!r}: send "
                    "application/json, a form, or use GET with a query string.")
        else:
            params = wi.params_from_querydict(request.GET)
        parsed = wi.parse(params, strict=True)
        if not parsed.answers:
            raise wi.InputError("No answers given: send e.g. os=linux&arch=x86_64&gpu=H100&cpu_flags=..., "
                                "or paste nvidia_smi and lscpu output.")
        rec = wi.decide(parsed.answers)
    except RequestDataTooBig:
        return _error(TOO_BIG)
    except wi.InputError as exc:
        return _error(exc.message, exc.field)
    return JsonResponse(wi.api_body(rec, parsed), json_dumps_params={"indent": 1})
