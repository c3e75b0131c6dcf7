"""Reading the input of the "which variant?" front ends — the web wizard, /api/recommend and
`which-variant` — into the engine's answers, with the same names and limits everywhere.

    params = read_request(request)           # the API: body and limits checked -> {name: [values]}
    parsed = parse(params, strict=True)      # -> Parsed(answers, sources, params); AnswerError
    rec = decide(parsed.answers)             # -> Recommendation; AnswerError on bad answers

Field names are the Step fields' (catalog.wizard.steps), plus the pasted tool outputs in
PASTES. Every error is a `catalog.wizard.AnswerError` with a sentence and the field it
concerns. Output (the API body, the CLI's text, the wizard's links) is catalog.wizard.output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, QueryDict

from catalog.http import JsonBodyError, load_json
from catalog.wizard import rules, steps
from catalog.wizard.detect import MAX_BYTES, MAX_LINES
from catalog.wizard.detect import detect as detect_hardware
from catalog.wizard.detect.facts import Facts
from catalog.wizard.engine import Recommendation, recommend
from catalog.wizard.readers import AnswerError
from catalog.wizard.snapshot import Catalogue

# Pasted tool output: field -> what it is called in sentences. The first to say a thing wins.
PASTES = {
    "uname": "uname",
    "sysctl": "sysctl",
    "lscpu": "lscpu",
    "cpuinfo": "/proc/cpuinfo",
    "nvidia_smi": "nvidia-smi",
    "paste": "the pasted text",
}
MAX_VALUES = 256  # values in one request, all fields together (a GPU name is one)
# Lines of all the pastes of one request together: parsing costs per line, and this keeps the
# worst request (six pastes at their limit) under 100 ms of CPU. A real machine's outputs (lscpu,
# nvidia-smi, -q of a few GPUs) take a few hundred.
MAX_REQUEST_LINES = 3_000
# Bytes of all the pastes together (each may hold MAX_BYTES): the host probe sends about 140 KB.
MAX_REQUEST_PASTE_BYTES = 384 * 1024
# Bytes of a POST body: a few pastes, even URL-encoded, plus the answers. Below Django's default
# (2.5 MB) so that this limit answers first, whatever the settings say.
MAX_BODY = 2 * 1024 * 1024
JSON_TYPE = "application/json"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
TOO_BIG = (
    f"The request is too large: at most {MAX_BODY // 1024:,} KB, and 256 KB of each tool "
    "output (nvidia-smi, lscpu, /proc/cpuinfo)."
)


@dataclass
class Parsed:
    answers: dict = field(default_factory=dict)  # the engine's answers (Step field names)
    sources: list = field(default_factory=list)  # tools recognised in the pasted texts
    params: dict = field(default_factory=dict)  # public field -> [values], as given


# ---------------------------------------------------------------------------------------------
# Requests (bounded before anything is read)
# ---------------------------------------------------------------------------------------------


def check_size(request: HttpRequest, limit: int = MAX_BODY) -> None:
    """Refuse a body over `limit` from its Content-Length, before a byte of it is read."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit():
        raise AnswerError(f"The Content-Length {length[:20]!r} is not a number of bytes.")
    if int(length) > limit:
        raise AnswerError(TOO_BIG)


def _count(params: dict) -> dict:
    total = sum(len(values) for values in params.values())
    if total > MAX_VALUES:
        raise AnswerError(f"{total:,} values were sent; at most {MAX_VALUES} are accepted.")
    return params


def params_from_querydict(qd: QueryDict) -> dict:
    return _count({key: list(values) for key, values in qd.lists()})


def params_from_json(body: bytes) -> dict:
    """A JSON object of field -> string, number, boolean or a list of those."""
    try:
        data = load_json(body)
    except JsonBodyError as exc:
        raise AnswerError(str(exc)) from None
    if not isinstance(data, dict):
        raise AnswerError(
            f"The JSON body must be an object of field: value, not {type(data).__name__}."
        )
    out = {}
    for key, value in data.items():
        clean = []
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, bool):
                clean.append("yes" if v else "no")
            elif isinstance(v, (int, float, str)):
                clean.append(str(v))
            elif v is not None:
                raise AnswerError(f"Field {key!r} must be text, a number or a list of those.", key)
        out[str(key)] = clean
    return _count(out)


