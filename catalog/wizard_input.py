"""Input and output of the "which variant?" front ends: the web wizard, /api/recommend and
`which-variant` all go through here, so one spelling of a question means the same everywhere.

    params = {"os": ["linux"], "gpu": ["H100"], "nvidia_smi": [text], ...}   # lists of values
    parsed = parse(params, strict=True)      # -> Parsed(answers, sources); raises InputError
    rec = decide(parsed.answers)             # -> Recommendation; raises InputError on bad answers
    body = api_body(rec, parsed)             # the API's JSON body (and `which-variant --json`)

Public field names (API, URL query, CLI `--option`): os, arch, gpu (a name; repeat it for several
GPUs; `none` for no NVIDIA GPU), compute_cap, driver, cpu_flags (space or comma separated),
workload, repository, library, branch, python, pytorch, vllm, and the wizard's has_gpu, isa,
driver_cuda, cpu_vendor, cpu_model, cpu_parts. Pasted tool output: nvidia_smi, lscpu, cpuinfo,
uname, sysctl (and the wizard's free `paste`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import zip_longest

from django.urls import reverse

from catalog.recommend import detect_hardware, recommend, tree
from catalog.recommend.detect import MAX_BYTES

# public name -> engine answer key
FIELDS = {
    "os": "os",
    "arch": "arch",
    "has_gpu": "has_gpu",
    "gpu": "gpu",
    "compute_cap": "compute_capability",
    "driver": "driver_version",
    "driver_cuda": "driver_cuda",
    "cpu_flags": "cpu_flags",
    "isa": "isa",
    "cpu_vendor": "cpu_vendor",
    "cpu_model": "cpu_model",
    "cpu_parts": "cpu_parts",
    "workload": "workload",
    "library": "library",
    "repository": "repository",
    "branch": "branch",
    "python": "python",
    "pytorch": "pytorch",
    "vllm": "vllm",
}
ALIASES = {"compute_capability": "compute_cap", "driver_version": "driver"}
PUBLIC = {engine: public for public, engine in FIELDS.items()}
# Pasted tool output, in the order their facts are merged (the first to say a thing wins).
PASTES = {
    "uname": "uname",
    "sysctl": "sysctl",
    "lscpu": "lscpu",
    "cpuinfo": "/proc/cpuinfo",
    "nvidia_smi": "nvidia-smi",
    "paste": "the pasted text",
}
MULTI = {"gpu", "compute_cap", "cpu_parts", "cpu_flags"}  # may be given more than once
CONSTRAINTS = ("library", "repository", "branch", "python", "pytorch", "vllm")
MAX_VALUE = 200  # characters of one answer
MAX_FLAGS = 16_384  # characters of a CPU flag list
NO_GPU = {"none", "no", "-"}

# Which step (tree.STEPS id) a field belongs to: where the wizard shows its error.
FIELD_STEP = {
    "os": "os", "arch": "arch", "has_gpu": "gpu", "gpu": "gpu_model", "compute_cap": "gpu_model",
    "driver": "gpu_model", "driver_cuda": "gpu_model", "cpu_flags": "cpu", "isa": "cpu",
    "cpu_vendor": "cpu", "cpu_model": "cpu", "cpu_parts": "cpu", "workload": "workload",
    **{c: "constraints" for c in CONSTRAINTS},
}
# Public fields that answer each step (for "give ..." sentences and the wizard's forms).
STEP_FIELDS = {
    "os": ("os",),
    "arch": ("arch",),
    "gpu": ("has_gpu",),
    "gpu_model": ("gpu", "compute_cap", "driver", "driver_cuda"),
    "cpu": ("cpu_flags", "isa", "cpu_vendor", "cpu_model", "cpu_parts"),
    "workload": ("workload",),
    "constraints": CONSTRAINTS,
}
STEP_HINT = {
    "os": "os (linux or darwin), or paste uname",
    "arch": "arch (x86_64 or aarch64), or paste uname -m",
    "gpu": "gpu (a name, or none), or paste nvidia-smi",
    "gpu_model": "gpu or compute_cap",
    "cpu": "cpu_flags or isa, or paste lscpu or /proc/cpuinfo",
}


class InputError(ValueError):
    """Bad input, with a sentence for the user and the field it concerns (if one)."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass
