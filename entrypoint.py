"""Container entrypoint: ``python /app/entrypoint.py`` runs the action
(docs/architecture.md "Action lifecycle")."""

import signal

# First of all: hold SIGTERM and SIGINT pending until the action's handlers are in place, so a
# cancellation that lands while the interpreter imports the action still ends the run cleanly
# (docs/architecture.md "Cancellation").  The mask survives the action's re-exec.
signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT))

from fullsend.__main__ import main  # noqa: E402  (after the mask, on purpose)

raise SystemExit(main(["run"]))
