"""Simulator state for GitHub Actions: workflow runs and their jobs (docs/architecture.md "The simulator").

``StateBase`` holds what every part of the simulator shares (the lock, the clock, the URLs, id
counters); ``ActionsState`` adds the scripting calls for runs and jobs.  Every scripting call is
thread-safe and returns (a copy of) the stored JSON dict, the exact object the server answers with.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from fullsend.simulator.git_shapes import simple_commit_json
from fullsend.simulator.shapes import (
    Urls,
    fake_sha,
    format_ts,
    json_copy,
    minimal_repo_json,
    node_id,
    stable_id,
    user_json,
)

FIRST_RUN_ID = 30_000_000_000
FIRST_JOB_ID = 90_000_000_000


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StateBase:
    """Lock, clock, URLs and id counters shared by the state mixins (not used on its own)."""

    def __init__(self, urls: Urls, clock: Callable[[], datetime] | None = None) -> None:
        self._lock = threading.RLock()
        self._clock = clock or _utc_now
        self.urls = urls
        #: Called as ``listener(event, data)`` after a REST write GitHub sends a webhook event for
        #: (``notify``): the simulator's events (``fullsend.simulator.events``) listen here.
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        #: The commit a branch name points at (a git server's), or None: ``POST …/pulls`` needs it.
        self.branch_resolver: Callable[[str], str | None] | None = None

    def notify(self, event: str, **data: Any) -> None:
        """Tell every listener that ``event`` (a webhook event name) happened, with ``data``
        (``action``, ``number``, ``login`` and the records); a listener's error is raised."""
        for listener in list(self.listeners):
            listener(event, data)

    def now(self) -> str:
        """The simulator clock as RFC 3339 UTC to the second."""
        return format_ts(self._clock()) or ""

    def _ts(self, value: datetime | str | None, default: str | None = None) -> str | None:
        return format_ts(value) if value is not None else default

    def _user(self, login: str | dict | None, user_type: str | None = None) -> dict | None:
        """A ``simple-user`` from a login (``[bot]`` suffix ⇒ ``Bot`` unless a type is given)."""
        if login is None or isinstance(login, dict):
            return login
        kind = user_type or ("Bot" if login.lower().endswith("[bot]") else "User")
        return user_json(self.urls, login, kind)


