"""Issue 19 acceptance, local sandbox on this machine: a hostile agent and a hostile post-script,
each under the child uid, hunt for the job token (handed to the step's env as well, as many
workflows do) and the runner's secrets in ``/proc`` of every process they can see, the descriptors
they inherited, the workspace, ``HOME`` and the temp dirs, and try to write every file-command
file.  They find nothing and change no output; afterwards every file they created belongs to the
workspace's owner.  (The same hunt runs in the real container: tests/container.)

The child uid comes from the suite's entry, ``tests/support/sim_entry.py`` (this machine has no
``fullsend-agent`` user; the image's entry has no way to name one);
the run's directories live in a fresh directory the child uid can traverse.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.adapters.confinement.capdrop import KEPT_CAPABILITIES
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import oidc_request_token, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.hostile_agent import HUNTER, hunt_env
from tests.support.action_run import SIM_ENTRY, run_entrypoint, runner_env
from tests.support.child_uid import worker_child_uid
from tests.support.sim_entry import CHILD_UID_ENV
from tests.support.tools import missing_tool

pytestmark = pytest.mark.timeout(240)
CHILD_UID = worker_child_uid(61900)  # one uid per xdist worker: a run ends every process of its child uid
#: An interpreter the child uid may execute (this machine's test venv may live under a private
#: home); the package comes through PYTHONPATH from a copy in the run directory, since the
#: checkout itself may sit under a private home the child uid cannot enter.
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
REPO_ROOT = Path(__file__).resolve().parents[2]
FILE_COMMANDS = {
    "GITHUB_OUTPUT": "output",
    "GITHUB_STEP_SUMMARY": "summary",
    "GITHUB_ENV": "env",
    "GITHUB_PATH": "path",
    "GITHUB_STATE": "state",
}


@pytest.fixture
def run_dir():
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        missing_tool("root and setpriv (util-linux)", "run the tests as root on Linux (apt-get install -y util-linux)")
    root = Path(tempfile.mkdtemp(prefix="fullsend-hunt-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def readable_package(run_dir: Path) -> Path:
    """A copy of the ``fullsend`` package, ``entrypoint.py`` and the suite's entry
    (``tests/support/sim_entry.py``) under ``run_dir`` (mode 755); returns the folder to put on
    PYTHONPATH (either entry there runs the copy)."""
    folder = run_dir / "pythonpath"
    shutil.copytree(REPO_ROOT / "fullsend", folder / "fullsend", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "entrypoint.py", folder / "entrypoint.py")
    (folder / "tests" / "support").mkdir(parents=True)
    for name in ("__init__.py", "support/__init__.py", "support/sim_entry.py"):
        shutil.copy(REPO_ROOT / "tests" / name, folder / "tests" / name)
    return folder


def _hunter_agent(run_dir: Path, name: str, source: str) -> tuple[Path, Path]:
    """``source`` written to ``run_dir/name`` and an executable ``agent`` that runs it; (hunter, agent)."""
    hunter = run_dir / name
    hunter.write_text(source)
    agent = run_dir / "agent"
    agent.write_text(f"#!/bin/sh\nexec '{PYTHON}' '{hunter}' agent \"$@\"\n")
    agent.chmod(0o755)
    return hunter, agent


def test_a_hostile_agent_and_post_script_under_their_own_uid_find_no_secret_and_change_no_output(run_dir):
    job_token, runtime_token = f"ghs_hunt{secrets.token_hex(16)}", f"rt-{secrets.token_hex(16)}"
    hunter, agent = _hunter_agent(run_dir, "hunter.py", HUNTER)
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        env = runner_env(
            run_dir,
            sim,
            fix,
            inputs={"github_token": job_token, "agent_cli": str(agent), "post_script": f"'{PYTHON}' '{hunter}' post"},
        )
        workspace, home = Path(env["GITHUB_WORKSPACE"]), Path(env["HOME"])
        reports, decoy = workspace / ".hunt", f"decoy-{secrets.token_hex(8)}"
        for path in (reports, home):
            path.mkdir()
        (workspace / "notes.txt").write_text(decoy)
        for key, name in FILE_COMMANDS.items():
            env[key] = str(run_dir / "file_commands" / name)
            Path(env[key]).touch()
        env.update(
            {
                "GITHUB_TOKEN": job_token,
                "GH_TOKEN": job_token,
                "ACTIONS_RUNTIME_TOKEN": runtime_token,
                CHILD_UID_ENV: str(CHILD_UID),
                "SCRIPTED_AGENT_LOG": str(reports / "agent.log"),
                "SCRIPTED_AGENT_TURN_S": "0.5",
                "PYTHONPATH": str(readable_package(run_dir)),
            }
        )
        env.update(
            hunt_env(
                {"job token": job_token, "runtime token": runtime_token, "decoy": decoy},
                str(reports),
                [str(run_dir / "file_commands")],
                [str(workspace), str(home), str(run_dir), str(Path(tempfile.gettempdir()) / "fullsend-sandbox-*")],
            )
        )
        run = run_entrypoint(env, run_dir)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded"
    assert set(run.outputs) == {
        "outcome",
        "skip_reason",
        "steers",
        "consumed_run_ids",
        "receipt_url",
        "head_sha",
        "cost_usd",
        "input_tokens",
        "output_tokens",
        "turns",
        "session_id",
        "model",
        "duration_s",
        "final_message",
        "agent_isolation",
    }
    assert run.outputs["agent_isolation"] == "own-uid"
    assert "HUNTER-WROTE-THIS" not in run.summary
    for key in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"):
        assert Path(env[key]).read_text() == "", key
    assert sorted(p.name for p in (run_dir / "file_commands").iterdir()) == sorted(FILE_COMMANDS.values())

    for who in ("agent", "post"):
        report = json.loads((reports / f"{who}.json").read_text())
        assert (report["uid"], report["euid"]) == (CHILD_UID, CHILD_UID), who
        assert report["found"] == [f"decoy in {workspace / 'notes.txt'}"], (who, report["found"])
        assert report["wrote"] == [], who
        assert report["home_writable"] is True, who
        assert report["processes"] > 0 and report["files"] > 0, who
        assert any(p.startswith("/proc/") and p.endswith("/environ") for p in report["denied"]), who

    left = [p for p in workspace.rglob("*") if p.lstat().st_uid == CHILD_UID or p.lstat().st_gid == CHILD_UID]
    assert left == []  # everything the children made is the workspace owner's again
    assert (reports / "agent.json").stat().st_uid == workspace.stat().st_uid


# ---- docs/rules.md#token-in-reach: no receipt whenever the agent could reach the job token -----
FORGE_RUN = 33740099999  # the queued run a forged receipt would make skip
#: Where each deployment leaves a secret; the checkout's credential and the cloud credential file
#: are removed before any child runs (docs/rules.md#credential-removed; issue 45 for the latter).
DEPLOYMENTS = (
    "isolated",
    "checkout-v4",
    "checkout-v6",
    "checkout-v4-hook",
    "gha-creds",
    "root-without-the-user",
    "non-root",
)
SHARED = ("root-without-the-user", "non-root")  # the agent shares the action's uid (allow_shared_uid)


def _deploy(kind: str, env: dict[str, str], run_dir: Path, job_token: str, oidc_token: str) -> str:
    """Set up ``kind`` in ``env`` and the run's folders; returns the file that exposes a secret ("" for none)."""
    workspace, temp = Path(env["GITHUB_WORKSPACE"]), run_dir / "runner_temp"
    temp.mkdir(mode=0o755)
    env["RUNNER_TEMP"] = str(temp)
    if kind not in SHARED:
        env[CHILD_UID_ENV] = str(CHILD_UID)  # the suite's entry (tests/support/sim_entry.py) reads it
    else:
        env["INPUT_ALLOW_SHARED_UID"] = "true"  # without it the action refuses (the test below)
    header = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{job_token}".encode()).decode()
    (workspace / ".git").mkdir()
    config = workspace / ".git" / "config"
    config.write_text("[core]\n\tbare = false\n")
    if kind in ("checkout-v4", "checkout-v4-hook", *SHARED):  # checkout's default, also without isolation
        config.write_text(f'[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = {header}\n')
        return str(config)
    if kind == "checkout-v6":
        included = temp / "git-credentials-0c1f.config"
        included.write_text(f'[http "https://github.com/"]\n\textraheader = {header}\n')
        included.chmod(0o644)
        config.write_text(f'[includeIf "gitdir:{workspace}/.git"]\n\tpath = {included}\n')
        return str(included)
    if kind == "gha-creds":
        creds = workspace / "gha-creds-5e1d2c.json"
        creds.write_text(
            json.dumps(
                {
                    "type": "external_account",
                    "credential_source": {
                        "url": "https://pipelines.example/idtoken?api-version=2.0",
                        "headers": {"Authorization": f"Bearer {oidc_token}"},
                    },
                }
            )
        )
        return str(creds)
    return ""


