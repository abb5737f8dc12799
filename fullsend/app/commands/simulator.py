"""``fullsend simulator serve [--port P] [--scenario FILE]``: the built-in GitHub simulator on
127.0.0.1, playing a scripted timeline (docs/architecture.md "Commands"; README "Run it locally with act").

Besides the GitHub REST API of ``fullsend.simulator.server`` it answers what a whole example
workflow needs when act runs it locally:

- ``GET /repos/{o}/{r}/collaborators/{login}/permission`` from the scenario's ``collaborators``
  (the Route job's ``fullsend route``);
- a token mint (``<base>/_fullsend/mint``, the action's ``mint_url``), which checks the OIDC
  token it is handed as a relying party does; the simulator's own issuer
  (``fullsend.simulator.issuer``: ``ACTIONS_ID_TOKEN_REQUEST_URL``/``_TOKEN`` and the keys the
  receipt's proof is checked with) signs it, so the stage job mints its role token as configured
  and signs its receipt (docs/architecture.md "Tokens", "Signed receipts"); the mint hands out the
  role token;
- requests in proxy form for ``api.github.localhost``, for the GitHub CLI by hand: it sends its
  requests there when ``GH_HOST=github.localhost`` (plain HTTP), and ``HTTP_PROXY`` pointing here
  routes them in (no job of the examples runs it since the Route job is ``fullsend route``).

It prints the URLs, tokens and act flags to use, then one line per timeline event and per write
request, and stops on Ctrl-C (or SIGTERM) with exit code 0.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from fullsend.adapters.clock import SystemClock
from fullsend.core.receipt.proof.rs256 import parse_jwks
from fullsend.core.scalars import format_time
from fullsend.errors import ConfigError, ExitCode
from fullsend.ports import Clock
from fullsend.simulator.fixtures import OIDC_REQUEST_TOKEN, ROLE_TOKEN, StandardScenario
from fullsend.simulator.http import SimHandler, bearer
from fullsend.simulator.issuer import ISSUER_PATH, relying_party_claims
from fullsend.simulator.scenario import Scenario, build, load_scenario
from fullsend.simulator.server import HOST, GitHubSimulator
from fullsend.simulator.shapes import user_json

PROXY_HOST = "api.github.localhost"  # gh's REST host for GH_HOST=github.localhost (plain HTTP)
MINT_PATH = "/_fullsend/mint"  # the action posts to mint_url + "/v1/token"
MINT_AUDIENCE = "fullsend-mint"  # the audience the mint accepts (fullsend.adapters.github.mint)
MINTED_LIFE_S = 3600
_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
_COLLABORATOR = re.compile(r"/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/collaborators/(?P<login>[^/]+)/permission")

Say = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class Extras:
    """What the serve handler answers beyond the simulator: scenario collaborators, the role
    token the mint hands out, ``say`` for the event lines and the ``clock`` that dates minted
    tokens."""

    collaborators: dict[str, str]
    role_token: str
    say: Say
    clock: Clock = dataclasses.field(default_factory=SystemClock)


class ServeHandler(SimHandler):
    """``SimHandler`` plus the proxy form, the collaborator permission, the OIDC endpoint and the
    mint (module docstring); logs write requests through ``Extras.say``."""

    def _serve(self) -> None:
        if not self._origin_form():
            return
        extras: Extras = self.server.extras  # type: ignore[attr-defined]  # set on the server by run_simulator_serve
        answer = self._extra(self.path.partition("?")[0], extras)
        if answer is None:
            super()._serve()
            return
        status, body = answer
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _origin_form(self) -> bool:
        """Turn a proxy-form target (``http://api.github.localhost/…``) into a path; refuse other hosts."""
        if not self.path.startswith(("http://", "https://")):
            return True
        target = urlsplit(self.path)
        if target.hostname not in (PROXY_HOST, HOST, "localhost"):
            self.send_error(403, f"this simulator proxies only {PROXY_HOST}")
            return False
        self.path = (target.path or "/") + (f"?{target.query}" if target.query else "")
        return True

    def _extra(self, path: str, extras: Extras) -> tuple[int, Any] | None:
        """(status, JSON body) for the OIDC, mint and collaborator-permission paths; None otherwise."""
        sim: GitHubSimulator = self.server.sim  # type: ignore[attr-defined]  # set by run_simulator_serve
        token = bearer(self.headers.get("Authorization", ""))
        if path == MINT_PATH + "/v1/token" and self.command == "POST":
            return self._mint(token, extras, sim)
        m = _COLLABORATOR.fullmatch(path)
        if m is None or self.command != "GET":
            return None
        if (m["o"].lower(), m["r"].lower()) != (sim.urls.owner.lower(), sim.urls.repo.lower()):
            return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
        if not sim._identity(token)[0]:
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        role = extras.collaborators.get(m["login"], "none")
        extras.say(f"Route: {m['login']} has the role {role!r} on {m['o']}/{m['r']}")
        return 200, {
            "permission": _PERMISSION.get(role, "none"),
            "role_name": role,
            "user": user_json(sim.urls, m["login"]),
        }

    def _mint(self, token: str, extras: Extras, sim: GitHubSimulator) -> tuple[int, Any]:
        """``POST <mint_url>/v1/token``: an OIDC token of the simulator's issuer as bearer, checked
        as a relying party checks it (signature by a published key, issuer, audience
        ``fullsend-mint``, lifetime), a JSON body with a ``role``; answers the role token for an hour."""
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            body = None
        keys = parse_jwks(sim.issuer.jwks())
        if relying_party_claims(token, sim.issuer.url, MINT_AUDIENCE, keys, sim.issuer.now()) is None:
            return 401, {
                "message": "the mint accepts only a valid OIDC token of the simulator's issuer for fullsend-mint"
            }
        if not isinstance(body, dict) or not isinstance(body.get("role"), str):
            return 400, {"message": "the body needs a role"}
        expires = extras.clock.now() + timedelta(seconds=MINTED_LIFE_S)
        extras.say(f"mint: role token for role {body['role']!r} handed out")
        return 200, {"token": extras.role_token, "expires_at": format_time(expires)}

    def _record(
        self,
        sim: GitHubSimulator,
        call: Any,
        headers: dict[str, str],
        raw_path: str,
        status: int,
        token: str,
        fault: str,
    ) -> None:
        super()._record(sim, call, headers, raw_path, status, token, fault)
        if call.method != "GET":
            self.server.extras.say(f"{call.method} {call.path} -> {status} ({call.login or 'no token'})")  # type: ignore[attr-defined]  # see _serve


# ------------------------------------------------------------------------------------ the service
@dataclasses.dataclass(frozen=True)
class Served:
    """A running simulator and what a client needs: ``fix`` is the ``StandardScenario``."""

    sim: GitHubSimulator
    fix: StandardScenario
    scenario: Scenario
    #: The folder served as the repository over git (``--repository``), and the bare repository's scratch folder.
    repository: Path | None = None
    git_scratch: Path | None = None

    @property
    def web_url(self) -> str:
        return self.sim.urls.web

    @property
    def mint_url(self) -> str:
        return self.web_url + MINT_PATH

    @property
    def oidc_url(self) -> str:
        """``ACTIONS_ID_TOKEN_REQUEST_URL``: the simulator's token service."""
        return self.sim.oidc_request_url


def start_simulator(
    scenario: Scenario, port: int, say: Say, clock: Clock | None = None, repository: Path | None = None
) -> Served:
    """Bind 127.0.0.1:``port`` (0: any free port), lay the scenario dated from ``clock.now()``
    (default ``SystemClock()``), serve ``repository`` over git when given
    (``simulator_repo.serve_folder``) and start serving.

    Raises ``ConfigError`` when the port cannot be bound or the repository cannot be served."""
    clock = clock or SystemClock()
    sim = GitHubSimulator(scenario.owner, scenario.repo)
    bind_serve_handler(sim, port, Extras(dict(scenario.collaborators), ROLE_TOKEN, say, clock))
    fix = build(sim, scenario, clock.now(), say)
    scratch = None
    if repository is not None:
        from fullsend.app.commands.simulator_repo import serve_folder

        scratch = serve_folder(sim, repository.resolve(), [fix.pr])
    sim.start()
    return Served(sim, fix, scenario, repository.resolve() if repository else None, scratch)


def bind_serve_handler(sim: GitHubSimulator, port: int, extras: Extras) -> None:
    """Serve ``sim`` with ``ServeHandler`` on ``port`` (0: any free one; the adopter-path plays
    bind their simulator this way too).  ``GitHubSimulator`` binds any free port
    with its own handler at construction, so the socket is replaced here, before any state (whose
    URLs name the port) is laid and before ``start()``."""
    try:
        server = ThreadingHTTPServer((HOST, port), ServeHandler)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {HOST}:{port} ({exc.strerror}); choose another --port, or --port 0 for any free one"
        ) from None
    server.daemon_threads = True
    server.sim = sim  # type: ignore[attr-defined]  # the handler reads it as self.server.sim
    server.extras = extras  # type: ignore[attr-defined]  # the handler reads it as self.server.extras
    sim._server.server_close()
    sim._server = server
    web = f"http://{HOST}:{server.server_address[1]}"
    sim.urls = dataclasses.replace(sim.urls, api=web + sim.prefix, web=web)
    sim.api_url = sim.urls.api
    sim.graphql_url = web + sim._graphql_path
    sim.issuer.url = web + ISSUER_PATH
    sim.oidc_request_url = f"{sim.issuer.url}/request?api-version=2.0"


