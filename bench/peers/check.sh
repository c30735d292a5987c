#!/usr/bin/env bash
# Checks that every benchmark peer (bench/peers/*/main.rs, built from crates.io outside the
# workspace) still compiles, without building it for a benchmark: a change across the tree
# once broke the official SDK's echo agent unnoticed, and compare.sh then silently ran
# without its peer. Each peer is checked in its usual directory under .scratch/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export PEER_CHECK_ONLY=1
for peer in a2a-lf:a2a-lf-echo a2a-protocol:a2a-protocol-echo turul-a2a:turul-a2a-echo; do
  started=$SECONDS
  bash "$root/bench/peers/${peer%%:*}/build.sh" "$root/.scratch/${peer#*:}"
  echo "bench peer ${peer%%:*} compiles ($((SECONDS - started)) s)"
done
