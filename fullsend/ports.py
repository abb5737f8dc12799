"""Protocols between the app layer and the adapters (docs/architecture.md "Layers").

The app layer depends on these, never on a concrete adapter; tests substitute the GitHub
simulator (over real HTTP) or the test doubles under ``tests/doubles``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from fullsend.core.agent_end import AgentEnd
from fullsend.core.cli_versions import CliVersions, Version
from fullsend.core.final_word import ToolDenial
from fullsend.core.model import (
    Comment,
    Comparison,
    Issue,
    ItemVersion,
    Job,
    PullRequest,
    Review,
    RunListing,
    WorkflowRun,
)
from fullsend.core.report.tally import ItemComment
from fullsend.core.review import PostedReview, ReviewDraft
from fullsend.core.watch.steer import SteerMessage, SteerResult

Credential = Literal["job", "role"]
#: ``log(level, message)``: level ``info``/``done`` (a plain line), ``warning`` or ``error``; the one
#: logging shape of the action (``fullsend.adapters.gha.console_log`` makes one from a console).
Log = Callable[[str, str], None]
#: ``on_ack(result, acknowledged)``: a runtime's live word on a steer, from the thread that reads
#: the agent (docs/architecture.md "Acknowledgement"): ``acknowledged`` True the moment it
#: acknowledges ``result``, False when it withdraws an acknowledgement it gave (a refusal after an
#: acceptance).  Called with none of the runtime's locks held; it must not block.
AckListener = Callable[[SteerResult, bool], None]


class Forge(Protocol):
    """GitHub reads and writes, returning frozen core records (docs/architecture.md "GitHub access").

    Actions reads use the job token; work-item reads and the agent's own posts use the role
    token; receipts are read and posted with ``credential="job"``.  Every method raises
    ``fullsend.errors.ForgeError`` and nothing else: ``NotFoundError`` on 404,
    ``MalformedResponse`` for an answer that is not the documented shape (a 2xx status on a
    write means it took effect), ``RateLimited`` when a known rate limit outlasts the wait bound.
    """

    def bounded(self, max_wait_s: float | None = None, until: datetime | None = None) -> Forge:
        """The same forge waiting out rate limits at most ``max_wait_s`` s per call and never past
        ``until`` (docs/rules.md#rate-limited); the caller decides what a refusal means."""
        ...

    def get_run(self, run_id: int) -> WorkflowRun: ...

    def list_run_jobs(self, run_id: int) -> list[Job]:
        """The run's jobs across its attempts, each name's record from the latest attempt that ran it."""
        ...

    def list_workflow_runs(self, workflow_file: str, created_since: datetime) -> RunListing:
        """The shim's runs created at/after ``created_since``: ≤ 4 pages of 100, each id once
        (``core.provenance.verdicts.order_listing``: the fresher copy), oldest first (by
        ``created_at``, then id; an unknown ``created_at`` first), and whether the page bound was
        reached (docs/architecture.md "Listing").  The adapter orders it once; callers do not sort."""
        ...

    def list_repository_runs(
        self, created_since: datetime | None, created_until: datetime | None = None
    ) -> tuple[list[WorkflowRun], bool]:
        """``(runs, capped)``: every workflow run of the repository created in
        ``[created_since, created_until]`` (a ``None`` bound is open), newest first as GitHub
        lists them (a run may repeat when the listing shifts), ≤ 10 pages of 100; ``capped``
        is True when the page cap was reached, so older runs may be missing."""
        ...

    def get_pull_request(self, number: int) -> PullRequest: ...

    def get_issue(self, number: int) -> Issue: ...

    def item_version(self, number: int, pull_request: bool) -> ItemVersion:
        """The work item's version: conditional reads (free when unchanged) of its issue record and,
        for a pull request, its pull record; any change of either record gives another ``key``,
        and ``updated_at`` is the newest of theirs (docs/architecture.md "Listing gate")."""
        ...

    def list_issue_comments(
        self, number: int, since: datetime | None = None, credential: Credential = "role"
    ) -> list[Comment]: ...

    def list_repository_comments(self, since: datetime) -> tuple[list[ItemComment], bool]:
        """``(comments, capped)``: every issue and pull-request comment of the repository updated
        at/after ``since``, each with its item's number, oldest first; ``capped`` when the page
        cap was reached (``fullsend report``)."""
        ...

    def list_review_comments(self, number: int, since: datetime | None = None) -> list[Comment]:
        """The comments of a pull request's review threads (``in_thread``), oldest first."""
        ...

    def list_reviews(self, number: int) -> list[Review]: ...

    def compare(self, base: str, head: str) -> Comparison: ...

    def post_comment(self, number: int, body: str, credential: Credential = "role") -> Comment: ...

    def edit_comment(self, comment_id: int, body: str, credential: Credential = "role") -> Comment: ...

    def post_review(self, number: int, draft: ReviewDraft) -> PostedReview:
        """Post a pull-request review with line comments under the role token (``fullsend review``)."""
        ...

    def viewer_login(self, credential: Credential) -> str:
        """The login a credential posts under (docs/architecture.md "Receipt reader")."""
        ...

    def receipt_view(self, number: int) -> tuple[str, list[Comment]]:
        """The job token's login and the item's comments with GraphQL's ``lastEditedAt`` (each
        ``Comment.edited`` set); ``ForgeError`` when GraphQL cannot answer."""
        ...

    def default_branch(self) -> str:
        """The repository's default branch (``GET /repos/{owner}/{repo}``)."""
        ...

    def issuer_keys(self, url: str) -> Mapping[str, Any]:
        """The OIDC issuer's key set at ``url`` (configuration, never a token's word), read with no
        credential: the JSON object answered (docs/rules.md "Receipt proof")."""
        ...


class Clock(Protocol):
    """The only source of time and the only way to wait (docs/architecture.md "Threads and time").

    ``now()`` is aware UTC; ``monotonic()`` is seconds for durations only.  ``sleep(seconds)``
    is a pause (the adapters' retry backoff); it returns False when the clock's own ``wake()``
    interrupted it.  ``wait(wake, timeout_s)`` waits until the event ``wake`` is set or
    ``timeout_s`` seconds pass and returns True when it was woken: the watcher waits for its
    next tick this way, and a turn end, a closed session or a cancellation sets ``wake``.
    ``join(thread, timeout_s)`` waits at most ``timeout_s`` for a helper thread the caller
    started and returns True when the thread finished.
    """

    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> bool: ...

    def wait(self, wake: threading.Event, timeout_s: float) -> bool: ...

    def join(self, thread: threading.Thread, timeout_s: float) -> bool: ...


class Steerer(Protocol):
    """A runtime that can take steers (docs/architecture.md "Delivery").

    Caller obligation: both calls are made while holding the sandbox lock
    (docs/architecture.md "Threads and time"), the same lock any credential refresher takes.

    ``steer`` returning normally means ACCEPTED, not delivered; delivery is proven only by a
    ``SteerResult`` in ``steer_results()``.  It raises ``SteerUnsupported``,
    ``NoSteerSession``, ``SteerAfterSettle``, ``SteerSessionLost`` or ``DuplicateSteer``.
    ``settle`` on an unknown or finished sandbox is a no-op.
    """

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None: ...

    def settle(self, sandbox_name: str) -> None: ...


class SteerDecliner(Protocol):
    """Optional: a runtime that refuses some runs outright (pi with fallback models)."""

    def steer_decline_reason(self, params: AgentParams) -> str | None: ...


@dataclass(frozen=True)
class AgentParams:
    """What the app hands a runtime to launch one agent iteration.

    ``env`` is the complete child environment (already scrubbed of the job token;
    docs/architecture.md "Tokens").  ``prompt`` is the opening line's task text; ``steerable`` asks a Steerer
    to keep the session open until ``settle``.  ``timeout_s`` bounds the whole iteration.
    ``delegated_wait_s`` is how long, once its input is closed, the agent may still wait for the
    work it delegated (sub-agents, background tasks) before that work counts as unfinished
    (the ``delegated_wait_seconds`` input, never more than ``timeout_s``); ``expected_denials``
    the tool refusals that do not fail a turn, one pattern each in the CLI's own rule syntax.
    """

    sandbox_name: str
    agent_cli: str
    prompt: str
    workdir: Path
    env: Mapping[str, str]
    steerable: bool
    timeout_s: float
    model: str = ""
    fallback_models: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()
    delegated_wait_s: float = 600.0
    expected_denials: tuple[str, ...] = ()


@dataclass
class AgentRunResult:
    """What one agent iteration produced.

    ``exit_code`` is the agent's exit status (-1 when it could not start); ``turns`` counts
    ``result`` events; ``steers`` are the acknowledged steers in order; ``error`` is a short,
    token-free description when the run failed.  ``end`` is the class of the iteration's end
    (docs/runtimes.md); only ``AgentEnd.SUCCESS`` may lead to a receipt, and a runtime that does
    not classify its end leaves the default, which never does.  ``final_message`` is the agent's
    last answer as its CLI wrote it (raw: masking and bounds are applied where it is shown,
    ``fullsend.core.final_word``); ``denials`` are the tool calls its permission rules refused.
    ``end_rule`` is the rule id of a failed end (``EndVerdict.rule_id``: the class, or the rule of
    an end the action found itself, docs/rules.md "Agent end"); ``""`` for success.
    """

    exit_code: int
    turns: int = 0
    steers: list[SteerResult] = field(default_factory=list)
    is_error: bool = False
    error: str = ""
    session_lost: bool = False
    timed_out: bool = False
    cancelled: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    total_cost_usd: float = 0.0
    session_id: str = ""
    model: str = ""  # as the agent reported it at session start; "" when it did not
    end: AgentEnd = AgentEnd.PROTOCOL_BROKEN
    final_message: str = ""
    denials: tuple[ToolDenial, ...] = ()
    end_rule: str = ""


class Runtime(Steerer, Protocol):
    """An agent runtime (claude, pi, codex): launches the agent and reports turn ends.

    ``run`` blocks until the agent exits (or is settled and finishes its turn).  It calls
    ``on_turn_end(at)`` from its reader thread for every normalized turn end (Claude
    ``result``, pi ``agent_settled``, Codex ``turn.completed``), ``on_output(line)`` for
    each line of agent output worth showing and ``on_ack`` (an ``AckListener``) as each steer is
    acknowledged or an acknowledgement withdrawn, while the agent runs.  The result's ``steers``
    stay the last word: an acknowledgement signalled live that they do not list no longer counts.
    """

    name: str

    def run(
        self,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None] | None = None,
        on_ack: AckListener | None = None,
    ) -> AgentRunResult: ...

    def cancel(self, sandbox_name: str) -> None:
        """Stop the agent (its whole process group) at once; used on SIGTERM/SIGINT."""
        ...


