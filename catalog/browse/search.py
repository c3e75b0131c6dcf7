"""One search over the whole catalogue: GPU and CPU names, architectures, ISAs, branches, variants,
the guides' text and known error messages.

Plain Python, no Django. `build_index()` turns a catalogue snapshot and the guides into lookup
tables once per catalogue version (the caller caches it); `SearchIndex.search()` then does bounded
work per query: dictionary look-ups of the query's word n-grams, a typo-tolerant comparison
against the names only (a few hundred, never the variants), one pass over variant names, and an
inverted index over the guides' words.

Names are compared "compact": lower case, letters and digits only, the words nvidia-smi adds
dropped, and a letter O beside a digit read as zero — so "rtx3060", "RTX 3O60" and
"NVIDIA GeForce RTX 3060" are one key, and "h 100" is "h100".
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import archspec.cpu
from markdown.extensions.toc import slugify

from catalog import naming
from catalog.wizard import cpu_models, cpus, gpus
from catalog.wizard.snapshot import Catalogue

MAX_QUERY = 300  # characters: room for a pasted error line, little more
MAX_WORDS = 40
NGRAM = 4  # longest run of query words joined into one name ("geforce rtx 4090 ti")
FUZZY_WORDS = 6  # queries up to this long are compared with the names for typos
PER_KIND = {"variant": 8, "guide": 6}  # results shown per kind (names: all that match)
# Kinds in the order they are shown when scores tie; the best-scoring kind comes first.
KINDS = ("error", "gpu", "cpu", "architecture", "isa", "branch", "variant", "guide")
KIND_LABELS = {
    "error": "Error messages",
    "gpu": "GPUs",
    "cpu": "CPUs",
    "architecture": "GPU architectures",
    "isa": "CPU instruction sets",
    "branch": "Branches",
    "variant": "Variants",
    "guide": "Guides",
}
STOPWORDS = frozenset(
    "a an and are as at be by for from has have how i in is it its my of on or the this to was "
    "what when which with you your error".split()
)
APPLE_TARGETS = frozenset({"m1", "m2", "m3", "m4"})


@dataclass(frozen=True)
class ErrorRule:
    """A message people paste, the guide section that explains it and the wizard's first answers."""

    spellings: tuple[str, ...]  # compact fragments that identify the message
    title: str
    doc: str  # guide slug
    heading: str  # the start of the section's heading
    why: str
    wizard: tuple[tuple[str, str], ...] = ()


ERRORS: tuple[ErrorRule, ...] = (
    ErrorRule(
        ("nokernelimageisavailable", "nokernelimage"),
        "CUDA error: no kernel image is available for execution on the device",
        "troubleshooting",
        "`torch.cuda.is_available()` is False",
        "The build has no code for your GPU's architecture: install the variant built for its "
        "compute capability. The wizard finds it from the GPU's name.",
        (("os", "linux"), ("has_gpu", "yes")),
    ),
    ErrorRule(
        ("driverversionisinsufficient", "cudadriverversionisinsufficient"),
        "CUDA driver version is insufficient for CUDA runtime version",
        "troubleshooting",
        "`torch.cuda.is_available()` is False",
        "The NVIDIA driver is older than the build's CUDA needs: update it to the branch's "
        "minimum, or give the wizard your driver version to get a branch it runs.",
        (("os", "linux"), ("has_gpu", "yes")),
    ),
    ErrorRule(
        ("cudaisavailable", "cudaisavailablefalse"),
        "torch.cuda.is_available() is False",
        "troubleshooting",
        "`torch.cuda.is_available()` is False",
        "Check the driver, that the package is a CUDA variant, and that it is built for your GPU.",
        (("os", "linux"), ("has_gpu", "yes")),
    ),
    ErrorRule(
        ("illegalinstruction",),
        "Illegal instruction (core dumped)",
        "troubleshooting",
        "`Illegal instruction` on import",
        "The CPU lacks an instruction the variant's compiler flags allowed: install the variant "
        "of an ISA your CPU has. The wizard reads your CPU's flags or its model name.",
        (("os", "linux"),),
    ),
    ErrorRule(
        ("unsupportedgpuarchitecture", "unknownarchitecture"),
        "nvcc fatal: Unsupported gpu architecture",
        "troubleshooting",
        'Build fails with "unknown architecture"',
        "The CUDA or PyTorch version cannot target the requested SM: the variant sits on the "
        "wrong branch.",
    ),
    ErrorRule(
        ("cudanotfound",),
        'Build fails with "CUDA not found"',
        "troubleshooting",
        'Build fails with "CUDA not found"',
        "CUDA variants build on Linux only; on a Mac use the darwin-mps variant.",
    ),
    ErrorRule(
        ("mpsnotavailable", "mpsisavailable", "mpsbackend"),
        "MPS not available on Apple Silicon",
        "troubleshooting",
        "MPS not available",
        "macOS 12.3 or later and a native arm64 Python are needed.",
        (("os", "darwin"), ("arch", "aarch64")),
    ),
)


