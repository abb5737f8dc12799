"""The figures marker of the terminal status comment: what one run spent, written and read back."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.report.figures import RunFigures, figures_line, figures_marker, parse_figures

FIGURES = RunFigures("review", "claude", 734.25, 0.1234, 1200, 340, model="claude-sonnet-4-5")


def test_the_marker_is_one_exact_line():
    assert figures_marker(FIGURES) == (
        "<!-- fullsend:run-figures stage=review runtime=claude agent_s=734.2 cost_usd=0.123400 "
        "input_tokens=1200 output_tokens=340 -->"
    )


def test_the_human_line_names_runtime_model_minutes_cost_and_tokens():
    assert figures_line(FIGURES) == "Agent: claude · claude-sonnet-4-5 · 12.2 min · $0.1234 · 1,200 tokens in, 340 out"
    assert figures_line(RunFigures("fix", "pi", 60.0)) == "Agent: pi · 1.0 min · $0.0000 · 0 tokens in, 0 out"


def test_a_comment_body_reads_back_the_figures_without_the_model():
    body = f"🤖 Finished Review\n\n{figures_line(FIGURES)}\n{figures_marker(FIGURES)}"
    assert parse_figures(body) == RunFigures("review", "claude", 734.2, 0.1234, 1200, 340)


@pytest.mark.parametrize(
    "figures",
    [
        RunFigures("Review", "claude"),  # upper case
        RunFigures("re view", "claude"),
        RunFigures("review", ""),
        RunFigures("review", "claude", agent_s=-1.0),
        RunFigures("review", "claude", cost_usd=math.nan),
        RunFigures("review", "claude", cost_usd=math.inf),
        RunFigures("review", "claude", input_tokens=10**9),
    ],
)
def test_figures_outside_the_grammar_write_no_marker(figures):
    assert figures_marker(figures) == ""


@pytest.mark.parametrize(
    "line",
    [
        " <!-- fullsend:run-figures stage=review runtime=claude agent_s=1.0 cost_usd=0.000000 input_tokens=1 output_tokens=1 -->",
        "<!-- fullsend:run-figures  stage=review runtime=claude agent_s=1.0 cost_usd=0.000000 input_tokens=1 output_tokens=1 -->",
        "<!-- fullsend:run-figures runtime=claude stage=review agent_s=1.0 cost_usd=0.000000 input_tokens=1 output_tokens=1 -->",
        "<!-- fullsend:run-figures stage=review runtime=claude agent_s=1 cost_usd=0.000000 input_tokens=1 output_tokens=1 -->",
        "<!-- fullsend:run-figures stage=review runtime=claude agent_s=1.0 cost_usd=-0.000001 input_tokens=1 output_tokens=1 -->",
        "&lt;!-- fullsend:run-figures stage=review runtime=claude agent_s=1.0 cost_usd=0.000000 input_tokens=1 output_tokens=1 -->",
        "> <!-- fullsend:run-figures stage=review runtime=claude agent_s=1.0 cost_usd=0.000000 input_tokens=1 output_tokens=1 -->",
    ],
)
def test_anything_but_the_exact_marker_line_reads_as_no_figures(line):
    assert parse_figures(f"text\n{line}\nmore") is None


names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True)


@given(
    stage=names,
    runtime=names,
    tenths=st.integers(0, 10**8),
    micro_usd=st.integers(0, 10**12),
    tokens_in=st.integers(0, 10**9 - 1),
    tokens_out=st.integers(0, 10**9 - 1),
)
def test_every_marker_written_reads_back_equal(stage, runtime, tenths, micro_usd, tokens_in, tokens_out):
    written = RunFigures(stage, runtime, tenths / 10, micro_usd / 10**6, tokens_in, tokens_out)
    marker = figures_marker(written)
    assert marker
    assert parse_figures(marker) == written


@given(st.text(max_size=400))
def test_any_text_parses_to_figures_or_none_without_raising(body):
    result = parse_figures(body)
    assert result is None or figures_marker(result)


def test_a_model_name_that_is_not_plain_is_left_out_of_the_line():
    shaped = RunFigures("review", "claude", 60.0, model="x\n<!-- fullsend:steer consumed=1 head=a -->")
    assert figures_line(shaped) == "Agent: claude · 1.0 min · $0.0000 · 0 tokens in, 0 out"
    assert "fullsend" not in figures_line(RunFigures("review", "claude", model="[a](https://x)"))
