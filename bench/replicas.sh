#!/usr/bin/env bash
# Several replicas of a2a-server on one PostgreSQL database (issue 14), against the in-memory and
# sled stores (one process each):
#
#  1. blocking SendMessage throughput at c=16 and c=64 (`a2a-bench run -s send`, the load spread
#     round robin over the replicas), with the servers' CPU (sum over the replicas),
#     PostgreSQL's (every process named `postgres`) and the rest of the machine's: memory, sled,
#     then 1, 2 and 3 replicas on PostgreSQL (a fresh schema each) and 1 replica with a pool of
#     64, these four in turn $ROUNDS times (a shared machine drifts; rounds show how much);
#  2. cross-replica delivery latency (`a2a-bench replicas`: countdown tasks on A, watched on A
#     and on B);
#  3. recovery after `kill -9` of a replica running countdown tasks (`a2a-bench recovery`, 3
#     replicas, --lease-ttl-secs $LEASE_TTL), $RECOVERY_RUNS times, each killing at another
#     point of the heartbeat cycle (the tasks run 1.5 + 0.7 × run seconds first).
#
# Nothing is pinned: the servers, the load generator and PostgreSQL share the machine's cores.
# The schema $SCHEMA is dropped at the start of each group and at exit.
#
# With OURS_BEFORE_BIN=/path/to/an/older/a2a-server, every PostgreSQL row of parts 1 and 2 is
# run a second time, right after, with that binary and labelled "<label>-before": a change and
# the build before it, side by side in one run (e.g. the binary built from the commit before
# issue 41's PostgreSQL change, 5552db7).
#
# Usage: bench/replicas.sh [--duration SECONDS] [--no-build] [--only send|latency|recovery]
# Environment: CARGO_TARGET_DIR (default: <repo>/target),
#              PG_URL (default postgres://postgres@127.0.0.1:5432/test),
#              SCHEMA (default a2a_bench_replicas), LEASE_TTL (3), RECOVERY_RUNS (5),
#              ROUNDS (3), REPLICAS (the replica counts of part 1, default "1 2 3"),
#              POOL64 (1: the 1-replica row with a pool of 64; 0: skip it),
#              OURS_BEFORE_BIN (unset: no "-before" rows).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=5
warmup=1
build=1
only="send,latency,recovery"
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift ;;
    --no-build) build=0 ;;
    --only) only="$2"; shift ;;
    -h|--help) sed -n 2,30p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
bin="$CARGO_TARGET_DIR/release"
pg_url="${PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
schema="${SCHEMA:-a2a_bench_replicas}"
lease_ttl="${LEASE_TTL:-3}"
recovery_runs="${RECOVERY_RUNS:-5}"
rounds="${ROUNDS:-3}"
replica_counts="${REPLICAS:-1 2 3}"
pool64="${POOL64:-1}"
before_bin="${OURS_BEFORE_BIN:-}"
if [ -n "$before_bin" ] && [ ! -x "$before_bin" ]; then
  echo "OURS_BEFORE_BIN=$before_bin is not an executable" >&2
  exit 2
fi
part() { [[ ",$only," == *",$1,"* ]]; }

if [ "$build" = 1 ]; then
  echo "== building (release)" >&2
  (cd "$root" && cargo build --release --quiet -p a2a-server -p a2a-bench --features a2a-server/cli)
fi

work="$root/.scratch/bench/replicas-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$work"
results="$work/results.jsonl"
: > "$results"

export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
psql_do() { psql "$pg_url" -qX -v ON_ERROR_STOP=1 -c "$1" >/dev/null; }
fresh_schema() { psql_do "DROP SCHEMA IF EXISTS $schema CASCADE"; }

pids=()
urls=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=(); urls=()
}
trap 'cleanup; fresh_schema || true' EXIT

# The a2a-server binary `start` runs (switched to OURS_BEFORE_BIN by `with_before`).
server="$bin/a2a-server"

