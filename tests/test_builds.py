"""Build status: record-build, POST /api/builds with tokens, badges, concurrency."""

import json
import threading
from io import StringIO

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command
from django.db import connection, connections

from catalog import services
from catalog.models import ApiToken, BuildRecord, Variant

REPO, BRANCH, PNAME = "build-pytorch", "main", "pytorch-python313-cpu-avx2"
URL = "/api/builds"


def variant():
    return Variant.objects.get(branch__repository=REPO, branch__name=BRANCH, pname=PNAME)


def body(**overrides):
    data = {"repository": REPO, "branch": BRANCH, "pname": PNAME, "status": "built"}
    data.update(overrides)
    return json.dumps(data)


@pytest.fixture
def ci_user(db):
    user = User.objects.create_user("ci", password="x")
    user.user_permissions.add(Permission.objects.get(codename="add_buildrecord"))
    return user


@pytest.fixture
def secret(ci_user):
    _, secret = ApiToken.issue(ci_user, "CI")
    return secret


def post(client, data, secret=None, content_type="application/json", **headers):
    if secret is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    return client.post(URL, data=data, content_type=content_type, **headers)


# --- the service and the command -------------------------------------------------------------


@pytest.mark.django_db
def test_record_build_adds_a_record_and_sets_the_status():
    record = services.record_build(
        repository=REPO,
        branch=BRANCH,
        pname=PNAME,
        status="failed",
        duration_seconds=12,
        commit="abc123",
        host="builder-01",
        log_url="https://ci.example.org/1",
    )
    assert record.variant == variant()
    assert variant().status == "failed"
    assert variant().builds.get().host == "builder-01"


@pytest.mark.django_db
def test_a_successful_rebuild_keeps_a_published_variant_published():
    Variant.objects.filter(pk=variant().pk).update(status="published")
    services.record_build(repository=REPO, branch=BRANCH, pname=PNAME, status="built")
    assert variant().status == "published"
    assert variant().builds.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "overrides",
    [
        {"status": "published"},
        {"duration_seconds": -1},
        {"commit": "not-a-sha"},
        {"log_url": "javascript:alert(1)"},
    ],
)
def test_record_build_refuses_bad_input_and_writes_nothing(overrides):
    before = (variant().status, BuildRecord.objects.count())
    kwargs = {"repository": REPO, "branch": BRANCH, "pname": PNAME, "status": "built", **overrides}
    with pytest.raises(services.ValidationError):
        services.record_build(**kwargs)
    assert (variant().status, BuildRecord.objects.count()) == before


@pytest.mark.django_db
def test_record_build_command_records_a_build():
    out = StringIO()
    call_command(
        "record-build",
        PNAME,
        "--repository",
        REPO,
        "--branch",
        BRANCH,
        "--status",
        "building",
        "--duration",
        "60",
        "--commit",
        "deadbeef",
        "--host",
        "b1",
        "--log-url",
        "https://ci.example.org/2",
        stdout=out,
    )
    assert "is building" in out.getvalue()
    assert variant().status == "building"
    assert variant().builds.get().duration_seconds == 60


@pytest.mark.django_db
def test_record_build_command_names_an_unknown_variant():
    with pytest.raises(CommandError, match="No variant 'nope'.*Nothing was recorded"):
        call_command(
            "record-build", "nope", "--repository", REPO, "--branch", BRANCH, "--status", "built"
        )
    assert BuildRecord.objects.count() == 0


# --- the API ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_api_records_a_build_with_a_valid_token(client, secret):
    response = post(
        client,
        body(status="failed", duration=30, commit="cafe1234", started_at="2026-01-02T03:04:05Z"),
        secret,
    )
    assert response.status_code == 201, response.content
    assert response.json()["variant_status"] == "failed"
    assert variant().status == "failed"
    assert variant().builds.get().duration_seconds == 30
    assert ApiToken.objects.get().last_used is not None


