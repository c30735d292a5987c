#!/usr/bin/env bash
# ACTS, the A2A project's official conformance suite, against our ITK agent
# (examples/examples/itk_agent.rs) over JSON-RPC, HTTP+JSON and gRPC. For each binding the
# kit's runner runs the corpus against the agent, then re-runs the capability-gated tests
# against the agent started with ITK_ACTS_REDUCED_CAPABILITIES=1 and the authentication-gated
# ones against it started with ITK_ACTS_AUTH=1: the three passes. Exits 0 only when ACTS judges
# every binding conformant.
#
#   bash tests/acts/run.sh [all|jsonrpc|rest|grpc]
#
# The kit is ${A2A_SHARED}/acts, else <repo>/../shared/acts, else /work/shared/acts. Its first
# run makes a Python venv (pinned packages from PyPI) under $ACTS_WORK (default
# target/acts-work). Reports: $ACTS_OUT (default target/acts); with ACTS_PUBLISH=1 the JSON
# reports are also copied to docs/conformance/, replacing the ones there.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
binding="${1:-all}"
case "$binding" in all|jsonrpc|rest|grpc) ;; *) echo "usage: $0 [all|jsonrpc|rest|grpc]" >&2; exit 2 ;; esac

kit=""
for dir in "${A2A_SHARED:-}" "$repo/../shared" /work/shared; do
  if [ -n "$dir" ] && [ -f "$dir/acts/run-acts.sh" ]; then kit="$(cd "$dir/acts" && pwd)"; break; fi
done
if [ -z "$kit" ]; then
  echo "tests/acts/run.sh: no ACTS kit: none of \${A2A_SHARED} (${A2A_SHARED:-unset}), $repo/../shared," \
       "/work/shared has acts/run-acts.sh; set A2A_SHARED to the directory that holds acts/" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "tests/acts/run.sh: ACTS needs python3 (3.10+, with venv)" >&2; exit 2; }

target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --quiet -p a2a-examples --example itk_agent)
agent="$target/debug/examples/itk_agent"
out="${ACTS_OUT:-$target/acts}"
rm -rf "$out"
mkdir -p "$out"

status=0
ACTS_WORK="${ACTS_WORK:-$target/acts-work}" ACTS_OUT="$out" ACTS_AGENT="$agent" \
  bash "$kit/run-acts.sh" "$binding" || status=$?

if [ "${ACTS_PUBLISH:-0}" = 1 ]; then
  rm -f "$repo"/docs/conformance/acts-report-*.json
  mkdir -p "$repo/docs/conformance"
  cp "$out"/acts-report-*.json "$repo/docs/conformance/"
fi
if [ "$status" -ne 0 ]; then
  echo "ACTS: not every binding was judged conformant (exit $status); reports in $out" >&2
fi
exit "$status"
