"""Markdown → sanitised HTML for the guide pages.

python-markdown renders tables, fenced code (highlighted by Pygments into CSS classes, see
static/css/pygments.css) and heading anchors with a table of contents. Doc bodies are edited
by people, so the result goes through nh3: only the tags and attributes the rendering needs
survive — no script, no event handlers, no javascript: URLs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe

EXTENSIONS = ["tables", "fenced_code", "codehilite", "toc"]
EXTENSION_CONFIGS = {
    # css_class matches the Pygments stylesheet; no guessing, so unlabelled blocks stay plain.
    "codehilite": {"css_class": "highlight", "guess_lang": False},
    "toc": {"permalink": "#", "permalink_title": "Link to this section", "toc_depth": "2-4"},
}

ALLOWED_TAGS = nh3.ALLOWED_TAGS | {
    "pre",
    "code",
    "span",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "hr",
}
# Classes carry the highlighting and the permalink style; ids are the heading anchors.
ALLOWED_ATTRIBUTES = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    "a": {"href", "title", "class"},
    "span": {"class"},
    "div": {"class"},
    "pre": {"class"},
    "code": {"class"},
    "ul": {"class"},
    "th": {"class"},
    "td": {"class"},
    **{f"h{n}": {"id"} for n in range(1, 7)},
}
URL_SCHEMES = {"http", "https", "mailto"}


@dataclass(frozen=True)
class Rendered:
    html: SafeString
    toc: SafeString  # nested <ul> of the headings, empty when there are none
    has_toc: bool


def sanitise(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        # Drop these with their content instead of leaving their text on the page.
        clean_content_tags={"script", "style"},
    )


# The tables extension aligns columns with style attributes, which the Content-Security-Policy
# (style-src 'self') would block: turn them into classes (site.css) before sanitising.
_ALIGN_RE = re.compile(r'<(th|td) style="text-align: ?(left|right|center);?">')


def _align_classes(html: str) -> str:
    return _ALIGN_RE.sub(r'<\1 class="align-\2">', html)


def render(text: str) -> Rendered:
    converter = md.Markdown(
        extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS, output_format="html"
    )
    body = _align_classes(converter.convert(text or ""))
    toc_tokens = getattr(converter, "toc_tokens", [])
    toc = sanitise(converter.toc) if toc_tokens else ""
    return Rendered(html=mark_safe(sanitise(body)), toc=mark_safe(toc), has_toc=bool(toc_tokens))
