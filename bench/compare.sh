#!/usr/bin/env bash
# Runs the A2A load scenarios against several servers in one run and prints one table with
# ratios: the bare-axum floor, our server with the in-memory store and with sled (durable), and
# the official Rust A2A SDK (repository a2aproject/a2a-rs, crates.io a2a-server-lf 0.5.3 +
# a2a-lf 0.4.2, its in-memory store; label a2a-server-lf-0.5.3) when it can be built from
# crates.io (bench/peers/a2a-lf). A peer that cannot be built is skipped with a message, and the
# table's ratios against it are then "-": ratios only ever compare runs of one invocation.
#
# Each server runs pinned to core 0 and the load generator to core 1 (taskset); server CPU per
# request comes from /proc/<pid>/stat over the measured window. Every run is bounded in time;
# servers are stopped on exit. Only loopback addresses are used.
#
# With --instructions, every server runs under valgrind's callgrind instead, and each row
# reports the server's user-space instructions per request over the measured window: slow, but
# the same from run to run and machine to machine, where CPU time moves with the machine's
# other load (no fan-out rows in this mode).
#
# Usage: bench/compare.sh [--quick] [--duration SECONDS] [--subscribers N] [--no-peer]
#                         [--only LABEL[,LABEL...]] [--instructions]
# Labels: bare-axum, ours-memory, ours-sled, a2a-server-lf-0.5.3 (the peer).
# Environment: CARGO_TARGET_DIR (default: <repo>/target), SERVER_CORE (0), LOAD_CORE (1).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=5
warmup=1
subscribers=10000
peer=1
only=""
instructions=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) duration=1; warmup=0.5; subscribers=1000 ;;
    --duration) duration="$2"; shift ;;
    --subscribers) subscribers="$2"; shift ;;
    --no-peer) peer=0 ;;
    --only) only="$2"; shift ;;
    --instructions) instructions=1 ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

server_core="${SERVER_CORE:-0}"
load_core="${LOAD_CORE:-1}"
command -v taskset >/dev/null || { echo "taskset (util-linux) is required" >&2; exit 1; }
if [ "$instructions" = 1 ]; then
  command -v valgrind >/dev/null || { echo "--instructions needs valgrind" >&2; exit 1; }
  # Under callgrind a server is ~50 times slower: a longer warm-up, and no fan-out.
  warmup=2
  subscribers=0
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
bin="$CARGO_TARGET_DIR/release"

echo "== building (release)" >&2
(cd "$root" && cargo build --release --quiet -p a2a-server -p a2a-bench --features a2a-server/cli)

stamp="$(date +%Y%m%d-%H%M%S)"
work="$root/.scratch/bench/$stamp"
mkdir -p "$work"
results="$work/results.jsonl"
: > "$results"

# The peer: the official Rust SDK, built from crates.io in its own directory and target.
peer_label="a2a-server-lf-0.5.3"
peer_bin=""
if [ "$peer" = 1 ] && { [ -z "$only" ] || [[ ",$only," == *",$peer_label,"* ]]; }; then
  echo "== building the official Rust SDK's echo agent (a2a-server-lf 0.5.3 + a2a-lf 0.4.2) in .scratch/a2a-lf-echo" >&2
  if peer_bin="$(nice -n 10 "$root/bench/peers/a2a-lf/build.sh" "$root/.scratch/a2a-lf-echo" 2>"$work/a2a-lf-build.log")" \
    && [ -x "$peer_bin" ]; then
    :
  else
    echo "   skipped $peer_label: it could not be built (see $work/a2a-lf-build.log)" >&2
    peer_bin=""
  fi
fi

# 10k subscribers need 10k descriptors in the server and in the load generator.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

server_pid=""
server_url=""
servers_started=0
callgrind_args=()
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# start_server LABEL COMMAND...: starts the server pinned to the server core, waits for its
# "listening on http://ADDR" line, sets server_pid and server_url.
start_server() {
  local label="$1"; shift
  local log="$work/$label.log"
  callgrind_args=()
  if [ "$instructions" = 1 ]; then
    # A fresh output file per server process (its dumps are numbered from 1).
    local out="$work/$label-$((++servers_started)).callgrind"
    callgrind_args=(--callgrind-out "$out")
    set -- valgrind --tool=callgrind --callgrind-out-file="$out" "$@"
  fi
  taskset -c "$server_core" "$@" >"$log.out" 2>"$log.err" &
  server_pid=$!
  for _ in $(seq 200); do
    server_url="$(grep -o 'http://[0-9.:]*' "$log.out" 2>/dev/null | head -1 || true)"
    [ -n "$server_url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "   $label did not start (see $log.err)" >&2
  return 1
}

stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}

