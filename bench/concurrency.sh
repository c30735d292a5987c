#!/usr/bin/env bash
# Whether a server's cost per SendMessage moves with concurrency (issue 40: at 64 clients our
# throughput fell where the SDK's rose), told apart from the machine's drift. For each label,
# ONE fresh server (pinned to core 0, the load generator on core 1, as in compare.sh) is sent
# blocking SendMessages at 16 and at 64 clients alternately, ROUNDS pairs of rows, so that
# whatever else the machine does falls on both concurrencies alike. Each row reports the
# throughput, the server's CPU per request (a2a-bench, from /proc/<pid>/stat), and per request
# the server's minor page faults and context switches (from /proc, over the same run).
#
# In compare.sh the c=64 row runs on the server that the c=16 row filled (some 200,000 tasks
# in memory); --fill SECONDS first sends at 64 clients for that long, so that a run with
# --fill 0 and one with --fill 30 tell the store's size apart from the concurrency.
#
# Usage: bench/concurrency.sh [--rounds N] [--duration SECONDS] [--fill SECONDS]
#                             [--only LABEL[,LABEL...]]
# Labels: ours-memory (the a2a-server binary: Server::serve), ours-embedded (embedded-axum: our
# router in the application's own axum::serve), a2a-server-lf-0.5.3 (the official SDK's echo
# agent, when PEER_BIN names it or .scratch/a2a-lf-echo holds it: bench/peers/a2a-lf/build.sh).
# Defaults: 3 rounds, 3 s per row after 0.5 s of warm-up, no fill. Takes about
# labels x rounds x 2 x (duration + 1) seconds, plus a release build.
# Environment: CARGO_TARGET_DIR (default <repo>/target), PEER_BIN, SERVER_CORE (0), LOAD_CORE (1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds=3
duration=3
fill=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --fill) fill="$2"; shift ;;
    --only) only="$2"; shift ;;
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for n in "$rounds" "$duration" "$fill"; do
  [[ "$n" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "--rounds, --duration and --fill take numbers" >&2; exit 2; }
done
source "$root/bench/pinned.sh"
pinned_setup concurrency

# counters PID: minor faults, then voluntary + involuntary context switches of every thread.
counters() {
  local faults switches
  faults="$(awk '{print $10}' "/proc/$1/stat")"
  switches="$(cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}')"
  echo "$faults $switches"
}

# row LABEL URL C: one measured row.
row() {
  local label="$1" url="$2" c="$3" f0 x0 f1 x1 out line requests
  read -r f0 x0 < <(counters "$pid")
  out="$(timeout $((${duration%.*} + 120)) taskset -c "$load_core" "$bin/a2a-bench" run --url "$url" \
    --scenario send -c "$c" --duration "$duration" --warmup 0.5 --server-pid "$pid" 2>&1)" \
    || { echo "   $label c=$c failed: $out" >&2; return 0; }
  read -r f1 x1 < <(counters "$pid")
  line="$(grep '^server send' <<<"$out" | head -1)"
  # The counters cover the warm-up too: divided by the requests of the warm-up and the window,
  # estimated as the row's req/s times their length.
  requests="$(awk -v d="$duration" -v r="$(grep -o '[0-9]* req/s' <<<"$line" | grep -o '[0-9]*')" \
    'BEGIN { printf "%d", r * (d + 0.5) }')"
  printf '%-22s c=%-3s %7s req/s  %s  faults/req %s  switches/req %s\n' "$label" "$c" \
    "$(grep -o '[0-9]* req/s' <<<"$line" | grep -o '[0-9]*')" \
    "$(grep -o 'server CPU [0-9.]* µs/req' <<<"$line")" \
    "$(awk -v a="$f0" -v b="$f1" -v n="$requests" 'BEGIN { printf "%.3f", n ? (b - a) / n : 0 }')" \
    "$(awk -v a="$x0" -v b="$x1" -v n="$requests" 'BEGIN { printf "%.3f", n ? (b - a) / n : 0 }')"
}

# bench LABEL COMMAND...: a fresh server, optionally filled, then the alternating rows.
bench() {
  local label="$1"; shift
  if [ -n "$only" ] && [[ ",$only," != *",$label,"* ]]; then return 0; fi
  pinned_start "$label" "$@" || return 0
  if [ "$fill" != 0 ]; then
    taskset -c "$load_core" "$bin/a2a-bench" run --url "$url" --scenario send -c 64 \
      --duration "$fill" --warmup 0 >/dev/null 2>&1 || echo "   $label: the fill failed" >&2
  fi
  for _ in $(seq "$rounds"); do
    row "$label" "$url" 16
    row "$label" "$url" 64
  done
  pinned_stop
}

echo "Machine: $("$bin/a2a-bench" machine); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$rounds rounds of c=16 then c=64, ${duration}s each after 0.5s of warm-up, on one fresh server per label$([ "$fill" = 0 ] || echo ", filled first by ${fill}s of SendMessage at c=64")."
bench ours-memory "$bin/a2a-server" --memory --listen 127.0.0.1:0 --retention-hours 0
bench ours-embedded "$bin/embedded-axum" --listen 127.0.0.1:0
if [ -x "$peer_bin" ]; then
  bench a2a-server-lf-0.5.3 "$peer_bin" 127.0.0.1:0
elif [ -z "$only" ] || [[ ",$only," == *",a2a-server-lf-0.5.3,"* ]]; then
  echo "   skipped a2a-server-lf-0.5.3: no binary at $peer_bin (PEER_BIN, or bench/peers/a2a-lf/build.sh)" >&2
fi
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
