"""docs/architecture.md "Agent stage": what crosses into the process that never held the job token."""

from __future__ import annotations

import base64
import os
import secrets
import signal
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.app.action.confinement import handoff as stage
from fullsend.app.action.confinement.deployment import SHIPPED
from fullsend.app.action.confinement.handoff import (
    HANDOFF_KEY,
    Handoff,
    HandoffError,
    decode,
    stage_secrets,
    take_handoff,
)
from fullsend.app.timeline import Event
from fullsend.core.tokens.reach import secret_forms

JOB = "ghs_" + secrets.token_hex(18)  # made here: no token-shaped literal in the tree
ROLE = "ghs_" + secrets.token_hex(18)
OTHER = "ghs_" + secrets.token_hex(18)
T0 = datetime(2026, 12, 3, 11, 0, tzinfo=UTC)


def _handoff() -> Handoff:
    return Handoff(
        T0,
        True,
        T0 + timedelta(hours=1),
        False,
        (Event(T0, "notice", "pre-flight: no receipt lists this run", "receipt-lists-my-run", (7, 8)),),
    )


def test_a_handoff_reads_back_as_written():
    assert decode(_handoff().encode()) == _handoff()
    bare = Handoff(T0, False, None, True)
    assert decode(bare.encode()) == bare


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "{}",
        '{"started_at": "yesterday", "minted": true, "expires_at": null, "restricted": false, "events": []}',
        '{"started_at": "2026-12-03T11:00:00", "minted": true, "expires_at": null, "restricted": false, "events": []}',
        '{"started_at": "2026-12-03T11:00:00+00:00", "minted": true, "expires_at": null, '
        '"restricted": false, "events": [[1, 2]]}',
    ],
)
def test_an_unreadable_handoff_is_an_error_naming_it(text):
    with pytest.raises(HandoffError, match="handoff"):
        decode(text)


def test_the_handoff_comes_only_from_the_memory_file_and_leaves_it():
    secrets = {HANDOFF_KEY: _handoff().encode(), "INPUT_ROLE_TOKEN": ROLE}
    assert take_handoff(secrets) == _handoff()
    assert secrets == {"INPUT_ROLE_TOKEN": ROLE}
    assert take_handoff({"INPUT_ROLE_TOKEN": ROLE}) is None


def test_neither_the_job_token_nor_what_mints_one_crosses_into_the_stage():
    header = base64.b64encode(f"x-access-token:{JOB}".encode()).decode()
    process_env = {
        "PATH": "/usr/bin",
        "GITHUB_REPOSITORY": "org/repo",
        "EXTRA_HEADER": header,
        "ACTIONS_RUNTIME_TOKEN": "rt",
        HANDOFF_KEY: "from the environment",
    }
    moved = {
        "INPUT_GITHUB_TOKEN": JOB,
        "INPUT_ROLE_TOKEN": "the input",
        "GH_TOKEN": JOB,
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc",
        "MODEL_KEY": "sk-provider",
    }
    env, secrets = stage_secrets({**process_env, **moved}, process_env, JOB, ROLE, _handoff())
    assert env == {"PATH": "/usr/bin", "GITHUB_REPOSITORY": "org/repo"}
    assert secrets == {"MODEL_KEY": "sk-provider", "INPUT_ROLE_TOKEN": ROLE, HANDOFF_KEY: _handoff().encode()}


def test_a_role_token_that_is_the_job_token_stays_behind_too():
    process_env = {"PATH": "/usr/bin"}
    for role in (JOB, f"prefix-{JOB}"):
        _, secrets = stage_secrets({**process_env, "INPUT_GITHUB_TOKEN": JOB}, process_env, JOB, role, _handoff())
        assert secrets["INPUT_ROLE_TOKEN"] == ""


def test_a_copy_of_the_oidc_request_token_under_another_name_stays_behind():
    process_env = {"PATH": "/usr/bin"}
    moved = {"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-0123", "MY_OIDC": "oidc-request-0123"}
    env, secrets = stage_secrets({**process_env, **moved}, process_env, "", ROLE, _handoff())
    assert "MY_OIDC" not in secrets and "ACTIONS_ID_TOKEN_REQUEST_TOKEN" not in secrets and env == process_env


def test_the_stage_masks_the_job_token_it_never_held():
    forms = stage.withheld_forms(JOB)
    header = base64.b64encode(f"x-access-token:{JOB}".encode()).decode()
    text = f"the token is {JOB}, the header {header}; not {OTHER}"
    inner = base64.b64encode(JOB.encode()).decode()  # "x-access-token:" is 15 bytes: the header ends with it
    found = stage.withheld_values([text], forms)
    assert {JOB, header, inner} <= set(found)  # and the base64 cores inside them: the scan's one list
    assert set(found) <= {form.decode() for form in secret_forms(JOB)} and OTHER not in "".join(found)
    assert stage.withheld_values(["nothing here"], forms) == [] and stage.withheld_forms("") == ()
    assert decode(Handoff(T0, False, None, False, (), forms).encode()).withheld_forms == forms


def test_the_stage_never_takes_a_module_from_the_working_directory(tmp_path):
    """``-c`` alone would put the working directory (the workspace) ahead of the standard library."""
    (tmp_path / "json.py").write_text("raise SystemExit('the workspace json module was imported')\n")
    argv = SHIPPED.reexec_argv()
    probe = [*argv[:-1], "import sys, json; print(json.__file__)"]
    import subprocess
    import sys

    done = subprocess.run([sys.executable, *probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and str(tmp_path) not in done.stdout, done.stdout + done.stderr
    unsafe = subprocess.run(
        [sys.executable, "-c", "import json"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "workspace json module" in unsafe.stderr  # the control: without -P it is imported


def test_the_signals_are_held_at_the_exec_and_let_in_again_when_it_fails(monkeypatch):
    held: list[set[int]] = []

    def refuse(*_args, **_kwargs):
        held.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, ())))
        raise OSError(7, "Argument list too long")

    monkeypatch.setattr(os, "execve", refuse)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGINT))
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError):
        stage.hand_off(SHIPPED.reexec_argv(), {"PATH": "/usr/bin"}, {"INPUT_ROLE_TOKEN": ROLE})
    assert held and {signal.SIGTERM, signal.SIGINT} <= held[0]
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    assert signal.SIGTERM not in blocked and signal.SIGINT not in blocked
    assert set(os.listdir("/proc/self/fd")) == before  # the memory file is closed again


def test_the_job_token_base64_encoded_at_any_offset_stays_behind():
    process_env = {"PATH": "/usr/bin"}
    auth = base64.b64encode(f"octocat:{JOB}".encode()).decode()
    docker = '{"auths":{"ghcr.io":{"auth":"' + auth + '"}}}'
    moved = {"DOCKER_AUTH_CONFIG": docker, "MODEL_KEY": "sk-provider"}
    _, secrets = stage_secrets({**process_env, **moved}, process_env, JOB, ROLE, _handoff())
    assert "DOCKER_AUTH_CONFIG" not in secrets and secrets["MODEL_KEY"] == "sk-provider"
