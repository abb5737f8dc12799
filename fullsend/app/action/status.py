"""The start and terminal status comments (docs/architecture.md "Status comments").

Posted and edited under the role token, never the job token; with no role token (or
``status_comment: false``) there is none and one info line says so.  The terminal comment
carries an informational copy of the receipt marker, which the skip check never honours; the
only free text in it (the detail) is sanitized so every ``<`` is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from fullsend.core.model import Comment
from fullsend.core.receipt.marker import Marker, clock_label, sanitize_detail, status_commit_shas, status_marker_copy
from fullsend.core.receipt.status_comment import TERMINAL_TAG, status_line
from fullsend.core.report.figures import RunFigures, figures_line, figures_marker
from fullsend.core.text.inert import code_span
from fullsend.errors import ForgeError
from fullsend.ports import Clock, Forge, Log
from fullsend.rules import find

if TYPE_CHECKING:
    from fullsend.app.action.live_status import LiveStatus, SteerRow
    from fullsend.app.timeline import Timeline

_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parents[2] / "templates")),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
)


def _render(name: str, **context: Any) -> str:
    """Render ``fullsend/templates/<name>`` (default jinja2 settings, autoescape off, strict);
    raises ``jinja2.UndefinedError`` when the context lacks a name the template uses."""
    return _TEMPLATES.get_template(name).render(**context)


class StatusComment:
    """One run's status comment.  All failures are warned and never fail the run."""

    def __init__(
        self,
        forge: Forge,
        number: int,
        run_id_raw: str,
        stage: str,
        run_url: str,
        start_sha: str,
        log: Log,
        enabled: bool,
    ) -> None:
        self._forge, self._number, self._run_id, self._stage = forge, number, run_id_raw or "local", stage
        self._run_url, self._start_sha, self._log, self.enabled = run_url, start_sha, log, enabled
        self.comment: Comment | None = None
        self.terminal: Comment | None = None  # the comment holding the terminal status, once written
        self._started: datetime | None = None
        self._progress_warned = False
        self.live: LiveStatus | None = None  # the progress editor, between follow() and finish()
        self._terminal_context: dict[str, Any] = {}  # what the terminal status was rendered from

    def start(self, at: datetime) -> None:
        """Post the start comment right after the pre-flight."""
        if not self.enabled:
            return
        self._started = at
        body = _render(
            "receipt/status_start.md.j2",
            run_id=self._run_id,
            agent=self._stage,
            started=clock_label(at),
            commit7=self._start_sha[:7],
            run_url=self._run_url,
        )
        try:
            self.comment = self._forge.post_comment(self._number, body, credential="role")
        except ForgeError as exc:
            self._log("warning", f"Could not post the start status comment: {exc}")

    def follow(self, timeline: Timeline, clock: Clock, interval_s: float) -> None:
        """Keep the start comment up to date with ``timeline`` (phase, steers) until :meth:`finish`,
        at most one edit per ``interval_s`` seconds; nothing without a start comment."""
        if self.enabled and self.comment is not None and self.live is None:
            from fullsend.app.action.live_status import LiveStatus

            self.live = LiveStatus(self, clock, interval_s, self._log)
            timeline.subscribe(self.live.on_event)

    def progress(self, phase: str, steers: Sequence[SteerRow]) -> bool:
        """Edit the start comment to show ``phase`` and ``steers`` (``LiveStatus`` calls it, at most
        once per interval); True when GitHub took the edit.  Never waits out a rate limit; a
        failure is warned once and leaves the comment as it was."""
        if not self.enabled or self.comment is None or self.terminal is not None:
            return False
        return self._write_progress(self.comment.id, phase, steers)

    def _write_progress(self, comment_id: int, phase: str, steers: Sequence[SteerRow]) -> bool:
        body = _render(
            "receipt/status_live.md.j2",
            run_id=self._run_id,
            agent=self._stage,
            started=clock_label(self._started) if self._started else "",
            commit7=self._start_sha[:7],
            run_url=self._run_url,
            phase=phase,
            steers=[self._steer_row(row) for row in steers],
        )
        try:
            self._forge.bounded(max_wait_s=0).edit_comment(comment_id, body, credential="role")
        except ForgeError as exc:
            if not self._progress_warned:
                self._progress_warned = True
                self._log("warning", f"Could not update the status comment (the run goes on): {exc}")
            return False
        return True

    def _steer_row(self, row: SteerRow) -> dict[str, object]:
        base = self._run_url.rsplit("/", 1)[0] if "/actions/runs/" in self._run_url else ""
        return {
            "number": row.number,
            "runs": [{"id": rid, "url": f"{base}/{rid}" if base else ""} for rid in row.run_ids],
            "sent": clock_label(row.sent_at),
            "acknowledged": clock_label(row.acknowledged_at) if row.acknowledged_at else "",
            "withdrawn": row.withdrawn,
            "by": [code_span(login) for login in row.authors],
        }

    def finish(
        self,
        at: datetime,
        status: str,
        detail: str,
        marker: Marker | None,
        figures: RunFigures | None = None,
        final_lines: Sequence[str] = (),
        denied: Sequence[str] = (),
        end_rule: str = "",
    ) -> None:
        """Edit the start comment to the terminal status, or post a new one; a later call (a
        cancelled run whose terminal status was already written) edits that one.  An edit keeps
        the run's spacing (made by ``LiveStatus.end`` while the receipt is posted); a
        ``cancelled`` one is made at once, dropping the edits still waiting.

        ``final_lines`` is the agent's final message as block-quote lines and ``denied`` one line
        per refused tool call, both already inert (``fullsend.core.final_word``,
        ``fullsend.app.action.finish.quoted_lines``).  ``figures`` (what the agent spent; its
        ``agent_s`` is measured here, from the start comment to ``at``) ends the comment with the
        human line and the figures marker ``fullsend report`` reads.  ``end_rule``, the rule a failed
        agent end broke, is shown and kept in a line ``fullsend explain`` reads (a registered id only)."""
        if not self.enabled:
            return
        live = self.live  # kept set until closed: a later finish (a cancellation) waits for it too
        if live is not None:  # no progress edit may land after the terminal status
            live.close()
            if status == "cancelled":  # a cancelled run does not wait out the spacing
                live.wait_last_word(drop=True)
        copy = status_marker_copy(status, marker)
        commit7, started_on7 = status_commit_shas(self._start_sha, marker if copy else None)
        self._terminal_context = dict(
            run_id=self._run_id,
            agent=self._stage,
            status=status,
            detail=sanitize_detail(detail),
            started=clock_label(self._started or at),
            completed=clock_label(at),
            steer_marker=copy,
            commit7=commit7,
            started_on7=started_on7,
            run_url=self._run_url,
            footer=self._footer(figures, at),
            final_lines=list(final_lines),
            denied=list(denied),
            end_rule=end_rule if find(end_rule) is not None else "",
        )
        body = _render("receipt/status_terminal.md.j2", **self._terminal_context)
        self._write_terminal(body, live if status != "cancelled" else None)

    def _write_terminal(self, body: str, spaced: LiveStatus | None) -> None:
        """Post the terminal status, or edit it in: through ``spaced.end`` (after the spacing left,
        while the run goes on) when given, else at once."""
        try:
            target = self._target()
            if target is None:
                self.terminal = self._forge.post_comment(self._number, body, credential="role")
        except ForgeError as exc:
            self._log("warning", f"Could not post the terminal status comment: {exc}")
            return
        if target is not None and spaced is not None:
            spaced.end.add(partial(self._edit_terminal, target, body))
        elif target is not None and self._edit_terminal(target, body) and self.live is not None:
            self.live.spacing.answered()
        if self.live is not None and self.comment is not None and target != self.comment.id:
            self.live.last_word(self._closing_edit)

    def _edit_terminal(self, comment_id: int, body: str) -> bool:
        try:
            self.terminal = self._forge.edit_comment(comment_id, body, credential="role")
        except ForgeError as exc:
            self._log("warning", f"Could not post the terminal status comment: {exc}")
            return False
        return True

    def _closing_edit(self, steers: Sequence[SteerRow]) -> bool:
        """The start comment, left behind a later terminal status, says so instead of a stale
        phase (``LiveStatus.last_word`` makes it, spaced as every edit is)."""
        from fullsend.app.action.live_status import DONE_BELOW

        if self.comment is None or self.terminal is None:
            return False
        return self._write_progress(self.comment.id, DONE_BELOW, steers)

    def wait_closing_edit(self, cancelled: bool = False) -> None:
        """The very end of the run: wait for the edits still due (the terminal status's, the start
        comment's closing one, the receipt link; each at most ``status_interval_seconds`` of
        spacing, the first overlapped with the receipt); a ``cancelled`` run does not wait out the
        spacing, and an edit still waiting is not made."""
        if self.live is not None:
            self.live.wait_last_word(drop=cancelled)

    def receipt_posted(self, receipt_url: str) -> None:
        """Link the receipt from the terminal status (one more edit of it, spaced as every edit
        is: made by ``LiveStatus.end`` after the edits before it); a failure is warned."""
        if not (self.enabled and receipt_url and self._terminal_context):
            return
        body = _render("receipt/status_terminal.md.j2", **self._terminal_context, receipt_url=receipt_url)
        if self.live is None:
            self._link_receipt(body)
        else:
            self.live.end.add(partial(self._link_receipt, body))

    def _link_receipt(self, body: str) -> None:
        if self.terminal is None:  # never written: nothing to link from
            return
        try:
            self.terminal = self._forge.edit_comment(self.terminal.id, body, credential="role")
        except ForgeError as exc:
            self._log("warning", f"Could not link the receipt from the status comment: {exc}")

    def _footer(self, figures: RunFigures | None, at: datetime) -> str:
        """The figures' human line and marker, or ``""`` without figures."""
        if figures is None:
            return ""
        agent_s = max(0.0, (at - self._started).total_seconds()) if self._started else 0.0
        measured = replace(figures, agent_s=agent_s)
        marker = figures_marker(measured)
        return figures_line(measured) + ("\n" + marker if marker else "")

    def _target(self) -> int | None:
        """The comment id to edit, or ``None`` to post a new one.  A terminal status this run
        already wrote is replaced (a run cancelled while or after writing it, even when the answer
        to that write was lost); else the start comment is edited in place when it is still last,
        or the agent's own output follows it."""
        if self.terminal is not None:
            return self.terminal.id
        if self.comment is None:
            return None
        try:
            comments = self._forge.list_issue_comments(self._number, credential="role")
        except ForgeError:
            return self.comment.id
        author = self.comment.author.lower()
        later = [c for c in comments if c.id > self.comment.id]
        mine = [
            c
            for c in later
            if c.author.lower() == author and c.body.startswith(self._marker) and TERMINAL_TAG in c.body
        ]
        if mine:
            return mine[-1].id
        return self.comment.id if not later or any(c.author.lower() == author for c in later) else None

    @property
    def _marker(self) -> str:
        return status_line(self._run_id)
