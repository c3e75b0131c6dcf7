"""Build status: the CI write API and the README badges.

POST /api/builds
    Authorization: Bearer <token>          (an ApiToken, created in the admin)
    Content-Type: application/json
    {"repository": "build-pytorch", "branch": "main",
     "pname": "pytorch-python313-cuda12_8-sm90-avx512", "status": "built",
     "duration": 5400, "log_url": "https://…", "commit": "abc123…", "host": "builder-01",
     "started_at": "2026-01-01T10:00:00Z",
     "outputs": ["/nix/store/<32 base-32 chars>-python3.13-torch-2.9.1"],
     "system": "x86_64-linux", "nixpkgs_rev": "<git hash>",
     "nar_size": 2147483648, "closure_size": 6442450944,          (bytes)
     "flox_catalog": "myorg", "flox_package": "…", "flox_version": "2.9.1",
     "published_cache_url": "https://cache.example.org"}
                                                   (everything after status is optional)

    201 {"id": …, "variant": …, "status": …, "variant_status": …, "url": …}
    400 bad JSON or field · 401 no/unknown token · 403 revoked token or no permission
    404 unknown variant · 405 not POST · 413 body over 64 KiB · 415 not JSON

The view is CSRF-exempt because it is authenticated by the token in a header, never by a
cookie: a browser cannot be tricked into sending the header, so CSRF does not apply.

GET /variants/<repository>/<branch>/<pname>/badge.svg and /branches/<repository>/<branch>/badge.svg
    a shields-style SVG with the variant's status / the branch's built count.
"""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig, ValidationError
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from catalog import services
from catalog.http import JsonBodyError, load_json
from catalog.models import ApiToken, Branch, BuildRecord, Variant

MAX_BODY_BYTES = 64 * 1024
PERMISSION = "catalog.add_buildrecord"
STRING_FIELDS = {
    "repository": 40,
    "branch": 80,
    "pname": 120,
    "status": 20,
    "log_url": 200,
    "commit": 40,
    "host": 120,
    "started_at": 40,
    "system": 20,
    "nixpkgs_rev": 40,
    "flox_catalog": 80,
    "flox_package": 120,
    "flox_version": 80,
    "published_cache_url": 200,
}
SIZE_FIELDS = services.SIZE_FIELDS
REQUIRED = ("repository", "branch", "pname", "status")
ALLOWED_FIELDS = set(STRING_FIELDS) | set(SIZE_FIELDS) | {"duration", "duration_seconds", "outputs"}


class Refused(Exception):
    """A request the API answers with an error: the status, one sentence, extra JSON keys."""

    def __init__(self, status: int, message: str, **extra: object) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


def _error(status: int, message: str, **extra: object) -> JsonResponse:
    response = JsonResponse({"error": message, **extra}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


def _authenticate(request: HttpRequest) -> ApiToken:
    """The request's ApiToken; Refused 401/403 without a valid, permitted one."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, secret = header.partition(" ")
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret:
        raise Refused(401, "Send an API token: 'Authorization: Bearer <token>'.")
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=ApiToken.hash_secret(secret))
        .first()
    )
    if token is None:
        raise Refused(401, "The API token is not valid.")
    if token.revoked:
        raise Refused(403, "The API token has been revoked.")
    if not token.user.is_active or not token.user.has_perm(PERMISSION):
        raise Refused(403, "The token's user may not record builds.")
    return token


def _json_object(request: HttpRequest) -> dict:
    """The body as a JSON object: 415 unless declared JSON, 413 over MAX_BODY_BYTES, 400 when
    it is not UTF-8 JSON (nesting bounded by catalog.http), not an object."""
    if request.content_type != "application/json":
        raise Refused(415, "Send the build as JSON (Content-Type: application/json).")
    too_big = Refused(413, f"The body is larger than {MAX_BODY_BYTES} bytes.")
    # RequestBodyLimitMiddleware has refused a Content-Length that is not a number.
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY_BYTES:
        raise too_big
    try:
        body = request.body
    except RequestDataTooBig:
        raise too_big from None
    if len(body) > MAX_BODY_BYTES:
        raise too_big
    try:
        data = load_json(body)
    except JsonBodyError as exc:
        raise Refused(400, str(exc)) from None
    if not isinstance(data, dict):
        raise Refused(400, "The body must be a JSON object.")
    return data


def _string(data: dict, name: str, max_length: int) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Refused(400, f"{name} must be a string.", field=name)
    if len(value) > max_length or "\x00" in value:
        raise Refused(
            400, f"{name} must be at most {max_length} characters, without NUL.", field=name
        )
    return value


def _record_kwargs(data: dict) -> dict:
    """The record_build keyword arguments from the request's fields; Refused 400 if bad."""
    unknown = sorted(set(data) - ALLOWED_FIELDS)
    if unknown:
        raise Refused(
            400, f"Unknown field(s): {', '.join(unknown)}.", allowed=sorted(ALLOWED_FIELDS)
        )
    missing = [name for name in REQUIRED if not data.get(name)]
    if missing:
        raise Refused(400, f"Missing field(s): {', '.join(missing)}.")
    kwargs = {}
    for name, max_length in STRING_FIELDS.items():
        value = _string(data, name, max_length)
        if value is not None:
            kwargs[name] = value
    if "started_at" in kwargs:
        try:
            started = parse_datetime(kwargs["started_at"])
        except ValueError:
            started = None
        if started is None:
            raise Refused(400, "started_at must be an ISO 8601 date and time.", field="started_at")
        kwargs["started_at"] = started
    duration = data.get("duration", data.get("duration_seconds"))
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, int) or duration < 0:
            raise Refused(
                400, "duration must be a whole number of seconds, 0 or more.", field="duration"
            )
        kwargs["duration_seconds"] = duration
    kwargs.update(_sizes_and_outputs(data))
    return kwargs


