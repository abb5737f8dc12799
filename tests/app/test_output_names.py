"""The output names have one owner (``fullsend/app/action/outputs.py``) and it agrees with ``action.yml``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fullsend.app.action.finish import outputs_of, skip_outcome
from fullsend.app.action.outputs import OUTPUT_NAMES, ROUTE_OUTPUT_NAMES, ActionOutcome, output_entries
from fullsend.core.receipt.skips import RULE_RECEIPT, Skip

ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"


def test_the_output_names_are_action_yml_s_in_its_order() -> None:
    outputs = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["outputs"]
    assert [*OUTPUT_NAMES, *ROUTE_OUTPUT_NAMES] == list(outputs)
    assert [o.value for o in ActionOutcome] == ["skipped", "succeeded", "failed"]


def test_entries_fill_every_name_and_refuse_an_unknown_one() -> None:
    skipped = outputs_of(skip_outcome(Skip(RULE_RECEIPT, "receipt comment 5 lists run 1")))
    assert list(skipped) == list(OUTPUT_NAMES)
    assert skipped["outcome"] == "skipped" and skipped["skip_reason"] == "receipt"
    with pytest.raises(KeyError, match="receipt_id"):
        output_entries({"receipt_id": "1"})
