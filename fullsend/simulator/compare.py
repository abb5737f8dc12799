"""Compare answers of the GitHub simulator (``GET …/compare/{base}...{head}``;
docs/architecture.md "Head moves").

A pull request's head history is a list of moves ``[{sha}, {sha, files, status, ahead_by,
behind_by}, …]`` (``ItemsState.move_head``).  ``resolve_compare`` answers ``base...head`` for two
shas of one history by adding up the moves between them; ``comparison_json`` completes a partial
answer into GitHub's ``commit-comparison`` shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fullsend.simulator.git_shapes import commit_json, diff_entry_json
from fullsend.simulator.shapes import Urls, fake_sha

CompareAnswer = dict[str, Any] | int

# GitHub lists at most 300 files in a comparison.
MAX_FILES = 300


def resolve_compare(histories: Iterable[list[dict[str, Any]]], base: str, head: str) -> dict[str, Any] | None:
    """A partial comparison for ``base...head`` from PR head histories, or ``None`` (unknown ⇒ 404).

    Same sha ⇒ ``identical``.  Forward ⇒ the moves' statuses (``ahead`` unless a move says
    otherwise, e.g. ``diverged``), summed ``ahead_by``/``behind_by``, files merged by filename (a
    later move's entry wins).  Backward ⇒ ``behind`` by the summed ``ahead_by``, no files.
    """
    for history in histories:
        shas = [move["sha"] for move in history]
        if base not in shas or head not in shas:
            continue
        i, j = shas.index(base), len(shas) - 1 - shas[::-1].index(head)
        if i == j:
            return {"status": "identical", "ahead_by": 0, "behind_by": 0, "files": []}
        if i > j:
            back = sum(int(m.get("ahead_by", 0)) for m in history[j + 1 : i + 1])
            return {"status": "behind", "ahead_by": 0, "behind_by": back, "files": []}
        moves = history[i + 1 : j + 1]
        files: dict[str, dict[str, Any]] = {}
        for move in moves:
            for entry in move.get("files", []):
                files[str(entry["filename"])] = entry
        odd = [m["status"] for m in moves if m.get("status", "ahead") != "ahead"]
        return {
            "status": odd[-1] if odd else "ahead",
            "ahead_by": sum(int(m.get("ahead_by", 0)) for m in moves),
            "behind_by": sum(int(m.get("behind_by", 0)) for m in moves),
            "files": list(files.values()),
        }
    return None


def comparison_json(
    urls: Urls, base: str, head: str, answer: dict[str, Any], now: str, per_page: int = 250
) -> dict[str, Any]:
    """Complete a partial answer into a ``commit-comparison``.

    ``commits`` lists up to ``per_page`` of the ``ahead_by`` commits, oldest first, the last one
    being ``head``; ``files`` holds at most 300 entries (``diff-entry`` dicts completed from the
    partial ones).  Keys of ``answer`` other than ``files`` override the generated ones.
    """
    ahead = int(answer.get("ahead_by", 0))
    shas = [fake_sha("commit", head, k) for k in range(ahead - 1)] + ([head] if ahead > 0 else [])
    parents = [base, *shas[:-1]]
    shown = list(zip(shas, parents, strict=False))[: max(per_page, 0)]
    merge_base = base if answer.get("status", "ahead") in ("ahead", "identical") else fake_sha("merge-base", base, head)
    spec = f"{base}...{head}"
    out: dict[str, Any] = {
        "url": f"{urls.repo_api}/compare/{spec}",
        "html_url": f"{urls.repo_web}/compare/{spec}",
        "permalink_url": f"{urls.repo_web}/compare/{urls.owner}:{base}...{urls.owner}:{head}",
        "diff_url": f"{urls.repo_web}/compare/{spec}.diff",
        "patch_url": f"{urls.repo_web}/compare/{spec}.patch",
        "base_commit": commit_json(urls, base, fake_sha("parent", base), "Base", now),
        "merge_base_commit": commit_json(urls, merge_base, fake_sha("parent", merge_base), "Merge base", now),
        "status": "ahead",
        "ahead_by": ahead,
        "behind_by": 0,
        "total_commits": ahead,
        "commits": [commit_json(urls, sha, parent, f"Commit {k + 1}", now) for k, (sha, parent) in enumerate(shown)],
        "files": [diff_entry_json(urls, head, f) for f in answer.get("files", [])][:MAX_FILES],
    }
    out.update({k: v for k, v in answer.items() if k != "files"})
    return out
