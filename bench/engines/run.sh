#!/usr/bin/env bash
# The durable write pattern of one echo SendMessage on several embedded stores (main.rs says
# what is written): builds bench/engines in DIR (default .scratch/engines, outside the
# workspace), then runs each store REPEAT times on core 0 (fresh directory each run) and prints
# its CPU and wall time per request and the directory's size. About 5 minutes with the build.
#
# Usage: bench/engines/run.sh [--repeat N] [--requests N] [--stores a,b,...] [DIR]
#   stores: sled034 (what SledStore uses), sled1 (sled 1.0.0-alpha.124, slow: run it alone),
#   fjall, redb; default sled034,fjall,redb. FLUSH_EVERY=0 in the environment never flushes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repeat=3 requests=20000 stores=sled034,fjall,redb dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat="$2"; shift ;;
    --requests) requests="$2"; shift ;;
    --stores) stores="$2"; shift ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) dir="$1" ;;
  esac
  shift
done
dir="${dir:-$here/../../.scratch/engines}"
mkdir -p "$dir/src"
dir="$(cd "$dir" && pwd)"
cp "$here/Cargo.toml.in" "$dir/Cargo.toml"
cp "$here/main.rs" "$dir/src/main.rs"
# Its own target directory and lock file: these stores' versions never touch the workspace's.
(cd "$dir" && unset CARGO_TARGET_DIR && cargo build --release --quiet >&2)
for rep in $(seq "$repeat"); do
  for store in ${stores//,/ }; do
    data="$(mktemp -d "$dir/data.XXXXXX")"
    line="$(taskset -c 0 "$dir/target/release/store-engines" "$store" "$requests" "$data/db")"
    echo "$line; $(du -sh "$data" | cut -f1) on disk"
    rm -rf "$data"
  done
done
