"""Model scripts for the real Claude Code CLI that delegate work to a sub-agent (issue 43)."""

from __future__ import annotations

import json
from typing import Any

from tests.doubles.anthropic_server import Reply, ToolCall, assistant_tool_uses
from tests.doubles.model_server import Script

SUB_TASK = "SUBAGENT-TASK: run the migration checks"


def delegating(sub_s: float, background: bool = True) -> Script:
    """Main thread: start a sub-agent ``migration checks`` (in the background: then end the turn);
    the sub-agent runs a command of ``sub_s`` seconds, then reports; every later turn of the main
    thread (a steer's, a task notification's) ends cleanly."""

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        if SUB_TASK in json.dumps(body.get("messages", [])[:1]):  # the sub-agent's own conversation
            if assistant_tool_uses(body) == 0:
                # not a bare ``sleep``: the CLI refuses a long one and asks for a background task
                work = f"python3 -c 'import time; time.sleep({sub_s})'; echo checked"
                return Reply(text="Checking.", tool=ToolCall("Bash", work))
            return Reply(text="Checks pass.")
        if assistant_tool_uses(body) == 0:
            spawn = {"description": "migration checks", "prompt": SUB_TASK, "subagent_type": "general-purpose"}
            return Reply(text="Delegating.", tool=ToolCall("Agent", input=spawn, background=background))
        return Reply(text="Done; the checks run in the background.")

    return script
