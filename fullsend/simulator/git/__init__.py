"""The simulator's git server: GitHub's smart-HTTP git (``<web>/<owner>/<repo>.git``) through
Debian's ``git http-backend``, with GitHub's token rules and its push events
(``fullsend.simulator.git.server``)."""
