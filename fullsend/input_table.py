"""The one table of the action's inputs' choices and bounds (docs/architecture.md "Inputs and settings").

``fullsend.settings`` validates the inputs against it with pydantic-settings; the fast skip's
plain reader (``fullsend.app.action.plaininputs``) against it with the standard library, before
either library is loaded.  A choice or a bound lives here only.  Standard library only.
"""

from __future__ import annotations

STAGES = ("triage", "code", "review", "fix", "retro", "prioritize")
RUNTIMES = ("claude", "pi", "codex")
#: Inputs that take one of a few words, and those words.
CHOICES: dict[str, tuple[str, ...]] = {
    "command": ("run", "route"),  # entrypoint.py picks the command; run only checks the name
    "stage": STAGES,
    "runtime": RUNTIMES,
    "codex_transport": ("auto", "app-server", "exec"),
    "sandbox": ("local", "openshell"),
}
MAX_ITEM = 2_147_483_647  # GitHub's GraphQL Int (signed 32-bit) carries issue numbers
MAX_TIMEOUT_MINUTES = 1440  # a job token lives at most 24 hours
MAX_ITERATIONS = 100
#: Whole-number inputs and their bounds, both included: a value past them is refused by name
#: before it reaches a timedelta or a loop.
BOUNDS: dict[str, tuple[int, int]] = {
    "item": (1, MAX_ITEM),
    "max_steers": (0, 50),
    "poll_interval_seconds": (0, 600),
    "timeout_minutes": (1, MAX_TIMEOUT_MINUTES),
    "max_iterations": (1, MAX_ITERATIONS),
    "status_interval_seconds": (1, 600),
}
DIGITS_MAX = 20  # longer than any bound above: refused without parsing thousands of digits
#: The spellings of a boolean input.
BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
BOOL_INPUTS = ("steer_enabled", "status_comment", "allow_shared_uid", "allow_unsigned_receipts")
#: The command ``agent_cli`` names when it is empty, per ``runtime``.
DEFAULT_CLIS = {"claude": "claude", "pi": "pi", "codex": "codex"}
