#!/usr/bin/env bash
# scripts/redis.sh start|stop|status PORT — a private Redis for this checkout (data under
# var/redis-PORT). Only a Redis this checkout started (its pid file names the process answering
# on the port) is reused or stopped; any other server on the port is left alone.
#   start   prints "started" (a new server) or "running" (ours, already up); exit status 3 when
#           the port is taken by something else, 1 when Redis does not start
#   stop    stops our server on PORT, never another one
#   status  exit status 0 when our server answers on PORT
set -euo pipefail
action=${1:?start, stop or status}; port=${2:-6379}
dir="$(cd "$(dirname "$0")/.." && pwd)/var/redis-$port"
pidfile="$dir/redis.pid"

answers() { redis-cli -p "$port" ping >/dev/null 2>&1; }
ours() {
  [[ -s "$pidfile" ]] || return 1
  local served
  served=$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')
  [[ -n "$served" && "$served" == "$(cat "$pidfile")" ]]
}

case "$action" in
  start)
    if answers; then
      if ours; then echo running; exit 0; fi
      echo "error: port $port is taken by a Redis this checkout did not start" >&2; exit 3
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "error: port $port is taken by another program" >&2; exit 3
    fi
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --dir "$dir" \
      --pidfile "$pidfile" --logfile "$dir/redis.log" --save "" --appendonly no
    for _ in $(seq 50); do
      if answers && ours; then echo started; exit 0; fi
      sleep 0.1
    done
    echo "error: Redis did not start on port $port (see $dir/redis.log)" >&2; exit 1 ;;
  stop)
    if answers && ours; then redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; fi ;;
  status)
    answers && ours ;;
  *)
    echo "usage: scripts/redis.sh start|stop|status PORT" >&2; exit 2 ;;
esac
