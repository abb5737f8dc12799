"""Which written lines one delivery acknowledges: identity, never counting (docs/architecture.md
"Acknowledgement").

An ``Entry`` is one line written to the agent's input: its key (Claude Code: the text; pi: the
rpc id), its text, and its state, ``pending`` → ``queued`` (the CLI holds it) → ``delivered``
(an ack), or ``rejected`` from any state.  ``delivered`` finds the outstanding entries a
delivery names, each at most once, whatever its shape: the whole message, each text block of a
replay, or several queued messages folded into one text joined by ``\\n`` (as Claude Code
replays a batch of queued messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fullsend.core.watch.steer import SteerMessage

PENDING, QUEUED, DELIVERED, REJECTED = "pending", "queued", "delivered", "rejected"


@dataclass
class Entry:
    """One written line (see the module docstring); ``msg`` is None for the opening prompt."""

    key: str
    msg: SteerMessage | None
    is_steer: bool
    text: str = ""
    state: str = PENDING

    @property
    def outstanding(self) -> bool:
        """Still waiting for its delivery (or its refusal)."""
        return self.state in (PENDING, QUEUED)

    def matches(self, id: str, content: str) -> bool:
        """True when ``id`` is this entry's key, or ``content`` its key or text."""
        if id:
            return self.key == id
        return bool(content) and content in (self.key, self.text)


def match(entries: Sequence[Entry], id: str, content: str, taken: Sequence[Entry] = ()) -> Entry | None:
    """The first outstanding entry (not in ``taken``) that ``id`` or ``content`` names, or None."""
    for entry in entries:
        if entry.outstanding and entry.key and entry not in taken and entry.matches(id, content):
            return entry
    return None


def delivered(entries: Sequence[Entry], id: str, content: str, parts: tuple[str, ...]) -> list[Entry]:
    """The entries one delivery acknowledges, each once: the whole message; else each of its
    ``parts`` (text blocks); a part (or the whole text) that is several queued messages joined
    by ``\\n`` acknowledges each of them.  An empty list: the delivery names nothing outstanding."""
    whole = match(entries, id, content)
    if whole is not None or id:
        return [whole] if whole is not None else []
    taken: list[Entry] = []
    for piece in parts or (content,):
        entry = match(entries, "", piece, taken)
        taken += [entry] if entry is not None else folded(entries, piece, taken)
    return taken


def folded(entries: Sequence[Entry], text: str, taken: Sequence[Entry] = ()) -> list[Entry]:
    """Outstanding entries, in the order written, whose texts joined by ``\\n`` are ``text``;
    empty unless at least two are."""
    candidates = [e for e in entries if e.outstanding and e.text and e not in taken]

    def walk(pos: int, start: int) -> list[Entry] | None:
        if pos >= len(text):
            return []
        for i in range(start, len(candidates)):
            end = pos + len(candidates[i].text)
            if text.startswith(candidates[i].text, pos) and (end == len(text) or text[end] == "\n"):
                rest = walk(end + 1, i + 1)
                if rest is not None:
                    return [candidates[i], *rest]
        return None

    found = walk(0, 0) or []
    return found if len(found) > 1 else []
