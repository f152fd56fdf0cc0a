#!/usr/bin/env bash
# Starts a throwaway Redis (Debian's redis-server) for the distributed test suite's Celery broker: listening on
# 127.0.0.1:PORT only, its files in DIR, the append-only file on (a restart keeps the queued tasks), no RDB
# snapshots. Prints the broker URL; the server's pid, as the server reports it, is in DIR/redis.pid, and
# scripts/redis/stop.sh DIR stops it by that pid. Starting again in the same DIR restarts it with its queue.
#
#   bash scripts/redis/start.sh /tmp/broker 63790
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 DIR PORT" >&2
  exit 2
fi
DIR="$1"
PORT="$2"
if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis/start.sh: no redis-server on this machine; install it with: apt-get install redis-server" >&2
  exit 1
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
redis-server --port "$PORT" --bind 127.0.0.1 --protected-mode yes --daemonize yes --dir "$DIR" \
  --logfile "$DIR/redis.log" --save "" --appendonly yes >/dev/null
for _ in $(seq 1 100); do
  PID="$(redis-cli -h 127.0.0.1 -p "$PORT" INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')"
  if [ -n "$PID" ]; then
    echo "$PID" >"$DIR/redis.pid"
    echo "redis://127.0.0.1:$PORT/0"
    exit 0
  fi
  sleep 0.1
done
echo "redis/start.sh: Redis on 127.0.0.1:$PORT did not answer within 10 s; see $DIR/redis.log" >&2
exit 1
