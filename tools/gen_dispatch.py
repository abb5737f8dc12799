"""Write the dispatch workflows this repository ships from their one template
(fullsend/templates/init/dispatch.yml.j2; docs/adopting.md "The dispatch workflow"):
``.github/workflows/dispatch.yml`` (the hosted one adopters call) and
``examples/reusable-dispatch.yml`` (the self-contained example).  ``--check`` writes nothing and
exits 1 when a file differs from what the template renders (tests/cli/test_dispatch_source.py).

    python tools/gen_dispatch.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fullsend.app.commands.init import EXAMPLE_DISPATCH, HOSTED_DISPATCH, render_dispatch

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) both files; 0 when all match or were written, 1 otherwise."""
    stale = []
    for rel in (HOSTED_DISPATCH, EXAMPLE_DISPATCH):
        text = render_dispatch(rel)
        path = ROOT / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(rel))
        if "--check" not in argv:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    verb = "differ from the template; run python tools/gen_dispatch.py" if "--check" in argv else "written"
    if stale:
        print(f"{', '.join(stale)}: {verb}")
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