def act_flags(served: Served) -> list[str]:
    """The act flags that point a run of the example workflows at this simulator (with
    ``--repository``, also its git server and the checkouts' stand-ins)."""
    from fullsend.app.commands.simulator_repo import STAND_INS, checkout_flags

    fix = served.fix
    return [
        f"--env GITHUB_API_URL={served.sim.api_url}",
        f"--env GITHUB_GRAPHQL_URL={served.sim.graphql_url}",
        f"--env GITHUB_REPOSITORY={served.sim.urls.owner}/{served.sim.urls.repo}",
        f"--env GITHUB_RUN_ID={fix.my_run_id}",
        f"--env ACTIONS_ID_TOKEN_REQUEST_URL={served.oidc_url}",
        f"--env ACTIONS_ID_TOKEN_REQUEST_TOKEN={OIDC_REQUEST_TOKEN}",
        f"--var FULLSEND_MINT_URL={served.mint_url}",
        f"--var FULLSEND_RECEIPT_ISSUER={served.sim.issuer.url}",
        f"-s GITHUB_TOKEN={fix.job_token}",
    ] + (checkout_flags(served.repository, served.web_url, STAND_INS.resolve()) if served.repository else [])


def describe(served: Served, scenario_path: str | None) -> list[str]:
    """The lines printed at start: what is served, the URLs and tokens, and the act flags."""
    fix, sim = served.fix, served.sim
    lines = [
        f"GitHub simulator for {sim.urls.owner}/{sim.urls.repo} on {served.web_url}"
        + (f" (scenario {scenario_path})" if scenario_path else " (no scenario: the FIX setup, no timeline)"),
        f"  pull request #{fix.pr} at {fix.head}; run in flight {fix.my_run_id} ({fix.stage_job_name})",
        f"  GITHUB_API_URL      {sim.api_url}",
        f"  GITHUB_GRAPHQL_URL  {sim.graphql_url}",
        f"  job token           {fix.job_token}  ({fix.job_login}; the action's github_token)",
        f"  role token          {fix.role_token}  ({fix.role_login}; what the mint hands out)",
        f"  mint_url            {served.mint_url}",
        f"  OIDC request        {served.oidc_url}  token {OIDC_REQUEST_TOKEN}",
        f"  OIDC issuer         {sim.issuer.url}  (keys at {sim.issuer.url}/.well-known/jwks; receipt_issuer)",
        f"  gh (by hand)        GH_HOST=github.localhost HTTP_PROXY={served.web_url} NO_PROXY={HOST}",
        f"  timeline            {len(served.scenario.timeline)} scripted event(s)",
        "act flags for the run in flight (README, 'Run it locally with act'):",
        *(f"  {flag}" for flag in act_flags(served)),
        "Serving; press Ctrl-C to stop.",
    ]
    return lines


