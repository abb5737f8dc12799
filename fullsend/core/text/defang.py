"""Defanging a stranger's text before it enters the context block (spec/watcher.md §10.4, §10.6).

A context body may not write the envelope's structure.  Structural tokens are ALTERED, never
deleted, each by its rule id (spec/watcher.md §5.5):

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

import re
import unicodedata

RULE_FENCE = "fence"
RULE_ATTRIBUTION = "attribution"
RULE_HEADING = "heading"

_BREAKS = re.compile("\r\n|[\r\v\f\x85]")

# HTML constructs whose terminator is searched with str.find (linear even when unterminated).
# Only CDATA has letters; it is compared case-insensitively (ASCII) in ``_opens``.
_DELIMITED = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"))
_DECLARATION = re.compile(r"<![A-Za-z][^<>]*>")
_TAG = re.compile(
    r"""</?[A-Za-z][A-Za-z0-9-]*+(?:[\t\n\f\r ](?:[^<>"']|"[^"]*"|'[^']*')*+)?/?[\t\n\f\r ]*>"""
)

# Block markers (each followed by optional spaces/tabs); specific alternatives before generic ones.
_BLOCK = (
    r"(?>(?:\[[ xX]\]|\[![A-Za-z]+\]|\[\^[^\]\n]*\]:|!?\[|<!--"
    r"""|<(?:[^<>\n"']|"[^"\n]*"|'[^'\n]*')*+>|<[^<>\n]*>"""
    r"|[>*+_~|`\-]|\#{1,6}|[0-9]+[.)])[ \t]*)"
)
_CLOSE = r"(?>[ \t]*(?:\#{1,6}|[*_~|`]++|</[^<>\n]*>))"
# Line-anchored rules match from the "\n" that ends the previous line (the text gets one prepended):
# a literal first character lets the regex engine skip ahead instead of trying every position.
_LEAD = rf"\n[ \t]*+{_BLOCK}*+"

_FENCE = re.compile(r"\[(/?work-item-context)\]", re.IGNORECASE)
_ATTRIBUTION_LINE = re.compile(rf"({_LEAD})(instruction from )@", re.IGNORECASE)
_ATTRIBUTION_PIPE = re.compile(r"(\|[ \t]*+)(instruction from )@", re.IGNORECASE)
_HEADING = re.compile(
    rf"\n[ \t]*+{_BLOCK}*+(?:(amendments){_CLOSE}*+[ \t\r]*+|(work-item context(?![A-Za-z0-9_]).*))$",
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
    """Normalize line breaks to ``\\n`` and put every HTML construct on its own line (§10.4 pre-pass).

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
    """``N(s)``: the fence, attribution and heading substitutions, in that order (§10.4).

    Idempotent.  ``Instruction From @maintainer`` → ``Instruction From (at)maintainer``;
    ``[/WORK-ITEM-CONTEXT]`` → ``(/WORK-ITEM-CONTEXT)``; ``## Amendments ##`` → ``> Amendments``.
    The two attribution anchors (line start, after ``|``) never overlap, so applying them one
    after the other equals the single alternation of the spec.
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


def defang_context(sanitized: str) -> str:
    """Defang an already sanitized context body (``defangContext``, spec/watcher.md §10.4).

    ``N(line_starts(s))`` keeps the original bytes when folding reveals no further token;
    otherwise (a fullwidth ``［/work-item-context］`` or ``＜br＞``) the NFKC-folded form is
    defanged and returned.  The opening line is never altered.
    """
    body = neutralize(line_starts(sanitized))
    refolded = line_starts(unicodedata.normalize("NFKC", body))
    if neutralize(refolded) == refolded:
        return body
    return neutralize(line_starts(unicodedata.normalize("NFKC", sanitized)))


def reveals_token(line: str) -> bool:
    """True when ``line`` reads as a structural token as written or under NFKC (used after a clip)."""
    if neutralize(line) != line:
        return True
    refolded = line_starts(unicodedata.normalize("NFKC", line))
    return neutralize(refolded) != refolded
