#!/usr/bin/env bash
# Stops the Redis that scripts/redis/start.sh DIR started, by the pid it recorded in DIR/redis.pid (SIGTERM: the
# append-only file is flushed), and waits until it is gone. Does nothing when it is not running.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
PIDFILE="$1/redis.pid"
[ -s "$PIDFILE" ] || exit 0
PID="$(cat "$PIDFILE")"
if kill -0 "$PID" 2>/dev/null; then
  kill -TERM "$PID"
  for _ in $(seq 1 300); do
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$PID" 2>/dev/null; then
    echo "redis/stop.sh: Redis (pid $PID) did not stop in 30 s" >&2
    exit 1
  fi
fi
rm -f "$PIDFILE"