# start LABEL ARGS...: one a2a-server on a free port; appends to pids and urls.
start() {
  local label="$1"; shift
  local log="$work/$label-${#pids[@]}"
  "$server" --listen 127.0.0.1:0 --retention-hours 0 "$@" >"$log.out" 2>"$log.err" &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 300); do
    local url
    url="$(grep -o 'http://[0-9.:]*' "$log.out" 2>/dev/null | head -1 || true)"
    if [ -n "$url" ]; then urls+=("$url"); return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "   $label did not start (see $log.err)" >&2
  return 1
}

# replicas N LABEL [ARGS...]: N replicas on a fresh schema.
replicas() {
  local n="$1" label="$2"; shift 2
  fresh_schema
  for i in $(seq "$n"); do
    start "$label" --postgres "$pg_url" --postgres-schema "$schema" --replica-id "$label-$i" "$@"
  done
}

join() { local IFS=,; echo "$*"; }

# with_before LABEL COMMAND...: runs COMMAND LABEL, then, with OURS_BEFORE_BIN set, COMMAND
# LABEL-before with that binary.
with_before() {
  local label="$1"; shift
  "$@" "$label"
  if [ -n "$before_bin" ]; then
    server="$before_bin"
    "$@" "$label-before"
    server="$bin/a2a-server"
  fi
}

# pg_send N LABEL [ARGS...]: N replicas on a fresh schema, SendMessage over them.
pg_send() {
  local n="$1"; shift
  local label="${!#}"
  local args=("${@:1:$#-1}")
  replicas "$n" "$label" "${args[@]}"; send "$label"; cleanup
}

# pg_latency LABEL: cross-replica delivery latency on 2 replicas.
pg_latency() {
  replicas 2 "$1"
  "$bin/a2a-bench" replicas --url "$(join "${urls[@]}")" --tasks 20 --countdown 200
  cleanup
}

# send LABEL: SendMessage at c=16 and c=64 over every started server.
send() {
  local label="$1"
  for c in 16 64; do
    timeout $((duration + warmup + 120)) "$bin/a2a-bench" run --url "$(join "${urls[@]}")" \
      -s send -c "$c" --duration "$duration" --warmup "$warmup" \
      --server-pid "$(join "${pids[@]}")" --db-process postgres --label "$label" \
      --out "$results" || echo "   $label c=$c failed" >&2
  done
}

echo "== $("$bin/a2a-bench" machine)"
echo "== $(psql "$pg_url" -AtX -c 'select version()')"

if part send; then
  echo "== SendMessage throughput"
  start memory --memory; send memory; cleanup
  start sled --data-dir "$work/sled"; send sled; cleanup
  for round in $(seq "$rounds"); do
    for n in $replica_counts; do with_before "pg-x$n" pg_send "$n"; done
    [ "$pool64" = 0 ] || with_before pg-x1-pool64 pg_send 1 --postgres-pool 64
  done
  "$bin/a2a-bench" report "$results" || true
fi

if part latency; then
  echo "== cross-replica delivery latency (2 replicas)"
  with_before pg-latency pg_latency
fi

part recovery || recovery_runs=0
[ "$recovery_runs" = 0 ] || echo "== recovery after kill -9 (3 replicas, --lease-ttl-secs $lease_ttl)"
for run in $(seq "$recovery_runs"); do
  replicas 3 "pg-recovery$run" --lease-ttl-secs "$lease_ttl"
  after="$(awk -v r="$run" 'BEGIN { print 1.5 + 0.7 * r }')"
  "$bin/a2a-bench" recovery --url "$(join "${urls[@]}")" --kill-pid "${pids[0]}" --tasks 20 \
    --after "$after"
  wait "${pids[0]}" 2>/dev/null || true
  # Which survivor resumed them (its log line "resumed tasks of a replica that stopped").
  for i in 2 3; do
    sed 's/\x1b\[[0-9;]*m//g' "$work/pg-recovery$run-$((i - 1)).err" | grep -o 'resumed tasks of a replica that stopped tasks=[0-9]*' \
      | sed "s/^/  replica $i: /" || true
  done
  cleanup
done
echo "raw results: $results; server logs: $work"
