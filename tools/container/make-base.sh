#!/usr/bin/env bash
# Make the local stand-in for debian:bookworm-slim and load it into podman.
#
# No image registry is reachable from this project's machines, so the Dockerfile's base is made
# from Debian's own packages: `debootstrap --variant=minbase bookworm`, slimmed the way the
# published slim image is (no apt lists or caches, no docs, man pages or translations, and dpkg
# told to keep them out of later installs), then `podman import`ed under the same tag the
# Dockerfile names.  Sizes measured on top of it are therefore close to the real thing.
#
# Usage: tools/container/make-base.sh [--force]
#   FULLSEND_CACHE_DIR  cache root (default ~/.cache/fullsend); the tarball is kept under
#                       $FULLSEND_CACHE_DIR/container/ so a later run only imports it.
#   DEBIAN_MIRROR       default http://deb.debian.org/debian (plain HTTP: apt needs no CA here)
#   BASE_TAG            default debian:bookworm-slim
# Needs root, podman and debootstrap (apt-get install podman runc debootstrap).
set -euo pipefail

BASE_TAG="${BASE_TAG:-debian:bookworm-slim}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE_DIR="${FULLSEND_CACHE_DIR:-$HOME/.cache/fullsend}/container"
TARBALL="$CACHE_DIR/debian-bookworm-slim.tar"
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "make-base: '$1' is not installed; install it with: apt-get install -y $2" >&2
    exit 3
  fi
}
need podman "podman runc"

# One maker at a time on this machine (the test groups and .ci/run's background build may ask at
# once): a second caller waits here, then finds the base made.
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.base.lock"
flock 9

if [[ $FORCE == 0 ]] && podman image exists "$BASE_TAG"; then
  echo "make-base: $BASE_TAG is already in podman's store"
  exit 0
fi

slim() {  # $1: the debootstrapped root
  local root=$1
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
         "$root"/var/log/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
         "$root"/usr/share/groff/* "$root"/usr/share/lintian/* "$root"/usr/share/linda/*
  find "$root"/usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete
  find "$root"/usr/share/doc -mindepth 1 -type d -empty -delete
  find "$root"/usr/share/locale -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  mkdir -p "$root"/etc/dpkg/dpkg.cfg.d "$root"/etc/apt/apt.conf.d "$root"/etc/apt/sources.list.d
  # Later package installs leave the same things out (as in the published slim image).
  cat >"$root"/etc/dpkg/dpkg.cfg.d/slim <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  cat >"$root"/etc/apt/apt.conf.d/slim <<'EOF'
APT::Install-Recommends "false";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
Acquire::CompressionTypes::Order:: "gz";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  rm -f "$root"/etc/apt/sources.list
  cat >"$root"/etc/apt/sources.list.d/debian.sources <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

if [[ $FORCE == 1 || ! -s "$TARBALL" ]]; then
  need debootstrap debootstrap
  if [[ $(id -u) != 0 ]]; then echo "make-base: debootstrap needs root" >&2; exit 3; fi
  mkdir -p "$CACHE_DIR"
  work=$(mktemp -d "$CACHE_DIR/debootstrap.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "make-base: debootstrap --variant=minbase bookworm from $MIRROR (about 30-60 s)"
  debootstrap --variant=minbase bookworm "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2; echo "make-base: debootstrap failed" >&2; exit 4; }
  slim "$work/root"
  tar --numeric-owner -C "$work/root" -cf "$TARBALL.partial" .
  mv "$TARBALL.partial" "$TARBALL"
fi

echo "make-base: importing $TARBALL as $BASE_TAG"
podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' \
  "$TARBALL" "$BASE_TAG" >/dev/null
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$BASE_TAG"
