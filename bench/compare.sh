#!/usr/bin/env bash
# Runs the A2A load scenarios against several servers in one run and prints one table with
# ratios: the bare-axum floor, our server with the in-memory store and with sled (durable), and
# the official Rust A2A SDK (repository a2aproject/a2a-rs, crates.io a2a-server-lf 0.5.3 +
# a2a-lf 0.4.2, its in-memory store; label a2a-server-lf-0.5.3) when it can be built from
# crates.io (bench/peers/a2a-lf). A peer that cannot be built is skipped with a message, and the
# table's ratios against it are then "-": ratios only ever compare runs of one invocation.
#
# Rivals (--no-rivals skips them): third-party Rust A2A servers, each built from crates.io in its
# own directory, each running the same echo agent, in memory and in its durable embedded mode:
# turul-a2a 0.2.6 (labels turul-a2a-0.2.6-memory, turul-a2a-0.2.6-sqlite; bench/peers/turul-a2a,
# protoc from the crates.io package protoc-bin-vendored) and a2a-protocol-server 0.15.0 (labels
# a2a-protocol-server-0.15.0-memory, -sqlite; bench/peers/a2a-protocol). Their rows are in the
# table; the ratios stay against the official SDK.
#
# Our server also answers the same SendMessage, SendStreamingMessage and GetTask over its gRPC
# binding (lf.a2a.v1.A2AService on the same port; a2a-bench run --binding grpc: tonic, the
# workers sharing one HTTP/2 connection): rows labelled "<server> grpc", from a second fresh
# server run beside the first, each right after its JSON-RPC row, and a table of gRPC beside
# JSON-RPC (--no-grpc skips them). Beside them, SendMessage (c=16, c=64) and GetTask over
# JSON-RPC on HTTP/2 (a2a-bench run --binding jsonrpc-h2: the HTTP/1.1 rows' requests, hyper's
# HTTP/2 client, the workers sharing one connection as over gRPC): rows labelled
# "<server> jsonrpc-h2", from a third fresh server, each between its JSON-RPC and gRPC rows, so
# that JSON-RPC and gRPC also compare on the same transport (--no-h2 skips them; --no-grpc
# skips both).
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
#                         [--only LABEL[,LABEL...]] [--instructions] [--no-grpc] [--no-h2]
#                         [--scenarios SCENARIO:C[,SCENARIO:C...]] [--no-rivals] [--repeat N]
#                         [--requests N[:WARMUP]]
# --scenarios runs only those rows (e.g. send:16,get:16; default: all).
# --requests N[:WARMUP] measures N successful requests per row, after WARMUP (default N / 2),
# instead of --duration seconds after a warm-up in seconds: every row then does the same work
# on any machine (bench/guard.sh measures this way; on sled, a request's instructions grow
# with the size of the trees a timed window meets).
# --repeat N runs every server's rows N times, the servers interleaved (floor, ours, peer,
# rivals, then again), each time on fresh servers; the table shows each figure's median and
# lists every repetition's throughput under it (the fan-out runs once).
# Labels: bare-axum, ours-memory, ours-sled, ours-fjall (the sled row on fjall, `--store fjall`),
# ours-embedded (our router in an application's own
# axum::serve, bench/src/bin/embedded-axum.rs), a2a-server-lf-0.5.3 (the peer),
# turul-a2a-0.2.6-memory, turul-a2a-0.2.6-sqlite, a2a-protocol-server-0.15.0-memory,
# a2a-protocol-server-0.15.0-sqlite (rivals).
# Environment: CARGO_TARGET_DIR (default: <repo>/target), SERVER_CORE (0), LOAD_CORE (1),
# OURS_BEFORE_BIN (an older build's a2a-server: adds rows ours-memory-before, ours-sled-before),
# OURS_ARGS (extra flags for our server, e.g. "--metrics-listen 127.0.0.1:0 --log-format json"
# to measure telemetry's cost).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=5
warmup=1
subscribers=10000
peer=1
rivals=1
only=""
scenarios=""
instructions=0
grpc=1
h2=1
repeat=1
requests=""
invocation="bench/compare.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) duration=1; warmup=0.5; subscribers=1000 ;;
    --duration) duration="$2"; shift ;;
    --subscribers) subscribers="$2"; shift ;;
    --no-peer) peer=0 ;;
    --no-rivals) rivals=0 ;;
    --only) only="$2"; shift ;;
    --scenarios) scenarios="$2"; shift ;;
    --instructions) instructions=1 ;;
    --no-grpc) grpc=0 ;;
    --no-h2) h2=0 ;;
    --repeat) repeat="$2"; shift ;;
    --requests) requests="$2"; shift ;;
    -h|--help) sed -n 2,55p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ -n "$requests" ]; then
  case "$requests" in
    *:*) requests_warmup="${requests#*:}" ;;
    *) requests_warmup=$((requests / 2)) ;;
  esac
  [[ "${requests%%:*}$requests_warmup" =~ ^[0-9]+$ ]] || { echo "--requests takes N or N:WARMUP" >&2; exit 2; }
