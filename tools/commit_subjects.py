"""Commit subjects of at most 72 characters (docs/contributing.md "Commits").

    python3 tools/commit_subjects.py [--rev HEAD]        # every commit after the one adding this file
    python3 tools/commit_subjects.py --message-file F    # one message (pre-commit's commit-msg hook)

The history check looks at the commits descended from the commit that added this file (git
``--ancestry-path``, so a branch merged later whose older commits never saw the rule is not
judged, but its merge commit is) up to ``--rev``, and prints one line per subject that is too
long: its hash, its length and the subject.  Exits 1 when one is, 0 otherwise; 0 with a note when
the history cannot be read (a shallow clone that lacks the adding commit).  Standard library only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

SUBJECT_MAX = 72
THIS_FILE = "tools/commit_subjects.py"


def subject_problem(message: str) -> str:
    """Why the first line of a commit ``message`` is refused (``""`` when it is fine). Lines of
    a comment git strips (``#``) are not part of the message."""
    lines = [line for line in message.splitlines() if not line.startswith("#")]
    subject = next((line for line in lines if line.strip()), "")
    if not subject.strip():
        return "the commit message has no subject"
    if len(subject) > SUBJECT_MAX:
        return f"the subject is {len(subject)} characters, over {SUBJECT_MAX}: {subject}"
    return ""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def long_subjects(root: Path, rev: str = "HEAD") -> list[str]:
    """``<hash> <length>: <subject>`` for each too-long subject after the commit that added
    this file, up to ``rev``.  Raises ``LookupError`` when that commit is not in the history."""
    added = _git(root, "log", "--diff-filter=A", "--format=%H", rev, "--", THIS_FILE).split()
    if not added:
        raise LookupError(f"no commit in the history of {rev} adds {THIS_FILE}")
    anchor = added[-1]
    found = []
    for line in _git(root, "log", "--ancestry-path", "--format=%h %s", f"{anchor}..{rev}").splitlines():
        short, _, subject = line.partition(" ")
        if len(subject) > SUBJECT_MAX:
            found.append(f"{short} {len(subject)}: {subject}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--message-file", help="check this one commit message (the commit-msg hook)")
    parser.add_argument("--rev", default="HEAD", help="the last commit of the history to check")
    args = parser.parse_args(argv)
    if args.message_file:
        problem = subject_problem(Path(args.message_file).read_text(encoding="utf-8", errors="replace"))
        if problem:
            print(f"commit-subjects: {problem}; shorten it and put the why in the body", file=sys.stderr)
        return 1 if problem else 0
    root = Path(__file__).resolve().parents[1]
    try:
        found = long_subjects(root, args.rev)
    except (LookupError, subprocess.CalledProcessError) as exc:
        print(f"commit-subjects: history not checked ({exc}); a full clone checks it")
        return 0
    for line in found:
        print(f"commit-subjects: over {SUBJECT_MAX} characters: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
