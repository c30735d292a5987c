# Sourced by bench/concurrency.sh and bench/cpusplit.sh: one fresh server at a time pinned to
# one core (SERVER_CORE, default 0) and the load generator to another (LOAD_CORE, default 1),
# as in compare.sh. `pinned_setup NAME` builds the release binaries (CARGO_TARGET_DIR, default
# <repo>/target), sets `bin`, `peer_bin` (PEER_BIN, or the official SDK's echo agent as
# bench/peers/a2a-lf/build.sh leaves it), `server_core`, `load_core` and a work directory
# `work` removed on exit, with the running server stopped. `pinned_start LABEL COMMAND...`
# starts a server and sets `pid` and `url` (false, with the server's error output, if it did
# not start); `pinned_stop` stops it.

pinned_setup() {
  command -v taskset >/dev/null || { echo "taskset (util-linux) is required" >&2; exit 1; }
  server_core="${SERVER_CORE:-0}"
  load_core="${LOAD_CORE:-1}"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
  bin="$CARGO_TARGET_DIR/release"
  echo "== building (release)" >&2
  (cd "$root" && cargo build --release --quiet -p a2a-server -p a2a-bench --features a2a-server/cli)
  peer_bin="${PEER_BIN:-$root/.scratch/a2a-lf-echo/target/release/a2a-lf-echo}"
  work="$(mktemp -d "${TMPDIR:-/tmp}/a2a-$1.XXXXXX")"
  pid=""
  trap 'pinned_stop; rm -rf "$work"' EXIT
}

pinned_start() {
  local label="$1"
  shift
  url=""
  taskset -c "$server_core" "$@" >"$work/$label.out" 2>"$work/$label.err" &
  pid=$!
  for _ in $(seq 200); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/$label.out" 2>/dev/null | head -1 || true)"
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "   $label did not start: $(cat "$work/$label.err")" >&2
  pinned_stop
  return 1
}

pinned_stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
