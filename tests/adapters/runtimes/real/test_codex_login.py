"""Codex credentials on the real, pinned CLI (docs/runtimes.md "Codex credentials").

The provider here takes the key Codex is logged in with (``requires_openai_auth``, as the built-in
OpenAI provider does), and the agent's environment holds only ``OPENAI_API_KEY``.  The pinned
``codex app-server`` reads no key from its environment and ``codex exec`` ignores
``OPENAI_API_KEY``; the action's ``codex login --with-api-key`` before the launch is what makes
every model request carry the key, on both transports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.ports import AgentParams
from tests.adapters.runtimes.real.conformance import assert_succeeded, done
from tests.adapters.runtimes.real.real_cli import RunInThread, offline_env, render, require_cli
from tests.doubles.openai_server import FakeOpenAI, config_toml

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
KEY = "sk-test-login-only-0123"


@pytest.mark.parametrize("runtime_cls", [CodexAppServerRuntime, CodexExecRuntime], ids=["app-server", "exec"])
def test_an_openai_api_key_in_the_environment_reaches_every_model_request(tmp_path: Path, runtime_cls: type) -> None:
    work, codex_home = tmp_path / "work", tmp_path / "home" / "codex"
    work.mkdir()
    codex_home.mkdir(parents=True)
    with FakeOpenAI(done()) as model:
        (codex_home / "config.toml").write_text(config_toml(model.base_url, env_key=""))
        env = offline_env(tmp_path / "home", CODEX_HOME=str(codex_home), OPENAI_API_KEY=KEY)
        params = AgentParams(
            sandbox_name="sb-login",
            agent_cli=require_cli("codex"),
            prompt="Say hi.",
            workdir=work,
            env=env,
            steerable=False,
            timeout_s=90,
        )
        result = RunInThread(runtime_cls(sandbox_root_parent=tmp_path, render=render), params).start().join()
        calls = model.calls
    assert_succeeded(result, [])
    agent_calls = [c for c in calls if c.body.get("tools")]
    assert agent_calls and all(c.headers.get("authorization") == f"Bearer {KEY}" for c in agent_calls)


def test_without_the_login_the_app_server_sends_no_key(tmp_path: Path) -> None:
    """The reason for the login: the same run with the login switched off is unauthenticated."""
    work, codex_home = tmp_path / "work", tmp_path / "home" / "codex"
    work.mkdir()
    codex_home.mkdir(parents=True)
    with FakeOpenAI(done()) as model:
        (codex_home / "config.toml").write_text(config_toml(model.base_url, env_key=""))
        env = offline_env(tmp_path / "home", CODEX_HOME=str(codex_home), OPENAI_API_KEY=KEY)
        params = AgentParams(
            sandbox_name="sb-nologin",
            agent_cli=require_cli("codex"),
            prompt="Say hi.",
            workdir=work,
            env=env,
            steerable=False,
            timeout_s=90,
        )
        runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path, render=render)
        runtime.dialect.prepare = lambda sandbox, p: ""  # type: ignore[attr-defined]  # no login
        RunInThread(runtime, params).start().join()
        calls = model.calls
    assert calls and not any(c.headers.get("authorization") == f"Bearer {KEY}" for c in calls)
