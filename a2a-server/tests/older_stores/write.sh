#!/usr/bin/env bash
# Writes the store fixtures that `tests/older_stores.rs` opens: for each embedded engine, the
# data directory an older release's `a2a-server` leaves after serving three tasks
# (OUT_DIR/RELEASE-ENGINE/data), and what that release answered to GetTask for each, in
# OUT_DIR/RELEASE-ENGINE/answers.json.
#
# Usage: write.sh OLD_A2A_SERVER OUT_DIR RELEASE [ENGINE...]
# (OLD_A2A_SERVER: the release's binary, `cargo build --release -p a2a-server --features cli`
# in a checkout of it; RELEASE: its commit; ENGINE: sled (the default) or fjall, for a release
# with `--store`.) The tasks: `hello` (an echo, completed), `greet` (input-required, to be
# continued), `countdown 3` (completed after a run of status and artifact events). The server is stopped with SIGTERM,
# as an operator's restart would.
set -euo pipefail
old="$1"
out="$2"
release="$3"
shift 3
engines=("$@")
[ ${#engines[@]} -gt 0 ] || engines=(sled)
command -v curl >/dev/null || { echo "curl is required" >&2; exit 1; }
for engine in "${engines[@]}"; do
  dir="$out/$release-$engine"
  rm -rf "$dir"
  mkdir -p "$dir"
  log="$(mktemp)"
  store=()
  [ "$engine" = sled ] || store=(--store "$engine")
  "$old" --data-dir "$dir/data" "${store[@]}" --listen 127.0.0.1:0 >"$log" 2>&1 &
  pid=$!
  url=""
  for _ in $(seq 100); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -1 || true)"
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$log" >&2; kill "$pid"; exit 1; }
  rpc() {
    curl -sf -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d "$1" "$url/"
  }
  send() {
    rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"$1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"$2\"}]}}}" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["task"]["id"])'
  }
  ids=("$(send m-hello hello)" "$(send m-greet greet)" "$(send m-countdown 'countdown 3')")
  {
    echo '{"release": "'"$release"'", "tasks": ['
    sep=""
    for id in "${ids[@]}"; do
      printf '%s' "$sep"
      rpc "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"GetTask\",\"params\":{\"id\":\"$id\"}}" \
        | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["result"], indent=1))'
      sep=","
    done
    echo ']}'
  } >"$dir/answers.json"
  kill -TERM "$pid"
  wait "$pid" || true
  rm -f "$log"
  # fjall preallocates its journal (32 MiB of zeros after the entries): the fixture keeps the
  # entries, to the next 4 KiB, as a journal cut short by a crash would be.
  for journal in "$dir"/data/keyspace/journals/*; do
    [ -f "$journal" ] || continue
    used="$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().rstrip(b"\0")))' "$journal")"
    truncate -s "$(( (used + 4095) / 4096 * 4096 ))" "$journal"
  done
  echo "$engine: $(du -sh "$dir/data" | cut -f1) in $dir" >&2
done