def _sizes_and_outputs(data: dict) -> dict:
    """The byte sizes (whole numbers) and the output store paths (a list of strings)."""
    kwargs: dict = {}
    for name in SIZE_FIELDS:
        value = data.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise Refused(400, f"{name} must be a whole number of bytes.", field=name)
            kwargs[name] = value
    outputs = data.get("outputs")
    if outputs is not None:
        if (
            not isinstance(outputs, list)
            or len(outputs) > services.MAX_OUTPUTS
            or not all(isinstance(path, str) and len(path) <= 300 for path in outputs)
        ):
            raise Refused(
                400,
                f"outputs must be a list of at most {services.MAX_OUTPUTS} store paths.",
                field="outputs",
            )
        kwargs["outputs"] = outputs
    return kwargs


def _record(kwargs: dict) -> BuildRecord:
    """services.record_build, its refusals as Refused 404/400."""
    try:
        return services.record_build(**kwargs)
    except services.UnknownVariant as exc:
        raise Refused(404, str(exc)) from None
    except ValidationError as exc:
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"__all__": exc.messages}
        message = " ".join(m for messages in fields.values() for m in messages)
        raise Refused(400, message, fields=fields) from None


@csrf_exempt  # token-authenticated (header, not cookie): see the module docstring
def api_builds(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        response = _error(405, "Use POST to record a build.")
        response["Allow"] = "POST"
        return response
    try:
        token = _authenticate(request)
        record = _record(_record_kwargs(_json_object(request)))
    except Refused as refused:
        return _error(refused.status, refused.message, **refused.extra)
    ApiToken.objects.filter(pk=token.pk).update(last_used=timezone.now())
    variant = record.variant
    return JsonResponse(
        {
            "id": record.pk,
            "variant": variant.pname,
            "repository": variant.branch.repository,
            "branch": variant.branch.name,
            "status": record.status,
            "variant_status": variant.status,
            "started_at": record.started_at.isoformat(),
            "outputs": [output.store_path for output in record.outputs.all()],
            "url": request.build_absolute_uri(
                f"/variants/{variant.branch.repository}/{variant.branch.name}/{variant.pname}/"
            ),
        },
        status=201,
    )


# --- Badges ----------------------------------------------------------------------------------
COLOURS = {
    "published": "#2b7bb9",
    "built": "#3c9a3c",
    "building": "#c98a00",
    "failed": "#c8372d",
    "recipe": "#6b6b6b",
    "planned": "#9a9a9a",
}


def _text_width(text: str) -> int:
    # Verdana 11px averages about 6.8 px a character; good enough for a badge.
    return int(len(text) * 6.8) + 10


def _badge(label: str, message: str, colour: str) -> HttpResponse:
    label_w, message_w = _text_width(label), _text_width(message)
    width = label_w + message_w
    label, message = escape(label), escape(message)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{label}: {message}"><title>{label}: {message}</title>'
        f'<rect width="{label_w}" height="20" fill="#555"/>'
        f'<rect x="{label_w}" width="{message_w}" height="20" fill="{colour}"/>'
        f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" '
        f'font-size="11">'
        f'<text x="{label_w / 2}" y="14">{label}</text>'
        f'<text x="{label_w + message_w / 2}" y="14">{message}</text></g></svg>'
    )
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    # READMEs embed badges through image proxies: keep them fresh, but cheap to revalidate.
    response["Cache-Control"] = "public, max-age=60"
    return response


@require_safe
def variant_badge(request: HttpRequest, repository: str, branch: str, pname: str) -> HttpResponse:
    variant = get_object_or_404(
        Variant.objects.only("status"),
        branch__repository=repository,
        branch__name=branch,
        pname=pname,
    )
    return _badge("build", variant.status, COLOURS.get(variant.status, "#6b6b6b"))


@require_safe
def branch_badge(request: HttpRequest, repository: str, branch: str) -> HttpResponse:
    found = get_object_or_404(Branch, repository=repository, name=branch)
    counts = found.variants.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status__in=["built", "published"])),
        failed=Count("id", filter=Q(status="failed")),
        building=Count("id", filter=Q(status="building")),
    )
    if not counts["total"]:
        return _badge("builds", "no variants", COLOURS["planned"])
    message = f"{counts['done']}/{counts['total']} built"
    if counts["failed"]:
        message += f", {counts['failed']} failed"
        colour = COLOURS["failed"]
    elif counts["building"]:
        colour = COLOURS["building"]
    elif counts["done"] == counts["total"]:
        colour = COLOURS["built"]
    else:
        colour = COLOURS["recipe"]
    return _badge("builds", message, colour)
