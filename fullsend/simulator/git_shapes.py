"""JSON shapes of commits, diff entries and pull requests, as GitHub's REST answers them (the
schemas of ``@octokit/openapi``); the shared pieces (URLs, users, ids) are in
``fullsend.simulator.shapes``."""

from __future__ import annotations

from typing import Any

from fullsend.simulator.shapes import Urls, fake_sha, full_repo_json, json_copy, node_id, stable_id


def simple_commit_json(sha: str, message: str, timestamp: str) -> dict[str, Any]:
    """A ``simple-commit`` (a workflow run's ``head_commit``)."""
    person = {"name": "Octo Cat", "email": "octocat@example.com"}
    return {
        "id": sha,
        "tree_id": fake_sha("tree", sha),
        "message": message,
        "timestamp": timestamp,
        "author": dict(person),
        "committer": dict(person),
    }


def commit_json(urls: Urls, sha: str, parent: str, message: str, date: str) -> dict[str, Any]:
    """A ``commit`` object (items of a comparison's ``commits`` and its base commits)."""
    person = {"name": "Octo Cat", "email": "octocat@example.com", "date": date}
    tree = fake_sha("tree", sha)
    return {
        "url": f"{urls.repo_api}/commits/{sha}",
        "sha": sha,
        "node_id": node_id("C", stable_id(sha)),
        "html_url": f"{urls.repo_web}/commit/{sha}",
        "comments_url": f"{urls.repo_api}/commits/{sha}/comments",
        "commit": {
            "url": f"{urls.repo_api}/git/commits/{sha}",
            "author": dict(person),
            "committer": dict(person),
            "message": message,
            "comment_count": 0,
            "tree": {"sha": tree, "url": f"{urls.repo_api}/git/trees/{tree}"},
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "payload": None,
                "signature": None,
                "verified_at": None,
            },
        },
        "author": None,
        "committer": None,
        "parents": [
            {"sha": parent, "url": f"{urls.repo_api}/commits/{parent}", "html_url": f"{urls.repo_web}/commit/{parent}"}
        ],
    }


def diff_entry_json(urls: Urls, head: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A ``diff-entry`` from a partial dict (``filename`` required; ``patch`` omitted stays omitted,
    as GitHub does for binary and oversized files)."""
    name = str(entry["filename"])
    adds, dels = int(entry.get("additions", 0)), int(entry.get("deletions", 0))
    out: dict[str, Any] = {
        "sha": fake_sha("blob", head, name),
        "filename": name,
        "status": "modified",
        "additions": adds,
        "deletions": dels,
        "changes": adds + dels,
        "blob_url": f"{urls.repo_web}/blob/{head}/{name}",
        "raw_url": f"{urls.repo_web}/raw/{head}/{name}",
        "contents_url": f"{urls.repo_api}/contents/{name}?ref={head}",
    }
    out.update(entry)
    return out


_PR_FROM_ISSUE = (
    "id",
    "node_id",
    "number",
    "state",
    "locked",
    "title",
    "user",
    "body",
    "labels",
    "milestone",
    "active_lock_reason",
    "created_at",
    "updated_at",
    "closed_at",
    "assignee",
    "assignees",
    "author_association",
    "comments",
)


#: The fields of an open, unmerged, mergeable pull request with one commit and no review comment.
_PR_OPEN_UNMERGED: dict[str, Any] = {
    "merged_at": None,
    "merge_commit_sha": None,
    "requested_reviewers": [],
    "requested_teams": [],
    "auto_merge": None,
    "merged": False,
    "mergeable": True,
    "rebaseable": True,
    "mergeable_state": "clean",
    "merged_by": None,
    "review_comments": 0,
    "maintainer_can_modify": False,
    "commits": 1,
    "additions": 0,
    "deletions": 0,
    "changed_files": 0,
}


def pull_request_json(
    urls: Urls,
    issue: dict[str, Any],
    owner: dict[str, Any],
    head: tuple[str, str],
    base: tuple[str, str],
    draft: bool = False,
) -> dict[str, Any]:
    """A ``pull-request`` object built on its ``issue`` record; ``head``/``base`` are ``(ref, sha)``
    and ``owner`` is the ``simple-user`` both sides belong to."""
    n = issue["number"]
    url, web = f"{urls.repo_api}/pulls/{n}", f"{urls.repo_web}/pull/{n}"
    repo = full_repo_json(urls, issue["created_at"])

    def side(ref: str, sha: str) -> dict[str, Any]:
        return {
            "label": f"{urls.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": json_copy(owner),
            "repo": json_copy(repo),
        }

    links = {
        "self": url,
        "html": web,
        "issue": issue["url"],
        "comments": issue["comments_url"],
        "review_comments": f"{url}/comments",
        "review_comment": f"{urls.repo_api}/pulls/comments{{/number}}",
        "commits": f"{url}/commits",
        "statuses": f"{urls.repo_api}/statuses/{head[1]}",
    }
    return {
        **{k: json_copy(issue[k]) for k in _PR_FROM_ISSUE},
        "url": url,
        "html_url": web,
        "diff_url": f"{web}.diff",
        "patch_url": f"{web}.patch",
        "issue_url": issue["url"],
        "commits_url": links["commits"],
        "review_comments_url": links["review_comments"],
        "review_comment_url": links["review_comment"],
        "comments_url": issue["comments_url"],
        "statuses_url": links["statuses"],
        **json_copy(_PR_OPEN_UNMERGED),
        "head": side(*head),
        "base": side(*base),
        "_links": {k: {"href": v} for k, v in links.items()},
        "draft": draft,
    }
