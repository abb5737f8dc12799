"""Container entrypoint (docs/architecture.md "Action lifecycle", "Commands").

As the action, GitHub runs the image with no arguments: the action's ``command`` input
(``INPUT_COMMAND``, default ``run``) picks ``fullsend run`` or ``fullsend route`` (the Route job).
By hand, the arguments are a ``fullsend`` command line: ``docker run IMAGE init --help``,
``… steer URL TEXT``, ``… explain URL``.
"""

import signal

# First of all: hold SIGTERM and SIGINT pending until the action's handlers are in place, so a
# cancellation that lands while the interpreter imports the action still ends the run cleanly
# (docs/architecture.md "Cancellation").  The mask survives the action's re-exec.  Every other
# command lets them in once its own handlers are set (fullsend/__main__.py).
signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT))

from fullsend.__main__ import main  # noqa: E402  (after the mask, on purpose)

raise SystemExit(main(image=True))
