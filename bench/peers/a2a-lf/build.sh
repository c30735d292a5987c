#!/usr/bin/env bash
# Builds the official Rust A2A SDK's echo agent (crates.io a2a-server-lf 0.5.3 + a2a-lf 0.4.2,
# repository a2aproject/a2a-rs) in DIR (default .scratch/a2a-lf-echo), outside the workspace.
# Prints the binary's path on stdout on success; cargo's output goes to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../../../.scratch/a2a-lf-echo}"
mkdir -p "$dir/src"
cp "$here/Cargo.toml.in" "$dir/Cargo.toml"
cp "$here/main.rs" "$dir/src/main.rs"
cd "$dir"
# Its own target directory and lock file: the peer's dependency versions never touch ours.
unset CARGO_TARGET_DIR
# Built as our server is (the workspace's release profile: fat LTO, one codegen unit), so that
# a ratio compares the code, not the build settings.
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
if [ "${PEER_CHECK_ONLY:-0}" = 1 ]; then
  # Only whether it compiles (CI: bench/peers/check.sh), without the release build.
  cargo check --quiet >&2
  exit 0
fi
cargo build --release --quiet >&2
echo "$dir/target/release/a2a-lf-echo"
