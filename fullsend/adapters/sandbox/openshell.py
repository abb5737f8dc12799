"""The ``openshell`` sandbox: drives the NVIDIA OpenShell CLI (docs/architecture.md "Sandboxes").

Every CLI call is an argv built as data by the ``*_argv`` functions below (tested as data) and
run through ``fullsend.adapters.confinement.proc``.  The runner reaches the sandbox only through
``sandbox exec`` and ``sandbox upload``; ``stop`` (waits for ``Stopped``) ends every process
while keeping the workspace, ``start`` (waits for ``Ready``) brings it back, ``phase`` parses
``Phase: <phase>`` from ``sandbox get``.  Paths are in-sandbox POSIX paths under ``/sandbox``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from fullsend.adapters.confinement import proc
from fullsend.adapters.sandbox.process import LocalProcess
from fullsend.adapters.sandbox.shell import SANDBOX_ENV_FILE, sanitize_output, shell_quote
from fullsend.core.tokens.exports import env_file_lines
from fullsend.errors import SandboxError
from fullsend.ports import Launch

SANDBOX_ROOT = PurePosixPath("/sandbox")
CLI_ENV_KEYS = ("PATH", "HOME", "XDG_CONFIG_HOME", "OPENSHELL_GATEWAY", "OPENSHELL_CONFIG")
PHASE_READ_BOUND_S = 10.0
_PHASE = re.compile(r"^\s*Phase:\s*(\S+)\s*$", re.MULTILINE)


def create_argv(cli: str, name: str, image: str = "", policy: str = "", providers: Sequence[str] = ()) -> list[str]:
    """``sandbox create`` of a persistent sandbox whose main process sleeps (fullsend#6691)."""
    argv = [cli, "sandbox", "create", "--name", name, "--keep", "--no-auto-providers", "--no-tty"]
    argv += ["--from", image] if image else []
    argv += ["--policy", policy] if policy else []
    for provider in providers:
        argv += ["--provider", provider]
    return [*argv, "--detach", "--", "sleep", "infinity"]


def exec_argv(cli: str, name: str, command: str, workdir: str = "", timeout_s: float | None = None) -> list[str]:
    """``sandbox exec … -- sh -c <command>`` (exits with the remote exit code)."""
    argv = [cli, "sandbox", "exec", "--name", name]
    argv += ["--workdir", workdir] if workdir else []
    argv += ["--timeout", str(int(timeout_s))] if timeout_s else []
    return [*argv, "--", "sh", "-c", command]


def upload_argv(cli: str, name: str, src: str, dest: str) -> list[str]:
    """``sandbox upload`` (a tar extraction that truncates its target: never for the mailbox)."""
    return [cli, "sandbox", "upload", name, src, dest]


def lifecycle_argv(cli: str, verb: str, name: str) -> list[str]:
    """``sandbox stop|start|get|delete <name>``."""
    if verb not in ("stop", "start", "get", "delete"):
        raise ValueError(f"unknown sandbox verb {verb!r}")
    return [cli, "sandbox", verb, name]


def parse_phase(stdout: str) -> str:
    """The phase from ``sandbox get`` output (``Phase: Ready``); raises ``SandboxError`` if absent."""
    match = _PHASE.search(stdout)
    if match is None:
        raise SandboxError("the sandbox description has no Phase line")
    return match.group(1)


def env_file_text(env: Mapping[str, str]) -> str:
    """``export K='V'`` lines for an env file sourced by the launch (values never on argv)."""
    bad = [k for k in env if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)]
    if bad:
        raise SandboxError("an environment variable name is not a valid shell name")
    return "".join(f"export {k}={shell_quote(v)}\n" for k, v in sorted(env.items()))


