"""The fast skip reads the inputs and the environment plainly, before pydantic-settings is
loaded (docs/architecture.md "Fast skip"): no input or environment makes it skip where the
validated run, built the way ``lifecycle.run_action`` builds it, would not.  Both decide on the
same pre-flight over the same forge; what differs is only how the inputs were read."""

from __future__ import annotations

import io

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
