"""Agent and commenter text made inert where people read it (docs/architecture.md "Status comments").

The status comment and the step summary quote text the action did not write (an error an agent
printed, a commenter's words).  There it may say anything but DO nothing: no link, no mention,
no HTML, no escape from its table cell.  :func:`inert` alters each construct, never deletes it:

* ``<`` → ``&lt;`` (no HTML, no ``<https://…>`` autolink, no ``<!--`` marker);
* ``](`` → ``]`` + U+200B + ``(`` (no ``[x](y)`` or ``![x](y)`` link: the two must touch; a
  reference link needs a definition line, which a text without line breaks cannot hold);
* ``@`` before a login character → ``@`` + U+200B (no mention, so no notification);
* ``://`` → ``:`` + U+200B + ``//`` and ``www.`` → ``www`` + U+200B + ``.`` (no bare autolink);
* ``#`` before a digit → ``#`` + U+200B, and ``GH-`` before a digit → ``GH`` + U+200B + ``-`` (no
  issue reference, ``#123`` or ``owner/repo#123``: GitHub would link it and list this comment
  in that issue's timeline);
* line breaks (``\\r``, ``\\n``, U+2028, U+2029) → a space and ``|`` → ``\\|`` (the text stays in
  its table row or line).

Pure; idempotent (applying it twice gives the same text as once).

:func:`code_span` shows a name the forge gave (a login) as inline code: inside it no mention,
link or HTML renders; a backtick in it, which would end the span, becomes ``'``.

:func:`inert_block` is the form for a whole message that keeps its lines (the agent's final
message, docs/architecture.md "Final message and denied tools"): line breaks become ``\\n`` and
stay, ``|`` is left alone, and, because a text with lines could hold a reference definition
(``[x]: url``), ``]:`` gets a U+200B too; ``<`` gets a U+200B after it instead of ``&lt;``, so
the text reads the same wherever it is pasted (no tag, comment or autolink can start).
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_SCHEME = re.compile(r":(?=//)")
_WWW = re.compile(r"(?i)\b(www)(?=\.)")
_REFERENCE = re.compile(r"(#|(?i:\bGH)(?=-))(?=-?[0-9])")
_BREAKS = re.compile("[\r\n\u2028\u2029]")
_PIPE = re.compile(r"(?<!\\)\|")
_BLOCK_BREAKS = re.compile("\r\n|[\r\u2028\u2029]")
_LT = re.compile("<(?!\u200b)")
_CLOSE = re.compile("\\](?=[(:])")


def inert(text: str) -> str:
    """``text`` with every link, mention, HTML tag and line break made inert (see the module).

    ``str -> str``; never raises.
    """
    text = _BREAKS.sub(" ", text)
    text = text.replace("<", "&lt;").replace("](", "]" + ZWSP + "(")
    text = _PIPE.sub(r"\\|", text)
    text = _MENTION.sub("@" + ZWSP, text)
    text = _SCHEME.sub(":" + ZWSP, text)
    text = _REFERENCE.sub(r"\1" + ZWSP, text)
    return _WWW.sub(r"\1" + ZWSP, text)


def inert_block(text: str) -> str:
    """``text`` with its lines kept (``\\n`` only) and every link, mention, tag, comment,
    autolink and reference definition made inert (see the module).

    ``str -> str``; never raises; idempotent.
    """
    text = _BLOCK_BREAKS.sub("\n", text)
    text = _LT.sub("<" + ZWSP, text)
    text = _CLOSE.sub("]" + ZWSP, text)
    text = _MENTION.sub("@" + ZWSP, text)
    text = _SCHEME.sub(":" + ZWSP, text)
    text = _REFERENCE.sub(r"\1" + ZWSP, text)
    return _WWW.sub(r"\1" + ZWSP, text)


def code_span(name: str) -> str:
    """``name`` as a one-line Markdown code span (see the module), e.g. ``@x`` → `` `@x` ``.

    ``str -> str``; never raises.
    """
    return "`" + _BREAKS.sub(" ", name).replace("`", "'") + "`"
