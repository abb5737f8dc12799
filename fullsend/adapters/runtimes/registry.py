"""The per-runtime run registry: ``sandbox name -> session`` (docs/architecture.md "Runtimes")."""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

T = TypeVar("T")


class SessionRegistry(Generic[T]):
    """Thread-safe ``sandbox name -> session`` map (the run registry)."""

    def __init__(self) -> None:
        self._mu = threading.Lock()
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> None:
        """Register ``item`` under ``name`` (replacing any previous one)."""
        with self._mu:
            self._items[name] = item

    def lookup(self, name: str) -> T | None:
        """The session registered under ``name``, or None."""
        with self._mu:
            return self._items.get(name)

    def unregister(self, name: str, item: T) -> None:
        """Remove ``name`` only if it still maps to ``item``."""
        with self._mu:
            if self._items.get(name) is item:
                del self._items[name]
