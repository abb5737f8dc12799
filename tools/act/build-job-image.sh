#!/usr/bin/env bash
# Build the job image act runs the example workflows' jobs in (job-image.Dockerfile), reusing a
# cached build when neither the Dockerfile nor the base changed.
#
# Usage: tools/act/build-job-image.sh
# Prints the image tag as its last line of standard output, localhost/fullsend-act-job:<hash>,
# and also tags it localhost/fullsend-act-job:latest (the name README "Run it locally with act"
# passes to act as -P ubuntu-latest=...).
#
#   FULLSEND_CACHE_DIR  cache root (default ~/.cache/fullsend); the image is saved as
#                       $FULLSEND_CACHE_DIR/act/job-<hash>.tar and loaded from there when
#                       podman's store lost it.
#   PODMAN_RUNTIME      OCI runtime (default runc: crun fails on this machine kind's cgroups).
# Needs podman, runc and the base image (tools/container/make-base.sh).
set -euo pipefail
cd "$(dirname "$0")"

for tool in podman "${PODMAN_RUNTIME:-runc}"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-job-image: '$tool' is not installed; install it with: apt-get install -y podman runc" >&2
    exit 3
  fi
done
if ! podman image exists debian:bookworm-slim; then
  echo "build-job-image: the base debian:bookworm-slim is not in podman's store; make it with tools/container/make-base.sh" >&2
  exit 3
fi

hash=$( { sha256sum job-image.Dockerfile; podman image inspect --format '{{.Id}}' debian:bookworm-slim; } \
  | sha256sum | cut -c1-12)
name=localhost/fullsend-act-job
tag="$name:$hash"
cache_dir="${FULLSEND_CACHE_DIR:-$HOME/.cache/fullsend}/act"
archive="$cache_dir/job-$hash.tar"

# One build at a time on this machine (the act test groups may ask at once): see build-image.sh.
mkdir -p "$cache_dir"
exec 9>"$cache_dir/.job.lock"
flock 9

if podman image exists "$tag"; then
  echo "build-job-image: $tag is up to date" >&2
elif [[ -s "$archive" ]] && podman load --quiet --input "$archive" >&2 && podman image exists "$tag"; then
  echo "build-job-image: loaded $tag from $archive" >&2
else
  echo "build-job-image: building $tag" >&2
  podman build --runtime "${PODMAN_RUNTIME:-runc}" --pull=never --network host \
    --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
    --tag "$tag" --file job-image.Dockerfile . >&2
  rm -f "$cache_dir"/job-*.tar
  podman save --quiet --output "$archive.partial" "$tag" && mv "$archive.partial" "$archive"
  # Older builds of the job image go (the new one is tagged latest below).
  podman image ls --format '{{.Repository}}:{{.Tag}}' "$name" \
    | grep -E "^$name:[0-9a-f]{12}\$" | grep -vxF "$tag" | xargs -r podman rmi --force >/dev/null 2>&1 || true
fi
podman tag "$tag" "$name:latest"
echo "$tag"
