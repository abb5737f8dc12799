"""Issue 16: agent text is made safe for the runner before any workflow command or summary write.

An agent line or error text holding a lone surrogate (a JSON ``\\ud800`` escape, as a CLI's
``JSON.stringify`` writes it) used to make the UTF-8 write fail halfway through a
``::stop-commands::`` block, which then never closed (every later ``::warning::``/``::error::``
of the action was ignored), and crashed the step-summary writer.  The streams here are real
strict UTF-8 text streams, as the runner's pipe is.
"""

from __future__ import annotations

import io
from pathlib import Path

from fullsend.adapters.gha import Console, StopCommands, write_outputs, write_summary
from fullsend.core.text.sanitize import runner_safe

LONE = "the agent said \ud800 and \udcff"


def _stream() -> tuple[io.TextIOWrapper, io.BytesIO]:
    raw = io.BytesIO()
    return io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="\n"), raw


def _lines(stream: io.TextIOWrapper, raw: io.BytesIO) -> list[str]:
    stream.flush()
    return raw.getvalue().decode("utf-8").splitlines()


def test_runner_safe_replaces_lone_surrogates_and_joins_split_pairs() -> None:
    assert runner_safe(LONE) == "the agent said \ufffd and \ufffd"
    assert runner_safe("\ud83d\ude00") == "\U0001f600"
    assert runner_safe("plain ✓ text") == "plain ✓ text"


def test_the_stop_commands_block_closes_and_later_commands_work() -> None:
    stream, raw = _stream()
    console = Console(stream)
    console.untrusted_block(["ok line", LONE, "::warning::forged"])
    console.error(f"The run failed: {LONE}")
    lines = _lines(stream, raw)
    opened = [line for line in lines if line.startswith("::stop-commands::")]
    token = opened[0].removeprefix("::stop-commands::")
    assert lines == [
        f"::stop-commands::{token}",
        "ok line",
        "the agent said \ufffd and \ufffd",
        "::warning::forged",
        f"::{token}::",
        "::error::The run failed: the agent said \ufffd and \ufffd",
    ]


def test_the_block_closes_even_when_a_line_cannot_be_produced() -> None:
    stream, raw = _stream()

    def lines():
        yield "first"
        raise RuntimeError("the agent's output could not be read")

    try:
        Console(stream).untrusted_block(lines())
    except RuntimeError:
        pass
    written = _lines(stream, raw)
    assert written[0].startswith("::stop-commands::") and written[-1] == f"::{written[0][17:]}::"


def test_stop_commands_context_manager_with_a_lone_surrogate() -> None:
    stream, raw = _stream()
    console = Console(stream)
    with StopCommands(console) as block:
        block.line(LONE)
    assert _lines(stream, raw)[1:] == ["the agent said \ufffd and \ufffd", f"::{block.token}::"]


def test_a_stream_that_cannot_encode_gets_replacement_characters() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict", newline="\n")
    Console(stream).log("naïve ✓")
    stream.flush()
    assert raw.getvalue() == b"na?ve ?\n"


def test_summary_and_outputs_with_lone_surrogates_are_written(tmp_path: Path) -> None:
    summary, outputs = tmp_path / "summary.md", tmp_path / "output"
    write_summary(str(summary), f"| error | {LONE} |\n")
    write_outputs(str(outputs), {"outcome": "failed", "note": LONE})
    assert summary.read_text(encoding="utf-8") == "| error | the agent said \ufffd and \ufffd |\n"
    assert "the agent said \ufffd and \ufffd" in outputs.read_text(encoding="utf-8")
