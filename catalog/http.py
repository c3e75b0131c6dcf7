"""Request-body helpers shared by the JSON APIs: bounded work before any parsing."""

from __future__ import annotations

import json

# Deep enough for any real request, shallow enough that the code reading the result never
# recurses far.
MAX_JSON_DEPTH = 32
# Elements of one body, counted with C-speed string methods before json.loads (whose cost is
# per element: 700,000 empty arrays in 2 MB took 220 ms): far above any real request, which
# holds a few dozen, and low enough that any admitted body decodes in a few milliseconds.
MAX_JSON_STRINGS = 2_048
MAX_JSON_ITEMS = 2_048  # array items and object members (commas outside strings)
MAX_JSON_CONTAINERS = 512


class JsonBodyError(ValueError):
    """A body that is not acceptable JSON; the message is one sentence for the client."""


_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _nests_deeper(outside: str, limit: int) -> bool:
    """Whether the first 16 KB outside strings nest deeper than `limit`: innermost pairs are
    removed a level at a time (bytes.replace), at most `limit` times."""
    brackets = outside[: 16 * 1024].encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    brackets = brackets.replace(b"{", b"[").replace(b"}", b"]")
    for _ in range(limit):
        brackets = brackets.replace(b"[]", b"")
    return b"[]" in brackets or brackets.count(b"[") > limit


def shape_problem(text: str, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why the body has too many elements to decode, or None. Escapes are dropped first, so the
    quotes left delimit strings; what lies between pairs of them is outside every string."""
    plain = text.replace("\\\\", "").replace('\\"', "")
    quotes = plain.count('"')
    if quotes > 2 * MAX_JSON_STRINGS:
        return f"The JSON body holds more than {MAX_JSON_STRINGS:,} strings."
    outside = "".join(plain.split('"')[::2])
    if outside.count("[") + outside.count("{") > MAX_JSON_CONTAINERS:
        if _nests_deeper(outside, limit):
            return f"The JSON body nests deeper than {limit} levels."
        return f"The JSON body holds more than {MAX_JSON_CONTAINERS:,} arrays and objects."
    if outside.count(",") > MAX_JSON_ITEMS:
        return f"The JSON body holds more than {MAX_JSON_ITEMS:,} values."
    return None


def depth_exceeds(data, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether decoded JSON nests arrays/objects deeper than `limit`: an explicit stack, and a
    type test per value (C-speed json.loads has already read every byte)."""
    stack = [(data, 1)] if isinstance(data, (list, dict)) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if type(c) in (list, dict))
    return False


def load_json(body: bytes | str, limit: int = MAX_JSON_DEPTH):
    """Decode a JSON body, refusing non-UTF-8 text, too many elements (`shape_problem`) and
    nesting deeper than `limit`. The C decoder reads first (a body nested past Python's recursion
    limit raises RecursionError there, not a crash); the depth is then checked on the result,
    never by a Python loop over each byte."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError as exc:
        raise JsonBodyError("The body is not UTF-8 text.") from exc
    problem = shape_problem(text, limit)
    if problem:
        raise JsonBodyError(problem)
    deeper = JsonBodyError(f"The JSON body nests deeper than {limit} levels.")
    try:
        data = json.loads(text)
    except RecursionError:
        raise deeper from None
    except ValueError as exc:
        raise JsonBodyError(f"The body is not valid JSON: {exc}.") from exc
    if depth_exceeds(data, limit):
        raise deeper
    return data