@dataclass(frozen=True)
class ArchitectureText:
    """What an architecture's page shows beyond the engine's snapshot."""

    sm: str
    label: str = ""  # "Ampere DC"
    models: str = ""  # "A100/A30"


@dataclass(frozen=True)
class GuideText:
    slug: str
    title: str
    body: str  # Markdown


@dataclass(frozen=True)
class Result:
    kind: str
    title: str
    url: str
    why: str
    score: float = 0.0

    def as_dict(self) -> dict:
        return {"kind": self.kind, "title": self.title, "url": self.url, "why": self.why}


@dataclass(frozen=True)
class _Name:
    """A named thing (GPU, CPU, architecture, ISA, branch) and how it is found."""

    kind: str
    title: str
    url: str
    why: str
    order: int = 0  # within a kind when scores tie (branch preference, SM number)


@dataclass(frozen=True)
class _Section:
    title: str
    url: str
    heading: str
    text: str  # plain words of the section, for the snippet
    packed: str = ""  # compact(text), for phrase matches


class SearchError(ValueError):
    """A query that cannot be searched: the sentence says why."""


# -- normalising ---------------------------------------------------------------------------------

_O_AS_ZERO = re.compile(r"(?<=\d)o|o(?=\d)")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9._+]*")


def compact(text: str) -> str:
    return _NON_ALNUM.sub("", _O_AS_ZERO.sub("0", (text or "").lower()))


def _gpu_key(spelling: str) -> str:
    return compact(gpus.normalise_gpu_name(spelling))


def _words(query: str) -> list[str]:
    """The query's words as names are matched: nvidia-smi's extra words dropped, O read as 0."""
    return [_O_AS_ZERO.sub("0", w) for w in gpus.normalise_gpu_name(query).split()]


def _ngrams(words: list[str]) -> list[tuple[str, int]]:
    """(compact run of 1..NGRAM consecutive words, number of words)."""
    out = []
    for i in range(len(words)):
        for n in range(1, min(NGRAM, len(words) - i) + 1):
            key = compact("".join(words[i : i + n]))
            if key:
                out.append((key, n))
    return out


def _digits(key: str) -> str:
    return "".join(c for c in key if c.isdigit())


def _distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a transposition counts once), or limit+1 beyond it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2, prev = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def check_query(query: str) -> str:
    """The query, trimmed; SearchError for one that is empty or too long to be a search."""
    text = " ".join((query or "").split())
    if not text:
        raise SearchError("Type what to search for: a GPU or CPU name, an error message, a branch.")
    if len(text) > MAX_QUERY:
        raise SearchError(f"Search with at most {MAX_QUERY} characters (this has {len(text)}).")
    if len(text.split()) > MAX_WORDS:
        raise SearchError(f"Search with at most {MAX_WORDS} words.")
    return text


def _wizard_url(params) -> str:
    return "/wizard/?" + urlencode(list(params))


# -- the index -----------------------------------------------------------------------------------


