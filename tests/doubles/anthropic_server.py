"""A scripted Anthropic Messages API on 127.0.0.1 for the real Claude Code and pi CLIs.

Point a CLI at it with ``ANTHROPIC_BASE_URL=<base_url>`` and any ``ANTHROPIC_API_KEY`` (Claude
Code), or with a pi ``models.json`` provider ``{"baseUrl": <base_url>, "api":
"anthropic-messages"}``.  ``POST /v1/messages`` (any query, e.g. ``?beta=true``) is a model
call: with ``"stream": true`` the reply is the standard SSE sequence (``message_start``, per
block ``content_block_start``/``content_block_delta``/``content_block_stop``, ``message_delta``
with ``stop_reason`` ``tool_use`` or ``end_turn``, ``message_stop``); without it, one JSON
message.  ``HEAD /`` (Claude Code's connectivity probe) and ``count_tokens`` answer 200; other
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

MESSAGES_PATH = "/v1/messages"


def tool_name_for(body: dict[str, Any], hint: str) -> str:
    """The name of the offered tool matching ``hint`` (case-insensitive), else ``hint`` itself."""
    for tool in body.get("tools") or []:
        name = tool.get("name", "") if isinstance(tool, dict) else ""
        if name.lower() == hint.lower():
            return name
    return hint


def last_user_texts(body: dict[str, Any]) -> list[str]:
    """The strings of the last ``user`` message (its text blocks and tool results)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return list(texts_in(users[-1].get("content"))) if users else []


def assistant_tool_uses(body: dict[str, Any]) -> int:
    """How many ``tool_use`` blocks the assistant already produced in this conversation."""
    count = 0
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, list):
                count += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
    return count


def _blocks(reply: Reply, body: dict[str, Any], tool_id: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    if reply.tool is not None:
        tool_input: dict[str, Any] = {"command": reply.tool.command, "description": "scripted step"}
        if reply.tool.input is not None:
            tool_input = dict(reply.tool.input)
        if reply.tool.background:
            tool_input["run_in_background"] = True
        blocks.append(
            {"type": "tool_use", "id": tool_id, "name": tool_name_for(body, reply.tool.hint), "input": tool_input}
        )
    return blocks or [{"type": "text", "text": "ok"}]


def _usage(body: dict[str, Any]) -> dict[str, int]:
    size = len(json.dumps(body.get("messages") or []))
    return {
        "input_tokens": max(1, size // 4),
        "output_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def sse_events(
    message_id: str, model: str, blocks: list[dict[str, Any]], stop_reason: str, usage: dict[str, int]
) -> list[tuple[str, dict[str, Any]]]:
    """The Messages API stream for one assistant message made of ``blocks``."""
    start = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opening, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class FakeAnthropic(FakeModelServer):
    """The Messages API dialect (see the module docstring); ``script(body) -> Reply``."""

    def __init__(self, script: Script, max_requests: int = 40) -> None:
        super().__init__(script, max_requests)

    def is_model_call(self, method: str, path: str) -> bool:
        return path == MESSAGES_PATH

    def other_response(self, method: str, path: str) -> tuple[int, dict[str, Any] | None]:
        if method == "HEAD" or path in ("/", ""):
            return 200, None
        if path.endswith("/count_tokens"):
            return 200, {"input_tokens": 100}
        return super().other_response(method, path)

    def answer(self, handler: BaseHTTPRequestHandler, call: ModelCall) -> None:
        body = call.body
        reply = self.scripted_reply(call)
        if reply.error is not None:
            error = reply.error
            send_json(handler, error.status, {"type": "error", "error": {"type": error.type, "message": error.message}})
            return
        call.tool_id = new_tool_id("toolu_") if reply.tool is not None else ""
        blocks = _blocks(reply, body, call.tool_id)
        stop_reason = "tool_use" if reply.tool is not None else reply.stop or "end_turn"
        model = str(body.get("model") or "claude-fake")
        message_id = new_tool_id("msg_")
        if body.get("stream"):
            send_sse(handler, sse_events(message_id, model, blocks, stop_reason, _usage(body)))
            return
        send_json(
            handler,
            200,
            {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": _usage(body),
            },
        )


def steer_scenario(work_command: str, steer_marker: str, done_text: str = "All done.") -> Script:
    """The script of the real-CLI steer tests, keyed on the conversation's state.

    First call of a conversation: one bash tool call running ``work_command`` (the turn is now
    busy, so a steer lands mid-turn).  Any later call: final text; it quotes ``steer_marker``
    when the request carries it (the model saw the steer).  Requests without tools (titles,
    summaries) get plain text.
    """

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        if assistant_tool_uses(body) == 0:
            return Reply(text="Working on it.", tool=ToolCall("bash", work_command))
        seen = any(steer_marker in text for text in texts_in(body.get("messages")))
        return Reply(text=f"{done_text} Steer received: {steer_marker}" if seen else done_text)

    return script


__all__ = ["FakeAnthropic", "ModelError", "Reply", "ToolCall", "sse_events", "steer_scenario", "tool_name_for"]