@pytest.mark.django_db
@pytest.mark.parametrize("auth", [None, "Bearer", "Bearer wrong", "Token abc", "Basic Y2k6eA=="])
def test_api_without_a_valid_token_is_401_and_changes_nothing(client, secret, auth):
    headers = {"HTTP_AUTHORIZATION": auth} if auth else {}
    response = client.post(URL, data=body(), content_type="application/json", **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert BuildRecord.objects.count() == 0
    assert variant().status == "recipe"


@pytest.mark.django_db
def test_api_with_a_revoked_token_is_403(client, secret):
    ApiToken.objects.update(revoked=True)
    response = post(client, body(), secret)
    assert response.status_code == 403
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_api_for_a_user_without_permission_is_403(client):
    _, secret = ApiToken.issue(User.objects.create_user("reader"), "read only")
    response = post(client, body(), secret)
    assert response.status_code == 403
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_api_for_an_inactive_user_is_403(client, ci_user, secret):
    User.objects.filter(pk=ci_user.pk).update(is_active=False)
    assert post(client, body(), secret).status_code == 403


@pytest.mark.django_db
def test_anonymous_session_user_cannot_write_either(admin_client):
    # A logged-in admin session is not a token: the API ignores cookies.
    response = admin_client.post(URL, data=body(), content_type="application/json")
    assert response.status_code == 401
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_api_unknown_variant_is_404(client, secret):
    response = post(client, body(pname="pytorch-python313-cpu-avx9"), secret)
    assert response.status_code == 404
    assert "No variant" in response.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data",
    [
        "{",  # not JSON
        "[]",  # not an object
        json.dumps({"repository": REPO}),  # missing fields
        body(status="published"),
        body(status=7),
        body(duration=-3),
        body(duration="long"),
        body(duration=True),
        body(commit="zz"),
        body(log_url="ftp:/nope"),
        body(started_at="yesterday"),
        body(started_at="2026-13-45T99:00:00"),
        body(extra="x"),
        body(pname="x" * 500),
        body(host="a\x00b"),
    ],
)
def test_api_bad_input_is_400_with_a_message(client, secret, data):
    response = post(client, data, secret)
    assert response.status_code == 400, response.content
    assert response.json()["error"]
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_api_binary_body_is_400(client, secret):
    response = post(client, bytes(range(256)) * 4, secret)
    assert response.status_code == 400
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_api_oversized_body_is_413(client, secret):
    response = post(client, body(host="h" * 100_000), secret)
    assert response.status_code == 413
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_api_form_encoded_body_is_415(client, secret):
    response = client.post(URL, data={"status": "built"}, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 415


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "put", "patch", "delete", "head", "options"])
def test_api_builds_other_methods_are_405(client, secret, method):
    response = getattr(client, method)(URL, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 405
    assert response["Allow"] == "POST"


@pytest.mark.django_db
def test_token_is_stored_hashed(ci_user):
    token, secret = ApiToken.issue(ci_user, "CI")
    assert secret not in token.key_hash
    assert token.key_hash == ApiToken.hash_secret(secret)
    assert len(token.key_hash) == 64


@pytest.mark.django_db
def test_admin_shows_the_secret_once_and_stores_only_its_hash(admin_client, ci_user):
    response = admin_client.post(
        "/admin/catalog/apitoken/add/", {"user": ci_user.pk, "name": "CI"}, follow=True
    )
    assert response.status_code == 200
    text = [str(m) for m in response.context["messages"]]
    secret = next(m for m in text if "secret is" in m).split("secret is ")[1].split(" ")[0]
    token = ApiToken.objects.get()
    assert token.key_hash == ApiToken.hash_secret(secret)
    page = admin_client.get(f"/admin/catalog/apitoken/{token.pk}/change/").content.decode()
    assert secret not in page and token.key_hash not in page


# --- badges ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_variant_badge_shows_the_status(client):
    services.record_build(repository=REPO, branch=BRANCH, pname=PNAME, status="failed")
    response = client.get(f"/variants/{REPO}/{BRANCH}/{PNAME}/badge.svg")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert b"failed" in response.content and b"<script" not in response.content


@pytest.mark.django_db
def test_branch_badge_counts_built_variants(client):
    services.record_build(repository=REPO, branch=BRANCH, pname=PNAME, status="built")
    response = client.get(f"/branches/{REPO}/{BRANCH}/badge.svg")
    total = Variant.objects.filter(branch__repository=REPO, branch__name=BRANCH).count()
    assert response.status_code == 200
    assert f"1/{total} built".encode() in response.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [f"/variants/{REPO}/{BRANCH}/nope/badge.svg", f"/branches/{REPO}/nope/badge.svg"],
)
def test_badges_for_unknown_things_are_404(client, url):
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_badge_refuses_post(client):
    assert client.post(f"/variants/{REPO}/{BRANCH}/{PNAME}/badge.svg").status_code == 405


# --- concurrency -----------------------------------------------------------------------------


def test_concurrent_record_builds_for_one_variant_lose_no_record(seeded_db):
    """Eight threads, each with its own database connection, record five builds each for the
    same variant at once; all forty records are kept and the variant's status is a build's."""
    threads, per_thread, errors = 8, 5, []
    barrier = threading.Barrier(threads)

    def work(n):
        try:
            barrier.wait()
            for i in range(per_thread):
                services.record_build(
                    repository=REPO,
                    branch=BRANCH,
                    pname=PNAME,
                    status="built" if (n + i) % 2 else "failed",
                    host=f"t{n}-{i}",
                )
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    hosts = set(variant().builds.values_list("host", flat=True))
    assert hosts == {f"t{n}-{i}" for n in range(threads) for i in range(per_thread)}
    latest = variant().builds.order_by("-id").first()
    assert variant().status == latest.status
    assert connection.vendor in {"sqlite", "postgresql"}
