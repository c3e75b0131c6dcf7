"""`{{ variant.status|status_badge:variant.get_status_display }}`: a status as a badge.

A filter rather than an include because the matrix draws one per row or grid cell, hundreds
per page, and an include costs more than the rest of the row.
"""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@register.filter
def status_badge(status: str, label: str = "") -> SafeString:
    """The status as text and colour (never colour alone); styles: .status-* in site.css."""
    return format_html('<span class="status status-{}">{}</span>', status, label or status)
