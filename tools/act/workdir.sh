#!/usr/bin/env bash
# Make a work directory for act: this checkout's files laid out as a repository that adopted the
# action would have them (README "Run it locally with act").
#
# Usage: tools/act/workdir.sh DIR
#   - the checkout's files (tracked, plus untracked ones git does not ignore), so `uses: ./`
#     finds action.yml and `actions/checkout` (which act replaces by a local copy) finds them;
#   - examples/fullsend.yml and examples/reusable-dispatch.yml as .github/workflows/fullsend.yml
#     and .github/workflows/reusable-dispatch.yml, as act parses them: without the `queue:` keys
#     of their `concurrency:` mappings, which act's schema predates and act ignores anyway
#     (tools/act/act_copy.py; every other byte unchanged);
#   - a git repository (.git) holding the scripted agent, `.git/fullsend-scripted-agent`, and later
#     its log: the workflows' own checkouts rewrite the work tree (act --bind shares it between
#     jobs, where GitHub gives each job a fresh one), and only .git outlives them;
#   - none of the checkout's files that spell the simulator's job token or OIDC request token (its
#     docs, tests and fixtures): a repository never holds its job's tokens, and the action refuses a
#     receipt when its agent could read one in the workspace (docs/rules.md#token-in-reach);
#   - examples/harness/review.yaml as .fullsend/harness/review.yaml, polling every 2 s instead
#     of 30 s so that a local run takes seconds (the harness is the adopting repository's own
#     configuration, not part of the workflows).
# DIR must not exist, be empty, or be a work directory this script made (it is then remade).
set -euo pipefail

dir="${1:?usage: tools/act/workdir.sh DIR}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
marker=".fullsend-act-workdir"

if [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
  if [[ ! -e "$dir/$marker" ]]; then
    echo "workdir: $dir exists and was not made by this script; give a new directory" >&2
    exit 2
  fi
  rm -rf "$dir"
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$repo" ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do [[ -e "$repo/$f" ]] && printf '%s\0' "$f"; done \
    | tar -C "$repo" --null -T - -cf - | tar -C "$dir" -xf -
else
  tar -C "$repo" --exclude='./.venv*' --exclude='./.git' -cf - . | tar -C "$dir" -xf -
fi
# The simulator's public tokens, as fullsend/simulator/fixtures.py defines them.
mapfile -t tokens < <(sed -nE 's/^(JOB_TOKEN|OIDC_REQUEST_TOKEN) = "([^"]+)"$/\2/p' "$repo/fullsend/simulator/fixtures.py")
if [[ ${#tokens[@]} -ne 2 ]]; then
  echo "workdir: fullsend/simulator/fixtures.py no longer defines JOB_TOKEN and OIDC_REQUEST_TOKEN; update tools/act/workdir.sh" >&2
  exit 2
fi
grep -rlZF "${tokens[@]/#/-e}" "$dir" | xargs -0 -r rm -f --
for needed in action.yml examples/fullsend.yml examples/reusable-dispatch.yml examples/harness/review.yaml; do
  if [[ ! -f "$dir/$needed" ]]; then
    echo "workdir: $needed spells one of the simulator's tokens; it must not" >&2
    exit 2
  fi
done
touch "$dir/$marker"
git init -q "$dir"
cp "$repo/tools/act/scripted-agent" "$dir/.git/fullsend-scripted-agent"

mkdir -p "$dir/.github/workflows" "$dir/.fullsend/harness"
cp "$repo/examples/fullsend.yml" "$repo/examples/reusable-dispatch.yml" "$dir/.github/workflows/"
python3 "$repo/tools/act/act_copy.py" "$dir/.github/workflows/fullsend.yml" "$dir/.github/workflows/reusable-dispatch.yml"
sed -E 's/^(  poll_interval_seconds:) *30( |$)/\1 2\2/' "$repo/examples/harness/review.yaml" \
  >"$dir/.fullsend/harness/review.yaml"
if ! grep -qE '^  poll_interval_seconds: 2( |$)' "$dir/.fullsend/harness/review.yaml"; then
  echo "workdir: examples/harness/review.yaml no longer has 'poll_interval_seconds: 30'; update tools/act/workdir.sh" >&2
  exit 2
fi
echo "workdir: $dir is ready (workflows in .github/workflows, harness in .fullsend/harness)" >&2
echo "$dir"
