"""Adapters: the only code that talks to GitHub, the runner's files, processes and the clock."""
