#!/usr/bin/env bash
# Where a server's CPU per blocking SendMessage goes, by where it runs: the kernel (the socket
# calls, page faults, and waking the load generator) or user space (the server's own code, the
# C library). compare.sh's ratios are of whole CPU times; this tells how much of each is the
# server's code, which a change to our code can move, and how much is the kernel, which it
# cannot. On a virtual machine the kernel's part can be large, and it moves the ratios from one
# machine to the next.
#
# For each label: a fresh server pinned to core 0, the load generator on core 1 (as in
# compare.sh), a warm-up row, then one row of DURATION seconds at C clients during which
# `perf record -e cpu-clock` samples the server (software clock: it works where a virtual
# machine exposes no hardware counters) and `perf stat -a` counts inter-processor interrupts
# and wake-ups on the whole machine. Per request: the server's CPU (a2a-bench, from /proc), its
# share in the kernel and of that the share spent with interrupts off in
# `_raw_spin_unlock_irqrestore` (on loopback, almost all of it waking the load generator's
# thread when a response arrives), its share in the binary and in libc (memcpy, memcmp, and
# malloc for servers on the system allocator), and the IPIs sent.
#
# Usage: bench/cpusplit.sh [--duration SECONDS] [-c CLIENTS] [--only LABEL[,LABEL...]]
# Labels: bare-axum, ours-memory, ours-embedded, ours-memory-before (BEFORE_BIN: an older
# build's a2a-server), a2a-server-lf-0.5.3 (PEER_BIN, or .scratch/a2a-lf-echo: see
# bench/peers/a2a-lf/build.sh). Defaults: 4 s, 16 clients. Needs perf (Debian's linux-perf)
# and root (or perf_event_paranoid at most 0); run it on an otherwise idle machine.
# Environment: CARGO_TARGET_DIR (default <repo>/target), PEER_BIN, BEFORE_BIN, SERVER_CORE (0),
# LOAD_CORE (1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
duration=4
clients=16
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift ;;
    -c) clients="$2"; shift ;;
    --only) only="$2"; shift ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ "$duration" =~ ^[0-9]+$ && "$clients" =~ ^[0-9]+$ ]] || { echo "--duration and -c take whole numbers" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf (Debian's linux-perf) is required" >&2; exit 1; }
source "$root/bench/pinned.sh"
pinned_setup cpusplit

# share FILE SORT [FILTER...]: the percentages of `perf report --sort SORT`, as "name percent".
share() {
  local file="$1" sort="$2"; shift 2
  perf report -i "$file" --no-children --sort "$sort" --stdio "$@" 2>/dev/null \
    | awk '/^ +[0-9.]+%/ { sub("%", "", $1); print $NF, $1 }'
}

# bench LABEL COMMAND...: a fresh server, a warm-up row, then the sampled row.
bench() {
  local label="$1" out stat cpu reqs
  shift
  if [ -n "$only" ] && [[ ",$only," != *",$label,"* ]]; then return 0; fi
  pinned_start "$label" "$@" || return 0
  if ! taskset -c "$load_core" "$bin/a2a-bench" run --url "$url" --scenario send -c "$clients" \
    --duration 2 --warmup 0.5 >"$work/load" 2>&1; then
    echo "   $label: the warm-up failed: $(tail -3 "$work/load")" >&2
    pinned_stop
    return 0
  fi
  # The load runs a second longer on each side than the sampled window.
  taskset -c "$load_core" "$bin/a2a-bench" run --url "$url" --scenario send -c "$clients" \
    --duration $((duration + 2)) --warmup 0.5 --server-pid "$pid" >"$work/load" 2>&1 &
  local load=$!
  sleep 1.5
  perf stat -a -x, -o "$work/stat" -e ipi:ipi_send_cpu,sched:sched_wakeup -- \
    perf record -q -F 4999 -e cpu-clock -p "$pid" -o "$work/$label.data" -- sleep "$duration" \
    >/dev/null 2>&1
  wait "$load" || true
  pinned_stop
  out="$(grep '^server send' "$work/load" | head -1)"
  cpu="$(grep -o 'server CPU [0-9.]*' <<<"$out" | grep -o '[0-9.]*$')"
  reqs="$(grep -o '[0-9]* req/s' <<<"$out" | grep -o '[0-9]*')"
  share "$work/$label.data" dso >"$work/dso"
  share "$work/$label.data" sym --dsos '[kernel.kallsyms]' >"$work/ksym"
  stat="$(awk -F, '/ipi_send_cpu/ {i=$1} /sched_wakeup/ {w=$1} END {print i + 0, w + 0}' "$work/stat")"
  awk -v label="$label" -v cpu="$cpu" -v reqs="$reqs" -v secs="$duration" -v stat="$stat" \
    -v exe="$(basename "$1")" '
    FNR == 1 { f++ }
    f == 1 { if ($1 == "[kernel.kallsyms]") k = $2; else if ($1 == exe) b = $2;
             else if ($1 == "libc.so.6") c = $2; else o += $2 }
    f == 2 && $1 == "_raw_spin_unlock_irqrestore" { w = $2 }
    END {
      split(stat, s, " "); n = reqs * secs
      printf "%-22s %7d req/s %6.1f µs/req: kernel %5.1f (irqs off %4.1f)  binary %5.1f  libc %4.1f  other %3.1f  IPIs/req %.2f  wake-ups/req %.2f\n",
        label, reqs, cpu, cpu * k / 100, cpu * w / 100, cpu * b / 100, cpu * c / 100, cpu * o / 100,
        n ? s[1] / n : 0, n ? s[2] / n : 0
    }' "$work/dso" "$work/ksym"
}

echo "Machine: $("$bin/a2a-bench" machine); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "SendMessage at $clients clients, ${duration}s sampled (perf cpu-clock), one fresh server per label; µs of server CPU per request:"
bench bare-axum "$bin/bare-axum" --listen 127.0.0.1:0
bench ours-memory "$bin/a2a-server" --memory --listen 127.0.0.1:0 --retention-hours 0
bench ours-embedded "$bin/embedded-axum" --listen 127.0.0.1:0
if [ -n "${BEFORE_BIN:-}" ]; then
  bench ours-memory-before "$BEFORE_BIN" --memory --listen 127.0.0.1:0 --retention-hours 0
fi
if [ -x "$peer_bin" ]; then
  bench a2a-server-lf-0.5.3 "$peer_bin" 127.0.0.1:0
else
  echo "   a2a-server-lf-0.5.3 skipped: no $peer_bin (bench/peers/a2a-lf/build.sh builds it)" >&2
fi
