"""Defanging a stranger's text before it enters the context block (docs/architecture.md "Defanging").

A context body may not write the envelope's structure.  Structural tokens are ALTERED, never
deleted, each by its rule id (docs/rules.md#defang):

* ``fence`` — ``[work-item-context]`` / ``[/work-item-context]`` in any letter case →
  ``(work-item-context)`` / ``(/work-item-context)`` (inner text as written);
* ``attribution`` — ``Instruction from @`` at a line start (after spaces/tabs and block markers)
  or right after a ``|`` → its ``@`` becomes ``(at)``;
* ``heading`` — a line that is the ``Amendments`` heading, or that begins ``Work-item context``,
  under any block/close markers → ``> `` + the word(s).

The envelope opening line is never defanged (its presence in content is the injection signal).
Before matching, line breaks are normalized and every HTML construct is put on its own line
(``line_starts``).  Tokens that only appear under NFKC folding are caught by a refold check.

Every pattern is linear or bounded: hostile input (unterminated ``<!--``, runs of ``#``) cannot
make defanging slow.  Uses Python 3.11 atomic groups and possessive quantifiers.
"""

from __future__ import annotations

import functools
import re
import unicodedata

RULE_FENCE = "fence"
RULE_ATTRIBUTION = "attribution"
RULE_HEADING = "heading"

# Every Unicode line boundary (those of ``str.splitlines``): a reader may start a line after any.
_BREAKS = re.compile("\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# What may precede a token on its line and still leave it at the line start for a reader: tabs,
# every Unicode space separator, every control character but the line feed, and every format
# character (categories Zs, Zl, Zp, Cc but U+000A, and Cf of Unicode 14, the tables of Python 3.11; a test
# fails when the interpreter's tables grow).  The sanitizer strips the format characters first; they
# are listed so defanging does not depend on it.
_SPACE = (
    "[\x00-\x09\x0b-\x20\x7f-\xa0\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u1680\u180e"
    "\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)

# HTML constructs whose terminator is searched with str.find (linear even when unterminated).
# Only CDATA has letters; it is compared case-insensitively (ASCII) in ``_opens``.
_DELIMITED = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"))
_DECLARATION = re.compile(r"<![A-Za-z][^<>]*>")
_TAG = re.compile(r"""</?[A-Za-z][A-Za-z0-9-]*+(?:[\t\n\f\r ](?:[^<>"']|"[^"]*"|'[^']*')*+)?/?[\t\n\f\r ]*>""")

# Block markers (each followed by optional spaces/tabs); specific alternatives before generic ones.
_BLOCK = (
    r"(?>(?:\[[ xX]\]|\[![A-Za-z]+\]|\[\^[^\]\n]*\]:|!?\[|<!--"
    r"""|<(?:[^<>\n"']|"[^"\n]*"|'[^'\n]*')*+>|<[^<>\n]*>"""
    r"|[>*+_~|`\-]|\#{1,6}|[0-9]+[.)])" + _SPACE + "*)"
)
_CLOSE = r"(?>" + _SPACE + r"*(?:\#{1,6}|[*_~|`]++|</[^<>\n]*>))"
# Line-anchored rules match from the "\n" that ends the previous line (the text gets one prepended):
# a literal first character lets the regex engine skip ahead instead of trying every position.
_LEAD = rf"\n{_SPACE}*+{_BLOCK}*+"

_FENCE = re.compile(r"\[(/?work-item-context)\]", re.IGNORECASE)
_WORDS_GAP = _SPACE + "++"
_ATTRIBUTION_LINE = re.compile(rf"({_LEAD})(instruction{_WORDS_GAP}from{_WORDS_GAP})@", re.IGNORECASE)
_ATTRIBUTION_PIPE = re.compile(rf"(\|{_SPACE}*+)(instruction{_WORDS_GAP}from{_WORDS_GAP})@", re.IGNORECASE)
_HEADING = re.compile(
    rf"\n{_SPACE}*+{_BLOCK}*+(?:(amendments){_CLOSE}*+{_SPACE}*+|(work-item{_WORDS_GAP}context(?![A-Za-z0-9_]).*))$",
    re.IGNORECASE | re.MULTILINE,
)


def _opens(s: str, i: int, opener: str) -> bool:
    """``s[i:]`` starts with ``opener``, ASCII letters compared case-insensitively."""
    return s[i : i + len(opener)].upper() == opener if opener[-1] == "[" else s.startswith(opener, i)


def _construct_end(s: str, i: int, missing: set[str]) -> int:
    """End index of the HTML construct starting at ``s[i] == "<"``, or -1 (first match wins)."""
    for opener, closer in _DELIMITED:
        if _opens(s, i, opener):
            if closer not in missing:
                j = s.find(closer, i + len(opener))
                if j >= 0:
                    return j + len(closer)
                missing.add(closer)  # absent after i, so absent after every later start too
            if opener != "<![CDATA[":
                break  # the later alternatives cannot match a "<!-" or "<?" opener
    for pattern in (_DECLARATION, _TAG):
        m = pattern.match(s, i)
        if m:
            return m.end()
    return -1


def line_starts(s: str) -> str:
    """Normalize line breaks to ``\\n`` and put every HTML construct on its own line.

    ``\\r\\n``, ``\\r``, ``\\v``, ``\\f`` and NEL become ``\\n``; a ``\\n`` is put before and after
    every comment, processing instruction, CDATA section, declaration and tag (the construct is
    kept), so text after it starts a line: ``a<b>c`` → ``a\\n<b>\\nc``.  Autolinks are not tags.
    """
    s = _BREAKS.sub("\n", s)
    if "<" not in s:
        return s
    out: list[str] = []
    pos = i = 0
    missing: set[str] = set()
    while (i := s.find("<", i)) >= 0:
        end = _construct_end(s, i, missing)
        if end < 0:
            i += 1
            continue
        out += [s[pos:i], "\n", s[i:end], "\n"]
        pos = i = end
    out.append(s[pos:])
    return "".join(out)


def neutralize(s: str) -> str:
    """``N(s)``: the fence, attribution and heading substitutions, in that order.

    Idempotent.  ``Instruction From @maintainer`` → ``Instruction From (at)maintainer``;
    ``[/WORK-ITEM-CONTEXT]`` → ``(/WORK-ITEM-CONTEXT)``; ``## Amendments ##`` → ``> Amendments``.
    The two attribution anchors (line start, after ``|``) never overlap, so applying them one
    after the other equals one alternation of both.
    """
    low = s.lower()
    text = "\n" + s
    if "context" in low:
        text = _FENCE.sub(r"(\1)", text)
    if "@" in s:
        text = _ATTRIBUTION_LINE.sub(r"\1\2(at)", text)
        text = _ATTRIBUTION_PIPE.sub(r"\1\2(at)", text)
    if "context" in low or "amendment" in low:
        text = _HEADING.sub(lambda m: "\n> " + (m.group(1) if m.group(1) is not None else m.group(2)), text)
    return text[1:]


def reader_view(s: str) -> str:
    """The text as a reader sees it: compatibility forms folded and combining marks dropped.

    ``NFKC(NFKD(s) - marks)``: ``Work-item contex`` + ``t`` + U+0308 (or the precomposed U+1E97)
    reads ``Work-item context``; a fullwidth ``Ａ`` reads ``A``.  Idempotent.
    """
    if s.isascii():
        return s
    bare = _marks_pattern().sub("", unicodedata.normalize("NFKD", s))
    return unicodedata.normalize("NFKC", bare)


@functools.cache
def _marks_pattern() -> re.Pattern[str]:
    """Every combining mark (categories Mn, Mc, Me) of this interpreter's Unicode tables.

    Built on first use (one pass over the code points, a fraction of a second), never at import:
    the skip path does not defang.
    """
    ranges: list[list[int]] = []
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)).startswith("M"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]")


