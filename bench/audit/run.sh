#!/usr/bin/env sh
# The run script graphql-hive/federation-gateway-audit's harness calls for each test suite
# (`sh run.sh <suite id>`): fetches that suite's supergraph from the harness and starts our gateway
# on it (bench/audit/gateway.ts) on AUDIT_GATEWAY_PORT (default 4000). The harness is fetched outside
# this tree; docs/testing.md ("Federation audit") has the commands.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
harness="${AUDIT_HARNESS_URL:-http://localhost:4200}"
port="${AUDIT_GATEWAY_PORT:-4000}"
scratch="${TMPDIR:-/tmp}/bookstore-audit"
mkdir -p "$scratch"
[ -f "$root/dist/bench/audit/gateway.js" ] || (cd "$root" && npm run build:server >/dev/null)
# The harness registers its suites a moment after it listens: ask again until it has this one.
curl -fsS --retry 30 --retry-all-errors --retry-delay 1 "$harness/$1/supergraph" > "$scratch/$1.graphql"
# The harness may run with a NODE_OPTIONS of its own (a polyfill for Node 20); the gateway runs without it.
LOG_LEVEL="${LOG_LEVEL:-warn}" exec env -u NODE_OPTIONS node "$root/dist/bench/audit/gateway.js" "$scratch/$1.graphql" "$port"