class Parsed:
    answers: dict = field(default_factory=dict)  # engine answers
    sources: list = field(default_factory=list)  # tools recognised in the pasted texts
    params: dict = field(default_factory=dict)  # public name -> [values], as understood


# ---------------------------------------------------------------------------------------------
# Reading input
# ---------------------------------------------------------------------------------------------

def params_from_querydict(qd) -> dict:
    return {key: list(values) for key, values in qd.lists()}


def params_from_json(body: bytes) -> dict:
    """A JSON object of field -> string, number, boolean or list of those."""
    try:
        data = json.loads(body.decode("utf-8") if isinstance(body, bytes) else body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"The body is not valid JSON ({exc}).") from None
    if not isinstance(data, dict):
        raise InputError(f"The JSON body must be an object of field: value, not {type(data).__name__}.")
    out = {}
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        clean = []
        for v in values:
            if v is None:
                continue
            if isinstance(v, bool):
                clean.append("yes" if v else "no")
            elif isinstance(v, (int, float, str)):
                clean.append(str(v))
            else:
                raise InputError(f"Field {key!r} must be text, a number or a list of those.", key)
        out[str(key)] = clean
    return out


def _check_text(key: str, value, limit: int) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if "\x00" in value:
        raise InputError(f"Field {key!r} contains binary data (NUL characters).", key)
    value = value.strip()
    if len(value) > limit:
        raise InputError(f"Field {key!r} is {len(value)} characters long; at most {limit} are accepted.", key)
    return value


def parse(params: dict, strict: bool = True) -> Parsed:
    """Public fields and pasted texts -> engine answers. `strict` refuses unknown field names
    (the API and CLI); the wizard ignores them (e.g. its own `step`)."""
    parsed = Parsed()
    explicit: dict = {}
    for raw_key, values in params.items():
        key = ALIASES.get(raw_key, raw_key)
        if key in PASTES:
            continue
        if key not in FIELDS:
            if strict:
                known = ", ".join(list(FIELDS) + list(PASTES))
                raise InputError(f"Unknown field {raw_key!r}; the fields are: {known}.", raw_key)
            continue
        values = [_check_text(key, v, MAX_FLAGS if key == "cpu_flags" else MAX_VALUE) for v in values]
        parsed.params.setdefault(key, []).extend(values)
    for key, values in parsed.params.items():
        nonempty = [v for v in values if v]
        if key in CONSTRAINTS and not nonempty:
            explicit[FIELDS[key]] = ""  # present but empty: the constraints step was answered
            continue
        if key in ("gpu", "compute_cap"):
            continue
        if not nonempty:
            continue
        if key not in MULTI and len(set(nonempty)) > 1:
            raise InputError(f"Give one value for {key!r}, not {len(nonempty)} ({', '.join(nonempty[:3])}).", key)
        if key == "cpu_flags":
            explicit["cpu_flags"] = " ".join(v.replace(",", " ") for v in nonempty)
        elif key == "cpu_parts":
            explicit["cpu_parts"] = [p for v in nonempty for p in v.replace(",", " ").split()]
        else:
            explicit[FIELDS[key]] = nonempty[0]
    # GPUs: one name and/or compute capability, or several (repeated, paired in order).
    names = parsed.params.get("gpu", [])
    ccs = parsed.params.get("compute_cap", [])
    if len(names) == 1 and names[0].lower() in NO_GPU and not any(ccs):
        explicit["has_gpu"] = "no"
    elif len(names) > 1 or len(ccs) > 1:
        if names and ccs and len(names) != len(ccs) and min(len(names), len(ccs)) > 1:
            raise InputError(
                f"{len(names)} GPU names but {len(ccs)} compute capabilities: give them in pairs.", "compute_cap")
        if len(ccs) == 1 and len(names) > 1:
            ccs = ccs * len(names)
        if len(names) == 1 and len(ccs) > 1:
            names = names * len(ccs)
        gpus = [{"name": n or "", "compute_capability": c or ""} for n, c in zip_longest(names, ccs)]
        gpus = [g for g in gpus if g["name"] or g["compute_capability"]]
        if gpus:
            explicit["gpus"] = gpus
    else:
        if names and names[0]:
            explicit["gpu"] = names[0]
        if ccs and ccs[0]:
            explicit["compute_capability"] = ccs[0]

    detected = _detect_pastes(params, parsed)
    # What was said explicitly wins over what was detected.
    if any(k in explicit for k in ("gpu", "compute_capability", "gpus", "has_gpu")):
        for k in ("gpus", "has_gpu"):
            detected.pop(k, None)
    parsed.answers = {**detected, **explicit}
    return parsed


