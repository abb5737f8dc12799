"""The repository's tracked text files, for the tests that hold a rule over all of them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.tools import missing_tool


def tracked_files(root: Path) -> list[Path]:
    """Every file ``git ls-files`` lists under ``root`` that exists and is text, sorted.

    A file is binary when its bytes hold a NUL or are not UTF-8.  Skips (or fails under CI)
    when git is not installed; raises ``subprocess.CalledProcessError`` when ``root`` is not a
    git checkout.
    """
    if shutil.which("git") is None:
        missing_tool("git (to list the tracked files)", "apt-get install -y git")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return sorted(p for name in listed.decode("utf-8").split("\0") if name and _is_text(p := root / name))


def _is_text(path: Path) -> bool:
    if not path.is_file():
        return False
    data = path.read_bytes()
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
