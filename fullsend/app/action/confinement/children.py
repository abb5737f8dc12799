"""What the action's children run as and may touch, for the length of ``ActionRun.execute``.

``open`` — before the first child (the pre-script): the runner's file-command files are read as
they are, and with a child user the workspace and ``HOME`` are handed to it.  ``close`` — once the
last child ended: every process of the child uid is killed, the trees are handed back (files the
children created go to the workspace's owner), and any change a child made to a file-command file
is undone, so only the action writes outputs, env, path and summary, after its children.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from fullsend.adapters.confinement.credentials import remove_credentials, remove_token_files
from fullsend.adapters.confinement.isolation import (
    ChildUser,
    Handover,
    become_subreaper,
    end_processes_of,
    hand_over,
    resolve_child_user,
)
from fullsend.adapters.confinement.reach import scan_for_secrets
from fullsend.adapters.gha import FileCommandSnapshot
from fullsend.core.tokens.credential import RULE_CREDENTIAL_REMOVED
from fullsend.core.tokens.reach import RULE_TOKEN_IN_REACH, ReachVerdict, ScanResult, reach_verdict
from fullsend.ports import Log

#: A tree handed to the child user must lie at least this deep (never ``/``, ``/tmp`` or ``/root``).
_MIN_TREE_DEPTH = 2


class Children:
    """The child user (``None``: children run as the action's user) and the guards around them."""

    def __init__(
        self,
        environ: Mapping[str, str],
        workspace: Path,
        home: str,
        log: Log,
        secrets: Mapping[str, str] | None = None,
        *,
        child_uid: int | None = None,
        public_token_run: bool = False,
    ) -> None:
        self.user: ChildUser | None
        self.user, why = resolve_child_user(child_uid)
        self._trees = [tree for tree in (workspace, Path(home) if home else None) if tree is not None]
        #: The run holds its deployment's public job token on loopback (``Deployment.public_token_run``).
        self._secrets, self.public_token_run = dict(secrets or {}), public_token_run
        self._scan_roots = scan_roots(environ, workspace, home)
        #: Whether a receipt may be posted (docs/rules.md#token-in-reach); decided in ``open``.
        self.reach = ReachVerdict(False, "the run's children were never started")
        self._environ, self._log = environ, log
        if self.user is None:
            level = "info" if os.geteuid() != 0 else "warning"  # by hand as a developer: expected
            log(
                level,
                f"Per-uid isolation of the agent and the scripts is unavailable: {why}; "
                "they run as the action's own user",
            )
        elif not _deep_enough(workspace):
            why = f"the workspace {workspace} is too close to / to hand over"
            log(
                "warning",
                f"Per-uid isolation is unavailable: {why}; the agent and the scripts run as the action's own user",
            )
            self.user = None
        #: Why the children share the action's uid ("" when they do not).
        self.isolation_why = why if self.user is None else ""
        if self.user is not None:
            become_subreaper()  # a child's orphans stay this run's to end (docs/architecture.md "Child isolation")
        self._snapshot: FileCommandSnapshot | None = None
        self._handover: Handover | None = None
        self._credentials_checked = False
        self._workspace = workspace

    def remove_credentials(self) -> None:
        """Before any child (the agent CLI's ``--version`` check included): with a child user, or
        in GitHub Actions without one, remove the checkout's persisted credential for the rest of
        the job, one warning naming the files (docs/rules.md#credential-removed).  Once only."""
        if self._credentials_checked or (self.user is None and self._environ.get("GITHUB_ACTIONS") != "true"):
            return  # by hand, without isolation: a developer's own checkout keeps its credentials
        self._credentials_checked = True
        remove_checkout_credential(self._environ, self._workspace, self._scan_roots, self._secrets, self._log)

    def _level(self) -> str:
        return _level(self._environ)

    def open(self) -> None:
        """Before the agent: keep the file-command files; end what the CLI's install and
        ``--version`` check left running; hand the trees to the child user; prove the job token
        out of reach."""
        self._snapshot = FileCommandSnapshot.take(self._environ)
        if self.user is not None:
            end_processes_of(self.user.uid)  # nothing of the child uid may exist before the handover
            trees = [t for t in self._trees if _deep_enough(t)]
            self._handover = hand_over(trees, self.user)
            if self._handover.failures:
                self._log(
                    "warning",
                    f"{self._handover.failures} workspace entries could not be handed to the "
                    "agent's user; the agent may not be able to write them",
                )
        self.reach = self._prove_out_of_reach()

    def _prove_out_of_reach(self) -> ReachVerdict:
        """Isolation active and no child-readable file holding a secret, else no receipt (one warning)."""
        uid, gid = (self.user.uid, self.user.gid) if self.user is not None else (os.geteuid(), os.getegid())
        public = self.public_token_run
        shared = bool(self.isolation_why) and not public
        scan = (
            ScanResult() if shared else scan_for_secrets(self._scan_roots, self._secrets, uid, gid, encoded_only=public)
        )
        verdict = reach_verdict(self.isolation_why, public, scan)
        if not verdict.ok:
            self._log(self._level(), f"No steer receipt for this run: {verdict.why} [{RULE_TOKEN_IN_REACH}]")
        return verdict

    def close(self) -> None:
        """After the last child: end the child uid's processes, hand the trees back, undo any
        change to a file-command file (one warning naming them)."""
        if self.user is not None:
            end_processes_of(self.user.uid)
        if self._handover is not None:
            failures = self._handover.hand_back()
            self._handover = None
            if failures:
                self._log("warning", f"{failures} workspace entries could not be given back to the workspace's owner")
        if self._snapshot is not None:
            changed = self._snapshot.restore()
            self._snapshot = None
            if changed:
                self._log(
                    "warning",
                    f"A child process wrote the runner's file-command files ({', '.join(changed)}); "
                    "its changes were undone: only the action writes them",
                )


def remove_checkout_credential(
    environ: Mapping[str, str], workspace: Path, roots: list[Path], secrets: Mapping[str, str], log: Log
) -> None:
    """Remove ``secrets`` (name -> value) from the git configs under ``workspace`` and the files
    they include under ``roots``; one line naming the files (docs/rules.md#credential-removed)."""
    removed = remove_credentials(workspace, roots, secrets)
    files = remove_token_files(roots, secrets)
    if files:
        log(
            _level(environ),
            f"The cloud credential file(s) {', '.join(files)} hold(s) a runner token (the OIDC request token mints "
            "tokens that could sign a receipt) and are removed for the rest of the job, before the agent could "
            "read them. Run the cloud-auth step after this one, or with create_credentials_file: false "
            f"[{RULE_CREDENTIAL_REMOVED}]",
        )
    if removed:
        log(
            _level(environ),
            f"The job token persisted by actions/checkout ({', '.join(removed)}) is removed "
            "for the rest of the job, before the agent could read it: the agent writes in "
            "this repository, so the token is not put back where its hooks and configs "
            "could reach it. Set persist-credentials: false on actions/checkout; a later "
            "step that needs authenticated git checks out again or passes a token "
            f"[{RULE_CREDENTIAL_REMOVED}]",
        )


def scan_roots(environ: Mapping[str, str], workspace: Path, home: str) -> list[Path]:
    """Where a child-readable file could hold a secret: the workspace, ``HOME`` and ``RUNNER_TEMP``."""
    temp = environ.get("RUNNER_TEMP", "")
    return [workspace, *([Path(home)] if home else []), *([Path(temp)] if temp else [])]


def children_share_uid(child_uid: int | None, workspace: Path) -> bool:
    """Whether ``Children`` would run the children under the action's own uid (no child user, or a
    workspace too close to ``/`` to hand over); probes ``setpriv`` as ``Children`` does
    (``child_uid``: the deployment's, ``None`` for the system's user)."""
    return resolve_child_user(child_uid)[0] is None or not _deep_enough(workspace)


def _level(environ: Mapping[str, str]) -> str:
    return "warning" if environ.get("GITHUB_ACTIONS") == "true" else "info"


def reach_secrets(job_token: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The secrets no child may reach, in a file or an ancestor's environment: the job token, the
    runner's OIDC request token (which mints tokens, a receipt's proof among them) and its runtime
    token (which writes the run's artifacts and caches), name -> value, empty ones left out."""
    found = {
        "job token": job_token,
        "OIDC request token": environ.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN", ""),
        "runtime token": environ.get("ACTIONS_RUNTIME_TOKEN", ""),
    }
    return {name: value for name, value in found.items() if value}


def _deep_enough(tree: Path) -> bool:
    try:
        return len(tree.resolve().parts) > _MIN_TREE_DEPTH
    except (OSError, RuntimeError):
        return False
