"""``fullsend simulator serve`` (issue 10; docs/architecture.md "Commands"): the scenario format, what the
command prints, the endpoints it adds for act runs (collaborator permission, OIDC, mint, the
proxy form ``gh`` uses), the scripted timeline, Ctrl-C, and the action itself played against
``examples/scenarios/review-steer.yml`` (the FIX setup of ``fullsend.simulator.fixtures``)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.client import Client
from fullsend.adapters.github.mint import mint_for_run
from fullsend.app.commands.simulator import MINT_PATH, OIDC_REQUEST_TOKEN, run_simulator_serve
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import parse_time
from fullsend.core.wire import OPENING_LINE
from fullsend.errors import ConfigError
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_LOGIN, JOB_TOKEN, ROLE_LOGIN, ROLE_TOKEN
from fullsend.simulator.scenario import load_scenario, parse_scenario

REPO_ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = REPO_ROOT / "examples" / "scenarios"
REVIEW_STEER = SCENARIOS / "review-steer.yml"
FOLLOW_UP_RUN, FOLLOW_UP_COMMENT = 33740015300, 4000000100
COMMAND = "/fs-review please re-check the migration"
sys.path.insert(0, str(REPO_ROOT / "tests" / "app"))


@contextmanager
def serving(scenario: Path | None = REVIEW_STEER, clock: Any = None) -> Iterator[dict[str, Any]]:
    """Run the command in a thread on a free port; yields ``{api, web, out}`` (``out()`` is the
    text printed so far).  ``clock`` is passed to the command (default: its ``SystemClock``)."""
    out, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(
        target=run_simulator_serve, args=(0, str(scenario) if scenario else None, out, stop, clock), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while "Serving; press Ctrl-C" not in out.getvalue():
        assert thread.is_alive() and time.monotonic() < deadline, out.getvalue()
        time.sleep(0.02)
    api = re.search(r"GITHUB_API_URL +(\S+)", out.getvalue()).group(1)
    try:
        yield {"api": api, "web": api, "out": out.getvalue}
    finally:
        stop.set()
        thread.join(10)


def get(url: str, token: str | None = JOB_TOKEN, **kw: Any) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    return requests.get(url, headers=headers, timeout=10, **kw)


# --- the scenario format ------------------------------------------------------------------------


def test_FIX_review_steer_scenario_reads_as_documented() -> None:
    scenario = load_scenario(REVIEW_STEER)
    assert (scenario.owner, scenario.repo, scenario.pull_request, scenario.head) == ("org", "repo", 7, "aaa111")
    assert scenario.run_id == FIX_RUN_ID == 33740015232 and scenario.run_created_s_ago == 60
    assert dict(scenario.collaborators) == {"reviewer": "write", "author": "write"}
    (entry,) = scenario.timeline
    assert (entry.do, entry.method, entry.path_regex, entry.after_s) == (
        "comment-follow-up",
        "GET",
        r"/actions/workflows/fullsend\.yml/runs",
        None,
    )
    assert dict(entry.params) == {
        "login": "reviewer",
        "body": COMMAND,
        "comment_id": FOLLOW_UP_COMMENT,
        "run_id": FOLLOW_UP_RUN,
    }


def test_FIX_event_files_name_the_scenario_s_comments() -> None:
    first = json.loads((SCENARIOS / "review-steer.event.json").read_text())
    queued = json.loads((SCENARIOS / "review-steer.queued.event.json").read_text())
    for event in (first, queued):
        assert event["issue"]["number"] == 7 and "pull_request" in event["issue"]
        assert event["comment"]["user"] == {"login": "reviewer", "type": "User"}
        assert event["repository"]["full_name"] == "org/repo"
    assert first["comment"]["body"] == "/fs-review"
    assert (queued["comment"]["id"], queued["comment"]["body"]) == (FOLLOW_UP_COMMENT, COMMAND)


@pytest.mark.parametrize(
    ("vid", "data", "message"),
    [
        ("unknown-key", {"repo": "org/repo"}, "unknown key 'repo'"),
        ("bad-repository", {"repository": "org"}, "repository must read owner/name"),
        ("zero-pr", {"pull_request": 0}, "pull_request must be a positive whole number"),
        ("bool-run-id", {"run_id": True}, "run_id must be a positive whole number"),
        ("bad-role", {"collaborators": {"tom": "owner"}}, "collaborators.tom must be one of"),
        ("timeline-not-list", {"timeline": {"do": "x"}}, "timeline must be a list"),
        ("unknown-action", {"timeline": [{"do": "close", "after_s": 1}]}, "timeline[0].do must be one of"),
        ("no-trigger", {"timeline": [{"do": "comment-follow-up", "body": "/fs-review"}]}, "exactly one trigger"),
        (
            "two-triggers",
            {"timeline": [{"do": "comment-follow-up", "body": "x", "after_s": 1, "on_request": "GET /x"}]},
            "exactly one trigger",
        ),
        ("no-body", {"timeline": [{"do": "comment-follow-up", "after_s": 1}]}, "timeline[0].body is required"),
        ("no-sha", {"timeline": [{"do": "push-follow-up", "after_s": 1}]}, "timeline[0].sha is required"),
        (
            "bad-request",
            {"timeline": [{"do": "comment-follow-up", "body": "x", "on_request": "/runs"}]},
            "must read 'METHOD PATH-REGEX'",
        ),
        (
            "bad-regex",
            {"timeline": [{"do": "comment-follow-up", "body": "x", "on_request": "GET /runs("}]},
            "not a regular expression",
        ),
        (
            "negative-after",
            {"timeline": [{"do": "comment-follow-up", "body": "x", "after_s": -1}]},
            "timeline[0].after_s must be a number of seconds",
        ),
        (
            "key-of-other-action",
            {"timeline": [{"do": "comment-follow-up", "body": "x", "after_s": 1, "sha": "b"}]},
            "timeline[0]: unknown key 'sha'",
        ),
    ],
)
def test_bad_scenarios_name_the_key(vid: str, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_scenario(data)
    assert message in str(err.value)


def _serve(*args: str, runner: bool = False) -> subprocess.CompletedProcess[str]:
    """``fullsend simulator serve`` at a terminal, or inside a runner (``GITHUB_ACTIONS=true``)."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"} | (
        {"GITHUB_ACTIONS": "true"} if runner else {}
    )
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "simulator", "serve", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )


