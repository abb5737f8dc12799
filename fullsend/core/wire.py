"""WIRE tokens and fixed data layouts of the steer text and the envelope.

Every constant here is matched by another program (the agent definitions in fullsend-ai/agents,
the runtimes) or is a data layout fixed byte for byte (docs/architecture.md "Steer text",
"Defanging", "Envelope").  Prose of our own lives in jinja2 templates under
``fullsend/templates/envelope/`` and reaches the core as a ``fullsend.core.prose.Wording``.
"""

from __future__ import annotations

#: The envelope's first line (WIRE; cross-repo contract, never defanged in content).
OPENING_LINE = "Runner update: your task inputs changed after this run started."

#: The amendments heading, alone on its line (WIRE).
AMENDMENTS_HEADING = "Amendments"

#: What the context heading line begins with (WIRE); our header sentence follows after a space.
CONTEXT_HEADING = "Work-item context."

#: Fences around the untrusted block (WIRE).
FENCE_OPEN = "[work-item-context]"
FENCE_CLOSE = "[/work-item-context]"

#: The defended attribution prefix of an amendment instruction (WIRE).
INSTRUCTION_PREFIX = "Instruction from @"

#: Layout prefixes of the non-defended attributions (exact layout, not WIRE).
COMMENT_PREFIX = "Comment from @"
REVIEW_PREFIX = "Review from @"
THREAD_PREFIX = "Review comment from @"
#: Where a review thread's instruction was written (exact layout): ``<prefix><login> on <place>``.
THREAD_SPOT_PREFIX = "The instruction above from @"

#: The envelope's provenance line prefix (exact layout; exactly one line of the envelope).
SOURCE_PREFIX = "Source: "

#: Source item used when the message carries no provenance at all (exact data layout).
SOURCE_NONE = "the work item this run is acting on"

#: Body of a review whose text is empty or whitespace (exact placeholder).
NO_COMMENT = "(no comment)"

#: Appended by the truncation primitive; budgets count its 12 bytes.
TRUNCATION_MARKER = "\n[truncated]"

#: A comment in a pull request's review thread (WIRE GitHub event name).
THREAD_EVENT = "pull_request_review_comment"

#: The amendment events (WIRE; docs/architecture.md "Amendments and context"): a comment, and a
#: comment in a review thread, whose Route arms both check the commenter, the run's actor.
AMENDMENT_EVENTS: frozenset[str] = frozenset({"issue_comment", THREAD_EVENT})

#: Byte budgets.
MAX_DELTA_BYTES = 16_384
MAX_AMENDMENT_BYTES = 4_096
MAX_HEAD_MOVE_BYTES = 6_144

#: A comparison listing at this many files may be cut by the forge (docs/architecture.md "Head moves").
COMPARE_FILE_CAP = 300
