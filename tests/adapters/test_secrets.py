"""What ``fullsend run`` moves out of its environment before re-executing itself (issue 19 A)."""

from __future__ import annotations

import base64
import json
import os

from fullsend.adapters import secrets

JOB = "ghs_sim-job-token-for-the-scrub-tests"


def test_every_entry_holding_the_job_token_moves_whatever_its_name():
    basic = base64.b64encode(f"x-access-token:{JOB}".encode()).decode()
    environ = {
        "INPUT_GITHUB_TOKEN": f" {JOB}\n",
        "INPUT_ROLE_TOKEN": "ghs_role",
        "ACTIONS_RUNTIME_TOKEN": "rt",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "",
        "GITHUB_TOKEN": JOB,
        "GH_TOKEN": JOB,
        "ANY_NAME": f"Bearer {JOB}",
        "HEADER": f"AUTHORIZATION: basic {basic}",
        "B64": base64.b64encode(JOB.encode()).decode(),
        f"NAME_{JOB}": "x",
        "PATH": "/usr/bin",
        "GITHUB_REPOSITORY": "org/repo",
    }
    moved = secrets.secrets_to_move(environ)
    assert set(moved) == {
        "INPUT_GITHUB_TOKEN",
        "INPUT_ROLE_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "ANY_NAME",
        "HEADER",
        "B64",
        f"NAME_{JOB}",
    }
    assert moved["ANY_NAME"] == f"Bearer {JOB}"


def test_without_a_job_token_only_the_named_credentials_move():
    moved = secrets.secrets_to_move({"INPUT_GITHUB_TOKEN": "", "GITHUB_TOKEN": "ghp_x", "ACTIONS_RUNTIME_TOKEN": "rt"})
    assert moved == {"ACTIONS_RUNTIME_TOKEN": "rt"}


def test_moved_entries_come_back_whole_even_beyond_a_pipe_capacity(monkeypatch):
    payload = {"INPUT_GITHUB_TOKEN": JOB, **{f"COPY_{i}": f"{JOB}-{'x' * 1000}" for i in range(100)}}
    fd = secrets._memory_file(json.dumps(payload).encode())
    monkeypatch.setenv(secrets.FD_VARIABLE, str(fd))
    monkeypatch.setattr(secrets, "_not_dumpable", lambda: None)  # keep the test process as it is
    assert secrets.take_secrets() == payload
    assert secrets.FD_VARIABLE not in os.environ
    try:
        os.fstat(fd)
    except OSError:
        pass
    else:
        raise AssertionError("the memory file was left open")