def test_bad_scenario_file_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("timeline:\n  - do: comment-follow-up\n    body: hi\n")
    proc = _serve("--port", "0", "--scenario", str(bad))
    assert proc.returncode == 2
    assert (
        proc.stderr
        == f"fullsend simulator serve: scenario {bad}: timeline[0] needs exactly one trigger: on_request or after_s\n"
    )
    runner = _serve("--port", "0", "--scenario", str(bad), runner=True)
    assert runner.returncode == 2
    assert runner.stdout.startswith("::error title=Invalid configuration::")
    assert f"scenario {bad}: timeline[0] needs exactly one trigger" in runner.stdout


def test_a_yaml_error_is_one_plain_line_at_a_terminal_and_escaped_in_a_runner(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("timeline: [\n  - do: x\n")
    proc = _serve("--port", "0", "--scenario", str(bad))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"fullsend simulator serve: scenario {bad}: not valid YAML or JSON at line 2, column 3: "
        "expected the node content, but found '-'; compare it with examples/scenarios/review-steer.yml\n"
    )
    runner = _serve("--port", "0", "--scenario", str(bad), runner=True)
    assert runner.returncode == 2
    assert runner.stdout.count("\n") == 1 and "%0A" not in runner.stdout and runner.stdout.startswith("::error")


def test_port_in_use_exits_2_with_a_hint() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve("--port", str(port))
    assert proc.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr and "--port 0" in proc.stderr


# --- serving ------------------------------------------------------------------------------------


