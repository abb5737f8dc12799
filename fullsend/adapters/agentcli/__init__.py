"""The agent CLIs as the action installs them: pinned, integrity-checked, no install scripts.

``locks/<runtime>.json`` are npm lockfiles (v3) of each runtime's CLI at the version the action
supports: every package with its exact version, registry URL and ``sha512`` integrity.
``lock.py`` picks the packages one platform needs, ``fetch.py`` (a child process) downloads,
checks, unpacks and links them, ``provide.py`` is what the action calls once the pre-flight
decided to run (docs/architecture.md "Agent CLI").  The full image is built with the same code.
"""
