"""A scripted coding agent that speaks Claude Code's stream-json protocol (docs/architecture.md "Claude Code").

With ``--mode rpc`` on its argv it speaks pi's rpc protocol instead (``scripted_rpc``), with
``exec`` as its first argument Codex's ``exec --json`` protocol (``scripted_codex``), and with
``app-server`` first Codex's app-server JSON-RPC (``simulator/agent/appserver.py``).

Run as ``fullsend-scripted-agent`` or ``python -m fullsend.simulator.agent.main`` with the
Claude argv (``--print --verbose --output-format stream-json --input-format stream-json
--replay-user-messages …``; every argument is accepted and ignored).  It prints a ``system/init``,
then reads user lines from stdin.  Each line it *consumes* is echoed at once as a ``user`` event
with ``isReplay: true`` and the same content; the first one starts a turn that "works" for
``SCRIPTED_AGENT_TURN_S`` seconds; lines consumed during a turn are absorbed into it; each turn
ends with one ``result``.  It exits 0 when stdin is closed and no turn is running.

Environment knobs (all optional):

``SCRIPTED_AGENT_TURN_S``     seconds of work per turn (default 2.0)
``SCRIPTED_AGENT_ECHO``       ``eager`` (default: consume and echo a line the moment it arrives)
                              or ``boundary`` (like the real CLI: a line sent mid-turn is
                              consumed after the running step, then absorbed with one more step)
``SCRIPTED_AGENT_LOG``        JSON lines ``{"at": …, "text": …}``, one per consumed message (a file,
                              or an ``http://`` URL each line is POSTed to), and one per step of
                              ``SCRIPTED_AGENT_WORK`` and per project hook run
``SCRIPTED_AGENT_WORK``       JSON list of real steps of the first turn: git, ``fullsend review``
                              (``fullsend.simulator.agent.work``; Claude Code mode also runs the
                              project settings' ``SessionStart`` hooks, as Claude Code does)
``SCRIPTED_AGENT_ENV_DUMP``   file receiving the agent's whole environment as a JSON object
``SCRIPTED_AGENT_ARGV_DUMP``  file receiving the agent's arguments as a JSON list
``SCRIPTED_AGENT_INJECT``     JSON ``{"path": mailbox, "text": …}``: at its first turn the agent
                              appends a user line of its own to that mailbox
``SCRIPTED_AGENT_SPAWN_CHILD`` when ``1``, leaves a background ``sleep`` child behind (group kill)
``SCRIPTED_AGENT_EXIT_CODE``  exit status at the end (default 0)
``SCRIPTED_AGENT_RESULT``     JSON object merged into every ``result`` line (e.g.
                              ``{"subtype": "error_max_turns", "is_error": false}``)
``SCRIPTED_AGENT_AUTO_TURN``  JSON object: once stdin is closed and the last turn ended, the agent runs
                              one turn by itself (as Claude Code does when a background task ends)
                              whose ``result`` carries ``origin.kind`` ``task-notification``, a
                              success merged with this object (not with ``SCRIPTED_AGENT_RESULT``)
``SCRIPTED_AGENT_SAY``        a JSON string: the assistant text of every turn (JSON escapes allowed,
                              so a test can make the agent say a lone surrogate)
``SCRIPTED_AGENT_VERSION``    what ``--version`` prints (default: one line per CLI it stands for,
                              each the version the action pins: ``2.1.332 (Claude Code)``,
                              ``1.6.0``, ``codex-cli 0.171.0``, so every runtime finds its own)
``SCRIPTED_AGENT_FOLD``       with ``boundary``, the lines pending at a step boundary are replayed as
                              ONE user message: ``string`` joins their texts with ``\\n`` (as the
                              pinned Claude Code replays a batch of queued messages), ``blocks``
                              (or ``1``) gives one text block per line
``SCRIPTED_AGENT_LOGIN_DUMP`` file receiving ``{"argv", "key"}`` of each ``login --with-api-key``
                              (Codex's login; the key read from stdin)
``SCRIPTED_AGENT_PID_FILE``   file the agent appends its pid (and its child's) to, one per line;
                              before that it appends to ``<file>.alive`` the earlier pids still
                              alive (nothing of a stopped sandbox survives)
``SCRIPTED_AGENT_LINES``, ``SCRIPTED_AGENT_TASK``, ``SCRIPTED_AGENT_SILENT``: lines of a test's
                              own, a background task the agent waits for at its end, turns without an
                              assistant message (``fullsend/simulator/agent/claude_extra.py``)

This is a test program, not part of the action: it reads its own clock.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import uuid
from typing import Any

from fullsend.simulator.agent.agentlog import log_record, now_text
from fullsend.simulator.agent.claude_extra import BackgroundTask, extra_lines, silent
from fullsend.simulator.agent.work import do_work, project_hooks

_EOF = object()


class _Out:
    """Line-buffered stdout writer shared by the modes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def emit(self, obj: dict[str, Any]) -> None:
        line = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        if not line.isascii() and _has_surrogate(line):
            line = json.dumps(obj, separators=(",", ":"))  # a lone surrogate as "\\udXXX", as JSON.stringify writes it
        with self._lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _read_stdin(inbox: queue.Queue[object]) -> None:
    for raw in sys.stdin.buffer:
        try:
            obj = json.loads(raw.decode("utf-8"))
        except ValueError:
            continue
        if isinstance(obj, dict):
            inbox.put(obj)
    inbox.put(_EOF)


