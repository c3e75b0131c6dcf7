"""Settings for the variant catalogue.

Everything that differs between a laptop and a deployment comes from the environment;
the defaults are for local development on SQLite (DEBUG on, a fixed development key).

Production (DJANGO_DEBUG=0) refuses to start without a real DJANGO_SECRET_KEY.

| variable | meaning | default |
|---|---|---|
| DJANGO_DEBUG | 1/0 | 1 (development) |
| DJANGO_SECRET_KEY | signing key; random (≥ 200 bits) when DEBUG is off | a dev key |
| DJANGO_ALLOWED_HOSTS | comma-separated host names | 127.0.0.1,localhost,testserver |
| DATABASE_URL | e.g. postgres://user:pass@127.0.0.1:5432/catalogue | sqlite:///db.sqlite3 |
| DJANGO_HTTPS | 1 when served over HTTPS: secure cookies, HSTS, redirect | on when DEBUG is off |
| DJANGO_PROXY_SSL_HEADER | 1 behind a TLS-terminating proxy that sets X-Forwarded-Proto | 0 |
| DJANGO_CSRF_TRUSTED_ORIGINS | comma-separated origins (https://catalogue.example.org) | none |
| DJANGO_HSTS_SECONDS | HSTS max-age when DJANGO_HTTPS is on | 31536000 |
| DJANGO_CACHE | locmem, file, database or redis (see CACHES below) | file; redis with REDIS_URL |
| REDIS_URL | e.g. redis://127.0.0.1:6379/0: the cache every server shares | none |
| DJANGO_STATIC_ROOT | where collectstatic writes | staticfiles/ in the project |
"""

import math
import os
import zlib
from collections import Counter
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

DEV_SECRET_KEY = "dev-only-insecure-key-do-not-deploy"


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_caches(name: str) -> list[dict]:
    """Binary caches from `name=url` items, comma-separated, most preferred first (as Nix's
    `substituters`): CATALOG_BINARY_CACHES="ours=https://cache.example.org,nixos=https://…"."""
    caches = []
    for position, item in enumerate(env_list(name), start=1):
        cache_name, sep, url = item.partition("=")
        if not sep or not cache_name.strip() or not url.strip():
            raise ImproperlyConfigured(f"{name}: write each cache as name=url, not {item!r}.")
        caches.append({"name": cache_name.strip(), "url": url.strip(), "priority": position * 10})
    return caches


# The binary caches `check-caches` asks (added to the BinaryCache table, editable in the admin).
BINARY_CACHES = env_caches("CATALOG_BINARY_CACHES")


def secret_key_bits(key: str) -> float:
    """An estimate of a key's randomness in bits: its Shannon entropy per character times its
    length, bounded by its size once compressed (a repeated word compresses to little). A key
    from secrets.token_urlsafe(50) scores about 360, Django's get_random_secret_key() 240."""
    if not key:
        return 0.0
    n = len(key)
    shannon = -sum(c / n * math.log2(c / n) for c in Counter(key).values())
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: no header to count
    packed = packer.compress(key.encode("utf-8", "replace")) + packer.flush()
    return min(shannon * n, 8 * len(packed))


MIN_SECRET_KEY_CHARS, MIN_SECRET_KEY_BITS = 50, 200

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "").strip() or DEV_SECRET_KEY

if not DEBUG:
    # Django's own check (security.W009) only warns; a production process must not start at all.
    # Judged by estimated entropy, not against a list of known bad keys.
    if (
        SECRET_KEY == DEV_SECRET_KEY
        or len(SECRET_KEY) < MIN_SECRET_KEY_CHARS
        or secret_key_bits(SECRET_KEY) < MIN_SECRET_KEY_BITS
    ):
        raise ImproperlyConfigured(
            "DJANGO_DEBUG is off but DJANGO_SECRET_KEY is missing, the development default, or "
            f"insecure (about {secret_key_bits(SECRET_KEY):.0f} bits of randomness; at least "
            f"{MIN_SECRET_KEY_CHARS} characters and {MIN_SECRET_KEY_BITS} bits are required): "
            "set it to a random value (python -c 'import secrets; "
            "print(secrets.token_urlsafe(50))')."
        )

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_filters",
    "django_htmx",
    "template_partials",
    "csp",
    "catalog",
]

MIDDLEWARE = [
    # Compresses HTML and JSON for clients that accept gzip. Safe (BREACH) because no response
    # mixes a secret with what a request reflects: GET pages carry no CSRF token or session data.
    "django.middleware.gzip.GZipMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "catalogue_site.urls"
WSGI_APPLICATION = "catalogue_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=60,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        # Take the write lock when a transaction starts, and wait for it, so that concurrent
        # writers (record-build from several CI jobs) queue instead of failing with
        # "database is locked" on a read-to-write upgrade.
        transaction_mode="IMMEDIATE",
        timeout=20,
    )
    # Tests run on a file, not in memory, so that threads and the live server hold real,
    # separate connections (the concurrency tests need that); one file per test process, so
    # several test runs in one checkout never share it.
    DATABASES["default"]["TEST"] = {
        "NAME": os.path.join(
            os.environ.get("TMPDIR", "/tmp"), f"catalogue-test-{os.getpid()}.sqlite3"
        )
    }

