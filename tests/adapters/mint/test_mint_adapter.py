"""The mint client against a real loopback HTTP server, with a fake clock
(docs/architecture.md "Tokens"; the mint's answer as GitHub gives it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from fullsend.adapters.github.client import Client
from fullsend.adapters.github.mint import MintedToken, mint_for_run, mint_role_token, request_oidc_token
from fullsend.core.tokens.policy import child_env
from fullsend.errors import ConfigError, MintError
from tests.adapters.mint.mint_loopback import DROP, FakeClock, ScriptedServer

OIDC_BEARER = "idt_REQUEST_TOKEN"
JWT = "eyJhbGciOi.payload.sig"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(clock: FakeClock) -> Iterator[ScriptedServer]:
    with ScriptedServer(clock) as srv:
        yield srv


@pytest.fixture
def client() -> Client:
    return Client({})  # no proxy from the host's environment: the server is on 127.0.0.1


def oidc(server: ScriptedServer, client: Client, clock: FakeClock) -> str:
    return request_oidc_token(server.url + "/oidc?api-version=2.0", OIDC_BEARER, client=client, clock=clock)


def mint(server: ScriptedServer, client: Client, clock: FakeClock, level: str = "write", log=None) -> MintedToken:
    return mint_role_token(server.url, JWT, "coder", ["repo"], level, client=client, clock=clock, log=log)


# --- OIDC --------------------------------------------------------------------------------------


def test_oidc_request_wire_shape(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/oidc"] = [(200, {"value": JWT})]
    assert oidc(server, client, clock) == JWT
    (seen,) = server.seen
    assert seen.method == "GET" and seen.query == {"api-version": ["2.0"], "audience": ["fullsend-mint"]}
    assert seen.headers["Authorization"] == f"bearer {OIDC_BEARER}"
    assert clock.sleeps == []


def test_oidc_retries_5xx_and_transport_errors(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/oidc"] = [(500, "oops"), DROP, (503, "busy"), (200, {"value": JWT})]
    assert oidc(server, client, clock) == JWT
    assert len(server.seen) == 4 and clock.sleeps == [1, 2, 4]


def test_oidc_gives_up_after_ten_attempts(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/oidc"] = [(502, "bad gateway")]
    with pytest.raises(MintError, match="HTTP 502"):
        oidc(server, client, clock)
    assert len(server.seen) == 10 and clock.sleeps == [1, 2, 4, 8, 8, 8, 8, 8, 8]


def test_oidc_no_attempt_starts_after_sixty_seconds(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/oidc"] = [(500, "slow and failing")]

    def slow() -> None:
        clock.t += 5.0  # every request takes 5 s of (fake) time

    server.on_request = slow
    start = clock.t
    with pytest.raises(MintError):
        oidc(server, client, clock)
    starts = [s.at - 5.0 - start for s in server.seen]
    assert max(starts) <= 60.0 and len(server.seen) == 6


@pytest.mark.parametrize(
    ("vid", "reply", "match"),
    [
        ("403-not-retried", (403, {"message": f"denied for {OIDC_BEARER}"}), "HTTP 403"),
        ("empty-value", (200, {"value": ""}), "no value"),
        ("not-json", (200, "<html>"), "not JSON"),
        ("not-object", (200, "[1]"), "not an object"),
    ],
)
def test_oidc_errors(
    vid: str, reply: tuple, match: str, server: ScriptedServer, client: Client, clock: FakeClock
) -> None:
    server.script["/oidc"] = [reply]
    with pytest.raises(MintError, match=match) as info:
        oidc(server, client, clock)
    assert len(server.seen) == 1 and OIDC_BEARER not in str(info.value)


def test_oidc_needs_url_and_bearer(client: Client, clock: FakeClock) -> None:
    with pytest.raises(MintError, match="id-token: write"):
        request_oidc_token("", OIDC_BEARER, client=client, clock=clock)


# --- mint exchange ----------------------------------------------------------------------------


def test_mint_wire_shape(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(200, {"token": "ghs_role_token", "expires_at": "2026-09-18T13:00:00Z"})]
    minted = mint(server, client, clock)
    assert minted.token == "ghs_role_token"
    assert minted.expires_at == datetime(2026, 9, 18, 13, 0, tzinfo=UTC)
    assert "ghs_role_token" not in repr(minted) and minted.expires_label == "2026-09-18T13:00:00Z"
    (seen,) = server.seen
    assert seen.method == "POST" and seen.path == "/v1/token"
    assert seen.headers["Authorization"] == f"Bearer {JWT}" and seen.headers["Content-Type"] == "application/json"
    assert json.loads(seen.body) == {"role": "coder", "level": "write", "repos": ["repo"]}


def test_mint_level_omitted_when_empty(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(200, {"token": "ghs_x"})]
    minted = mint(server, client, clock, level="")
    assert json.loads(server.seen[0].body) == {"role": "coder", "repos": ["repo"]}
    assert minted.expires_at is None and minted.expires_label == ""


def test_mint_retries_5xx_with_1_2_4_8(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(500, "a"), (502, "b"), DROP, (504, "d"), (200, {"token": "ghs_ok"})]
    assert mint(server, client, clock).token == "ghs_ok"
    assert len(server.seen) == 5 and clock.sleeps == [1, 2, 4, 8]


def test_mint_non_200_error_body_excerpt(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(403, "role not allowed " + JWT + " " + "x" * 500)]
    with pytest.raises(MintError) as info:
        mint(server, client, clock)
    message = str(info.value)
    assert message.startswith("mint returned HTTP 403: role not allowed ")
    assert JWT not in message and len(message) <= len("mint returned HTTP 403: ") + 200
    assert len(server.seen) == 1 and clock.sleeps == []


def test_mint_empty_token_is_an_error(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(200, {"token": "", "expires_at": "x"})]
    with pytest.raises(MintError, match="no token"):
        mint(server, client, clock)


def test_mint_bad_token_format_retried_four_times(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(200, {"token": "bad token!"})]
    lines: list[tuple[str, str]] = []
    with pytest.raises(MintError, match="unexpected format"):
        mint(server, client, clock, log=lambda level, msg: lines.append((level, msg)))
    assert len(server.seen) == 4 and clock.sleeps == [2, 4, 8]
    assert [level for level, _ in lines] == ["warning"] * 3
    assert "attempt 1/4" in lines[0][1] and "bad token!" not in "".join(m for _, m in lines)


def test_mint_bad_format_then_good(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(200, {"token": "bad\ntoken"}), (200, {"token": "ghs_good.token-1"})]
    assert mint(server, client, clock).token == "ghs_good.token-1"
    assert clock.sleeps == [2]


def test_mint_whole_call_within_120_seconds(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/v1/token"] = [(500, "down")]

    def slow() -> None:
        clock.t += 7.0

    server.on_request = slow
    start = clock.t
    with pytest.raises(MintError, match="HTTP 500"):
        mint(server, client, clock)
    assert max(s.at - 7.0 - start for s in server.seen) <= 120.0
    assert clock.t - start <= 120.0 + 7.0


# --- the run's sequence and vector 142 ---------------------------------------------------------


def test_V142_mint_then_child_env(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/oidc"] = [(200, {"value": JWT})]
    server.script["/v1/token"] = [(200, {"token": "ghs_role_token", "expires_at": "2026-09-18T13:00:00Z"})]
    masked: list[str] = []
    lines: list[tuple[str, str]] = []
    minted = mint_for_run(
        oidc_url=server.url + "/oidc",
        oidc_bearer=OIDC_BEARER,
        mint_url=server.url + "/",
        role="coder",
        repos=["repo"],
        client=client,
        clock=clock,
        log=lambda level, msg: lines.append((level, msg)),
        mask=masked.append,
    )
    assert masked == [JWT, "ghs_role_token"]
    assert lines[0] == ("info", "Minting the agent token (role: coder, level: write)")
    assert lines[-1][0] == "done" and "2026-09-18T13:00:00Z" in lines[-1][1]
    assert not any(secret in msg for _, msg in lines for secret in (JWT, "ghs_role_token", OIDC_BEARER))
    process_env = {
        "GH_TOKEN": "job-token-value",
        "GITHUB_TOKEN": "job-token-value",
        "INPUT_GITHUB_TOKEN": "job-token-value",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": OIDC_BEARER,
        "ACTIONS_ID_TOKEN_REQUEST_URL": server.url + "/oidc",
    }
    env = child_env(process_env, "job-token-value", minted.token)
    git = {k: v for k, v in env.items() if k.startswith("GIT_CONFIG_")}  # the push credential (issue 42)
    assert {k: v for k, v in env.items() if k not in git} == {
        "GH_TOKEN": "ghs_role_token",
        "GITHUB_TOKEN": "ghs_role_token",
    }
    assert git["GIT_CONFIG_COUNT"] == "4" and not any("token-value" in v or "ghs_" in v for v in git.values())


def test_mint_for_run_failure_is_prefixed(server: ScriptedServer, client: Client, clock: FakeClock) -> None:
    server.script["/oidc"] = [(401, {"message": "bad"})]
    with pytest.raises(MintError, match=r"^agent token minting failed: the OIDC token request returned HTTP 401"):
        mint_for_run(
            oidc_url=server.url + "/oidc",
            oidc_bearer=OIDC_BEARER,
            mint_url=server.url,
            role="coder",
            repos=["repo"],
            client=client,
            clock=clock,
            log=lambda *_: None,
            mask=lambda _: None,
        )


# --- the one mint-URL check (core.tokens.policy.mint_url_allowed) -------------------------------


def _shapes(server: ScriptedServer) -> list[str]:
    """Refused mint URLs that all still name the loopback server somewhere in the string."""
    port = server.url.rsplit(":", 1)[1]
    return [
        f"http://localhost@127.0.0.1:{port}",
        f"http://127.0.0.1:{port}@evil.example",
        f"ftp://127.0.0.1:{port}",
        f"https://user:pw@127.0.0.1:{port}",
        f"http://localhost.evil.example:{port}",
        f"http://127.0.0.10:{port}",
    ]


def test_a_refused_mint_url_is_a_configuration_error_before_any_request(
    server: ScriptedServer, clock: FakeClock
) -> None:
    server.script["/oidc"] = [(200, {"value": JWT})]
    server.script["/v1/token"] = [(200, {"token": "ghs_role_token"})]
    lines: list[tuple[str, str]] = []
    for url in _shapes(server):
        with pytest.raises(ConfigError, match=r"^mint_url must be an https:// URL") as raised:
            mint_for_run(
                oidc_url=server.url + "/oidc",
                oidc_bearer=OIDC_BEARER,
                mint_url=url,
                role="coder",
                repos=["repo"],
                clock=clock,
                log=lambda level, msg: lines.append((level, msg)),
                mask=lambda _: None,
            )
        assert url not in str(raised.value)
        with pytest.raises(ConfigError):
            mint_role_token(url, JWT, "coder", ["repo"], client=Client(), clock=clock)
    assert server.seen == [] and lines == []


def test_mint_for_run_opens_its_own_session_when_none_is_given(server: ScriptedServer, clock: FakeClock) -> None:
    server.script["/oidc"] = [(200, {"value": JWT})]
    server.script["/v1/token"] = [(200, {"token": "ghs_role_token"})]
    minted = mint_for_run(
        oidc_url=server.url + "/oidc",
        oidc_bearer=OIDC_BEARER,
        mint_url=server.url,
        role="coder",
        repos=["repo"],
        clock=clock,
        log=lambda *_: None,
        mask=lambda _: None,
    )
    assert minted.token == "ghs_role_token" and [s.path for s in server.seen] == ["/oidc", "/v1/token"]
