"""JSON shapes the GitHub simulator shares between records: URLs, users, repositories, commits.

Every builder returns a plain ``dict`` shaped like GitHub's REST answer (the schemas of
``@octokit/openapi``, trimmed in ``tests/data/openapi/github-rest-trimmed.json``).  Every URL is
written with the simulator's own host, port and prefix: API URLs
under ``Urls.api``, web URLs (``html_url``, avatars) under ``Urls.web`` — the server root, as on
GHES where the API lives under ``/api/v3`` and the web pages at ``/``.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# The Actions app's real account id.
_KNOWN_USER_IDS = {"github-actions[bot]": 41898282}
_BOT_SUFFIX = "[bot]"
_IMMUTABLE = (str, int, float, bool, type(None))


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON-shaped ``value`` (dicts, lists, strings, numbers, booleans, ``None``).

    The simulator answers every read with a copy of its records; ``copy.deepcopy``'s memo and
    dispatch made those copies a sixth of the receipt promise's CPU (docs/contributing.md
    "Test tiers").  Any other type (a tuple, a set) is handed to ``copy.deepcopy``.
    """
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


@dataclass(frozen=True)
class Urls:
    """Base URLs of one simulator: ``api`` (with prefix) and ``web`` (server root), no trailing ``/``.

    ``link_base`` is where Link headers point: ``…/repos/{o}/{r}`` or, with
    ``repository_links``, GitHub's ``…/repositories/{id}`` form.
    """

    api: str
    web: str
    owner: str
    repo: str
    repo_id: int
    repository_links: bool = False

    @property
    def repo_api(self) -> str:
        return f"{self.api}/repos/{self.owner}/{self.repo}"

    @property
    def repo_web(self) -> str:
        return f"{self.web}/{self.owner}/{self.repo}"

    @property
    def link_base(self) -> str:
        return f"{self.api}/repositories/{self.repo_id}" if self.repository_links else self.repo_api


