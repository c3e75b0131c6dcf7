"""check-caches against a real HTTP binary cache started by the test (tests/cache_server.py):
narinfos, 404s, slow, broken, flaky and garbled answers; what is stored and kept."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from catalog import narinfo, services
from catalog.models import BinaryCache, CacheEntry
from tests.cache_server import CacheServer, narinfo_text

REPO, BRANCH = "build-pytorch", "main"
PNAMES = ["pytorch-python313-cpu-avx2", "pytorch-python313-cpu-avx512"]


def store_path(n: int, name: str = "python3.13-torch-2.9.1") -> str:
    return f"/nix/store/{n:032d}-{name}"


@pytest.fixture
def server():
    with CacheServer(slow_seconds=1.0) as running:
        yield running


def record(pname: str, *paths: str, **extra):
    return services.record_build(
        repository=REPO, branch=BRANCH, pname=pname, status="built", outputs=paths, **extra
    )


def cache(server, mode: str, name: str | None = None) -> BinaryCache:
    return BinaryCache.objects.create(name=name or mode, url=f"{server.url}/{mode}")


def run(*args: str):
    out, err = StringIO(), StringIO()
    try:
        call_command("check-caches", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, out.getvalue() + err.getvalue() + str(exc)
    return 0, out.getvalue()


# --- the protocol engine -----------------------------------------------------------------------


def test_a_narinfo_is_parsed_for_its_own_path_only():
    path = store_path(7)
    info = narinfo.parse_narinfo(narinfo_text(path, 1234, 567), path[11:43])
    assert (info.store_path, info.nar_size, info.file_size) == (path, 1234, 567)
    assert info.references == (path[11:],)
    with pytest.raises(narinfo.NarinfoError, match="not"):
        narinfo.parse_narinfo(narinfo_text(path, 1, 1), "1" * 32)
    with pytest.raises(narinfo.NarinfoError, match="NarSize"):
        narinfo.parse_narinfo(f"StorePath: {path}\n", path[11:43])
    with pytest.raises(narinfo.NarinfoError, match="whole number"):
        narinfo.parse_narinfo(f"StorePath: {path}\nNarSize: -4\n", path[11:43])


def test_present_absent_and_error_answers_from_a_real_server(server):
    present, absent = store_path(1), store_path(2)
    server.add(present, nar_size=9000, file_size=3000)
    answers, stats = narinfo.check(
        [
            (f"{server.url}/ok", present[11:43]),
            (f"{server.url}/ok", absent[11:43]),
            (f"{server.url}/broken", present[11:43]),
        ],
        retries=1,
        backoff=0,
    )
    by = {(a.cache_url.rsplit("/", 1)[1], a.store_hash): a for a in answers}
    assert by["ok", present[11:43]].present is True
    assert (by["ok", present[11:43]].nar_size, by["ok", present[11:43]].file_size) == (9000, 3000)
    assert by["ok", absent[11:43]].present is False
    assert by["broken", present[11:43]].present is None
    assert "500" in by["broken", present[11:43]].error
    assert stats.retries == 1  # the broken answer was asked twice


def test_a_flaky_cache_is_retried_into_an_answer(server):
    path = store_path(3)
    server.add(path)
    answer = narinfo.ask(f"{server.url}/flaky", path[11:43], retries=2, backoff=0)
    assert (answer.present, answer.attempts) == (True, 2)


def test_a_slow_cache_times_out_as_an_error_not_as_absent(server):
    path = store_path(4)
    server.add(path)
    answer = narinfo.ask(f"{server.url}/slow", path[11:43], timeout=0.2, retries=0)
    assert answer.present is None
    assert "timed out" in answer.error.lower() or "timeout" in answer.error.lower()


def test_a_cache_that_hangs_up_is_an_error(server):
    answer = narinfo.ask(f"{server.url}/down", store_path(5)[11:43], retries=1, backoff=0)
    assert answer.present is None and answer.error


def test_a_garbled_narinfo_is_an_error(server):
    path = store_path(6)
    server.add(path)
    answer = narinfo.ask(f"{server.url}/garbled", path[11:43], retries=0)
    assert answer.present is None and "StorePath" in answer.error


def test_requests_in_flight_are_bounded(server):
    paths = [store_path(100 + n) for n in range(40)]
    for path in paths:
        server.add(path)
    server.slow_seconds = 0.05
    answers, stats = narinfo.check(
        [(f"{server.url}/slow", p[11:43]) for p in paths], workers=4, retries=0
    )
    assert all(a.present for a in answers)
    assert stats.max_in_flight == 4
    # The server counts a request until its handler returns, a moment after the client has its
    # answer and may send the next one: it can see one more per worker, never more.
    assert 2 <= server.max_in_flight <= 8


# --- the command and what it stores ------------------------------------------------------------


@pytest.mark.django_db
def test_check_caches_stores_present_and_absent_with_their_time(server):
    cached, missing = store_path(11), store_path(12)
    server.add(cached, nar_size=5000, file_size=2000)
    record(PNAMES[0], cached)
    record(PNAMES[1], missing)
    ours = cache(server, "ok", "ours")
    before = timezone.now()
    code, output = run()
    assert code == 0, output
    assert "1 present, 1 absent, 0 failed" in output
    hit = CacheEntry.objects.get(output__store_path=cached, cache=ours)
    assert (hit.present, hit.nar_size, hit.file_size) == (True, 5000, 2000)
    assert hit.checked_at >= before and hit.present_since == hit.checked_at
    miss = CacheEntry.objects.get(output__store_path=missing)
    assert (miss.present, miss.present_since) == (False, None)


@pytest.mark.django_db
def test_only_each_variants_latest_build_is_checked(server):
    old, new = store_path(21), store_path(22)
    record(PNAMES[0], old, started_at=timezone.now() - timedelta(days=3))
    record(PNAMES[0], new)
    cache(server, "ok")
    assert run()[0] == 0
    assert list(CacheEntry.objects.values_list("output__store_path", flat=True)) == [new]


@pytest.mark.django_db
def test_a_failed_check_keeps_the_last_known_answer(server):
    path = store_path(31)
    server.add(path)
    record(PNAMES[0], path)
    ours = cache(server, "ok", "ours")
    assert run()[0] == 0
    first = CacheEntry.objects.get()
    ours.url = f"{server.url}/broken"
    ours.save()
    code, output = run("--retries", "0")
    assert code == 1
    assert "1 check(s) failed" in output and "HTTP 500" in output
    kept = CacheEntry.objects.get()
    assert (kept.present, kept.checked_at, kept.present_since) == (
        True,
        first.checked_at,
        first.present_since,
    )
    assert "500" in kept.error and kept.error_at > first.checked_at


@pytest.mark.django_db
def test_present_since_survives_later_checks_and_ends_when_gone(server):
    path = store_path(41)
    server.add(path)
    record(PNAMES[0], path)
    cache(server, "ok")
    run()
    since = CacheEntry.objects.get().present_since
    run()
    entry = CacheEntry.objects.get()
    assert entry.present_since == since and entry.checked_at > since
    server.narinfos.clear()
    run()
    entry = CacheEntry.objects.get()
    assert (entry.present, entry.present_since, entry.nar_size) == (False, None, None)


@pytest.mark.django_db
def test_caches_come_from_settings_and_can_be_picked_by_name(server):
    path = store_path(51)
    server.add(path)
    record(PNAMES[0], path)
    configured = [
        {"name": "first", "url": f"{server.url}/ok", "priority": 10},
        {"name": "second", "url": f"{server.url}/broken", "priority": 20},
    ]
    with override_settings(BINARY_CACHES=configured):
        code, output = run("--cache", "first")
    assert code == 0, output
    assert list(BinaryCache.objects.values_list("name", "priority")) == [
        ("first", 10),
        ("second", 20),
    ]
    assert list(CacheEntry.objects.values_list("cache__name", flat=True)) == ["first"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "configured", "message"),
    [
        ([], [], "No binary cache is configured"),
        (["--cache", "nope"], [{"name": "a", "url": "http://127.0.0.1:9"}], "named nope"),
        (["--workers", "0"], [], "--workers must be from 1 to 64"),
        (["--timeout", "900"], [], "--timeout must be"),
        ([], [{"name": "bad name", "url": "http://127.0.0.1:9"}], "BINARY_CACHES"),
        ([], [{"name": "ftp", "url": "ftp://cache.example.org"}], "http"),
    ],
)
def test_check_caches_cannot_run_exits_2_with_a_sentence(args, configured, message):
    with override_settings(BINARY_CACHES=configured):
        code, output = run(*args)
    assert code == 2
    assert message in output
    assert not CacheEntry.objects.exists()
