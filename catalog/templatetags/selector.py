"""`{% selector_panel %}`: the one-screen selector wherever `catalog/_selector.html` is included.

A page whose view computed the selection passes it as `selector`; any other page (the variant
matrix) gets the selector with nothing chosen, its buttons leading to the home page."""

from django import template

from catalog.views import select

register = template.Library()


@register.inclusion_tag("catalog/_selector_panel.html", takes_context=True)
def selector_panel(context):
    given = context.get("selector")
    return {"selector": given if given is not None else select.selection({}, embedded=True)}
