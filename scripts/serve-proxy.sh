#!/usr/bin/env bash
# Serve the catalogue behind nginx: nginx on 127.0.0.1:$PORT in front of $HOSTS gunicorn servers
# (scripts/serve.sh, $WORKERS sync workers each) on loopback ports.
#
#   PORT=8000 WORKERS=3 scripts/serve-proxy.sh          (what `make serve-proxy` runs)
#   HOSTS=2 REDIS_URL=redis://127.0.0.1:6379/0 scripts/serve-proxy.sh
#
# nginx reads every request whole before gunicorn sees it, so slow clients cannot hold the
# workers (why: scripts/nginx.conf.in). Its configuration is rendered from scripts/nginx.conf.in
# into a temporary folder (also its pid file and temporary files), removed on exit; nginx runs in
# the foreground, as no system service. UPSTREAM_PORTS (space-separated, one per host) picks the
# gunicorn ports, free ones by default. The servers share the catalogue version through the
# cache: the file cache on one machine, Redis (REDIS_URL) across machines. nginx writes the
# access log to ACCESS_LOG (default stdout). Ctrl-C stops all;
# when one process exits the others are stopped, and the exit status is its.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8000}
HOSTS=${HOSTS:-1}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
if [ ! -x "$NGINX" ]; then
  echo "serve-proxy: nginx not found; install Debian's nginx (apt-get install nginx)." >&2
  exit 2
fi

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
UPSTREAM_PORTS=${UPSTREAM_PORTS:-$(for _ in $(seq "$HOSTS"); do free_port; done)}

if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
  if [ ! -s .secret_key ]; then
    (umask 077; "$PY" -c 'import secrets; print(secrets.token_urlsafe(50))' > .secret_key)
  fi
  DJANGO_SECRET_KEY=$(cat .secret_key)
fi
export DJANGO_SECRET_KEY
export DJANGO_DEBUG=${DJANGO_DEBUG:-0}
export DJANGO_HTTPS=${DJANGO_HTTPS:-0}
# nginx sets X-Forwarded-Proto on every request, replacing a client's, so Django may trust it.
export DJANGO_PROXY_SSL_HEADER=1

# The body limit and its sentence from the settings and the middleware, so both refuse alike.
read -r MAX_BODY TOO_LARGE < <("$PY" -c 'import catalogue_site.settings as s
from catalog.middleware import too_large_message
print(s.MAX_REQUEST_BODY_BYTES, too_large_message(s.MAX_REQUEST_BODY_BYTES))')

DIR=$(mktemp -d /tmp/catalogue-nginx.XXXXXX)
chmod 755 "$DIR"  # nginx's workers (nobody, when started as root) make their folders in it
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

upstreams=""
for port in $UPSTREAM_PORTS; do
  upstreams+="        server 127.0.0.1:$port;"$'\n'
done
sed -e "s|@PREFIX@|$DIR|g" -e "s|@LISTEN@|127.0.0.1:$PORT|" -e "s|@MAX_BODY@|$MAX_BODY|" \
  -e "s|@TOO_LARGE@|$TOO_LARGE|g" -e "s|@ACCESS_LOG@|${ACCESS_LOG:-/dev/stdout}|" \
  scripts/nginx.conf.in | awk -v servers="${upstreams%$'\n'}" '/@UPSTREAMS@/ { print servers; next } { print }' \
  > "$DIR/nginx.conf"
"$NGINX" -t -q -e stderr -p "$DIR" -c "$DIR/nginx.conf"

PY=$PY PREPARE=only scripts/serve.sh
for port in $UPSTREAM_PORTS; do
  # nginx logs each request (ACCESS_LOG, default stdout); gunicorn's own log would repeat it.
  PY=$PY PREPARE=0 BIND=127.0.0.1:$port ACCESS_LOG=/dev/null scripts/serve.sh &
  pids+=($!)
done
"$NGINX" -e stderr -p "$DIR" -c "$DIR/nginx.conf" &
pids+=($!)
echo "serve-proxy: nginx on http://127.0.0.1:$PORT, gunicorn on $(echo $UPSTREAM_PORTS | sed 's/ /, /g')" >&2
set +e
wait -n
status=$?
exit $status