def format_ts(value: datetime | str | None) -> str | None:
    """RFC 3339 ``YYYY-MM-DDTHH:MM:SSZ`` for a datetime (naive = UTC); strings pass verbatim."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_sha(*parts: object) -> str:
    """A deterministic 40-hex commit-like sha derived from ``parts``."""
    return hashlib.sha1("\x00".join(map(str, parts)).encode()).hexdigest()


def stable_id(*parts: object, digits: int = 8) -> int:
    """A deterministic positive integer id of ``digits`` decimal digits derived from ``parts``."""
    low = 10 ** (digits - 1)
    return low + int(fake_sha(*parts)[:12], 16) % (9 * low)


def node_id(kind: str, number: int) -> str:
    """A GraphQL-style node id such as ``WFR_kwDOAB12`` (opaque; only its presence matters)."""
    return f"{kind}_kwDO{number:X}"


def rest_login(login: str, is_bot: bool) -> str:
    """The REST spelling of a login: Apps carry the ``[bot]`` suffix."""
    if is_bot and not login.lower().endswith(_BOT_SUFFIX):
        return login + _BOT_SUFFIX
    return login


def user_json(urls: Urls, login: str, user_type: str = "User") -> dict[str, Any]:
    """A ``simple-user`` object; ``user_type`` is ``User``, ``Bot`` or ``Organization``."""
    uid = _KNOWN_USER_IDS.get(login.lower(), stable_id("user", login.lower()))
    api = f"{urls.api}/users/{login}"
    slug = login[: -len(_BOT_SUFFIX)] if login.lower().endswith(_BOT_SUFFIX) else login
    html = f"{urls.web}/apps/{slug}" if user_type == "Bot" else f"{urls.web}/{login}"
    return {
        "login": login,
        "id": uid,
        "node_id": node_id("U" if user_type != "Bot" else "BOT", uid),
        "avatar_url": f"{urls.web}/avatars/u/{uid}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": html,
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": user_type,
        "user_view_type": "public",
        "site_admin": False,
    }


def public_user_json(urls: Urls, login: str, created_at: str) -> dict[str, Any]:
    """A ``public-user`` object (``GET /user`` for a ``User`` token)."""
    extra = {
        "name": login,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "twitter_username": None,
        "public_repos": 1,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": created_at,
        "updated_at": created_at,
    }
    return {**user_json(urls, login, "User"), **extra}


_REPO_URL_SUFFIXES = {
    "archive_url": "/{archive_format}{/ref}",
    "assignees_url": "/assignees{/user}",
    "blobs_url": "/git/blobs{/sha}",
    "branches_url": "/branches{/branch}",
    "collaborators_url": "/collaborators{/collaborator}",
    "comments_url": "/comments{/number}",
    "commits_url": "/commits{/sha}",
    "compare_url": "/compare/{base}...{head}",
    "contents_url": "/contents/{+path}",
    "contributors_url": "/contributors",
    "deployments_url": "/deployments",
    "downloads_url": "/downloads",
    "events_url": "/events",
    "forks_url": "/forks",
    "git_commits_url": "/git/commits{/sha}",
    "git_refs_url": "/git/refs{/sha}",
    "git_tags_url": "/git/tags{/sha}",
    "hooks_url": "/hooks",
    "issue_comment_url": "/issues/comments{/number}",
    "issue_events_url": "/issues/events{/number}",
    "issues_url": "/issues{/number}",
    "keys_url": "/keys{/key_id}",
    "labels_url": "/labels{/name}",
    "languages_url": "/languages",
    "merges_url": "/merges",
    "milestones_url": "/milestones{/number}",
    "notifications_url": "/notifications{?since,all,participating}",
    "pulls_url": "/pulls{/number}",
    "releases_url": "/releases{/id}",
    "stargazers_url": "/stargazers",
    "statuses_url": "/statuses/{sha}",
    "subscribers_url": "/subscribers",
    "subscription_url": "/subscription",
    "tags_url": "/tags",
    "teams_url": "/teams",
    "trees_url": "/git/trees{/sha}",
}


def minimal_repo_json(urls: Urls) -> dict[str, Any]:
    """A ``minimal-repository`` object for the simulator's repository (owner is an Organization)."""
    repo = {
        "id": urls.repo_id,
        "node_id": node_id("R", urls.repo_id),
        "name": urls.repo,
        "full_name": f"{urls.owner}/{urls.repo}",
        "private": True,
        "owner": user_json(urls, urls.owner, "Organization"),
        "html_url": urls.repo_web,
        "description": None,
        "fork": False,
        "url": urls.repo_api,
    }
    repo.update({key: urls.repo_api + suffix for key, suffix in _REPO_URL_SUFFIXES.items()})
    return repo


def full_repo_json(urls: Urls, created_at: str) -> dict[str, Any]:
    """A ``repository`` object (``GET /repos/{o}/{r}``, and a pull request's ``head.repo``/``base.repo``)."""
    host = urls.web.split("://", 1)[-1]
    extra: dict[str, Any] = {
        "clone_url": f"{urls.repo_web}.git",
        "git_url": f"git://{host}/{urls.owner}/{urls.repo}.git",
        "ssh_url": f"git@{host.split(':')[0]}:{urls.owner}/{urls.repo}.git",
        "svn_url": urls.repo_web,
        "mirror_url": None,
        "homepage": None,
        "language": "Python",
        "default_branch": "main",
        "forks": 0,
        "forks_count": 0,
        "stargazers_count": 0,
        "watchers": 0,
        "watchers_count": 0,
        "open_issues": 0,
        "open_issues_count": 0,
        "size": 108,
        "has_downloads": True,
        "has_issues": True,
        "has_projects": False,
        "has_wiki": False,
        "has_pages": False,
        "has_discussions": False,
        "topics": [],
        "archived": False,
        "disabled": False,
        "license": None,
        "visibility": "private",
        "pushed_at": created_at,
        "created_at": created_at,
        "updated_at": created_at,
    }
    return {**minimal_repo_json(urls), **extra}


def label_json(urls: Urls, name: str) -> dict[str, Any]:
    """A ``label`` object with a stable id and colour derived from its name."""
    lid = stable_id("label", name, digits=10)
    return {
        "id": lid,
        "node_id": node_id("LA", lid),
        "url": f"{urls.repo_api}/labels/{name}",
        "name": name,
        "description": None,
        "color": fake_sha("color", name)[:6],
        "default": False,
    }
