#!/usr/bin/env bash
# Make the two images act needs here, each cached under FULLSEND_CACHE_DIR (default
# ~/.cache/fullsend) so a later run only loads them:
#
# 1. the action image, built from the repository's Dockerfile with no build arguments (what a
#    runner builds; tools/container/build-image.sh), tagged act-dockeraction:latest: the name act
#    gives the image of `uses: ./`.  act then runs it as is (--rebuild=false): on this machine
#    kind the registries' TLS passes a proxy whose CA only the build script hands to pip and npm.
# 2. the job image (tools/act/build-job-image.sh), localhost/fullsend-act-job:latest, for
#    -P ubuntu-latest=... (no registry is reachable for GitHub's runner images).
#
# Usage: tools/act/prepare-images.sh          (as root; needs podman, runc, and debootstrap
#                                              the first time: apt-get install -y podman runc debootstrap)
# Prints the job image tag as its last line.
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/container/make-base.sh >&2
action_image="$(tools/container/build-image.sh | tail -n 1)"
podman tag "$action_image" act-dockeraction:latest
echo "prepare-images: action image $action_image, tagged act-dockeraction:latest for act" >&2
tools/act/build-job-image.sh | tail -n 1
