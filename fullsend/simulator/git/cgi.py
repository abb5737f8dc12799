"""``git http-backend`` as a CGI program: the request's body in, the status, headers and body out.

git's smart HTTP protocol (https://git-scm.com/docs/http-protocol) is two requests per command:
``GET …/info/refs?service=git-upload-pack|git-receive-pack`` (the advertisement) and ``POST
…/git-upload-pack|git-receive-pack`` (the exchange).  ``git http-backend``
(https://git-scm.com/docs/git-http-backend) serves both from the CGI variables set here; a push is
served only when ``REMOTE_USER`` is set (its ``http.receivepack`` default).  git sends a large
request body with ``Transfer-Encoding: chunked``: :func:`read_body` decodes it whole first.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

#: A generous bound for one exchange of the small repositories the plays push.
BACKEND_TIMEOUT_S = 120
MAX_BODY_BYTES = 256 << 20


class BodyError(Exception):
    """A request body that is malformed or larger than ``MAX_BODY_BYTES``."""


@dataclass(frozen=True)
class CgiAnswer:
    """What ``git http-backend`` answered: ``status`` (200 when it set none), its headers, the body."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def read_body(stream: BinaryIO, headers: Mapping[str, str]) -> bytes:
    """The whole request body: ``Content-Length`` bytes, or every chunk of a chunked body.

    ``headers`` have lower-case names.  Raises ``BodyError`` for a bad chunk size or a body above
    ``MAX_BODY_BYTES``."""
    if headers.get("transfer-encoding", "").lower() != "chunked":
        length = int(headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            raise BodyError(f"the body is {length} bytes, above {MAX_BODY_BYTES}")
        return stream.read(length) if length > 0 else b""
    parts: list[bytes] = []
    total = 0
    while True:
        line = stream.readline(1024).split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            raise BodyError(f"bad chunk size {line[:20]!r}") from None
        if size == 0:
            stream.readline(1024)  # the empty line after the last chunk (no trailers are sent by git)
            return b"".join(parts)
        total += size
        if total > MAX_BODY_BYTES:
            raise BodyError(f"the chunked body passes {MAX_BODY_BYTES} bytes")
        parts.append(stream.read(size))
        stream.readline(1024)  # the CRLF closing the chunk


def run_backend(
    project_root: Path,
    method: str,
    path_info: str,
    query: str,
    body: bytes,
    headers: Mapping[str, str],
    remote_user: str,
) -> CgiAnswer:
    """Run ``git http-backend`` once for one request (``headers`` with lower-case names).

    Raises ``OSError`` when git cannot be started, ``subprocess.TimeoutExpired`` after
    ``BACKEND_TIMEOUT_S``."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "GIT_PROJECT_ROOT": str(project_root),
        "GIT_HTTP_EXPORT_ALL": "1",
        "GATEWAY_INTERFACE": "CGI/1.1",
        "REQUEST_METHOD": method,
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "CONTENT_TYPE": headers.get("content-type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "REMOTE_ADDR": "127.0.0.1",
        "HOME": str(project_root),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if remote_user:
        env["REMOTE_USER"] = remote_user
    for name, variable in (("content-encoding", "HTTP_CONTENT_ENCODING"), ("git-protocol", "GIT_PROTOCOL")):
        if headers.get(name):
            env[variable] = headers[name]
    proc = subprocess.run(
        ["git", "http-backend"], input=body, capture_output=True, env=env, timeout=BACKEND_TIMEOUT_S, check=False
    )
    return parse_cgi(proc.stdout)


def parse_cgi(raw: bytes) -> CgiAnswer:
    """A CGI program's output (headers, an empty line, the body) as a ``CgiAnswer``; output with no
    header block is a 502 carrying it."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        head, sep, body = raw.partition(b"\n\n")
    if not sep:
        return CgiAnswer(502, [("Content-Type", "text/plain")], b"git http-backend answered no headers\n" + raw[:500])
    status, headers = 200, []
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "status":
            status = int(value.strip().split(" ", 1)[0])
        elif name.strip():
            headers.append((name.strip(), value.strip()))
    return CgiAnswer(status, headers, body)