# The catalogue version and the rendered fragments (catalog/cache.py) must be shared by every
# server process, or a write seen by one gunicorn worker leaves the others serving stale pages.
#   DJANGO_CACHE=file      every process on one host (the default; DJANGO_CACHE_DIR, default
#                          .cache/ in the project): fastest shared choice (bench/load.py), and
#                          what lets `manage.py record-build` in one shell refresh the pages that
#                          `make run` serves from another
#   DJANGO_CACHE=locmem    one process only (the default under pytest, which sets PYTEST_VERSION,
#                          so test runs never share entries with a running site)
#   DJANGO_CACHE=database  every process on every host (`manage.py createcachetable`, run by
#                          `make serve`); about 3x slower than file on the matrix page here
#   DJANGO_CACHE=redis     every process on every host: Redis at REDIS_URL (Django's own
#                          backend); the default outside pytest whenever REDIS_URL is set
REDIS_URL = os.environ.get("REDIS_URL", "").strip()
CACHE_BACKEND = os.environ.get("DJANGO_CACHE", "").strip() or (
    "locmem" if "PYTEST_VERSION" in os.environ else "redis" if REDIS_URL else "file"
)
if CACHE_BACKEND == "redis" and not REDIS_URL:
    raise ImproperlyConfigured(
        "DJANGO_CACHE=redis needs REDIS_URL (e.g. redis://127.0.0.1:6379/0)."
    )
CACHE_BACKENDS = {
    "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "catalogue"},
    "file": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": os.environ.get("DJANGO_CACHE_DIR", str(BASE_DIR / ".cache")),
        "OPTIONS": {"MAX_ENTRIES": 2000},
    },
    "database": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "catalogue_cache",
        "OPTIONS": {"MAX_ENTRIES": 2000},
    },
    # Redis evicts by its own policy (maxmemory-policy), not Django's MAX_ENTRIES; the catalogue
    # version is stored without expiry, so run it with volatile-lru (scripts/with-redis.sh
    # does) and it is never the one evicted.
    "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL},
}
if CACHE_BACKEND not in CACHE_BACKENDS:
    raise ImproperlyConfigured(
        f"DJANGO_CACHE must be one of {', '.join(CACHE_BACKENDS)}, not {CACHE_BACKEND!r}."
    )
CACHES = {"default": CACHE_BACKENDS[CACHE_BACKEND]}
# The catalogue version alone, in a cache of the same kind that holds nothing else, so culling
# the default cache's fragments (MAX_ENTRIES) can never drop it (catalog/cache.py). Redis needs
# none: it evicts by its own policy, which spares a key without expiry (see above).
VERSION_LOCATIONS = {
    "locmem": "catalogue-version",
    "file": str(Path(CACHES["default"]["LOCATION"]) / "version"),
    "database": "catalogue_version_cache",
}
if CACHE_BACKEND in VERSION_LOCATIONS:
    CACHES["catalogue-version"] = {
        **CACHES["default"],
        "LOCATION": VERSION_LOCATIONS[CACHE_BACKEND],
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# collectstatic's target; DJANGO_STATIC_ROOT gives a server (or a test's servers) one of its own.
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Where the loader finds the catalogue's source data.
CATALOGUE_FIXTURES_DIR = BASE_DIR / "fixtures"

# --- Security -------------------------------------------------------------------------------
# Headers sent on every response (SecurityMiddleware, XFrameOptionsMiddleware, CSPMiddleware).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True

# Content-Security-Policy: everything from our own origin, no inline script, no eval.
# htmx is served from static/ and configured by a <meta name="htmx-config"> tag
# (includeIndicatorStyles: false), so it needs neither inline styles nor eval.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# HTTPS: on by default in production; DJANGO_HTTPS=0 for a plain-HTTP deployment on a trusted
# network (check --deploy then warns, as it should).
HTTPS = env_bool("DJANGO_HTTPS", not DEBUG)
if HTTPS:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)
# Behind a TLS-terminating reverse proxy that sets X-Forwarded-Proto (and strips it from clients).
if env_bool("DJANGO_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Request limits and login throttling ------------------------------------------------------
# One block, so the whole policy reads in one place: it adds to INSTALLED_APPS and MIDDLEWARE
# here rather than in their lists above.
#
# No request body over MAX_REQUEST_BODY_BYTES is read: catalog.middleware refuses it from its
# Content-Length (or, chunked, after reading one byte past the limit) with 413 — JSON under
# /api/, plain text elsewhere — and answers Django's own limits below the same way. 2.5 MB holds
# the wizard's three 256 KB pastes even form-encoded; no upload ever spills to a temporary file.
MAX_REQUEST_BODY_BYTES = 2_621_440
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000  # Django's default, stated: admin pages post far fewer
DATA_UPLOAD_MAX_NUMBER_FILES = 10

# Admin login throttling (django-axes): the 5th wrong password for a user name from one address
# locks that pair out for 15 minutes — even the right password is refused until then; a
# successful login clears the count. Failures are kept in the database (shared by every worker).
INSTALLED_APPS += ["axes"]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The body limit goes after every other middleware (only axes, which asks to be last, follows):
# it runs before any view or form reads the body, and the others still add their security
# headers to its refusals.
MIDDLEWARE += [
    "catalog.middleware.RequestBodyLimitMiddleware",
    "axes.middleware.AxesMiddleware",
]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"line": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
    # The catalogue's own lines (refused imports, failed exports, caught engine and parser
    # errors with their tracebacks) go to the root's handler.
    "loggers": {"catalog": {"level": os.environ.get("CATALOG_LOG_LEVEL", "INFO")}},
}
