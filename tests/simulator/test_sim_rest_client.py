"""The adapter's REST transport reads the simulator under a GHES prefix (``/api/v3``): Link
pages followed as absolute URLs under the base's own path, no hidden requests, conditional
requests answered 304 from the cache, one POST per comment (docs/architecture.md "GitHub
access")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fullsend.adapters.github.transport import Transport, next_link
from fullsend.simulator.fixtures import add_follow_up_run, standard_pr_scenario

T0 = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)


class _Clock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return 0.0

    def sleep(self, seconds: float) -> bool:
        raise AssertionError(f"no wait expected, asked {seconds} s")


def _transport(sim: Any, token: str) -> Transport:
    return Transport(sim.api_url, token, _Clock(), timeout_s=5)


def test_the_transport_pages_runs_and_reads_a_run_under_api_v3(new_sim: Any) -> None:
    with new_sim(prefix="/api/v3", repository_links=True) as sim:
        fix = standard_pr_scenario(sim)
        for i in range(250):
            add_follow_up_run(sim, pull_requests=(7,), created_at=T0 + timedelta(seconds=i + 1))
        rest = _transport(sim, fix.job_token)
        url, params, runs = "/repos/org/repo/actions/runs", {"created": ">=2026-09-03T10:00:00Z", "per_page": 100}, []
        while url:
            resp = rest.request("GET", url, params)
            runs += resp.data["workflow_runs"]
            url, params = next_link(resp.headers), {}
            assert not url or url.startswith(sim.api_url + "/repositories/")  # absolute, under /api/v3
        assert len(runs) == 251 and len({r["id"] for r in runs}) == 251
        assert sim.request_count("GET", r"/runs$") == 3  # three Link pages, no hidden completion GETs
        assert all(r.raw_path.startswith("/api/v3/") for r in sim.requests)
        run = rest.request("GET", f"/repos/org/repo/actions/runs/{fix.my_run_id}").data
        assert (run["display_title"], run["run_attempt"], run["path"]) == (
            "org/repo#7",
            1,
            ".github/workflows/fullsend.yml",
        )
        jobs = rest.request("GET", run["jobs_url"]).data["jobs"]  # a followed absolute url
        assert [j["name"] for j in jobs] == ["dispatch / Route", "dispatch / Review"]


def test_the_transport_gets_a_304_and_posts_one_comment(new_sim: Any) -> None:
    with new_sim(prefix="/api/v3") as sim:
        fix = standard_pr_scenario(sim)
        rest = _transport(sim, fix.role_token)
        path = "/repos/org/repo/issues/7/comments"
        first = rest.request("GET", path, conditional=True)
        again = rest.request("GET", path, conditional=True)
        assert [r.status for r in sim.requests[-2:]] == [200, 304]
        assert sim.requests[-1].headers["if-none-match"] == first.headers["etag"]
        assert again.data == first.data  # the cached body, answered from the 304
        comment = rest.request("POST", path, body={"body": "hello"}).data
        assert comment["user"]["login"] == "fullsend-ai-review[bot]"
        assert sim.request_count("POST") == 1
