"""Shell text both the sandboxes and the runtimes build: quoting, the sandbox's env file, and
foreign text made safe for one log line (docs/architecture.md "Sandboxes").

The sandboxes own it; the runtimes, which drive a sandbox, import it from here (never the other
way: ``tests/test_layers.py``).
"""

from __future__ import annotations

import unicodedata

from fullsend.core.text.sanitize import runner_safe

#: The env file a launch script sources inside the sandbox (written by the sandbox, read by the launch).
SANDBOX_ENV_FILE = "/sandbox/workspace/.env"


def shell_quote(s: str) -> str:
    """Single-quote ``s`` for ``sh``: ``'`` + s with each ``'`` as ``'\\''`` + ``'``."""
    return "'" + s.replace("'", "'\\''") + "'"


def sanitize_output(text: str) -> str:
    """Make foreign text (stderr, error messages) safe to embed in one log line.

    Control and format characters (Unicode Cc/Cf, U+2028/U+2029) become spaces and a lone
    surrogate becomes U+FFFD; the result is stripped.  Used for every error text shown to a
    person.
    """
    text = runner_safe(text)
    out = [" " if unicodedata.category(ch) in ("Cc", "Cf") or ch in "\u2028\u2029" else ch for ch in text]
    return " ".join("".join(out).split())
