"""Hostile agents: for the output-hygiene tests, the scripted agent behind a filter that prints
workflow commands on every channel an agent has (issue 8 "Output hygiene"); for the isolation
tests, ``HUNTER``, which hunts for the job token and tries to write the file-command files
(issue 19).

``write_agent(dir, lines)`` writes an executable usable as ``agent_cli``: it prints ``lines`` on
stderr and as raw stdout lines, replaces the text of every assistant message with them, and
otherwise behaves as ``fullsend.simulator.agent.main`` (same argv, stdin, exit code).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MARK = "AGENT-INJECTED"
HOSTILE_LINES = [
    "::set-output name=x::y",
    f"::set-output name=outcome::{MARK}",
    "::add-mask::Review",
    f"::add-mask::{MARK}",
    f"::error::{MARK} the build is broken",
    f"::error file=action.yml,line=1,title={MARK}::{MARK}",
    f"::warning::{MARK}",
    f"::notice::{MARK}",
    f"::set-env name=FULLSEND_{MARK.replace('-', '_')}::1",
    f"::add-path::/tmp/{MARK}",
    "::stop-commands::agent-token",
    "::agent-token::",
    f"##[set-output name=steers;]{MARK}",
    f"##[error]{MARK}",
]
#: The filter: stderr and raw stdout get the lines; every assistant text becomes them.
AGENT_FILTER = """\
import json, subprocess, sys
LINES = json.load(open(sys.argv[1], encoding="utf-8"))
for line in LINES:
    print(line, file=sys.stderr, flush=True)
    print(line, flush=True)
child = subprocess.Popen([sys.executable, "-m", "fullsend.simulator.agent.main", *sys.argv[2:]],
                         stdout=subprocess.PIPE)
for raw in child.stdout:
    try:
        obj = json.loads(raw)
    except ValueError:  # not a stream line (e.g. the --version answer): passed through
        sys.stdout.write(raw.decode("utf-8", "replace"))
        continue
    if obj.get("type") == "assistant" and LINES:
        obj["message"]["content"] = [{"type": "text", "text": "\\n".join(LINES)}]
    print(json.dumps(obj), flush=True)
    for line in LINES:
        print(line, flush=True)
code = child.wait()
for line in LINES:
    print(line, file=sys.stderr, flush=True)
sys.exit(code)
"""


def write_agent(tmp: Path, lines: list[str]) -> str:
    """An executable wrapper: the filter around the scripted agent, printing ``lines``."""
    filter_py, lines_json = tmp / "agent_filter.py", tmp / "agent_lines.json"
    filter_py.write_text(AGENT_FILTER)
    lines_json.write_text(json.dumps(lines))
    wrapper = tmp / "agent"
    wrapper.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{filter_py}' '{lines_json}' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


#: The hunt of issue 19: run as the agent (then it execs the scripted agent) or as a script.
#: ``HUNT_NEEDLES`` holds each secret in two halves, so no environment entry holds one whole (the
#: action would drop it by value); ``HUNT_DECOY`` is planted where the hunter can read it, so a
#: hunt that finds nothing is known to have looked.  The report lists where a needle was seen,
#: which file-command files it could write, and what it tried.
HUNTER = r"""
import glob, json, os, stat, sys

WHO = sys.argv[1]
if WHO == "agent" and sys.argv[2:] == ["--version"]:  # the action's version check, not the agent at work
    os.execv(sys.executable, [sys.executable, "-m", "fullsend.simulator.agent.main", "--version"])
NEEDLES = {name: a + b for name, (a, b) in json.loads(os.environ["HUNT_NEEDLES"]).items()}
MARK = "HUNTER-WROTE-THIS"
LIMIT = 8 << 20
report = {"who": WHO, "uid": os.getuid(), "euid": os.geteuid(), "found": [], "wrote": [], "denied": [],
          "processes": 0, "files": 0, "mem_read": [], "home_writable": None}


