"""The fast skip never skips where the full pre-flight would not (docs/architecture.md "Fast
skip"): probes of inputs, environments and GraphQL answer shapes, each run through the fast path
and through the full lifecycle's pre-flight, built from the same environment the way
``lifecycle.run_action`` builds it, on two fresh simulators."""

from __future__ import annotations

import io
import json

import pytest

from fullsend.adapters.agentcli.lock import install_root
from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.facts import preflight_facts
from fullsend.app.action.fastskip import fast_skip
from fullsend.app.action.plan import build_plan
from fullsend.app.action.preflight import run_preflight
from fullsend.app.action.tokens import acquire_role_token, capture_job_token, restricted_tokens
from fullsend.context import load_context
from fullsend.core.receipt.marker import receipt_body
from fullsend.core.receipt.skips import Skip
from fullsend.settings import load_inputs
from fullsend.simulator.fixtures import JOB_LOGIN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import runner_env

QUEUED_RUN = 33740015299
GENUINE = receipt_body([QUEUED_RUN], "aaa111")


def fast(env):
    return fast_skip(Console(io.StringIO()), env, Cancellation()).exit_code == 0


def full(env) -> bool:
    return full_skip(env) is not None


def full_skip(env, clock=None) -> Skip | None:
    """As lifecycle.run_action → _steps, up to run_preflight (no mint); an input/config error is "no
    skip".  ``clock`` (default: the system's) waits out the forge's retries."""
    clock = clock or SystemClock()
    try:
        job, role_input = capture_job_token(env, lambda _t: None)
        plan = build_plan(load_inputs(env), load_context(env), install_root(env))
    except Exception:
        return None
    log = lambda _l, _m: None  # noqa: E731
    tokens = acquire_role_token(
        job=job,
        role_input=role_input,
        mint_url=plan.inputs.mint_url,
        role=plan.role,
        repository=plan.repo.full_name,
        oidc_url="",
        oidc_bearer="",
        clock=clock,
        log=log,
        mask=lambda _t: None,
    )
    tokens, _ = restricted_tokens(plan, tokens, env.get("GITHUB_ACTOR", ""), log)
    forge = GitHubForge(plan.repo, plan.ctx.api_url, plan.ctx.graphql_url, tokens.job, tokens.role, clock)
    return run_preflight(forge, preflight_facts(plan, tokens), log)


def both(tmp_path, world, inputs=None, env_over=None, event=None):
    """(fast skips, full skips) on two fresh simulators built by ``world``."""
    out = []
    for which in (fast, full):
        with GitHubSimulator() as sim:
            fix = standard_pr_scenario(sim)
            world(sim)
            # the fast skip decides the unsigned form only (issue 45): these probes read it allowed
            allowed = {"allow_unsigned_receipts": "true", **(inputs or {})}
            env = runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN, inputs=allowed, event=event)
            env.update(env_over(sim, fix) if callable(env_over) else (env_over or {}))
            out.append(which(env))
    return tuple(out)


def genuine(sim):
    sim.add_comment(7, GENUINE, JOB_LOGIN)


def test_baseline_both_skip(tmp_path):
    assert both(tmp_path, genuine) == (True, True)
    assert both(tmp_path, genuine, inputs={"allow_unsigned_receipts": "false"}) == (False, False)


