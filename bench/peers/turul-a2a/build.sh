#!/usr/bin/env bash
# Builds turul-a2a 0.2.6's echo agent (crates.io turul-a2a, repository aussierobots/turul-a2a, a
# third-party A2A v1.0 server framework) in DIR (default .scratch/turul-echo), outside the
# workspace. Its proto crate's build script runs protoc: a tiny helper crate in DIR/protoc-path
# prints the path of the one the crates.io package protoc-bin-vendored ships (no system install).
# Prints the binary's path on stdout on success; cargo's output goes to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../../../.scratch/turul-echo}"
mkdir -p "$dir/src" "$dir/protoc-path/src"
dir="$(cd "$dir" && pwd)"
# Its own target directories and lock files: the peer's dependency versions never touch ours.
unset CARGO_TARGET_DIR
# Built as our server is (the workspace's release profile: fat LTO, one codegen unit), so that
# a ratio compares the code, not the build settings.
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

cat > "$dir/protoc-path/Cargo.toml" <<'TOML'
[package]
name = "protoc-path"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
protoc-bin-vendored = "=3.3.0"
TOML
echo 'fn main() { println!("{}", protoc_bin_vendored::protoc_bin_path().unwrap().display()); }' \
  > "$dir/protoc-path/src/main.rs"
(cd "$dir/protoc-path" && cargo build --release --quiet >&2)
PROTOC="$("$dir/protoc-path/target/release/protoc-path")"
[ -x "$PROTOC" ] || { echo "no protoc at '$PROTOC'" >&2; exit 1; }
export PROTOC

cp "$here/Cargo.toml.in" "$dir/Cargo.toml"
cp "$here/main.rs" "$dir/src/main.rs"
cd "$dir"
if [ "${PEER_CHECK_ONLY:-0}" = 1 ]; then
  # Only whether it compiles (CI: bench/peers/check.sh), without the release build.
  cargo check --quiet >&2
  exit 0
fi
cargo build --release --quiet >&2
echo "$dir/target/release/turul-echo"
