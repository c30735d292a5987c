#!/usr/bin/env bash
# Builds a2a-protocol-server 0.15.0's echo agent (crates.io, the third-party a2a-protocol SDK) in
# DIR (default .scratch/a2a-protocol-echo), outside the workspace. Prints the binary's path on
# stdout on success; cargo's output goes to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../../../.scratch/a2a-protocol-echo}"
mkdir -p "$dir/src"
cp "$here/Cargo.toml.in" "$dir/Cargo.toml"
cp "$here/main.rs" "$dir/src/main.rs"
cd "$dir"
# Its own target directory and lock file: the peer's dependency versions never touch ours.
unset CARGO_TARGET_DIR
cargo build --release --quiet >&2
echo "$dir/target/release/a2a-protocol-echo"
