"""Helpers of the act tests (issue 10): what is missing and how to install it, the simulator as
a ``fullsend simulator serve`` process, act itself, the README's act block, and reading act's log.

act prints each job's log lines as ``[<workflow>/<job>] <text>``; a step's own output lines
read ``[...]   | <line>``, and a step starts with ``[...] ⭐ Run Main <step name>``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ACT_VENV = Path(os.environ.get("FULLSEND_ACT_VENV", REPO_ROOT / ".venv-act"))
CACHE_DIR = Path(os.environ.get("FULLSEND_CACHE_DIR", Path.home() / ".cache" / "fullsend"))
SCENARIO = REPO_ROOT / "examples" / "scenarios" / "review-steer.yml"
FIRST_EVENT = "examples/scenarios/review-steer.event.json"
QUEUED_EVENT = "examples/scenarios/review-steer.queued.event.json"
MY_RUN, FOLLOW_UP_RUN = 33740015232, 33740015300
APT_HINT = "apt-get install -y podman runc debootstrap"
ACT_HINT = "python3 -m venv .venv-act && .venv-act/bin/pip install --require-hashes -r requirements-act.txt"
_LINE = re.compile(r"^\[(?P<job>[^\]]*?)\s*\] (?P<text>.*)$")


def missing_prerequisites(
    which: Callable[[str], str | None] = shutil.which,
    act_bin: Path | None = None,
    base_cached: bool | None = None,
    is_root: bool | None = None,
) -> list[str]:
    """One phrase per missing part of the act setup, naming it and, in brackets, how to get it ([]
    when all is there); the act tests skip (or fail under CI) with them all on one line.  The arguments default to this machine (tests inject fakes)."""
    act_bin = act_bin if act_bin is not None else ACT_VENV / "bin" / "act"
    if base_cached is None:
        base_cached = (CACHE_DIR / "container" / "debian-bookworm-slim.tar").exists()
    missing = [
        f"{tool} ({APT_HINT})" for tool in ("podman", os.environ.get("PODMAN_RUNTIME", "runc")) if which(tool) is None
    ]
    if which("debootstrap") is None and not base_cached:
        missing.append(f"debootstrap, which makes the local base image debian:bookworm-slim once ({APT_HINT})")
    if not (act_bin.is_file() and os.access(act_bin, os.X_OK)):
        missing.append(f"act at {act_bin} ({ACT_HINT})")
    if not (os.geteuid() == 0 if is_root is None else is_root):
        missing.append("root: the act tests run podman and its service as root, as CI does (run them as root)")
    return missing


def script(argv: list[str], what: str, timeout_s: float, env: Mapping[str, str] | None = None) -> str:
    """Run one of the tools/ scripts; returns its last stdout line.  Raises ``AssertionError``
    with the script's own explanation (stderr tail) when it fails."""
    proc = subprocess.run(
        argv,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=dict(env) if env is not None else None,
    )
    if proc.returncode != 0:
        raise AssertionError(f"{what} failed (exit {proc.returncode}):\n{proc.stderr[-5000:]}\n{proc.stdout[-1000:]}")
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else ""