def test_FIX_startup_lines_give_urls_tokens_and_act_flags() -> None:
    with serving() as s:
        api = s["api"]
    text = s["out"]()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", api)
    for line in (
        f"--env GITHUB_API_URL={api}",
        f"--env GITHUB_GRAPHQL_URL={api}/graphql",
        "--env GITHUB_REPOSITORY=org/repo",
        f"--env GITHUB_RUN_ID={FIX_RUN_ID}",
        f"--env ACTIONS_ID_TOKEN_REQUEST_URL={api}/_services/token/request?api-version=2.0",
        f"--env ACTIONS_ID_TOKEN_REQUEST_TOKEN={OIDC_REQUEST_TOKEN}",
        f"--var FULLSEND_MINT_URL={api}{MINT_PATH}",
        f"--var FULLSEND_RECEIPT_ISSUER={api}/_services/token",
        f"-s GITHUB_TOKEN={JOB_TOKEN}",
    ):
        assert f"  {line}\n" in text
    assert f"{JOB_TOKEN}  ({JOB_LOGIN};" in text and f"{ROLE_TOKEN}  ({ROLE_LOGIN};" in text
    flags = text.split("act flags for the run in flight", 1)[1]
    assert "GH_HOST" not in flags and "HTTP_PROXY" not in flags  # no job runs gh since fullsend route
    assert "1 scripted event(s)" in text and text.rstrip().endswith("stopped")


def test_FIX_setup_is_served() -> None:
    with serving() as s:
        run = get(f"{s['api']}/repos/org/repo/actions/runs/{FIX_RUN_ID}").json()
        jobs = get(f"{s['api']}/repos/org/repo/actions/runs/{FIX_RUN_ID}/jobs").json()["jobs"]
        pr = get(f"{s['api']}/repos/org/repo/pulls/7").json()
    assert (run["display_title"], run["path"], run["event"]) == (
        "org/repo#7",
        ".github/workflows/fullsend.yml",
        "issue_comment",
    )
    created = parse_time(run["created_at"])
    assert created is not None and 50 <= time.time() - created.timestamp() <= 80  # run_created_s_ago: 60
    assert [(j["name"], j["status"], j["conclusion"]) for j in jobs] == [
        ("dispatch / Route", "completed", "success"),
        ("dispatch / Review", "in_progress", None),
    ]
    assert pr["head"]["sha"] == "aaa111"


def test_collaborator_permission_from_the_scenario() -> None:
    with serving() as s:
        base = f"{s['api']}/repos/org/repo/collaborators"
        reviewer = get(f"{base}/reviewer/permission").json()
        stranger = get(f"{base}/stranger/permission").json()
        anonymous = get(f"{base}/reviewer/permission", token=None)
        other_repo = get(f"{s['api']}/repos/org/other/collaborators/reviewer/permission")
        said = s["out"]()
    assert (reviewer["role_name"], reviewer["permission"], reviewer["user"]["login"]) == ("write", "write", "reviewer")
    assert (stranger["role_name"], stranger["permission"]) == ("none", "none")
    assert anonymous.status_code == 401 and other_repo.status_code == 404
    assert "Route: reviewer has the role 'write' on org/repo" in said


def test_gh_proxy_form_for_api_github_localhost_only() -> None:
    """``GH_HOST=github.localhost`` makes gh ask ``http://api.github.localhost/…``; with
    ``HTTP_PROXY`` at the simulator the request arrives in proxy form and is answered."""
    with serving() as s:
        proxies = {"http": s["web"]}
        via_proxy = get("http://api.github.localhost/repos/org/repo/collaborators/reviewer/permission", proxies=proxies)
        elsewhere = get("http://example.com/repos/org/repo/pulls/7", proxies=proxies)
    assert via_proxy.status_code == 200 and via_proxy.json()["role_name"] == "write"
    assert elsewhere.status_code == 403


def test_oidc_and_mint_hand_out_the_role_token_to_the_real_client() -> None:
    with serving() as s:
        web = s["web"]
        wrong_oidc = get(f"{web}/_services/token/request?audience=fullsend-mint", token="nope")
        receipt_audience_token = get(
            f"{web}/_services/token/request?audience=fullsend-receipt:0", token=OIDC_REQUEST_TOKEN
        ).json()["value"]
        wrong_audience = requests.post(
            f"{web}{MINT_PATH}/v1/token",
            json={"role": "review"},
            headers={"Authorization": f"Bearer {receipt_audience_token}"},
            timeout=10,
        )
        wrong_jwt = requests.post(
            f"{web}{MINT_PATH}/v1/token", json={"role": "review"}, headers={"Authorization": "Bearer nope"}, timeout=10
        )
        lines: list[tuple[str, str]] = []
        masked: list[str] = []
        minted = mint_for_run(
            oidc_url=f"{web}/_services/token/request?api-version=2.0",
            oidc_bearer=OIDC_REQUEST_TOKEN,
            mint_url=f"{web}{MINT_PATH}",
            role="review",
            repos=["repo"],
            client=Client({}),
            clock=SystemClock(),
            log=lambda *a: lines.append(a),
            mask=masked.append,
        )
        viewer = requests.post(
            f"{s['api']}/graphql",
            json={"query": "query { viewer { login } }"},
            headers={"Authorization": f"bearer {minted.token}"},
            timeout=10,
        ).json()
        said = s["out"]()
    assert wrong_oidc.status_code == 401 and wrong_jwt.status_code == 401
    # A receipt's published token is refused by the mint, a relying party of another audience
    # (SECURITY.md "What a receipt proves").
    assert wrong_audience.status_code == 401
    assert minted.token == ROLE_TOKEN and len(masked) == 2 and masked[1] == ROLE_TOKEN and masked[0].count(".") == 2
    assert minted.expires_at is not None and 3500 <= minted.expires_at.timestamp() - time.time() <= 3700
    assert viewer == {"data": {"viewer": {"login": "fullsend-ai-review"}}}
    assert "mint: role token for role 'review' handed out" in said


