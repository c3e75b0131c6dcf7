import pytest

from catalog.http import JsonBodyError, json_depth_exceeds, load_json


def test_reads_ordinary_json():
    assert load_json(b'{"gpu": ["H100"], "driver": "580"}') == {"gpu": ["H100"], "driver": "580"}


def test_refuses_deep_nesting_before_parsing():
    body = "[" * 5000 + "]" * 5000
    assert json_depth_exceeds(body)
    with pytest.raises(JsonBodyError, match="deeper than"):
        load_json(body)


def test_brackets_inside_strings_do_not_count():
    assert not json_depth_exceeds('{"q": "' + "[" * 100 + '"}')


def test_refuses_non_utf8_and_invalid_json():
    with pytest.raises(JsonBodyError, match="UTF-8"):
        load_json(b"\xff\xfe")
    with pytest.raises(JsonBodyError, match="not valid JSON"):
        load_json(b"{")