class Sandbox(Protocol):
    """Where the agent runs: ``local`` or ``openshell`` (docs/architecture.md "Sandboxes").

    One sandbox is one process group (local) or one OpenShell sandbox.  ``root`` is the sandbox
    root (``/sandbox`` mapped); ``exec`` runs ``sh -c command`` inside it and returns
    ``(stdout, stderr, exit_code)``; ``launch`` starts the agent a ``Launch`` describes (each
    kind runs the form it knows: the argv, or OpenShell's pinned script).  ``stop`` ends every
    process and verifies none is left; ``start`` brings a stopped sandbox back with its disk
    kept; ``phase`` is an OpenShell phase (``Ready``, ``Stopped``, ``Error`` …); ``delete`` stops
    it and removes its files.  Every method raises ``fullsend.errors.SandboxError``.
    """

    name: str
    root: Path
    kind: str

    def exec(self, command: str, timeout_s: float) -> tuple[str, str, int]: ...

    def launch(self, launch: Launch) -> SandboxProcess: ...

    def make_dir(self, path: Path) -> None: ...

    def upload(self, src: Path, dest: Path) -> None: ...

    def stop(self, timeout_s: float) -> None: ...

    def start(self, timeout_s: float) -> None: ...

    def phase(self) -> str: ...

    def delete(self) -> None: ...


