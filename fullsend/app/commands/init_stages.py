"""What ``fullsend init`` knows about each stage and runtime (docs/adopting.md "Start with fullsend init").

Per stage: its job name, the role it acts as, the event expression that names the work item, the
scopes the job token needs for the receipt, the scopes the role token's GitHub App token is
narrowed to, and the starter text of its task and agent definition.  Per runtime: the model
secret the shim passes and the stage step hands to the agent.
"""

from __future__ import annotations

from dataclasses import dataclass

ISSUE_FIRST = "github.event.issue.number || github.event.pull_request.number"
PR_FIRST = "github.event.pull_request.number || github.event.issue.number"


@dataclass(frozen=True)
class StageSpec:
    """One stage as ``fullsend init`` writes it (see the module docstring)."""

    stage: str
    title: str
    role: str
    item: str
    receipt_scopes: tuple[str, ...]
    app_permissions: tuple[tuple[str, str], ...]
    task: str
    duty: str


STAGE_SPECS: dict[str, StageSpec] = {
    spec.stage: spec
    for spec in (
        StageSpec(
            "triage",
            "Triage",
            "triage",
            ISSUE_FIRST,
            ("issues", "pull-requests"),
            (("contents", "read"), ("issues", "write")),
            "Triage the issue this run works on: reproduce or locate it, label it, and post one comment with "
            "what you found and what should happen next.",
            "You read issues, find what they are about in the code, and label and answer them.",
        ),
        StageSpec(
            "code",
            "Code",
            "coder",
            ISSUE_FIRST,
            ("issues",),
            (("contents", "write"), ("issues", "write"), ("pull-requests", "write")),
            "Implement the issue this run works on in a new branch, with tests, and open a pull request "
            "that says what you changed and why.",
            "You implement issues as small, tested pull requests.",
        ),
        StageSpec(
            "review",
            "Review",
            "review",
            PR_FIRST,
            ("pull-requests",),
            (("contents", "read"), ("pull-requests", "write")),
            "Review the pull request this run works on for correctness and risk. Its head is checked out in "
            "pull-request/ with its history; the workspace root holds only the base branch's settings, and "
            "`git rev-parse HEAD` there is the base commit, so `git -C pull-request diff $(git rev-parse "
            'HEAD)...HEAD` is the change. Post one review: write it as JSON ({"commit_id": the output of '
            '`git -C pull-request rev-parse HEAD`, "body": …, "event": "REQUEST_CHANGES" when you have '
            'findings the author must address, else "COMMENT", "comments": [{"path": the file\'s path in '
            'the repository (without pull-request/), "line": …, "body": …}]}) and run '
            "`fullsend review <pull request URL> --file review.json`.",
            "You review pull requests: correctness first, then risk, then clarity.",
        ),
        StageSpec(
            "fix",
            "Fix",
            "coder",
            PR_FIRST,
            ("pull-requests",),
            (("contents", "write"), ("pull-requests", "write")),
            "Address the review of the pull request this run works on. Its head branch is checked out in "
            "pull-request/ (the workspace root holds only the base branch's settings): work there, commit "
            "one point at a time and push with `git -C pull-request push` (git authenticates as your App); "
            "then reply to each review comment with what you did.",
            "You fix pull requests after review, one commit per point.",
        ),
        StageSpec(
            "retro",
            "Retro",
            "retro",
            PR_FIRST,
            ("issues", "pull-requests"),
            (("contents", "read"), ("issues", "write"), ("pull-requests", "read")),
            "Look back at the work item this run works on and post one comment: what went well, what did "
            "not, and one concrete improvement.",
            "You write short retrospectives of finished work.",
        ),
        StageSpec(
            "prioritize",
            "Prioritize",
            "prioritize",
            ISSUE_FIRST,
            ("issues", "pull-requests"),
            (("issues", "write"),),
            "Prioritize the issue this run works on against the open issues: set one priority label and say "
            "why in one comment.",
            "You rank issues by impact and urgency.",
        ),
    )
}

#: Per runtime, the model secret(s) the shim passes and the stage step gives the agent.
MODEL_SECRETS: dict[str, tuple[str, ...]] = {
    "claude": ("ANTHROPIC_API_KEY",),
    "pi": ("ANTHROPIC_API_KEY",),
    "codex": ("OPENAI_API_KEY",),
}
SECRET_WHY = {
    "ANTHROPIC_API_KEY": "The model key the agent uses (Anthropic).",
    "OPENAI_API_KEY": "The model key the agent uses (OpenAI).",
    "FULLSEND_APP_PRIVATE_KEY": "The private key of the GitHub App whose installation token is the role token.",
    "FULLSEND_REVIEW_APP_PRIVATE_KEY": "The private key of the review App (empty: the review job uses the App above).",
}
