"""Property tests (hypothesis) for the envelope and the sanitizer (issue 4 acceptance).

Profiles: ``HYPOTHESIS_PROFILE=dev`` (200 examples, default), ``ci`` (2,000), ``slow`` (50,000);
see conftest.py.  Each property is bounded by a pytest-timeout mark sized for 2 cores.
"""

from __future__ import annotations

import os
import random
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.delta.records import Delta, DeltaItem
from fullsend.core.text.defang import defang_context, neutralize
from fullsend.core.text.envelope import OPENING_LINE, render_envelope
from fullsend.core.text.sanitize import sanitize_agent_text
from fullsend.core.text.steertext import CONTEXT_CLOSE, build_text, clip_context, context_open
from fullsend.core.watch.steer import SteerMessage
from fullsend.core.wire import AMENDMENTS_HEADING, FENCE_CLOSE, FENCE_OPEN
from fullsend.wording import default_wording
from tests.core.text.reader_oracle import reader_tokens
from tests.support.forge_records import live_tokens, run

TIMEOUT_S = {"dev": 120, "ci": 600, "slow": 900}.get(os.environ.get("HYPOTHESIS_PROFILE", "dev"), 900)

FRAGMENTS = [
    "[work-item-context]",
    "[/work-item-context]",
    "[/WORK-ITEM-CONTEXT]",
    "[Work-Item-Context]",
    "Amendments",
    "AMENDMENTS",
    "Work-item context.",
    "work-item context",
    "Instruction from @",
    "instruction From @",
    "@",
    OPENING_LINE,
    "\n",
    "\r",
    "\r\n",
    "\v",
    "\f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u200b",
    "\u00ad",
    "\u202e",
    "\ufeff",
    "\U000e0041",
    "\ufe0f",
    "\x00",
    "\x1b[31m",
    "\x1b]0;t\x07",
    "\x1b",
    "#",
    "## ",
    ">",
    "> ",
    "- ",
    "* ",
    "|",
    "`",
    "```",
    "_",
    "~~",
    "1. ",
    "[ ] ",
    "[x]",
    "[!NOTE] ",
    "[^1]: ",
    "[",
    "![",
    "<br>",
    "<p>",
    "</p>",
    "<h1>",
    "<!--",
    "-->",
    "<?",
    "?>",
    "<![CDATA[",
    "]]>",
    "<!DOCTYPE x>",
    '<a href="x>y">',
    "<",
    ">",
    '"',
    "'",
    "\uff3b",
    "\uff3d",
    "\uff20",
    "\uff1c",
    "\uff1e",
    "\uff21mendments",
    "\uff37ork-item context.",
    "\u3000",
    "\u00a0",
    "\t",
    " ",
    "\u2044",
    "\u2082",
    "\ufb01",
    "e\u0301",
    "Runner update:",
    "(at)",
    "\n[truncated]",
    "Amendments are here",
    "Work-item contextual",
    "\u1680",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\x7f",
    "\u0308",
    "t\u0308",
    "\u1e97",
    "Work-item contex",
    "\u2003",
    "\u205f",
    "\x85",
    "Instruction\u00a0from\u3000@",
    "\uff21\uff4d\uff45\uff4e\uff44\uff4d\uff45\uff4e\uff54\uff53 ok",
]
FRAGMENT = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6))
BODY = st.lists(FRAGMENT, max_size=40).map("".join)
BIG_BODY = st.one_of(BODY, st.tuples(BODY, st.integers(0, 20_000), BODY).map(lambda t: t[0] + "x" * t[1] + t[2]))
ITEM = st.tuples(st.sampled_from(["comment", "review", "state", "head"]), BIG_BODY).map(
    lambda t: DeltaItem(t[0], t[1], author="drive-by", state="COMMENTED")
)
#: Bodies without the 20 kB filler: the 100,000-example run is about tokens, not the byte budget.
SMALL_ITEM = st.tuples(st.sampled_from(["comment", "review", "state", "head"]), BODY).map(
    lambda t: DeltaItem(t[0], t[1], author="drive-by", state="COMMENTED")
)
AMENDMENT = DeltaItem("comment", "", author="maintainer", run_ids=(337,), instruction="cover the error path")
AMENDMENT_SECTION = f"\n{AMENDMENTS_HEADING}\n\nInstruction from @maintainer: cover the error path\n\n"


@pytest.mark.timeout(TIMEOUT_S)
@given(items=st.lists(ITEM, min_size=1, max_size=3), with_amendment=st.booleans())
def test_envelope_structure_for_any_context(wording, items, with_amendment):
    delta = Delta(amendments=(AMENDMENT,) if with_amendment else (), context=tuple(items))
    text = build_text([run(337, actor="maintainer")], delta, wording).text
    env = render_envelope(SteerMessage(337, text, "issue_comment", "maintainer"), wording)

    # exactly one opening and one closing fence, both where the runner writes them
    opening = context_open(wording)
    assert env.count(FENCE_OPEN) == 1 and env.count(FENCE_CLOSE) == 1
    assert env.count(opening) == 1 and env.endswith(CONTEXT_CLOSE)
    runner, inside = env.split(opening)
    inside = inside[: -len(CONTEXT_CLOSE)]

    # the opening line is the first line, and the only copy in runner text
    assert env.startswith(OPENING_LINE + "\n\n") and runner.count(OPENING_LINE) == 1

    # outside the amendments, no line reads as a heading or an "Instruction from @" attribution
    if with_amendment:
        assert runner.count(AMENDMENT_SECTION) == 1
        runner = runner.replace(AMENDMENT_SECTION, "\n")
    assert not live_tokens(runner) and not live_tokens(inside)
    # ... not even after a (forbidden) fold over the assembled block
    assert not live_tokens(unicodedata.normalize("NFKC", inside))
    # ... nor for any reader: after every Unicode line boundary and any run of invisible characters
    assert reader_tokens(runner) == [] and reader_tokens(inside) == []


