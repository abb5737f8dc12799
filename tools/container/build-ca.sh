# Sourced by tools/container/build-image.sh and tools/release/release.sh: the extra CA bundle a
# build hands to pip and the CLI downloads, for machines whose registry traffic passes a TLS proxy.
#
#   BUILD_CA_FILE  the bundle (default: the host's, from SSL_CERT_FILE / PIP_CERT / Debian's path,
#                  when it exists).  A copy in a directory of its own is mounted read-only over the
#                  base's empty /mnt for the build only: a mount point that already exists leaves
#                  nothing behind in any layer, and no image or build argument names the host's path.
#
# Sets the array build_ca_args (empty when there is no bundle) and removes the copy on exit.
build_ca_args=()
build_ca_file="${BUILD_CA_FILE:-}"
if [[ -z "$build_ca_file" ]]; then
  for candidate in "${SSL_CERT_FILE:-}" "${PIP_CERT:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [[ -n "$candidate" && -s "$candidate" ]]; then build_ca_file="$candidate"; break; fi
  done
fi
if [[ -n "$build_ca_file" ]]; then
  build_ca_dir=$(mktemp -d)
  trap 'rm -rf "$build_ca_dir"' EXIT
  cp "$(readlink -f "$build_ca_file")" "$build_ca_dir/build-ca.crt"
  chmod 755 "$build_ca_dir"; chmod 644 "$build_ca_dir/build-ca.crt"
  build_ca_args=(--volume "$build_ca_dir:/mnt:ro" --build-arg BUILD_CA_BUNDLE=/mnt/build-ca.crt)
fi
