"""Query semantics of the GitHub simulator: ``created`` filters, page/per_page with Link headers, ETags.

``created`` follows GitHub's search date syntax: ``>=T``, ``>T``,
``<=T``, ``<T``, ``A..B`` (``*`` for an open end) and a bare value; a date without a time means
the whole UTC day.  Pagination follows GitHub: ``per_page`` defaults to 30 and
is capped at 100; Link carries ``prev``/``next``/``last``/``first`` and is absent on a single page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from fullsend.core.scalars import parse_time

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_NAIVE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?", re.ASCII)
_DAY = timedelta(days=1)

TimeFilter = Callable[[datetime | None], bool]


def _instant(text: str, upper: bool, inclusive: bool) -> tuple[datetime, bool] | None:
    """One bound as (instant, inclusive); a bare date widens to its whole day."""
    text = text.strip().replace(" ", "+")  # a '+' offset sent unencoded arrives as a space
    day = _DATE.fullmatch(text)
    if day:
        try:
            year, month, mday = (int(g) for g in day.groups())
            start = datetime(year, month, mday, tzinfo=UTC)
        except ValueError:
            return None
        if upper:
            return (start + _DAY, False) if inclusive else (start, False)
        return (start, True) if inclusive else (start + _DAY, True)
    when = parse_time(text + "Z" if _NAIVE.fullmatch(text) else text)
    return (when, inclusive) if when is not None else None


def created_filter(value: str) -> TimeFilter | None:
    """A predicate on ``created_at`` for a ``created`` query value, or ``None`` if it is malformed.

    An unknown (unparseable) ``created_at`` passes, so hostile records reach the client.
    """
    value = value.strip()
    lo: tuple[datetime, bool] | None = None
    hi: tuple[datetime, bool] | None = None
    for op in (">=", "<=", ">", "<"):
        if value.startswith(op):
            bound = _instant(value[len(op) :], upper=op[0] == "<", inclusive=op.endswith("="))
            if bound is None:
                return None
            lo, hi = (bound, None) if op[0] == ">" else (None, bound)
            break
    else:
        first, sep, last = value.partition("..")
        lo = None if sep and first == "*" else _instant(first, upper=False, inclusive=True)
        hi = None if sep and last == "*" else _instant(last if sep else first, upper=True, inclusive=True)
        if (lo is None and first != "*") or (hi is None and (last if sep else first) != "*"):
            return None

    def keep(created: datetime | None) -> bool:
        if created is None:
            return True
        if lo is not None and (created < lo[0] or (created == lo[0] and not lo[1])):
            return False
        if hi is not None and (created > hi[0] or (created == hi[0] and not hi[1])):
            return False
        return True

    return keep


def page_params(query: dict[str, list[str]]) -> tuple[int, int]:
    """(per_page, page) from a query: per_page 1..100 (default 30), page ≥ 1 (default 1)."""

    def number(key: str, default: int) -> int:
        try:
            return int(query.get(key, [str(default)])[0])
        except ValueError:
            return default

    per_page = number("per_page", DEFAULT_PER_PAGE)
    per_page = DEFAULT_PER_PAGE if per_page < 1 else min(per_page, MAX_PER_PAGE)
    return per_page, max(number("page", 1), 1)


def paginate(
    items: Sequence[Any], query_pairs: list[tuple[str, str]], query: dict[str, list[str]], link_url: str
) -> tuple[list[Any], str | None]:
    """The requested page of ``items`` and its Link header (``None`` for a single page).

    Link URLs are ``link_url`` plus the request's own query with ``page`` replaced, in order.
    """
    per_page, page = page_params(query)
    last = max(1, -(-len(items) // per_page))
    chunk = list(items[(page - 1) * per_page : page * per_page])
    if last == 1:
        return chunk, None

    def url(n: int) -> str:
        pairs = [(k, v) for k, v in query_pairs if k != "page"] + [("page", str(n))]
        return f"{link_url}?{urlencode(pairs, quote_via=quote, safe='')}"

    rels: list[tuple[str, int]] = []
    if page > 1:
        rels.append(("prev", min(page - 1, last)))
    if page < last:
        rels += [("next", page + 1), ("last", last)]
    if page > 1:
        rels.append(("first", 1))
    return chunk, ", ".join(f'<{url(n)}>; rel="{rel}"' for rel, n in rels)


def etag_of(body: bytes) -> str:
    """A strong ETag: a quoted hash of the response body."""
    return '"' + hashlib.sha256(body).hexdigest()[:40] + '"'


def etag_matches(if_none_match: str, etag: str) -> bool:
    """True when an ``If-None-Match`` header names ``etag`` (weak ``W/`` prefixes and ``*`` allowed)."""
    tags = [t.strip() for t in if_none_match.split(",") if t.strip()]
    bare = etag.removeprefix("W/")
    return any(t == "*" or t.removeprefix("W/") == bare for t in tags)