def _detect_pastes(params: dict, parsed: Parsed) -> dict:
    detected: dict = {}
    for key, label in PASTES.items():
        texts = [t for t in params.get(key, []) if t and (t.strip() if isinstance(t, str) else t.strip())]
        if not texts:
            continue
        if len(texts) > 1:
            raise InputError(f"Paste the {label} output once, not {len(texts)} times.", key)
        text = texts[0]
        size = len(text.encode("utf-8", errors="replace")) if isinstance(text, str) else len(text)
        if size > MAX_BYTES:
            raise InputError(
                f"The {label} output is {size // 1024} KB; at most 256 KB is accepted "
                "(paste one processor's block of /proc/cpuinfo, or lscpu instead).", key)
        facts = detect_hardware(text)
        if facts.errors:
            raise InputError(f"The {label} output could not be used: {' '.join(facts.errors)}", key)
        for source in facts.sources:
            if source not in parsed.sources:
                parsed.sources.append(source)
        for k, v in facts.answers().items():
            if k == "cpu_flags" and k in detected:
                detected[k] = sorted(set(detected[k]) | set(v))
            elif k == "has_gpu" and detected.get("gpus"):
                continue
            elif k == "gpus":
                detected[k] = v
                detected.pop("has_gpu", None)
            else:
                detected.setdefault(k, v)
        if key == "nvidia_smi" and "nvidia-smi" in facts.sources and not facts.gpus:
            detected.setdefault("has_gpu", "no")
    return detected


# ---------------------------------------------------------------------------------------------
# Deciding
# ---------------------------------------------------------------------------------------------

def error_field(message: str) -> str:
    """The public field an engine error sentence is about (for the wizard's forms)."""
    text = message.lower()
    for words, name in (
        (("operating system", "windows", "macos with an nvidia"), "os"),
        (("cpu architecture",), "arch"),
        (("'do you have an nvidia gpu?'", "'no nvidia gpu'"), "has_gpu"),
        (("driver version", "cuda version"), "driver"),
        (("compute capability", "unknown gpu", "gpus"), "gpu"),
        (("cpu flags", "cpu isa", " isa,", "isa,"), "cpu_flags"),
        (("workload",), "workload"),
        (("library",), "library"),
        (("repository", "does not build"), "repository"),
        (("no branch '",), "branch"),
        (("python",), "python"),
        (("pytorch",), "pytorch"),
        (("vllm",), "vllm"),
    ):
        if any(w in text for w in words):
            return name
    return ""


def decide(answers: dict, catalogue=None, partial: bool = False):
    """recommend() over the catalogue. Bad answers raise InputError; missing ones too, unless
    `partial` (the wizard asks for them next: the Recommendation's next_step says which)."""
    if catalogue is None:
        from catalog.selectors import recommend_catalogue

        catalogue = recommend_catalogue()
    rec = recommend(answers, catalogue)
    if rec.errors:
        if rec.next_step:
            if partial:
                return rec
            step = tree.STEP_BY_ID[rec.next_step]
            raise InputError(
                f"Not enough answers to decide: {step.question} Give {STEP_HINT.get(step.id, step.id)}.",
                STEP_FIELDS[step.id][0])
        message = " ".join(rec.errors)
        raise InputError(message, error_field(rec.errors[0]))
    return rec


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

