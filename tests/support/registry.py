"""A real OCI registry on 127.0.0.1: Debian's ``docker-registry`` (the CNCF distribution registry).

``LocalRegistry`` writes a config with filesystem storage under a temporary directory, serves
on a free port over plain HTTP (podman then needs ``--tls-verify=false``) and stops the process
on exit.  A missing ``docker-registry`` skips (developer machine) or fails (CI) the test
(tests/support/tools.py).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.support.tools import missing_tool

INSTALL = "apt-get install -y docker-registry (.ci/run does this)"
START_TIMEOUT_S = 30.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalRegistry:
    """``with LocalRegistry(tmp) as reg:`` → ``reg.host`` is ``127.0.0.1:<port>``."""

    def __init__(self, root: Path) -> None:
        binary = shutil.which("docker-registry") or shutil.which("registry")
        if binary is None:
            missing_tool("docker-registry", INSTALL)
        self._binary = str(binary)
        self._root = root
        self.host = f"127.0.0.1:{_free_port()}"
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LocalRegistry:
        self._root.mkdir(parents=True, exist_ok=True)
        config = self._root / "config.yml"
        config.write_text(
            f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n"
            f"    rootdirectory: {self._root / 'data'}\nhttp:\n  addr: {self.host}\n"
        )
        log = open(self._root / "registry.log", "wb")
        self._proc = subprocess.Popen([self._binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(
            f"docker-registry did not answer on {self.host}: {(self._root / 'registry.log').read_text()[-2000:]}"
        )

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
