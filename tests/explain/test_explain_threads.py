"""``fullsend explain`` reads the review threads: its verdict on a ``review_comment:<id>`` run is
the watcher's (docs/architecture.md "Amendments and context").

One pull request, a bot's review-thread comment and two replies by ``reviewer``, each with the
``pull_request_review_comment`` run it fired (title ``org/repo#7 review_comment:<id>``); the
second reply was edited after its run was created, so the Route job never saw that text.
Explain, in process over HTTP against the simulator, judges the run in flight's follow-ups;
then the real watcher runs in process on the same simulator: the run explain binds is the run
the watcher consumes, and the run explain calls unbound is not consumed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.commands.explain.build import explain
from fullsend.app.commands.explain.read import ExplainReader
from fullsend.core.model import Repo
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_follow_up_run
from fullsend.simulator.server import GitHubSimulator
from tests.support.explain_command import READER_LOGIN, READER_TOKEN
from tests.support.fault_harness import new_scenario, run_in_process, runner_env


def _ago(seconds: int) -> str:
    return format_time(datetime.now(UTC) - timedelta(seconds=seconds))


def test_explain_binds_a_review_thread_run_as_the_watcher_consumes_it(tmp_path: Path) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        sim.update_issue(fix.pr, created_at=_ago(120))
        sim.add_token(READER_TOKEN, READER_LOGIN, "User")
        first = sim.add_thread_comment(fix.pr, "lookup may return None", "coderabbitai[bot]", "src/db.py", 88)
        bound = sim.add_thread_comment(
            fix.pr, "/fs-review guard it", "reviewer", in_reply_to=first["id"], created_at=_ago(10)
        )
        late = sim.add_thread_comment(
            fix.pr,
            "/fs-review and log it",
            "reviewer",
            in_reply_to=first["id"],
            created_at=_ago(20),
            updated_at=_ago(2),
        )
        runs = {}
        for comment, at in ((bound, 9), (late, 19)):
            title = f"org/repo#{fix.pr} review_comment:{comment['id']}"
            run = add_follow_up_run(sim, event="pull_request_review_comment", title=title, created_at=_ago(at))
            runs[comment["id"]] = int(run["id"])

        forge = GitHubForge(
            Repo("org", "repo"), sim.api_url, sim.graphql_url, READER_TOKEN, READER_TOKEN, SystemClock()
        )
        report = explain(ExplainReader(Repo("org", "repo"), forge), Repo("org", "repo"), fix.pr)
        assert report.in_flight is not None and report.in_flight.run_id == fix.my_run_id
        verdicts = {r.run_id: (r.outcome, r.amendments, r.unbound) for r in report.follow_ups}
        assert verdicts == {
            runs[bound["id"]]: ("accept", (bound["id"],), False),
            runs[late["id"]]: ("accept", (), True),
        }
        assert f"GET /repos/org/repo/pulls/{fix.pr}/comments" in [c.call for c in report.calls]

        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        assert result.exit_code == 0, result.console
        assert result.outputs["consumed_run_ids"] == str(runs[bound["id"]])