class OpenShellSandbox:
    """``sandbox: openshell`` (implements ``fullsend.ports.Sandbox``); methods raise ``SandboxError``."""

    kind = "openshell"

    def __init__(
        self,
        name: str,
        cli: str = "openshell",
        image: str = "",
        policy: str = "",
        providers: Sequence[str] = (),
        cli_env: Mapping[str, str] | None = None,
        create: bool = True,
    ) -> None:
        self.name, self.cli, self.root = name, cli, Path(SANDBOX_ROOT)
        self._env = (
            dict(cli_env) if cli_env is not None else {k: os.environ[k] for k in CLI_ENV_KEYS if k in os.environ}
        )
        if create:
            self._run(create_argv(cli, name, image, policy, providers), 120.0, "creating the sandbox")

    def _run(self, argv: list[str], timeout_s: float, what: str) -> proc.ExecResult:
        result = proc.run_command(argv, timeout_s=timeout_s, env=self._env)
        if result.exit_code != 0:
            raise SandboxError(f"{what}: exit {result.exit_code}: {sanitize_output(result.stderr)[-500:]}")
        return result

    def exec(self, command: str, timeout_s: float) -> proc.ExecResult:
        """Run ``sh -c command`` in the sandbox; a non-zero remote exit is returned, not raised."""
        return proc.run_command(
            exec_argv(self.cli, self.name, command, timeout_s=timeout_s), timeout_s=timeout_s + 5.0, env=self._env
        )

    def make_dir(self, path: Path) -> None:
        """``mkdir -p`` inside the sandbox."""
        result = self.exec(f"mkdir -p {shell_quote(str(path))}", 15.0)
        if result.exit_code != 0:
            raise SandboxError(f"creating {path} in the sandbox: {sanitize_output(result.stderr)}")

    def upload(self, src: Path, dest: Path) -> None:
        """Copy a host file into the sandbox (truncates ``dest``)."""
        self._run(upload_argv(self.cli, self.name, str(src), str(dest)), 60.0, "uploading to the sandbox")

    def stop(self, timeout_s: float) -> None:
        """``sandbox stop`` (every process ends; the workspace stays)."""
        self._run(lifecycle_argv(self.cli, "stop", self.name), timeout_s, "stopping the sandbox")

    def start(self, timeout_s: float) -> None:
        """``sandbox start`` (waits for Ready; a fresh main process)."""
        self._run(lifecycle_argv(self.cli, "start", self.name), timeout_s, "starting the sandbox")

    def phase(self) -> str:
        """The sandbox phase (``Ready``, ``Stopped``, ``Error`` …), read within 10 s."""
        result = self._run(lifecycle_argv(self.cli, "get", self.name), PHASE_READ_BOUND_S, "reading the sandbox phase")
        return parse_phase(result.stdout)

    def delete(self) -> None:
        """``sandbox delete``."""
        self._run(lifecycle_argv(self.cli, "delete", self.name), 60.0, "deleting the sandbox")

    def launch(self, launch: Launch) -> LocalProcess:
        """Start a ``Launch`` inside the sandbox through a streaming ``sandbox exec``.

        Its pinned ``script`` when it has one (``fullsend.adapters.runtimes.launch``; the feeder is
        inside it): ``env`` becomes ``/sandbox/workspace/.env`` (``export`` lines, ``PATH`` first),
        which the script sources after its PATH and binary pins.  Else its ``argv``: ``env``
        travels in an uploaded file (sourced, then removed) and, with ``mailbox``, the feeder
        fragment feeds the agent's stdin.  Env values are never on argv; the script carries no
        steer text (that goes through the mailbox).  ``stdin_bytes`` is the process's stdin.
        """
        if launch.script:
            self._upload_text(workspace_env_text(launch.env), SANDBOX_ENV_FILE)
            return self._stream(launch_shell_argv(self.cli, self.name, launch.script), launch.stdin_bytes)
        env_path = f"{SANDBOX_ROOT}/.fullsend-launch-{os.getpid()}.env"
        self._upload_text(env_file_text(launch.env), env_path)
        script = launch_script(launch.argv, env_path, str(launch.cwd), launch.mailbox, launch.feeder_pid_file)
        return self._stream(exec_argv(self.cli, self.name, script), launch.stdin_bytes)

    def _upload_text(self, text: str, dest: str) -> None:
        """Write ``text`` to a host temp file, upload it to ``dest``, remove the host copy."""
        with tempfile.NamedTemporaryFile("w", delete=False, suffix=".env") as fh:
            fh.write(text)
        try:
            self.upload(Path(fh.name), Path(dest))
        finally:
            os.unlink(fh.name)

    def _stream(self, argv: list[str], stdin_bytes: bytes | None) -> LocalProcess:
        popen = proc.spawn(argv, env=self._env, stdin=proc.PIPE)
        assert popen.stdin is not None
        popen.stdin.write(stdin_bytes or b"")
        popen.stdin.close()
        return LocalProcess(popen)


def workspace_env_text(env: Mapping[str, str]) -> str:
    """``/sandbox/workspace/.env`` for a pinned launch in the order of
    docs/architecture.md "Sandbox environment": ``PATH``,
    the rest sorted, the two run facts, and last the ``FULLSEND_STEER_ACTIVE`` export or unset."""

    def check(name: str) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise SandboxError("an environment variable name is not a valid shell name")

    return "".join(line + "\n" for line in env_file_lines(dict(env), check))


def launch_shell_argv(cli: str, name: str, script: str) -> list[str]:
    """The streaming ``sandbox exec`` that runs one pinned launch script of ``runtimes.commands``."""
    return exec_argv(cli, name, script)


def launch_script(argv: Sequence[str], env_path: str, cwd: str, mailbox: Path | None, pid_file: Path | None) -> str:
    """The in-sandbox launch: load and delete the env file, clear the environment, run ``argv``."""
    words = " ".join(shell_quote(a) for a in argv)
    head = f"set -a && . {shell_quote(env_path)} && set +a && rm -f {shell_quote(env_path)} && cd {shell_quote(cwd)}"
    if mailbox is None:
        return f"{head} && exec {words}"
    feeder = (
        f"{{ unset -f tail echo wait; tail -n +1 -f {shell_quote(str(mailbox))} & "
        f"echo $! > {shell_quote(str(pid_file))} ; wait ; }}"
    )
    return f"{head} && {feeder} | {words}"