def _query_count(raw: str) -> None:
    """Count a query string's fields without parsing it (Django's own limit may be higher)."""
    if raw.count("&") >= MAX_VALUES:
        raise AnswerError(
            f"More than {MAX_VALUES} values were sent; at most {MAX_VALUES} are accepted."
        )


def read_query(request: HttpRequest) -> dict:
    """The query string's fields (GET), within the limits."""
    _query_count(request.META.get("QUERY_STRING", ""))
    try:
        return params_from_querydict(request.GET)
    except TooManyFieldsSent:
        raise AnswerError(f"Too many fields; at most {MAX_VALUES} values are accepted.") from None


def read_form(request: HttpRequest) -> dict:
    """A POSTed form's fields (urlencoded or multipart; uploaded paste files are read as text),
    within the limits; the size is checked before the body is read."""
    check_size(request)
    try:
        params = {key: list(values) for key, values in request.POST.lists()}
        for key, files in request.FILES.lists():
            params.setdefault(key, []).extend(f.read(MAX_BYTES + 1) for f in files)
    except RequestDataTooBig:
        raise AnswerError(TOO_BIG) from None
    except (TooManyFieldsSent, TooManyFilesSent):
        raise AnswerError(f"Too many fields; at most {MAX_VALUES} values are accepted.") from None
    return _count(params)


def read_request(request: HttpRequest) -> dict:
    """The API's input: a query string (GET), a form or a JSON object (POST)."""
    if request.method != "POST":
        return read_query(request)
    if request.content_type == JSON_TYPE:
        check_size(request)
        try:
            return params_from_json(request.body)
        except RequestDataTooBig:
            raise AnswerError(TOO_BIG) from None
    if request.content_type in FORM_TYPES:
        return read_form(request)
    raise AnswerError(
        f"Unsupported content type {request.content_type or '(none)'!r}: send {JSON_TYPE}, a "
        "form, or use GET with a query string."
    )


# ---------------------------------------------------------------------------------------------
# Fields and pastes -> answers
# ---------------------------------------------------------------------------------------------


def _text(name: str, value, limit: int) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if "\x00" in value:
        raise AnswerError(f"Field {name!r} contains binary data (NUL characters).", name)
    value = value.strip()
    if len(value) > limit:
        raise AnswerError(
            f"Field {name!r} is {len(value):,} characters long; at most {limit} are accepted.", name
        )
    return value


def parse(params: dict, strict: bool = True) -> Parsed:
    """Public fields and pasted texts -> the engine's answers. `strict` refuses unknown field
    names (the API and the CLI); the wizard ignores them (e.g. its own `step`)."""
    parsed = Parsed()
    for key, values in params.items():
        name = steps.NAMES.get(key)
        if key in PASTES:
            continue
        if name is None:
            if strict:
                known = ", ".join([*(f.name for f in steps.FIELDS.values() if f.public), *PASTES])
                raise AnswerError(f"Unknown field {key!r}; the fields are: {known}.", key)
            continue
        limit = steps.FIELDS[name].max_length
        parsed.params.setdefault(name, []).extend(_text(name, v, limit) for v in values)
    gpus = len(parsed.params.get("gpu", [])) + len(parsed.params.get("compute_cap", []))
    if gpus > 2 * rules.MAX_GPUS:
        raise AnswerError(
            f"{gpus:,} GPU names and compute capabilities were given; at most "
            f"{rules.MAX_GPUS} GPUs are accepted in one request.",
            "gpu",
        )
    detected = _detect_pastes(params, parsed)
    # What was said explicitly replaces what was detected, a group of fields at a time (a GPU
    # answer replaces the detected GPUs; typed flags replace a tool's); an empty value says nothing.
    said = {steps.FIELDS[name].group or name for name, vs in parsed.params.items() if any(vs)}
    detected = {k: v for k, v in detected.items() if (steps.FIELDS[k].group or k) not in said}
    parsed.answers = {**detected, **{k: vs for k, vs in parsed.params.items() if k not in detected}}
    return parsed


def _lines(text) -> int:
    newline = b"\n" if isinstance(text, bytes) else "\n"
    return text.count(newline) + 1


