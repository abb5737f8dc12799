"""Every rule id the code emits has a section in docs/rules.md, and every section names a
registered rule id (issue 11 acceptance;
docs/architecture.md "Decisions are data").  The registry is ``fullsend.rules``; the source scan is ``rule_scan``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fullsend import rules
from fullsend.core.delta import ownoutput
from fullsend.core.provenance import verdicts as provenance
from fullsend.core.receipt import skips
from fullsend.core.text import defang
from fullsend.core.watch import settle
from tests.docs.rule_scan import scan_file, scan_package

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = REPO_ROOT / "docs"
RULES_MD = DOCS / "rules.md"
HEADING_ID = re.compile(r"^#{2,4} `([a-z][a-z0-9-]*)`\s*$", re.MULTILINE)

#: The provenance rule ids the watcher's design names (the code may add project ids).
PROVENANCE_IDS = {
    "self",
    "shim",
    "event",
    "fresh",
    "item",
    "chain-pending",
    "chain-differs",
    "once",
    "route-pending",
    "route-not-success",
    "route-ambiguous",
    "route-missing",
    "stage-pending",
    "stage-skipped",
    "stage-ambiguous",
    "stage-missing",
    "jobs-unreadable",
    "receipt-lists-my-run",
    "head-reviewed",
    "pre-script",
    "turn-end-nothing-new",
    "verdictless-polls-exhausted",
    "cap-reached",
    "deadline",
    "low-on-time",
    "session-closed",
    "cancelled",
    "self-login",
    "app-marker",
    "fence",
    "attribution",
    "heading",
}


def documented_ids() -> list[str]:
    """The rule ids that head a section of docs/rules.md (``### `id` ``), in order."""
    return HEADING_ID.findall(RULES_MD.read_text(encoding="utf-8"))


def test_registry_ids_are_unique_and_in_known_families() -> None:
    """Each id is registered once, under one of the families docs/rules.md presents."""
    ids = [r.id for r in rules.all_rules()]
    assert len(ids) == len(set(ids))
    assert {r.family for r in rules.all_rules()} == set(rules.FAMILIES)


def test_registry_is_built_from_the_modules_constants() -> None:
    """The registry holds exactly what the core modules export (no retyped copy can drift)."""
    registered = rules.rule_ids()
    assert set(provenance.RULE_IDS) <= registered
    assert set(settle.SETTLE_REASONS) | {settle.STALE_TURN_END} <= registered
    assert {
        skips.RULE_RECEIPT,
        skips.RULE_HEAD_REVIEWED,
        ownoutput.RULE_SELF_LOGIN,
        ownoutput.RULE_APP_MARKER,
        defang.RULE_FENCE,
        defang.RULE_ATTRIBUTION,
        defang.RULE_HEADING,
    } <= registered


def test_every_provenance_id_of_the_design_is_registered() -> None:
    """Every provenance id the watcher's design names is registered."""
    assert PROVENANCE_IDS - rules.rule_ids() == set()


def test_every_registered_rule_has_exactly_one_docs_section() -> None:
    """docs/rules.md has one section per registered id, and no section for an unknown id."""
    documented = documented_ids()
    assert sorted(d for d in set(documented) if documented.count(d) > 1) == []
    assert rules.rule_ids() - set(documented) == set(), "registered but undocumented"
    assert set(documented) - rules.rule_ids() == set(), "documented but not registered"


def test_docs_sections_follow_the_registry_families() -> None:
    """Sections appear family by family, in the order of ``rules.FAMILIES``."""
    family = {r.id: rules.FAMILIES.index(r.family) for r in rules.all_rules()}
    order = [family[i] for i in documented_ids()]
    assert order == sorted(order)


def test_every_rule_id_literal_in_the_code_is_registered() -> None:
    """A rule id written anywhere in fullsend/ (a ``rule_id=``, a verdict, a ``[id]`` log tag)
    is registered, so it cannot ship without a docs section."""
    found = scan_package(REPO_ROOT / "fullsend", "fullsend")
    unregistered = {rule: sorted(where) for rule, where in found.items() if rule not in rules.rule_ids()}
    assert unregistered == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('log("info", "Nothing to do [brand-new-rule]")', {"brand-new-rule"}),
        ('timeline.add(now, "x", "text", rule_id="another-rule")', {"another-rule"}),
        ('_reject(run, "fresh-rule", "fresh", "detail")', {"fresh-rule"}),
        ('RULE_NEW = "new-rule"', {"new-rule"}),
        ('def f(x):\n    rule = "a-rule" if x else "b-rule"\n    log(f"failed [{rule}]")', {"a-rule", "b-rule"}),
        ('login = "fullsend-ai-review[bot]"; fence = "[work-item-context]"', set()),
    ],
)
def test_the_scan_finds_rule_ids_where_the_code_uses_them(tmp_path: Path, source: str, expected: set[str]) -> None:
    """The scanner itself: each way of writing a rule id is found; WIRE tokens are not."""
    path = tmp_path / "mod.py"
    path.write_text(source + "\n", encoding="utf-8")
    assert set(scan_file(path)) == expected


def test_links_between_docs_resolve() -> None:
    """Every ``file.md#anchor`` and ``#anchor`` link in docs/ names an existing heading."""
    anchors = {p.name: _anchors(p) for p in DOCS.glob("*.md")}
    broken = []
    for page in DOCS.glob("*.md"):
        for target, anchor in re.findall(r"\]\(([a-z-]*\.md)?#([a-z0-9-]+)\)", page.read_text(encoding="utf-8")):
            if anchor not in anchors.get(target or page.name, set()):
                broken.append(f"{page.name} → {target or page.name}#{anchor}")
    assert broken == []


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens."""
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out
