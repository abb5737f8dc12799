"""Issue 43, the shared plumbing: the inputs ``delegated_wait_seconds`` and ``expected_denials``,
and the four ends the action finds itself, each with its own rule id from the runtime's verdict to
the run's ``::error::`` rule (docs/rules.md "Agent end")."""

from __future__ import annotations

import pytest

from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.adapters.runtimes.verdict import (
    delegated_unfinished,
    judged_turn,
    owed_end,
    process_verdict,
    session_lost,
    tool_refused,
    turn_unjudged,
)
from fullsend.app.action.outcome import end_rule_of, run_outcome
from fullsend.app.action.session import IterationResult
from fullsend.core.agent_end import (
    FOUND_END_RULE_IDS,
    RULE_DELEGATED_UNFINISHED,
    RULE_SESSION_LOST,
    RULE_TOOL_REFUSED,
    RULE_TURN_UNJUDGED,
    AgentEnd,
    EndVerdict,
)
from fullsend.core.final_word import ToolDenial
from fullsend.errors import InputError
from fullsend.ports import AgentRunResult
from fullsend.rules import find
from fullsend.settings import load_inputs

REVIEW = {"INPUT_STAGE": "review"}


def test_the_inputs_default_to_ten_minutes_of_waiting_and_no_expected_refusal() -> None:
    inputs = load_inputs(REVIEW)
    assert (inputs.delegated_wait_seconds, inputs.expected_denials) == (600, ())


def test_expected_denials_are_one_pattern_a_line_blank_lines_and_comments_left_out() -> None:
    raw = "Bash(git push:*)\n\n  # the stage must not fetch\nWebFetch(domain:example.com)  \n"
    inputs = load_inputs({**REVIEW, "INPUT_EXPECTED_DENIALS": raw, "INPUT_DELEGATED_WAIT_SECONDS": "0"})
    assert inputs.expected_denials == ("Bash(git push:*)", "WebFetch(domain:example.com)")
    assert inputs.delegated_wait_seconds == 0


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"INPUT_DELEGATED_WAIT_SECONDS": "-1"}, "input 'delegated_wait_seconds': '-1' is out of range"),
        ({"INPUT_DELEGATED_WAIT_SECONDS": "86401"}, "input 'delegated_wait_seconds': '86401' is out of range"),
        ({"INPUT_DELEGATED_WAIT_SECONDS": "ten"}, "input 'delegated_wait_seconds': 'ten' is not a whole number"),
        ({"INPUT_EXPECTED_DENIALS": "Bash\n" * 101}, "input 'expected_denials': must hold at most 100 patterns"),
        ({"INPUT_EXPECTED_DENIALS": "Bash(\x1b[31m)"}, "input 'expected_denials': must hold patterns of at most"),
    ],
)
def test_a_bad_value_names_the_input_and_the_fix(given: dict[str, str], says: str) -> None:
    with pytest.raises(InputError) as err:
        load_inputs({**REVIEW, **given})
    assert str(err.value).startswith(says), str(err.value)
    assert "Use a whole number of seconds" in str(err.value) or "one tool pattern per line" in str(err.value)


@pytest.mark.parametrize(
    ("verdict", "rule", "end", "message"),
    [
        (
            delegated_unfinished('sub-agent "fix it" (local_agent) stopped'),
            RULE_DELEGATED_UNFINISHED,
            AgentEnd.INTERRUPTED,
            'work the agent delegated did not finish: sub-agent "fix it" (local_agent) stopped',
        ),
        (
            tool_refused([ToolDenial("Bash", "t1"), ToolDenial("Bash", "t2"), ToolDenial("Read", "t3")]),
            RULE_TOOL_REFUSED,
            AgentEnd.AGENT_ERROR,
            "the agent was refused a tool that expected_denials does not list: Bash, Read",
        ),
        (
            turn_unjudged("the output ended first"),
            RULE_TURN_UNJUDGED,
            AgentEnd.PROTOCOL_BROKEN,
            "a turn of the agent was left unjudged: the output ended first",
        ),
        (
            session_lost("the resume reported thread t-2, not t-1"),
            RULE_SESSION_LOST,
            AgentEnd.PROTOCOL_BROKEN,
            "the agent session the run steered was lost: the resume reported thread t-2, not t-1",
        ),
    ],
    ids=list(FOUND_END_RULE_IDS),
)
def test_each_found_end_has_its_own_rule_and_decides_the_iteration(
    verdict: EndVerdict, rule: str, end: AgentEnd, message: str
) -> None:
    assert (verdict.rule_id, verdict.end, verdict.message()) == (rule, end, message)
    assert find(rule) is not None and find(rule).family == "agent-end"  # type: ignore[union-attr]
    success = EndVerdict(AgentEnd.SUCCESS, "end_turn", "the agent finished")
    decided = judged_turn(judged_turn(None, ResultEvent(verdict=success)), owed_end(verdict))
    later = judged_turn(decided, ResultEvent(verdict=success))  # a later success makes up for nothing
    assert process_verdict(cancelled=False, timed_out=False, exit_code=0, last=later) == verdict


def test_the_rule_of_a_found_end_closes_the_runs_error_line() -> None:
    agent = AgentRunResult(
        exit_code=0, is_error=True, error="e", end=AgentEnd.INTERRUPTED, end_rule=RULE_DELEGATED_UNFINISHED
    )
    result = IterationResult(agent)
    assert end_rule_of(result) == RULE_DELEGATED_UNFINISHED
    outcome = run_outcome(result, False, cancelled=False, steers=0, env_head_sha="a", earlier=())
    assert outcome.error_rule == RULE_DELEGATED_UNFINISHED
    plain = IterationResult(AgentRunResult(exit_code=0, is_error=True, error="e", end=AgentEnd.LIMIT_REACHED))
    assert end_rule_of(plain) == "limit-reached"  # a class says all: its own id
    lost = IterationResult(AgentRunResult(exit_code=1, is_error=True, end=AgentEnd.INTERRUPTED), session_lost=True)
    assert run_outcome(lost, False, cancelled=False, steers=0, env_head_sha="a", earlier=()).error_rule == (
        RULE_SESSION_LOST
    )
    assert end_rule_of(IterationResult(AgentRunResult(exit_code=0, end=AgentEnd.SUCCESS))) == ""


def test_the_terminal_status_comment_names_the_rule_explain_reads() -> None:
    """The rule line is read only from a terminal status comment, and only as a rule id."""
    from fullsend.core.receipt.status_comment import TERMINAL_TAG, end_rule_line, status_line, terminal_end_rule

    terminal = f"{status_line('42')}\n{TERMINAL_TAG}\n{end_rule_line(RULE_TOOL_REFUSED)}\n🤖 Finished"
    assert terminal_end_rule(terminal) == RULE_TOOL_REFUSED
    assert terminal_end_rule(terminal.replace(TERMINAL_TAG, "<!-- fullsend:status:live -->")) == ""
    assert terminal_end_rule(f"{status_line('42')}\n{TERMINAL_TAG}\n<!-- fullsend:end-rule:Not A Rule -->") == ""
