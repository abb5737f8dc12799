#!/usr/bin/env bash
# Release steer-action: build and push the images, then the release commit that names them.
# .github/workflows/release.yml runs it; so can anyone with podman and git (docs/adopting.md "Images").
#
#   tools/release/release.sh build   --image REGISTRY/OWNER/NAME --version vX.Y.Z [--local] [--insecure]
#                                    [--variants "slim full"]
#   tools/release/release.sh publish --image REGISTRY/OWNER/NAME --version vX.Y.Z
#                                    --slim-digest sha256:... --full-digest sha256:... [--local]
#
# build    Builds the Dockerfile's slim (default) and full targets for linux/amd64 and linux/arm64
#          (one multi-platform index each; arm64 through QEMU on an amd64 runner) from the
#          hash-pinned locks (requirements.txt, fullsend/adapters/agentcli/locks/), pushes each
#          index as IMAGE:vX.Y.Z and IMAGE:vX.Y.Z-full, and prints (and appends to $GITHUB_OUTPUT)
#          image=IMAGE, slim_digest=sha256:..., full_digest=sha256:... — the digests the release
#          names.  The workflow then attaches the SBOMs and build provenance to these digests
#          (GitHub attestations, which need GitHub's OIDC token).
# publish  Makes the release commit on top of HEAD, without touching the work tree: action.yml
#          runs docker://IMAGE@<slim digest> instead of building the Dockerfile, full/action.yml
#          (same inputs) runs docker://IMAGE@<full digest>.  Tags it vX.Y.Z, moves vMAJOR to it,
#          pushes both and creates the GitHub release with the digests in its notes (gh, GH_TOKEN).
#          Prints release_commit=<sha>.  When HEAD holds the hosted dispatch workflow
#          (.github/workflows/dispatch.yml), a second commit on top of the release commit pins its
#          `uses: ./` lines to the release commit (a commit cannot name its own SHA); the tags then
#          name that commit, whose action.yml is the release commit's, and it prints
#          dispatch_commit=<sha> too (docs/adopting.md "The dispatch workflow").
# --local  The host architecture only, the local base image (tools/container/make-base.sh), no
#          login, and publish stops after printing the commit (no tag, push or GitHub release):
#          what tests/release runs against a registry on 127.0.0.1.  --insecure: plain HTTP.
#
#   GH_TOKEN / GITHUB_ACTOR   without --local: the registry login and the pushes (ghcr.io takes the job token)
#   PODMAN_RUNTIME            OCI runtime (--local default runc, as tools/container/)
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { echo "release: $*" >&2; exit 2; }
say() { echo "release: $*" >&2; }

command=${1:-}; shift || true
image="" version="" local=0 insecure=0 variants="slim full" slim_digest="" full_digest=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --image) image="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    --local) local=1; shift ;;
    --insecure) insecure=1; shift ;;
    --variants) variants="$2"; shift 2 ;;
    --slim-digest) slim_digest="$2"; shift 2 ;;
    --full-digest) full_digest="$2"; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
[[ "$image" =~ ^[a-z0-9.:-]+(/[a-z0-9._-]+)+$ ]] || die "--image must be REGISTRY/OWNER/NAME in lower case, got '$image'"
[[ "$version" =~ ^v([0-9]+)\.[0-9]+\.[0-9]+$ ]] || die "--version must be vMAJOR.MINOR.PATCH, got '$version'"
major="v${BASH_REMATCH[1]}"
# The package's version is the one source of truth (fullsend/__init__.py; pyproject.toml reads it,
# fullsend init stamps it): a release of another version would stamp the wrong one.
package_version=$(sed -n 's/^__version__ = "\([^"]*\)"$/\1/p' fullsend/__init__.py 2>/dev/null || true)
[[ "v$package_version" == "$version" ]] || die "--version $version is not the package's version '$package_version' (fullsend/__init__.py __version__); commit the bump first, then release"
digest_re='^sha256:[0-9a-f]{64}$'

output() {  # name=value on stdout and into the step's outputs
  echo "$1=$2"
  if [[ -n "${GITHUB_OUTPUT:-}" ]]; then echo "$1=$2" >>"$GITHUB_OUTPUT"; fi
}

build() {
  local platforms podman_args=() tls=() variant tag manifest digest_file
  if [[ $local == 1 ]]; then
    platforms="linux/$(podman info --format '{{.Host.Arch}}')"
    podman_args=(--runtime "${PODMAN_RUNTIME:-runc}" --pull=never --network host
                 --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
  else
    platforms="linux/amd64,linux/arm64"
    podman_args=(--pull=missing --build-arg BASE_IMAGE=docker.io/library/debian:bookworm-slim)
    [[ -n "${GH_TOKEN:-}" ]] || die "GH_TOKEN is needed to push to ${image%%/*}"
    podman login --username "${GITHUB_ACTOR:-release}" --password-stdin "${image%%/*}" <<<"$GH_TOKEN" >&2
  fi
  [[ $insecure == 1 ]] && tls=(--tls-verify=false)
  # shellcheck source=tools/container/build-ca.sh
  source tools/container/build-ca.sh
  output image "$image"
  for variant in $variants; do
    case "$variant" in slim) tag="$version" ;; full) tag="$version-full" ;; *) die "unknown variant $variant" ;; esac
    manifest="localhost/steer-action-release:$tag"
    podman manifest rm "$manifest" >/dev/null 2>&1 || true
    say "building $variant for $platforms"
    podman build "${podman_args[@]}" "${build_ca_args[@]}" --platform "$platforms" --target "$variant" \
      --manifest "$manifest" --file Dockerfile . >&2
    digest_file=$(mktemp)
    podman manifest push --all "${tls[@]}" --digestfile "$digest_file" "$manifest" "docker://$image:$tag" >&2
    output "${variant}_digest" "$(cat "$digest_file")"
    rm -f "$digest_file"
  done
}

