"""GitHub Actions for the adopter-path plays: the jobs GitHub shows for each run an event started,
and act playing a run exactly as the repository's workflow files are written.

When the world's emitter creates a run (``on_run``), ``Actions`` does what GitHub's Route job
would have decided by then: it runs the product's own Route decision (``fullsend route``'s
``route()``, over HTTP against the simulator under the job token) with the Route step's inputs
evaluated from the workflow files (the shim's ``with:`` and the dispatch workflow's input
defaults), and lays the run's jobs as GitHub shows them: ``dispatch / Route`` completed/success,
the selected stage job ``queued`` (waiting for its concurrency group), every other job
``skipped``.  ``play`` then runs the run with act — the stage job ``in_progress`` meanwhile — and
checks that act's own Route job printed the same decision (so the prediction can never drift).

The dispatch workflow is read where the shim's ``uses:`` points: the adopter's repository at the
run's commit (``./…``), or the release's repository (``fullsend-ai/steer-action/…@<sha>``).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.commands.route import policy_of, route
from fullsend.core.model import Repo
from fullsend.core.route.decision import RouteDecision
from fullsend.core.route.event import route_event
from fullsend.simulator.events.emitter import EmittedRun
from fullsend.simulator.fixtures import JOB_TOKEN
from fullsend.simulator.issuer import JobIdentity
from fullsend.simulator.workflows.expressions import evaluate_value
from fullsend.simulator.workflows.triggers import load_workflow
from tests.act.act_harness import ActRun, run_act
from tests.act.adopter.world import OWNER, REPO, World
from tools.act.act_copy import for_act

SHIM = ".github/workflows/fullsend.yml"
#: Where the play puts the scripted agent (the repository variable FULLSEND_AGENT_CLI names it).
AGENT_IN_WORKSPACE = ".git/fullsend-scripted-agent"
AGENT_SCRIPT = '#!/bin/sh\nexec python -m fullsend.simulator.agent.main "$@"\n'
CALLER_JOB = "dispatch"


@dataclass(frozen=True)
class Settings:
    """What the adopter configured on GitHub: repository variables and secrets (model key, App key)."""

    variables: dict[str, str]
    secrets: dict[str, str]


@dataclass(frozen=True)
class ActEnv:
    """What act needs on this machine: its binary, podman's socket, the job image, and the
    ``--local-repository`` flags (the release's commits, the stand-ins)."""

    act_bin: Path
    docker_host: str
    job_image: str
    local_repositories: tuple[str, ...]


@dataclass
class Scheduled:
    """A run as ``Actions`` laid it: the emitted run, Route's decision, the job ids by name."""

    emitted: EmittedRun
    decision: RouteDecision
    jobs: dict[str, int] = field(default_factory=dict)
    stage_job: str = ""
    #: The dispatch workflow the shim's ``dispatch`` job calls, as GitHub names it in the stage
    #: job's OIDC token (``job_workflow_ref``: ``owner/repo/path@ref``, the ref as ``uses:`` pins it).
    job_workflow_ref: str = ""


@dataclass(frozen=True)
class Played:
    """A run act played: act's log, the run as scheduled, and the agent's log lines."""

    act: ActRun
    scheduled: Scheduled
    agent_log: list[dict[str, Any]]

    def agent_messages(self) -> list[str]:
        """The texts the agent consumed (its task first, then any steer), in order."""
        return [line["text"] for line in self.agent_log if "text" in line]

    def agent_steps(self) -> list[dict[str, Any]]:
        """The agent's work steps (``SCRIPTED_AGENT_WORK``), in order."""
        return [line for line in self.agent_log if "step" in line]


class Actions:
    """The runs of one world (module docstring)."""

    def __init__(self, world: World, settings: Settings, release_repo: Path, act: ActEnv, workspace: Path) -> None:
        self.world, self.settings, self.release_repo, self.act = world, settings, release_repo, act
        self.workspace = workspace
        self.scheduled: dict[int, Scheduled] = {}
        self._lock = threading.Lock()
        world.emitter.on_run.append(self._schedule)

    # ----------------------------------------------------------------------------- the jobs GitHub shows
    def _schedule(self, emitted: EmittedRun) -> None:
        if emitted.workflow_path != SHIM:
            return
        caller, dispatch = self._workflows(emitted)
        decision = self._decide(emitted, caller, dispatch)
        scheduled = Scheduled(emitted, decision, job_workflow_ref=_job_workflow_ref(caller, emitted.ref))
        sim = self.world.sim
        for key, job in (dispatch.get("jobs") or {}).items():
            name = f"{CALLER_JOB} / {job.get('name') or key}"
            if key == "route":
                scheduled.jobs[name] = sim.add_job(emitted.id, name, "completed", "success")["id"]
            elif decision.stage and key == decision.stage:
                scheduled.jobs[name] = sim.add_job(emitted.id, name, "queued")["id"]
                scheduled.stage_job = name
            else:
                scheduled.jobs[name] = sim.add_job(emitted.id, name, "completed", "skipped")["id"]
        if scheduled.stage_job:
            sim.update_workflow_run(emitted.id, status="in_progress")
        else:
            sim.update_workflow_run(emitted.id, status="completed", conclusion="success")
        with self._lock:
            self.scheduled[emitted.id] = scheduled

    def _workflows(self, emitted: EmittedRun) -> tuple[dict[str, Any], dict[str, Any]]:
        """The shim and the dispatch workflow its ``dispatch`` job calls, as this run reads them."""
        shim = load_workflow(self.world.git.git(OWNER, REPO, "show", f"{emitted.sha}:{SHIM}"))
        uses = str(shim["jobs"][CALLER_JOB]["uses"]).strip()
        if uses.startswith("./"):
            text = self.world.git.git(OWNER, REPO, "show", f"{emitted.sha}:{uses[2:]}")
        else:
            path, _, sha = uses.removeprefix("fullsend-ai/steer-action/").partition("@")
            text = _git(self.release_repo, "show", f"{sha}:{path}")
        return shim, load_workflow(text)

    def _decide(self, emitted: EmittedRun, shim: dict[str, Any], dispatch: dict[str, Any]) -> RouteDecision:
        github = {"repository": f"{OWNER}/{REPO}", "event_name": emitted.event, "event": emitted.payload}
        caller = shim["jobs"][CALLER_JOB]
        declared = ((dispatch.get("on") or {}).get("workflow_call") or {}).get("inputs") or {}
        inputs = {name: spec.get("default", "") for name, spec in declared.items() if isinstance(spec, dict)}
        outer = {"github": github, "vars": self.settings.variables}
        inputs.update({k: evaluate_value(str(v), outer) for k, v in (caller.get("with") or {}).items()})
        step = next(
            s
            for s in dispatch["jobs"]["route"]["steps"]
            if isinstance(s, dict) and (s.get("with") or {}).get("command") == "route"
        )
        inner = {"github": github, "vars": self.settings.variables, "inputs": inputs}
        environ = {f"INPUT_{k.upper()}": _text(evaluate_value(str(v), inner)) for k, v in step["with"].items()}
        forge = GitHubForge(Repo(OWNER, REPO), self.world.sim.api_url, "", JOB_TOKEN, "", SystemClock(), 15)
        event = route_event(emitted.event, emitted.payload, f"{OWNER}/{REPO}")
        return route(event, forge, policy_of(environ))

    # ----------------------------------------------------------------------------- playing a run
    def play(self, run_id: int, agent_env: Mapping[str, str], timeout_s: float = 420) -> Played:
        """Run ``run_id`` with act in the workspace — a fresh clone of the default branch, as the
        adopter's checkout act reads the workflows from, with the scripted agent in its ``.git``
        (tests/act/adopter/adopter.py); ``agent_env`` goes to the jobs' environment (the scripted
        agent's knobs).  The stage job shows ``in_progress`` while act runs, then its conclusion."""
        scheduled = self.scheduled[run_id]
        emitted, sim = scheduled.emitted, self.world.sim
        if scheduled.stage_job:
            sim.update_job(scheduled.jobs[scheduled.stage_job], status="in_progress", started_at=sim.now())
        event_file = self.workspace.parent / f"event-{run_id}.json"
        event_file.write_text(json.dumps(emitted.payload))
        shutil.rmtree(self.workspace, ignore_errors=True)
        header = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{JOB_TOKEN}".encode()).decode()
        clone = ["-c", f"http.extraheader={header}", "clone", "--quiet", self.world.clone_url(), str(self.workspace)]
        _git(self.workspace.parent, *clone)  # no token left in the clone's config
        for workflow in (self.workspace / ".github" / "workflows").glob("*.yml"):  # act's parse copy, in the
            workflow.write_text(for_act(workflow.read_text()))  # work tree only: checkout resets it
        agent = self.workspace / AGENT_IN_WORKSPACE
        agent.write_text(AGENT_SCRIPT)
        agent.chmod(0o755)
        label = f"run-{run_id}"
        argv = self._argv(scheduled, event_file, label, agent_env)
        played = run_act(self.act.act_bin, argv, self.workspace, self.act.docker_host, timeout_s)
        if scheduled.stage_job:
            stage = scheduled.stage_job.rsplit(" / ", 1)[-1]
            conclusion = "success" if played.job_result(stage) == "succeeded" else "failure"
            sim.update_job(
                scheduled.jobs[scheduled.stage_job], status="completed", conclusion=conclusion, completed_at=sim.now()
            )
            sim.update_workflow_run(run_id, status="completed", conclusion=conclusion)
        return Played(played, scheduled, self.world.agent_log.of(label))

    def _oidc_request_token(self, scheduled: Scheduled) -> str:
        """The run's ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``: the simulator's token service answers it
        with a token of this run's stage job, as GitHub's would (``id-token: write``): the shim at
        the run's ref calling the dispatch workflow, for the run's event, ref and commit."""
        emitted = scheduled.emitted
        token = f"sim-oidc-request-{emitted.id}"
        identity = JobIdentity(
            repository=f"{OWNER}/{REPO}",
            run_id=emitted.id,
            workflow_ref=f"{OWNER}/{REPO}/{SHIM}@{emitted.ref}",
            job_workflow_ref=scheduled.job_workflow_ref,
            event_name=emitted.event,
            ref=emitted.ref,
            actor=str(emitted.run["actor"]["login"]),
            sha=emitted.sha,
        )
        self.world.sim.issuer.add_request_token(token, identity)
        return token

    def _argv(self, scheduled: Scheduled, event_file: Path, label: str, agent_env: Mapping[str, str]) -> list[str]:
        world, emitted = self.world, scheduled.emitted
        env = {
            "GITHUB_API_URL": world.sim.api_url,
            "GITHUB_GRAPHQL_URL": world.sim.graphql_url,
            "GITHUB_SERVER_URL": world.web,
            "GITHUB_REPOSITORY": f"{OWNER}/{REPO}",
            "GITHUB_REPOSITORY_OWNER": OWNER,
            "GITHUB_RUN_ID": str(emitted.id),
            "GITHUB_REF": emitted.ref,
            "SHA_REF": emitted.sha,
            # GitHub's OIDC token endpoint for a job with id-token: write (the simulator plays it);
            # no FULLSEND_RECEIPT_ISSUER: the reader's issuer is the one GITHUB_SERVER_URL implies,
            # <web>/_services/token, as on GHES, where the simulator's issuer is.
            "ACTIONS_ID_TOKEN_REQUEST_URL": world.sim.oidc_request_url,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self._oidc_request_token(scheduled),
            "SCRIPTED_AGENT_LOG": f"{world.web}/_fullsend/agent-log/{label}",
            **agent_env,
        }
        argv = [emitted.event, "-e", str(event_file), "-W", SHIM, "-P", f"ubuntu-latest={self.act.job_image}"]
        argv += ["--pull=false", "--rebuild=false", "--rm", "--bind", "--container-daemon-socket", "-"]
        argv += ["--actor", str(emitted.run["actor"]["login"]), "-s", f"GITHUB_TOKEN={JOB_TOKEN}"]
        argv += [part for k, v in env.items() for part in ("--env", f"{k}={v}")]
        argv += [part for k, v in self.settings.variables.items() for part in ("--var", f"{k}={v}")]
        argv += [part for k, v in self.settings.secrets.items() for part in ("-s", f"{k}={v}")]
        argv += [part for mapping in self.act.local_repositories for part in ("--local-repository", mapping)]
        return argv


def _job_workflow_ref(shim: Mapping[str, Any], ref: str) -> str:
    """The ``job_workflow_ref`` of the stage job of a run of ``shim`` at ``ref``: the ``uses:`` of
    its ``dispatch`` job as pinned (``fullsend-ai/steer-action/…@<commit>``), or for a dispatch
    in the same repository (``./…``) ``owner/repo/<path>@<ref>``."""
    uses = str(shim["jobs"][CALLER_JOB]["uses"]).strip()
    return f"{OWNER}/{REPO}/{uses[2:]}@{ref}" if uses.startswith("./") else uses


def route_line(played: ActRun) -> str:
    """The decision act's Route job printed (``Route: event …/… -> stage '…'``), or ""."""
    return next((t for t in played.job_lines("Route") if "Route: event " in t), "")


def _text(value: Any) -> str:
    from fullsend.simulator.workflows.expressions import to_text

    return to_text(value)


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr[-2000:]}")
    return proc.stdout