def _log(text: str) -> None:
    log_record({"text": text})


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _setup_side_effects(argv: list[str]) -> None:
    for key, value in (("SCRIPTED_AGENT_ENV_DUMP", dict(os.environ)), ("SCRIPTED_AGENT_ARGV_DUMP", argv)):
        path = os.environ.get(key)
        if path:
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(value, fh)
    pids = [os.getpid()]
    if os.environ.get("SCRIPTED_AGENT_SPAWN_CHILD") == "1":
        child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        pids.append(child.pid)
    pid_file = os.environ.get("SCRIPTED_AGENT_PID_FILE")
    if pid_file:
        earlier = []
        if os.path.exists(pid_file):
            with open(pid_file, encoding="utf-8") as fh:
                earlier = [int(p) for p in fh.read().split()]
        with open(f"{pid_file}.alive", "a", encoding="utf-8") as fh:
            fh.write(" ".join(str(p) for p in earlier if _alive(p)) + "\n")
        with open(pid_file, "a", encoding="utf-8") as fh:
            fh.write("".join(f"{p}\n" for p in pids))


class ClaudeScript:
    """The Claude stream-json behaviour (see the module docstring)."""

    def __init__(self, out: _Out, argv: list[str] | None = None) -> None:
        self.out = out
        self.argv = argv or []
        self.session_id = str(uuid.uuid4())
        self.inbox: queue.Queue[object] = queue.Queue()
        self.turn_s = float(os.environ.get("SCRIPTED_AGENT_TURN_S", "2.0"))
        self.eager = os.environ.get("SCRIPTED_AGENT_ECHO", "eager") != "boundary"
        self.eof = False
        self.turns = 0
        self.injected = False
        self.fold = os.environ.get("SCRIPTED_AGENT_FOLD", "")
        self.result_patch = json.loads(os.environ.get("SCRIPTED_AGENT_RESULT") or "{}")
        self.say = json.loads(os.environ.get("SCRIPTED_AGENT_SAY") or "null")
        self.task = BackgroundTask(out.emit, self.session_id)

    def run(self) -> int:
        self.out.emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": self.session_id,
                "model": "scripted-model",
                "cwd": os.getcwd(),
                "tools": [],
                "claude_code_version": "scripted",
            }
        )
        project_hooks(self.argv, log_record)
        threading.Thread(target=_read_stdin, args=(self.inbox,), daemon=True).start()
        while not self.eof:
            item = self.inbox.get()
            if item is _EOF:
                break
            texts = [self._consume(item)]
            self._turn(texts, self.result_patch)
        if self.task.wind_down():  # the task completed within the ceiling: its notification turn
            self._turn([], {"origin": {"kind": "task-notification"}})
        auto = os.environ.get("SCRIPTED_AGENT_AUTO_TURN")
        if auto:
            self._turn([], {"origin": {"kind": "task-notification"}, **json.loads(auto)})
        for line in extra_lines("end"):
            self.out.emit(line)
        return int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0"))

    def _consume(self, obj: object) -> str:
        return self._consume_all([obj])[0]

    def _consume_all(self, objs: list[object]) -> list[str]:
        """Log and replay consumed lines: one replay each, or one folded replay (see SCRIPTED_AGENT_FOLD)."""
        contents = [
            m.get("content", "") if isinstance(o, dict) and isinstance(m := o.get("message"), dict) else ""
            for o in objs
        ]
        texts = [_content_text(c) for c in contents]
        for text in texts:
            _log(text)
        if len(objs) > 1 and self.fold == "string":
            contents = ["\n".join(texts)]
        elif len(objs) > 1 and self.fold:
            contents = [[{"type": "text", "text": text} for text in texts]]
        for content in contents:
            self.out.emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "session_id": self.session_id,
                    "parent_tool_use_id": None,
                    "uuid": str(uuid.uuid4()),
                    "timestamp": now_text(),
                    "isReplay": True,
                }
            )
        return texts

    def _work(self, seconds: float, texts: list[str]) -> None:
        """Work for ``seconds``; in eager mode consume (and absorb) lines as they arrive."""
        deadline = threading.Event()
        timer = threading.Timer(seconds, deadline.set)
        timer.start()
        while not deadline.is_set():
            if not self.eager or self.eof:
                deadline.wait()
                break
            try:
                item = self.inbox.get(timeout=0.01)
            except queue.Empty:
                continue
            if item is _EOF:
                self.eof = True
            else:
                texts.append(self._consume(item))
        timer.cancel()

    def _drain_pending(self, texts: list[str]) -> bool:
        items: list[object] = []
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                break
            if item is _EOF:
                self.eof = True
                break
            items.append(item)
        if items:
            texts += self._consume_all(items)
        return bool(items)

    def _turn(self, texts: list[str], patch: dict[str, Any]) -> None:
        self._maybe_inject()
        if self.turns == 0:
            do_work(log_record)
        self._work(self.turn_s, texts)
        if not self.eager and self._drain_pending(texts):
            self._work(self.turn_s / 2, texts)  # the absorbed steer is answered in this turn
        self.turns += 1
        self.task.start()
        for line in extra_lines("turn"):
            self.out.emit(line)
        msg_id = f"msg_{uuid.uuid4().hex[:12]}"
        usage = {
            "input_tokens": 10 * len(texts),
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if silent():
            return self._result(usage, patch)
        self.out.emit(
            {
                "type": "assistant",
                "session_id": self.session_id,
                "message": {
                    "id": msg_id,
                    "role": "assistant",
                    "usage": usage,
                    "content": [
                        {"type": "text", "text": self.say or f"turn {self.turns}: handled {len(texts)} message(s)"}
                    ],
                },
            }
        )
        self._result(usage, patch)

    def _result(self, usage: dict[str, int], patch: dict[str, Any]) -> None:
        self.out.emit(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "num_turns": 1,
                "result": f"turn {self.turns} done",
                "session_id": self.session_id,
                "total_cost_usd": round(0.01 * self.turns, 6),
                "usage": usage,
                **patch,
            }
        )

    def _maybe_inject(self) -> None:
        spec = os.environ.get("SCRIPTED_AGENT_INJECT")
        if not spec or self.injected:
            return
        self.injected = True
        inject = json.loads(spec)
        line = json.dumps(
            {"type": "user", "message": {"role": "user", "content": inject["text"]}},
            separators=(",", ":"),
            ensure_ascii=False,
        )
        with open(inject["path"], "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _pinned_versions() -> str:
    from fullsend.adapters.runtimes.claude.runtime import CLAUDE_VERSIONS
    from fullsend.adapters.runtimes.codex.runtime import CODEX_VERSIONS
    from fullsend.adapters.runtimes.pi.runtime import PI_VERSIONS
    from fullsend.adapters.runtimes.versions import version_text

    return "\n".join(
        (
            f"{version_text(CLAUDE_VERSIONS.pinned)} (Claude Code)",
            version_text(PI_VERSIONS.pinned),
            f"codex-cli {version_text(CODEX_VERSIONS.pinned)}",
        )
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point (console script ``fullsend-scripted-agent``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:
        print(os.environ.get("SCRIPTED_AGENT_VERSION") or _pinned_versions())
        return 0
    _setup_side_effects(argv)  # other flags are accepted and ignored
    if "rpc" in argv and "--mode" in argv:
        from fullsend.simulator.agent.pi import PiScript

        code = PiScript(_Out()).run()
    elif argv[:1] == ["exec"]:
        from fullsend.simulator.agent.codex import CodexScript

        code = CodexScript(_Out(), argv).run()
    elif argv[:2] == ["login", "--with-api-key"]:  # Codex's login: the key on stdin
        key = sys.stdin.read().strip()
        dump = os.environ.get("SCRIPTED_AGENT_LOGIN_DUMP")
        if dump:
            with open(dump, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"argv": argv, "key": key}) + "\n")
        code = 0
    elif argv[:1] == ["app-server"]:
        from fullsend.simulator.agent.appserver import AppServerScript

        code = AppServerScript(_Out()).run()
    else:
        code = ClaudeScript(_Out(), argv).run()
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