def variant_url(repository: str, branch: str, pname: str) -> str:
    return reverse("catalog:variant", args=[repository, branch, pname])


def _variant(pick) -> dict | None:
    if pick is None:
        return None
    return {**pick.to_dict(), "url": variant_url(pick.repository, pick.branch, pick.pname)}


def _alternatives(rec) -> list:
    return [
        {"pname": a.pname, "repository": a.repository, "branch": a.branch, "why": a.why,
         "url": variant_url(a.repository, a.branch, a.pname)}
        for a in rec.alternatives
    ]


def api_body(rec, parsed: Parsed | None = None) -> dict:
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
            {"gpu": sub.gpu, "variant": _variant(sub.variant), "reasons": list(sub.reasons),
             "warnings": list(sub.warnings), "alternatives": _alternatives(sub)}
            for sub in rec.per_gpu
        ]
    return body


def results(body: dict) -> list[dict]:
    """The answers to show: the one result, or one per distinct GPU model when they differ."""
    if body["variant"] is None and body.get("per_gpu"):
        return body["per_gpu"]
    return [body]


def picks(body: dict) -> list[dict]:
    return [r["variant"] for r in results(body) if r.get("variant")]


def commands(variant: dict, org: str = "<your-org>") -> list[tuple[str, str, str]]:
    """(key, label, command) to build and install a variant, as on its detail page."""
    return [
        ("checkout", f"Check out the branch (in a clone of {variant['repository']})", f"git checkout {variant['branch']}"),
        ("build", "Build", f"flox build {variant['pname']}"),
        ("install", "Install (after flox publish)", f"flox install {org}/{variant['pname']}"),
    ]


def exit_code(body: dict) -> int:
    """0: a variant to use (for every GPU model); 1: no variant fits."""
    return 0 if picks(body) else 1


def format_text(body: dict, notes=()) -> str:
    """The human answer of `which-variant`."""
    lines = [f"Note: {n}" for n in notes]
    detected = body.get("detected", {})
    facts = []
    if detected.get("os"):
        facts.append(f"{detected['os']} {detected.get('arch', '')}".strip())
    cpu = detected.get("cpu") or {}
    if cpu.get("label") or cpu.get("model"):
        facts.append(f"CPU {cpu.get('label') or cpu.get('model')}")
    for gpu in detected.get("gpus", []):
        facts.append(f"GPU {gpu.get('name') or ''} (compute capability {gpu['compute_capability']}, {gpu['sm']})".replace("GPU  (", "GPU ("))
    if detected.get("driver_version"):
        facts.append(f"driver {detected['driver_version']}")
    if facts:
        lines.append("Detected: " + "; ".join(facts))
    many = len(results(body)) > 1
    if many:
        lines.append("")
        lines.extend(body["reasons"])
    for result in results(body):
        lines.append("")
        if many:
            lines.append(f"== For {result['gpu']} ==")
        variant = result["variant"]
        if variant:
            lines.append(f"Use: {variant['pname']}  ({variant['repository']} branch {variant['branch']})")
            lines.append(f"     {variant['url']}")
        else:
            lines.append("No variant fits this machine.")
        lines.append("")
        lines.append("Why:")
        lines.extend(f"  {i}. {r}" for i, r in enumerate(result["reasons"], 1))
        if result["warnings"]:
            lines.append("")
            lines.append("Warnings:")
            lines.extend(f"  ! {w}" for w in result["warnings"])
        if result["alternatives"]:
            lines.append("")
            lines.append("Alternatives:")
            for alt in result["alternatives"]:
                lines.append(f"  - {alt['pname']} ({alt['repository']} {alt['branch']}): {alt['why']}")
        if variant:
            lines.append("")
            lines.append("Commands:")
            for _key, label, command in commands(variant):
                lines.append(f"  {command:<60}  # {label}")
    return "\n".join(lines).lstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------
