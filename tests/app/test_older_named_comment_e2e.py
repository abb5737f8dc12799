"""The comment a follow-up run's title names is read whatever its timestamp, through the whole action.

Run creation lags, so timestamps do not order runs: the ``/fs-review`` comment is 5 s older than
the run in flight, and its shim run (title ``org/repo#7 comment:<id>``, Route success) is created
after it.  The real lifecycle runs in process against the simulator with the scripted agent as a
real subprocess; the steer carries the comment's text and the run is receipted
(docs/architecture.md "Delta").
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from fullsend.core.scalars import parse_time
from fullsend.simulator.fixtures import add_follow_up_run
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import new_scenario, queued_run_skips, receipts, run_in_process, runner_env

INSTRUCTION = "please re-check the migration"


def test_a_command_older_than_the_run_in_flight_reaches_the_agent_and_is_receipted(tmp_path: Path) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        older = parse_time(fix.created_at) - timedelta(seconds=5)
        command = sim.add_comment(fix.pr, f"/fs-review {INSTRUCTION}", "reviewer", created_at=older, updated_at=older)
        follow_up = int(add_follow_up_run(sim, comment_id=command["id"])["id"])
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        assert "Traceback" not in result.console and result.exit_code == 0, result.console
        assert [m for m in result.agent_messages if INSTRUCTION in m], result.agent_messages
        assert follow_up in result.acked_run_ids()
        assert result.outputs["consumed_run_ids"] == str(follow_up)
        assert "[empty-delta]" not in result.summary
        assert receipts(sim, fix).run_ids == {follow_up}
        assert queued_run_skips(sim, fix, follow_up, tmp_path)
