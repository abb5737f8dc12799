"""``fullsend route``: the Route job (docs/rules.md, family Route; docs/architecture.md "Shim and
dispatch workflow").

Reads the event (``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``), asks
GitHub for the one role the decision needs (``fullsend.core.route.decision``) through the GitHub
adapter under the job token, prints the decision with its rule id, and writes the step outputs
``stage`` ("" for none), ``rule`` and ``reason`` to ``GITHUB_OUTPUT`` (delimiter syntax, a random
delimiter per value).  An event it does not route is a decision too: exit 0, ``stage`` empty,
so the Route job concludes success and every stage job is skipped.

The repository's policy (``fullsend.core.route.policy``): ``INPUT_STAGES``, ``INPUT_ALLOWED_USERS``,
``INPUT_ALLOWED_BOTS``, ``INPUT_TRIGGER_PHRASE``, ``INPUT_LABEL_TRIGGERS``,
``INPUT_ASSIGNEE_TRIGGERS``, ``INPUT_REVIEW_APP`` and ``INPUT_MAX_FIX_ROUNDS``, the action's inputs of those
names (blank: the decision as without them; docs/rules.md, family Route).  For a selected fix it also
reads the pull request's reviews (a review's fix is bounded in rounds) and, when the event does not
name it, the pull request (its head branch, the output ``head_ref``).

Token: ``INPUT_GITHUB_TOKEN`` (the action's ``github_token``), else ``GITHUB_TOKEN``, else
``GH_TOKEN``.  API base: ``GITHUB_API_URL`` (default ``https://api.github.com``).
Exit codes: 0 decided · 2 the event or the environment cannot be read (names the variable) ·
1 the outputs cannot be written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console, write_outputs
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.outputs import ROUTE_OUTPUT_NAMES
from fullsend.context import api_url_problem
from fullsend.core.model import PullRequest, Repo, Review
from fullsend.core.route.decision import RULE_ROLE_UNREADABLE, AskRole, Role, RouteDecision, default_review_app
from fullsend.core.route.event import RouteEvent, route_event
from fullsend.core.route.policy import (
    RoutePolicy,
    decide_with,
    read_policy,
    screen_decision,
    screen_login,
    with_trigger_phrase,
)
from fullsend.core.route.rounds import FixHead, bound_fix, fix_head_decision, fix_rounds
from fullsend.errors import ConfigError, ExitCode, ForgeError, NotFoundError

DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARIABLES = ("INPUT_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
READ_TIMEOUT_S = 15
EVENT_MAX_BYTES = 25 << 20  # GitHub caps a webhook payload at 25 MB


class Roles(Protocol):
    """Where :func:`route` reads a login's ``role_name`` (``GitHubForge.collaborator_role``)."""

    def collaborator_role(self, login: str) -> str: ...


class Pulls(Protocol):
    """Where :func:`fix_facts` reads a pull request and its reviews (``GitHubForge``)."""

    def get_pull_request(self, number: int) -> PullRequest: ...

    def list_reviews(self, number: int) -> list[Review]: ...


def fix_facts(
    event: RouteEvent, decision: RouteDecision, pulls: Pulls, policy: RoutePolicy
) -> tuple[RouteDecision, str]:
    """``(decision, head branch)`` for a selected fix: bounded in rounds when a review started it
    (docs/rules.md#route-fix-rounds), refused when the head is a fork's or unreadable; any other
    decision as it is, with ``""``.  Reads at most the reviews and the pull request.  Never raises."""
    if decision.stage != "fix":
        return decision, ""
    if event.name == "pull_request_review":
        app = policy.review_app or default_review_app(event.owner)
        try:
            rounds: int | None = fix_rounds(pulls.list_reviews(event.number), app)
            why = ""
        except ForgeError as exc:
            rounds, why = None, str(exc)[:200]
        decision = bound_fix(decision, rounds, policy.max_fix_rounds, why)
        if not decision.stage:
            return decision, ""
    head = FixHead(event.pr_head_ref, event.pr_head_repo)
    if not head.branch:
        try:
            pr = pulls.get_pull_request(event.number)
            head = FixHead(pr.head_ref, pr.head_repository)
        except ForgeError as exc:
            head = FixHead(unreadable=str(exc)[:200])
    decision = fix_head_decision(decision, head, event.repository)
    return decision, head.branch if decision.stage else ""


def read_role(roles: Roles, login: str) -> Role:
    """``login``'s role: ``none`` on a 404 (no such collaborator or user), unreadable on any
    other failure (the decision then fails closed).  Never raises."""
    try:
        return Role(login, roles.collaborator_role(login))
    except NotFoundError:
        return Role(login, "none")
    except ForgeError as exc:
        return Role(login, "none", unreadable=str(exc)[:200])


