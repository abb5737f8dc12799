"""``fullsend demo``: exits 0 and prints the receipt marker (issue 2 acceptance 4), and tells the
story to a newcomer in the order it happened (issue 15): a preface, run A's timeline with the
comment after the agent starts and each steer before its acknowledgement, the update the agent
received, the receipt, run B's skip and a closing line with what was saved and where to read more.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from fullsend.app.commands.demo import COMMAND, QUEUED_RUN_ID, READ_MORE
from fullsend.simulator.fixtures import FIX_RUN_ID

RULE = re.compile(r"\[([a-z][a-z0-9-]*)\]")
ROW = re.compile(r"^  \+\s*\d+\.\ds  (\S+)\s+(.*)$")


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "demo", *args], capture_output=True, text=True, timeout=120
    )


def rows(text: str, start: str, end: str) -> list[tuple[str, str]]:
    """The timeline rows ``(kind, sentence)`` printed between the lines starting ``start`` and ``end``."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next((i for i, line in enumerate(lines) if i > first and line.startswith(end)), len(lines))
    return [m.groups() for line in lines[first + 1 : last] if (m := ROW.match(line))]  # type: ignore[misc]


def test_demo_exits_zero_and_prints_the_receipt_marker():
    proc = demo()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    signed = re.search(
        r"<!-- fullsend:steer-signed consumed=(\d+) head=(\w+) run=(\d+) proof=\S+ \(\d+ characters\)", proc.stdout
    )
    assert signed is not None and signed.groups() == (str(QUEUED_RUN_ID), "aaa111", str(FIX_RUN_ID))
    assert "skip" in proc.stdout and "receipt-lists-my-run" in proc.stdout


def test_demo_shows_the_status_comment_version_by_version():
    proc = demo()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    head = "The status comment on the pull request, version by version"
    versions: list[str] = []
    for line in out[out.index(head) : out.index("The receipt, a comment by")].splitlines()[1:]:
        if re.match(r"  \d+\. ", line):
            versions.append(line.strip())
        elif versions and line.strip():
            versions[-1] += "\n" + line.strip()
    assert versions[0].startswith("1. 🤖 Review · Started ")
    steered = [v for v in versions if f"- Steer 1: follow-up run [{QUEUED_RUN_ID}](" in v]
    assert steered and "Now: agent working" in steered[0]
    assert any("Finished Review · ✅ Success" in v and "Receipt: [posted](" in v for v in versions)


@pytest.mark.parametrize("attempt", range(3))
def test_the_story_is_told_in_the_order_it_happened(attempt: int) -> None:
    proc = demo("--turn-seconds", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("fullsend demo: one steered run against a GitHub simulator on this machine")
    assert "Without steering, that comment would start a second full agent run" in " ".join(out.split())
    run_a = rows(out, f"Run A ({FIX_RUN_ID})", "What the agent received")
    kinds = [kind for kind, _ in run_a]
    assert kinds[0] == "agent" and "the agent starts" in run_a[0][1]
    assert kinds.index("github") == 1, kinds  # the comment arrives after the agent started
    assert kinds.index("github") < kinds.index("judge") < kinds.index("steer") < kinds.index("ack"), kinds
    assert kinds[-1] == "receipt"
    assert f"run B ({QUEUED_RUN_ID})" in run_a[1][1] and COMMAND in run_a[1][1]
    for _, sentence in run_a:
        for rule in RULE.findall(sentence):
            assert sentence.count(rule) == 1, sentence  # the rule id once
    assert "| Instruction from @reviewer: please re-check the migration" in out
    assert rows(out, f"Run B ({QUEUED_RUN_ID})", "Saved:") == [
        ("skip", "a receipt lists this run, so it exits without starting the agent  [receipt-lists-my-run]")
    ]
    assert out.rstrip().splitlines()[-2:] == [
        "Saved: one full agent run. The reviewer's comment reached the agent inside run A, and run B exited in a "
        "moment instead of reviewing the pull request again.",
        READ_MORE,
    ]
    assert "docs/glossary.md" in READ_MORE and "docs/rules.md" in READ_MORE
