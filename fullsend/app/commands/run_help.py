"""``fullsend run --help``: the action's inputs and where each part of the configuration comes from.

The names are the inputs of ``action.yml`` (a test keeps the two lists equal); the one-line
descriptions here are shortened from it.
"""

from __future__ import annotations

#: input name → (default shown, one line about it).  Order: as ``action.yml`` lists them.
INPUTS: dict[str, tuple[str, str]] = {
    "github_token": ("the job token", "reads the Actions API; writes and reads receipts"),
    "role_token": ("", "a role token the workflow already holds (e.g. a GitHub App token)"),
    "mint_url": ("", "token mint: with 'role', exchanges the job's OIDC token for the role token"),
    "role": ("", "the role to mint for (overrides the harness 'role')"),
    "command": ("run", "run: this agent run; route: the Route job's decision (fullsend route)"),
    "stages": ("", "route: the stages this repository enabled (empty: all)"),
    "allowed_users": ("", "route: the only users whose events may start a stage (empty: anyone with the role)"),
    "allowed_bots": ("", "route: the only Apps whose events start a stage for being an App (empty: any)"),
    "trigger_phrase": ("", "route: a word that, followed by a stage name, is that stage's command"),
    "label_triggers": ("", "route: label=stage pairs; adding the label selects the stage"),
    "assignee_triggers": ("", "route: login=stage pairs; assigning the login selects the stage"),
    "max_fix_rounds": (
        "3",
        "route: how many of the review App's changes_requested reviews on a pull request start a fix",
    ),
    "review_app": ("<owner>-review[bot]", "route: the App whose changes_requested review starts a fix"),
    "stage": ("required", "triage, code, review, fix, retro or prioritize"),
    "item": ("from the event", "the issue or pull request number"),
    "runtime": ("claude", "claude, pi or codex"),
    "agent_cli": ("the runtime's CLI", "the agent executable: a path or a name on PATH"),
    "model": ("", "the model passed to the runtime"),
    "fallback_models": ("", "comma-separated fallback models"),
    "agent_args": ("", "extra arguments for the runtime's CLI, one per line"),
    "codex_transport": ("auto", "codex only: auto, app-server (steer into the turn) or exec (interrupt, resume)"),
    "prompt": ("", "the agent's task (this, prompt_file or the harness 'prompt')"),
    "prompt_file": ("", "a file holding the agent's task, relative to GITHUB_WORKSPACE"),
    "harness": ("", "a harness YAML relative to GITHUB_WORKSPACE"),
    "steer_enabled": ("", "override the harness steer.enabled"),
    "max_steers": ("", "override the harness steer.max_steers"),
    "poll_interval_seconds": ("", "override the harness steer.poll_interval_seconds"),
    "timeout_minutes": ("30", "the agent's timeout"),
    "delegated_wait_seconds": ("600", "how long the agent may wait for work it delegated once its input closed"),
    "expected_denials": ("", "tool refusals that do not fail the run, one CLI permission pattern per line"),
    "sandbox": ("local", "local or openshell"),
    "openshell_cli": ("", "the openshell CLI when it is not on PATH"),
    "self_logins": ("", "more logins whose comments are the run's own output"),
    "review_bot_logins": ("", "review App logins (for the review-App skip)"),
    "pre_script": ("", "a shell command before the agent; exit 78 skips the run"),
    "post_script": ("", "a shell command after a successful agent run"),
    "validation_script": ("", "a command after each iteration; non-zero runs another"),
    "max_iterations": ("1", "iterations of the validation loop"),
    "status_comment": ("true", "post a start comment and finish it with the status"),
    "status_interval_seconds": ("10", "at most one edit of the status comment per this many seconds"),
    "allow_shared_uid": ("false", "run the agent under the action's own uid (no receipts)"),
    "allow_unsigned_receipts": ("false", "honour (and, unable to sign, post) receipts without an OIDC proof"),
    "receipt_issuer": ("", "the OIDC issuer that signs receipts (empty: GITHUB_SERVER_URL's)"),
    "fullsend_dir": (".fullsend", "where providers/ and harness files live"),
}


def run_epilog() -> str:
    """The text after ``fullsend run --help``'s usage: where the configuration comes from, then
    one line per input (``INPUT_<NAME>``, default, what it is)."""
    width = max(len(name) for name in INPUTS) + len("INPUT_")
    rows = []
    for name, (default, about) in INPUTS.items():
        shown = f" (default: {default})" if default and default != "required" else (" (required)" if default else "")
        rows.append(f"  {('INPUT_' + name.upper()).ljust(width)}  {about}{shown}")
    return "\n".join(
        [
            "Where the configuration comes from:",
            "  inputs       INPUT_<NAME> environment variables. In a workflow the runner sets them from",
            "               the step's 'with:' (action.yml documents each); outside one, export them.",
            "  context      GITHUB_* variables as a runner sets them: GITHUB_REPOSITORY, GITHUB_RUN_ID,",
            "               GITHUB_EVENT_PATH, GITHUB_WORKSPACE, GITHUB_API_URL and the others.",
            "  credentials  the runtime's API key (e.g. ANTHROPIC_API_KEY) from the environment.",
            "Steering (absorbing follow-up runs) works only inside GitHub Actions (GITHUB_ACTIONS=true).",
            "",
            "Inputs:",
            *rows,
            "",
            "Exit codes: 0 success or skip, 1 the agent or a script failed, 2 bad input or configuration.",
            "Terms: docs/glossary.md in the repository; the rule ids in the log: docs/rules.md.",
        ]
    )
