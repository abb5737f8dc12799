# The job image act runs the example workflows' jobs in (-P ubuntu-latest=<this image>): no
# registry is reachable from this project's machines, so GitHub's ubuntu-latest runner image is
# replaced by the local debian:bookworm-slim (tools/container/make-base.sh) plus what the jobs'
# steps call: bash (the Route job is the action's own image, `fullsend route`, so neither the
# GitHub CLI nor jq), git, tar and ca-certificates as on a runner, and python3 and openssl (both
# on ubuntu-latest) for the local stand-ins of actions/checkout and
# actions/create-github-app-token (tools/act/stand-ins/).  Built by tools/act/build-job-image.sh.
FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates git tar python3 openssl \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
CMD ["bash"]
