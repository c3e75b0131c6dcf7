"""Writing out the answer of "which variant?": the API's JSON body (also `which-variant
--json`), the CLI's text, and the wizard's links — answers as a query string, bounded.

    body = api_body(rec, parsed)             # the API's body
    text = format_text(body, notes)          # which-variant's answer
    pairs = result_pairs(rec.answers, catalogue, {"workload": workload})  # URL after a paste
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.urls import reverse

from catalog.build_commands import DEFAULT_ORG, variant_commands
from catalog.wizard import steps
from catalog.wizard.answers import Answers, claimed_cpu, isa_features
from catalog.wizard.engine import Recommendation
from catalog.wizard.snapshot import Catalogue

if TYPE_CHECKING:
    from catalog.wizard.inputs import Parsed

# A result URL stays under this many characters (Django refuses to redirect past 2,048).
MAX_RESULT_URL = 1_800


# ---------------------------------------------------------------------------------------------
# The API body
# ---------------------------------------------------------------------------------------------


def variant_url(repository: str, branch: str, pname: str) -> str:
    return reverse("catalog:variant", args=[repository, branch, pname])


def _variant(pick) -> dict | None:
    if pick is None:
        return None
    return {**pick.to_dict(), "url": variant_url(pick.repository, pick.branch, pick.pname)}


def _alternatives(rec) -> list:
    return [
        {
            "pname": a.pname,
            "repository": a.repository,
            "branch": a.branch,
            "why": a.why,
            "status": a.status,
            "url": variant_url(a.repository, a.branch, a.pname),
        }
        for a in rec.alternatives
    ]


def api_body(rec: Recommendation, parsed: Parsed | None = None) -> dict:
    """The API's answer (and `which-variant --json`'s)."""
    detected = dict(rec.detected)
    if parsed is not None and parsed.sources:
        detected["sources"] = list(parsed.sources)
    body = {
        "variant": _variant(rec.variant),
        "reasons": list(rec.reasons),
        "warnings": list(rec.warnings),
        "alternatives": _alternatives(rec),
        "detected": detected,
    }
    if rec.per_gpu:
        body["per_gpu"] = [
            {
                "gpu": sub.gpu,
                "variant": _variant(sub.variant),
                "reasons": list(sub.reasons),
                "warnings": list(sub.warnings),
                "alternatives": _alternatives(sub),
            }
            for sub in rec.per_gpu
        ]
    return body


def with_availability(body: dict, lookup) -> dict:
    """The body with each named variant's build, publication and cache fields merged in.

    `lookup` maps [(repository, branch, pname)] to {key: fields} (catalog.queries.
    availability_json): the engine stays free of the database."""
    chosen = [r["variant"] for r in results(body) if r.get("variant")]
    found = lookup([(v["repository"], v["branch"], v["pname"]) for v in chosen])
    for variant in chosen:
        variant.update(found.get((variant["repository"], variant["branch"], variant["pname"]), {}))
    return body


def results(body: dict) -> list[dict]:
    """The answers to show: the one result, or one per distinct GPU model when they differ."""
    if body["variant"] is None and body.get("per_gpu"):
        return body["per_gpu"]
    return [body]


def picks(body: dict) -> list[dict]:
    return [r["variant"] for r in results(body) if r.get("variant")]


def all_warnings(body: dict) -> list[str]:
    """Every warning of the answer, once each (several GPU models may share one)."""
    found = list(body["warnings"])
    for result in results(body):
        found += [w for w in result["warnings"] if w not in found]
    return found


def commands(variant: dict, org: str = DEFAULT_ORG) -> list[tuple[str, str, str]]:
    """(key, label, command) to build and install a variant (catalog.build_commands)."""
    return variant_commands(
        variant["repository"],
        variant["branch"],
        variant["pname"],
        org,
        steps=("checkout", "build", "install"),
    )


# ---------------------------------------------------------------------------------------------
# The CLI's text
# ---------------------------------------------------------------------------------------------


def _detected_line(detected: dict) -> str:
    facts = []
    if detected.get("os"):
        facts.append(f"{detected['os']} {detected.get('arch', '')}".strip())
    cpu = detected.get("cpu") or {}
    if cpu.get("label") or cpu.get("model"):
        facts.append(f"CPU {cpu.get('label') or cpu.get('model')}")
    for gpu in detected.get("gpus", []):
        name = f"{gpu['name']} " if gpu.get("name") else ""
        facts.append(f"GPU {name}(compute capability {gpu['compute_capability']}, {gpu['sm']})")
    if detected.get("driver_version"):
        facts.append(f"driver {detected['driver_version']}")
    return "Detected: " + "; ".join(facts) if facts else ""


def availability_line(variant: dict) -> str:
    """Cached where, or built or not, the nearest cached variant and the build-time estimate."""
    if variant["cached"]:
        names = ", ".join(c["name"] for c in variant["caches"])
        return f"Cached in {names}: nothing to compile."
    line = "Built, but in no configured binary cache." if variant["built"] else "Not built yet."
    if variant.get("nearest_cached"):
        line += f" Nearest cached: {variant['nearest_cached']['pname']}."
    if variant.get("build_estimate"):
        line += f" Building it: {variant['build_estimate']['text']}."
    return line


def status_lines(answer: dict) -> list[str]:
    """The build's status before its commands, as the web shows it (partials/build_answer.html;
    `answer` from catalog.queries.build_answer)."""
    lines = [f"Status: {answer['status_label']} — {answer['note']}"]
    nearest = answer.get("nearest")
    if nearest:
        lines.append(
            f"Nearest variant further along: {nearest['pname']} ({nearest['status']}): "
            f"{nearest['difference']}. {nearest['url']}"
        )
    elif not answer["built"]:
        lines.append("No variant for this hardware is further along yet.")
    return lines


def _command_lines(steps) -> list[str]:
    """Each step's command with its label; a command of several lines (clone, then cd) carries
    the label on its first."""
    out = []
    for _key, label, command in steps:
        first, *rest = command.splitlines()
        out += [f"  {first:<60}  # {label}", *(f"  {line}" for line in rest)]
    return out


def _commands_text(variant: dict, answer: dict | None) -> list[str]:
    if answer is None:  # no catalogue at hand: the steps alone
        return ["", "Commands:", *_command_lines(commands(variant))]
    return [
        "",
        f"Commands (status: {answer['status_label']}):",
        *_command_lines(answer["commands"]),
    ]


def format_text(body: dict, notes: Iterable[str] = (), answers: dict | None = None) -> str:
    """The human answer of `which-variant` (its warnings go to standard error). `answers` maps
    (repository, branch, pname) to catalog.queries.build_answer: each build's status comes
    before its commands."""
    lines = [f"Note: {n}" for n in notes]
    detected = _detected_line(body.get("detected", {}))
    if detected:
        lines.append(detected)
    many = len(results(body)) > 1
    if many:
        lines += ["", *body["reasons"]]
    for result in results(body):
        lines.append("")
        if many:
            lines.append(f"== For {result['gpu']} ==")
        variant = result["variant"]
        if variant:
            lines.append(
                f"Use: {variant['pname']}  ({variant['repository']} branch {variant['branch']})"
            )
            lines.append(f"     {variant['url']}")
            answer = (answers or {}).get(
                (variant["repository"], variant["branch"], variant["pname"])
            )
            if answer:  # the status before anything to run, as on the web
                lines += [f"     {line}" for line in status_lines(answer)]
            if "cached" in variant:
                lines.append(f"     {availability_line(variant)}")
        else:
            lines.append("No variant fits this machine.")
        lines += ["", "Why:", *(f"  {i}. {r}" for i, r in enumerate(result["reasons"], 1))]
        if result["alternatives"]:
            lines += ["", "Alternatives:"]
            lines += [
                f"  - {a['pname']} ({a['repository']} {a['branch']}, {a['status']}): {a['why']}"
                for a in result["alternatives"]
            ]
        if variant:
            lines += _commands_text(variant, answer)
    return "\n".join(lines).lstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------
# Answers as a query string (the wizard's URLs, its API link and CLI line)
# ---------------------------------------------------------------------------------------------


def answer_pairs(params: dict) -> list[tuple[str, str]]:
    """The answers given, as (field, value) in the steps' order. An empty value is kept where
    it answers an optional step ("library=" means: no constraints) or holds the place of a GPU
    in a list (names and compute capabilities pair up in order)."""
    pairs = []
    for name, fld in steps.FIELDS.items():
        values = params.get(name, []) if fld.public else []
        if not (fld.multi and any(values)):
            optional = not steps.STEP_OF[name].required and fld.widget != "hidden"
            values = [v for v in values if v or optional]
        pairs += [(name, v) for v in values]
    return pairs


def _runnable(cat: Catalogue, arch: str, features: frozenset) -> set[str]:
    return {i.slug for i in cat.isas_for(arch) if isa_features(i) <= features}


def isa_level(a: Answers, cat: Catalogue) -> list[str]:
    """The fewest ISAs whose answer implies every ISA the CPU runs (most covering first): the
    CPU's flags, written short ('avx512bf16' stands for AVX … AVX-512 VNNI on a Sapphire Rapids)."""
    runnable = _runnable(cat, a.arch, a.cpu.features)
    implies = {
        s: _runnable(cat, a.arch, claimed_cpu(cat, (s,), a.arch).features) & runnable | {s}
        for s in runnable
    }
    rank = {i.slug: i.rank for i in cat.isas}
    level, covered = [], set()
    while covered < runnable:
        best = max(runnable - covered, key=lambda s: (len(implies[s] - covered), rank[s]))
        level.append(best)
        covered |= implies[best]
    return level


