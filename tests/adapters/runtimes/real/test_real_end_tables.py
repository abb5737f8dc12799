"""The end tables against the pinned CLIs' own published types (docs/runtimes.md "Terminal states"):
pi-ai's ``StopReason`` union as the installed package declares it, and the ``TurnStatus`` enum the
pinned ``codex app-server generate-json-schema`` writes.  A value the pinned CLI can write and the
table lacks would be protocol-broken at run time; these tests name it before a run meets it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from fullsend.adapters.runtimes.codex.appserver.stream import turn_verdict
from fullsend.adapters.runtimes.pi.stream import PI_STOP_REASONS
from fullsend.core.agent_end import AgentEnd
from tests.adapters.runtimes.real.real_cli import cli_cache, require_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_pi_table_is_the_installed_pi_ai_stop_reason_union() -> None:
    require_cli("pi")
    types = cli_cache() / "node_modules" / "@earendil-works" / "pi-ai" / "dist" / "types.d.ts"
    unions = re.findall(r"type StopReason = ([^;]+);", types.read_text(encoding="utf-8"))
    assert len(unions) == 1, unions
    assert {r.reason for r in PI_STOP_REASONS} == set(re.findall(r'"([A-Za-z]+)"', unions[0]))
    assert [r.reason for r in PI_STOP_REASONS if r.end is AgentEnd.SUCCESS] == ["stop"]


def test_codex_turn_statuses_are_the_pinned_schemas(tmp_path: Path) -> None:
    codex = require_cli("codex")
    subprocess.run(
        [codex, "app-server", "generate-json-schema", "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=90,
    )
    schema = json.loads((tmp_path / "codex_app_server_protocol.v2.schemas.json").read_text(encoding="utf-8"))
    statuses = schema["definitions"]["TurnStatus"]["enum"]
    assert sorted(statuses) == ["completed", "failed", "inProgress", "interrupted"]
    ends = {status: turn_verdict({"status": status}).end for status in statuses}
    # inProgress is no end at all: a turn/completed that says so is not success.
    assert ends == {
        "completed": AgentEnd.SUCCESS,
        "failed": AgentEnd.AGENT_ERROR,
        "interrupted": AgentEnd.INTERRUPTED,
        "inProgress": AgentEnd.PROTOCOL_BROKEN,
    }