fi
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

# The rivals, each built like the peer (skipped with a message when it cannot be built).
# build_rival LABEL PEER_DIR: prints the binary's path, or nothing.
build_rival() {
  local label="$1" peer="$2" bin
  [ "$rivals" = 1 ] && [ "$instructions" = 0 ] || return 0
  [ -z "$only" ] || [[ ",$only," == *",$label-"* ]] || return 0
  echo "== building $label's echo agent in .scratch/$peer-echo" >&2
  if bin="$(nice -n 10 "$root/bench/peers/$peer/build.sh" "$root/.scratch/$peer-echo" 2>"$work/$peer-build.log")" \
    && [ -x "$bin" ]; then
    echo "$bin"
  else
    echo "   skipped $label: it could not be built (see $work/$peer-build.log)" >&2
  fi
}
turul_label="turul-a2a-0.2.6"
turul_bin="$(build_rival "$turul_label" turul-a2a)"
protocol_label="a2a-protocol-server-0.15.0"
protocol_bin="$(build_rival "$protocol_label" a2a-protocol)"

# 10k subscribers need 10k descriptors in the server and in the load generator.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# Servers run in three slots: "j" serves the JSON-RPC rows, "g" the gRPC rows of the same
# server and "h" its JSON-RPC-over-HTTP/2 rows, fresh processes started beside it, so that each
# gRPC or HTTP/2 row runs seconds after its JSON-RPC row (on this shared machine, other jobs come
# and go within minutes) and meets a store of the same size.
declare -A slot_pid=() slot_url=() slot_cg=()
servers_started=0
cleanup() {
  local pid
  for pid in "${slot_pid[@]}"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT

# start_server SLOT LABEL COMMAND...: starts the server pinned to the server core, waits for
# its "listening on http://ADDR" line, and records its pid and URL in SLOT.
start_server() {
  local slot="$1" label="$2"; shift 2
  local log="$work/$label.log"
  slot_cg[$slot]=""
  if [ "$instructions" = 1 ]; then
    # A fresh output file per server process (its dumps are numbered from 1).
    local out="$work/$label-$((++servers_started)).callgrind"
    slot_cg[$slot]="$out"
    set -- valgrind --tool=callgrind --callgrind-out-file="$out" "$@"
  fi
  taskset -c "$server_core" "$@" >"$log.out" 2>"$log.err" &
  slot_pid[$slot]=$!
  slot_url[$slot]=""
  for _ in $(seq 200); do
    slot_url[$slot]="$(grep -o 'listening on http://[^ ]*' "$log.out" 2>/dev/null | head -1 | sed 's/^listening on //' || true)"
    [ -n "${slot_url[$slot]}" ] && return 0
    kill -0 "${slot_pid[$slot]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "   $label did not start (see $log.err)" >&2
  return 1
}

# stop_server SLOT...
stop_server() {
  local slot pid
  for slot in "$@"; do
    pid="${slot_pid[$slot]:-}"
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    slot_pid[$slot]=""
  done
}

# load SLOT LABEL SCENARIO CONCURRENCY [EXTRA ARGS...]
load() {
  local slot="$1" label="$2" scenario="$3" c="$4"; shift 4
  local limit callgrind_args=()
  [ -n "${slot_pid[$slot]:-}" ] || return 0
  if [ -n "$scenarios" ] && [[ ",$scenarios," != *",$scenario:$c,"* ]]; then return 0; fi
  [ -z "${slot_cg[$slot]:-}" ] || callgrind_args=(--callgrind-out "${slot_cg[$slot]}")
  limit="$(awk -v d="$duration" -v w="$warmup" 'BEGIN { printf "%d", d + w + 120 }')"
  local window=(--duration "$duration" --warmup "$warmup")
  if [ -n "$requests" ]; then
    limit=600
    window=(--requests "${requests%%:*}" --warmup-requests "$requests_warmup")
  fi
  timeout "$limit" taskset -c "$load_core" "$bin/a2a-bench" run --url "${slot_url[$slot]}" \
    --scenario "$scenario" -c "$c" "${window[@]}" \
    --server-pid "${slot_pid[$slot]}" --label "$label" --out "$results" "${callgrind_args[@]}" "$@" \
    || echo "   $label $scenario c=$c failed" >&2
}

# bench_server LABEL [--grpc] [EXTRA_LOAD_ARGS...] -- COMMAND...: the unary and streaming
# scenarios on a fresh server, then GetTask and ListTasks on another fresh one with preloaded
# tasks. `@DATA@` in COMMAND is a data directory, fresh for this group (the second server
# reopens the first one's). With --grpc (and without --no-grpc), a second fresh server
# (its own data directory) answers the gRPC rows, each right after its JSON-RPC row: SendMessage
# (c=16, c=64), the stream (c=1, c=16) and GetTask (its tasks preloaded over JSON-RPC); and
# unless --no-h2, a third fresh server answers SendMessage and GetTask over JSON-RPC on HTTP/2,
# each between the JSON-RPC and the gRPC row.
bench_server() {
  local label="$1"; shift
  local extra=() with_grpc=0
  while [ "$1" != "--" ]; do
    if [ "$1" = --grpc ]; then with_grpc="$grpc"; else extra+=("$1"); fi
    shift
  done
  shift
  if [ -n "$only" ] && [[ ",$only," != *",$label,"* ]]; then return 0; fi
  local with_h2=0
  [ "$with_grpc" = 1 ] && with_h2="$h2"
  local jdata="$work/data-$label" gdata="$work/data-$label-grpc" hdata="$work/data-$label-h2"
  local jcmd=() gcmd=() hcmd=() a
  for a in "$@"; do
    jcmd+=("${a//@DATA@/$jdata}"); gcmd+=("${a//@DATA@/$gdata}"); hcmd+=("${a//@DATA@/$hdata}")
  done
  rm -rf "$jdata" "$gdata" "$hdata"
  echo "== $label$([ "$with_grpc" = 1 ] && echo ", JSON-RPC$([ "$with_h2" = 1 ] && echo ", JSON-RPC over HTTP/2") and gRPC")" >&2
  # pair SCENARIO C [ARGS...]: the JSON-RPC row, then (send and get) the JSON-RPC-over-HTTP/2
  # row, then the gRPC row.
  pair() {
    load j "$label" "$@" "${extra[@]}"
    if [ "$with_h2" = 1 ] && { [ "$1" = send ] || [ "$1" = get ]; }; then
      load h "$label" "$@" --binding jsonrpc-h2
    fi
    [ "$with_grpc" = 1 ] && load g "$label" "$@" --binding grpc
    return 0
  }
  # start_others: the gRPC and HTTP/2 servers beside the JSON-RPC one.
  start_others() {
    if [ "$with_grpc" = 1 ]; then start_server g "$label-grpc" "${gcmd[@]}" || with_grpc=0; fi
    if [ "$with_h2" = 1 ]; then start_server h "$label-h2" "${hcmd[@]}" || with_h2=0; fi
    return 0
  }
  start_server j "$label" "${jcmd[@]}" || return 0
  start_others
  load j "$label" card 16 "${extra[@]}"
  pair send 16
  pair send 64
  pair stream 1
  pair stream 16
  stop_server j g h
  start_server j "$label" "${jcmd[@]}" || return 0
  start_others
  pair get 16 --preload 100
  load j "$label" list 16 --preload 1000 --pages 0 "${extra[@]}"
  stop_server j g h
  rm -rf "$jdata" "$gdata" "$hdata"
}

# fan_out LABEL COMMAND...: SubscribeToTask fan-out on the demo agent's countdown task.
fan_out() {
  local label="$1"; shift
  [ "$subscribers" -gt 0 ] || return 0
  if [ -n "$only" ] && [[ ",$only," != *",$label,"* ]]; then return 0; fi
  echo "== $label: $subscribers subscribers on one task" >&2
  start_server j "$label" "$@" || return 0
  load j "$label" subscribe "$subscribers" --subscribers "$subscribers"
  stop_server j
}

read -r -a ours_args <<<"${OURS_ARGS:-}"
flush_line=""
for rep in $(seq "$repeat"); do
[ "$repeat" = 1 ] || echo "== repetition $rep of $repeat" >&2
bench_server bare-axum -- "$bin/bare-axum" --listen 127.0.0.1:0
bench_server ours-memory --grpc -- "$bin/a2a-server" --memory --listen 127.0.0.1:0 --retention-hours 0 "${ours_args[@]}"
bench_server ours-sled --grpc -- "$bin/a2a-server" --data-dir @DATA@ --listen 127.0.0.1:0 --retention-hours 0 "${ours_args[@]}"
# An earlier build of our server beside this one (OURS_BEFORE_BIN, e.g. a release a2a-server
# built from an older commit in a worktree of its own), so that "against before" compares
# within one run: rows ours-memory-before and ours-sled-before.
if [ -n "${OURS_BEFORE_BIN:-}" ]; then
  bench_server ours-memory-before -- "$OURS_BEFORE_BIN" --memory --listen 127.0.0.1:0 --retention-hours 0 "${ours_args[@]}"
  bench_server ours-sled-before -- "$OURS_BEFORE_BIN" --data-dir @DATA@ --listen 127.0.0.1:0 --retention-hours 0 "${ours_args[@]}"
fi
# The same store on fjall instead of sled (`--store fjall`, a fresh directory per group).
bench_server ours-fjall --grpc -- "$bin/a2a-server" --data-dir @DATA@ --store fjall --listen 127.0.0.1:0 --retention-hours 0 "${ours_args[@]}"
# Our router as an application embeds it: Server::into_router() in its own axum::serve, with
# the server's protections (bench/src/bin/embedded-axum.rs); in memory, like ours-memory.
bench_server ours-embedded -- "$bin/embedded-axum" --listen 127.0.0.1:0
# The disk's own flush latency, beside the durable rows: the floor under a first event that
# is flushed before it is sent (a2a-bench flush: 4 KiB appended, then fdatasync).
if [ "$rep" = 1 ] && [ "$instructions" = 0 ] && { [ -z "$only" ] || [[ ",$only," == *",ours-sled,"* ]] || [[ ",$only," == *",ours-fjall,"* ]]; }; then
  flush_line="$(taskset -c "$server_core" "$bin/a2a-bench" flush --dir "$work" --samples 500)" || flush_line=""
fi
if [ -n "$peer_bin" ]; then
  # JSON-RPC and HTTP+JSON at the root, TCP_NODELAY on, its InMemoryTaskStore
  # (bench/peers/a2a-lf/main.rs); it mints task ids itself, as ours does.
  bench_server "$peer_label" -- "$peer_bin" 127.0.0.1:0
fi
if [ -n "$turul_bin" ]; then
  # Its README's set-up (bench/peers/turul-a2a/main.rs): in memory, then its SQLite store.
  bench_server "$turul_label-memory" -- "$turul_bin" 127.0.0.1:0
  bench_server "$turul_label-sqlite" -- "$turul_bin" 127.0.0.1:0 --sqlite @DATA@/tasks.db
fi
if [ -n "$protocol_bin" ]; then
  # Its README's production set-up (bench/peers/a2a-protocol/main.rs), then its SQLite store.
  bench_server "$protocol_label-memory" -- "$protocol_bin" 127.0.0.1:0
  bench_server "$protocol_label-sqlite" -- "$protocol_bin" 127.0.0.1:0 --sqlite @DATA@/tasks.db
fi
done
fan_out ours-memory "$bin/a2a-server" --memory --listen 127.0.0.1:0 --retention-hours 0
rm -rf "$work/sled-fanout"
fan_out ours-sled "$bin/a2a-server" --data-dir "$work/sled-fanout" --listen 127.0.0.1:0 --retention-hours 0
rm -rf "$work/sled-fanout"

echo
window_text="${duration}s measured after ${warmup}s warm-up per row"
[ -z "$requests" ] || window_text="${requests%%:*} requests measured after $requests_warmup per row"
echo "Machine: $("$bin/a2a-bench" machine); servers on core $server_core, load generator on core $load_core; $window_text."
if [ -z "$peer_bin" ]; then
  echo
  echo "The peer $peer_label did not run in this invocation (--no-peer, --only, or its build failed): no ratios against it."
fi
echo
"$bin/a2a-bench" report --peer "$peer_label" "$results"
if [ -n "$flush_line" ]; then
  echo
  echo "The disk's flush in the same run (a2a-bench flush in $work, 500 samples): $flush_line"
  echo "(ours-sled's first event p50 at c=1 above is flushed before it is sent; read it against fdatasync_p50_ms)"
fi
# The run as a results file (bench/results.py), the shape bench/chart.py draws: copy it to
# bench/results/ to publish it as the current figures.
if command -v python3 >/dev/null; then
  commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || true)"
  [ -z "$commit" ] || git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit-dirty"
  python3 "$root/bench/results.py" "$results" --out "$work/run.json" \
    --command "CARGO_TARGET_DIR=$CARGO_TARGET_DIR $invocation" \
    --machine "$("$bin/a2a-bench" machine); servers on core $server_core, load generator on core $load_core" \
    --method "JSON-RPC over HTTP/1.1 unless a row says otherwise; $window_text; $repeat repetition(s)" \
    ${commit:+--commit "$commit"} ${flush_line:+--flush "$flush_line"} \
    || echo "bench/results.py could not write $work/run.json" >&2
  echo "Results file: $work/run.json (python3 bench/chart.py $work/run.json draws it)" >&2
fi
echo
echo "Raw results: $results" >&2
