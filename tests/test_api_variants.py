"""/api/variants: the filtered set as JSON, 400 with reasons, ETags."""

import csv
import io
import json

import pytest
from django.core.cache import cache

from catalog.models import Variant

pytestmark = pytest.mark.django_db

EXPORT_FIELDS = {
    "pname",
    "repository",
    "branch",
    "library",
    "backend",
    "gpu",
    "isa",
    "cuda",
    "python",
    "platform",
    "status",
    "url",
}
# The paged JSON adds built, published, cached (catalog.availability.Summary.as_json); the
# streamed exports (CSV, JSONL) leave them out.
FIELDS = EXPORT_FIELDS | {
    "built",
    "built_at",
    "published",
    "cached",
    "caches",
    "download_bytes",
    "nar_bytes",
    "closure_bytes",
}


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def test_result_shape_and_absolute_detail_url(client):
    response = client.get("/api/variants?branch=main&repository=build-pytorch&gpu=sm90&isa=avx512")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    data = response.json()
    assert data["count"] == 1
    [record] = data["results"]
    assert set(record) == FIELDS
    assert record == {
        "pname": "pytorch-python313-cuda12_8-sm90-avx512",
        "repository": "build-pytorch",
        "branch": "main",
        "library": "pytorch",
        "backend": "cuda",
        "gpu": "sm90",
        "isa": "avx512",
        "cuda": "12.8",
        "python": "3.13",
        "platform": "x86_64-linux",
        "status": "recipe",
        "url": "http://testserver/variants/build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512/",
        "built": False,
        "built_at": None,
        "published": {"flox": None, "binary_cache": None},
        "cached": False,
        "caches": [],
        "download_bytes": None,
        "nar_bytes": None,
        "closure_bytes": None,
    }


def test_detail_url_opens_the_variant(client):
    record = client.get("/api/variants?backend=mps&branch=main").json()["results"][0]
    page = client.get(record["url"].removeprefix("http://testserver"))
    assert page.status_code == 200
    assert record["pname"] in page.content.decode()


def test_cpu_variant_has_no_gpu_or_cuda(client):
    record = client.get("/api/variants?q=pytorch-python313-cpu-avx2&branch=main").json()["results"][
        0
    ]
    assert (record["gpu"], record["cuda"], record["isa"]) == (None, None, "avx2")


@pytest.mark.parametrize(
    "query, field",
    [
        ("gpu=sm999", "gpu"),
        ("python=abc", "python"),
        ("status=done", "status"),
        ("sort=bogus", "sort"),
        ("branch=nope", "branch"),
        ("cuda=11.0", "cuda"),
        ("library=jax", "library"),
    ],
)
def test_invalid_values_answer_400_with_the_field(client, query, field):
    response = client.get(f"/api/variants?{query}")
    assert response.status_code == 400
    body = response.json()
    assert field in body["error"]
    assert list(body["fields"]) == [field]
    assert body["fields"][field][0].startswith("Select a valid choice.")


def test_several_invalid_fields_are_all_reported(client):
    body = client.get("/api/variants?gpu=sm999&python=abc&gpu=sm90").json()
    assert set(body["fields"]) == {"gpu", "python"}


def test_repeat_request_is_answered_304(client):
    first = client.get("/api/variants?gpu=sm90")
    tag = first["ETag"]
    assert client.get("/api/variants?gpu=sm90", HTTP_IF_NONE_MATCH=tag).status_code == 304
    assert client.get("/api/variants?gpu=sm89", HTTP_IF_NONE_MATCH=tag).status_code == 200


def test_a_write_changes_the_answer_and_its_etag(client):
    first = client.get("/api/variants?status=failed")
    assert first.json()["count"] == 0
    variant = Variant.objects.get(
        branch__repository="build-pytorch", branch__name="main", pname="pytorch-python313-cpu-avx2"
    )
    variant.status = "failed"
    variant.save()
    second = client.get("/api/variants?status=failed", HTTP_IF_NONE_MATCH=first["ETag"])
    assert second.status_code == 200
    assert [r["pname"] for r in second.json()["results"]] == ["pytorch-python313-cpu-avx2"]
    assert second["ETag"] != first["ETag"]


@pytest.mark.parametrize(
    "q, message",
    [
        ("x" * 101, "at most 100 characters"),
        ("a b c d e f g h i", "at most 8 words"),
        ("a\x00b", "Null characters"),
    ],
)
def test_unusable_search_text_is_400_with_a_message(client, q, message):
    response = client.get("/api/variants", {"q": q})
    assert response.status_code == 400
    assert message in response.json()["fields"]["q"][0]


def test_only_get_and_head_are_allowed(client):
    assert client.post("/api/variants").status_code == 405
    assert client.head("/api/variants?gpu=sm90").status_code == 200


def test_answers_come_a_page_at_a_time_with_a_next_link(client):
    first = client.get("/api/variants?repository=build-pytorch&page_size=40").json()
    total = Variant.objects.filter(branch__repository="build-pytorch").count()
    assert first["count"] == total > 80
    assert len(first["results"]) == 40
    assert "page_size=40" in first["next"] and "repository=build-pytorch" in first["next"]
    seen = [r["pname"] + r["branch"] for r in first["results"]]
    data = first
    while data["next"]:
        data = client.get(data["next"].removeprefix("http://testserver")).json()
        seen += [r["pname"] + r["branch"] for r in data["results"]]
    assert len(seen) == len(set(seen)) == total


def test_default_page_is_one_hundred_variants(client):
    data = client.get("/api/variants").json()
    assert data["count"] == Variant.objects.count()
    assert len(data["results"]) == 100
    assert data["next"].startswith("http://testserver/api/variants?cursor=")


@pytest.mark.parametrize(
    "query, message",
    [
        ("cursor=bogus", "cursor"),
        ("cursor=" + "A" * 40, "cursor"),
        ("page_size=0", "page_size"),
        ("page_size=5000", "page_size"),
        ("page_size=ten", "page_size"),
        ("format=xml", "Format must be one of json, jsonl, csv"),
    ],
)
def test_bad_paging_or_format_is_400(client, query, message):
    response = client.get(f"/api/variants?{query}")
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_jsonl_export_streams_every_match(client):
    response = client.get("/api/variants?format=jsonl&backend=cuda")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson"
    lines = b"".join(response.streaming_content).decode().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == Variant.objects.filter(backend="cuda").count()
    assert {r["backend"] for r in records} == {"cuda"}
    assert set(records[0]) == EXPORT_FIELDS


def test_csv_export_streams_every_match_with_a_header(client):
    response = client.get("/api/variants?format=csv")
    assert response.streaming
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == Variant.objects.count()
    assert set(rows[0]) == EXPORT_FIELDS
    assert response["Content-Disposition"] == 'attachment; filename="variants.csv"'
