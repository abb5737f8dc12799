"""Issue 2 acceptance 5: bad inputs exit 2 with one ``::error::`` naming the input, and make no API call.

Bad input never fast-skips (docs/architecture.md "Fast skip"): the item already holds a receipt
that lists the run, so the same run with good input would skip on it.
"""

from __future__ import annotations

import re

import pytest

from fullsend.errors import InputError
from fullsend.settings import load_inputs
from fullsend.simulator.fixtures import JOB_LOGIN, genuine_receipt, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env


@pytest.mark.parametrize(
    ("inputs", "named"),
    [
        ({"stage": "deploy"}, "stage"),
        ({"item": "abc"}, "item"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "x", "prompt_file": "task.md"}, "prompt"),
        ({"runtime": "gpt"}, "runtime"),
        ({"steer_enabled": "yes"}, "steer_enabled"),
        ({"max_steers": "-1"}, "max_steers"),
        ({"agent_cli": "/nonexistent/agent"}, "agent_cli"),
        ({"sandbox": "openshell", "openshell_cli": "/nonexistent/openshell"}, "sandbox"),
        ({"agent_args": "--max-turns\n5\n--output-format=json"}, "agent_args"),
        ({"runtime": "pi", "agent_args": "--session\nmine"}, "agent_args"),
        ({"runtime": "codex", "agent_args": "resume\n--last"}, "agent_args"),
        ({"runtime": "codex", "agent_args": "--listen\nws://0.0.0.0:1"}, "agent_args"),
        ({"runtime": "codex", "codex_transport": "live"}, "codex_transport"),
    ],
)
def test_bad_input_exits_2_before_any_api_call(tmp_path, inputs, named):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        signed = genuine_receipt(sim, [fix.my_run_id], fix.head, writer_run_id=fix.my_run_id - 1)
        sim.add_comment(fix.pr, signed, JOB_LOGIN)
        sim.reset_requests()
        run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs=inputs), tmp_path)
        assert run.exit_code == 2, run.stdout + run.stderr
        errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
        assert len(errors) == 1
        assert f"'{named}'" in errors[0] and re.search(r"\. (Set|Use|Remove|Install) ", errors[0]), errors[0]  # the fix
        assert "Traceback" not in run.stdout + run.stderr and "skip_reason" not in run.outputs
        assert sim.request_count() == 0
        leaked = [
            line
            for line in (run.stdout + run.stderr).splitlines()
            if fix.job_token in line and not line.startswith("::add-mask::")
        ]
        assert leaked == []


def test_the_same_world_with_good_input_skips_on_the_receipt(tmp_path):
    """The control of the test above: its bad input is all that stands between the run and a skip."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        signed = genuine_receipt(sim, [fix.my_run_id], fix.head, writer_run_id=fix.my_run_id - 1)  # issue 45
        sim.add_comment(fix.pr, signed, JOB_LOGIN)
        run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0 and run.outputs["skip_reason"] == "receipt", run.stdout + run.stderr


@pytest.mark.parametrize("api_url", ["not-a-url", "ftp://x", "api.github.com"])
def test_a_malformed_api_url_is_a_configuration_error_not_a_traceback(tmp_path, api_url):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix)
        env["GITHUB_API_URL"] = api_url
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 2
    assert "Traceback" not in run.stdout + run.stderr
    assert [line for line in run.stdout.splitlines() if line.startswith("::error") and "GITHUB_API_URL" in line]


@pytest.mark.parametrize("shape", ["http://localhost@{host}/_fullsend/mint", "https://user:pw@{host}/_fullsend/mint"])
def test_a_refused_mint_url_exits_2_before_any_request(tmp_path, shape):
    """The old string-prefix check let these through; the parsed-URL check refuses them before
    the OIDC request, although both point at the simulator itself."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        host = sim.urls.web.split("://", 1)[1]
        env = runner_env(tmp_path, sim, fix, inputs={"mint_url": shape.format(host=host), "role": "review"})
        env.update(
            {"ACTIONS_ID_TOKEN_REQUEST_URL": f"{sim.urls.web}/_fullsend/oidc", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "x"}
        )
        sim.reset_requests()
        run = run_entrypoint(env, tmp_path)
        assert run.exit_code == 2, run.stdout + run.stderr
        errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
        assert len(errors) == 1 and "'mint_url'" in errors[0] and "pw" not in errors[0]
        assert sim.request_count() == 0


