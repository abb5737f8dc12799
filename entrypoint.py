"""Container entrypoint: ``python /app/entrypoint.py`` runs the action (interface.md)."""

from fullsend.__main__ import main
raise SystemExit(main(["run"]))
