#!/usr/bin/env bash
# Usage: stop.sh FOLDER
# Stops the server start.sh started for FOLDER, by the pid in FOLDER/pid, and waits until it has exited
# (SIGTERM, then SIGKILL after ICEBERG_REST_STOP_TIMEOUT seconds, default 10). Nothing running is not an error.
set -euo pipefail

fail() { echo "iceberg-rest: $*" >&2; exit 1; }

# Running, and not a zombie: an orphaned server's exit status is collected by PID 1, which here takes ~1.5 s.
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ "${stat%% *}" != Z ]]
}

[[ $# -eq 1 ]] || fail "usage: stop.sh FOLDER"
pidfile="$1/pid"
[[ -f "$pidfile" ]] || exit 0
pid="$(cat "$pidfile")"
# Only our launcher is ever signalled: a stale pid file may name a pid the system has given to another process.
if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'lineagegovernance.icebergrest.LoopbackRestServer'; then
  rm -f "$pidfile" "$1/port"
  exit 0
fi
kill -TERM "$pid" 2>/dev/null || true
deadline=$((SECONDS + ${ICEBERG_REST_STOP_TIMEOUT:-10}))
while alive "$pid" && ((SECONDS < deadline)); do sleep 0.05; done
if alive "$pid"; then
  kill -KILL "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.05; done
fi
rm -f "$pidfile" "$1/port"
