"""Shared fixtures of the simulator tests: a started simulator with two tokens, and HTTP clients.

Token literals are repeated in the test modules that parametrize on them (test modules do not
import each other).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import requests

from fullsend.core.identity import Identity
from fullsend.simulator.server import GitHubSimulator

APP_TOKEN = "ghs_app_token_for_tests"
USER_TOKEN = "gho_user_token_for_tests"
NOW = datetime(2026, 9, 3, 10, 30, 0, tzinfo=UTC)


class Client:
    """A ``requests`` session against one simulator, sending GitHub's headers."""

    def __init__(self, sim: GitHubSimulator, token: str = APP_TOKEN) -> None:
        self.sim = sim
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
            }
        )

    def request(self, method: str, path: str, **kw: Any) -> requests.Response:
        url = path if path.startswith("http") else self.sim.api_url + path
        return self.session.request(method, url, timeout=10, **kw)

    def get(self, path: str, **kw: Any) -> requests.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> requests.Response:
        return self.request("POST", path, **kw)

    def patch(self, path: str, **kw: Any) -> requests.Response:
        return self.request("PATCH", path, **kw)


def make_sim(**kw: Any) -> GitHubSimulator:
    tokens = {APP_TOKEN: Identity("fullsend-ai-review[bot]"), USER_TOKEN: Identity("alice", is_bot=False)}
    return GitHubSimulator(tokens=tokens, clock=kw.pop("clock", lambda: NOW), **kw)


@pytest.fixture
def new_sim() -> Callable[..., GitHubSimulator]:
    """Factory: ``new_sim(prefix=..., repository_links=...)`` → a simulator with the two test
    tokens and a fixed clock (the caller starts/stops it, e.g. ``with new_sim() as sim``)."""
    return make_sim


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    with make_sim() as s:
        yield s


@pytest.fixture
def client() -> Callable[..., Client]:
    """Factory: ``client(sim, token=APP_TOKEN)``."""
    return Client


@pytest.fixture
def gh(sim: GitHubSimulator) -> Client:
    return Client(sim)