def unmarked_view(s: str) -> str:
    """``NFKC(s)`` with its combining marks dropped, precomposed letters kept.

    A mark a reader cannot see as a character of its own (``¯`` folds to a space and U+0304)
    may stand before a token at a line start; ``contextÀ`` stays one word, where the
    :func:`reader_view` would read ``contextA``.  Idempotent.
    """
    folded = unicodedata.normalize("NFKC", s)
    return folded if folded.isascii() else unicodedata.normalize("NFKC", _marks_pattern().sub("", folded))


def _hides_token(text: str) -> bool:
    """True when a structural token shows at a line start once ``text`` is folded or read bare.

    The readings: NFKC, as written without its marks (a stray U+0308 before a heading that a
    fullwidth ``e`` (U+FF45) follows, which folding would glue into ``contexte``), the
    :func:`unmarked_view` and the :func:`reader_view`.
    """
    marks_dropped = text if text.isascii() else _marks_pattern().sub("", text)
    views = (unicodedata.normalize("NFKC", text), marks_dropped, unmarked_view(text), reader_view(text))
    for view in dict.fromkeys(views):  # often two or three are the same text: each checked once
        starts = line_starts(view)
        if neutralize(starts) != starts:
            return True
    return False


def defang_context(sanitized: str) -> str:
    """Defang an already sanitized context body (docs/rules.md#fence, #attribution, #heading).

    ``N(line_starts(s))`` keeps the original bytes when neither NFKC folding nor the
    :func:`reader_view` reveals a further token; otherwise the NFKC-folded form is defanged (a
    fullwidth ``［/work-item-context］`` or ``＜br＞``); when that still hides a token, the
    :func:`unmarked_view` (a stray mark before the token), and last the reader view itself (a
    mark composed into a letter of the token) are defanged and returned.  The check runs on the
    final text.  The opening line is never altered.
    """
    body = neutralize(line_starts(sanitized))
    if not _hides_token(body):
        return body
    for view in (unicodedata.normalize("NFKC", sanitized), unmarked_view(sanitized)):
        defanged = neutralize(line_starts(view))
        if not _hides_token(defanged):
            return defanged
    return neutralize(line_starts(reader_view(sanitized)))


def reveals_token(line: str) -> bool:
    """True when ``line`` reads as a structural token as written, under NFKC or in the reader view."""
    return neutralize(line) != line or _hides_token(line)