runs_image() {  # action.yml on stdin → the same with runs.image = docker://IMAGE@$1 and name suffix $2
  python3 -c '
import re, sys
text, ref, suffix = sys.stdin.read(), sys.argv[1], sys.argv[2]
text, n = re.subn(r"(?m)^(  image:\s*).*$", lambda m: m.group(1) + f"\"docker://{ref}\"", text)
if n != 1:
    sys.exit("action.yml: expected exactly one runs.image line")
if suffix:
    text = re.sub(r"(?m)^name:\s*\"(.*)\"$", lambda m: f"name: \"{m.group(1)}{suffix}\"", text, count=1)
sys.stdout.write(text)' "$image@$1" "$2"
}

pin_dispatch() {  # the hosted dispatch workflow on stdin → its `uses: ./` lines pinned to $1 (a commit)
  python3 -c '
import re, sys
text, action, version = sys.stdin.read(), sys.argv[1], sys.argv[2]
text, n = re.subn(r"(?m)(uses: )\./  # zizmor: ignore\[self-repository\]$", lambda m: f"{m.group(1)}{action} # {version}", text)
if n == 0 or re.search(r"(?m)^\s*(- )?uses: \./", text):
    sys.exit(".github/workflows/dispatch.yml: expected only `uses: ./  # zizmor: ignore[self-repository]` lines to pin")
sys.stdout.write(text)' "${GITHUB_REPOSITORY:-fullsend-ai/steer-action}@$1" "$version"
}

publish() {
  [[ "$slim_digest" =~ $digest_re && "$full_digest" =~ $digest_re ]] || die "--slim-digest and --full-digest must be sha256:<64 hex>"
  local index blob_slim blob_full tree commit
  index=$(mktemp); trap 'rm -f "$index"' RETURN
  blob_slim=$(git show HEAD:action.yml | runs_image "$slim_digest" "" | git hash-object -w --stdin)
  blob_full=$(git show HEAD:action.yml | runs_image "$full_digest" " (full image)" | git hash-object -w --stdin)
  GIT_INDEX_FILE="$index" git read-tree HEAD
  GIT_INDEX_FILE="$index" git update-index --add --cacheinfo "100644,$blob_slim,action.yml"
  GIT_INDEX_FILE="$index" git update-index --add --cacheinfo "100644,$blob_full,full/action.yml"
  tree=$(GIT_INDEX_FILE="$index" git write-tree)
  commit=$(git -c user.name="${GIT_AUTHOR_NAME:-steer-action release}" -c user.email="${GIT_AUTHOR_EMAIL:-release@invalid}" \
    commit-tree "$tree" -p HEAD -m "Release $version: action.yml runs $image@$slim_digest

full/action.yml runs $image@$full_digest (git and every agent CLI).")
  output release_commit "$commit"
  if git cat-file -e HEAD:.github/workflows/dispatch.yml 2>/dev/null; then
    local blob_dispatch
    blob_dispatch=$(git show HEAD:.github/workflows/dispatch.yml | pin_dispatch "$commit" | git hash-object -w --stdin)
    GIT_INDEX_FILE="$index" git update-index --add --cacheinfo "100644,$blob_dispatch,.github/workflows/dispatch.yml"
    tree=$(GIT_INDEX_FILE="$index" git write-tree)
    commit=$(git -c user.name="${GIT_AUTHOR_NAME:-steer-action release}" -c user.email="${GIT_AUTHOR_EMAIL:-release@invalid}" \
      commit-tree "$tree" -p "$commit" -m "Release $version: the hosted dispatch workflow runs the action of $commit")
    output dispatch_commit "$commit"
  fi
  [[ $local == 1 ]] && return 0
  [[ -n "${GH_TOKEN:-}" && -n "${GITHUB_REPOSITORY:-}" ]] || die "GH_TOKEN and GITHUB_REPOSITORY are needed to publish"
  git -c user.name="steer-action release" -c user.email="release@invalid" tag -a "$version" "$commit" -m "steer-action $version"
  git tag -f "$major" "$commit"
  git -c credential.helper='!f() { echo username=x-access-token; echo "password=$GH_TOKEN"; }; f' \
    push "https://github.com/$GITHUB_REPOSITORY.git" "refs/tags/$version" "+refs/tags/$major:refs/tags/$major" >&2
  gh release create "$version" --verify-tag --title "$version" --notes "$(release_notes "$commit")" >&2
}

release_notes() {  # $1: the commit the tags name
  cat <<EOF
The action runs a prebuilt image, pinned by digest (uses: $GITHUB_REPOSITORY@$version or @$major):

| image | what it holds | digest |
|---|---|---|
| default (\`action.yml\`) | Python and the action; the agent CLI is installed after the pre-flight | \`$image@$slim_digest\` |
| full (\`full/action.yml\`) | the default + git and every agent CLI (air-gapped runners, GHES) | \`$image@$full_digest\` |

Both are built for linux/amd64 and linux/arm64 from the hash-pinned locks; each digest carries an
SBOM and build provenance attestation (\`gh attestation verify oci://$image@<digest> --repo $GITHUB_REPOSITORY\`).

Pin this release by its commit (docs/adopting.md "The dispatch workflow"):
\`uses: $GITHUB_REPOSITORY/.github/workflows/dispatch.yml@$1 # $version\` (the hosted dispatch) or
\`uses: $GITHUB_REPOSITORY@$1 # $version\` (the action).
EOF
}

case "$command" in
  build) build ;;
  publish) publish ;;
  *) die "usage: tools/release/release.sh build|publish --image ... --version vX.Y.Z [...]" ;;
esac
