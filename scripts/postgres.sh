#!/usr/bin/env bash
# scripts/postgres.sh start|stop|url PORT — a private PostgreSQL cluster for this checkout: data,
# socket and log under var/postgres-PORT, listening on 127.0.0.1:PORT only, trust
# authentication for the local `avia` role. Tuned for tests and benchmarks (no fsync): never
# for data that must survive a crash.
#
# `start` exits 3 (with a loud message) when PostgreSQL is not installed, so a caller can tell
# "cannot run here" from a failure. PostgreSQL refuses to run as root: as root the cluster
# belongs to the `postgres` system user the Debian package creates.
#
# AVIA_PG_LISTEN=ADDRESSES AVIA_PG_TRUST=CIDR (both optional): listen on these addresses too and
# trust the `avia` role from that network — for the two-host test, whose hosts reach the
# database over a private test subnet inside network namespaces (tests/storage).
set -euo pipefail
listen="127.0.0.1${AVIA_PG_LISTEN:+,$AVIA_PG_LISTEN}"
action=${1:?start, stop or url}; port=${2:-15432}
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/var/postgres-$port"
url="postgres://avia@127.0.0.1:$port/avia"

bindir=""
for candidate in /usr/lib/postgresql/*/bin; do
  [[ -x "$candidate/pg_ctl" ]] && bindir=$candidate  # the newest installed major version
done

as_owner=()
if [[ $(id -u) -eq 0 ]]; then
  as_owner=(runuser -u postgres --)
  # A checkout the postgres user cannot reach (one cloned into `mktemp -d`, mode 0700): the
  # cluster lives in a directory of its own under /tmp instead, named after the checkout.
  if ! runuser -u postgres -- test -x "$root" 2>/dev/null; then
    dir="/tmp/avia-postgres-$(printf %s "$root" | sha256sum | cut -c1-12)-$port"
    cd /  # every path below is absolute; runuser would complain of a cwd it cannot enter
  fi
fi

is_running() { [[ -n "$bindir" ]] && "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir" status >/dev/null 2>&1; }

case "$action" in
  url) echo "$url" ;;
  start)
    if [[ -z "$bindir" ]]; then
      echo "!!! PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): the tests" \
           "on PostgreSQL are SKIPPED. Install it: AVIA_WITH_POSTGRES=1 scripts/system-deps.sh" >&2
      exit 3
    fi
    if is_running; then exit 0; fi
    mkdir -p "$dir"
    if [[ ${#as_owner[@]} -gt 0 ]]; then chown postgres: "$dir"; fi
    if [[ ! -f "$dir/PG_VERSION" ]]; then
      "${as_owner[@]}" "$bindir/initdb" -D "$dir" -U avia --auth=trust -E UTF8 \
        --locale=C.UTF-8 >"$dir.initdb.log" 2>&1 || {
        echo "error: initdb failed (see $dir.initdb.log)" >&2; exit 1; }
    fi
    if [[ -n "${AVIA_PG_TRUST:-}" ]] && ! grep -q "$AVIA_PG_TRUST" "$dir/pg_hba.conf"; then
      echo "host all avia $AVIA_PG_TRUST trust" >>"$dir/pg_hba.conf"
    fi
    # Test settings: no fsync, no full-page writes; enough connections for a worker pool.
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 30 start -o \
      "-p $port -c listen_addresses=$listen -c unix_socket_directories=$dir \
       -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
       -c shared_buffers=256MB" >/dev/null || {
      echo "error: PostgreSQL did not start on port $port (see $dir/server.log)" >&2; exit 1; }
    "${as_owner[@]}" "$bindir/psql" -h 127.0.0.1 -p "$port" -U avia -d postgres -tAq \
      -c "SELECT 1 FROM pg_database WHERE datname = 'avia'" | grep -q 1 ||
      "${as_owner[@]}" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U avia avia ;;
  stop)
    if is_running; then "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir" -m fast -w stop >/dev/null; fi ;;
  *) echo "usage: $0 start|stop|url PORT" >&2; exit 2 ;;
esac
