"""A hostile agent for the output-hygiene tests: the scripted agent behind a filter that prints
workflow commands on every channel an agent has (issue 8 "Output hygiene").

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
AGENT_FILTER = '''\
import json, subprocess, sys
LINES = json.load(open(sys.argv[1], encoding="utf-8"))
for line in LINES:
    print(line, file=sys.stderr, flush=True)
    print(line, flush=True)
child = subprocess.Popen([sys.executable, "-m", "fullsend.simulator.agent.main", *sys.argv[2:]],
                         stdout=subprocess.PIPE)
for raw in child.stdout:
    obj = json.loads(raw)
    if obj.get("type") == "assistant" and LINES:
        obj["message"]["content"] = [{"type": "text", "text": "\\n".join(LINES)}]
    print(json.dumps(obj), flush=True)
    for line in LINES:
        print(line, flush=True)
code = child.wait()
for line in LINES:
    print(line, file=sys.stderr, flush=True)
sys.exit(code)
'''


def write_agent(tmp: Path, lines: list[str]) -> str:
    """An executable wrapper: the filter around the scripted agent, printing ``lines``."""
    filter_py, lines_json = tmp / "agent_filter.py", tmp / "agent_lines.json"
    filter_py.write_text(AGENT_FILTER)
    lines_json.write_text(json.dumps(lines))
    wrapper = tmp / "agent"
    wrapper.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{filter_py}' '{lines_json}' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)