# --- issue 15: the value is named where it cannot be a secret -----------------------------------


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        (
            {"INPUT_STAGE": "bogus"},
            "input 'stage': 'bogus' is not one of the allowed values. Set 'stage' to one of: "
            "triage, code, review, fix, retro, prioritize.",
        ),
        (
            {"INPUT_STAGE": "review", "INPUT_RUNTIME": " gpt "},
            "input 'runtime': 'gpt' is not one of the allowed values. "
            "Set 'runtime' to one of: claude, pi, codex, or leave it "
            "empty for claude.",
        ),
        (
            {"INPUT_STAGE": "review", "INPUT_TIMEOUT_MINUTES": "x" * 60},
            f"input 'timeout_minutes': '{'x' * 40}…' is "
            "not a whole number. Use a whole number of "
            "minutes from 1 to 1440 (a job token lives "
            "at most a day).",
        ),
        (
            {"INPUT_STAGE": "review", "INPUT_CODEX_TRANSPORT": "live"},
            "input 'codex_transport': 'live' is not one of "
            "the allowed values. Set 'codex_transport' to "
            "auto (the default), app-server or exec.",
        ),
        (
            {},
            "input 'stage': is required but empty. Set 'stage' to one of: triage, code, review, fix, retro, prioritize.",
        ),
    ],
)
def test_an_input_error_names_the_value_of_an_input_that_cannot_be_secret(inputs, expected):
    with pytest.raises(InputError) as err:
        load_inputs(inputs)
    assert str(err.value) == expected


def test_an_input_that_may_hold_a_secret_is_never_quoted():
    with pytest.raises(InputError) as err:
        load_inputs({"INPUT_STAGE": "review", "INPUT_MINT_URL": "ftp://user:s3cret-value@mint.example"})
    assert err.value.input_name == "mint_url"
    assert "s3cret" not in str(err.value) and "mint.example" not in str(err.value)


# --- hostile numbers: every whole-number input has an upper bound, named with its range ----------


@pytest.mark.parametrize(
    ("name", "value", "problem", "fix"),
    [
        ("timeout_minutes", "9" * 3000, "is out of range (more than 20 digits)", "from 1 to 1440"),
        ("timeout_minutes", "1441", "is out of range (input should be less than or equal to 1440)", "from 1 to 1440"),
        ("item", "9" * 5000, "is out of range (more than 20 digits)", "from 1 to 2147483647"),
        (
            "item",
            "2147483648",
            "is out of range (input should be less than or equal to 2147483647)",
            "from 1 to 2147483647",
        ),
        ("max_iterations", "101", "is out of range (input should be less than or equal to 100)", "from 1 to 100"),
        ("max_steers", "-" + "9" * 4400, "is out of range (more than 20 digits)", "from 0 to 50"),
        ("poll_interval_seconds", "9" * 21, "is out of range (more than 20 digits)", "from 0 to 600"),
    ],
)
def test_a_huge_whole_number_input_is_refused_by_name_with_its_range(name, value, problem, fix):
    with pytest.raises(InputError) as err:
        load_inputs({"INPUT_STAGE": "review", f"INPUT_{name.upper()}": value})
    assert err.value.input_name == name
    quoted = value if len(value) <= 40 else value[:40] + "…"
    assert str(err.value).startswith(f"input '{name}': '{quoted}' {problem}. ")
    assert fix in str(err.value)


def test_the_upper_bounds_themselves_are_accepted():
    inputs = load_inputs(
        {
            "INPUT_STAGE": "review",
            "INPUT_TIMEOUT_MINUTES": "1440",
            "INPUT_ITEM": "2147483647",
            "INPUT_MAX_ITERATIONS": "100",
        }
    )
    assert (inputs.timeout_minutes, inputs.item, inputs.max_iterations) == (1440, 2147483647, 100)


def test_a_timeout_of_thousands_of_digits_exits_2_through_the_entrypoint(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        sim.reset_requests()
        run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"timeout_minutes": "9" * 4400}), tmp_path)
        assert run.exit_code == 2, run.stdout + run.stderr
        assert "Traceback" not in run.stdout + run.stderr
        errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
        assert len(errors) == 1 and "'timeout_minutes'" in errors[0] and "1 to 1440" in errors[0]
        assert sim.request_count() == 0


def test_a_harness_integer_of_4400_digits_exits_2_naming_the_steer_fields(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"harness": "harness.yaml", "poll_interval_seconds": ""})
        (tmp_path / "workspace" / "harness.yaml").write_text(f"steer:\n  max_steers: {'9' * 4400}\n")
        sim.reset_requests()
        run = run_entrypoint(env, tmp_path)
        assert run.exit_code == 2, run.stdout + run.stderr
        assert "Traceback" not in run.stdout + run.stderr
        errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
        assert len(errors) == 1 and "thousands of digits" in errors[0] and "steer.max_steers" in errors[0], errors
        assert sim.request_count() == 0