@dataclass
class SearchIndex:
    names: dict[str, list[_Name]] = field(default_factory=lambda: defaultdict(list))
    # (digits, length) -> keys: the only names a typo of a key can be (see _fuzzy)
    by_shape: dict[tuple[str, int], list[str]] = field(default_factory=lambda: defaultdict(list))
    gpu_titles: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (name, sm)
    cpu_results: dict[str, _Name] = field(default_factory=dict)  # archspec target -> result
    variants: list[tuple[str, _Name]] = field(default_factory=list)  # (pname, result)
    variant_names: dict[str, _Name] = field(default_factory=dict)
    sections: list[_Section] = field(default_factory=list)
    words: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    error_urls: dict[int, str] = field(default_factory=dict)

    def add(self, keys, entry: _Name) -> None:
        for key in {k for k in keys if k}:
            if entry not in self.names[key]:
                if not self.names[key]:
                    self.by_shape[(_digits(key), len(key))].append(key)
                self.names[key].append(entry)

    # -- searching -------------------------------------------------------------------------
    def search(self, query: str) -> list[Result]:
        """Results, best first, grouped by kind (the group of the best result first)."""
        text = check_query(query)
        scored: dict[tuple[str, str], Result] = {}

        def keep(entry: _Name, score: float) -> None:
            key = (entry.kind, entry.url)
            if key not in scored or scored[key].score < score:
                scored[key] = Result(entry.kind, entry.title, entry.url, entry.why, score)

        words = _words(text)
        gpu = self._names(text, words, keep)
        self._cpu_model(text, keep)
        self._errors(text, gpu, keep)
        self._variants(text, keep)
        self._guides(text, keep)
        return _grouped(scored.values())

    def _names(self, text: str, words: list[str], keep) -> str:
        """Scores the named things; returns the GPU name the query holds, if any."""
        whole = compact(" ".join(words))
        gpu = ""
        grams = _ngrams(words)
        for key, n in grams:
            for entry in self.names.get(key, ()):
                keep(entry, (100 if key == whole else 80 + n + min(len(key), 10)) - entry.order)
            if key in self.gpu_titles and len(key) > len(compact(gpu)):
                gpu = self.gpu_titles[key][0]
        if len(whole) >= 2:
            for key in self._prefixed(whole):
                for entry in self.names[key]:
                    keep(entry, 60 + 20 * len(whole) / len(key) - entry.order)
        # Typos are looked for in runs of one or two words (names are short) of a typed query;
        # a long one is a pasted message, copied rather than typed.
        typed = len(words) <= FUZZY_WORDS
        for key, _n in [g for g in grams if g[1] <= 2 and typed]:
            self._fuzzy(key, keep)
        return gpu

    def _prefixed(self, whole: str, limit: int = 50) -> list[str]:
        # Names are a few thousand at most: a scan is bounded and simpler than a trie.
        return [k for k in self.names if k.startswith(whole) and k != whole][:limit]

    def _fuzzy(self, key: str, keep) -> None:
        """Names one or two typing slips away (never a different number: 3060 is not 3070)."""
        if len(key) < 4 or key in self.names:
            return
        limit = 1 if len(key) < 9 else 2
        digits = _digits(key)
        nearby = range(len(key) - limit, len(key) + limit + 1)
        for candidate in (k for n in nearby for k in self.by_shape.get((digits, n), ())):
            distance = _distance(key, candidate, limit)
            if distance <= limit:
                for entry in self.names[candidate]:
                    keep(entry, 75 - 5 * distance - entry.order)

    def _cpu_model(self, text: str, keep) -> None:
        match = cpu_models.resolve_cpu_model(text)
        result = match and self.cpu_results.get(match.target)
        if result:
            note = f" {match.note}." if match.note else ""
            keep(_Name("cpu", f"{match.name} — {result.title}", result.url, result.why + note), 98)

    def _errors(self, text: str, gpu: str, keep) -> None:
        key = compact(text)
        for number, rule in enumerate(ERRORS):
            hit = any(s in key for s in rule.spellings) or (
                len(key) >= 10 and any(key in s for s in rule.spellings)
            )
            if not hit:
                continue
            params = list(rule.wizard) + ([("gpu", gpu)] if gpu and rule.wizard else [])
            keep(_Name("error", rule.title, self.error_urls[number], rule.why), 110)
            if params:
                title = f"Which build runs here? The wizard{' for ' + gpu if gpu else ''}"
                keep(
                    _Name("error", title, _wizard_url(params), "Answers prefilled from the error."),
                    109,
                )

    def _variants(self, text: str, keep) -> None:
        lowered = text.lower()
        exact = self.variant_names.get(lowered)
        if exact is not None:
            keep(exact, 100)
        terms = sorted(set(lowered.split()), key=len, reverse=True)
        # One pass with the longest word (the rarest in names), then the rest on what is left.
        first = [(p, e) for p, e in self.variants if terms[0] in p]
        shown = 0
        for pname, entry in first:
            if shown == PER_KIND["variant"]:
                break
            if pname != lowered and all(t in pname for t in terms[1:]):
                shown += 1
                keep(entry, 40 + (10 if pname.startswith(lowered.split()[0]) else 0))

    def _guides(self, text: str, keep) -> None:
        terms = [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS][:MAX_WORDS]
        terms = list(dict.fromkeys(t.strip("._+") for t in terms if len(t.strip("._+")) > 1))
        if not terms:
            return
        hits: dict[int, int] = defaultdict(int)
        for term in terms:
            for number in self.words.get(term, ()):
                hits[number] += 1
        needed = len(terms) if len(terms) <= 2 else -(-2 * len(terms) // 3)
        phrase = compact(text)
        ranked = []
        for number, count in hits.items():
            if count < needed:
                continue
            section = self.sections[number]
            score = 20 + 15 * count / len(terms)
            score += 10 if any(t in section.heading.lower() for t in terms) else 0
            score += 10 if len(phrase) >= 8 and phrase in section.packed else 0
            ranked.append((score, number))
        for score, number in sorted(ranked, reverse=True)[: PER_KIND["guide"]]:
            section = self.sections[number]
            keep(_Name("guide", section.title, section.url, _snippet(section.text, terms)), score)


def _grouped(results) -> list[Result]:
    ordered = sorted(results, key=lambda r: (-r.score, KINDS.index(r.kind), r.title))
    best: dict[str, int] = {}
    for position, result in enumerate(ordered):
        best.setdefault(result.kind, position)
    return sorted(ordered, key=lambda r: best[r.kind])


def grouped_by_kind(results: list[Result]) -> list[tuple[str, list[Result]]]:
    """(kind label, results) in the order `search` returned them."""
    groups: dict[str, list[Result]] = {}
    for result in results:
        groups.setdefault(result.kind, []).append(result)
    return [(KIND_LABELS[kind], items) for kind, items in groups.items()]


def _snippet(text: str, terms: list[str], width: int = 160) -> str:
    lowered = text.lower()
    positions = [p for p in (lowered.find(t) for t in terms) if p >= 0]
    start = max(0, min(positions, default=0) - 40)
    piece = text[start : start + width].strip()
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


# -- building -------------------------------------------------------------------------------------


def build_index(
    catalogue: Catalogue,
    architectures: list[ArchitectureText] = (),
    guides: list[GuideText] = (),
) -> SearchIndex:
    """The lookup tables for one catalogue version."""
    index = SearchIndex()
    counts = _variant_counts(catalogue)
    texts = {a.sm: a for a in architectures}
    _add_architectures(index, catalogue, texts, counts)
    _add_gpus(index, catalogue, counts)
    _add_isas(index, catalogue, counts)
    _add_cpus(index, catalogue, counts)
    _add_branches(index, catalogue, counts)
    for variant in catalogue.variants:
        url = f"/variants/{quote(variant.repository)}/{quote(variant.branch)}/{variant.pname}/"
        why = f"{variant.repository}/{variant.branch}, Python {variant.python_version}, "
        why += f"status {variant.status}"
        entry = _Name("variant", variant.pname, url, why)
        index.variants.append((variant.pname.lower(), entry))
        index.variant_names.setdefault(variant.pname.lower(), entry)
    _add_guides(index, guides)
    return index


def _variant_counts(catalogue: Catalogue) -> dict:
    counts: dict = defaultdict(int)
    for v in catalogue.variants:
        counts[("sm", v.sm)] += 1
        counts[("isa", v.isa)] += 1
        counts[("branch", v.repository, v.branch)] += 1
        counts[("platform", v.platform)] += 1
    return counts


def _plural(n: int, word: str = "variant") -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _add_architectures(index, catalogue, texts, counts) -> None:
    for arch in catalogue.architectures:
        text = texts.get(arch.sm, ArchitectureText(arch.sm))
        number = arch.sm.removeprefix("sm")
        title = f"{arch.sm.upper()} — {arch.name} (compute capability {arch.compute_capability})"
        why = f"{text.models or arch.name}: {_plural(counts[('sm', arch.sm)])}"
        entry = _Name("architecture", title, f"/architectures/{arch.sm}/", why, 0)
        family = arch.name.split(" (")[0]
        keys = [arch.sm, number, f"cc{number}", f"computecapability{number}", text.label]
        index.add([compact(k) for k in keys + [family, arch.name]], entry)


def _add_gpus(index, catalogue, counts) -> None:
    spellings: dict[str, list[str]] = defaultdict(list)
    sms: dict[str, str] = {}
    for model in catalogue.gpu_models:
        spellings[model.name] += [model.name, *model.aliases]
        sms[model.name] = model.sm
    known = {_gpu_key(s) for names in spellings.values() for s in names}
    for name, cc in gpus.UNBUILT_GPUS.items():
        if _gpu_key(name) not in known:
            display = name.removeprefix("GeForce ").removeprefix("Tesla ")
            spellings[display].append(name)
            sms[display] = naming.sm_from_compute_capability(cc)
    for name, names in spellings.items():
        entry = _gpu_entry(catalogue, name, sms[name], counts)
        keys = {_gpu_key(s) for s in names}
        index.add(keys, entry)
        for key in keys:
            index.gpu_titles.setdefault(key, (name, sms[name]))


def _gpu_entry(catalogue, name: str, sm: str, counts) -> _Name:
    arch = catalogue.architecture(sm)
    if arch is None:
        cc = naming.compute_capability_from_sm(sm)
        oldest = min(catalogue.architectures, key=lambda a: a.cc_key, default=None)
        why = f"No branch builds for compute capability {cc}"
        why += f" (the oldest built is {oldest.sm.upper()})." if oldest else "."
        title = f"{name} — {gpus.family_for_cc(cc)}, compute capability {cc}: no builds"
        return _Name("gpu", title, "/docs/gpu-architectures/", why)
    n = counts[("sm", sm)]
    title = f"{name} — {arch.name}, {sm.upper()}: {_plural(n)}"
    why = f"Compute capability {arch.compute_capability}. Which one for you? The wizard picks "
    why += "the branch, CPU ISA and Python."
    return _Name("gpu", title, _wizard_url([("gpu", name)]), why)


def _isa_has(isa, features: frozenset) -> bool:
    needed = {cpus.FEATURE_ALIASES.get(f, f) for f in isa.required_features}
    return bool(needed) and needed <= features


def _best_isa(catalogue, arch: str, features: frozenset):
    fitting = [i for i in catalogue.isas_for(arch) if _isa_has(i, features)]
    return max(fitting, key=lambda i: i.rank, default=None)


def _add_isas(index, catalogue, counts) -> None:
    for isa in catalogue.isas:
        why = f"{isa.hardware}: {_plural(counts[('isa', isa.slug)])}".lstrip(": ")
        entry = _Name("isa", f"{isa.label} ({isa.arch})", f"/isas/{isa.slug}/", why)
        index.add([compact(isa.slug), compact(isa.label)], entry)


def _add_cpus(index, catalogue, counts) -> None:
    for name, target in archspec.cpu.TARGETS.items():
        arch = target.family.name
        if arch not in ("x86_64", "aarch64") or target.vendor == "generic":
            continue
        entry = _cpu_entry(catalogue, name, arch, frozenset(target.features), counts)
        if entry is None:
            continue
        index.cpu_results[name] = entry
        label = cpus.label_of(name)
        short = re.sub(r"^(intel|amd|apple)\s+", "", label.split(" (")[0], flags=re.IGNORECASE)
        index.add({compact(name), compact(label.split(" (")[0]), compact(short)}, entry)


def _cpu_entry(catalogue, name: str, arch: str, features: frozenset, counts) -> _Name | None:
    label = cpus.label_of(name)
    if name in APPLE_TARGETS:
        n = counts[("platform", "aarch64-darwin")]
        title = f"{label} — Apple Silicon: the MPS build"
        why = f"Macs use the darwin-mps variant (no CUDA, no CPU ISA): {_plural(n)}."
        return _Name("cpu", title, _wizard_url([("os", "darwin"), ("arch", "aarch64")]), why)
    isa = _best_isa(catalogue, arch, features)
    if isa is None:
        title = f"{label} — no CPU ISA built here runs on it"
        why = f"{arch}: it lacks the flags of every ISA the branches build."
        return _Name("cpu", title, "/isas/", why)
    title = f"{label} — best ISA {isa.label}"
    why = f"{arch}: it has the flags of {isa.label}; {_plural(counts[('isa', isa.slug)])}."
    params = [("os", "linux"), ("arch", arch), ("cpu", name)]
    return _Name("cpu", title, _wizard_url(params), why)


def _add_branches(index, catalogue, counts) -> None:
    for branch in catalogue.branches:
        n = counts[("branch", branch.repository, branch.name)]
        title = f"{branch.repository}/{branch.name} — PyTorch {branch.pytorch_version}, "
        title += f"Python {branch.python_version}"
        why = (branch.purpose + " " if branch.purpose else "") + f"{_plural(n)}"
        why += ", the repository's default branch" if branch.is_default else ""
        url = f"/branches/{quote(branch.repository)}/{quote(branch.name)}/"
        entry = _Name("branch", title, url, why, branch.preference / 100)
        torch = naming.version_key(branch.pytorch_version)
        minor = ".".join(str(p) for p in torch[:2])
        keys = [
            branch.name,
            f"{branch.repository}/{branch.name}",
            branch.pytorch_version,
            minor,
            f"pytorch{minor}",
            f"torch{minor}",
            f"python{branch.python_version}",
            f"py{branch.python_version}",
            *(f"cuda{c}" for c in branch.cuda_versions),
            *((f"vllm{branch.vllm_version}",) if branch.vllm_version else ()),
        ]
        index.add([compact(k) for k in keys], entry)


def _sections(guide: GuideText) -> list[tuple[str, list[str]]]:
    """(heading, lines) of a guide, split at its headings (never at '#' lines in code blocks)."""
    out: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in guide.body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{2,4} ", line):
            out.append((line.lstrip("#").strip(), []))
        else:
            out[-1][1].append(line)
    return out


def _anchor(heading: str) -> str:
    """The id python-markdown's toc extension gives the heading (catalog/doc_render.py)."""
    plain = re.sub(r"`([^`]*)`", r"\1", heading)
    return slugify(plain.replace('"', ""), "-")


def _add_guides(index: SearchIndex, guides) -> None:
    for guide in guides:
        for heading, lines in _sections(guide):
            url = f"/docs/{guide.slug}/" + (f"#{_anchor(heading)}" if heading else "")
            title = guide.title + (f" › {heading.replace('`', '')}" if heading else "")
            plain = " ".join(" ".join(lines).replace("`", "").split())
            number = len(index.sections)
            index.sections.append(
                _Section(title, url, heading.replace("`", ""), plain, compact(plain))
            )
            for token in _TOKEN.findall((heading + " " + plain).lower()):
                index.words[token.strip("._+")].add(number)
    for number, rule in enumerate(ERRORS):
        guide = next((g for g in guides if g.slug == rule.doc), None)
        headings = [h for h, _lines in _sections(guide)] if guide else []
        heading = next((h for h in headings if h.startswith(rule.heading)), "")
        index.error_urls[number] = f"/docs/{rule.doc}/" + (
            f"#{_anchor(heading)}" if heading else ""
        )
