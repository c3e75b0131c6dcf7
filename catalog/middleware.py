"""Request limits enforced before a view (or Django's form parsing) reads anything.

`RequestBodyLimitMiddleware` refuses a body over `settings.MAX_REQUEST_BODY_BYTES`:
- with a Content-Length, from the header alone: nothing is read, so a 200 MB multipart upload
  costs nothing and never reaches a temporary file;
- without one (Transfer-Encoding: chunked, which gunicorn decodes), by reading at most one byte
  past the limit, counting as it goes. That read happens in `ChunkedBodyLimit`, a WSGI wrapper
  around the whole site (catalogue_site.wsgi), before Django builds its request: a body within
  the limit goes on as if it had come with a Content-Length (Django reads nothing of a body
  without one); one over the limit, or cut short, goes on empty with the refusal noted in the
  environ, which the middleware answers. A chunked body that reaches the middleware unread (a
  server that cannot end it, or no wrapper) is a 411.

It also answers Django's own limits (DATA_UPLOAD_MAX_NUMBER_FIELDS, …_NUMBER_FILES,
…_MEMORY_SIZE) and bodies Django cannot read (a multipart body without a usable boundary, a form
not in UTF-8, a body that ended early), raised when a view reads the form, in the same way: a
JSON error body under /api/, a plain-text page elsewhere. A chunked body whose connection ends
before its last chunk (gunicorn raises NoMoreData, an OSError) is a 400, not a 500.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError

API_PREFIX = "/api/"
READ_CHUNK = 64 * 1024
# The environ key where `ChunkedBodyLimit` leaves its refusal: "too-large" or "truncated".
BODY_REFUSAL = "catalog.body_refusal"
NO_LENGTH = "Send the request body with a Content-Length."


TRUNCATED = "The request body ended before its end (the connection closed mid-body)."
UNREADABLE = {
    MultiPartParserError: "The multipart body cannot be read: send a boundary of 1 to 70 "
    "characters in the Content-Type, and the parts it separates.",
    UnreadablePostError: TRUNCATED,
}


def limit_response(request: HttpRequest, status: int, message: str) -> HttpResponse:
    """The refusal: {"error": message} for the JSON API, the sentence as a plain page otherwise."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"error": message}, status=status)
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


def too_large_message(limit: int) -> str:
    return f"The request body is larger than {limit:,} bytes ({limit / 1024 / 1024:.1f} MB)."


def read_bounded(stream: io.RawIOBase, limit: int) -> bytes | None:
    """All of `stream`, or None as soon as more than `limit` bytes have come."""
    chunks, size = [], 0
    while True:
        chunk = stream.read(min(READ_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


class RequestBodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.limit = settings.MAX_REQUEST_BODY_BYTES

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = self.check_body(request)
        return refusal or self.get_response(request)

    def check_body(self, request: HttpRequest) -> HttpResponse | None:
        refusal = request.META.get(BODY_REFUSAL)
        if refusal == "too-large":
            return limit_response(request, 413, too_large_message(self.limit))
        if refusal == "truncated":
            return limit_response(request, 400, TRUNCATED)
        header = request.META.get("CONTENT_LENGTH", "")
        if header:
            if not (header.isascii() and header.isdigit()):
                return limit_response(request, 400, "The Content-Length header is not a number.")
            # Compared as text first: int() refuses strings of thousands of digits.
            if len(header.lstrip("0")) > len(str(self.limit)) or int(header) > self.limit:
                return limit_response(request, 413, too_large_message(self.limit))
            return None
        if request.META.get("HTTP_TRANSFER_ENCODING"):
            # A body without a length that ChunkedBodyLimit did not read: Django would see none.
            return limit_response(request, 411, NO_LENGTH)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestDataTooBig):
            size = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            return limit_response(request, 413, too_large_message(size))
        if isinstance(exception, TooManyFieldsSent):
            fields = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
            return limit_response(request, 400, f"The request has more than {fields:,} fields.")
        if isinstance(exception, TooManyFilesSent):
            files = settings.DATA_UPLOAD_MAX_NUMBER_FILES
            return limit_response(request, 400, f"The request has more than {files:,} files.")
        for kind, message in UNREADABLE.items():
            if isinstance(exception, kind):
                return limit_response(request, 400, message)
        if isinstance(exception, BadRequest):  # e.g. a form in another charset than UTF-8
            return limit_response(request, 400, str(exception)[:300])
        return None


def read_chunked_body(environ: dict[str, Any], limit: int) -> None:
    """Give a chunked body a Content-Length in `environ`, or note why it is refused.

    Only a server that ends the stream with the body (gunicorn sets wsgi.input_terminated) can be
    read to its end without waiting for the client; any other body without a length is left as
    it is (the middleware answers 411)."""
    if environ.get("CONTENT_LENGTH") or not environ.get("HTTP_TRANSFER_ENCODING"):
        return
    if not environ.get("wsgi.input_terminated"):
        return
    try:
        body = read_bounded(environ["wsgi.input"], limit)
    except (OSError, ValueError):  # gunicorn's NoMoreData, ChunkMissingTerminator, …
        environ[BODY_REFUSAL], body = "truncated", b""
    if body is None:
        environ[BODY_REFUSAL], body = "too-large", b""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))


class ChunkedBodyLimit:
    """WSGI wrapper: `read_chunked_body` on every request before `app` (Django) sees it."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        read_chunked_body(environ, settings.MAX_REQUEST_BODY_BYTES)
        return self.app(environ, start_response)
