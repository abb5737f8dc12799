"""Container entrypoint: ``python /app/entrypoint.py`` runs the action
(docs/architecture.md "Action lifecycle")."""

from fullsend.__main__ import main

raise SystemExit(main(["run"]))
