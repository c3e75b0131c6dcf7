"""Build results that say where the output is: store paths, sizes, system, nixpkgs revision and
publication, through the service, `record-build`, POST /api/builds and the admin."""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command

from catalog import naming, services
from catalog.models import ApiToken, BuildOutput, BuildRecord, Variant

REPO, BRANCH, PNAME = "build-pytorch", "main", "pytorch-python313-cpu-avx2"
HASH = "0" * 10 + "abcdfghijklmnpqrsvwxyz"
OUT = f"/nix/store/{HASH}-python3.13-torch-2.9.1"
LIB = f"/nix/store/{'1' * 32}-python3.13-torch-2.9.1-lib"
REV = "a" * 40


def variant():
    return Variant.objects.get(branch__repository=REPO, branch__name=BRANCH, pname=PNAME)


def record(**overrides):
    kwargs = {"repository": REPO, "branch": BRANCH, "pname": PNAME, "status": "built"}
    return services.record_build(**{**kwargs, **overrides})


@pytest.mark.parametrize(
    ("path", "valid"),
    [
        (OUT, True),
        (LIB, True),
        (f"/nix/store/{'e' * 32}-torch", False),  # e is not in Nix's base-32
        (f"/nix/store/{'0' * 31}-torch", False),
        (f"/nix/store/{'0' * 32}-.hidden", False),
        (f"/nix/store/{'0' * 32}-", False),
        (f"/nix/store/{'0' * 32}-to rch", False),
        (f"/gnu/store/{'0' * 32}-torch", False),
        (f"{OUT}/lib", False),
    ],
)
def test_store_paths_are_parsed_strictly(path, valid):
    if valid:
        assert naming.parse_store_path(path).hash == path[11:43]
    else:
        with pytest.raises(naming.InvalidName, match="not a Nix store path"):
            naming.parse_store_path(path)


@pytest.mark.django_db
def test_a_built_record_keeps_outputs_sizes_and_where_it_went():
    built = record(
        outputs=[OUT, LIB, OUT],
        system="x86_64-linux",
        nixpkgs_rev=REV,
        nar_size=2_000_000_000,
        closure_size=6_000_000_000,
        published_cache_url="https://cache.example.org",
    )
    built.refresh_from_db()
    assert sorted(built.outputs.values_list("store_path", flat=True)) == sorted([OUT, LIB])
    assert (built.system, built.nixpkgs_rev, built.nar_size) == ("x86_64-linux", REV, 2 * 10**9)
    assert built.closure_size == 6 * 10**9
    # A build that names where it was published publishes the variant.
    assert variant().status == "published"


@pytest.mark.django_db
def test_a_flox_publication_is_recorded_with_its_version():
    built = record(flox_catalog="myorg", flox_package=PNAME, flox_version="2.9.1")
    assert (built.flox_catalog, built.flox_version) == ("myorg", "2.9.1")
    assert variant().status == "published"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "overrides",
    [
        {"outputs": ["/nix/store/short-torch"]},
        {"outputs": [OUT], "status": "failed"},
        {"outputs": [f"/nix/store/{HASH[:-2]}{i:02d}-torch" for i in range(17)]},
        {"nar_size": -1},
        {"nar_size": 2**51},
        {"closure_size": "big"},
        {"closure_size": True},
        {"system": "x86_64-windows"},
        {"nixpkgs_rev": "nixos-unstable"},
        {"published_cache_url": "ftp://cache.example.org"},
        {"published_cache_url": "javascript:alert(1)"},
        {"flox_package": PNAME},  # a package with no catalog
        {"flox_catalog": "my org"},
    ],
)
def test_bad_build_results_are_refused_and_nothing_is_written(overrides):
    before = (variant().status, BuildRecord.objects.count(), BuildOutput.objects.count())
    with pytest.raises(services.ValidationError):
        record(**overrides)
    assert (variant().status, BuildRecord.objects.count(), BuildOutput.objects.count()) == before


