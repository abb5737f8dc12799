"""In-sandbox launch scripts for the ``openshell`` sandbox (docs/architecture.md "Runtimes").

On OpenShell the runner reaches the agent only through ``sandbox exec``, so each launch is one
``sh -c`` script built here as data: PATH pin and binary pin *before* the agent-writable
``.env``; loader hygiene *after* it; then (steerable) the feeder fragment piped into the pinned
binary.  The local sandbox launches argv lists instead.  Every data word is quoted; the
prompt never appears in a steerable script (it goes through the mailbox).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT, FEEDER_PID_NAME, MAILBOX_NAME
from fullsend.adapters.sandbox.shell import SANDBOX_ENV_FILE, shell_quote

SANDBOX_WORKSPACE = "/sandbox/workspace"
CLAUDE_CFG = "/sandbox/claude-config"
PI_CFG = "/sandbox/pi-config"
CODEX_CFG = "/sandbox/codex-config"
STEER_PATH_PIN = 'readonly FULLSEND_STEER_PATH="$PATH"'
CLAUDE_STEER_UNSET = "unset NODE_OPTIONS NODE_PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT"
PI_STEER_UNSET = "unset LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT"
CODEX_STEER_UNSET = "unset LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT"
# Ordinary (non-steered) launches: the longer list, ordered apart from the steer
# list so the two are told apart.
PLAIN_UNSET = (
    "unset NODE_PATH NODE_OPTIONS PYTHONPATH PYTHONHOME PYTHONSTARTUP BUN_OPTIONS LD_AUDIT LD_LIBRARY_PATH LD_PRELOAD"
)
CLAUDE_PLAIN_FLAGS = ("--print", "--verbose", "--output-format", "stream-json")
# (WIRE, Claude Code CLI) the steerable stream-json flags, in this order.
CLAUDE_STREAM_FLAGS = (*CLAUDE_PLAIN_FLAGS, "--input-format", "stream-json", "--replay-user-messages")
# (WIRE, Codex CLI) flags of every codex exec, first process and resume alike.
CODEX_EXEC_FLAGS = ("exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox")
_SAFE_WORD = re.compile(r"[A-Za-z0-9_./+=:,@%-]+")


def word(s: str) -> str:
    """``s`` as one shell word: bare when plainly safe, else single-quoted."""
    return s if _SAFE_WORD.fullmatch(s) else shell_quote(s)


def words(args: Sequence[str]) -> str:
    """Several shell words joined by spaces."""
    return " ".join(word(a) for a in args)


def feeder_fragment(cfg_dir: str) -> str:
    """The feeder spliced into a steerable launch (newest form)."""
    mailbox, pid = f"{cfg_dir}/{MAILBOX_NAME}", f"{cfg_dir}/{FEEDER_PID_NAME}"
    return (
        f'{{ unset -f tail echo wait; PATH="$FULLSEND_STEER_PATH" tail -n +1 -f {shell_quote(mailbox)} & '
        f"echo $! > {shell_quote(pid)} ; wait ; }}"
    )


def binary_pin(var: str, program: str) -> str:
    """``readonly VAR="$(command -v program)"``, exiting 127 with a message when it is missing."""
    message = shell_quote(f"fullsend: {program} not found on PATH")
    return f'readonly {var}="$(command -v {word(program)})" && test -n "${var}" || {{ echo {message} >&2; exit 127; }}'


def _script(repo_dir: str, pins: Sequence[str], after_env: Sequence[str], env_source: str) -> str:
    """``cd`` and the PATH pin on their own lines; the binary pin chained into ``.env`` and on."""
    *early, bin_pin = pins
    head = [f"cd {shell_quote(repo_dir)} || exit 1", *early]
    return "\n".join(head) + "\n" + " && ".join([bin_pin, env_source, *after_env])


def claude_command(
    extra_flags: Sequence[str], prompt: str, steerable: bool, program: str = "claude", repo_dir: str = SANDBOX_WORKSPACE
) -> str:
    """Claude launch; ``extra_flags`` are the flags after the stream flags (model, …).

    Steerable: feeder | ``"$FULLSEND_CLAUDE_BIN"`` with the stream-json flags, no prompt.
    Otherwise the plain ``--print`` flags and the quoted prompt last.
    """
    pin = binary_pin("FULLSEND_CLAUDE_BIN", program)
    if steerable:
        agent = f'{feeder_fragment(CLAUDE_CFG)} | "$FULLSEND_CLAUDE_BIN" {words([*CLAUDE_STREAM_FLAGS, *extra_flags])}'
        return _script(repo_dir, [STEER_PATH_PIN, pin], [CLAUDE_STEER_UNSET, agent], f". {SANDBOX_ENV_FILE}")
    plain = words([*CLAUDE_PLAIN_FLAGS, *extra_flags])
    agent = f'"$FULLSEND_CLAUDE_BIN" {plain} {shell_quote(prompt or DEFAULT_AGENT_PROMPT)}'
    return _script(repo_dir, [pin], [PLAIN_UNSET, "unset -f claude", agent], f". {SANDBOX_ENV_FILE}")


def codex_app_server_command(flags: Sequence[str], program: str = "codex", repo_dir: str = SANDBOX_WORKSPACE) -> str:
    """Codex live launch: feeder | ``"$FULLSEND_CODEX_BIN" app-server <flags>``; no prompt (the
    mailbox carries the handshake and every turn)."""
    pin = binary_pin("FULLSEND_CODEX_BIN", program)
    agent = f'{feeder_fragment(CODEX_CFG)} | "$FULLSEND_CODEX_BIN" app-server {words(flags)}'.rstrip()
    return _script(repo_dir, [STEER_PATH_PIN, pin], [CODEX_STEER_UNSET, agent], f". {SANDBOX_ENV_FILE}")


def pi_command(
    flags: Sequence[str], session_id: str, prompt: str, program: str = "pi", repo_dir: str = SANDBOX_WORKSPACE
) -> str:
    """pi launch.  A session id makes it steerable (``--mode rpc``, feeder, no prompt);
    an empty one gives exactly the ordinary ``--print --mode json … '<prompt>' </dev/null``."""
    common = [
        "--session-dir",
        f"{PI_CFG}/sessions",
        "--no-approve",
        "--no-extensions",
        "--no-prompt-templates",
        "--no-themes",
        *flags,
    ]
    pin = binary_pin("FULLSEND_PI_BIN", program)
    repin = f"export PI_CODING_AGENT_DIR={shell_quote(PI_CFG)}"
    env_source = f". {shell_quote(SANDBOX_ENV_FILE)}"
    if session_id:
        agent = (
            f'{feeder_fragment(PI_CFG)} | "$FULLSEND_PI_BIN" --mode rpc {words(common)} '
            f"--session-id {shell_quote(session_id)}"
        )
        return _script(repo_dir, [STEER_PATH_PIN, pin], [repin, PI_STEER_UNSET, agent], env_source)
    agent = (
        f'"$FULLSEND_PI_BIN" --print --mode json {words(common)} '
        f"{shell_quote(prompt or DEFAULT_AGENT_PROMPT)} </dev/null"
    )
    return _script(repo_dir, [pin], [repin, PLAIN_UNSET, "unset -f pi", agent], env_source)


def codex_args(flags: Sequence[str], repo_dir: str, last_message_path: str, resume_thread_id: str = "") -> list[str]:
    """Codex exec argv after the binary: every flag before ``resume``; ``-`` last.

    ``flags`` holds ``--model``/``-c`` options.  A resume inserts ``resume <thread_id>`` before the
    final ``-``; the zero turn (no thread id) renders the first-process argv exactly.
    """
    args = [*CODEX_EXEC_FLAGS, "-C", repo_dir, *flags, "-o", last_message_path]
    if resume_thread_id:
        args += ["resume", resume_thread_id]
    return [*args, "-"]


def codex_command(
    flags: Sequence[str],
    prompt: str,
    resume_thread_id: str = "",
    program: str = "codex",
    repo_dir: str = SANDBOX_WORKSPACE,
    last_message_file: str = "last-message.txt",
) -> str:
    """Codex launch: ``printf '%s' '<prompt>' | "$FULLSEND_CODEX_BIN" exec … -``.

    The piped text is the opening prompt, or the steer envelope for a resume; it is never an
    argument of codex itself.
    """
    args = codex_args(flags, repo_dir, f"{CODEX_CFG}/{last_message_file}", resume_thread_id)
    quoted = [
        shell_quote(a) if a in (repo_dir, resume_thread_id, f"{CODEX_CFG}/{last_message_file}") else word(a)
        for a in args
    ]
    agent = f"printf '%s' {shell_quote(prompt)} | \"$FULLSEND_CODEX_BIN\" {' '.join(quoted)}"
    pin = binary_pin("FULLSEND_CODEX_BIN", program)
    return _script(repo_dir, [pin], [PLAIN_UNSET, "unset -f codex", agent], f". {SANDBOX_ENV_FILE}")