def check(data, where):
    for name, needle in NEEDLES.items():
        if data and needle.encode() in data:
            report["found"].append(f"{name} in {where}")


def read(path, limit=LIMIT):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        report["denied"].append(path)
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) and not path.startswith(("/proc/", "/dev/fd/")):
            return None
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        report["denied"].append(path)
        return None
    finally:
        os.close(fd)


def memory(pid):
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError:
        report["denied"].append(f"/proc/{pid}/mem")
        return
    with mem:
        got = 0
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                data = mem.read(min(end - start, 64 << 20))
            except (OSError, OverflowError, ValueError):
                continue
            got += len(data)
            check(data, f"/proc/{pid}/mem")
        if got:
            report["mem_read"].append(pid)


def processes():
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        report["processes"] += 1
        for name in ("environ", "cmdline"):
            check(read(f"/proc/{pid}/{name}"), f"/proc/{pid}/{name}")
        memory(pid)


def descriptors():
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            data = os.pread(int(fd), LIMIT, 0)
        except OSError:
            continue
        check(data, f"inherited fd {fd} ({target})")


def trees(roots):
    seen = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in ("/proc", "/sys")]
            for name in filenames:
                path = os.path.join(dirpath, name)
                if path in seen or os.path.islink(path):
                    continue
                seen.add(path)
                report["files"] += 1
                check(read(path), path)


def write_file_commands(dirs):
    for directory in dirs:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            report["denied"].append(directory)
            continue
        for name in names:
            path = os.path.join(directory, name)
            try:
                with open(path, "a") as fh:
                    fh.write(f"hunted_{WHO}={MARK}\n")
                report["wrote"].append(path)
            except OSError:
                report["denied"].append(path)
        try:
            with open(os.path.join(directory, f"new_{WHO}"), "w") as fh:
                fh.write(MARK)
            report["wrote"].append(os.path.join(directory, f"new_{WHO}"))
        except OSError:
            pass


processes()
descriptors()
home = os.environ.get("HOME", "")
try:
    with open(os.path.join(home, f".hunter-{WHO}"), "w") as fh:  # the CLIs write their config there
        fh.write("ok")
    report["home_writable"] = True
except OSError:
    report["home_writable"] = False
default_roots = [os.getcwd(), home, "/tmp", "/var/tmp", os.environ.get("TMPDIR", ""), "/github"]
roots = os.environ["HUNT_ROOTS"].split(os.pathsep) if os.environ.get("HUNT_ROOTS") else default_roots
trees([t for pattern in roots if pattern for t in sorted(glob.glob(pattern)) if os.path.isdir(t)])
write_file_commands(os.environ["HUNT_FILE_COMMANDS"].split(os.pathsep))
report["denied"] = sorted(set(report["denied"]))[:200]
with open(os.path.join(os.environ["HUNT_REPORT_DIR"], f"{WHO}.json"), "w") as fh:
    json.dump(report, fh)
if WHO == "agent":
    os.execv(sys.executable, [sys.executable, "-m", "fullsend.simulator.agent.main", *sys.argv[2:]])
"""


def hunt_env(
    needles: dict[str, str], report_dir: str, file_commands: list[str], roots: list[str] | None = None
) -> dict[str, str]:
    """The step env the hunter reads: each needle in halves, where to report, the file-command
    directories to write into, and the trees to search (glob patterns; default: the working
    directory, ``HOME``, ``/tmp``, ``/var/tmp``, ``TMPDIR`` and ``/github``)."""
    halves = {name: (value[: len(value) // 2], value[len(value) // 2 :]) for name, value in needles.items()}
    env = {
        "HUNT_NEEDLES": json.dumps(halves),
        "HUNT_REPORT_DIR": report_dir,
        "HUNT_FILE_COMMANDS": ":".join(file_commands),
    }
    if roots:
        env["HUNT_ROOTS"] = ":".join(roots)
    return env
