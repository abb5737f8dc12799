"""Real work for the scripted agent: git, a review through ``fullsend review``, and the project
settings Claude Code would load (the adopter-path plays, ``tests/act/adopter/``).

``SCRIPTED_AGENT_WORK`` is a JSON list of steps the agent does, in order, during its first turn
(before that turn's ``result``), in its working directory (the checkout the action gave it) or,
when a step names one, in its ``dir`` below it (e.g. ``pull-request``, where the action checks out
the pull request's head):

- ``{"do": "record"}`` — log what the agent sees: the checkout's ``HEAD`` (read from ``.git``, so
  no git binary is needed), its branch, and the files under ``.fullsend/`` and ``.claude/``;
- ``{"do": "review", "url": …, "event": …, "body": …, "comments": [...]}`` — write the review
  document with ``commit_id`` = the checkout's ``HEAD`` (the commit read) to a temporary file and
  run ``fullsend review <url> --file <file>``, as the review prompt asks;
- ``{"do": "write", "path": …, "text": …}`` — write a file of the checkout;
- ``{"do": "commit", "message": …}`` — ``git add -A`` and ``git commit`` (the agent's name and
  e-mail from ``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL``, else ``scripted agent``);
- ``{"do": "push", "branch": …}`` — ``git push origin HEAD:refs/heads/<branch>`` (default: the
  checked-out branch) with NO credential of its own: only what the workflow and the action gave
  the checkout and the agent's environment.

Each step is logged as ``{"at", "step", "ok", "output"}`` (``SCRIPTED_AGENT_LOG``); a failed step
does not stop the others.  In Claude Code mode, before its first turn, the agent also runs the
``SessionStart`` hooks of the project settings Claude Code reads (``.claude/settings.json``,
``.claude/settings.local.json``; https://docs.claude.com/en/docs/claude-code/hooks), unless
``--setting-sources`` leaves ``project``/``local`` out, and logs ``{"hook": command}`` for each.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

STEP_TIMEOUT_S = 120
Log = Callable[[dict[str, Any]], None]


def workspace_head(root: Path) -> tuple[str, str]:
    """``(sha, branch)`` of the checkout at ``root`` from ``.git`` alone (branch "" when detached;
    sha "" when unreadable)."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
    except OSError:
        return "", ""
    if not head.startswith("ref: "):
        return head, ""
    ref = head.removeprefix("ref: ")
    branch = ref.removeprefix("refs/heads/")
    try:
        return (git / ref).read_text().strip(), branch
    except OSError:
        pass
    try:
        packed = (git / "packed-refs").read_text().splitlines()
    except OSError:
        return "", branch
    return next((line.split()[0] for line in packed if line.endswith(f" {ref}")), ""), branch


def _files(root: Path, folder: str) -> list[str]:
    base = root / folder
    return sorted(str(p.relative_to(root)) for p in base.rglob("*") if p.is_file()) if base.is_dir() else []


def _run(argv: list[str], root: Path) -> tuple[bool, str]:
    try:
        proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{argv[0]}: {exc}"
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()[-2000:]


def _step(step: dict[str, Any], root: Path) -> tuple[bool, str]:
    kind = step.get("do")
    if kind == "record":
        sha, branch = workspace_head(root)
        seen = {"head": sha, "branch": branch, "fullsend": _files(root, ".fullsend"), "claude": _files(root, ".claude")}
        return True, json.dumps(seen)
    if kind == "write":
        path = root / str(step["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(step["text"]), encoding="utf-8")
        return True, str(step["path"])
    if kind == "commit":
        name = os.environ.get("GIT_AUTHOR_NAME", "scripted agent")
        email = os.environ.get("GIT_AUTHOR_EMAIL", "scripted-agent@invalid")
        ok, out = _run(["git", "add", "-A"], root)
        identity = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
        return _run(["git", *identity, "commit", "-q", "-m", str(step["message"])], root) if ok else (ok, out)
    if kind == "push":
        branch = str(step.get("branch") or workspace_head(root)[1])
        return _run(["git", "push", "origin", f"HEAD:refs/heads/{branch}"], root)
    if kind == "review":
        doc: dict[str, Any] = {k: step[k] for k in ("event", "body", "comments") if k in step}
        doc["commit_id"] = workspace_head(root)[0]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(doc, handle)
        try:
            return _run(["fullsend", "review", str(step["url"]), "--file", handle.name], root)
        finally:
            os.unlink(handle.name)
    return False, f"unknown step {kind!r}"


def do_work(log: Log, root: Path | None = None) -> None:
    """Do the steps of ``SCRIPTED_AGENT_WORK`` in ``root`` (default: the working directory), each
    in its ``dir`` below ``root`` when it names one."""
    spec = os.environ.get("SCRIPTED_AGENT_WORK")
    if not spec:
        return
    root = root or Path.cwd()
    for step in json.loads(spec):
        try:
            ok, output = _step(step, root / str(step.get("dir", ".")))
        except (OSError, KeyError, ValueError) as exc:
            ok, output = False, f"{type(exc).__name__}: {exc}"
        log({"step": step.get("do"), "ok": ok, "output": output})


def project_hooks(argv: list[str], log: Log, root: Path | None = None) -> None:
    """Run the ``SessionStart`` hooks of the project's Claude Code settings (module docstring)."""
    root = root or Path.cwd()
    sources = argv[argv.index("--setting-sources") + 1].split(",") if "--setting-sources" in argv[:-1] else None
    for source, name in (("project", "settings.json"), ("local", "settings.local.json")):
        if sources is not None and source not in sources:
            continue
        try:
            settings = json.loads((root / ".claude" / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        groups = (settings.get("hooks") or {}).get("SessionStart") or [] if isinstance(settings, dict) else []
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks") or [] if isinstance(group, dict) else []:
                if isinstance(hook, dict) and hook.get("type") == "command" and isinstance(hook.get("command"), str):
                    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root)}
                    subprocess.run(
                        ["bash", "-c", hook["command"]], cwd=root, env=env, capture_output=True, timeout=60, check=False
                    )
                    log({"hook": hook["command"]})
