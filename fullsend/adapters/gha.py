"""GitHub Actions runner I/O: workflow commands, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``.

docs/architecture.md "Runner I/O": message data escapes ``%``, ``\\r``, ``\\n``; properties also
escape ``:`` and ``,``.  Outputs use the multi-line delimiter syntax with ``\\n`` line endings.
Every secret is masked with ``::add-mask::`` before any other
output.  Every line, output and summary is made valid Unicode first
(``runner_safe``: a lone surrogate in agent text would make the write fail), and a
``::stop-commands::`` block is always closed, even when writing a line inside it fails.

Workflow commands mean something only inside a runner (``GITHUB_ACTIONS=true``, see
:func:`in_runner`).  For a person at a terminal a ``Console(plain=True)`` writes errors and
warnings as plain text on standard error instead (no ``::error::``, no ``%0A`` escapes) and
never echoes a secret in an ``::add-mask::`` line; it still redacts every registered secret.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from fullsend.core.text.sanitize import runner_safe


def _token_hex() -> str:
    """32 random hex digits, as ``secrets.token_hex(16)`` (``os.urandom``) without importing
    ``secrets`` and its ``hmac``/``hashlib`` on every start (docs/architecture.md "Fast skip")."""
    return os.urandom(16).hex()


_LOCK = threading.Lock()


def in_runner(environ: Mapping[str, str]) -> bool:
    """True inside a GitHub Actions runner (or act), where ``GITHUB_ACTIONS`` is ``"true"``."""
    return environ.get("GITHUB_ACTIONS", "") == "true"


def escape_data(value: str) -> str:
    """Escape workflow-command message data (``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a workflow-command property value (data escapes plus ``:`` and ``,``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


class Console:
    """Writes log lines and workflow commands to the step log (stdout), thread-safe.

    ``secrets`` registered through :meth:`mask` are also redacted from every line this console
    writes, so a token can never reach the log even where the runner's masking would not apply
    (e.g. under act, or a value split across lines).

    ``plain=True`` is the terminal form (module docstring): ``error``/``warning`` become
    ``error: …``/``warning: …`` lines on ``err_stream`` (default standard error), ``notice`` a
    ``notice: …`` line, groups a plain heading, and :meth:`mask` only redacts.
    """

    def __init__(self, stream: TextIO | None = None, *, plain: bool = False, err_stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdout
        self._err = err_stream or (sys.stderr if stream is None else self._stream)
        self.plain = plain
        self._secrets: list[str] = []

    def mask(self, value: str) -> None:
        """Emit ``::add-mask::`` for ``value`` (each line of it) and redact it from now on."""
        if not value or value in self._secrets:
            return
        self._secrets.append(value)
        self._secrets.sort(key=len, reverse=True)
        if self.plain:
            return
        for part in value.splitlines() or [value]:
            if part.strip():
                self._write(f"::add-mask::{part}")

    @property
    def masked(self) -> tuple[str, ...]:
        """Every value registered through :meth:`mask`, longest first."""
        return tuple(self._secrets)

    def redact(self, text: str) -> str:
        """Replace every registered secret in ``text`` with ``***``."""
        for value in self._secrets:
            text = text.replace(value, "***")
        return text

    def _write(self, line: str, stream: TextIO | None = None) -> None:
        out = stream or self._stream
        with _LOCK:
            self._emit(line, out)
            out.flush()

    def _emit(self, line: str, stream: TextIO | None = None) -> None:
        """Write one line (lock held): valid Unicode, and ``?`` for what the stream cannot encode."""
        out = stream or self._stream
        text = runner_safe(line) + "\n"
        try:
            out.write(text)
        except UnicodeEncodeError:
            encoding = getattr(out, "encoding", None) or "ascii"
            out.write(text.encode(encoding, "replace").decode(encoding))

    def stderr_line(self, message: str) -> None:
        """Write ``message`` (redacted) as it is to the error stream: a terminal's error line."""
        self._write(self.redact(message), self._err)

    def log(self, message: str) -> None:
        """Write a plain log line (redacted)."""
        self._write(self.redact(message))

    def command(self, name: str, message: str, **props: str) -> None:
        """Write ``::name props::message`` with escaping (``error``, ``warning``, ``notice``…).

        In plain mode: ``name: message`` as text (``title`` ahead of the message when given),
        on the error stream for ``error`` and ``warning``."""
        if self.plain:
            title = props.get("title", "")
            line = f"{name}: " + (f"{title}: " if title else "") + message
            self._write(self.redact(line), self._err if name in ("error", "warning") else None)
            return
        text = escape_data(self.redact(message))
        if props:
            rendered = ",".join(f"{k}={escape_property(self.redact(v))}" for k, v in props.items())
            self._write(f"::{name} {rendered}::{text}")
        else:
            self._write(f"::{name}::{text}")

    def error(self, message: str, title: str = "") -> None:
        self.command("error", message, **({"title": title} if title else {}))

    def warning(self, message: str, title: str = "") -> None:
        self.command("warning", message, **({"title": title} if title else {}))

    def notice(self, message: str, title: str = "") -> None:
        self.command("notice", message, **({"title": title} if title else {}))

    def group(self, title: str) -> None:
        self._write(self.redact(title) if self.plain else f"::group::{escape_data(self.redact(title))}")

    def endgroup(self) -> None:
        if not self.plain:
            self._write("::endgroup::")

    def untrusted_block(self, lines: Iterable[str]) -> None:
        """Print untrusted text (the agent's output) with workflow commands switched off.

        Wraps the lines in ``::stop-commands::<random>`` … ``::<random>::`` so a line such as
        ``::set-output`` or ``::add-mask::`` inside them is not processed.
        """
        token = _token_hex()
        with _LOCK:
            self._emit(f"::stop-commands::{token}")
            try:
                for line in lines:
                    self._emit(self.redact(runner_safe(line)))
            finally:
                self._emit(f"::{token}::")
                self._stream.flush()


class StopCommands:
    """Context manager form of :meth:`Console.untrusted_block` for streamed agent output."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self.token = _token_hex()

    def __enter__(self) -> StopCommands:
        self._console._write(f"::stop-commands::{self.token}")
        return self

    def line(self, text: str) -> None:
        self._console._write(self._console.redact(runner_safe(text)))

    def __exit__(self, *exc: object) -> None:
        self._console._write(f"::{self.token}::")


def write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """Append outputs to ``GITHUB_OUTPUT`` with the delimiter syntax (``\\n`` endings only).

    Raises ``OSError`` when the file cannot be written.  A value never contains the random
    delimiter (it is regenerated in the astronomically unlikely case it would).
    """
    if not path:
        return
    chunks = []
    for name, value in ((n, runner_safe(v)) for n, v in outputs.items()):
        delim = f"ghadelimiter_{_token_hex()}"
        while delim in value:
            delim = f"ghadelimiter_{_token_hex()}"
        chunks.append(f"{name}<<{delim}\n{value}\n{delim}\n")
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(chunks))


def write_summary(path: str | None, markdown: str, limit_bytes: int = 1_000_000) -> None:
    """Append markdown to ``GITHUB_STEP_SUMMARY`` (valid Unicode, capped below the runner's 1 MiB limit).

    Raises ``OSError`` when the file cannot be written.
    """
    if not path:
        return
    markdown = runner_safe(markdown)
    data = markdown.encode("utf-8")
    if len(data) > limit_bytes:
        markdown = data[:limit_bytes].decode("utf-8", "ignore") + "\n\n_(summary cut at the size limit)_\n"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(markdown)


#: The runner's file-command files: only the action writes them, after its children are gone.
FILE_COMMAND_KEYS = ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
_GUARD_LIMIT_BYTES = 1 << 20


@dataclass
class FileCommandSnapshot:
    """The file-command files as they were before any child ran: ``{variable: (path, bytes or
    None when the file did not exist)}``; files over 1 MiB are not kept."""

    files: dict[str, tuple[str, bytes | None]] = field(default_factory=dict)

    @classmethod
    def take(cls, environ: Mapping[str, str]) -> FileCommandSnapshot:
        """Read every ``FILE_COMMAND_KEYS`` file named in ``environ`` (never raises)."""
        snapshot = cls()
        for key in FILE_COMMAND_KEYS:
            path = environ.get(key, "")
            if path:
                try:
                    snapshot.files[key] = (path, _read_guarded(path))
                except (OSError, ValueError):
                    continue
        return snapshot

    def restore(self) -> list[str]:
        """Undo every change a child made to the files; returns the variables of the files it had
        changed (each is back as it was), in ``FILE_COMMAND_KEYS`` order.  Never raises."""
        changed = []
        for key, (path, before) in self.files.items():
            try:
                now = _read_guarded(path)
            except (OSError, ValueError):
                now = b"" if before != b"" else None  # unreadable now (a link, a FIFO…): rewrite it
            if now == before:
                continue
            changed.append(key)
            try:
                _put_back(path, before)
            except OSError:
                pass
        return changed


def _read_guarded(path: str) -> bytes | None:
    """The bytes of a regular file (``None`` when missing); ``ValueError`` for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > _GUARD_LIMIT_BYTES:
            raise ValueError(f"{path} is not a regular file of at most 1 MiB")
        return fh.read(_GUARD_LIMIT_BYTES + 1)


def _put_back(path: str, content: bytes | None) -> None:
    """Make ``path`` a regular file holding ``content`` again (removed when ``None``); a link or
    other non-regular entry put in its place is removed, never written through."""
    replace = os.path.islink(path) or not os.path.isfile(path) or content is None
    if replace and os.path.lexists(path):
        os.unlink(path)
    if content is None:
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)


def console_log(console: Console) -> Callable[[str, str], None]:
    """``log(level, message)`` on ``console``: info/done → a plain line, warning → ``::warning::``,
    error → ``::error::``."""

    def log(level: str, message: str) -> None:
        if level == "warning":
            console.warning(message)
        elif level == "error":
            console.error(message)
        else:
            console.log(message)

    return log
