"""`{% selector_panel %}`: the one-screen selector wherever `catalog/_selector.html` is included.

A page whose view rendered the selection passes it as `selector_html` (the home page, which
reads the choices from its query string); any other page (the variant matrix) gets the selector
with nothing chosen, folded, its buttons leading to the home page."""

from django import template
from django.utils.safestring import mark_safe

from catalog.browse.views import select

register = template.Library()


@register.simple_tag(takes_context=True)
def selector_panel(context):
    given = context.get("selector_html")
    # Rendered by the template engine with autoescaping: safe to insert as it is.
    return mark_safe(given if given is not None else select.panel({}, embedded=True)[0])