ENV_PROBES = {
    "token-trailing-ws": lambda s, f: {
        "INPUT_GITHUB_TOKEN": f.job_token + " \n",
        "INPUT_ROLE_TOKEN": " " + f.role_token,
    },
    "role-equals-job": lambda s, f: {"INPUT_ROLE_TOKEN": f.job_token},
    "role-equals-job-ws": lambda s, f: {"INPUT_ROLE_TOKEN": f.job_token + "\t"},
    "lower-case-input-key": lambda s, f: {"input_steer_enabled": "false"},
    "mixed-case-input-key": lambda s, f: {"Input_Steer_Enabled": "false"},
    "graphql-url-trailing-slash": lambda s, f: {"GITHUB_GRAPHQL_URL": s.graphql_url + "/"},
    "graphql-url-unset-api-v3": lambda s, f: {"GITHUB_GRAPHQL_URL": "", "GITHUB_API_URL": s.api_url + "/api/v3"},
    "run-id-spaces": lambda s, f: {"GITHUB_RUN_ID": f" {QUEUED_RUN} "},
    "run-id-leading-zero": lambda s, f: {"GITHUB_RUN_ID": f"0{QUEUED_RUN}"},
    "run-id-plus": lambda s, f: {"GITHUB_RUN_ID": f"+{QUEUED_RUN}"},
    "run-id-unicode-digits": lambda s, f: {
        "GITHUB_RUN_ID": str(QUEUED_RUN).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    },
    "attempt-empty": lambda s, f: {"GITHUB_RUN_ATTEMPT": ""},
    "attempt-01": lambda s, f: {"GITHUB_RUN_ATTEMPT": "01"},
    "attempt-2-ws": lambda s, f: {"GITHUB_RUN_ATTEMPT": " 2"},
    "attempt-unicode-2": lambda s, f: {"GITHUB_RUN_ATTEMPT": "٢"},
    "repo-case": lambda s, f: {"GITHUB_REPOSITORY": "ORG/Repo"},
    "repo-trailing-ws": lambda s, f: {"GITHUB_REPOSITORY": "org/repo "},
    "actions-TRUE": lambda s, f: {"GITHUB_ACTIONS": "TRUE"},
    "dependabot-actor": lambda s, f: {"GITHUB_ACTOR": "dependabot[bot]"},
    "proxy-unreachable": lambda s, f: {
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
    },
    "ca-bundle-missing": lambda s, f: {"REQUESTS_CA_BUNDLE": "/nonexistent/ca.pem"},
    "netrc-home": None,  # filled below
}


@pytest.mark.parametrize("name", [n for n, v in ENV_PROBES.items() if v is not None])
def test_env_probe_never_fast_skips_where_full_does_not(tmp_path, name):
    got = both(tmp_path, genuine, env_over=ENV_PROBES[name])
    assert not (got[0] and not got[1]), got


INPUT_PROBES = {
    "item-explicit-other": {"item": "8"},
    "item-leading-zero": {"item": "07"},
    "stage-upper": {"stage": "Review"},
    "stage-ws": {"stage": " review "},
    "steer-false": {"steer_enabled": "false"},
    "steer-yes": {"steer_enabled": "yes"},
    "fullsend-dir-abs": {"fullsend_dir": "/etc"},
    "role-with-no-mint": {"role": "review"},
    "role-bad": {"role": "Bad Role"},
    "sandbox-openshell": {"sandbox": "openshell"},
    "max-iterations-0": {"max_iterations": "0"},
    "timeout-big": {"timeout_minutes": "99999"},
    "prompt-and-file": {"prompt_file": "p.md"},
    "harness-outside": {"harness": "../h.yml"},
    "harness-missing": {"harness": "nope.yml"},
    "codex-transport-bad": {"codex_transport": "grpc"},
    "fallback-models": {"fallback_models": ",,,"},
    "agent-args-owned": {"agent_args": "-p"},
    "mint-url-http": {"mint_url": "http://evil.example"},
    "unsigned-not-allowed": {"allow_unsigned_receipts": "false"},
    "unsigned-allowed-yes": {"allow_unsigned_receipts": "yes"},
    "issuer-http": {"receipt_issuer": "http://token.example"},
}


@pytest.mark.parametrize("name", list(INPUT_PROBES))
def test_input_probe_never_fast_skips_where_full_does_not(tmp_path, name):
    got = both(tmp_path, genuine, inputs=INPUT_PROBES[name])
    assert not (got[0] and not got[1]), got


