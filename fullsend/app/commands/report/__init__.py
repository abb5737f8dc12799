"""``fullsend report``: what steering saved in a repository (docs/architecture.md "Report")."""
