#!/usr/bin/env bash
# Builds the official Rust SDK's echo agent (a2a-rs 0.5 from crates.io) in DIR (default
# .scratch/a2a-rs-echo), outside the workspace. Prints the binary's path on success.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../../../.scratch/a2a-rs-echo}"
mkdir -p "$dir/src"
cp "$here/Cargo.toml.in" "$dir/Cargo.toml"
cp "$here/main.rs" "$dir/src/main.rs"
cd "$dir"
cargo fetch --quiet >&2
# The agent handler comes from the crate's own examples (examples/common).
src="$(cargo metadata --format-version 1 2>/dev/null | python3 -c '
import json, sys, os
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "a2a-rs":
        print(os.path.dirname(p["manifest_path"]))')"
[ -d "$src/examples/common" ] || { echo "a2a-rs sources not found" >&2; exit 1; }
rm -rf src/common && cp -r "$src/examples/common" src/common
# a2a-rs 0.5 declares rust-version 1.96; it builds with older compilers too.
cargo build --release --quiet --ignore-rust-version >&2
echo "$dir/target/release/a2a-rs-echo"