# ------------------------------------------------------------------------------------ simulator
@dataclass
class SimulatorProcess:
    """``fullsend simulator serve --port 0 --scenario … [--repository DIR]`` as a child process;
    ``lines`` collects everything it prints."""

    proc: subprocess.Popen[str]
    api_url: str
    act_flags: list[str]
    lines: list[str] = field(default_factory=list)

    @classmethod
    def start(
        cls, scenario: Path = SCENARIO, repository: Path | None = None, timeout_s: float = 30
    ) -> SimulatorProcess:
        argv = [sys.executable, "-m", "fullsend", "simulator", "serve", "--port", "0", "--scenario", str(scenario)]
        proc = subprocess.Popen(
            argv + (["--repository", str(repository)] if repository else []),
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        head: list[str] = []
        deadline = time.monotonic() + timeout_s
        for line in proc.stdout:  # type: ignore[union-attr]
            head.append(line.rstrip("\n"))
            if line.startswith("Serving;") or time.monotonic() > deadline:
                break
        text = "\n".join(head)
        api = re.search(r"GITHUB_API_URL +(\S+)", text)
        if api is None or not head[-1].startswith("Serving;"):
            proc.kill()
            raise AssertionError(f"fullsend simulator serve did not start:\n{text}")
        flags_at = next(i for i, line in enumerate(head) if line.startswith("act flags"))
        flags = [part for line in head[flags_at + 1 : -1] for part in shlex.split(line)]
        served = cls(proc, api.group(1), flags, head)
        threading.Thread(target=served._drain, daemon=True).start()
        return served

    def _drain(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.append(line.rstrip("\n"))

    def stop(self) -> int:
        """SIGTERM (the command stops cleanly on it); returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        return int(self.proc.returncode)


# ------------------------------------------------------------------------------------ act
@dataclass(frozen=True)
class ActRun:
    """One finished act invocation: exit code and its whole log (stdout and stderr)."""

    exit_code: int
    log: str

    def job_lines(self, job: str) -> list[str]:
        """The log lines of the job whose display name ends with ``/<job>``."""
        out = []
        for line in self.log.splitlines():
            m = _LINE.match(line)
            if m and m["job"].rsplit("/", 1)[-1].strip() == job:
                out.append(m["text"])
        return out

    def step_output(self, job: str, step: str) -> list[str]:
        """What the step named ``step`` of ``job`` printed (its ``| …`` lines)."""
        lines, inside = [], False
        for text in self.job_lines(job):
            if "⭐ Run " in text:
                inside = text.endswith(f"Run Main {step}")
            elif inside and text.startswith("  | "):
                lines.append(text[4:])
        return lines

    def shown_outputs(self, job: str = "Review") -> dict[str, str]:
        """The ``name=value`` lines of the example's "Show the outputs" step."""
        return dict(line.split("=", 1) for line in self.step_output(job, "Show the outputs") if "=" in line)

    def job_result(self, job: str) -> str:
        """``succeeded``, ``failed`` or ``""`` (never finished) from act's closing line of ``job``."""
        ends = [t for t in self.job_lines(job) if t.startswith("🏁  Job ")]
        return ends[-1].removeprefix("🏁  Job ").strip() if ends else ""


def run_act(act_bin: Path, argv: list[str], cwd: Path, docker_host: str, timeout_s: float = 300) -> ActRun:
    """Run act with ``argv`` in ``cwd`` against ``docker_host``.  On a timeout the containers act
    made during this call are removed and ``AssertionError`` says so, with the log so far."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_", "GH_"))}
    env["DOCKER_HOST"] = docker_host
    before = _act_containers()
    proc = subprocess.Popen(
        [str(act_bin), *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        log, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        for name in sorted(_act_containers() - before):
            subprocess.run(["podman", "rm", "--force", "--time", "0", name], capture_output=True, timeout=60)
        raise AssertionError(f"act did not finish within {timeout_s:g} s; its log:\n{log[-8000:]}") from None
    return ActRun(proc.returncode, log)


def _act_containers() -> set[str]:
    out = subprocess.run(
        ["podman", "ps", "--all", "--format", "{{.Names}}"], capture_output=True, text=True, timeout=60
    )
    return {name for name in out.stdout.split() if name.startswith("act-")}


def act_argv(
    event: str, run_id: int, sim_flags: list[str], job_image: str, agent_log: Path, event_name: str = "issue_comment"
) -> list[str]:
    """The act command line of README "Run it locally with act" (the simulator's printed flags,
    with ``GITHUB_RUN_ID`` set to ``run_id``) for an ``event_name`` event read from ``event``."""
    flags = [f for f in sim_flags]
    at = flags.index(f"GITHUB_RUN_ID={MY_RUN}")
    flags[at] = f"GITHUB_RUN_ID={run_id}"
    return [
        event_name,
        "-e",
        event,
        "-W",
        ".github/workflows/fullsend.yml",
        "-P",
        f"ubuntu-latest={job_image}",
        "--pull=false",
        "--rebuild=false",
        "--rm",
        "--bind",
        "--container-daemon-socket",
        "-",
        *flags,
        "--var",
        "FULLSEND_AGENT_CLI=.git/fullsend-scripted-agent",
        "--env",
        "SCRIPTED_AGENT_TURN_S=8",
        "--env",
        f"SCRIPTED_AGENT_LOG={agent_log}",
    ]


# ------------------------------------------------------------------------------------ README
def readme_act_block(readme: Path = REPO_ROOT / "README.md") -> str:
    """The second ```sh block of README's "Run it locally with act" section (the run itself)."""
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Run it locally with act\n", 1)
    if len(section) != 2:
        raise AssertionError("README.md has no section '## Run it locally with act'")
    body = section[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", body, re.S)
    if len(blocks) != 2:
        raise AssertionError(f"README's act section should hold 2 sh blocks (setup, run); it holds {len(blocks)}")
    return blocks[1]


# Wall times of the act tier, printed at the end of the session by tests/act/conftest.py.
TIMINGS: list[tuple[str, float]] = []
