"""Deployment settings and security: refusal without a key, check --deploy, headers, CSRF,
anonymous writes."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from catalog.models import Branch, DocPage

ROOT = Path(__file__).resolve().parent.parent
REFUSAL = (
    "DJANGO_DEBUG is off but DJANGO_SECRET_KEY is missing, the development default, or insecure"
)


def manage(*args, **env):
    base = {
        k: v for k, v in os.environ.items() if not k.startswith("DJANGO_") and k != "DATABASE_URL"
    }
    base["DJANGO_SETTINGS_MODULE"] = "catalogue_site.settings"
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def last_line(result):
    """The command's last line of output (`shell` prints a banner before it)."""
    return result.stdout.strip().splitlines()[-1]


def production_env(**extra):
    return {
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "catalogue.example.org",
        **extra,
    }


@pytest.mark.parametrize(
    "key",
    [
        None,
        "",
        "dev-only-insecure-key-do-not-deploy",
        "django-insecure-" + "x" * 50,
        "short-but-random-Q8f",
    ],
)
def test_production_refuses_to_start_without_a_real_secret_key(key):
    env = {"DJANGO_DEBUG": "0"}
    if key is not None:
        env["DJANGO_SECRET_KEY"] = key
    result = manage("check", **env)
    assert result.returncode != 0
    assert REFUSAL in result.stderr


def test_development_defaults_start_without_any_environment():
    result = manage("check")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_with_production_settings_has_no_warnings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_behind_a_tls_proxy_has_no_warnings():
    env = production_env(
        DJANGO_PROXY_SSL_HEADER="1", DJANGO_CSRF_TRUSTED_ORIGINS="https://catalogue.example.org"
    )
    result = manage("check", "--deploy", "--fail-level", "WARNING", **env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_values():
    code = (
        "from django.conf import settings as s;"
        "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT,"
        " s.SECURE_HSTS_SECONDS > 0, s.STORAGES['staticfiles']['BACKEND'],"
        " s.DATABASES['default']['ENGINE'],"
        " s.SECURE_PROXY_SSL_HEADER)"
    )
    env = production_env(
        DJANGO_PROXY_SSL_HEADER="1", DATABASE_URL="postgres://u:p@127.0.0.1:5999/catalogue"
    )
    result = manage("shell", "-c", code, **env)
    assert result.returncode == 0, result.stderr
    assert last_line(result).split() == [
        "False",
        "True",
        "True",
        "True",
        "True",
        "whitenoise.storage.CompressedManifestStaticFilesStorage",
        "django.db.backends.postgresql",
        "('HTTP_X_FORWARDED_PROTO',",
        "'https')",
    ]


def test_hsts_header_is_sent_over_https_in_production():
    code = (
        "from django.test import Client;"
        "r = Client(HTTP_HOST='catalogue.example.org').get('/api/builds', secure=True);"
        "print(r.status_code, r.headers.get('Strict-Transport-Security'))"
    )
    result = manage("shell", "-c", code, **production_env())
    assert result.returncode == 0, result.stderr
    status, hsts = last_line(result).split(" ", 1)
    assert status == "405"
    assert "max-age=31536000" in hsts and "includeSubDomains" in hsts


def test_plain_http_is_redirected_to_https_in_production():
    code = (
        "from django.test import Client;"
        "r = Client(HTTP_HOST='catalogue.example.org').get('/api/builds');"
        "print(r.status_code, r.headers.get('Location'))"
    )
    result = manage("shell", "-c", code, **production_env())
    assert last_line(result).split() == ["301", "https://catalogue.example.org/api/builds"]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/api/builds", "/admin/login/"])
def test_security_headers_on_every_response(client, url):
    response = client.get(url)
    csp = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in csp.split(";") if part.strip())
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert directives["frame-ancestors"] == "'none'"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_pages_carry_no_inline_script(client):
    html = client.get("/").content.decode()
    # Every <script> has a src (CSP allows no inline script) and no element has an on* handler.
    import re

    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag, tag
    assert not re.search(r"<[^>]+\son[a-z]+\s*=", html)


@pytest.mark.django_db
def test_admin_login_without_csrf_token_is_403():
    User.objects.create_superuser("admin", "a@example.org", "pw-123456")
    client = Client(enforce_csrf_checks=True)
    response = client.post("/admin/login/", {"username": "admin", "password": "pw-123456"})
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_anonymous_admin_add_is_refused_and_changes_nothing(client):
    before = DocPage.objects.count()
    response = client.post(
        "/admin/catalog/docpage/add/", {"slug": "evil", "title": "Evil", "body": "x", "order": 1}
    )
    assert response.status_code in (302, 403)
    assert "/admin/login/" in response.get("Location", "/admin/login/")
    assert DocPage.objects.count() == before


@pytest.mark.django_db
def test_anonymous_admin_change_is_refused_and_changes_nothing(client):
    branch = Branch.objects.order_by("pk").first()
    purpose = branch.purpose
    response = client.post(
        f"/admin/catalog/branch/{branch.pk}/change/", {"purpose": "defaced", "name": branch.name}
    )
    assert response.status_code in (302, 403)
    branch.refresh_from_db()
    assert branch.purpose == purpose


@pytest.mark.django_db
def test_anonymous_admin_delete_is_refused(client):
    doc = DocPage.objects.order_by("pk").first()
    response = client.post(f"/admin/catalog/docpage/{doc.pk}/delete/", {"post": "yes"})
    assert response.status_code in (302, 403)
    assert DocPage.objects.filter(pk=doc.pk).exists()


@pytest.mark.django_db
def test_staff_without_permission_cannot_change_records(client):
    user = User.objects.create_user("staff", password="pw-123456", is_staff=True)
    client.force_login(user)
    branch = Branch.objects.order_by("pk").first()
    response = client.post(f"/admin/catalog/branch/{branch.pk}/change/", {"purpose": "defaced"})
    assert response.status_code == 403
    branch.refresh_from_db()
    assert branch.purpose != "defaced"


@pytest.mark.django_db
def test_unknown_url_is_404(client):
    assert client.get("/no/such/page/").status_code == 404
