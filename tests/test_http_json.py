import json

import pytest

from catalog.http import JsonBodyError, depth_exceeds, load_json


def test_reads_ordinary_json():
    assert load_json(b'{"gpu": ["H100"], "driver": "580"}') == {"gpu": ["H100"], "driver": "580"}


@pytest.mark.parametrize("depth", [33, 5000, 1_000_000])
def test_refuses_deep_nesting(depth):
    body = "[" * depth + "]" * depth
    with pytest.raises(JsonBodyError, match="deeper than 32"):
        load_json(body)
    assert load_json("[" * 32 + "]" * 32)


def test_brackets_inside_strings_do_not_count():
    assert not depth_exceeds(json.loads('{"q": "' + "[" * 100 + '"}'))


def test_refuses_non_utf8_and_invalid_json():
    with pytest.raises(JsonBodyError, match="UTF-8"):
        load_json(b"\xff\xfe")
    with pytest.raises(JsonBodyError, match="not valid JSON"):
        load_json(b"{")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[" + "[]," * 700_000 + "[]]", "more than 512 arrays and objects"),
        ("[" + '"",' * 700_000 + "1]", "more than 2,048 strings"),
        ("[" + "1," * 1_000_000 + "1]", "more than 2,048 values"),
    ],
    ids=["arrays", "strings", "numbers"],
)
def test_bodies_of_many_elements_are_refused_before_decoding(body, message):
    with pytest.raises(JsonBodyError, match=message):
        load_json(body)


def test_escaped_quotes_and_brackets_in_strings_do_not_count():
    text = 'a \\"quoted\\" [x] {y}, ' * 5_000
    assert load_json(json.dumps({"paste": text}))["paste"] == text
