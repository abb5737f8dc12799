"""The commit-subject check (tools/commit_subjects.py): subjects of at most 72 characters among
the commits after the one that added the check, and the commit-msg hook's one-message form."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import missing_tool

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "commit_subjects.py"
sys.path.insert(0, str(TOOL.parent))
from commit_subjects import SUBJECT_MAX, long_subjects, subject_problem  # noqa: E402


def _commit(repo: Path, subject: str, files: dict[str, str] | None = None) -> None:
    for name, text in (files or {"f.txt": subject}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", *env, "commit", "-q", "-m", subject], cwd=repo, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        missing_tool("git", "apt-get install -y git")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_only_subjects_after_the_commit_adding_the_check_are_judged(repo: Path) -> None:
    _commit(repo, "x" * 90)  # before the check existed: not judged
    _commit(repo, "Add the check", {"tools/commit_subjects.py": TOOL.read_text()})
    _commit(repo, "y" * SUBJECT_MAX)
    assert long_subjects(repo) == []
    _commit(repo, "z" * (SUBJECT_MAX + 1))
    found = long_subjects(repo)
    assert len(found) == 1 and found[0].endswith(f" {SUBJECT_MAX + 1}: " + "z" * (SUBJECT_MAX + 1))


def test_a_history_without_the_check_is_not_read(repo: Path) -> None:
    _commit(repo, "x" * 90)
    with pytest.raises(LookupError):
        long_subjects(repo)


def test_the_hook_judges_the_first_line_of_one_message() -> None:
    assert subject_problem("Short subject\n\nA body line " + "w" * 100 + "\n") == ""
    assert subject_problem("# a comment git strips\n\n" + "s" * 73).startswith("the subject is 73 characters")
    assert subject_problem("\n# only comments\n") == "the commit message has no subject"
