"""Claude stream-json parsing and steered-run metrics (docs/architecture.md "Claude Code")."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from fullsend.adapters.runtimes.claude.metrics import ClaudeSteerAggregator
from fullsend.adapters.runtimes.claude.stream import ClaudeStreamParser, claude_input_line
from fullsend.adapters.runtimes.events import (
    STREAM_LINE_MAX_BYTES,
    InitEvent,
    ResultEvent,
    TokensEvent,
    TurnOpenEvent,
    UserReplayEvent,
    iter_json_lines,
)
from fullsend.core.agent_end import AgentEnd
from tests.support.transport_run import FixedClock

NOW = datetime(2026, 9, 24, 13, 0, 5, tzinfo=UTC)


def _result(turns: int, cost: float = 0.0, i: int = 0, o: int = 0, cr: int = 0, cw: int = 0, r: int = 0) -> ResultEvent:
    return ResultEvent(
        num_turns=turns,
        total_cost_usd=cost,
        input_tokens=i,
        output_tokens=o,
        cache_read_input_tokens=cr,
        cache_creation_input_tokens=cw,
        reasoning_tokens=r,
    )


def test_v36_turns_and_usage_sum_cost_is_latest() -> None:
    agg = ClaudeSteerAggregator()
    agg.add_result(_result(1, 0.0529384, 2, 5, 25322, 11955))
    agg.add_result(_result(1, 0.0606798, 2, 5, 37277, 58))
    assert agg.cost_usd == 0.0606798 and agg.turns == 2
    assert (agg.input_tokens, agg.output_tokens) == (4, 10)


def test_v37_later_snapshot_raises_totals() -> None:
    agg = ClaudeSteerAggregator()
    agg.add_result(_result(1, 0.05, 100, 20))
    agg.add_tokens(TokensEvent(input=180, output=35))
    assert (agg.input_tokens, agg.output_tokens) == (180, 35)


def test_v38_stale_snapshot_never_lowers() -> None:
    agg = ClaudeSteerAggregator()
    agg.add_result(_result(1, i=9000, o=400))
    agg.add_tokens(TokensEvent(input=5000, output=100))
    assert (agg.input_tokens, agg.output_tokens) == (9000, 400)


def test_v39_reasoning_is_taken_not_summed() -> None:
    agg = ClaudeSteerAggregator()
    agg.add_result(_result(1, i=10, o=5, r=100))
    agg.add_result(_result(1, i=10, o=5, r=150))
    assert (agg.reasoning, agg.input_tokens, agg.output_tokens, agg.turns) == (150, 20, 10, 2)


def test_v40_snapshot_reasoning_never_raises_total() -> None:
    agg = ClaudeSteerAggregator()
    agg.add_result(_result(1, r=150))
    agg.add_tokens(TokensEvent(input=9000, reasoning=400))
    assert agg.reasoning == 150


def test_replay_string_and_block_content_and_observation_time() -> None:
    parser = ClaudeStreamParser(FixedClock(NOW))
    echo = {
        "type": "user",
        "message": {"role": "user", "content": "same text"},
        "session_id": "s",
        "parent_tool_use_id": None,
        "uuid": "u",
        "timestamp": "2026-09-24T13:00:00Z",
        "isReplay": True,
    }
    assert parser.parse(echo) == [UserReplayEvent(at=NOW, content="same text")]
    blocks = {
        **echo,
        "message": {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    }
    # Several text blocks: each may be a queued message of its own (a folded replay, issue 16).
    assert parser.parse(blocks) == [UserReplayEvent(at=NOW, content="a\nb", parts=("a", "b"))]
    tool_result = {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result"}]}}
    assert parser.parse(tool_result) == []


def test_result_and_init_lines() -> None:
    parser = ClaudeStreamParser(FixedClock(NOW))
    init = {"type": "system", "subtype": "init", "session_id": "ses-1", "model": "m", "claude_code_version": "2.1.259"}
    assert parser.parse(init) == [InitEvent("m", "2.1.259", "ses-1")]
    res = {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "num_turns": 3,
        "result": "too many",
        "total_cost_usd": 0.5,
        "usage": {
            "input_tokens": 7,
            "output_tokens": 8,
            "cache_creation_input_tokens": 1,
            "cache_read_input_tokens": 2,
        },
    }
    [event] = parser.parse(res)
    assert event == ResultEvent(3, 0.5, True, "too many", "error_max_turns", 7, 8, 0, 1, 2, verdict=event.verdict)
    assert event.verdict is not None and event.verdict.end is AgentEnd.LIMIT_REACHED


def test_tokens_event_every_5000_tokens_per_distinct_message() -> None:
    parser = ClaudeStreamParser(FixedClock(NOW))

    def assistant(mid: str, i: int) -> dict:
        return {
            "type": "assistant",
            "message": {"id": mid, "content": [], "usage": {"input_tokens": i, "output_tokens": 0}},
        }

    assert parser.parse(assistant("m1", 3000)) == [TurnOpenEvent()]  # a main-thread message opens a turn
    assert parser.parse(assistant("m1", 3000)) == []  # same message repeated per content block
    assert parser.parse(assistant("m2", 2500)) == [TokensEvent(input=5500)]


def test_reader_splits_on_lf_only_skips_long_and_malformed_lines() -> None:
    long_line = b'{"x":"' + b"a" * STREAM_LINE_MAX_BYTES + b'"}\n'
    data = (
        b'{"a":1}\r\n'
        + long_line
        + b"not json\n"
        + b'["list"]\n'
        + json.dumps({"t": "x\u2028y"}, ensure_ascii=False).encode()
        + b"\n"
        + b'{"last":true}'
    )
    assert list(iter_json_lines(io.BytesIO(data))) == [{"a": 1}, {"t": "x\u2028y"}, {"last": True}]


def test_input_line_escapes_line_separators() -> None:
    line = claude_input_line("a\u2028b\u2029c")
    assert "\u2028" not in line and "\u2029" not in line
    assert json.loads(line)["message"]["content"] == "a\u2028b\u2029c"