# The command line (`python manage.py which-variant`; the command module only wires this up)
# ---------------------------------------------------------------------------------------------

CLI_OPTIONS = ("os", "arch", "gpu", "compute_cap", "driver", "cpu_flags", "workload", "repository",
               "library", "branch", "python", "pytorch", "vllm", "isa", "cpu_vendor", "cpu_parts")
CLI_FILES = ("nvidia_smi", "lscpu", "cpuinfo", "uname", "sysctl")


def add_cli_arguments(parser):
    for name in CLI_OPTIONS:
        flag = "--" + name.replace("_", "-")
        if name in ("gpu", "compute_cap"):
            parser.add_argument(flag, dest=name, action="append", default=[],
                                help=f"{name} (repeat for several GPUs)" + ("; 'none' for no NVIDIA GPU" if name == "gpu" else ""))
        else:
            parser.add_argument(flag, dest=name)
    for name in CLI_FILES:
        parser.add_argument("--" + name.replace("_", "-"), dest=f"{name}_file", metavar="FILE",
                            help=f"a file holding the output of {PASTES[name]} ('-' for standard input)")
    parser.add_argument("--detect", action="store_true",
                        help="run nvidia-smi and read /proc/cpuinfo and uname on this machine")
    parser.add_argument("--save-detected", metavar="DIR", help="with --detect: keep the tool outputs read in DIR")
    parser.add_argument("--json", action="store_true", help="print the API's JSON answer")


def _read_file(name: str, path: str, stdin=None):
    import sys
    from pathlib import Path

    label = "--" + name.replace("_", "-")
    try:
        if path == "-":
            return (stdin or sys.stdin.buffer).read()
        return Path(path).read_bytes()
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"Cannot read {label} {path}: {reason}.", name) from None


def cli_params(options: dict, probe_result=None) -> dict:
    """CLI options (and a --detect probe) -> the same params the API takes."""
    params: dict = {}
    if probe_result is not None:
        for key, text in probe_result.texts.items():
            params[key] = [text]
        if probe_result.has_gpu == "no" and not options.get("gpu") and not options.get("compute_cap"):
            params["has_gpu"] = ["no"]
    for name in CLI_OPTIONS:
        value = options.get(name)
        if value in (None, [], ""):
            continue
        params[name] = list(value) if isinstance(value, list) else [value]
    for name in CLI_FILES:
        path = options.get(f"{name}_file")
        if path:
            params[name] = [_read_file(name, path)]
    return params


def run_cli(options: dict, stdout, stderr, probe=None) -> int:
    """The whole of `which-variant`: 0 a variant, 1 no variant fits, 2 invalid input."""
    notes = []
    probe_result = None
    try:
        if options.get("detect"):
            from catalog import host_probe

            probe_result = (probe or host_probe.probe)()
            notes = list(probe_result.notes)
            if options.get("save_detected"):
                try:
                    for path in host_probe.save(probe_result, options["save_detected"]):
                        notes.append(f"saved {path}")
                except OSError as exc:
                    raise InputError(f"Cannot write --save-detected {options['save_detected']}: {exc.strerror or exc}.") from None
        elif options.get("save_detected"):
            raise InputError("--save-detected needs --detect.")
        parsed = parse(cli_params(options, probe_result), strict=True)
        if not parsed.answers:
            raise InputError("Nothing to go on: give answers (e.g. --os linux --arch x86_64 --gpu H100), "
                             "tool output files (--nvidia-smi FILE --lscpu FILE), or --detect.")
        rec = decide(parsed.answers)
    except InputError as exc:
        for note in notes:
            stderr.write(f"Note: {note}\n")
        stderr.write(f"which-variant: {exc.message}\n")
        return 2
    body = api_body(rec, parsed)
    if options.get("json"):
        for note in notes:
            stderr.write(f"Note: {note}\n")
        stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        stdout.write(format_text(body, notes))
    return exit_code(body)
