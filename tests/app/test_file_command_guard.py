"""Issue 19: only the action writes outputs, env, path and summary, after its children are gone.
No child gets the file-command variables, and a child that reaches the files by path (here the
children run as the action's own user: no isolation) has its writes undone, with one warning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fullsend.adapters.gha import FileCommandSnapshot
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env


def test_a_child_writing_the_file_command_files_by_path_changes_no_output(tmp_path):
    files = tmp_path / "file_commands"
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(
            tmp_path,
            sim,
            fix,
            inputs={
                "steer_enabled": "false",
                "post_script": (
                    f'test -z "$GITHUB_OUTPUT$GITHUB_ENV$GITHUB_PATH$GITHUB_STATE$GITHUB_STEP_SUMMARY" && '
                    f"printf 'outcome=hacked\\nextra=1\\n' >> {files}/output && "
                    f"printf 'EVIL=1\\n' >> {files}/env && "
                    f"echo '[details](https://evil.example)' >> {files}/summary"
                ),
            },
        )
        env.update(
            {"GITHUB_ENV": str(files / "env"), "GITHUB_PATH": str(files / "path"), "SCRIPTED_AGENT_TURN_S": "0.2"}
        )
        (files / "env").write_text("KEPT=from-an-earlier-write\n")
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded" and "extra" not in run.outputs
    assert (files / "env").read_text() == "KEPT=from-an-earlier-write\n"
    assert not (files / "path").exists()
    assert "evil.example" not in run.summary and "succeeded" in run.summary
    assert (
        "::warning::A child process wrote the runner's file-command files (GITHUB_OUTPUT, GITHUB_ENV, "
        "GITHUB_STEP_SUMMARY); its changes were undone: only the action writes them"
    ) in run.stdout.splitlines()


def test_a_file_command_file_replaced_by_a_link_is_put_back_without_following_it(tmp_path):
    output, target = tmp_path / "output", tmp_path / "elsewhere"
    output.write_text("")
    target.write_text("keep me")
    snapshot = FileCommandSnapshot.take({"GITHUB_OUTPUT": str(output), "GITHUB_PATH": str(tmp_path / "path")})
    output.unlink()
    output.symlink_to(target)
    (tmp_path / "path").write_text("/evil/bin\n")
    assert snapshot.restore() == ["GITHUB_OUTPUT", "GITHUB_PATH"]
    assert not output.is_symlink() and output.read_text() == ""
    assert target.read_text() == "keep me"
    assert not (tmp_path / "path").exists()
    assert snapshot.restore() == []
