#!/usr/bin/env bash
# scripts/redis.sh start|stop PORT — a private Redis for this checkout (data under var/redis-PORT).
set -euo pipefail
action=${1:?start or stop}; port=${2:-6379}
dir="$(cd "$(dirname "$0")/.." && pwd)/var/redis-$port"
mkdir -p "$dir"
case "$action" in
  start)
    if redis-cli -p "$port" ping >/dev/null 2>&1; then exit 0; fi
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --dir "$dir" \
      --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save "" --appendonly no
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && exit 0; sleep 0.1; done
    echo "error: Redis did not start on port $port (see $dir/redis.log)" >&2; exit 1 ;;
  stop)
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true ;;
esac