def _assembled_inside(items) -> str:
    delta = Delta(amendments=(), context=tuple(items))
    text = build_text([run(337, actor="maintainer")], delta, default_wording()).text
    env = render_envelope(SteerMessage(337, text, "issue_comment", "maintainer"), default_wording())
    return env


#: The 100,000 envelopes as ``ENVELOPE_PARTS`` tests of 10,000, so pytest-xdist spreads them over
#: its workers.  A seeded sweep, not hypothesis: at this count its engine cost more than twice the
#: envelopes themselves, and the hypothesis-driven property above covers the same readers with
#: shrinking.  ``ENVELOPE_SEED=S`` replays: part ``i`` uses ``S + i``.
ENVELOPE_PARTS = 10
ENVELOPES_PER_PART = 100_000 // ENVELOPE_PARTS
#: Every character a fragment holds, so the random text mixes them with the rest of Unicode.
FRAGMENT_CHARS = sorted(set("".join(FRAGMENTS)))
KINDS = ("comment", "review", "state", "head")


def _random_char(rng: random.Random) -> str:
    """Printable ASCII, a control character, a fragment's character, or any other code point."""
    draw = rng.random()
    if draw < 0.4:
        return chr(rng.randint(0x20, 0x7E))
    if draw < 0.55:
        return chr(rng.randint(0, 0x1F))
    if draw < 0.8:
        return rng.choice(FRAGMENT_CHARS)
    point = rng.randint(0x80, 0x10FFFF)
    return "\ufffd" if 0xD800 <= point <= 0xDFFF else chr(point)


def _random_body(rng: random.Random) -> str:
    """Like ``BODY``: up to 40 fragments, each a listed one or up to 6 random characters."""
    count = min(40, int(rng.expovariate(1 / 10)))
    return "".join(
        rng.choice(FRAGMENTS) if rng.random() < 0.5 else "".join(_random_char(rng) for _ in range(rng.randint(0, 6)))
        for _ in range(count)
    )


def _random_items(rng: random.Random) -> list[DeltaItem]:
    return [
        DeltaItem(rng.choice(KINDS), _random_body(rng), author="drive-by", state="COMMENTED")
        for _ in range(rng.randint(1, 3))
    ]


def _envelope_seed() -> int:
    raw = os.environ.get("ENVELOPE_SEED", "")
    return int(raw) if raw.isdigit() else random.SystemRandom().randrange(2**32)


@pytest.mark.slow
@pytest.mark.full
@pytest.mark.timeout(600)
@pytest.mark.parametrize("part", range(ENVELOPE_PARTS), ids=lambda part: f"part{part}")
def test_no_reader_sees_a_token_in_100k_assembled_envelopes(part):
    seed = (_envelope_seed() + part) % 2**32
    print(f"envelopes part {part}: seed {seed} (replay with ENVELOPE_SEED={(seed - part) % 2**32})", flush=True)
    rng = random.Random(seed)
    opening = context_open(default_wording())
    for index in range(ENVELOPES_PER_PART):
        items = _random_items(rng)
        runner, inside = _assembled_inside(items).split(opening)
        found = (reader_tokens(runner), reader_tokens(inside))
        assert found == ([], []), f"seed {seed}, envelope {index}: {found} from {items!r}"


@pytest.mark.timeout(TIMEOUT_S)
@given(s=st.one_of(st.text(), BODY))
def test_sanitize_is_idempotent(s):
    once, findings = sanitize_agent_text(s)
    assert sanitize_agent_text(once) == (once, 0)
    if findings == 0:
        assert once == s


@pytest.mark.timeout(TIMEOUT_S)
@given(s=BODY, data=st.data())
def test_neutralize_is_idempotent_and_defang_leaves_no_live_token(s, data):
    once = neutralize(s)
    assert neutralize(once) == once
    defanged = defang_context(sanitize_agent_text(s)[0])
    assert not live_tokens(defanged)
    assert FENCE_OPEN not in defanged.lower() and FENCE_CLOSE not in defanged.lower()
    # wherever the budget cuts the defanged body, the cut forges no token
    raw = defanged.encode()
    risky = [m.end() for m in re.finditer(rb"(?i)amendments|context|\xef\xbd\x93", raw)]  # word ends, fullwidth s
    anywhere = st.integers(0, len(raw) + 5)
    cut = data.draw(st.one_of(st.sampled_from(risky), anywhere) if risky else anywhere)
    clipped, _ = clip_context(defanged, cut)
    assert not live_tokens(clipped) and not live_tokens(unicodedata.normalize("NFKC", clipped))
    assert reader_tokens(defanged) == [] and reader_tokens(clipped) == []
