#!/usr/bin/env bash
# Start or stop podman's Docker-compatible API service for act (README.md "Run it locally with
# act": no Docker engine is needed).
#
# Usage: tools/act/podman-service.sh start|stop|status [SOCKET]
#   SOCKET  default $FULLSEND_ACT_SOCKET, else $TMPDIR (or the system temp dir)/fullsend-act/podman.sock
# start: runs `podman system service --time=0 unix://SOCKET` in the background (its pid and log
#        beside the socket) and waits until it answers; prints `export DOCKER_HOST=unix://SOCKET`
#        as its last line.  A service already answering on SOCKET is reused.
# stop:  stops the service this script started on SOCKET (by its pid file).
#
# The service reads its own containers.conf (through CONTAINERS_CONF, nothing under /etc is
# changed): runtime runc and explicit default ulimits, without which containers created through
# the API fail on this machine kind (crun on hybrid cgroups; rlimits).  Needs podman and runc
# (apt-get install -y podman runc), as root.
set -euo pipefail

action="${1:-}"
socket="${2:-${FULLSEND_ACT_SOCKET:-${TMPDIR:-/tmp}/fullsend-act/podman.sock}}"
dir="$(dirname "$socket")"
pid_file="$socket.pid"
log_file="$socket.log"

answers() {  # true when something answers the Docker API's /_ping on the socket
  python3 - "$socket" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(sys.argv[1])
s.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
sys.exit(0 if s.recv(64).split(b" ")[1:2] == [b"200"] else 1)
PY
}

case "$action" in
  start)
    if answers; then
      echo "podman-service: a service already answers on $socket" >&2
      echo "export DOCKER_HOST=unix://$socket"
      exit 0
    fi
    for tool in podman runc; do
      if ! command -v "$tool" >/dev/null 2>&1; then
        echo "podman-service: '$tool' is not installed; install it with: apt-get install -y podman runc" >&2
        exit 3
      fi
    done
    mkdir -p "$dir"
    rm -f "$socket"
    cat >"$dir/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
CONF
    CONTAINERS_CONF="$dir/containers.conf" nohup podman system service --time=0 "unix://$socket" \
      </dev/null >"$log_file" 2>&1 &
    echo $! >"$pid_file"
    for _ in $(seq 1 100); do
      if answers; then
        echo "podman-service: podman's Docker-compatible service answers on $socket (pid $(cat "$pid_file"), log $log_file)" >&2
        echo "export DOCKER_HOST=unix://$socket"
        exit 0
      fi
      if ! kill -0 "$(cat "$pid_file")" 2>/dev/null; then break; fi
      sleep 0.2
    done
    echo "podman-service: the service did not come up on $socket; its log ($log_file) ends with:" >&2
    tail -20 "$log_file" >&2 || true
    exit 4
    ;;
  stop)
    pid="$(cat "$pid_file" 2>/dev/null || true)"
    # Only the service this script started: the pid must still be podman serving this socket.
    if [[ -n "$pid" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "system service --time=0 unix://$socket" \
        && kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      echo "podman-service: stopped the service on $socket" >&2
    else
      echo "podman-service: no service of ours runs on $socket" >&2
    fi
    rm -f "$pid_file" "$socket"
    ;;
  status)
    if answers; then echo "podman-service: answering on $socket"; else echo "podman-service: nothing answers on $socket"; exit 1; fi
    ;;
  *)
    echo "usage: tools/act/podman-service.sh start|stop|status [SOCKET]" >&2
    exit 2
    ;;
esac