@pytest.mark.parametrize("kind", DEPLOYMENTS)
def test_a_receipt_only_when_the_hostile_agent_could_not_reach_the_job_token(run_dir, kind):
    from fullsend.simulator.fixtures import add_comment_follow_up
    from tests.app.reach_hunter import REACH_HUNTER

    job_token, oidc_token = f"ghs_reach{secrets.token_hex(16)}", f"oidc/{secrets.token_hex(16)}+="
    _, agent = _hunter_agent(run_dir, "reach_hunter.py", REACH_HUNTER)
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        added: dict[str, dict] = {}
        sim.on_request(
            sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
            lambda s: added.setdefault("run", add_comment_follow_up(s, "/fs-review recheck")[1]),
        )
        env = runner_env(run_dir, sim, fix, inputs={"github_token": job_token, "agent_cli": str(agent)})
        # the stage job's id-token: write, with a request token of its own the hunter looks for
        env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = oidc_request_token(sim, fix.my_run_id, token=oidc_token)
        workspace, home, reports = Path(env["GITHUB_WORKSPACE"]), Path(env["HOME"]), run_dir / "reports"
        for path in (reports, home):
            path.mkdir(mode=0o777)
        reports.chmod(0o777)
        exposed = _deploy(kind, env, run_dir, job_token, oidc_token)
        before = Path(exposed).read_bytes() if exposed else b""
        package = readable_package(run_dir)
        role = fix.role_token
        env.update(
            {
                "PYTHONPATH": str(package),
                "HUNT_REPORT_DIR": str(reports),
                "HUNT_INJECT": str(package),
                "HUNT_CONTROL": json.dumps([role[: len(role) // 2], role[len(role) // 2 :]]),
                "HUNT_ROOTS": ":".join([str(workspace), str(home), env["RUNNER_TEMP"]]),
                "HUNT_FORGE_RUN": str(FORGE_RUN),
                "HUNT_COMMENTS_URL": f"{sim.api_url}/repos/org/repo/issues/{fix.pr}/comments",
                "SCRIPTED_AGENT_LOG": str(reports / "agent.log"),
                "HUNT_VERSION_DAEMON": "1",
            }
        )
        if kind == "checkout-v4-hook":
            env["HUNT_PLANT_HOOK"] = str(workspace / ".git")
        env.update(hunt_env({"job token": job_token, "OIDC request token": oidc_token}, str(reports), []))
        entry = package / ("entrypoint.py" if kind in SHARED else SIM_ENTRY.relative_to(REPO_ROOT))
        run = run_entrypoint(env, run_dir, launcher=_launcher(kind, run_dir, env), entrypoint=entry)
        by_job = [c["body"] for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["steers"] == "1", run.stdout  # the follow-up run was absorbed in every deployment
    report, probe = (json.loads((reports / f"{who}.json").read_text()) for who in ("agent", "version"))
    warnings = [line for line in run.stdout.splitlines() if "[token-in-reach]" in line]
    moved = [line for line in run.stdout.splitlines() if "[credential-removed]" in line]
    forged = [body for body in by_job if str(FORGE_RUN) in body]
    # In no deployment does reading reach the job token, nor code planted in the action's own files:
    # sharing the uid, that code runs in the agent stage, which never held it (docs/architecture.md "Agent stage").
    planted = json.loads((reports / "injected.json").read_text()) if (reports / "injected.json").exists() else None
    assert forged == [], (report, planted)
    # It tried the action's memory: denied by the action's own uid (non-dumpable), by another uid,
    # or, sharing root, for lack of CAP_SYS_PTRACE (docs/architecture.md "Child isolation").
    assert report["mem"] and all(v.startswith("denied") for v in report["mem"].values()), report["mem"]
    # Nor can it make the kernel run a program of its own as full root (docs/architecture.md "Child isolation").
    assert report["core_pattern"].startswith("denied"), report["core_pattern"]
    assert run.outputs["agent_isolation"] == ("shared-uid" if kind in SHARED else "own-uid")
    if kind in SHARED:
        assert (report["uid"], report["found"]) == (0 if kind == "root-without-the-user" else CHILD_UID, {})
        assert "shares the action's uid" in warnings[0]
        assert ("the action does not run as root" in warnings[0]) == (kind == "non-root"), warnings[0]
        assert "the agent ran under the action's own uid (allow_shared_uid)" in run.summary
        assert report["no_new_privs"] == "1"  # no setuid binary gives the agent a capability back
        if kind == "root-without-the-user":  # root: at most the capabilities for file work (chown, dac_override, …)
            assert int(report["cap_eff"], 16) & ~sum(1 << cap for cap in KEPT_CAPABILITIES) == 0, report["cap_eff"]
        assert report["inject"] == "planted", report
        assert planted is not None and (planted["found"], planted["forged"]) == ([], None), planted  # it ran
        assert planted["control"] is True, planted  # and its scan finds the role token the stage does hold
        assert "the work goes on in a new process that never held the job token" in run.stdout
        _assert_no_receipt(run, added, by_job, warnings)
        _assert_credential_handled("checkout-v4", exposed, before, moved, workspace)
        return
    assert report["inject"].startswith("denied"), report  # the action's files are not the child uid's
    assert report["daemon_alive"] is False  # what the --version check left was ended before the agent
    if kind in ("isolated", "checkout-v4", "checkout-v6", "checkout-v4-hook", "gha-creds"):
        assert (report["uid"], report["found"], report["forged"]) == (CHILD_UID, {}, None)
        assert (probe["uid"], probe["found"]) == (CHILD_UID, {})  # the --version check saw no token either
        assert warnings == []
        assert run.outputs["consumed_run_ids"] == str(added["run"]["id"])
        assert run.outputs["receipt_url"] and len(by_job) == 1 and str(added["run"]["id"]) in by_job[0]
        _assert_credential_handled(kind, exposed, before, moved, workspace)
        return
    raise AssertionError(f"no expectation for {kind}")


def _launcher(kind: str, run_dir: Path, env: dict[str, str]) -> list[str]:
    """The argv that starts the action: this interpreter as root, or, for ``non-root``, the
    system interpreter under the child uid (the run's folders handed to it), with this venv's
    packages on its path."""
    if kind != "non-root":
        return [sys.executable]
    import site

    for path in [run_dir, *run_dir.rglob("*")]:
        os.lchown(path, CHILD_UID, CHILD_UID)
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *site.getsitepackages()])
    return [
        shutil.which("setpriv") or "setpriv",
        f"--reuid={CHILD_UID}",
        f"--regid={CHILD_UID}",
        "--clear-groups",
        PYTHON,
    ]


def _assert_no_receipt(run, added, by_job, warnings) -> None:
    assert run.outputs["receipt_url"] == run.outputs["consumed_run_ids"] == ""
    assert f"follow-up run {added['run']['id']} [no-receipt]" in run.summary
    assert all(str(added["run"]["id"]) not in b for b in by_job)
    assert len(warnings) == 1 and warnings[0].startswith("::warning"), run.stdout


def _assert_credential_handled(kind: str, exposed: str, before: bytes, moved: list[str], workspace: Path) -> None:
    """docs/rules.md#credential-removed: one warning names the file; the credential is gone for
    the rest of the job (a hook the agent planted finds nothing to read)."""
    del before
    if kind == "isolated":
        assert moved == []
        return
    assert len(moved) == 1 and moved[0].startswith("::warning") and exposed in moved[0]
    if kind == "gha-creds":  # the cloud credential file is gone: the agent could not mint with its token
        assert "create_credentials_file: false" in moved[0] and not Path(exposed).exists()
        return
    assert "persist-credentials: false" in moved[0]
    assert not Path(exposed).exists() or b"extraheader" not in Path(exposed).read_bytes()
    assert kind != "checkout-v4-hook" or (workspace / ".git" / "hooks" / "pre-push").exists()


def test_an_agent_that_would_share_the_actions_uid_is_refused_unless_allowed(run_dir):
    """Root without the child user, a job token of its own (no simulator seam): exit 2 before any
    child, naming the action's user and the two ways on; with allow_shared_uid the run goes on
    (the deployment test above) without a receipt."""
    job_token = f"ghs_shared{secrets.token_hex(16)}"
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        env = runner_env(run_dir, sim, fix, inputs={"github_token": job_token})
        workspace = Path(env["GITHUB_WORKSPACE"])
        for module in ("ctypes", "json", "hashlib"):  # what the re-executed action imports first
            (workspace / f"{module}.py").write_text(
                f"open({str(run_dir / 'shadowed')!r}, 'a').write('{module} ')\nraise SystemExit(9)\n"
            )
        run = run_entrypoint(env, run_dir)
    assert not (run_dir / "shadowed").exists(), (run_dir / "shadowed").read_text()  # never from the workspace
    assert run.exit_code == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1, run.stdout
    assert (
        "The agent would run under the action's own user (root, uid 0): the image has no user fullsend-agent"
        in errors[0]
    )
    assert "set allow_shared_uid: true to run it anyway, without receipts" in errors[0]
    assert "Traceback" not in run.stderr and run.agent_messages == []


def test_sharing_the_uid_without_a_role_token_the_agent_runs_unsteered(run_dir):
    """docs/architecture.md "Agent stage": the job token stays behind, and with no role token
    nothing reads the follow-up runs: one warning naming the fix, the work done, no steer."""
    job_token = f"ghs_alone{secrets.token_hex(16)}"
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        env = runner_env(
            run_dir, sim, fix, inputs={"github_token": job_token, "role_token": "", "allow_shared_uid": "true"}
        )
        run = run_entrypoint(env, run_dir)
    assert run.exit_code == 0, run.stdout + run.stderr
    off = [line for line in run.stdout.splitlines() if "Steering is off" in line]
    assert len(off) == 1 and off[0].startswith("::warning") and "set role_token or mint_url" in off[0], run.stdout
    assert "the work goes on in a new process that never held the job token" in run.stdout
    assert (run.outputs["outcome"], run.outputs["steers"], run.outputs["receipt_url"]) == ("succeeded", "0", "")
    assert len(run.agent_messages) == 1 and "Traceback" not in run.stderr


def test_without_a_job_token_the_oidc_request_token_still_stays_behind(run_dir):
    """docs/architecture.md "Agent stage": a run given no job token but the runner's OIDC request
    token hands off all the same, and steers under the role token."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(run_dir, sim, fix, inputs={"github_token": "", "allow_shared_uid": "true"})
        env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = f"oidc-{secrets.token_hex(16)}"
        run = run_entrypoint(env, run_dir)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "the work goes on in a new process that never held the job token" in run.stdout
    assert run.outputs["outcome"] == "succeeded" and "Traceback" not in run.stderr


def test_sharing_the_uid_under_a_shell_that_holds_the_job_token_is_refused(run_dir):
    """docs/rules.md#token-in-reach: a shell step that runs the action (and stays, so its own
    environment keeps the token) is refused before any child, naming the process."""
    job_token = f"ghs_shell{secrets.token_hex(16)}"
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        env = runner_env(run_dir, sim, fix, inputs={"github_token": job_token, "allow_shared_uid": "true"})
        # No exec: the shell stays above.  With the capabilities a root child keeps, so the agent
        # could read its environment (one with more is kept from it by the kernel, and not refused).
        kept = ",".join(f"+{name}" for name in KEPT_CAPABILITIES.values())
        shell = [
            shutil.which("setpriv") or "setpriv",
            f"--bounding-set=-all,{kept}",
            "sh",
            "-c",
            f"'{sys.executable}' \"$0\"; exit $?",
        ]
        run = run_entrypoint(env, run_dir, launcher=shell)
    assert run.exit_code == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "holds the job token in its environment" in errors[0], run.stdout
    assert ", sh)" in errors[0] and "[token-in-reach]" in errors[0]
    assert run.agent_messages == [] and "Traceback" not in run.stderr


def test_sharing_root_without_cap_setpcap_is_refused_naming_what_stays(run_dir):
    """docs/architecture.md "Child isolation": an action that cannot shrink its bounding set (no
    CAP_SETPCAP) would leave CAP_SYS_PTRACE to its children: exit 2 before any child, naming it."""
    job_token = f"ghs_nopcap{secrets.token_hex(16)}"
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        env = runner_env(run_dir, sim, fix, inputs={"github_token": job_token, "allow_shared_uid": "true"})
        launcher = [shutil.which("setpriv") or "setpriv", "--bounding-set=-setpcap", sys.executable]
        run = run_entrypoint(env, run_dir, launcher=launcher)
    assert run.exit_code == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "CAP_SYS_PTRACE" in errors[0] and "it lacks CAP_SETPCAP" in errors[0], run.stdout
    assert run.agent_messages == [] and "Traceback" not in run.stderr
