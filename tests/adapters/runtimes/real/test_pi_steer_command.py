"""pi's dedicated ``steer`` command on the real, pinned pi (issue 17), and why the action steers pi
with ``prompt`` + ``streamingBehavior: "steer"`` instead (docs/runtimes.md "Acknowledgements by
identity").

The pinned pi answers its ``steer`` command with ``queued`` (or ``handled`` when an input handler
took it) — never with a delivery.  While a cycle runs, that queue is the same one a ``prompt``
with ``streamingBehavior: "steer"`` enters: pi delivers the message before its next model
request (a user ``message_start``: the acknowledgement).  On an idle pi, though, the ``steer``
command queues the message and starts nothing: it reaches the model only with the next
``prompt``, which an action that has nothing more to say never sends.  The ``prompt`` form
decides inside pi, atomically, between "queue into the running cycle" and "start a cycle".

These tests drive ``pi --mode rpc`` directly (no action code) so they state the CLI's behaviour
that decision rests on; a pi that changes it fails them.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.runtimes.real.conformance import busy_then_done, done
from tests.adapters.runtimes.real.real_cli import offline_env, require_cli
from tests.doubles.anthropic_server import FakeAnthropic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROVIDER, MODEL = "fakeanthropic", "claude-fake-1"
WAIT_S = 30.0
IDLE_PROBE_S = 4.0  # how long an idle pi is watched for a cycle that a queued steer would start


class RpcPi:
    """One ``pi --mode rpc`` process with its stdout read into a queue of JSON objects."""

    def __init__(self, tmp_path: Path, model: FakeAnthropic) -> None:
        work, agent_dir = tmp_path / "work", tmp_path / "home" / ".pi" / "agent"
        work.mkdir(exist_ok=True)
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        PROVIDER: {
                            "baseUrl": model.base_url,
                            "api": "anthropic-messages",
                            "apiKey": "FAKE_ANTHROPIC_KEY",
                            "models": [{"id": MODEL}],
                        }
                    }
                }
            )
        )
        env = offline_env(tmp_path / "home", FAKE_ANTHROPIC_KEY="sk-ant-fake", PI_OFFLINE="1")
        argv = [
            require_cli("pi"),
            "--mode",
            "rpc",
            "--session-dir",
            str(tmp_path / "sessions"),
            "--no-approve",
            "--no-extensions",
            "--no-prompt-templates",
            "--no-themes",
            "--model",
            MODEL,
            "--provider",
            PROVIDER,
        ]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=work
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                self.events.put(obj)

    def send(self, obj: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(obj) + "\n").encode())
        self.process.stdin.flush()

    def wait_for(self, predicate: Any, what: str, timeout_s: float = WAIT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                obj = self.events.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(obj)
            if predicate(obj):
                return obj
        raise AssertionError(f"pi never wrote {what} within {timeout_s:g} s; last: {self.seen[-5:]}")

    def quiet_for(self, seconds: float, predicate: Any) -> list[dict[str, Any]]:
        """Everything pi writes in ``seconds``; fails if any of it matches ``predicate``."""
        deadline, got = time.monotonic() + seconds, []
        while time.monotonic() < deadline:
            try:
                obj = self.events.get(timeout=0.1)
            except queue.Empty:
                continue
            got.append(obj)
            assert not predicate(obj), f"an idle pi started work after a steer command: {obj}"
        return got

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def _response(rpc_id: str) -> Any:
    return lambda o: o.get("type") == "response" and o.get("id") == rpc_id


def _user_message_with(marker: str) -> Any:
    def match(o: dict[str, Any]) -> bool:
        message = o.get("message") if isinstance(o.get("message"), dict) else {}
        content = message.get("content") if isinstance(message, dict) else None
        text = json.dumps(content)
        return o.get("type") == "message_start" and message.get("role") == "user" and marker in text

    return match


def _settled(o: dict[str, Any]) -> bool:
    return o.get("type") == "agent_settled"


def test_the_steer_command_during_a_cycle_is_queued_then_delivered(tmp_path: Path) -> None:
    flag = tmp_path / "work" / "tool-started.flag"
    with FakeAnthropic(busy_then_done(f"touch {flag.name} && sleep 3")) as model:
        pi = RpcPi(tmp_path, model)
        try:
            pi.send({"type": "prompt", "id": "open", "message": "Triage issue 9."})
            assert pi.wait_for(_response("open"), "the prompt's answer")["data"] == {"disposition": "started"}
            deadline = time.monotonic() + WAIT_S
            while not flag.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            pi.send({"type": "steer", "id": "s1", "message": "Also the error path (pi-steer-mid)."})
            answer = pi.wait_for(_response("s1"), "the steer command's answer")
            assert (answer["success"], answer["data"]) == (True, {"disposition": "queued"})
            pi.wait_for(_user_message_with("pi-steer-mid"), "the delivery of the steered message")
            pi.wait_for(_settled, "the end of the cycle")
            assert model.saw_text("pi-steer-mid")
        finally:
            pi.close()


def test_the_steer_command_on_an_idle_pi_starts_nothing_while_prompt_steer_does(tmp_path: Path) -> None:
    with FakeAnthropic(done()) as model:
        pi = RpcPi(tmp_path, model)
        try:
            pi.send({"type": "prompt", "id": "open", "message": "Triage issue 9."})
            pi.wait_for(_settled, "the end of the first cycle")
            calls = len(model.calls)
            pi.send({"type": "steer", "id": "s2", "message": "An update (pi-steer-idle)."})
            answer = pi.wait_for(_response("s2"), "the steer command's answer")
            assert (answer["success"], answer["data"]) == (True, {"disposition": "queued"})
            pi.quiet_for(IDLE_PROBE_S, lambda o: o.get("type") in ("agent_start", "message_start"))
            assert len(model.calls) == calls and not model.saw_text("pi-steer-idle"), "stranded in pi's queue"
            pi.send(
                {
                    "type": "prompt",
                    "id": "p3",
                    "message": "Another update (pi-prompt-idle).",
                    "streamingBehavior": "steer",
                }
            )
            assert pi.wait_for(_response("p3"), "the prompt's answer")["data"] == {"disposition": "started"}
            pi.wait_for(_settled, "the end of the cycle the prompt started")
            assert model.saw_text("pi-prompt-idle")
        finally:
            pi.close()
