#!/usr/bin/env bash
# Run a command with REDIS_URL pointing at a throwaway Redis server.
#
#   scripts/with-redis.sh .venv/bin/python -m pytest
#   scripts/with-postgres.sh scripts/with-redis.sh sh -c '…'        (what make test-postgres runs)
#
# Starts Debian's redis-server on a free loopback port with nothing saved to disk (no RDB, no
# AOF), 256 MB at most and volatile-lru eviction (the catalogue version, stored without expiry,
# is never evicted), runs the command, then stops the server and deletes its folder, whatever
# the command's outcome. REDIS_URL selects the Redis cache (site/settings.py) outside pytest;
# under pytest the tests use local memory unless DJANGO_CACHE says otherwise. Exit status: the
# command's.
set -euo pipefail

REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}
if [ ! -x "$REDIS_SERVER" ]; then
  echo "with-redis: redis-server not found; install Debian's redis-server (apt-get install redis-server)." >&2
  exit 2
fi
PORT=${REDIS_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
DIR=$(mktemp -d /tmp/catalogue-redis.XXXXXX)

cleanup() {
  if [ -n "${pid:-}" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

"$REDIS_SERVER" --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --save '' --appendonly no \
  --maxmemory 256mb --maxmemory-policy volatile-lru --daemonize no --logfile "$DIR/redis.log" &
pid=$!
# Ready when it answers PING (redis-cli is in redis-tools, a dependency of redis-server).
ready=0
for _ in $(seq 100); do
  if [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ]; then ready=1; break; fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "with-redis: redis-server did not start on 127.0.0.1:$PORT:" >&2
  cat "$DIR/redis.log" >&2
  exit 2
fi

export REDIS_URL="redis://127.0.0.1:$PORT/0"
echo "with-redis: Redis $("$REDIS_SERVER" --version | awk '{print $3}' | cut -d= -f2) on 127.0.0.1:$PORT" >&2
set +e
"$@"
status=$?
set -e
exit $status
