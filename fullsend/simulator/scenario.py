"""Scenarios for ``fullsend simulator serve``: the FIX setup plus a scripted timeline.

A scenario is a YAML (or JSON) mapping; every key is optional::

    repository: org/repo           # owner/name the simulator serves
    pull_request: 7                # the work item (a pull request) ...
    head: aaa111                   # ... and its head sha
    title: Add the orders migration
    run_id: 33740015232            # the run in flight (GITHUB_RUN_ID of the stage job)
    run_created_s_ago: 60          # its created_at, relative to the simulator's start
    collaborators:                 # GET /repos/{o}/{r}/collaborators/{login}/permission
      reviewer: write              #   (the Route job: fullsend route); unlisted logins: none
    timeline:
      - on_request: GET /actions/workflows/fullsend\\.yml/runs    # first matching request
        do: comment-follow-up      # a comment and the shim run it starts
        login: reviewer
        body: /fs-review please re-check the migration
        comment_id: 4000000100     # optional fixed ids (so an event file can name them)
        run_id: 33740015300
      - after_s: 20                # seconds after the simulator starts
        do: push-follow-up         # the head moves and the shim runs for the push
        sha: bbb222
        files: [db/migrate.sql]

``review-comment`` and ``thread-follow-up`` play a pull request's review threads
(``fullsend.simulator.scenario_threads``).  The setup is the standard scenario (``fullsend.simulator.fixtures``):
the run in flight from ``.github/workflows/fullsend.yml`` with its jobs ``dispatch / Route``
(success) and ``dispatch / Review`` (in progress), and the job and role tokens.  A timeline
entry has exactly one trigger (``on_request: "METHOD PATH-REGEX"``, searched in the API path,
or ``after_s``) and one action (``do``).  Errors are ``ConfigError`` naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from fullsend.core.scalars import format_time
from fullsend.errors import ConfigError
from fullsend.simulator.fixtures import FIX_HEAD, FIX_RUN_ID, StandardScenario, add_follow_up_run, standard_pr_scenario
from fullsend.simulator.scenario_threads import (
    THREAD_ACTIONS,
    THREAD_KEYS,
    check_replies,
    check_thread_params,
    thread_action,
)
from fullsend.simulator.server import GitHubSimulator

ACTIONS = ("comment-follow-up", "push-follow-up", *THREAD_ACTIONS)
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
_TOP_KEYS = ("repository", "pull_request", "head", "title", "run_id", "run_created_s_ago", "collaborators", "timeline")
_ENTRY_KEYS = {
    "comment-follow-up": ("login", "body", "comment_id", "run_id", "route"),
    "push-follow-up": ("login", "sha", "files", "run_id", "route"),
    **THREAD_KEYS,
}
_REQUEST = re.compile(r"(?P<method>GET|POST|PATCH|PUT|DELETE)\s+(?P<path>\S.*)")
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")

Say = Callable[[str], None]


@dataclass(frozen=True)
class TimelineEntry:
    """One scripted event: a trigger (``method`` + ``path_regex`` of the first matching request,
    or ``after_s`` seconds after start) and an action ``do`` with its ``params``."""

    do: str
    params: Mapping[str, Any]
    method: str = ""
    path_regex: str = ""
    after_s: float | None = None


@dataclass(frozen=True)
class Scenario:
    """A whole scenario (defaults: FIX with ``reviewer`` and ``author`` as writers, no timeline)."""

    owner: str = "org"
    repo: str = "repo"
    pull_request: int = 7
    head: str = FIX_HEAD
    title: str = "Add the orders migration"
    run_id: int = FIX_RUN_ID
    run_created_s_ago: float = 60.0
    collaborators: Mapping[str, str] = field(default_factory=lambda: {"reviewer": "write", "author": "write"})
    timeline: tuple[TimelineEntry, ...] = ()


def load_scenario(path: Path) -> Scenario:
    """Read and check a scenario file; raises ``ConfigError`` naming the file and the key."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"scenario {path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"scenario {path}: cannot be read (the file is not UTF-8 text)") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"scenario {path}: not valid YAML or JSON{_yaml_where(exc)}; "
            "compare it with examples/scenarios/review-steer.yml"
        ) from None
    try:
        return parse_scenario(data if data is not None else {})
    except ConfigError as exc:
        raise ConfigError(f"scenario {path}: {exc}") from None