@dataclass(frozen=True)
class Launch:
    """One agent process to start in a sandbox (``Sandbox.launch``), in both forms a sandbox may run.

    ``argv`` runs with exactly ``env`` in ``cwd`` (the local sandbox); ``script`` is the pinned
    ``sh -c`` launch of ``fullsend.adapters.runtimes.launch`` that OpenShell runs instead (``""``:
    OpenShell runs ``argv`` too, its ``env`` in an uploaded file).  With ``mailbox`` the process's
    stdin is a feeder tailing that file (its pid written to ``feeder_pid_file``); else
    ``stdin_bytes`` (or nothing) is its whole stdin.  A pinned script feeds itself.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    script: str = ""
    mailbox: Path | None = None
    feeder_pid_file: Path | None = None
    stdin_bytes: bytes | None = None


#: ``name -> a ready Sandbox`` (``fullsend.adapters.sandbox.sandbox_factory`` makes one per kind).
SandboxFactory = Callable[[str], Sandbox]


class SandboxProcess(Protocol):
    """A launched agent: binary ``stdout`` (read by the runtime's parser), exit status, stderr tail."""

    pid: int
    stdout: IO[bytes]

    def wait(self, timeout_s: float | None = None) -> int:
        """Exit status; raises ``subprocess.TimeoutExpired`` after ``timeout_s``."""
        ...

    def poll(self) -> int | None: ...

    def stderr_tail(self) -> str:
        """The last few KiB the process wrote to stderr."""
        ...


class AgentRuntime(Runtime, Protocol):
    """A ``Runtime`` the action can check, configure and steer (docs/architecture.md "Runtimes"):
    the CLI versions it supports, how it steers, and the choice of transport.  Every runtime of
    ``fullsend.adapters.runtimes.RUNTIMES`` implements it; no capability is probed at run time."""

    #: The CLI versions this runtime supports (``check_cli_version`` refuses the others).
    cli_versions: CliVersions

    @property
    def interrupts_to_steer(self) -> bool:
        """True when a steer stops and restarts the agent (Codex exec), so settling must leave it time."""
        ...

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Why a run with ``params`` cannot be steered, or ``None``."""
        ...

    def transport_line(self, preference: str, version: Version, agent_args: Sequence[str] = ()) -> str:
        """Choose how this run steers, once, after the version check; the line that says so, or
        ``""`` for a runtime with one transport.  Raises ``ConfigError`` when the choice cannot run."""
        ...


class RuntimeFactory(Protocol):
    """A runtime class of ``RUNTIMES``: its supported CLI versions, and how the action makes one
    (``warn`` hears its warnings; ``sandbox_factory`` makes the sandbox of each run)."""

    cli_versions: CliVersions

    def __call__(self, *, warn: Callable[[str], None], sandbox_factory: SandboxFactory) -> AgentRuntime: ...
