"""Nix text as highlighted HTML in one linear pass, with Pygments' CSS classes
(static/css/pygments.css), for the variant page.

Pygments' own Nix lexer rescans the rest of a dotted run (`x.a.a.a…`) at every dot: 8,000
segments took 5.4 s. Here every token pattern either consumes what it scanned or is bounded, and
an unterminated string or comment runs to the end of the text instead of failing (and being
retried at the next quote), and a run of uncoloured text is one token, so the work grows linearly
with the text. Past MAX_HIGHLIGHT characters the text is
shown plain, escaped.
"""

from __future__ import annotations

import html
import re

MAX_HIGHLIGHT = 16 * 1024  # the import's limit (catalog/recipes/nix/read.py)
KEYWORDS = frozenset({"let", "in", "with", "rec", "inherit", "if", "then", "else", "assert", "or"})
CONSTANTS = frozenset({"true", "false", "null"})
BUILTINS = frozenset({"import", "builtins", "throw", "abort", "derivation", "map", "toString"})
_WORD = "|".join(sorted(KEYWORDS | CONSTANTS | BUILTINS))

# Names, numbers, operators and brackets are left uncoloured (as Pygments' default style shows
# most of them), so a run of them is one token: the cost per token is what counts.
_TOKEN = re.compile(
    rf"""
    (?P<c1>\#[^\n]*)
  | (?P<cm>/\*.*?(?:\*/|\Z))
  | (?P<s2>"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z))
  | (?P<si>''[^']*(?:(?:'(?!')|''['$]|''\\.)[^']*)*(?:''|\Z))
  | (?P<l>(?:\.{{1,2}}|~|[\w+-][\w.+-]{{0,63}})?/[\w.+-][\w.+/-]*|<[\w.+/-]{{1,256}}>)
  | (?P<x>(?:(?!(?:{_WORD})(?![\w'-]))[^\W\d][\w'-]*|[\s\d.=+*!?@:;,&|(){{}}\[\]$>-])+)
  | (?P<n>[^\W\d][\w'-]*)
    """,
    re.VERBOSE | re.DOTALL,
)
CLASSES = {"c1": "c1", "cm": "cm", "s2": "s2", "si": "s", "l": "l"}


def _name_class(word: str) -> str:
    if word in KEYWORDS:
        return "k"
    if word in CONSTANTS:
        return "kc"
    return "nb" if word in BUILTINS else ""


def highlight_nix(text: str) -> str:
    """`text` as `<div class="highlight"><pre>…</pre></div>`; plain past MAX_HIGHLIGHT."""
    if len(text) > MAX_HIGHLIGHT:
        return f'<div class="highlight"><pre>{html.escape(text)}</pre></div>'
    out = []
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() > pos:  # a character no pattern takes
            out.append(html.escape(text[pos : match.start()]))
        kind, token = match.lastgroup, match.group()
        pos = match.end()
        css = _name_class(token) if kind == "n" else CLASSES.get(kind or "", "")
        escaped = html.escape(token, quote=False)
        out.append(f'<span class="{css}">{escaped}</span>' if css else escaped)
    out.append(html.escape(text[pos:], quote=False))
    return f'<div class="highlight"><pre>{"".join(out)}</pre></div>'