# load LABEL SCENARIO CONCURRENCY [EXTRA ARGS...]
load() {
  local label="$1" scenario="$2" c="$3"; shift 3
  local limit
  limit="$(awk -v d="$duration" -v w="$warmup" 'BEGIN { printf "%d", d + w + 120 }')"
  timeout "$limit" taskset -c "$load_core" "$bin/a2a-bench" run --url "$server_url" \
    --scenario "$scenario" -c "$c" --duration "$duration" --warmup "$warmup" \
    --server-pid "$server_pid" --label "$label" --out "$results" "${callgrind_args[@]}" "$@" \
    || echo "   $label $scenario c=$c failed" >&2
}

# bench_server LABEL EXTRA_LOAD_ARGS -- COMMAND...: the unary and streaming scenarios on a
# fresh server, then GetTask and ListTasks on another fresh one with preloaded tasks.
bench_server() {
  local label="$1"; shift
  local extra=()
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift
  if [ -n "$only" ] && [[ ",$only," != *",$label,"* ]]; then return 0; fi
  echo "== $label" >&2
  start_server "$label" "$@" || return 0
  load "$label" card 16 "${extra[@]}"
  load "$label" send 16 "${extra[@]}"
  load "$label" send 64 "${extra[@]}"
  load "$label" stream 1 "${extra[@]}"
  load "$label" stream 16 "${extra[@]}"
  stop_server
  start_server "$label" "$@" || return 0
  load "$label" get 16 --preload 100 "${extra[@]}"
  load "$label" list 16 --preload 1000 --pages 0 "${extra[@]}"
  stop_server
}

# fan_out LABEL COMMAND...: SubscribeToTask fan-out on the demo agent's countdown task.
fan_out() {
  local label="$1"; shift
  [ "$subscribers" -gt 0 ] || return 0
  if [ -n "$only" ] && [[ ",$only," != *",$label,"* ]]; then return 0; fi
  echo "== $label: $subscribers subscribers on one task" >&2
  start_server "$label" "$@" || return 0
  load "$label" subscribe "$subscribers" --subscribers "$subscribers"
  stop_server
}

bench_server bare-axum -- "$bin/bare-axum" --listen 127.0.0.1:0
bench_server ours-memory -- "$bin/a2a-server" --memory --listen 127.0.0.1:0 --retention-hours 0
rm -rf "$work/sled"
bench_server ours-sled -- "$bin/a2a-server" --data-dir "$work/sled" --listen 127.0.0.1:0 --retention-hours 0
if [ -n "$peer_bin" ]; then
  # JSON-RPC and HTTP+JSON at the root, TCP_NODELAY on, its InMemoryTaskStore
  # (bench/peers/a2a-lf/main.rs); it mints task ids itself, as ours does.
  bench_server "$peer_label" -- "$peer_bin" 127.0.0.1:0
fi
fan_out ours-memory "$bin/a2a-server" --memory --listen 127.0.0.1:0 --retention-hours 0
rm -rf "$work/sled-fanout"
fan_out ours-sled "$bin/a2a-server" --data-dir "$work/sled-fanout" --listen 127.0.0.1:0 --retention-hours 0
rm -rf "$work/sled" "$work/sled-fanout"

echo
echo "Machine: $("$bin/a2a-bench" machine); servers on core $server_core, load generator on core $load_core; ${duration}s measured after ${warmup}s warm-up per row."
if [ -z "$peer_bin" ]; then
  echo
  echo "The peer $peer_label did not run in this invocation (--no-peer, --only, or its build failed): no ratios against it."
fi
echo
"$bin/a2a-bench" report --peer "$peer_label" "$results"
echo
echo "Raw results: $results" >&2
