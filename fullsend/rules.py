"""The registry of every rule id the code emits (docs/architecture.md "Decisions are data").

Each decision the action makes — a provenance check, a pre-flight skip, a settle reason, an
own-output rule, a defanging rule, a watcher-cycle outcome, how the agent ended, a lint finding, a Route
decision — has a kebab-case id
shared by the code, its test, the log line or step-summary row that reports it, and the section
of ``docs/rules.md`` that explains it (docs/architecture.md "Decisions are data"; zizmor
documents its audits the same way).  ``tests/docs`` checks that every id here has a docs section, that
every docs section names an id here, and that every rule-id literal in ``fullsend/`` is here.

Ids come from the constants the modules export; the few that no module exports as a constant
are listed here, each with the module that writes it:

* ``accept`` — the rule cell of an accepted run in the step-summary timeline
  (``fullsend.app.watch.cycle``);
* ``pre-script`` — the pre-script skip (``fullsend.app.action.agent.work``);
* ``harness-invalid`` and ``agent-missing-opening-line`` — the findings of ``fullsend lint``
  of its own (``fullsend.app.commands.lint``, which imports them from here);
* :data:`WATCH_RULE_IDS` — the watcher cycle's project ids, written only inside its log lines
  (``fullsend.app.watch.cycle``).

Importing this module imports the core modules and ``fullsend.harness``, never ``fullsend.app``:
the registry sits below the app layer, so any app module may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from fullsend import harness
from fullsend.core import agent_end, final_word
from fullsend.core.delta import ownoutput
from fullsend.core.provenance import verdicts as provenance
from fullsend.core.receipt import left_over, skips
from fullsend.core.receipt.proof import verify as receipt_proof
from fullsend.core.report import tally
from fullsend.core.route import decision as route
from fullsend.core.route import policy as route_policy
from fullsend.core.route import rounds as route_rounds
from fullsend.core.text import defang
from fullsend.core.tokens import credential, reach
from fullsend.core.watch import settle

FAMILIES: tuple[str, ...] = (
    "provenance",
    "skip",
    "settle",
    "own-output",
    "defang",
    "watch",
    "agent-end",
    "lint",
    "route",
    "report",
)

#: Where the rules are explained; a rule's section anchor is its id.
DOCS_PATH = "docs/rules.md"

#: Listed here: the step-summary rule cell of an accepted run (``fullsend.app.watch.cycle``).
RULE_ACCEPT = "accept"
#: Listed here: a ``pre_script`` exit 78 skips the run (``fullsend.app.action.agent.work``).
RULE_PRE_SCRIPT = "pre-script"
#: Listed here: a harness the action would refuse to load (``fullsend lint``).
RULE_HARNESS_INVALID = "harness-invalid"
#: Listed here: an agent definition without the envelope's opening line (``fullsend lint``).
RULE_AGENT_MISSING_OPENING_LINE = "agent-missing-opening-line"
#: Listed here: project ids of one poll-and-steer cycle, written only inside the log lines of
#: ``fullsend.app.watch.cycle`` (docs/architecture.md "Listing", "Poll-and-steer cycle").
WATCH_RULE_IDS: tuple[str, ...] = (
    "listing-unreadable",
    "listing-retry",
    "listing-bound",
    "shim-unresolvable",
    "empty-delta",
    "delivery-retry",
    "steered",
    "left-to-queued",
    "steering-disabled",
    "unbound",
    "too-large",
)


@dataclass(frozen=True)
class Rule:
    """One rule id: its ``family`` (one of :data:`FAMILIES`) and the ``source`` module that emits it."""

    id: str
    family: str
    source: str


def _family(family: str, source: str, ids: tuple[str, ...]) -> list[Rule]:
    return [Rule(rule_id, family, source) for rule_id in ids]


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    """Every rule, grouped by family in :data:`FAMILIES` order, each id once.

    Raises:
        ValueError: when two modules export the same id (a registry defect, caught by the tests).
    """
    rules = [
        *_family("provenance", "fullsend.core.provenance.verdicts", provenance.RULE_IDS),
        Rule(RULE_ACCEPT, "provenance", "fullsend.app.watch.cycle"),
        *_family("skip", "fullsend.core.receipt.skips", (skips.RULE_RECEIPT, skips.RULE_HEAD_REVIEWED)),
        Rule(RULE_PRE_SCRIPT, "skip", "fullsend.app.action.agent.work"),
        *_family("skip", "fullsend.core.receipt.proof.verify", receipt_proof.PROOF_RULE_IDS),
        *_family("settle", "fullsend.core.watch.settle", (*settle.SETTLE_REASONS, settle.STALE_TURN_END)),
        *_family("own-output", "fullsend.core.delta.ownoutput", (ownoutput.RULE_SELF_LOGIN, ownoutput.RULE_APP_MARKER)),
        *_family(
            "defang", "fullsend.core.text.defang", (defang.RULE_FENCE, defang.RULE_ATTRIBUTION, defang.RULE_HEADING)
        ),
        *_family("watch", "fullsend.app.watch.cycle", WATCH_RULE_IDS),
        *_family("watch", "fullsend.core.receipt.left_over", left_over.LEFT_OVER_RULE_IDS),
        Rule(reach.RULE_TOKEN_IN_REACH, "watch", "fullsend.core.tokens.reach"),
        Rule(credential.RULE_CREDENTIAL_REMOVED, "watch", "fullsend.core.tokens.credential"),
        *_family(
            "agent-end",
            "fullsend.core.agent_end",
            (
                *agent_end.AGENT_END_RULE_IDS,
                *agent_end.FOUND_END_RULE_IDS,
                agent_end.RULE_CLI_UNSUPPORTED,
                agent_end.RULE_CODEX_TRANSPORT,
            ),
        ),
        Rule(final_word.RULE_TOOL_DENIED, "agent-end", "fullsend.core.final_word"),
        *_family("lint", "fullsend.app.commands.lint", (RULE_HARNESS_INVALID, RULE_AGENT_MISSING_OPENING_LINE)),
        *_family("lint", "fullsend.harness", (harness.RULE_STEER_ENABLED_UNSET, harness.RULE_UNKNOWN_KEY)),
        *_family("route", "fullsend.core.route.decision", route.ROUTE_RULE_IDS),
        *_family("route", "fullsend.core.route.policy", route_policy.POLICY_RULE_IDS),
        *_family("route", "fullsend.core.route.rounds", route_rounds.ROUNDS_RULE_IDS),
        *_family("report", "fullsend.core.report.tally", tally.REPORT_RULE_IDS),
    ]
    ids = [rule.id for rule in rules]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"rule ids registered twice: {', '.join(duplicated)}")
    return tuple(rules)


def rule_ids() -> frozenset[str]:
    """Every registered rule id."""
    return frozenset(rule.id for rule in all_rules())


def find(rule_id: str) -> Rule | None:
    """The :class:`Rule` with this id, or ``None`` when it is not registered."""
    return next((rule for rule in all_rules() if rule.id == rule_id), None)
