"""A test client whose requests pass through the site's WSGI wrapper, as gunicorn's do.

Django's test client calls Django's handler directly, past `catalogue_site.wsgi`; a chunked body
must first meet `ChunkedBodyLimit` (which reads and bounds it) to be seen the way a server
hands it over."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.test import Client
from django.test.client import ClientHandler

from catalog.middleware import read_chunked_body


class WrappedClientHandler(ClientHandler):
    def __call__(self, environ: dict[str, Any]) -> Any:
        read_chunked_body(environ, settings.MAX_REQUEST_BODY_BYTES)
        return super().__call__(environ)


class SiteClient(Client):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handler = WrappedClientHandler(kwargs.get("enforce_csrf_checks", False))
