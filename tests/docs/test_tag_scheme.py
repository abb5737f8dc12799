"""Issue 42: one moving tag scheme in the docs and the tooling.  tools/release/release.sh moves
``v<MAJOR>`` of the package's version (``fullsend/__init__.py``) to each release; every
``steer-action@vN`` (and ``…/full@vN``) the docs and templates show is that tag."""

from __future__ import annotations

import re
from pathlib import Path

from fullsend import __version__

REPO_ROOT = Path(__file__).resolve().parents[2]
MOVING = re.compile(r"steer-action(?:/full)?@(v\d+)\b(?!\.)")


def _texts() -> list[Path]:
    return [
        REPO_ROOT / "README.md",
        *sorted((REPO_ROOT / "docs").glob("*.md")),
        *sorted((REPO_ROOT / "fullsend" / "templates" / "init").glob("*.j2")),
        *sorted((REPO_ROOT / "examples").glob("*.yml")),
        *sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml")),
    ]


def test_every_moving_tag_shown_is_the_one_release_sh_moves() -> None:
    major = "v" + __version__.split(".")[0]
    assert 'major="v${BASH_REMATCH[1]}"' in (REPO_ROOT / "tools/release/release.sh").read_text()
    shown = {(p.name, m.group(1)) for p in _texts() for m in MOVING.finditer(p.read_text(encoding="utf-8"))}
    assert shown, "no moving tag shown anywhere: the test would prove nothing"
    assert {tag for _, tag in shown} == {major}, sorted(shown)
