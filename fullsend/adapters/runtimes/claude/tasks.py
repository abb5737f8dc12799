"""The work a Claude Code agent delegated, from the CLI's ``system`` task lines (docs/runtimes.md
"Claude Code"; docs/rules.md#delegated-unfinished).

Claude Code reports each task it runs for the agent (WIRE, its SDK's ``SDKTaskStartedMessage``,
``SDKTaskUpdatedMessage``, ``SDKTaskNotificationMessage`` and ``SDKBackgroundTasksChangedMessage``):

* ``{"type":"system","subtype":"task_started","task_id","task_type","description",…}`` when a
  task starts (``task_type`` ``local_agent`` for a sub-agent, ``local_bash`` for a shell …);
* ``{"type":"system","subtype":"task_updated","task_id","patch":{"status",…}}`` as it changes;
* ``{"type":"system","subtype":"task_notification","task_id","status",…}`` when it ends, with
  ``status`` ``completed``, ``failed`` or ``stopped`` (a later one for the same task replaces it,
  when the agent resumed the task);
* ``{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id","task_type",…}]}``,
  every live background task after a change.

Delegated work is every task but the CLI's own shells and monitors (:data:`SHELL_TASK_TYPES`) and
the tasks it marks ``ambient`` (housekeeping): it must end ``completed`` — the one status
:data:`DONE_STATUSES` allows; any other status, one a newer CLI invents included, or none by the
end of the output, leaves it unfinished.  Shells and ambient tasks still running or stopped at
the end are only reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fullsend.adapters.runtimes.events import as_str

#: Task types that run a shell command or watch something for the agent: the CLI stops them at
#: its wind-down, and they do not decide the turn (issue 43).
SHELL_TASK_TYPES = frozenset({"local_bash", "monitor_mcp", "monitor_ws"})
#: The statuses that finish a task (allow-list: everything else is unfinished).
DONE_STATUSES = frozenset({"completed"})
RUNNING = "running"  # no notification yet
_TASK_SUBTYPES = ("task_started", "task_updated", "task_notification", "background_tasks_changed")


@dataclass
class Task:
    """One task: its type, what it is for, its last status and whether it is delegated work."""

    task_type: str
    description: str
    status: str = RUNNING
    ambient: bool = False

    @property
    def delegated(self) -> bool:
        """True for work the agent delegated (a sub-agent, a workflow …), not a shell or housekeeping."""
        return self.task_type not in SHELL_TASK_TYPES and not self.ambient

    @property
    def finished(self) -> bool:
        return self.status in DONE_STATUSES

    def label(self) -> str:
        """``sub-agent "fix it" (local_agent) stopped``: what, which type, how it ended."""
        what = {"local_agent": "sub-agent", "local_bash": "shell"}.get(self.task_type, "task")
        what = "monitor" if self.task_type.startswith("monitor_") else what
        ended = "still running" if self.status == RUNNING else self.status or "ended without a status"
        return f'{what} "{self.description}" ({self.task_type or "no type"}) {ended}'


def is_task_line(obj: dict[str, Any]) -> bool:
    """True for one of the CLI's task lines (see the module docstring)."""
    return obj.get("type") == "system" and obj.get("subtype") in _TASK_SUBTYPES


class TaskLedger:
    """Every task the CLI reported in one process, by ``task_id``, with its last status."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}

    def note(self, obj: dict[str, Any]) -> None:
        """Fold one task line (:func:`is_task_line`) in; a line without a ``task_id`` changes nothing."""
        subtype = obj.get("subtype")
        if subtype == "background_tasks_changed":
            items = obj.get("tasks")
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict):
                    self._task(item)
            return
        task = self._task(obj)
        if task is None:
            return
        if subtype == "task_started":
            task.status = RUNNING  # a resumed task starts a new run under the same id
        elif subtype == "task_notification":
            task.status = as_str(obj.get("status"))
        elif subtype == "task_updated":
            patch = obj.get("patch")
            status = patch.get("status") if isinstance(patch, dict) else None
            if isinstance(status, str) and status not in ("pending", RUNNING, "paused"):
                task.status = status  # an end (completed, failed, killed, or one we do not know)

    def _task(self, obj: dict[str, Any]) -> Task | None:
        task_id = as_str(obj.get("task_id"))
        if not task_id:
            return None
        task = self.tasks.get(task_id)
        if task is None:
            task = self.tasks[task_id] = Task(as_str(obj.get("task_type")), as_str(obj.get("description")))
        task.task_type = as_str(obj.get("task_type")) or task.task_type
        task.description = as_str(obj.get("description")) or task.description
        task.ambient = task.ambient or obj.get("ambient") is True
        return task

    def unfinished(self) -> list[Task]:
        """Delegated tasks that did not end ``completed``, in the order they started."""
        return [t for t in self.tasks.values() if t.delegated and not t.finished]

    def stopped_shells(self) -> list[Task]:
        """Shells, monitors and housekeeping tasks that did not end ``completed`` (reported only)."""
        return [t for t in self.tasks.values() if not t.delegated and not t.finished]
