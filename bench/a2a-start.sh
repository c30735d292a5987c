#!/usr/bin/env bash
# The `a2a` binary's size and start time (docs/inspect.md, "Size and start time"): its size as
# built and stripped, then RUNS (default 20) runs each of `a2a --version` and of `a2a inspect`
# until it prints its URL, timed from the fork to that moment (and the CPU time of the first);
# min, median and max in ms. The load of the machine is printed too: say it with the figures.
#
#   cargo build --release -p a2a-client --bin a2a --features cli
#   bash bench/a2a-start.sh [target/release/a2a]
set -euo pipefail

bin="${1:-target/release/a2a}"
runs="${RUNS:-20}"
[[ -x "$bin" ]] || { echo "no executable $bin: build it first (see above)" >&2; exit 1; }

stripped="$(mktemp)"
trap 'rm -f "$stripped"' EXIT
strip -o "$stripped" "$bin"
size() { stat -c %s "$1"; }
printf 'load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'size: %s bytes as built, %s stripped (%s)\n' "$(size "$bin")" "$(size "$stripped")" "$bin"

# min / median / max of the microsecond figures on stdin, in ms.
summary() {
    sort -n | awk '{ v[NR] = $1 } END {
        printf "min %.1f ms, median %.1f ms, max %.1f ms (%d runs)\n", v[1] / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000, NR }'
}

now_us() { echo $(($(date +%s%N) / 1000)); }

# `a2a --version`: wall time, and CPU time (user + system, less disturbed by other load).
TIMEFORMAT='%R %U %S'
times="$(for _ in $(seq "$runs"); do { time "$bin" --version >/dev/null; } 2>&1; done)"
printf 'a2a --version, wall: '
awk '{ printf "%d\n", $1 * 1e6 }' <<<"$times" | summary
printf 'a2a --version, CPU: '
awk '{ printf "%d\n", ($2 + $3) * 1e6 }' <<<"$times" | summary

printf 'a2a inspect until it prints its URL: '
for _ in $(seq "$runs"); do
    start=$(now_us)
    coproc INSPECT { exec "$bin" inspect --listen 127.0.0.1:0; }
    read -r line <&"${INSPECT[0]}"
    took=$(($(now_us) - start))
    kill "$INSPECT_PID"
    wait "$INSPECT_PID" 2>/dev/null || true
    [[ "$line" == "a2a inspect: open http://127.0.0.1:"* ]] || { echo "unexpected: $line" >&2; exit 1; }
    echo "$took"
done | summary
