"""Child-environment scrub, the GH_WORKFLOW_TOKEN provider rule, mint inputs
(docs/architecture.md "Tokens"; credentials never reach the sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fullsend.app.action.providers import providers_refusal
from fullsend.core.tokens.policy import (
    DENIED_KEYS,
    child_env,
    expanded_names,
    mint_repos,
    mint_url_allowed,
    normalize_role,
    provider_refusal,
)

JOB = "job-token-value"
ROLE = "ghs_role_token"


def test_V142_child_env_after_mint() -> None:
    process = {
        "GH_TOKEN": JOB,
        "GITHUB_TOKEN": JOB,
        "INPUT_GITHUB_TOKEN": JOB,
        "PATH": "/usr/bin",
        "HOME": "/github/home",
    }
    env = child_env(process, JOB, ROLE)
    assert env["GH_TOKEN"] == env["GITHUB_TOKEN"] == ROLE
    assert "PUSH_TOKEN" not in env and "GH_WORKFLOW_TOKEN" not in env
    assert not any(JOB in k or JOB in v for k, v in env.items())
    assert env["PATH"] == "/usr/bin" and env["HOME"] == "/github/home"


@pytest.mark.parametrize("vid", ["V144-child-env", "V145-validation-env"])
def test_V144_V145_scrub_by_value(vid: str) -> None:
    base = {"CALLER_COPY_OF_JOB_TOKEN": JOB, "AUTH_HEADER": f"Bearer {JOB}", "UNRELATED": "keep-me"}
    if vid.startswith("V145"):
        base |= {"TARGET_REPO_DIR": "/w", "FULLSEND_RUN_DIR": "/r"}
    env = child_env(base, JOB, ROLE)
    assert {k: v for k, v in env.items() if k in base and k not in ("TARGET_REPO_DIR", "FULLSEND_RUN_DIR")} == {
        "UNRELATED": "keep-me"
    }


def test_V146_no_role_token_means_no_github_token() -> None:
    env = child_env({"GH_TOKEN": JOB, "GITHUB_TOKEN": JOB, "X": "y"}, JOB, "")
    assert "GH_TOKEN" not in env and "GITHUB_TOKEN" not in env
    assert not any(JOB in v for v in env.values()) and env["X"] == "y"


def test_V146b_local_sandbox_agent_env() -> None:
    process = {"ACTIONS_RUNTIME_TOKEN": "rt_X", "INPUT_ROLE_TOKEN": ROLE, "ACTIONS_CACHE_URL": "u", "LANG": "C"}
    env = child_env(process, JOB, ROLE)
    assert not {"ACTIONS_RUNTIME_TOKEN", "INPUT_ROLE_TOKEN", "ACTIONS_CACHE_URL"} & env.keys()
    assert env["GH_TOKEN"] == env["GITHUB_TOKEN"] == ROLE and env["LANG"] == "C"


def test_credentials_never_reach_the_sandbox_env() -> None:
    runner_env = {
        "GITHUB_TOKEN": "ghs_JOB",
        "GH_TOKEN": "ghs_JOB",
        "ACTIONS_RUNTIME_TOKEN": "rt_X",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "idt_Y",
        "FULLSEND_APP_TOKEN": "ghs_APP",
        "ANTHROPIC_API_KEY": "sk-model",
    }
    env = child_env(runner_env, "ghs_JOB", "ghs_APP")
    flat = "\n".join(f"{k}={v}" for k, v in env.items())
    for secret in ("ghs_JOB", "rt_X", "idt_Y"):
        assert secret not in flat
    assert [k for k, v in env.items() if "ghs_APP" in v] == ["GH_TOKEN", "GITHUB_TOKEN"]
    assert env["ANTHROPIC_API_KEY"] == "sk-model"  # model credentials are the workflow's business


def test_same_token_both_ways_reaches_no_child() -> None:
    env = child_env({"A": "b"}, JOB, JOB)
    assert "GH_TOKEN" not in env and "GITHUB_TOKEN" not in env


def test_denied_keys_dropped_and_traceparent_replaced() -> None:
    base = {key: "v" for key in DENIED_KEYS} | {"TRACEPARENT": "00-inherited", "KEEP": "1"}
    env = child_env(base, JOB, ROLE, traceparent="00-own")
    assert not DENIED_KEYS & env.keys()
    assert env["TRACEPARENT"] == "00-own" and env["KEEP"] == "1"
    assert "TRACEPARENT" not in child_env(base, JOB, ROLE)


def test_extra_registered_and_empty_entries() -> None:
    env = child_env({"OLD": "prior-token", "X": "x"}, JOB, ROLE, extra_registered=("", "prior-token"))
    assert "OLD" not in env and env["X"] == "x"
    assert child_env({"X": "x"}, "", ROLE)["X"] == "x"  # empty job token ignored


tokens = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=8, max_size=20)


@given(
    st.dictionaries(st.text(min_size=1, max_size=10), st.text(max_size=30), max_size=8),
    tokens,
    tokens,
    st.text(max_size=10),
    st.text(max_size=10),
)
def test_property_job_token_never_in_child_env(base: dict, job: str, role: str, before: str, after: str) -> None:
    base = dict(base) | {"COPY": before + job + after, "GH_TOKEN": job}
    env = child_env(base, job, role)
    assert not any(job in k or job in v for k, v in env.items())
    assert [k for k, v in env.items() if role in v or role in k] in ([], ["GH_TOKEN", "GITHUB_TOKEN"])


# --- provider rule --------------------------------------------------------------------------

PACKAGES = (
    'name: github-packages\ntype: fullsend-github-packages\ncredentials:\n  GITHUB_TOKEN: "${GH_WORKFLOW_TOKEN}"\n'
)


def refusal(files: dict[str, str] | None) -> str | None:
    return provider_refusal(files, load_yaml=yaml.safe_load)


def test_V50_missing_dir_honoured() -> None:
    assert refusal(None) is None


def test_V51_gh_token_is_fine() -> None:
    assert refusal({"github.yaml": 'name: github\ntype: t\ncredentials: {GITHUB_TOKEN: "${GH_TOKEN}"}\n'}) is None


def test_V52_and_V47_braced_reference_refuses() -> None:
    reason = refusal({"github-packages.yaml": PACKAGES})
    assert reason == 'provider "github-packages" delivers GH_WORKFLOW_TOKEN to a sandbox'


def test_V53_bare_reference_refuses() -> None:
    reason = refusal({"npm.yaml": "name: npm\ntype: npm\ncredentials:\n  TOKEN: $GH_WORKFLOW_TOKEN\n"})
    assert reason is not None and '"npm"' in reason


@pytest.mark.parametrize(
    ("vid", "text"),
    [
        ("V54-broken-yaml", "name: [unclosed"),
        ("no-name", "type: t\n"),
        ("bad-name", "name: 'a b'\ntype: t\n"),
        ("no-type", "name: n\n"),
        ("not-a-mapping", "- a\n- b\n"),
        ("credentials-list", "name: n\ntype: t\ncredentials: [a]\n"),
        ("nested-credential", "name: n\ntype: t\ncredentials: {A: {b: c}}\n"),
        ("config-scalar", "name: n\ntype: t\nconfig: 3\n"),
        ("two-documents", "name: n\ntype: t\n---\nname: m\ntype: t\n"),
    ],
)
def test_unreadable_definitions_refuse(vid: str, text: str) -> None:
    reason = refusal({"p.yaml": text})
    assert reason is not None and reason.startswith("provider definitions unreadable")


def test_every_definition_is_read_not_only_the_harness_ones() -> None:
    files = {"a.yml": "name: a\ntype: t\n", "z.yaml": PACKAGES}
    assert refusal(files) is not None


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("${GH_WORKFLOW_TOKEN}", ["GH_WORKFLOW_TOKEN"]),
        ("$GH_WORKFLOW_TOKEN", ["GH_WORKFLOW_TOKEN"]),
        ("x$GH_WORKFLOW_TOKEN-y", ["GH_WORKFLOW_TOKEN"]),
        ("${GH_WORKFLOW_TOKEN:-x}", ["GH_WORKFLOW_TOKEN:-x"]),
        ("$$GH_WORKFLOW_TOKEN", ["$"]),
        ("$GH_WORKFLOW_TOKEN_2", ["GH_WORKFLOW_TOKEN_2"]),
        ("${}", []),
        ("${GH_WORKFLOW_TOKEN", []),
        ("$", []),
        ("$1X", ["1"]),
        ("${1}", ["1"]),
        ("a$ b", []),
    ],
)
def test_os_expand_names(value: str, names: list[str]) -> None:
    assert expanded_names(value) == names


def test_V55_and_dir_reading(tmp_path: Path) -> None:
    assert providers_refusal("") == "provider definitions location unknown"
    assert providers_refusal(str(tmp_path)) is None  # V50: no providers/ directory
    providers = tmp_path / "providers"
    providers.mkdir()
    (providers / "README.md").write_text("${GH_WORKFLOW_TOKEN}")  # not a definition
    (providers / "github.yml").write_text('name: github\ntype: t\ncredentials: {GITHUB_TOKEN: "${GH_TOKEN}"}\n')
    assert providers_refusal(str(tmp_path)) is None
    (providers / "github-packages.yaml").write_text(PACKAGES)
    assert 'provider "github-packages"' in (providers_refusal(str(tmp_path)) or "")
    (providers / "github-packages.yaml").write_text("name: [unclosed")
    assert (providers_refusal(str(tmp_path)) or "").startswith("provider definitions unreadable")


def test_providers_path_is_a_file_refuses(tmp_path: Path) -> None:
    (tmp_path / "providers").write_text("oops")
    assert (providers_refusal(str(tmp_path)) or "").startswith("provider definitions unreadable")


# --- mint inputs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("code", "coder"),
        ("fix", "coder"),
        ("review", "review"),
        ("triage", "triage"),
        ("Bad", None),
        ("a--b", None),
        ("", None),
        ("1x", None),
    ],
)
def test_normalize_role(role: str, expected: str | None) -> None:
    assert normalize_role(role) == expected


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://mint.example.com", True),
        ("http://localhost:8080", True),
        ("http://127.0.0.1:9/x", True),
        ("http://mint.example.com", False),
        ("https://", False),
        ("ftp://x", False),
        ("", False),
        ("http://[::1", False),
        ("https://mint.example.com:8443/base", True),
        ("http://LOCALHOST:8080", True),
        ("http://localhost@evil.example", False),
        ("http://127.0.0.1@evil.example", False),
        ("http://127.0.0.10:8080", False),
        ("http://localhost.evil.example", False),
        ("http://127.0.0.1.evil.example/x", False),
        ("ftp://mint.example.com", False),
        ("ftp://localhost", False),
        ("https://user:pw@mint.example.com", False),
        ("https://user@mint.example.com", False),
        ("http://user@localhost:8080", False),
        ("http://localhost:99999", False),
        ("http://localhost:port", False),
        ("http://local\nhost", False),
        (" https://mint.example.com", False),
        ("//localhost", False),
        ("localhost:8080", False),
    ],
)
def test_mint_url_allowed(url: str, ok: bool) -> None:
    assert mint_url_allowed(url) is ok


def test_mint_repos() -> None:
    assert mint_repos("org/repo") == ("repo",)
    assert mint_repos("norepo") == () and mint_repos("a/b/c") == ()