def policy_of(environ: Mapping[str, str]) -> RoutePolicy:
    """The Route step's policy inputs.  Raises ``ConfigError`` naming the input and the fix."""
    names = (
        "stages",
        "allowed_users",
        "allowed_bots",
        "trigger_phrase",
        "label_triggers",
        "assignee_triggers",
        "review_app",
        "max_fix_rounds",
    )
    try:
        return read_policy({name: environ.get(f"INPUT_{name.upper()}", "") for name in names})
    except ValueError as exc:
        raise ConfigError(f"the Route step's input {exc}") from None


def route(event: RouteEvent, roles: Roles, policy: RoutePolicy | None = None) -> RouteDecision:
    """The decision for ``event`` under ``policy`` (``None``: no policy), reading at most one role
    from ``roles``; a user outside ``allowed_users`` or a disabled stage reads none."""
    policy = policy or RoutePolicy()
    event = with_trigger_phrase(event, policy.trigger_phrase)
    decision = decide_with(event, policy)
    if not isinstance(decision, AskRole):
        return screen_decision(event, decision, policy, role_read=False)
    refused = screen_login(decision.login, policy)
    if refused is not None:
        return refused
    if policy.enabled is not None:
        chosen = decide_with(event, policy, Role(decision.login, "admin"))  # which stage a full role would pick
        if isinstance(chosen, RouteDecision) and chosen.stage and chosen.stage not in policy.enabled:
            return screen_decision(event, chosen, policy, role_read=True)
    decision = decide_with(event, policy, read_role(roles, decision.login))
    if isinstance(decision, AskRole):  # decide asks for one role only; a second ask fails closed
        return RouteDecision("", RULE_ROLE_UNREADABLE, f"a second role (@{decision.login}) was asked for; no stage")
    return screen_decision(event, decision, policy, role_read=True)


def load_event(environ: Mapping[str, str]) -> RouteEvent:
    """The :class:`RouteEvent` of this job.  Raises ``ConfigError`` naming the variable and the fix."""
    name, path = environ.get("GITHUB_EVENT_NAME", ""), environ.get("GITHUB_EVENT_PATH", "")
    repository = environ.get("GITHUB_REPOSITORY", "")
    if not name or not path or "/" not in repository:
        missing = [
            k
            for k, v in (
                ("GITHUB_EVENT_NAME", name),
                ("GITHUB_EVENT_PATH", path),
                ("GITHUB_REPOSITORY", repository if "/" in repository else ""),
            )
            if not v
        ]
        raise ConfigError(
            f"{', '.join(missing)} not set (GITHUB_REPOSITORY as owner/name): fullsend route reads "
            "the event a workflow job receives; run it as a step of the Route job, or export them"
        )
    return route_event(name, _payload(path), repository)


def _payload(path: str) -> Mapping[str, Any]:
    try:
        raw = Path(path).read_bytes()[: EVENT_MAX_BYTES + 1]
    except OSError as exc:
        raise ConfigError(
            f"GITHUB_EVENT_PATH {path}: cannot be read ({exc.strerror}); give the event payload's JSON file"
        ) from None
    try:
        data = json.loads(raw) if len(raw) <= EVENT_MAX_BYTES else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ConfigError(
            f"GITHUB_EVENT_PATH {path}: not a JSON object of at most 25 MB; give the event payload's JSON file"
        )
    return data


def forge_for(environ: Mapping[str, str], repository: str) -> GitHubForge:
    """The GitHub adapter under the job token.  Raises ``ConfigError`` for a bad API URL."""
    api = environ.get("GITHUB_API_URL", "") or DEFAULT_API_URL
    problem = api_url_problem(api)
    if problem:
        raise ConfigError(problem)
    token = next((environ[k] for k in TOKEN_VARIABLES if environ.get(k, "").strip()), "")
    owner, _, name = repository.partition("/")
    return GitHubForge(
        Repo(owner, name),
        api.rstrip("/"),
        environ.get("GITHUB_GRAPHQL_URL", ""),
        token.strip(),
        "",
        SystemClock(),
        READ_TIMEOUT_S,
    )


def run_route(environ: Mapping[str, str], console: Console) -> int:
    """``fullsend route``: decide, print, write the outputs; returns the exit code.  Raises
    ``ConfigError`` (exit 2) for an unreadable event or environment."""
    event = load_event(environ)
    policy = policy_of(environ)
    forge = forge_for(environ, event.repository)
    decision, head_ref = fix_facts(event, route(event, forge, policy), forge, policy)
    console.log(f"Route: event {event.name}/{event.action} -> stage '{decision.stage or 'none'}'")
    console.log(f"Route: {decision.reason} [{decision.rule}]")
    try:
        write_outputs(
            environ.get("GITHUB_OUTPUT"),
            dict(
                zip(
                    ROUTE_OUTPUT_NAMES,
                    (decision.stage, decision.rule, f"{decision.reason} [{decision.rule}]", head_ref),
                    strict=True,
                )
            ),
        )
    except OSError as exc:
        console.error(
            f"GITHUB_OUTPUT {environ.get('GITHUB_OUTPUT')}: cannot be written ({exc.strerror}); "
            "the stage jobs would not see the decision",
            title="Route",
        )
        return ExitCode.FAILED
    return ExitCode.OK
