"""What every endpoint handler of the simulator shares: the parsed request (``Call``), the answer
(``Reply``) and GitHub's error bodies."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.items import ItemsState
DOCS = "https://docs.github.com/rest"


@dataclass
class Call:
    """One request as the handlers see it; ``path`` is relative to the API prefix."""

    method: str
    path: str
    query: dict[str, list[str]]
    query_pairs: list[tuple[str, str]]
    body: bytes
    login: str
    is_bot: bool

    def param(self, key: str, default: str = "") -> str:
        return self.query.get(key, [default])[0]


@dataclass
class Reply:
    """A handler's answer; ``body`` is JSON-able (``None`` ⇒ empty body)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, message: str, doc: str = DOCS) -> Reply:
    """GitHub's error body (``basic-error``)."""
    return Reply(status, {"message": message, "documentation_url": doc, "status": str(status)})


def not_found() -> Reply:
    """GitHub's plain 404."""
    return error(404, "Not Found")


def validation_failed(message: str, errors: list[Any]) -> Reply:
    """GitHub's 422 ``validation-error`` body: a message and its ``errors`` (objects or strings)."""
    return Reply(422, {"message": message, "errors": errors, "documentation_url": DOCS, "status": "422"})


Handler = Callable[["ItemsState", Call, "re.Match[str]"], Reply]
