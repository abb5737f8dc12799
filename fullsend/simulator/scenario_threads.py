"""Scenario actions in a pull request's review threads, for ``fullsend simulator serve --scenario``
(the format is in ``fullsend.simulator.scenario``; docs/architecture.md "Amendments and context")::

    timeline:
      - on_request: GET /actions/workflows/fullsend\\.yml/runs
        do: review-comment          # a comment in a review thread, no shim run (a bot's finding)
        login: coderabbitai[bot]
        body: lookup may return None
        path: src/db.py             # the file and line of the pull request's diff it sits on
        line: 88
        comment_id: 1400000100
      - on_request: GET /actions/workflows/fullsend\\.yml/runs
        do: thread-follow-up        # a review comment and the shim run its event starts
        login: reviewer
        body: /fs-review also cover the None that db.lookup returns
        in_reply_to: 1400000100     # a reply: the thread's path and line are the first comment's
        comment_id: 1400000101
        run_id: 33740015300

``thread-follow-up``'s run is a ``pull_request_review_comment`` run titled
``<owner>/<repo>#<pr> review_comment:<id>`` (docs/adopting.md "The run-name contract").
``in_reply_to`` names the ``comment_id`` of a thread entry listed before it (entries with the
same trigger play in the order listed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from fullsend.errors import ConfigError
from fullsend.simulator.fixtures import add_follow_up_run
from fullsend.simulator.server import GitHubSimulator

THREAD_ACTIONS = ("review-comment", "thread-follow-up")
_COMMENT_KEYS = ("login", "body", "path", "line", "in_reply_to", "comment_id")
THREAD_KEYS: Mapping[str, tuple[str, ...]] = {
    "review-comment": _COMMENT_KEYS,
    "thread-follow-up": (*_COMMENT_KEYS, "run_id", "route"),
}
DEFAULT_PATH, DEFAULT_LINE = "src/app.py", 12


class _Entry(Protocol):
    @property
    def do(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...


def check_thread_params(params: dict[str, Any], where: str) -> None:
    """``path`` a relative file name, ``line`` and ``in_reply_to`` positive whole numbers."""
    path = params.get("path", DEFAULT_PATH)
    if not isinstance(path, str) or not path.strip() or path.startswith("/"):
        raise ConfigError(f"{where}.path must be a file of the pull request, e.g. src/db.py")
    for key in ("line", "in_reply_to"):
        value = params.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where}.{key} must be a positive whole number")


def check_replies(timeline: Sequence[_Entry]) -> None:
    """Every ``in_reply_to`` names the ``comment_id`` of a thread entry listed before it."""
    known: set[int] = set()
    for index, entry in enumerate(timeline):
        if entry.do not in THREAD_ACTIONS:
            continue
        answered = entry.params.get("in_reply_to")
        if answered is not None and answered not in known:
            raise ConfigError(
                f"timeline[{index}].in_reply_to must be the comment_id of a review-comment or "
                "thread-follow-up entry listed before it"
            )
        if "comment_id" in entry.params:
            known.add(int(entry.params["comment_id"]))


def thread_action(
    kind: str, p: Mapping[str, Any], pr: int, say: Callable[[str], None]
) -> Callable[[GitHubSimulator], None]:
    """The timeline action of a ``review-comment`` or ``thread-follow-up`` entry."""
    login, route = str(p.get("login", "reviewer")), str(p.get("route", "success"))

    def play(sim: GitHubSimulator) -> None:
        extra = {"id": p["comment_id"]} if "comment_id" in p else {}
        path, line = str(p.get("path", DEFAULT_PATH)), int(p.get("line", DEFAULT_LINE))
        comment = sim.add_thread_comment(pr, p["body"], login, path, line, int(p.get("in_reply_to", 0)), **extra)
        did = "replied" if "in_reply_to" in p else "commented"
        said = (
            f"@{login} {did} {p['body']!r} on #{pr} at {comment['path']}, line {comment['line']} "
            f"(review comment {comment['id']})"
        )
        if kind == "thread-follow-up":
            title = f"{sim.urls.owner}/{sim.urls.repo}#{pr} review_comment:{comment['id']}"
            run = add_follow_up_run(
                sim,
                event="pull_request_review_comment",
                title=title,
                pr=pr,
                actor=login,
                route=route,
                run_id=p.get("run_id"),
            )
            said += f"; the shim started follow-up run {run['id']} ({run['display_title']})"
        say(said)

    return play
