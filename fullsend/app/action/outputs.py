"""The action's outputs as a vocabulary: their names in the order of ``action.yml`` and the
values of ``outcome`` (WIRE).  The one owner of both: ``finish.outputs_of`` and the fast skip's
``skip_outputs`` fill them in.

Standard library only: the fast skip writes a skip's outputs from here without loading the
application (docs/architecture.md "Fast skip").
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class ActionOutcome(StrEnum):
    """The ``outcome`` output of a run (WIRE): its value is written byte for byte."""

    SKIPPED = "skipped"  # a pre-flight skip or the pre-script's exit 78: nothing was done
    SUCCEEDED = "succeeded"  # the agent ended in outright success and every script passed
    FAILED = "failed"  # anything else, a cancellation included


def status_word(outcome: ActionOutcome) -> str:
    """The terminal status comment's word for a run that was not cancelled: ``success``,
    ``skipped`` or ``failure``."""
    return {ActionOutcome.SUCCEEDED: "success", ActionOutcome.SKIPPED: "skipped"}.get(outcome, "failure")


#: The agent's usage outputs, empty when no agent ran.
USAGE_OUTPUTS = ("cost_usd", "input_tokens", "output_tokens", "turns", "session_id", "model")
#: Every output the action writes, in the order of ``action.yml``.
OUTPUT_NAMES = (
    "outcome",
    "skip_reason",
    "steers",
    "consumed_run_ids",
    "receipt_url",
    "head_sha",
    *USAGE_OUTPUTS,
    "duration_s",
    "final_message",
    "agent_isolation",
)
#: What ``command: route`` writes (``fullsend route``), after :data:`OUTPUT_NAMES` in ``action.yml``.
ROUTE_OUTPUT_NAMES = ("stage", "rule", "reason", "head_ref")


def output_entries(values: Mapping[str, str]) -> dict[str, str]:
    """The ``GITHUB_OUTPUT`` entries: every name of :data:`OUTPUT_NAMES`, in order, with its value
    from ``values`` or ``""``.  Raises ``KeyError`` naming a value that is no output."""
    unknown = set(values) - set(OUTPUT_NAMES)
    if unknown:
        raise KeyError(f"not an output of the action: {', '.join(sorted(unknown))}")
    return {name: values.get(name, "") for name in OUTPUT_NAMES}