def _check_budget(params: dict) -> None:
    """Refuse pastes of more lines or bytes together than one request may parse, before any is
    parsed (string methods only)."""
    texts = [t for key in PASTES for t in params.get(key, [])[:1] if t]
    size = sum(len(t) for t in texts)  # characters: at most the bytes
    if size > MAX_REQUEST_PASTE_BYTES:
        raise AnswerError(
            f"The pasted outputs are {size:,} characters together; at most "
            f"{MAX_REQUEST_PASTE_BYTES // 1024:,} KB are read in one request. Paste only the "
            "tool output: lscpu or one processor's block of /proc/cpuinfo, and nvidia-smi.",
            next(key for key in PASTES if params.get(key)),
        )
    total = sum(_lines(t) for t in texts)
    if total > MAX_REQUEST_LINES:
        raise AnswerError(
            f"The pasted outputs have {total:,} lines together; at most {MAX_REQUEST_LINES:,} "
            f"are read in one request (and {MAX_LINES:,} in one paste). Paste only the tool "
            "output: lscpu or one processor's block of /proc/cpuinfo, and nvidia-smi.",
            next(key for key in PASTES if params.get(key)),
        )


def _detect_pastes(params: dict, parsed: Parsed) -> dict:
    _check_budget(params)
    detected: dict = {}
    for key, label in PASTES.items():
        facts = _paste_facts(params, key, label)
        if facts is None:
            continue
        parsed.sources += [s for s in facts.sources if s not in parsed.sources]
        _merge_found(detected, facts.answers())
    return detected


def _paste_facts(params: dict, key: str, label: str) -> Facts | None:
    """What one paste field's tool output says; None when nothing was pasted there, an
    AnswerError when it was pasted twice, is too long, or is not usable."""
    texts = [t for t in params.get(key, []) if t and t.strip()]
    if not texts:
        return None
    if len(texts) > 1:
        raise AnswerError(f"Paste the {label} output once, not {len(texts)} times.", key)
    text = texts[0]
    size = len(text.encode("utf-8", errors="replace")) if isinstance(text, str) else len(text)
    if size > MAX_BYTES:
        raise AnswerError(
            f"The {label} output is too long: at most 256 KB is accepted (paste one "
            "processor's block of /proc/cpuinfo, or lscpu instead).",
            key,
        )
    facts = detect_hardware(text)
    if facts.errors:
        raise AnswerError(f"The {label} output could not be used: {' '.join(facts.errors)}", key)
    if len(facts.gpus) > rules.MAX_GPUS:
        raise AnswerError(
            f"The {label} output lists {len(facts.gpus):,} GPUs; at most "
            f"{rules.MAX_GPUS} are accepted in one request.",
            key,
        )
    return facts


def _merge_found(detected: dict, found: dict) -> None:
    """Add one paste's answers to those of the pastes before it: the GPUs of the last paste that
    lists any, the union of the CPU features, otherwise the first paste to say a thing."""
    if "gpu" in found:
        for k in ("gpu", "compute_cap", "has_gpu"):
            detected.pop(k, None)
    if "cpu_features" in found and "cpu_features" in detected:
        found["cpu_features"] = sorted(set(detected["cpu_features"]) | set(found["cpu_features"]))
        detected.pop("cpu_features")
    for k, v in found.items():
        if k == "has_gpu" and "gpu" in detected:
            continue
        detected.setdefault(k, v)


# ---------------------------------------------------------------------------------------------
# Deciding
# ---------------------------------------------------------------------------------------------


def decide(
    answers: dict, catalogue: Catalogue | None = None, partial: bool = False
) -> Recommendation:
    """recommend() over the catalogue. Bad answers raise AnswerError (the first one's field);
    missing ones too, unless `partial` (the wizard asks for them next: the Recommendation's
    next_step says which)."""
    if catalogue is None:
        from catalog.queries import recommend_catalogue

        catalogue = recommend_catalogue()
    rec = recommend(answers, catalogue)
    if rec.errors:
        if rec.next_step:
            if partial:
                return rec
            step = steps.STEP_BY_ID[rec.next_step]
            raise AnswerError(
                f"Not enough answers to decide: {step.question} Give {step.give}.",
                rec.errors[0].field,
            )
        raise AnswerError(" ".join(e.message for e in rec.errors), rec.errors[0].field)
    return rec
