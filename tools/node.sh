#!/usr/bin/env bash
# Prints the directory of a Node $NODE_MAJOR binary for PATH: the machine's own `node` when it is
# already that major, else Node $NODE_VERSION from the npm registry's `node-linux-<arch>`
# package, unpacked once into the git-ignored .tools/node/. CI runs the whole suite on it:
#   PATH="$(bash tools/node.sh):$PATH"
# Foghorn supports Node 22 and 24 (package.json engines); this pins the one CI proves.
set -euo pipefail

NODE_MAJOR=24
NODE_VERSION=24.22.3

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf '[node] %s\n' "$*" >&2; }
die() { printf '[node] ERROR: %s\n' "$*" >&2; exit 1; }

if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$NODE_MAJOR" ]; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no Node $NODE_MAJOR package for $(uname -m); install Node $NODE_MAJOR yourself" ;;
esac
dir="$root/.tools/node/$NODE_VERSION"
if [ ! -x "$dir/bin/node" ]; then
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch Node $NODE_VERSION"
  say "fetching Node $NODE_VERSION (node-linux-$arch from the npm registry)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$NODE_VERSION" >/dev/null) \
    || die "npm could not fetch node-linux-$arch@$NODE_VERSION"
  tar -xzf "$tmp"/node-linux-"$arch"-*.tgz -C "$tmp"
  rm -rf "$dir" && mkdir -p "$dir"
  mv "$tmp/package/bin" "$dir/bin"
fi
"$dir/bin/node" --version | grep -qx "v$NODE_VERSION" || die "$dir/bin/node does not run"
echo "$dir/bin"
