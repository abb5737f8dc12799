#!/usr/bin/env bash
# Build the action image from the repository's Dockerfile with podman, the way a runner would
# (`docker build -f Dockerfile .`), reusing a cached build when nothing it depends on changed.
#
# Usage: tools/container/build-image.sh [--full [--runtimes "claude pi codex"]] [--no-cache]
#   (no option)   the slim default image, what a runner builds (the Dockerfile's last stage)
#   --core        the same slim image (kept for older callers)
#   --full        the full image (--target full: git and every agent CLI)
#   --runtimes    the full image's RUNTIMES build argument (default: the Dockerfile's, all three)
# Prints the image tag as its last line of standard output: localhost/steer-action:<variant>-<hash>
# (variant slim, full or full-<runtimes>), where <hash> covers the build context and the arguments.
#
#   FULLSEND_CACHE_DIR  cache root (default ~/.cache/fullsend); each built image is also saved
#                       as $FULLSEND_CACHE_DIR/container/images/<variant>-<hash>.tar and loaded
#                       from there when podman's store lost it.
#   BUILD_CA_FILE       CA bundle handed to pip and the CLI downloads inside the build
#                       (tools/container/build-ca.sh; default: the host's bundle).
#   PODMAN_RUNTIME      OCI runtime (default runc: crun fails on this machine kind's cgroups).
# Needs podman, runc and the base image (tools/container/make-base.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

FULL=0
RUNTIMES=""
NO_CACHE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --core) FULL=0; shift ;;
    --full) FULL=1; shift ;;
    --runtimes) RUNTIMES="$2"; FULL=1; shift 2 ;;
    --no-cache) NO_CACHE=1; shift ;;
    *) echo "build-image: unknown argument $1" >&2; exit 2 ;;
  esac
done

for tool in podman "${PODMAN_RUNTIME:-runc}"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-image: '$tool' is not installed; install it with: apt-get install -y podman runc" >&2
    exit 3
  fi
done
if ! podman image exists debian:bookworm-slim; then
  echo "build-image: the base debian:bookworm-slim is not in podman's store; make it with tools/container/make-base.sh" >&2
  exit 3
fi

args=()
if [[ $FULL == 0 ]]; then
  variant=slim
elif [[ -n "$RUNTIMES" ]]; then
  variant="full-$(tr ' ' '-' <<<"$RUNTIMES")"; args+=(--target full --build-arg "RUNTIMES=$RUNTIMES")
else
  variant=full; args+=(--target full)
fi

# What the build depends on: the context the .dockerignore lets through, the arguments, the base.
context_hash=$(
  { find Dockerfile .dockerignore requirements.txt entrypoint.py fullsend -type f \
      -not -path '*/__pycache__/*' -not -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum
    echo "args: ${args[*]:-}"
    podman image inspect --format '{{.Id}}' debian:bookworm-slim
  } | sha256sum | cut -c1-12)
tag="localhost/steer-action:$variant-$context_hash"
cache_dir="${FULLSEND_CACHE_DIR:-$HOME/.cache/fullsend}/container/images"
archive="$cache_dir/$variant-$context_hash.tar"

# One build of a variant at a time on this machine: the test groups that need the image (podman,
# adopter) and .ci/run's background build may ask at once; a second caller waits here, then finds
# the image made instead of racing the first to the same archive.
mkdir -p "$cache_dir"
exec 9>"$cache_dir/.$variant.lock"
flock 9

if [[ $NO_CACHE == 0 ]]; then
  if podman image exists "$tag"; then
    echo "build-image: $tag is up to date" >&2; echo "$tag"; exit 0
  fi
  if [[ -s "$archive" ]] && podman load --quiet --input "$archive" >&2 && podman image exists "$tag"; then
    echo "build-image: loaded $tag from $archive" >&2; echo "$tag"; exit 0
  fi
fi

# shellcheck source=tools/container/build-ca.sh
source tools/container/build-ca.sh

echo "build-image: building $tag" >&2
start=$(date +%s)
podman build --runtime "${PODMAN_RUNTIME:-runc}" --pull=never --network host \
  --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
  "${build_ca_args[@]}" "${args[@]}" --tag "$tag" --file Dockerfile . >&2
echo "build-image: built $tag in $(( $(date +%s) - start )) s" >&2

# Keep one image per variant: older tags of this variant (and their archives) go.
podman image ls --format '{{.Repository}}:{{.Tag}}' localhost/steer-action \
  | grep -E "^localhost/steer-action:$variant-[0-9a-f]{12}\$" | grep -vxF "$tag" | xargs -r podman rmi --force >/dev/null 2>&1 || true
rm -f "$cache_dir/$variant"-*.tar
podman save --quiet --output "$archive.partial" "$tag" && mv "$archive.partial" "$archive"
echo "$tag"