class _FrozenWallClock(SystemClock):
    """Real monotonic time and sleeps, a wall clock stopped at one instant."""

    NOW = parse_time("2026-09-03T10:00:00Z")

    def now(self):  # type: ignore[no-untyped-def]
        return self.NOW


def test_the_mint_dates_its_tokens_on_the_injected_clock() -> None:
    with serving(None, clock=_FrozenWallClock()) as s:
        minted = mint_for_run(
            oidc_url=f"{s['web']}/_services/token/request?api-version=2.0",
            oidc_bearer=OIDC_REQUEST_TOKEN,
            mint_url=f"{s['web']}{MINT_PATH}",
            role="review",
            repos=["repo"],
            clock=SystemClock(),
            log=lambda *a: None,
            mask=lambda _: None,
        )
    assert minted.expires_at_raw == "2026-09-03T11:00:00Z"


def test_timeline_comment_follow_up_after_the_first_listing() -> None:
    with serving() as s:
        runs_url = f"{s['api']}/repos/org/repo/actions/workflows/fullsend.yml/runs"
        first = [r["id"] for r in get(runs_url).json()["workflow_runs"]]
        second = get(runs_url).json()["workflow_runs"]
        jobs = get(f"{s['api']}/repos/org/repo/actions/runs/{FOLLOW_UP_RUN}/jobs").json()["jobs"]
        comments = get(f"{s['api']}/repos/org/repo/issues/7/comments").json()
        said = s["out"]()
    assert first == [FIX_RUN_ID]
    assert next((r["id"], r["display_title"], r["actor"]["login"]) for r in second) == (
        FOLLOW_UP_RUN,
        f"org/repo#7 comment:{FOLLOW_UP_COMMENT}",
        "reviewer",
    )
    assert [(j["name"], j["status"], j["conclusion"]) for j in jobs] == [
        ("dispatch / Route", "completed", "success"),
        ("dispatch / Review", "queued", None),
    ]
    assert [(c["id"], c["body"], c["user"]["login"]) for c in comments] == [(FOLLOW_UP_COMMENT, COMMAND, "reviewer")]
    assert (
        f"@reviewer commented '{COMMAND}' on #7 (comment {FOLLOW_UP_COMMENT}); "
        f"the shim started follow-up run {FOLLOW_UP_RUN}"
    ) in said


def test_timeline_push_follow_up_after_seconds(tmp_path: Path) -> None:
    scenario = tmp_path / "push.yml"
    scenario.write_text(
        "timeline:\n  - after_s: 0.2\n    do: push-follow-up\n    sha: bbb222\n    files: [db/orders.sql]\n"
    )
    with serving(scenario) as s:
        deadline = time.monotonic() + 10
        while "pushed bbb222" not in s["out"]() and time.monotonic() < deadline:
            time.sleep(0.05)
        pr = get(f"{s['api']}/repos/org/repo/pulls/7").json()
        runs = get(f"{s['api']}/repos/org/repo/actions/workflows/fullsend.yml/runs").json()["workflow_runs"]
        compare = get(f"{s['api']}/repos/org/repo/compare/aaa111...bbb222").json()
    assert pr["head"]["sha"] == "bbb222"
    assert (runs[0]["event"], runs[0]["display_title"], runs[0]["head_sha"]) == (
        "pull_request_target",
        "org/repo#7",
        "bbb222",
    )
    assert [f["filename"] for f in compare["files"]] == ["db/orders.sql"]


