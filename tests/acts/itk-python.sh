#!/usr/bin/env bash
# Prepares the ITK kit's Python agent (agents/python/v10 of a2a-itk, on PyPI's a2a-sdk) for the
# traversal test (examples/tests/itk_traversal.rs), under .scratch/itk/ (gitignored):
#
#   .scratch/itk/py      Python venv: a2a-sdk[sqlite,grpc,http-server] 1.0.3 and what the agent
#                        imports (requirements-itk.txt beside this script, every version pinned)
#   .scratch/itk/agent   the kit's agents/python/v10/main.py, with pyproto/ generated from the
#                        kit's protos/instruction.proto
#
# The kit is ${A2A_SHARED}/acts, else <repo>/../shared/acts, else /work/shared/acts. Idempotent
# (a stamp holds the hash of the pins and the tarball). Prints the agent's directory last.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
kit=""
for dir in "${A2A_SHARED:-}" "$repo/../shared" /work/shared; do
  if [ -n "$dir" ] && [ -f "$dir/acts/a2a-itk-acts.tar.gz" ]; then kit="$(cd "$dir/acts" && pwd)"; break; fi
done
if [ -z "$kit" ]; then
  echo "itk-python.sh: no ITK kit (acts/a2a-itk-acts.tar.gz) in \${A2A_SHARED}, $repo/../shared or /work/shared" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "itk-python.sh: needs python3 (3.10+, with venv)" >&2; exit 2; }
scratch="$repo/.scratch/itk"
stamp="$scratch/stamp"
want="$(cat "$here/requirements-itk.txt" "$kit/a2a-itk-acts.tar.gz" | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$scratch/agent/pyproto/instruction_pb2.py" ]; then
  echo "$scratch/agent"
  exit 0
fi
rm -rf "$scratch"
mkdir -p "$scratch"
python3 -m venv "$scratch/py"
"$scratch/py/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements-itk.txt" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar xzf "$kit/a2a-itk-acts.tar.gz" -C "$tmp" a2a-itk/agents/python/v10/main.py a2a-itk/protos/instruction.proto
mkdir -p "$scratch/agent/pyproto"
cp "$tmp/a2a-itk/agents/python/v10/main.py" "$scratch/agent/"
touch "$scratch/agent/pyproto/__init__.py"
"$scratch/py/bin/python" -m grpc_tools.protoc -I"$tmp/a2a-itk/protos" \
  --python_out="$scratch/agent/pyproto" "$tmp/a2a-itk/protos/instruction.proto"
echo "$want" > "$stamp"
echo "$scratch/agent"
