"""Request-body helpers shared by the JSON APIs: bounded work before any parsing."""

from __future__ import annotations

import json

# Deep enough for any real request, shallow enough that json.loads and the code reading the
# result never recurse far (Python's limit would turn a 2 KB body of brackets into a 500).
MAX_JSON_DEPTH = 32


class JsonBodyError(ValueError):
    """A body that is not acceptable JSON; the message is one sentence for the client."""


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays/objects nest deeper than `limit`, in one linear pass outside strings."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def load_json(body: bytes | str, limit: int = MAX_JSON_DEPTH):
    """Decode a JSON body, refusing non-UTF-8 text and nesting deeper than `limit`."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError as exc:
        raise JsonBodyError("The body is not UTF-8 text.") from exc
    if json_depth_exceeds(text, limit):
        raise JsonBodyError(f"The JSON body nests deeper than {limit} levels.")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise JsonBodyError(f"The body is not valid JSON: {exc}.") from exc
