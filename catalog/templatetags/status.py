"""`{{ variant.status|status_badge:variant.get_status_display }}`: a status as a badge.

A filter rather than an include because the matrix draws one per row or grid cell, hundreds
per page, and an include costs more than the rest of the row.
"""

from django import template
from django.template.defaultfilters import filesizeformat
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.filter
def status_badge(status: str, label: str = "") -> SafeString:
    """The status as text and colour (never colour alone); styles: .status-* in site.css."""
    return format_html('<span class="status status-{}">{}</span>', status, label or status)


@register.filter
def cached_badge(summary) -> SafeString:
    """`{{ variant.availability|cached_badge }}`: cached where (first cache by priority) and the
    download size, "built, not cached" or a dash; text, never colour alone."""
    if summary is None or not summary.built:
        return mark_safe("—")  # hundreds per page: the plain dash
    if not summary.cached:
        return mark_safe('<span class="muted">built, not cached</span>')
    first = summary.caches[0]
    size = f" · {filesizeformat(first.download_bytes)}" if first.download_bytes is not None else ""
    return format_html(
        '<span class="status status-cached" title="in {} binary cache(s)">cached · {}{}</span>',
        len(summary.caches),
        first.name,
        size,
    )
