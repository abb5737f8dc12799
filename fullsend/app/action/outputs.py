"""The action's outputs as a vocabulary: the values of ``outcome`` (WIRE, as ``action.yml`` lists them).

Standard library only: the fast skip writes a skip's outputs from here without loading the
application (docs/architecture.md "Fast skip").
"""

from __future__ import annotations

from enum import StrEnum


class ActionOutcome(StrEnum):
    """The ``outcome`` output of a run (WIRE): its value is written byte for byte."""

    SKIPPED = "skipped"  # a pre-flight skip or the pre-script's exit 78: nothing was done
    SUCCEEDED = "succeeded"  # the agent ended in outright success and every script passed
    FAILED = "failed"  # anything else, a cancellation included
