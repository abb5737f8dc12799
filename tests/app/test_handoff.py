"""docs/architecture.md "Agent stage": what crosses into the process that never held the job token."""

from __future__ import annotations

import base64
import os
import signal
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.app.action import handoff as stage
from fullsend.app.action.handoff import HANDOFF_KEY, Handoff, HandoffError, decode, stage_secrets, take_handoff
from fullsend.app.action.timeline import Event

JOB = "ghs_job0123456789abcdef0123456789abcd"
ROLE = "ghs_role0123456789abcdef0123456789ab"
T0 = datetime(2026, 12, 3, 11, 0, tzinfo=UTC)


def _handoff() -> Handoff:
    return Handoff(T0, True, T0 + timedelta(hours=1), False,
                   (Event(T0, "notice", "pre-flight: no receipt lists this run", "receipt-lists-my-run", (7, 8)),))


def test_a_handoff_reads_back_as_written():
    assert decode(_handoff().encode()) == _handoff()
    bare = Handoff(T0, False, None, True)
    assert decode(bare.encode()) == bare


@pytest.mark.parametrize("text", ["", "[]", "{}", '{"started_at": "yesterday", "minted": true, "expires_at": null, '
                                  '"restricted": false, "events": []}',
                                  '{"started_at": "2026-12-03T11:00:00", "minted": true, "expires_at": null, '
                                  '"restricted": false, "events": []}',
                                  '{"started_at": "2026-12-03T11:00:00+00:00", "minted": true, "expires_at": null, '
                                  '"restricted": false, "events": [[1, 2]]}'])
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
    process_env = {"PATH": "/usr/bin", "GITHUB_REPOSITORY": "org/repo", "EXTRA_HEADER": header,
                   "ACTIONS_RUNTIME_TOKEN": "rt", HANDOFF_KEY: "from the environment"}
    moved = {"INPUT_GITHUB_TOKEN": JOB, "INPUT_ROLE_TOKEN": "the input", "GH_TOKEN": JOB,
             "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc", "MODEL_KEY": "sk-provider"}
    env, secrets = stage_secrets({**process_env, **moved}, process_env, JOB, ROLE, _handoff())
    assert env == {"PATH": "/usr/bin", "GITHUB_REPOSITORY": "org/repo"}
    assert secrets == {"MODEL_KEY": "sk-provider", "INPUT_ROLE_TOKEN": ROLE, HANDOFF_KEY: _handoff().encode()}


def test_a_stage_that_cannot_start_lets_the_signals_in_again(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise OSError(7, "Argument list too long")

    monkeypatch.setattr(os, "execve", refuse)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGINT))
    with pytest.raises(OSError):
        stage.hand_off({"PATH": "/usr/bin"}, {"INPUT_ROLE_TOKEN": ROLE})
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    assert signal.SIGTERM not in blocked and signal.SIGINT not in blocked