class ActionsState(StateBase):
    """Workflow runs and jobs of the simulated repository."""

    def __init__(self, urls: Urls, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(urls, clock)
        self._runs: dict[int, dict[str, Any]] = {}
        self._jobs: dict[int, dict[str, Any]] = {}
        self._run_jobs: dict[int, list[int]] = {}
        self._workflow_paths: set[str] = set()

    # ----------------------------------------------------------------------------- runs
    def add_workflow_run(self, **fields: Any) -> dict[str, Any]:
        """Add a run; returns its JSON (``GET …/actions/runs/{id}`` shape).

        ``fields`` use GitHub's names and override the defaults: ``id`` (auto-increments above the
        largest id so far), ``path`` (default ``.github/workflows/ci.yml``), ``event`` (``push``),
        ``status`` (``queued``), ``conclusion`` (None), ``created_at`` (str kept verbatim, or
        datetime; default now), ``run_attempt`` (1), ``display_title`` (the workflow name),
        ``actor``/``triggering_actor`` (login str or user dict; default ``octocat``),
        ``pull_requests`` (PR numbers or dicts), ``referenced_workflows`` (``{path, ref, sha}``
        dicts), ``head_sha``, ``name`` and any other run field.  Every other field GitHub sends is
        filled (urls under the simulator's own base).
        """
        with self._lock:
            run_id = int(fields.pop("id", 0) or max([FIRST_RUN_ID, *self._runs]) + 1)
            if "actor" in fields:
                fields.setdefault("triggering_actor", fields["actor"])
            run = self._default_run(run_id, fields)
            run.update(self._run_fields(run, fields))
            if run["run_attempt"] and int(run["run_attempt"]) > 1 and "previous_attempt_url" not in fields:
                run["previous_attempt_url"] = f"{run['url']}/attempts/{int(run['run_attempt']) - 1}"
            self._runs[run_id] = run
            self._run_jobs.setdefault(run_id, [])
            self._workflow_paths.add(str(run["path"]))
            return json_copy(run)

    def update_workflow_run(self, run_id: int, **fields: Any) -> dict[str, Any]:
        """Change fields of a run (same conventions as ``add_workflow_run``); ``updated_at``
        becomes now unless given.  Raises ``KeyError`` for an unknown run."""
        with self._lock:
            run = self._runs[run_id]
            fields.setdefault("updated_at", self.now())
            run.update(self._run_fields(run, fields))
            return json_copy(run)

    def add_workflow(self, path: str) -> None:
        """Declare a workflow file that has no runs yet (its runs listing answers 200, not 404)."""
        with self._lock:
            self._workflow_paths.add(path)

    def knows_workflow(self, workflow: str) -> bool:
        """True when ``workflow`` (a file basename or a numeric workflow id) names a known workflow."""
        with self._lock:
            return any(workflow in (p.rsplit("/", 1)[-1], str(stable_id("workflow", p))) for p in self._workflow_paths)

    def delete_workflow_run(self, run_id: int) -> None:
        """Remove a run and its jobs (later reads answer 404)."""
        with self._lock:
            self._runs.pop(run_id, None)
            for job_id in self._run_jobs.pop(run_id, []):
                self._jobs.pop(job_id, None)

    def _default_run(self, run_id: int, fields: dict[str, Any]) -> dict[str, Any]:
        urls = self.urls
        path = str(fields.get("path", ".github/workflows/ci.yml"))
        file = path.rsplit("/", 1)[-1]
        name = str(fields.get("name", file.rsplit(".", 1)[0]))
        created = self._ts(fields.get("created_at"), self.now())
        head = str(fields.get("head_sha") or fake_sha("head", run_id))
        workflow_id = stable_id("workflow", path)
        suite = stable_id("suite", run_id, digits=11)
        url = f"{urls.repo_api}/actions/runs/{run_id}"
        actor = self._user("octocat")
        return {
            "id": run_id,
            "name": name,
            "node_id": node_id("WFR", run_id),
            "check_suite_id": suite,
            "check_suite_node_id": node_id("CS", suite),
            "head_branch": "main",
            "head_sha": head,
            "path": path,
            "display_title": name,
            "run_number": len(self._runs) + 1,
            "run_attempt": 1,
            "referenced_workflows": [],
            "event": "push",
            "status": "queued",
            "conclusion": None,
            "workflow_id": workflow_id,
            "url": url,
            "html_url": f"{urls.repo_web}/actions/runs/{run_id}",
            "pull_requests": [],
            "created_at": created,
            "updated_at": created,
            "actor": actor,
            "triggering_actor": actor,
            "run_started_at": created,
            "jobs_url": f"{url}/jobs",
            "logs_url": f"{url}/logs",
            "check_suite_url": f"{urls.repo_api}/check-suites/{suite}",
            "artifacts_url": f"{url}/artifacts",
            "cancel_url": f"{url}/cancel",
            "rerun_url": f"{url}/rerun",
            "previous_attempt_url": None,
            "workflow_url": f"{urls.repo_api}/actions/workflows/{workflow_id}",
            "head_commit": simple_commit_json(head, "Update", created or ""),
            "repository": minimal_repo_json(urls),
            "head_repository": minimal_repo_json(urls),
            "head_repository_id": urls.repo_id,
        }

    def _run_fields(self, run: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        """Normalise scripting values (datetimes, logins, PR numbers) to GitHub's JSON."""
        out = dict(fields)
        for key in ("created_at", "updated_at", "run_started_at"):
            if key in out:
                out[key] = self._ts(out[key])
        for key in ("actor", "triggering_actor"):
            if key in out:
                out[key] = self._user(out[key])
        if "pull_requests" in out and out["pull_requests"] is not None:
            out["pull_requests"] = [self._pr_minimal(p, run) for p in out["pull_requests"]]
        if "referenced_workflows" in out and out["referenced_workflows"] is not None:
            out["referenced_workflows"] = [dict(r) for r in out["referenced_workflows"]]
        if "head_sha" in out and isinstance(run.get("head_commit"), dict):
            out.setdefault("head_commit", {**run["head_commit"], "id": out["head_sha"]})
        return out

    def _pr_minimal(self, pr: int | dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
        """A ``pull-request-minimal`` for PR number ``pr`` (dicts pass through)."""
        if isinstance(pr, dict):
            return dict(pr)
        repo = {"id": self.urls.repo_id, "url": self.urls.repo_api, "name": self.urls.repo}
        head = self._pr_head(int(pr)) or str(run.get("head_sha", ""))
        return {
            "id": stable_id("pr", pr, digits=10),
            "number": int(pr),
            "url": f"{self.urls.repo_api}/pulls/{int(pr)}",
            "head": {"ref": "feature", "sha": head, "repo": dict(repo)},
            "base": {"ref": "main", "sha": fake_sha("base", pr), "repo": dict(repo)},
        }

    def _pr_head(self, number: int) -> str:
        """Current head sha of PR ``number`` if the items state knows it (overridden there)."""
        return ""

    # ----------------------------------------------------------------------------- jobs
    def add_job(
        self, run_id: int, name: str, status: str = "queued", conclusion: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Add a job to run ``run_id`` (``KeyError`` if unknown); returns the ``job`` JSON.

        ``completed_at`` is set for a completed job; ``extra`` overrides any job field.
        """
        with self._lock:
            run = self._runs[run_id]
            job_id = int(extra.pop("id", 0) or max([FIRST_JOB_ID, *self._jobs]) + 1)
            job = self._default_job(run, job_id, name, status, conclusion)
            job.update(self._job_fields(extra))
            self._jobs[job_id] = job
            self._run_jobs[run_id].append(job_id)
            return json_copy(job)

    def update_job(self, job_id: int, **fields: Any) -> dict[str, Any]:
        """Change fields of a job; moving to ``completed`` stamps ``completed_at`` (now) unless given."""
        with self._lock:
            job = self._jobs[job_id]
            if fields.get("status") == "completed" and "completed_at" not in fields:
                fields["completed_at"] = self.now()
            if fields.get("status") in ("in_progress", "completed") and job.get("runner_id") is None:
                fields = {**self._runner(job_id), **fields}
            job.update(self._job_fields(fields))
            return json_copy(job)

    def delete_job(self, job_id: int) -> None:
        """Remove a job from its run's listing (a page of jobs then shifts under a reader)."""
        with self._lock:
            job = self._jobs.pop(job_id, None)
            if job is not None:
                self._run_jobs.get(int(job["run_id"]), []).remove(job_id)

    def jobs_of(self, run_id: int) -> list[dict[str, Any]]:
        """Copies of the jobs of run ``run_id`` in creation order, every attempt (``KeyError`` if unknown)."""
        with self._lock:
            return [json_copy(self._jobs[j]) for j in self._run_jobs[run_id]]

    def jobs_listing(self, run_id: int, job_filter: str = "latest", attempt: int | None = None) -> list[dict[str, Any]]:
        """What GitHub lists for a run's jobs: ``filter=latest`` (the default) only the
        jobs of the run's latest attempt, ``filter=all`` those of every attempt, and
        ``…/attempts/{n}/jobs`` (``attempt``) those of attempt ``n``.  ``KeyError`` if unknown."""
        with self._lock:
            latest = int(self._runs[run_id].get("run_attempt") or 1)
            wanted = attempt if attempt is not None else (None if job_filter == "all" else latest)
            return [j for j in self.jobs_of(run_id) if wanted is None or int(j.get("run_attempt") or 1) == wanted]

    def rerun_workflow_run(self, run_id: int, job_names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Re-run a run as GitHub's "Re-run failed jobs" does: a new attempt (``run_attempt`` + 1,
        queued again) holding new records of the jobs named in ``job_names`` (default: those that
        did not conclude success, skipped or neutral), queued.  The jobs not re-run keep their
        records in the earlier attempt only, so the default listing no longer shows them.
        Returns the new job records.  ``KeyError`` for an unknown run."""
        with self._lock:
            run = self._runs[run_id]
            previous = int(run.get("run_attempt") or 1)
            done = {"success", "skipped", "neutral"}
            olds = [
                j
                for j in self.jobs_listing(run_id, attempt=previous)
                if (j["name"] in job_names if job_names is not None else j.get("conclusion") not in done)
            ]
            run.update(
                run_attempt=previous + 1,
                status="queued",
                conclusion=None,
                updated_at=self.now(),
                previous_attempt_url=f"{run['url']}/attempts/{previous}",
            )
            return [self.add_job(run_id, old["name"], "queued") for old in olds]

    def _default_job(
        self, run: dict[str, Any], job_id: int, name: str, status: str, conclusion: str | None
    ) -> dict[str, Any]:
        urls = self.urls
        created = run["created_at"]
        done = status == "completed"
        job = {
            "id": job_id,
            "run_id": run["id"],
            "run_url": run["url"],
            "run_attempt": run["run_attempt"],
            "node_id": node_id("CR", job_id),
            "head_sha": run["head_sha"],
            "url": f"{urls.repo_api}/actions/jobs/{job_id}",
            "html_url": f"{urls.repo_web}/actions/runs/{run['id']}/job/{job_id}",
            "status": status,
            "conclusion": conclusion,
            "created_at": created,
            "started_at": created,
            "completed_at": created if done else None,
            "name": name,
            "steps": [],
            "check_run_url": f"{urls.repo_api}/check-runs/{job_id}",
            "labels": ["ubuntu-latest"],
            "runner_id": None,
            "runner_name": None,
            "runner_group_id": None,
            "runner_group_name": None,
            "workflow_name": run["name"],
            "head_branch": run["head_branch"],
        }
        if status in ("in_progress", "completed"):
            job.update(self._runner(job_id))
        return job

    @staticmethod
    def _runner(job_id: int) -> dict[str, Any]:
        return {
            "runner_id": job_id % 1000 + 1,
            "runner_name": f"GitHub Actions {job_id % 1000 + 1}",
            "runner_group_id": 2,
            "runner_group_name": "GitHub Actions",
        }

    def _job_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        out = dict(fields)
        for key in ("created_at", "started_at", "completed_at"):
            if key in out:
                out[key] = self._ts(out[key])
        return out

    # ----------------------------------------------------------------------------- reads
    def get_run(self, run_id: int) -> dict[str, Any] | None:
        """A copy of run ``run_id`` or ``None``."""
        with self._lock:
            run = self._runs.get(run_id)
            return json_copy(run) if run is not None else None

    def runs(self) -> list[dict[str, Any]]:
        """Copies of every run, in id order."""
        with self._lock:
            return [json_copy(self._runs[k]) for k in sorted(self._runs)]
