"""The error tree and the exit-code table.  Callers branch on the class, never on the message text.

::

    FullsendError                       base; carries a message safe to print (never a token)
    ├── InputError                      bad action input → ExitCode.BAD_INPUT, one ::error:: naming the input
    ├── ConfigError                     bad harness / configuration → ExitCode.BAD_INPUT
    ├── ForgeError                      a GitHub API call failed (status, transient verdict)
    │   ├── NotFoundError               HTTP 404
    │   ├── MalformedResponse           an answer that is not the documented shape (endpoint, field)
    │   └── RateLimited                 a known rate limit outlasts the caller's wait bound
    ├── MintError                       OIDC request or token mint failed
    ├── SandboxError                    a sandbox operation failed
    ├── AgentCliError                   the agent CLI could not be installed after the pre-flight
    └── SteerError                      the steer sentinels a runtime raises
        ├── SteerUnsupported            runtime cannot steer this run: stop trying
        ├── NoSteerSession              no session registered yet / any more: retry later
        ├── SteerAfterSettle            the session began settling: never delivered
        ├── SteerSessionLost            interrupt lost the sandbox: terminal, run fails
        └── DuplicateSteer              an identical body is still awaiting its echo
"""

from __future__ import annotations

import enum
from datetime import datetime


class ExitCode(enum.IntEnum):
    """Every process exit code steer-action uses (docs/architecture.md "Exit codes"): the one table.

    ``OK`` (0)
        success or a skip; ``lint`` found nothing; ``explain`` printed its report.
    ``FAILED`` (1)
        the agent or a script failed, the session was lost or the run was cancelled; ``lint``
        found something; a GitHub call of ``steer`` or a read of ``explain`` failed; ``demo`` did not
        behave as expected.
    ``BAD_INPUT`` (2)
        bad input or configuration, before any API call: an ``InputError`` or ``ConfigError``,
        or a bad command-line argument of a command.
    ``INTERRUPTED`` (130)
        a command other than ``run`` stopped by Ctrl-C (``run`` cancels and exits ``FAILED``).

    Read from child processes, never returned by steer-action:

    ``PRE_SCRIPT_SKIP`` (78)
        a ``pre_script`` asks to skip the run (``action.yml`` input ``pre_script``).
    ``CODEX_GUARD_REFUSED`` (97), ``CODEX_CONFIG_TAMPERED`` (98)
        a codex turn stopped by the hooks/asset guard, or by a tampered configuration: the
        run's verdict, never retried (``fullsend.adapters.runtimes.codex.exec.loop``).
    """

    OK = 0
    FAILED = 1
    BAD_INPUT = 2
    INTERRUPTED = 130
    PRE_SCRIPT_SKIP = 78
    CODEX_GUARD_REFUSED = 97
    CODEX_CONFIG_TAMPERED = 98


class FullsendError(Exception):
    """Base of every error the action raises on purpose; ``str()`` is safe to print."""


class InputError(FullsendError):
    """A bad action input (docs/architecture.md "Inputs and settings"): exit 2 before any API call.

    ``input_name`` is the snake_case input, ``problem`` what was wrong, ``fix`` how to fix it.
    The offending value is part of ``problem`` only for inputs that cannot hold a secret
    (``fullsend.settings.VALUE_SHOWN``) and for paths (``prompt_file``, ``agent_cli``).
    """

    def __init__(self, input_name: str, problem: str, fix: str) -> None:
        self.input_name, self.problem, self.fix = input_name, problem, fix
        super().__init__(f"input '{input_name}': {problem}. {fix}")


class ConfigError(FullsendError):
    """Bad configuration outside the inputs (harness file, provider definitions): exit 2."""


class ForgeError(FullsendError):
    """A GitHub API call failed.

    ``status`` is the HTTP status (``None`` for network or decode errors).  ``transient`` is the
    watcher's verdict (docs/architecture.md "GitHub access"): 429 and 500-504 are transient; other statuses are
    permanent; errors without a status are treated as transient.
    """

    def __init__(self, message: str, status: int | None = None, transient: bool | None = None) -> None:
        self.status = status
        self._transient = transient
        super().__init__(message)

    @property
    def transient(self) -> bool:
        if self._transient is not None:
            return self._transient
        if self.status is None:
            return True
        return self.status == 429 or 500 <= self.status <= 504

    @property
    def permanent(self) -> bool:
        return not self.transient


class NotFoundError(ForgeError):
    """HTTP 404 (not a pull request, unknown sha, deleted comment or run)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 404)


class MalformedResponse(ForgeError):
    """GitHub answered, but not with the documented shape: a missing or wrong-typed field, an id
    outside GitHub's range, a list for an object, a body that is not JSON.

    ``endpoint`` names the call (``GET /repos/{owner}/{repo}/issues/{issue_number}/comments``),
    ``field`` the offending field as a dotted path (``[3].user.type``; ``""`` for the whole body).
    ``status`` is the HTTP status of the answer: a 2xx write took effect although its answer is
    unusable.  Transient: a later read may be well-formed.
    """

    def __init__(self, endpoint: str, field: str, problem: str, status: int | None = None) -> None:
        self.endpoint, self.field, self.problem = endpoint, field, problem
        where = f" field {field}" if field else " body"
        super().__init__(f"{endpoint}: malformed answer:{where}: {problem}", status, transient=True)


class RateLimited(ForgeError):
    """A rate limit GitHub reported is still active and outlasts the wait the caller allows.

    Nothing was sent into it.  ``until`` is the aware UTC instant before which no request may be
    sent (``x-ratelimit-reset``, ``Retry-After`` or the backoff); ``wait_s`` what remained of it
    when the call gave up.  Transient.
    """

    def __init__(self, message: str, until: datetime, wait_s: float, status: int | None = None) -> None:
        self.until, self.wait_s = until, wait_s
        super().__init__(message, status, transient=True)


class MintError(FullsendError):
    """The OIDC token request or the mint exchange failed (docs/architecture.md "Tokens")."""


class SandboxError(FullsendError):
    """A sandbox operation (create, exec, stop, start) failed."""


class AgentCliError(FullsendError):
    """The pinned agent CLI could not be installed (download, integrity, unpacking, version check;
    docs/architecture.md "Agent CLI"): the run fails with exit 1."""


class SteerError(FullsendError):
    """Base of the steer sentinels (docs/architecture.md "Delivery")."""


class SteerUnsupported(SteerError):
    """The runtime cannot take messages for this run; leave the update to the queued run."""


class NoSteerSession(SteerError):
    """No steerable run is registered for this sandbox (not started yet, or already returned)."""


class SteerAfterSettle(SteerError):
    """The steer arrived after the session began settling; it is not delivered, never will be."""


class SteerSessionLost(SteerError):
    """The sandbox did not come back from an interrupt; terminal for the session and the run."""


class DuplicateSteer(SteerError):
    """A steer with an identical key is already awaiting acknowledgement."""
