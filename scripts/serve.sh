#!/usr/bin/env bash
# Serve the catalogue with gunicorn in production mode (DEBUG off), on 127.0.0.1:$PORT.
#
#   PORT=8000 WORKERS=3 scripts/serve.sh        (what `make serve` runs)
#
# PREPARE=only runs the preparation below (migrate, createcachetable, collectstatic) and stops;
# PREPARE=0 skips it (scripts/serve-proxy.sh prepares once, then starts several servers).
#
# - DJANGO_SECRET_KEY: taken from the environment; without one, a random key is generated once
#   into .secret_key (git-ignored, mode 600) so that a local `make serve` just works.
# - DJANGO_HTTPS defaults to 0 here: gunicorn speaks plain HTTP on loopback. Behind a TLS proxy
#   set DJANGO_HTTPS=1 DJANGO_PROXY_SSL_HEADER=1 (see the README's Deployment section).
# - collectstatic writes compressed (gzip/brotli when available), hashed files to staticfiles/,
#   which whitenoise serves with far-future cache headers; createcachetable makes the table
#   the shared cache needs (catalogue version and rendered fragments).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8000}
BIND=${BIND:-127.0.0.1:$PORT}
WORKERS=${WORKERS:-3}
PREPARE=${PREPARE:-1}

if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
  if [ ! -s .secret_key ]; then
    (umask 077; "$PY" -c 'import secrets; print(secrets.token_urlsafe(50))' > .secret_key)
  fi
  DJANGO_SECRET_KEY=$(cat .secret_key)
fi
export DJANGO_SECRET_KEY
export DJANGO_DEBUG=${DJANGO_DEBUG:-0}
export DJANGO_HTTPS=${DJANGO_HTTPS:-0}

if [ "$PREPARE" != 0 ]; then
  "$PY" manage.py migrate --noinput -v 0
  "$PY" manage.py createcachetable
  "$PY" manage.py collectstatic --noinput -v 0
  # A new catalogue version: pages rendered by the code (or templates) of an earlier start are
  # not served again from a cache that outlived it (the file cache, Redis).
  "$PY" manage.py shell -v 0 -c 'from catalog.cache import bump_version; bump_version()'
fi
[ "$PREPARE" = only ] && exit 0
exec "$PY" -m gunicorn catalogue_site.wsgi:application \
  --bind "$BIND" --workers "$WORKERS" --access-logfile "${ACCESS_LOG:--}" \
  --graceful-timeout 5 --timeout 30 --no-control-socket
