"""An independent oracle for the envelope: where could any reader see a structural token?

Written apart from ``fullsend.core.text.defang`` on purpose (a second reading of the rule of
docs/rules.md#attribution and #heading): a line starts after every Unicode line boundary (those
of ``str.splitlines``), and a token is at the start of its line when only characters of the
categories Z*, Cc, Cf or M* (and, for an attribution, Markdown block markers) stand before it.
The text is checked as written, NFKC-folded, and read bare (compatibility-folded, marks dropped).
"""

from __future__ import annotations

import functools
import re
import unicodedata

_INVISIBLE_CATEGORIES = ("Z", "Cc", "Cf", "M")
_ATTRIBUTION = re.compile(r"instruction\s+from\s+@", re.IGNORECASE)
_HEADING = re.compile(r"(?:#{1,6}\s*)?(?:amendments[\s#*_~|`]*$|work-item\s+context(?![A-Za-z0-9_]))", re.IGNORECASE)
_MARKERS = set(">*+_~|`-#")
#: Ordered-list numbers, task boxes and link openers, which defanging also looks through.
_COMPOUND_MARKER = re.compile(r"[0-9]+[.)]|\[[ xX]\]|!?\[")


def _invisible(c: str) -> bool:
    return c.isspace() or unicodedata.category(c).startswith(_INVISIBLE_CATEGORIES)


@functools.cache
def _drop_marks() -> dict[int, None]:
    """A ``str.translate`` table deleting every combining mark (built once per test session)."""
    return {cp: None for cp in range(0x110000) if unicodedata.category(chr(cp)).startswith("M")}


def _bare(text: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKD", text).translate(_drop_marks()))


def _line_tokens(line: str) -> list[str]:
    found = []
    i = 0
    while i < len(line) and _invisible(line[i]):
        i += 1
    if not line[i:].startswith("> ") and _HEADING.match(line, i):
        found.append(line)
    j = i
    while j < len(line):
        if _invisible(line[j]) or line[j] in _MARKERS:
            j += 1
        elif m := _COMPOUND_MARKER.match(line, j):
            j = m.end()
        else:
            break
    if _ATTRIBUTION.match(line, j):
        found.append(line)
    for m in re.finditer(r"\|", line):
        k = m.end()
        while k < len(line) and _invisible(line[k]):
            k += 1
        if _ATTRIBUTION.match(line, k):
            found.append(line)
    return found


def reader_tokens(text: str) -> list[str]:
    """Every line of ``text`` (as written, NFKC, or bare) that reads as an attribution or a heading."""
    found: list[str] = []
    for view in (text, unicodedata.normalize("NFKC", text), _bare(text)):
        for line in view.splitlines():
            found += _line_tokens(line)
    return found
