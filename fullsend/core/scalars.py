"""The forge's scalar encodings: RFC 3339 instants and base-10 ids (docs/architecture.md "GitHub access").

Pure and tolerant like the records of ``fullsend.core.model``:
anything that is not the exact form is the "unknown" value (``None`` time, 0 id), never an error.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

INT64_MAX = 9_223_372_036_854_775_807
_INT64_DIGITS = 19

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})",
    re.ASCII,
)


def parse_time(value: object) -> datetime | None:
    """Parse RFC 3339 with optional fractional seconds.

    Returns an aware UTC ``datetime``, or ``None`` ("zero time", unknown) for anything that is
    not a string in that exact form.  Never raises.
    """
    if not isinstance(value, str):
        return None
    m = _RFC3339.fullmatch(value.strip())
    if not m:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac, zone = m.group(7), m.group(8)
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    try:
        tz = UTC
        if zone not in ("Z", "z"):
            sign = 1 if zone[0] == "+" else -1
            hh, mm = int(zone[1:3]), int(zone[4:6])

            tz = timezone(sign * timedelta(hours=hh, minutes=mm))
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz).astimezone(UTC)
    except ValueError:
        return None


def decimal_id(text: str) -> int:
    """A run or comment id written in base 10 (ASCII digits only) as an int in ``1 … INT64_MAX``;
    0 for anything else: empty, signed, zero, too large — and never ``int()`` on a string long
    enough to exceed Python's digit limit (a 4,301-digit id is simply not an id).
    """
    if not isinstance(text, str) or not text or not (text.isascii() and text.isdigit()):
        return 0
    digits = text.lstrip("0")
    if not digits or len(digits) > _INT64_DIGITS:
        return 0
    value = int(digits)
    return value if value <= INT64_MAX else 0


def format_time(value: datetime | None) -> str:
    """Render an instant as RFC 3339 UTC to the second (``2026-09-03T10:00:00Z``); ``""`` if unknown."""
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def created_query(since: datetime | None, until: datetime | None) -> str:
    """GitHub's ``created`` search qualifier for the bounds given: ``a..b``, ``>=a``, ``<=b``,
    or ``""`` when neither is (each bound as :func:`format_time`)."""
    if since is not None and until is not None:
        return f"{format_time(since)}..{format_time(until)}"
    if since is not None:
        return f">={format_time(since)}"
    if until is not None:
        return f"<={format_time(until)}"
    return ""


_RUN_ID_RE = re.compile(r"[+-]?[0-9]+")


def parse_run_id(raw: str) -> int:
    """``GITHUB_RUN_ID`` as Go's base-10 int64, the one reader of it; unset, unparseable or
    ``<= 0`` ⇒ 0 (a sign is read as Go reads it; spaces are not)."""
    if not isinstance(raw, str) or not _RUN_ID_RE.fullmatch(raw):
        return 0
    return decimal_id(raw[1:] if raw[0] == "+" else raw)  # "-5" and 4,301-digit strings alike ⇒ 0
