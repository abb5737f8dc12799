"""A watch that has not ended when the iteration's result is taken (its join gave up while a
request waited) still accounts for the runs it accepted: they are left to their queued runs
(docs/architecture.md "The receipt's promise")."""

from __future__ import annotations

from fullsend.app.action.agent import session
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentRunResult
from tests.app.watch.watch_rig import Rig, finish, run_watch, wait_for


def test_runs_accepted_by_a_watch_still_in_a_request_are_left_with_session_closed(rig: Rig) -> None:
    rig.sim.move_head(7, "b" * 40)
    rig.accept(55)
    rig.sim.fail_connection("GET", r"/issues/7/comments", "hang", 1, hang_s=3.0)  # the delta read waits
    w = rig.watcher()
    thread = run_watch(w, turn_ends=1)
    wait_for(lambda: 55 in w.state.undecided, "run 55 accepted")
    agent = AgentRunResult(exit_code=0, turns=1, steers=[], end=AgentEnd.SUCCESS)

    result = session._result(agent, w)  # the agent exited; the watcher is still in its request

    assert thread.is_alive() and not w.finished
    assert result.left == [(55, "session-closed")] and result.delivered == []
    w.close_turn_ends()
    w.stop()
    finish(thread)
    # Once the watch ended it left the run itself (stopped: cancelled), and nothing is added twice.
    assert w.finished and session._result(agent, w).left == [(55, "cancelled")]