@pytest.mark.django_db
def test_record_build_command_takes_outputs_and_publication():
    out = StringIO()
    call_command(
        "record-build",
        PNAME,
        *("--repository", REPO, "--branch", BRANCH, "--status", "built"),
        *("--output", OUT, "--output", LIB, "--system", "x86_64-linux"),
        *("--nixpkgs-rev", REV, "--nar-size", "123", "--closure-size", "456"),
        *("--flox-catalog", "myorg", "--flox-package", PNAME, "--flox-version", "2.9.1"),
        stdout=out,
    )
    built = variant().builds.get()
    assert built.outputs.count() == 2
    assert (built.nar_size, built.closure_size, built.flox_catalog) == (123, 456, "myorg")
    assert "is published" in out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--output", "/tmp/torch"], "outputs: .* not a Nix store path"),
        (["--nar-size", "-5"], "--nar-size must be 0 or more bytes"),
        (["--closure-size", "6GB"], "--closure-size must be a whole number of bytes"),
        (["--published-cache-url", "ftp://x.org"], "http:// or https://"),
    ],
)
def test_record_build_command_refuses_bad_results(args, message):
    with pytest.raises(CommandError, match=message):
        call_command(
            "record-build",
            PNAME,
            *("--repository", REPO, "--branch", BRANCH, "--status", "built", *args),
        )
    assert BuildRecord.objects.count() == 0


@pytest.fixture
def secret(db):
    user = User.objects.create_user("ci", password="x")
    user.user_permissions.add(Permission.objects.get(codename="add_buildrecord"))
    return ApiToken.issue(user, "CI")[1]


def post(client, secret, **fields):
    data = {"repository": REPO, "branch": BRANCH, "pname": PNAME, "status": "built", **fields}
    return client.post(
        "/api/builds",
        data=json.dumps(data),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )


@pytest.mark.django_db
def test_api_records_outputs_and_answers_with_them(client, secret):
    response = post(client, secret, outputs=[OUT], nar_size=10, closure_size=20, nixpkgs_rev=REV)
    assert response.status_code == 201, response.content
    assert response.json()["outputs"] == [OUT]
    assert variant().builds.get().closure_size == 20


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields",
    [
        {"outputs": OUT},  # not a list
        {"outputs": [1]},
        {"outputs": ["/nix/store/x-torch"]},
        {"nar_size": "10"},
        {"nar_size": 1.5},
        {"closure_size": -1},
        {"system": "riscv64-linux"},
        {"published_cache_url": "file:///etc/passwd"},
    ],
)
def test_api_refuses_bad_results_with_400(client, secret, fields):
    response = post(client, secret, **fields)
    assert response.status_code == 400, response.content
    assert response.json()["error"]
    assert BuildRecord.objects.count() == 0


@pytest.mark.django_db
def test_admin_shows_a_builds_outputs_and_publication(admin_client):
    built = record(outputs=[OUT], flox_catalog="myorg", flox_version="2.9.1")
    page = admin_client.get(f"/admin/catalog/buildrecord/{built.pk}/change/").content.decode()
    assert OUT in page
    assert "Where it was published" in page
    assert 'value="myorg"' in page


@pytest.mark.django_db
def test_admin_refuses_a_bad_store_path(admin_client):
    built = record()
    url = f"/admin/catalog/buildrecord/{built.pk}/change/"
    form = {
        "variant": built.variant_id,
        "status": "built",
        "started_at_0": "2026-01-01",
        "started_at_1": "10:00:00",
        "outputs-TOTAL_FORMS": "1",
        "outputs-INITIAL_FORMS": "0",
        "outputs-0-store_path": "/nix/store/not-a-hash-torch",
    }
    response = admin_client.post(url, form)
    assert response.status_code == 200  # the form again, with the error
    assert "not a Nix store path" in response.content.decode()
    assert BuildOutput.objects.count() == 0