class _Printer:
    """Thread-safe ``say``: one line with the seconds since start (``clock.monotonic``)."""

    def __init__(self, out: TextIO, clock: Clock) -> None:
        self._out, self._lock, self._clock = out, threading.Lock(), clock
        self._t0 = clock.monotonic()

    def __call__(self, text: str) -> None:
        with self._lock:
            self._out.write(f"[+{self._clock.monotonic() - self._t0:6.1f}s] {text}\n")
            self._out.flush()

    def lines(self, lines: list[str]) -> None:
        with self._lock:
            self._out.write("".join(line + "\n" for line in lines))
            self._out.flush()


def run_simulator_serve(
    port: int,
    scenario_path: str | None,
    out: TextIO | None = None,
    stop: threading.Event | None = None,
    clock: Clock | None = None,
    repository: str | None = None,
) -> int:
    """The ``fullsend simulator serve`` command: serve until ``stop`` is set, Ctrl-C or SIGTERM;
    ``repository`` (a folder) is served as the repository over git.

    ``clock`` (default ``SystemClock()``) dates the scenario and minted tokens and times the
    printed lines.  Returns ``ExitCode.OK`` after a clean stop; raises ``ConfigError`` for a
    bad scenario or port (exit 2)."""
    out = out or sys.stdout
    stop = stop or threading.Event()
    clock = clock or SystemClock()
    scenario = load_scenario(Path(scenario_path)) if scenario_path else Scenario()
    say = _Printer(out, clock)
    served = start_simulator(scenario, port, say, clock, Path(repository) if repository else None)
    previous = _on_stop_signals(stop)
    try:
        say.lines(describe(served, scenario_path))  # printed once the handlers are in place
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        served.sim.stop()
        if served.git_scratch is not None:
            shutil.rmtree(served.git_scratch, ignore_errors=True)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    for error in served.sim.errors:
        say(f"a timeline event failed: {error!r}")
    say("stopped")
    return ExitCode.OK


def _on_stop_signals(stop: threading.Event) -> dict[int, Any]:
    """SIGINT and SIGTERM set ``stop`` (main thread only), whatever was inherited: a shell starts a
    background job (``cmd &``) with SIGINT ignored, and Python then installs no handler of its own.
    Returns the previous handler per signal ({} off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {
        signum: signal.signal(signum, lambda _signum, _frame: stop.set()) for signum in (signal.SIGINT, signal.SIGTERM)
    }
