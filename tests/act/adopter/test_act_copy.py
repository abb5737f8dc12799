"""act's parse copy (tools/act/act_copy.py) differs from a workflow by the ``queue:`` lines
of its ``concurrency:`` mappings and nothing else, for every workflow init writes and the hosted
dispatch workflow this repository ships."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from fullsend.app.commands.init import HOSTED_DISPATCH, InitPlan, render_files
from fullsend.app.commands.init_stages import STAGE_SPECS
from tools.act.act_copy import for_act

REPO_ROOT = Path(__file__).resolve().parents[3]
SHA = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"


def _workflows() -> list[tuple[str, str]]:
    out = [(str(HOSTED_DISPATCH), (REPO_ROOT / HOSTED_DISPATCH).read_text())]
    for dispatch in ("hosted", "self-contained"):
        for queue in ("single", "max") if dispatch == "self-contained" else ("single",):
            plan = InitPlan(tuple(STAGE_SPECS), ref=SHA, dispatch=dispatch, queue=queue)
            out += [(f"{dispatch}/{queue}:{p}", t) for p, t in render_files(plan) if p.suffix == ".yml"]
    return out


@pytest.mark.parametrize(("name", "text"), _workflows(), ids=[n for n, _ in _workflows()])
def test_act_parses_the_workflow_less_only_its_concurrency_queue_lines(name, text):
    diff = [d for d in difflib.ndiff(text.splitlines(), for_act(text).splitlines()) if d[:1] in "+-"]
    assert not [d for d in diff if d.startswith("+")]
    assert all(d[2:].strip() in ("queue: max", "queue: single") for d in diff), diff
    assert for_act(for_act(text)) == for_act(text)


def test_a_queue_key_outside_concurrency_stays():
    text = "jobs:\n  a:\n    concurrency:\n      group: g\n      queue: max\n    with:\n      queue: max\n"
    assert for_act(text) == "jobs:\n  a:\n    concurrency:\n      group: g\n    with:\n      queue: max\n"
