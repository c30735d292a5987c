#!/usr/bin/env bash
# Installs the official A2A SDKs the interop tests (tests/tests/interop_*.rs) run against, and
# the official MCP Python SDK (a2a-client/tests/mcp_python.rs), at pinned versions, into
# .scratch/interop/ (gitignored) and nowhere else:
#
#   .scratch/interop/py1   Python venv: a2a-sdk[http-server,grpc,signing]==1.3.0 + uvicorn,
#                          PyJWT and cryptography for the SDK's agent card signing
#                          (py_signing.py); also runs the helloworld sample agent that
#                          `a2a inspect`'s browser test drives (py_helloworld.py)
#                          (requirements-v1.txt)
#   .scratch/interop/py03  Python venv: a2a-sdk==0.3.26                       (requirements-v03.txt)
#   .scratch/interop/pymcp Python venv: mcp==2.3.0, the official MCP Python SDK, as the MCP
#                          client of `a2a mcp` (py_mcp_client.py, run by
#                          a2a-client/tests/mcp_python.rs)           (requirements-mcp.txt)
#   .scratch/interop/js    npm ci of @a2a-js/sdk 1.3.0 and 0.3.14 (alias a2a-js-sdk-v03),
#                          @grpc/grpc-js 1.14.7 + @bufbuild/protobuf 2.17.0 for 1.3.0's gRPC
#                          client, and express 5.3.0 for 1.3.0's express server integration
#                          (js_server.mjs) (js/package.json, js/package-lock.json)
#
# Idempotent: each part is redone only when its pin files (or the recipe version below)
# changed (a stamp holds their hash), so a second run takes a second or two. Needs python3
# (>= 3.10, with venv and pip), node (>= 20) and npm, plus access to PyPI and the npm registry
# for the first run. On failure it exits non-zero saying what to install.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scratch="$root/.scratch/interop"
mkdir -p "$scratch"

fail() {
    echo "interop setup FAILED: $*" >&2
    exit 1
}

# One setup at a time (test binaries may call this script concurrently).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$scratch/.setup.lock"
    flock 9
fi

# --- system tools -------------------------------------------------------------------------
missing=()
python="${PYTHON:-python3}"
version_of() {
    local v
    v="$("$@" --version 2>&1)" || true
    echo "${v%%$'\n'*}"
}
if ! command -v "$python" >/dev/null 2>&1; then
    missing+=("python3 (>= 3.10): apt-get install python3 python3-venv python3-pip")
elif ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1; then
    missing+=("a working python3 >= 3.10 (found: $(version_of "$python")): apt-get install python3, or set PYTHON=/path/to/python3.x")
elif ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    missing+=("the Python venv module with ensurepip: apt-get install python3-venv")
fi
if ! command -v node >/dev/null 2>&1; then
    missing+=("node (>= 20): apt-get install nodejs")
elif ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' >/dev/null 2>&1; then
    missing+=("node >= 20 (found: $(version_of node)): install a newer nodejs")
fi
if ! command -v npm >/dev/null 2>&1; then
    missing+=("npm: apt-get install npm")
fi
if ((${#missing[@]})); then
    echo "interop setup FAILED: missing system tools:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
fi

# Bump when the way things are installed changes (the pin files are hashed anyway).
recipe="interop-setup-1"
hash_of() { { echo "$recipe"; cat "$@"; } | sha256sum | cut -d' ' -f1; }

# --- Python venvs -------------------------------------------------------------------------
# venv_install DIR REQUIREMENTS EXPECTED_VERSION [PACKAGE]: PACKAGE (default a2a-sdk) must
# be installed at EXPECTED_VERSION.
venv_install() {
    local dir="$scratch/$1" req="$here/$2" expect="$3" package="${4:-a2a-sdk}"
    local stamp="$dir/.interop-stamp" want
    want="$(hash_of "$req")"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$dir/bin/python" ]]; then
        echo "ok: $1 ($package $expect) already installed"
        return
    fi
    echo "installing $1: $package $expect from $2 ..."
    rm -rf "$dir"
    "$python" -m venv "$dir" || fail "python3 -m venv $dir (install python3-venv?)"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        -r "$req" || fail "pip install -r $req into $dir (is PyPI reachable?)"
    local got
    got="$("$dir/bin/python" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$package")" ||
        fail "$package is not installed in $dir"
    [[ "$got" == "$expect" ]] || fail "$dir has $package $got, expected $expect"
    echo "$want" >"$stamp"
    echo "ok: $1 ($package $got) installed"
}

venv_install py1 requirements-v1.txt 1.3.0
"$scratch/py1/bin/python" -c 'import a2a.server.routes, a2a.client, uvicorn, starlette, sse_starlette
import grpc.aio, a2a.client.transports.grpc, a2a.server.request_handlers.grpc_handler
import a2a.utils.signing, jwt, cryptography' ||
    fail "the py1 venv lacks the SDK's server, client, gRPC or signing modules"
venv_install py03 requirements-v03.txt 0.3.26
"$scratch/py03/bin/python" -c 'import a2a.client, httpx_sse' ||
    fail "the py03 venv lacks the SDK's client modules"
venv_install pymcp requirements-mcp.txt 2.3.0 mcp
"$scratch/pymcp/bin/python" -c 'from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client' ||
    fail "the pymcp venv lacks the MCP SDK's client session or its stdio and streamable HTTP transports"

# --- JS SDK -------------------------------------------------------------------------------
js="$scratch/js"
want="$(hash_of "$here/js/package.json" "$here/js/package-lock.json")"
if [[ -f "$js/.interop-stamp" && "$(cat "$js/.interop-stamp")" == "$want" && -d "$js/node_modules/@a2a-js/sdk" ]]; then
    echo "ok: js (@a2a-js/sdk 1.3.0, 0.3.14, @grpc/grpc-js 1.14.7, express 5.3.0) already installed"
else
    echo "installing js: @a2a-js/sdk 1.3.0 and 0.3.14, @grpc/grpc-js 1.14.7, express 5.3.0 from js/package-lock.json ..."
    rm -rf "$js"
    mkdir -p "$js"
    cp "$here/js/package.json" "$here/js/package-lock.json" "$js/"
    (cd "$js" && npm ci --no-audit --no-fund --loglevel=error) ||
        fail "npm ci in $js (is the npm registry reachable?)"
    echo "$want" >"$js/.interop-stamp"
    echo "ok: js installed"
fi
for pkg in @a2a-js/sdk:1.3.0 a2a-js-sdk-v03:0.3.14 @grpc/grpc-js:1.14.7 @bufbuild/protobuf:2.17.0 express:5.3.0; do
    name="${pkg%:*}" expect="${pkg##*:}"
    got="$(node -p 'require(process.argv[1]).version' "$js/node_modules/$name/package.json")" ||
        fail "$js lacks $name"
    [[ "$got" == "$expect" ]] || fail "$js has $name $got, expected $expect"
done

# --- a browser for `a2a inspect`'s test ---------------------------------------------------
bash "$here/setup-browser.sh" || fail "Chromium and ChromeDriver (see setup-browser.sh's message above)"

echo "interop setup complete: $scratch"
