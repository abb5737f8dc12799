"""``expected_denials`` in Claude Code's permission-rule syntax (docs/rules.md#tool-refused): which
refused call each rule form covers, and that a rule that does not parse covers nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.permission_rules import RuleContext, rule_matches
from fullsend.core.final_word import ToolDenial

WHERE = RuleContext(("/runner/work/repo", "/sandbox/workspace"), "/agent-home")


def call(name: str, **tool_input: Any) -> ToolDenial:
    return ToolDenial(name, "toolu_1", json.dumps(tool_input))


@pytest.mark.parametrize(
    ("rule", "denial", "covered"),
    [
        ("Bash", call("Bash", command="rm -rf /"), True),
        ("Bash(*)", call("Bash", command="anything"), True),
        ("Bash", call("Read", file_path="/etc/passwd"), False),
        ("Bash(git push:*)", call("Bash", command="git push origin main"), True),
        ("Bash(git push:*)", call("Bash", command="git push"), True),
        ("Bash(git push:*)", call("Bash", command="git pushx"), False),
        ("Bash(git push:*)", call("Bash", command="git status && git push"), False),
        ("Bash(npm * --save)", call("Bash", command="npm install left-pad --save"), True),
        ("Bash(ls *)", call("Bash", command="ls"), True),
        ("Bash(npm run build)", call("Bash", command="npm run build"), True),
        ("Bash(npm run build)", call("Bash", command="npm run build:prod"), False),
        ("Read(./secrets/**)", call("Read", file_path="/runner/work/repo/secrets/a/key.pem"), True),
        ("Read(./secrets/**)", call("Read", file_path="/sandbox/workspace/secrets/key.pem"), True),
        ("Read(./secrets/**)", call("Read", file_path="/runner/work/repo/public/key.pem"), False),
        ("Read(*.env)", call("Read", file_path="/runner/work/repo/deep/dir/.env"), True),
        ("Read(//etc/**)", call("Read", file_path="/etc/passwd"), True),
        ("Read(~/.ssh/**)", call("Read", file_path="/agent-home/.ssh/id_rsa"), True),
        ("Edit(/src/**/*.ts)", call("Edit", file_path="/runner/work/repo/src/a/b.ts"), True),
        ("Edit(/src/**/*.ts)", call("Edit", file_path="/runner/work/repo/src/a/b.js"), False),
        ("Edit(/src/*.ts)", call("Edit", file_path="/runner/work/repo/src/a/b.ts"), False),
        ("WebFetch(domain:example.com)", call("WebFetch", url="https://example.com/x"), True),
        ("WebFetch(domain:example.com)", call("WebFetch", url="https://evil.example.com.attacker.io/"), False),
        ("WebFetch(domain:*.example.com)", call("WebFetch", url="https://docs.example.com/"), True),
        ("mcp__github", call("mcp__github__create_issue", title="x"), True),
        ("mcp__github__*", call("mcp__github__create_issue", title="x"), True),
        ("mcp__github", call("mcp__gitlab__create_issue", title="x"), False),
        ("Agent(Explore)", call("Agent", subagent_type="Explore", prompt="look"), True),
        ("Agent(Explore)", call("Agent", subagent_type="general-purpose", prompt="look"), False),
        ("Bash(unclosed", call("Bash", command="x"), False),
        ("", call("Bash", command="x"), False),
    ],
)
def test_each_rule_form_covers_what_the_cli_means_by_it(rule: str, denial: ToolDenial, covered: bool) -> None:
    assert rule_matches(rule, denial, WHERE) is covered