def _mut(fn):
    def world(sim):
        genuine(sim)

        def only_views(body):  # the job token's plain viewer query passes untouched
            if not isinstance(body, dict) or "repository" not in (body.get("data") or {}):
                return body
            return fn(body)

        sim.mutate("POST", r"^/graphql$", only_views, times=None, login=JOB_LOGIN)

    return world


def _nodes(body):
    return body["data"]["repository"]["issueOrPullRequest"]["comments"]["nodes"]


def _set(key, value):
    def fn(body):
        for n in _nodes(body):
            n[key] = value
        return body

    return fn


def _author(value):
    return _set("author", value)


ANSWER_PROBES = {
    "errors-next-to-data": lambda b: {**b, "errors": [{"message": "partial"}]},
    "errors-empty-list": lambda b: {**b, "errors": []},
    "errors-null": lambda b: {**b, "errors": None},
    "errors-dict": lambda b: {**b, "errors": {}},
    "extensions": lambda b: {**b, "extensions": {"cost": 1}},
    "author-typename-missing": _author({"login": "github-actions"}),
    "author-bot-suffixed": _author({"__typename": "Bot", "login": "github-actions[bot]"}),
    "author-user": _author({"__typename": "User", "login": "github-actions"}),
    "author-mannequin": _author({"__typename": "Mannequin", "login": "github-actions"}),
    "author-org": _author({"__typename": "Organization", "login": "github-actions"}),
    "author-upper": _author({"__typename": "Bot", "login": "GITHUB-ACTIONS"}),
    "author-ws": _author({"__typename": "Bot", "login": " github-actions "}),
    "author-extra": _author({"__typename": "Bot", "login": "github-actions", "x": 1}),
    "author-typename-lower": _author({"__typename": "bot", "login": "github-actions"}),
    "last-edited-empty": _set("lastEditedAt", ""),
    "last-edited-false": _set("lastEditedAt", False),
    "last-edited-missing": lambda b: ([n.pop("lastEditedAt") for n in _nodes(b)], b)[1],
    "created-ws": _set("createdAt", " 2026-09-25T10:00:00Z "),
    "created-lower-z": _set("createdAt", "2026-09-25t10:00:00z"),
    "id-leading-zeros": _set("fullDatabaseId", "0000000000000005"),
    "id-int": _set("fullDatabaseId", 5),
    "id-zero": _set("fullDatabaseId", "0"),
    "body-crlf": _set("body", GENUINE.replace("\n", "\r\n")),
    "body-nbsp-trailing": _set("body", GENUINE + "\u00a0"),
    "body-nul": _set("body", GENUINE + "\x00"),
    "body-surrogate": _set("body", GENUINE + "\ud800"),
    "body-bom": _set("body", "\ufeff" + GENUINE),
    "viewer-login-empty": lambda b: {**b, "data": {**b["data"], "viewer": {"login": ""}}},
    "viewer-login-other": lambda b: {**b, "data": {**b["data"], "viewer": {"login": "someone-else"}}},
    "viewer-user-typename": lambda b: {
        **b,
        "data": {**b["data"], "viewer": {"login": "github-actions", "__typename": "User"}},
    },
    "hasnext-true-null-cursor": lambda b: (
        b["data"]["repository"]["issueOrPullRequest"]["comments"]["pageInfo"].update(hasNextPage=True, endCursor=None),
        b,
    )[1],
    "hasnext-string": lambda b: (
        b["data"]["repository"]["issueOrPullRequest"]["comments"]["pageInfo"].update(hasNextPage="false"),
        b,
    )[1],
    "dup-key-raw": lambda b: json.dumps(b)[:-1].encode() + b', "data": {"viewer": {"login": "github-actions"}}}',
}


@pytest.mark.parametrize("name", list(ANSWER_PROBES))
def test_answer_probe_never_fast_skips_where_full_does_not(tmp_path, name):
    got = both(tmp_path, _mut(ANSWER_PROBES[name]))
    assert not (got[0] and not got[1]), got