def _optional_pairs(a: Answers, said: list[tuple[str, str]], given: dict) -> list:
    """Every optional step on the path that the pairs so far leave open, answered with what was
    given with the paste, else its first field's default ("library=": no constraints), so that
    the wizard shows the result."""
    pairs = []
    for step in steps.STEPS:
        if step.required or not steps.applies(step, a.values):
            continue
        if any(k in step.names for k, _ in said):
            continue
        if steps.answered(step, a.values) and not any(f.name in given for f in step.fields):
            continue  # answered by the paste itself (a GPU listed: has_gpu is yes)
        first = step.fields[0]
        pairs.append((first.name, given.get(first.name, first.default)))
    return pairs


def result_pairs(a: Answers, cat: Catalogue, given: dict) -> list[tuple[str, str]]:
    """What the engine derived from pasted output, as the wizard's query: OS, architecture, GPU
    models or compute capabilities (with counts), driver, ISA level, microarchitecture — never
    raw flag lists — and the optional steps (`given` with the paste, or their defaults). GPU
    names go in while the URL stays under MAX_RESULT_URL; the rest is short by construction
    (validated values, at most rules.MAX_GPU_MODELS models)."""
    order = {name: i for i, name in enumerate(steps.FIELDS)}
    fixed = [("os", a.os), ("arch", a.arch)]
    if a.os == "linux" and not a.gpus:
        fixed.append(("has_gpu", "no" if a.has_gpu == "no" else "unknown"))
    fixed += [("driver", a.driver), ("driver_cuda", a.driver_cuda)]
    fixed += [("isa", s) for s in isa_level(a, cat)]
    fixed += [("cpu", a.cpu.target)]
    fixed = [(k, v) for k, v in fixed if v]
    fixed += _optional_pairs(a, fixed, given)
    counts = (
        [("gpu_count", str(g.count)) for g in a.gpus] if any(g.count > 1 for g in a.gpus) else []
    )

    def build(named: set) -> list[tuple[str, str]]:
        names = (
            [("gpu", g.query if i in named else "") for i, g in enumerate(a.gpus)] if named else []
        )
        ccs = [("compute_cap", g.compute_capability) for g in a.gpus]
        return sorted(fixed + names + ccs + counts, key=lambda pair: order[pair[0]])

    named: set = set()
    for i, gpu in enumerate(a.gpus):
        if gpu.query and len(wizard_url(build(named | {i}))) <= MAX_RESULT_URL:
            named.add(i)
    return build(named)


def wizard_url(pairs: list[tuple[str, str]]) -> str:
    return reverse("catalog:wizard") + ("?" + urlencode(pairs) if pairs else "")


def _said(pairs) -> list[tuple[str, str]]:
    """The pairs that say something (an empty GPU list entry holds its place)."""
    return [(k, v) for k, v in pairs if v or steps.FIELDS[k].multi]


def api_url(pairs: list[tuple[str, str]]) -> str:
    return reverse("catalog:api-recommend") + "?" + urlencode(_said(pairs))


def cli_line(pairs: list[tuple[str, str]]) -> str:
    """The same question as a `which-variant` command."""
    options = [f"{steps.FIELDS[k].cli} {shlex.quote(v)}" for k, v in _said(pairs)]
    return " ".join(["python manage.py which-variant", *options])
