"""A reply in a pull request's review thread reaches the run in flight, through the whole action
(docs/architecture.md "Amendments and context"; docs/adopting.md "The run-name contract").

A reviewer answers a bot's review-thread comment with ``/fs-review <instruction>``.  Route reads
the ``pull_request_review_comment`` payload the simulator builds and selects review; the shim run
(title ``org/repo#7 review_comment:<id>``, no ``pull_requests``, so bound by its title alone) waits
behind the run in flight.  The real lifecycle runs in process against the simulator with the
scripted agent as a real subprocess: the agent reads the instruction and, in the fenced context,
the thread's file and line; the run is receipted and the queued run skips.
"""

from __future__ import annotations

from pathlib import Path

from fullsend.core.route.decision import Role, RouteDecision, decide
from fullsend.core.route.event import route_event
from fullsend.simulator.fixtures import add_follow_up_run
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import new_scenario, queued_run_skips, receipts, run_in_process, runner_env

INSTRUCTION = "also cover the None that db.lookup returns here"


def test_a_reply_in_a_review_thread_steers_the_run_in_flight(tmp_path: Path) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        first = sim.add_thread_comment(fix.pr, "lookup may return None", "coderabbitai[bot]", "src/db.py", 88)
        reply = sim.add_thread_comment(fix.pr, f"/fs-review {INSTRUCTION}", "reviewer", in_reply_to=first["id"])
        assert (reply["path"], reply["line"], reply["in_reply_to_id"]) == ("src/db.py", 88, first["id"])
        assert sim.get_thread_comment(reply["id"]) == reply

        payload = sim.thread_event(reply["id"])
        event = route_event("pull_request_review_comment", payload, f"{sim.urls.owner}/{sim.urls.repo}")
        decision = decide(event, Role("reviewer", "write"))
        assert isinstance(decision, RouteDecision) and (decision.stage, decision.rule) == ("review", "route-command")

        title = f"{sim.urls.owner}/{sim.urls.repo}#{fix.pr} review_comment:{reply['id']}"
        follow_up = int(add_follow_up_run(sim, event="pull_request_review_comment", title=title)["id"])
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)

        assert "Traceback" not in result.console and result.exit_code == 0, result.console
        steer = next(m for m in result.agent_messages if INSTRUCTION in m)
        assert f"Instruction from @reviewer: {INSTRUCTION}" in steer
        assert "The instruction above from @reviewer was written on src/db.py, line 88." in steer
        assert "Review comment from @coderabbitai[bot] on src/db.py, line 88:" in steer
        assert result.outputs["consumed_run_ids"] == str(follow_up)
        assert receipts(sim, fix).run_ids == {follow_up}
        assert queued_run_skips(sim, fix, follow_up, tmp_path)
