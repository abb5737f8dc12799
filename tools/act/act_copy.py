"""act's parse copy of a workflow: the one key act's schema refuses that the plays' workflows carry.

GitHub's ``concurrency:`` takes ``queue: max`` (larger queues, github.blog changelog 2026-05-07),
which the shared Review/Fix group needs: without it a newer pending run cancels the pending one,
and a pending ``/fs-fix`` replaced by a pending Review would drop a person's instruction.  act
(0.2.89, the newest on PyPI; nektos/act main too) validates every workflow against a schema that
predates the key and has no switch to skip it; act ignores ``concurrency`` altogether.  So act
parses a copy without the ``queue:`` lines inside ``concurrency:`` mappings, and nothing else:
the adopter's repository, what the stage jobs check out and the release stay byte for byte
(tests/act/adopter/test_act_copy.py holds the difference to exactly those lines).

Used by the adopter plays (imported) and by ``tools/act/workdir.sh`` for the examples (README
"Run it locally with act"): ``python3 tools/act/act_copy.py FILE...`` rewrites each file in place.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_CONCURRENCY = re.compile(r"^(?P<indent>\s*)concurrency:\s*(#.*)?$")
_QUEUE = re.compile(r"^\s+queue:\s*\S")


def for_act(workflow: str) -> str:
    """``workflow`` without the ``queue:`` keys of its ``concurrency:`` mappings (module docstring)."""
    out: list[str] = []
    block_indent: int | None = None
    for line in workflow.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and line.strip() and indent <= block_indent:
            block_indent = None
        if block_indent is not None and _QUEUE.match(line):
            continue
        m = _CONCURRENCY.match(line.rstrip("\n"))
        if m:
            block_indent = len(m["indent"])
        out.append(line)
    return "".join(out)


def main(paths: list[str]) -> int:
    """Rewrite each workflow file of ``paths`` as act's parse copy; 2 when none is given."""
    if not paths:
        print("usage: python3 tools/act/act_copy.py WORKFLOW...", file=sys.stderr)
        return 2
    for name in paths:
        path = Path(name)
        path.write_text(for_act(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
