"""How the action is put together: a value chosen once, at the composition root.

``fullsend run``'s own entry (``python -m fullsend``, the image's ``entrypoint.py``) always runs
the shipped deployment, :data:`SHIPPED`: the child user from the system (``fullsend-agent``),
per-uid isolation required for a receipt, the full file scan (docs/rules.md#token-in-reach).
Nothing a workflow sets — no input, no environment variable — changes it.

Another deployment is composed in code, by a caller that imports the package and calls
``fullsend.__main__.main`` or ``run_action`` with it: the test suite's entry (outside the package)
and ``fullsend demo`` (in its own process), both against the simulator
(docs/architecture.md "Child isolation").  The action re-executes itself twice (the secrets'
re-exec, the agent stage's hand-off); both run :meth:`Deployment.reexec_argv`, the entry the
process was started from, so a composed deployment carries through.

Standard library only: ``fullsend run`` imports this before the re-exec.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Deployment:
    """``child_uid``: the numeric uid (and gid) children run as, ``None`` for the system's
    ``fullsend-agent``.  ``public_job_token``: a job token that is public (the simulator's): a
    run holding it against an API on loopback may post a receipt without per-uid isolation, and
    the file scan looks only for its encoded spellings, since the raw one is written in this
    project's own files; "" for none.  ``entry_module``/``entry_folder``: what the re-execs run
    (a module with ``main(argv)``, and the folder put first on ``sys.path``; "" for the folder
    holding this package)."""

    child_uid: int | None = None
    public_job_token: str = ""
    entry_module: str = "fullsend.__main__"
    entry_folder: str = ""

    def reexec_argv(self) -> list[str]:
        """The interpreter arguments that run ``main(['run'])`` of :attr:`entry_module`.

        ``-P``: no current directory on ``sys.path`` (``-c`` would put the workspace, which a
        pull request or an earlier step writes, ahead of the standard library); ``-s``: no user
        site-packages (``HOME`` is handed to the agent)."""
        folder = self.entry_folder or str(Path(__file__).resolve().parents[4])  # the folder holding `fullsend`
        return [
            "-P",
            "-s",
            "-c",
            f"import sys; sys.path.insert(0, {folder!r}); "
            f"from {self.entry_module} import main; sys.exit(main(['run']))",
        ]

    def public_token_run(self, api_url: str, job_token: str) -> bool:
        """Whether this run holds :attr:`public_job_token` against an API on loopback: receipts
        then need no per-uid isolation and the scan skips the raw spelling
        (docs/rules.md#token-in-reach).  Always False for :data:`SHIPPED`."""
        host = (urlsplit(api_url).hostname or "") if api_url else ""
        return bool(self.public_job_token) and job_token == self.public_job_token and host in _LOOPBACK


#: What ``fullsend run``'s own entry runs, always.
SHIPPED = Deployment()
