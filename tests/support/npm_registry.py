"""A stand-in for registry.npmjs.org on 127.0.0.1: serves tarballs by their registry path.

Used to install agent CLIs from locks without the network (tests/adapters/agentcli) and, in the
container tests, from tarballs cached on the host.  ``FakeRegistry.url`` is what
``--registry`` / ``npm_config_registry`` take; ``requests`` lists the paths asked for.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def npm_tarball(
    files: Mapping[str, bytes | str], modes: Mapping[str, int] | None = None, top: str = "package"
) -> bytes:
    """A gzip tarball with ``files`` under ``top/`` (``modes`` per name, default 0o644)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size, info.mode = len(data), (modes or {}).get(name, 0o644)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def integrity(data: bytes) -> str:
    """The SRI string npm locks carry: ``sha512-<base64>``."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


class FakeRegistry:
    """Serve ``blobs`` (registry path such as ``@scope/name/-/name-1.0.0.tgz`` → bytes)."""

    def __init__(self, blobs: Mapping[str, bytes]) -> None:
        self.blobs = dict(blobs)
        self.requests: list[str] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.lstrip("/")
                registry.requests.append(path)
                body = registry.blobs.get(path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def registry_path(resolved: str) -> str:
    """The path of a registry.npmjs.org tarball URL (what a mirror serves it under)."""
    from fullsend.adapters.agentcli.lock import NPM_REGISTRY

    return resolved[len(NPM_REGISTRY) :] if resolved.startswith(NPM_REGISTRY) else resolved


def cached_tarballs(runtime: str, cache_dir: Path) -> dict[str, bytes]:
    """The real tarballs of ``runtime``'s locked CLI on this platform, by registry path, kept in
    ``cache_dir`` (named by their sha512) and downloaded from registry.npmjs.org when missing,
    each checked against the lock.  Raises ``FetchError`` when a download fails."""
    from fullsend.adapters.agentcli.fetch import download_verified
    from fullsend.adapters.agentcli.lock import Platform, plan_install

    cache_dir.mkdir(parents=True, exist_ok=True)
    blobs: dict[str, bytes] = {}
    for package in plan_install(runtime, Platform.here()).packages:
        cached = cache_dir / (base64.b64decode(package.integrity.removeprefix("sha512-")).hex() + ".tgz")
        if not cached.exists() or integrity(cached.read_bytes()) != package.integrity:
            partial = cached.with_suffix(".partial")
            with open(partial, "wb") as out:
                download_verified(package.resolved, package.integrity, out)
            partial.replace(cached)
        blobs[registry_path(package.resolved)] = cached.read_bytes()
    return blobs
