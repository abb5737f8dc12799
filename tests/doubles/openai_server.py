"""A scripted OpenAI Responses API on 127.0.0.1 for the real Codex CLI (``wire_api = "responses"``).

Point Codex at it with a custom provider (``config_toml``): ``model_provider = "fake"`` and
``[model_providers.fake] base_url = "<base_url>/v1", env_key = …, wire_api = "responses"``; Codex
appends ``/responses``.  ``POST /v1/responses`` is a model call answered with the SSE sequence
``response.created``, one ``response.output_item.done`` per output item (an assistant
``message`` with ``output_text``, and optionally a ``function_call`` with a fresh ``call_id``),
then ``response.completed`` with usage.  ``GET /v1/models`` lists the one scripted model; other
paths 404.  See ``model_server`` for scripts, tool hints and the request cap.

This is a test program, not part of the action.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.doubles.model_server import (
    FakeModelServer,
    ModelCall,
    ModelError,
    Reply,
    Script,
    ToolCall,
    new_tool_id,
    send_json,
    send_sse,
    texts_in,
)

RESPONSES_PATH = "/v1/responses"
# Codex's shell tools, most preferred first, and how each takes a command line.
_SHELL_TOOLS = ("exec_command", "shell_command", "shell", "local_shell")


def offered_tools(body: dict[str, Any]) -> list[str]:
    """Names of the function tools offered in a Responses request."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.append(str(tool.get("name") or tool.get("type") or ""))
    return names


def shell_call_item(body: dict[str, Any], call: ToolCall, call_id: str) -> dict[str, Any]:
    """A ``function_call`` output item running ``call.command`` with the shell tool Codex offered;
    the hint ``spawn_agent`` starts a sub-agent with ``call.command`` as its task instead (Codex's
    ``multi_agent_v1`` tools)."""
    if call.hint == "spawn_agent":
        return {
            "type": "function_call",
            "id": new_tool_id("fc_"),
            "call_id": call_id,
            "name": "spawn_agent",
            "namespace": "multi_agent_v1",
            "arguments": json.dumps({"message": call.command}),
            "status": "completed",
        }
    offered = offered_tools(body)
    name = next((n for n in _SHELL_TOOLS if n in offered), "shell")
    if name == "exec_command":
        arguments: dict[str, Any] = {"cmd": call.command}
    elif name == "shell_command":
        arguments = {"command": call.command}
    else:
        arguments = {"command": ["bash", "-lc", call.command]}
    return {
        "type": "function_call",
        "id": new_tool_id("fc_"),
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def function_calls_so_far(body: dict[str, Any]) -> int:
    """How many ``function_call`` items the conversation (``input``) already holds."""
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return sum(1 for item in items if isinstance(item, dict) and item.get("type") == "function_call")


def _usage(body: dict[str, Any]) -> dict[str, Any]:
    size = len(json.dumps(body.get("input") or []))
    return {
        "input_tokens": max(1, size // 4),
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": max(1, size // 4) + 12,
    }


#: ``Reply.stop`` of ``incomplete:<reason>`` ends the stream in ``response.incomplete`` with that reason.
INCOMPLETE = "incomplete:"


class FakeOpenAI(FakeModelServer):
    """The Responses API dialect (see the module docstring); ``script(body) -> Reply``."""

    model = "gpt-fake"

    def is_model_call(self, method: str, path: str) -> bool:
        return path == RESPONSES_PATH

    def other_response(self, method: str, path: str) -> tuple[int, dict[str, Any] | None]:
        if method == "GET" and path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "fake"}]}
        return super().other_response(method, path)

    def answer(self, handler: BaseHTTPRequestHandler, call: ModelCall) -> None:
        body = call.body
        reply = self.scripted_reply(call)
        if reply.error is not None:
            self._fail(handler, body, reply.error)
            return
        response_id = new_tool_id("resp_")
        items: list[dict[str, Any]] = []
        if reply.text or reply.tool is None:
            items.append(
                {
                    "type": "message",
                    "id": new_tool_id("msg_"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text or "ok", "annotations": []}],
                }
            )
        if reply.tool is not None:
            call.tool_id = new_tool_id("call_")
            items.append(shell_call_item(body, reply.tool, call.tool_id))
        base = {"id": response_id, "object": "response", "model": str(body.get("model") or self.model)}
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "response.created",
                {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}},
            ),
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        if reply.stop.startswith(INCOMPLETE):  # the Responses API's incomplete end, with its reason
            events.append(
                (
                    "response.incomplete",
                    {
                        "type": "response.incomplete",
                        "response": {
                            **base,
                            "status": "incomplete",
                            "output": items,
                            "usage": _usage(body),
                            "incomplete_details": {"reason": reply.stop[len(INCOMPLETE) :]},
                        },
                    },
                )
            )
        else:
            events.append(
                (
                    "response.completed",
                    {
                        "type": "response.completed",
                        "response": {**base, "status": "completed", "output": items, "usage": _usage(body)},
                    },
                )
            )
        send_sse(handler, events)

    def _fail(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], error: ModelError) -> None:
        """An HTTP error answer, or (status 200) a stream that ends in ``response.failed``."""
        detail = {"type": error.type, "code": error.code or None, "message": error.message}
        if error.status != 200:
            send_json(handler, error.status, {"error": detail})
            return
        base = {"id": new_tool_id("resp_"), "object": "response", "model": str(body.get("model") or self.model)}
        send_sse(
            handler,
            [
                (
                    "response.created",
                    {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}},
                ),
                (
                    "response.failed",
                    {
                        "type": "response.failed",
                        "response": {**base, "status": "failed", "output": [], "error": detail},
                    },
                ),
            ],
        )


def config_toml(base_url: str, env_key: str = "FAKE_OPENAI_KEY", model: str = FakeOpenAI.model) -> str:
    """A ``$CODEX_HOME/config.toml`` that points Codex at the fake (no network elsewhere).

    ``env_key=""``: the provider takes the key Codex was logged in with (``requires_openai_auth``),
    as the built-in OpenAI provider does, instead of an environment variable.
    """
    key = f'env_key = "{env_key}"\n' if env_key else "requires_openai_auth = true\n"
    return (
        f'model = "{model}"\n'
        'model_provider = "fake"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{base_url}/v1"\n'
        f"{key}"
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def interrupt_scenario(work_command: str, steer_marker: str, done_text: str = "All done.") -> Script:
    """The script of the real-Codex steer test, keyed on the conversation's state.

    A request that carries ``steer_marker`` (a resume with the steer) gets final text quoting
    it.  Otherwise the first call runs ``work_command`` through the shell tool (the turn is busy,
    so the steer interrupts it) and later calls get final text.
    """

    def script(body: dict[str, Any]) -> Reply:
        if any(steer_marker in text for text in texts_in(body.get("input"))):
            return Reply(text=f"{done_text} Steer received: {steer_marker}")
        if function_calls_so_far(body) == 0:
            return Reply(tool=ToolCall("bash", work_command))
        return Reply(text=done_text)

    return script


__all__ = ["FakeOpenAI", "config_toml", "interrupt_scenario", "offered_tools"]
