"""The test suite's entry for the action: the package's ``main`` with a deployment composed here.

Started as the image starts ``entrypoint.py`` (``python tests/support/sim_entry.py`` with a
runner's environment; :func:`tests.support.action_run.run_entrypoint` does), it runs the action
with :func:`simulated`: the simulator's job token is public, so a run holding it against the
simulator on loopback may post a receipt without a child user, the file scan looking for its
encoded spellings only; and when ``SIM_ENTRY_CHILD_UID`` names a numeric uid, that uid (and gid)
is the child user, for hosts without ``fullsend-agent``.  The product's own entries never read
either: the deployment is chosen in code (``fullsend.app.action.confinement.deployment``).

Both re-executions of the action run this module again (``Deployment.entry_module``), from the
folder that holds this copy of ``tests`` (a test may copy it beside a copy of the package), so the
deployment carries through the secrets' re-exec and the agent stage's hand-off.
"""

import signal

# As entrypoint.py: hold SIGTERM and SIGINT until the action's handlers are in place.
if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT))

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: The folder holding ``tests`` (and the ``fullsend`` package this entry runs).
ROOT = Path(__file__).resolve().parents[2]
#: The environment entry naming the child uid; read here only, never by the package.
CHILD_UID_ENV = "SIM_ENTRY_CHILD_UID"
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from fullsend.app.action.confinement.deployment import Deployment  # noqa: E402
from fullsend.simulator.fixtures import JOB_TOKEN  # noqa: E402


def simulated(environ: Mapping[str, str]) -> Deployment:
    """The simulator's deployment: its public job token, the child uid ``environ`` names (else the
    system's user), and this module as the entry of both re-execs."""
    uid = environ.get(CHILD_UID_ENV, "")
    return Deployment(
        child_uid=int(uid) if uid.isdigit() else None,
        public_job_token=JOB_TOKEN,
        entry_module="tests.support.sim_entry",
        entry_folder=str(ROOT),
    )


def main(argv: Sequence[str] | None = None, *, image: bool = False) -> int:
    """``fullsend.__main__.main`` with :func:`simulated`; the re-execs call ``main(['run'])``."""
    from fullsend.__main__ import main as fullsend_main

    return fullsend_main(argv, image=image, deployment=simulated(os.environ))


if __name__ == "__main__":
    raise SystemExit(main(image=True))