def test_write_requests_are_printed() -> None:
    with serving(None) as s:
        posted = requests.post(
            f"{s['api']}/repos/org/repo/issues/7/comments",
            json={"body": "hello"},
            headers={"Authorization": f"token {ROLE_TOKEN}"},
            timeout=10,
        )
        said = s["out"]()
    assert posted.status_code == 201
    assert f"POST /repos/org/repo/issues/7/comments -> 201 ({ROLE_LOGIN})" in said
    assert "no scenario: the FIX setup, no timeline" in said


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("sigint_ignored", [False, True], ids=["interactive", "background-job"])
def test_ctrl_c_or_sigterm_stops_with_exit_0(signum: int, sigint_ignored: bool) -> None:
    """Also when started as a shell's background job (``cmd &``), which inherits SIGINT ignored."""

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        [sys.executable, "-m", "fullsend", "simulator", "serve", "--port", "0", "--scenario", str(REVIEW_STEER)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint if sigint_ignored else None,
    )
    try:
        lines = []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("Serving; press Ctrl-C"):
                break
        api = re.search(r"GITHUB_API_URL +(\S+)", "".join(lines)).group(1)
        assert get(f"{api}/repos/org/repo/pulls/7").status_code == 200
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.rstrip().endswith("stopped") and "Traceback" not in err


# --- the action against the served scenario ------------------------------------------------------


def test_FIX_the_action_mints_is_steered_then_the_queued_run_skips(tmp_path: Path) -> None:
    """What the act test plays, without act: the entrypoint with the env a runner gives it, the
    role token minted from the simulator's mint, the scenario's follow-up steered in."""
    from tests.support.action_run import run_entrypoint, runner_env

    with serving() as s:
        web = s["web"]

        class Served:  # the attributes runner_env reads; the serve process's issuer signs and is read
            api_url, graphql_url = s["api"], f"{s['api']}/graphql"
            urls = SimpleNamespace(owner="org", repo="repo")
            oidc_request_url = f"{web}/_services/token/request?api-version=2.0"
            issuer = SimpleNamespace(url=f"{web}/_services/token", add_request_token=lambda *_: None)

        class Fix:
            pr, my_run_id, job_token, role_token = 7, FIX_RUN_ID, JOB_TOKEN, ""

        def env(where: Path, run_id: int) -> dict[str, str]:
            where.mkdir()
            base = runner_env(
                where, Served, Fix, run_id=run_id, inputs={"mint_url": f"{web}{MINT_PATH}", "role": "review"}
            )
            return {
                **base,
                "ACTIONS_ID_TOKEN_REQUEST_TOKEN": OIDC_REQUEST_TOKEN,  # the serve process knows FIX's
            }

        first = run_entrypoint(env(tmp_path / "first", FIX_RUN_ID), tmp_path / "first")
        comments = get(f"{s['api']}/repos/org/repo/issues/7/comments").json()
        queued = run_entrypoint(env(tmp_path / "queued", FOLLOW_UP_RUN), tmp_path / "queued")
    assert first.exit_code == 0, first.stdout + first.stderr
    steers = [m for m in first.agent_messages if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1 and "Instruction from @reviewer: please re-check the migration" in steers[0]
    assert (first.outputs["outcome"], first.outputs["steers"], first.outputs["consumed_run_ids"]) == (
        "succeeded",
        "1",
        str(FOLLOW_UP_RUN),
    )
    (receipt,) = [c for c in comments if c["user"]["login"] == JOB_LOGIN]
    marker = receipt_claim(receipt["body"])
    assert marker is not None and marker.consumed == (FOLLOW_UP_RUN,) and marker.head == "aaa111"
    assert first.outputs["receipt_url"] == receipt["html_url"]
    assert [c for c in comments if c["user"]["login"] == ROLE_LOGIN]  # the status comment, under the minted token
    assert queued.exit_code == 0, queued.stdout + queued.stderr
    assert (queued.outputs["outcome"], queued.outputs["skip_reason"]) == ("skipped", "receipt")
    assert queued.agent_messages == []
