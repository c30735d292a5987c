#!/usr/bin/env bash
# The instruction regression guard: SendMessage and GetTask (c=16) on our server, in memory and
# on sled, under callgrind (three short runs of compare.sh --instructions; each row takes the
# least of the three, since background work only ever adds instructions: sled's flusher thread
# alone moved GetTask on sled by up to 1.5% from run to run, two runs were not enough), compared with
# bench/baseline-instructions.json. Fails when a figure grew by more than 5%.
#
# Each row measures 1,000 requests after 500 (compare.sh --requests 1000:500; GetTask after
# 4,000, see below), not a number of seconds: on sled a request's instructions grow with the
# trees (a split rewrites a bigger parent), so a timed window measured a different store on a faster machine. Timed 2-second
# windows gave SendMessage on sled 259k instructions on one machine and 279k-293k on another,
# for the same commit, and failed CI; 1,000 requests after 500 gave 282.6k-285.7k in three runs.
#
# Usage: bench/guard.sh [--write]   (--write: record the runs as the new baseline; commit it
#                                    with the change that moved the figures, and say why)
# Takes 2 to 3 minutes (plus a release build). Environment: CARGO_TARGET_DIR (default
# <repo>/target).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
write=()
case "${1:-}" in
  --write) write=(--write) ;;
  "") ;;
  *) echo "usage: bench/guard.sh [--write]" >&2; exit 2 ;;
esac

# GetTask warms up for 4,000 requests, not 500: on sled its preload's writes leave segments
# for sled's flusher thread to clean, about a million instructions once, on its half-second
# tick. After 500 requests (about 0.15 s under callgrind) that pass fell inside the window or
# before it by chance: GetTask on sled read 23.4k or 24.5k (+4.4%) per request for one binary.
# After 4,000 (a second or more) it has run.
runs=()
for i in 1 2 3; do
  echo "== callgrind run $i of 3" >&2
  for rows in send:16:500 get:16:4000; do
    out="$(bash "$root/bench/compare.sh" --instructions --requests "1000:${rows##*:}" --no-peer \
      --no-grpc --only ours-memory,ours-sled --scenarios "${rows%:*}" 2>&1)" \
      || { echo "$out" >&2; exit 1; }
    file="$(grep -o '/[^ ]*/results.jsonl' <<<"$out" | tail -1)"
    [ -f "$file" ] || { echo "$out" >&2; echo "no results file" >&2; exit 1; }
    runs+=("$file")
  done
done
cd "$root"
# The six runs as one results file (bench/results.py; compare.sh wrote each run.json).
if command -v python3 >/dev/null; then
  guard_json="$root/.scratch/bench/guard-$(date +%Y%m%d-%H%M%S).json"
  python3 "$root/bench/results.py" merge "$guard_json" "${runs[@]/%results.jsonl/run.json}" \
    && echo "Results file: $guard_json" >&2 || echo "bench/results.py merge failed" >&2
fi
"$CARGO_TARGET_DIR/release/a2a-bench" guard "${runs[@]}" \
  --baseline "$root/bench/baseline-instructions.json" "${write[@]}"
