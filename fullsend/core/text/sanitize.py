"""Unicode sanitizer for agent-bound text (docs/architecture.md "Sanitizer").

``sanitize_agent_text(s) -> (text, findings)``:

1. strip to a fixed point (at most :data:`MAX_PASSES` passes; each pass removes, in order: NUL,
   ANSI CSI escapes, ST/BEL-terminated OSC/DCS/APC/PM escapes, the zero-width/invisible set, bidi
   controls, tag characters, variation selectors, and every remaining category ``Cf`` character);
   if no fixed point is reached, every ESC and C1 control is removed (fail closed);
2. NFKC, and strip again when NFKC changed anything (NFKC can rebuild ``ESC`` + ``［`` into a CSI);
3. the folded, stripped copy is returned only when something was stripped (findings > 0);
   otherwise the input comes back unchanged, compatibility characters (fullwidth letters,
   ``1⁄₂``) included.

Line breaks ``\\r``, ``\\v``, ``\\f`` and NEL are left alone (defanging normalizes them); nothing is
trimmed.  Every pattern here is linear in the input (no backtracking blow-up on hostile text).

``field_safe(s)`` is the stricter filter for the envelope's provenance fields.

The character class of step 1 is built on first use, not at import (the queued run's skip never
sanitizes anything, docs/architecture.md "Action lifecycle"): from :data:`CF_RANGES` when the
interpreter's Unicode tables are the version they were taken from (Python 3.11: Unicode 14.0.0,
the image's Python), else by scanning every code point once (about 0.3 s).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

#: Stripping passes before the fail-closed ESC/C1 removal.
MAX_PASSES = 64
#: The last Unicode code point (the value of ``sys.maxunicode`` on every CPython).
MAX_CODE_POINT = 0x10FFFF

_NUL = re.compile("\x00")
_CSI = re.compile("\x1b\\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]")
_ST_STARTS = re.compile("\x1b[\\]P_^]")
_ESC_C1 = re.compile("[\x1b\x80-\x9f]")

# The named sets; every remaining Cf is added below from the interpreter's Unicode tables.
_NAMED_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x0600, 0x0605),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x2029),
    (0x2060, 0x2064),
    (0x206A, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),  # zero-width/invisible
    (0x202A, 0x202E),
    (0x2066, 0x2069),  # bidi controls
    (0xE0000, 0xE007F),  # tag characters
    (0xFE00, 0xFE0F),
    (0xE0100, 0xE01EF),  # variation selectors
)


#: Every category ``Cf`` code point of Unicode :data:`CF_UNIDATA_VERSION`, as inclusive ranges
#: (tests/core/text checks them against a full scan whenever the interpreter has that version).
CF_UNIDATA_VERSION = "14.0.0"
CF_RANGES = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def format_ranges(unidata_version: str | None = None) -> tuple[tuple[int, int], ...]:
    """The category ``Cf`` code points of this interpreter's Unicode tables as inclusive ranges.

    ``unidata_version`` defaults to ``unicodedata.unidata_version``; when it is
    :data:`CF_UNIDATA_VERSION` the precomputed :data:`CF_RANGES` are returned, otherwise every
    code point up to :data:`MAX_CODE_POINT` is scanned (about 0.3 s).
    """
    if (unidata_version or unicodedata.unidata_version) == CF_UNIDATA_VERSION:
        return CF_RANGES
    return _merge(cp for cp in range(MAX_CODE_POINT + 1) if unicodedata.category(chr(cp)) == "Cf")


def _merge(points: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Sorted inclusive ranges covering ``points``."""
    ranges: list[tuple[int, int]] = []
    for cp in sorted(set(points)):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return tuple(ranges)


def _invisible_class() -> re.Pattern[str]:
    points = {cp for lo, hi in _NAMED_RANGES for cp in range(lo, hi + 1)}
    points |= {cp for lo, hi in format_ranges() for cp in range(lo, hi + 1)}
    parts = "".join(re.escape(chr(lo)) + ("-" + re.escape(chr(hi)) if hi > lo else "") for lo, hi in _merge(points))
    return re.compile(f"[{parts}]")


@functools.cache
def _tables() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(the invisible class, the field-unsafe class), compiled once on first use."""
    invisible = _invisible_class()
    return invisible, re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]|" + invisible.pattern)


def _strip_st_escapes(s: str) -> tuple[str, int]:
    """Remove ``ESC ]|P|_|^`` … up to ``ESC \\`` or BEL, leftmost first, shortest match, linearly."""
    out: list[str] = []
    pos = found = 0
    while True:
        m = _ST_STARTS.search(s, pos)
        if m is None:
            break
        start = m.start()
        bel, st = s.find("\x07", start + 2), s.find("\x1b\\", start + 2)
        ends = [e for e in ((bel, 1), (st, 2)) if e[0] >= 0]
        if not ends:
            break  # no terminator after this start means none after any later start either
        end_at, width = min(ends)
        out.append(s[pos:start])
        pos = end_at + width
        found += 1
    if not found:
        return s, 0
    out.append(s[pos:])
    return "".join(out), found


def _strip_pass(s: str) -> tuple[str, int]:
    """One stripping pass, in the order of the module docstring; returns (text, removals)."""
    s, n_nul = _NUL.subn("", s)
    s, n_csi = _CSI.subn("", s)
    s, n_st = _strip_st_escapes(s)
    s, n_inv = _tables()[0].subn("", s)
    return s, n_nul + n_csi + n_st + n_inv


def _strip_to_fixpoint(s: str) -> tuple[str, int]:
    """Repeat :func:`_strip_pass` until nothing changes (≤ 64 passes, then force ESC/C1 out)."""
    total = 0
    for _ in range(MAX_PASSES):
        s, found = _strip_pass(s)
        if not found:
            return s, total
        total += found
    s, forced = _ESC_C1.subn("", s)
    return s, total + forced


def scan(s: str) -> tuple[str, int]:
    """The underlying normalizer: strip, NFKC, strip again; returns (folded text, findings)."""
    stripped, findings = _strip_to_fixpoint(s)
    folded = unicodedata.normalize("NFKC", stripped)
    if folded != stripped:
        folded, more = _strip_to_fixpoint(folded)
        findings += more
    return folded, findings


def sanitize_agent_text(s: str) -> tuple[str, int]:
    """Sanitize text bound for the agent.

    Returns ``(text, findings)``: ``findings`` counts removed characters and escape sequences;
    when it is 0 the input is returned unchanged (compatibility characters survive), otherwise the
    NFKC-folded, stripped copy.  Idempotent: sanitizing the result again finds nothing.
    """
    folded, findings = scan(s)
    return (folded, findings) if findings else (s, 0)


def field_safe(s: str) -> str:
    """Drop every Cc and Cf character and U+2028/U+2029 from a provenance field.

    Used on the envelope's ``actor``, ``event`` and ``head_sha`` so
    no field can start a line of its own.  Ordinary spaces are kept.
    """
    return _tables()[1].sub("", s)


_SURROGATE = re.compile("[\ud800-\udfff]")


def runner_safe(s: str) -> str:
    """``s`` as valid Unicode the runner can take: each lone surrogate becomes U+FFFD.

    Text decoded from an agent (a JSON ``\\ud800`` escape, bytes read with ``surrogateescape``)
    can hold surrogate code points that no UTF-8 writer accepts; a surrogate pair split over two
    code points is joined back.  Everything else is returned unchanged.
    """
    if not _SURROGATE.search(s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
