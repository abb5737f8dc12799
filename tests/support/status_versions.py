"""The status comments' versions, as GitHub's GraphQL ``userContentEdits`` lists them, and the
properties docs/architecture.md "Status comments" promises of them: each steer shown acknowledged
within one poll of its acknowledgement, every edit the run made to either of its comments spaced
by the configured interval from the one before (the closing one, the terminal status written in
place and the receipt link too), the receipt linked.  Read over HTTP from the simulator (in-process or
``fullsend simulator serve``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import requests

from fullsend.app.action.status.live_status import DONE_BELOW

#: GitHub's edit history of every comment of an issue or pull request (one page is enough here).
EDITS_QUERY = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issueOrPullRequest(number: $number) {
      ... on PullRequest { comments(first: 100) { nodes { fullDatabaseId
        userContentEdits(first: 100) { nodes { editedAt diff } } } } }
      ... on Issue { comments(first: 100) { nodes { fullDatabaseId
        userContentEdits(first: 100) { nodes { editedAt diff } } } } }
    }
  }
}"""
#: The log line the run writes when the agent acknowledges a steer (fullsend.app.action.agent.session).
ACK_LINE = re.compile(r"The agent acknowledged message (\d+) at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")


@dataclass(frozen=True)
class Version:
    """One version of a comment's body and when it was written (the forge's clock, to the second)."""

    at: datetime
    body: str


def comment_versions(graphql_url: str, token: str, number: int, comment_id: int) -> list[Version]:
    """Every version of comment ``comment_id`` on item ``number`` of ``org/repo``, oldest first
    (the first is the body it was created with); ``[]`` when it was never edited."""
    response = requests.post(
        graphql_url,
        json={"query": EDITS_QUERY, "variables": {"owner": "org", "name": "repo", "number": number}},
        headers={"Authorization": f"bearer {token}"},
        timeout=10,
    )
    response.raise_for_status()
    nodes = response.json()["data"]["repository"]["issueOrPullRequest"]["comments"]["nodes"]
    (node,) = [n for n in nodes if n["fullDatabaseId"] == str(comment_id)]
    edits = node["userContentEdits"]["nodes"]
    return [Version(_parse(e["editedAt"]), e["diff"]) for e in reversed(edits)]


def acknowledged_at(log: str) -> dict[int, datetime]:
    """When the run's log says the agent acknowledged each message: message id -> time."""
    return {int(m[1]): _parse(m[2]) for m in ACK_LINE.finditer(log)}


def check_live_versions(
    versions: list[Version], follow_up: int, acked: datetime, within_s: float, spacing_s: float
) -> None:
    """Assert what the start comment's versions show: the first version with steer ``follow_up``
    acknowledged was written no later than ``within_s`` after ``acked`` (plus one second: both
    stamps are whole seconds), and every edit (every version after the one it was created with),
    the closing "finished" one included, is at least ``spacing_s`` after the one before it; the
    closing edit, when there is one, is the last."""
    shown = [v for v in versions if re.search(rf"Steer \d+: follow-up run \[{follow_up}\]\(.* · acknowledged ", v.body)]
    assert shown, [v.body for v in versions]
    assert shown[0].at <= acked + timedelta(seconds=within_s + 1), (shown[0].at, acked, within_s)
    closing = [n for n, v in enumerate(versions) if DONE_BELOW in v.body]
    assert closing in ([], [len(versions) - 1]), closing
    edits = [v.at for v in versions[1:]]
    gaps = [(b - a).total_seconds() for a, b in pairwise(edits)]
    assert edits and all(gap >= spacing_s for gap in gaps), (gaps, spacing_s)


def check_run_edits(histories: list[list[Version]], spacing_s: float) -> list[datetime]:
    """Assert that the edits a run made to its comments (each comment's versions after the one it
    was created with, ``histories`` as :func:`comment_versions` gives them), merged in time order,
    are each at least ``spacing_s`` after the one before; returns their times, oldest first."""
    edits = sorted(v.at for versions in histories for v in versions[1:])
    gaps = [(b - a).total_seconds() for a, b in pairwise(edits)]
    assert all(gap >= spacing_s for gap in gaps), (gaps, spacing_s)
    return edits


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