def _yaml_where(exc: yaml.YAMLError) -> str:
    """`` at line L, column C: <problem>`` from a YAML error, on one line ("" when unknown)."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(str(getattr(exc, "problem", "") or "").split())
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return where + (f": {problem}" if problem else "")


def parse_scenario(data: object) -> Scenario:
    """A ``Scenario`` from the loaded mapping; raises ``ConfigError`` for an unknown key or a bad value."""
    top = _mapping(data, "the scenario", _TOP_KEYS)
    owner, repo = _repository(top.get("repository", "org/repo"))
    defaults = Scenario()
    timeline = tuple(_entry(e, i) for i, e in enumerate(_list(top.get("timeline", []), "timeline")))
    check_replies(timeline)
    return Scenario(
        owner=owner,
        repo=repo,
        pull_request=_positive_int(top.get("pull_request", defaults.pull_request), "pull_request"),
        head=_text(top.get("head", defaults.head), "head"),
        title=_text(top.get("title", defaults.title), "title"),
        run_id=_positive_int(top.get("run_id", defaults.run_id), "run_id"),
        run_created_s_ago=_seconds(top.get("run_created_s_ago", defaults.run_created_s_ago), "run_created_s_ago"),
        collaborators=_collaborators(top.get("collaborators", defaults.collaborators)),
        timeline=timeline,
    )


def _entry(raw: object, index: int) -> TimelineEntry:
    where = f"timeline[{index}]"
    kind = raw.get("do") if isinstance(raw, dict) else None
    if kind not in ACTIONS:
        raise ConfigError(f"{where}.do must be one of {', '.join(ACTIONS)}")
    entry = _mapping(raw, where, ("do", "on_request", "after_s", *_ENTRY_KEYS[kind]))
    if ("on_request" in entry) == ("after_s" in entry):
        raise ConfigError(f"{where} needs exactly one trigger: on_request or after_s")
    params = {k: v for k, v in entry.items() if k in _ENTRY_KEYS[kind]}
    _check_params(kind, params, where)
    if "after_s" in entry:
        return TimelineEntry(kind, params, after_s=_seconds(entry["after_s"], f"{where}.after_s"))
    match = _REQUEST.fullmatch(str(entry["on_request"]).strip())
    if match is None:
        raise ConfigError(
            f"{where}.on_request must read 'METHOD PATH-REGEX', e.g. 'GET /actions/workflows/fullsend\\.yml/runs'"
        )
    try:
        re.compile(match["path"])
    except re.error as exc:
        raise ConfigError(f"{where}.on_request: the path is not a regular expression ({exc})") from None
    return TimelineEntry(kind, params, method=match["method"], path_regex=match["path"])


def _check_params(kind: str, params: dict[str, Any], where: str) -> None:
    required = "sha" if kind == "push-follow-up" else "body"
    if not isinstance(params.get(required), str) or not params[required].strip():
        raise ConfigError(f"{where}.{required} is required (a non-empty string)")
    if not _NAME.fullmatch(str(params.get("login", "reviewer")).removesuffix("[bot]")):
        raise ConfigError(f"{where}.login must be a GitHub login (an App's ends in [bot])")
    for key in ("comment_id", "run_id"):
        if key in params:
            params[key] = _positive_int(params[key], f"{where}.{key}")
    if kind in THREAD_ACTIONS:
        check_thread_params(params, where)
    if "files" in params and not all(isinstance(f, str) and f for f in _list(params["files"], f"{where}.files")):
        raise ConfigError(f"{where}.files must be a list of file names")
    if params.get("route", "success") not in ("success", "failure", "cancelled", "skipped", "queued", "in_progress"):
        raise ConfigError(f"{where}.route must be a Route job conclusion (success, failure, …) or queued/in_progress")


# ------------------------------------------------------------------------------------ playing it
def build(sim: GitHubSimulator, scenario: Scenario, now: datetime, say: Say) -> StandardScenario:
    """Lay the FIX setup into ``sim`` (my run created ``run_created_s_ago`` before ``now``) and
    arm the timeline; ``say`` receives one line per timeline event.  Returns the
    ``StandardScenario`` (ids, tokens, logins)."""
    created = format_time(now.astimezone(UTC) - timedelta(seconds=scenario.run_created_s_ago))
    fix = standard_pr_scenario(
        sim,
        pr=scenario.pull_request,
        my_run_id=scenario.run_id,
        head=scenario.head,
        title=scenario.title,
        created_at=created,
    )
    for entry in scenario.timeline:
        action = _action(entry, scenario, say)
        if entry.after_s is not None:
            sim.at(entry.after_s, action)
        else:
            sim.on_request(sim.match(entry.method, entry.path_regex), action)
    return fix


def _action(entry: TimelineEntry, scenario: Scenario, say: Say) -> Callable[[GitHubSimulator], None]:
    p, pr = entry.params, scenario.pull_request
    if entry.do in THREAD_ACTIONS:
        return thread_action(entry.do, p, pr, say)
    login, route = str(p.get("login", "reviewer")), str(p.get("route", "success"))

    def comment_follow_up(sim: GitHubSimulator) -> None:
        extra = {"id": p["comment_id"]} if "comment_id" in p else {}
        comment = sim.add_comment(pr, p["body"], login, **extra)
        run = add_follow_up_run(sim, comment_id=comment["id"], pr=pr, actor=login, route=route, run_id=p.get("run_id"))
        say(
            f"@{login} commented {p['body']!r} on #{pr} (comment {comment['id']}); "
            f"the shim started follow-up run {run['id']} ({run['display_title']})"
        )

    def push_follow_up(sim: GitHubSimulator) -> None:
        sim.move_head(pr, p["sha"], files=[{"filename": f} for f in p.get("files", ["README.md"])])
        run = add_follow_up_run(
            sim,
            event="pull_request_target",
            pull_requests=(pr,),
            pr=pr,
            actor=login,
            route=route,
            run_id=p.get("run_id"),
            head_sha=p["sha"],
        )
        say(f"@{login} pushed {p['sha']} to #{pr}; the shim started follow-up run {run['id']} ({run['display_title']})")

    return comment_follow_up if entry.do == "comment-follow-up" else push_follow_up


# ------------------------------------------------------------------------------------ checks
def _mapping(data: object, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping")
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(allowed)})")
    return data


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list")
    return value


def _repository(value: object) -> tuple[str, str]:
    owner, sep, repo = str(value).partition("/")
    if not sep or not _NAME.fullmatch(owner) or not _NAME.fullmatch(repo):
        raise ConfigError("repository must read owner/name, e.g. org/repo")
    return owner, repo


def _positive_int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where} must be a positive whole number")
    return value


def _seconds(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"{where} must be a number of seconds (0 or more)")
    return float(value)


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string")
    return value


def _collaborators(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError("collaborators must map logins to roles")
    for login, role in value.items():
        if not _NAME.fullmatch(str(login)) or role not in ROLES:
            raise ConfigError(f"collaborators.{login} must be one of {', '.join(ROLES)}")
    return {str(k): str(v) for k, v in value.items()}
