"""A comment's edit history as GitHub's GraphQL serves it (``userContentEdits``: newest first,
each version's whole body in ``diff`` and when it was written in ``editedAt``, the created version
included once the body was edited), stamped by the simulator's clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fullsend.adapters.github.graphql import RECEIPT_VIEW_QUERY
from tests.simulator.conftest import APP_TOKEN, USER_TOKEN, Client, make_sim
from tests.support.status_versions import EDITS_QUERY, Version, comment_versions

T0 = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)


def _nodes(gh: Client, query: str) -> list[dict[str, Any]]:
    variables = {"owner": "org", "name": "repo", "number": 7}
    answer = gh.session.post(gh.sim.graphql_url, json={"query": query, "variables": variables}, timeout=10).json()
    return answer["data"]["repository"]["issueOrPullRequest"]["comments"]["nodes"]


def test_each_edit_is_kept_with_the_simulators_clock_newest_first_after_the_created_version():
    now = [T0]
    with make_sim(clock=lambda: now[0]) as sim:
        sim.add_pull_request(7, "aaa111")
        edited = sim.add_comment(7, "v1", "fullsend-ai-review[bot]")
        untouched = sim.add_comment(7, "left alone", "alice")
        gh = Client(sim, APP_TOKEN)
        for seconds, body in ((12, "v2"), (25, "v3")):
            now[0] = T0 + timedelta(seconds=seconds)
            assert gh.patch(f"/repos/org/repo/issues/comments/{edited['id']}", json={"body": body}).status_code == 200
        first, second = _nodes(Client(sim, USER_TOKEN), EDITS_QUERY)
        assert first["includesCreatedEdit"] is True and second["includesCreatedEdit"] is False
        assert first["userContentEdits"]["totalCount"] == 3 and second["userContentEdits"]["nodes"] == []
        assert [(n["editedAt"], n["diff"]) for n in first["userContentEdits"]["nodes"]] == [
            ("2026-09-03T10:00:25Z", "v3"),
            ("2026-09-03T10:00:12Z", "v2"),
            ("2026-09-03T10:00:00Z", "v1"),
        ]
        assert comment_versions(sim.graphql_url, USER_TOKEN, 7, edited["id"]) == [
            Version(T0, "v1"),
            Version(T0 + timedelta(seconds=12), "v2"),
            Version(T0 + timedelta(seconds=25), "v3"),
        ]
        assert comment_versions(sim.graphql_url, USER_TOKEN, 7, untouched["id"]) == []
        # a query that does not name the history (the receipt view) gets none
        assert all("userContentEdits" not in n for n in _nodes(gh, RECEIPT_VIEW_QUERY))
