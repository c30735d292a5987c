#!/usr/bin/env bash
# Builds the echo agent on a2a-protocol-server 0.15.0 + a2a-protocol-types 0.15.0 (crates.io,
# the third-party a2a-protocol-sdk family, repository tomtom215/a2a-rust) in DIR (default
# .scratch/a2a-protocol-echo), outside the workspace. No protoc is needed: only the crates'
# `grpc`/`proto` features compile protos (and those bring their own protoc-bin-vendored).
# Prints the binary's path on stdout on success; cargo's output goes to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../../../.scratch/a2a-protocol-echo}"
mkdir -p "$dir/src"
dir="$(cd "$dir" && pwd)"
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
echo "$dir/target/release/a2a-protocol-echo"
