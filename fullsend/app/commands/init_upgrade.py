"""``fullsend init --upgrade``: what this release would write, against what the repository holds
(docs/adopting.md "Upgrades").

``fullsend init`` records what it wrote in ``.fullsend/init.json``: the plan (stages, runtime,
role-token mode, queue, ref, version) and the sha256 of every file.  ``--upgrade`` renders the
same plan with this release (and the new ``--ref``), and sorts each file into one of:

* ``add`` — not in the repository: written on ``--apply``;
* ``same`` — already what this release writes;
* ``update`` — as the recorded init wrote it (the adopter did not change it): replaced on ``--apply``;
* ``yours`` — changed since init wrote it, or written before init recorded digests: its diff is
  shown and it is left alone unless ``--force``.

It prints a unified diff of every file that differs; without ``--apply`` it writes nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from fullsend import __version__
from fullsend.errors import ExitCode

MANIFEST = Path(".fullsend/init.json")
MANIFEST_MAX_BYTES = 1 << 20
KINDS = ("add", "update", "yours", "same")


def digest(text: str) -> str:
    """``sha256:<hex>`` of ``text`` as UTF-8."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_text(plan: Any, files: Sequence[tuple[Path, str]]) -> str:
    """The ``.fullsend/init.json`` that records ``plan`` (an ``InitPlan``) and ``files``."""
    record = {
        "version": __version__,
        "ref": plan.ref,
        "release": plan.release,
        "stages": list(plan.stages),
        "runtime": plan.runtime,
        "role_token": plan.role_token,
        "queue": plan.queue,
        "dispatch": plan.dispatch,
        "files": {str(rel): digest(text) for rel, text in files},
    }
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def read_manifest(root: Path) -> dict[str, Any]:
    """The recorded manifest under ``root``, or ``{}`` when there is none or it cannot be read
    (every file then counts as ``yours``).  Never raises."""
    try:
        raw = (root / MANIFEST).read_bytes()[: MANIFEST_MAX_BYTES + 1]
        data = json.loads(raw) if len(raw) <= MANIFEST_MAX_BYTES else None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _digests(recorded: Mapping[str, Any]) -> dict[str, Any]:
    files = recorded.get("files")
    return files if isinstance(files, dict) else {}


@dataclass(frozen=True)
class Change:
    """One file of an upgrade: its ``kind`` (:data:`KINDS`) and the unified ``diff`` (``""`` for same)."""

    rel: Path
    kind: str
    text: str
    diff: str


def compare(root: Path, files: Sequence[tuple[Path, str]], recorded: Mapping[str, Any]) -> list[Change]:
    """Sort each rendered file (module docstring); a file that cannot be read counts as ``yours``."""
    digests = _digests(recorded)
    changes = []
    for rel, text in files:
        path = root / rel
        if not path.exists() and not path.is_symlink():
            changes.append(Change(rel, "add", text, _diff(rel, "", text)))
            continue
        try:
            held = path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else None
        except (OSError, UnicodeDecodeError):
            held = None
        if held == text:
            changes.append(Change(rel, "same", text, ""))
        elif held is not None and digests.get(str(rel)) == digest(held):
            changes.append(Change(rel, "update", text, _diff(rel, held, text)))
        else:
            changes.append(Change(rel, "yours", text, _diff(rel, held or "", text)))
    return changes


def _diff(rel: Path, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{rel}", tofile=f"b/{rel}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def report(changes: Sequence[Change], out: TextIO) -> None:
    """Every diff, then one line per file that is not ``same``."""
    for change in changes:
        if change.diff:
            out.write(change.diff)
    for change in changes:
        if change.kind != "same":
            out.write(f"{change.kind:>6}  {change.rel}" + (WHY_YOURS if change.kind == "yours" else "") + "\n")


WHY_YOURS = "  (changed since fullsend init wrote it, or written before init recorded it; kept without --force)"


def apply_changes(root: Path, changes: Sequence[Change], manifest: str, force: bool, out: TextIO, err: TextIO) -> int:
    """Write the ``add`` and ``update`` files (and ``yours`` with ``force``), then the manifest.
    Returns the exit code: 2, nothing written, when a target is or lies under a symbolic link;
    1 when a write failed, naming the folder."""
    chosen = [c for c in changes if c.kind in ("add", "update") or (force and c.kind == "yours")]
    linked = [
        c
        for c in chosen
        if any(p.is_symlink() for p in (root / c.rel, *(root / c.rel).parents)) and not root.is_symlink()
    ]
    if linked:  # never write through a link: it may point outside the repository
        err.write(
            "fullsend init --upgrade: " + ", ".join(str(c.rel) for c in linked) + " is a symbolic link or "
            "lies under one; nothing written: replace the link with the file, then run it again\n"
        )
        return ExitCode.BAD_INPUT
    try:
        for change in chosen:
            (root / change.rel).parent.mkdir(parents=True, exist_ok=True)
            (root / change.rel).write_text(change.text, encoding="utf-8")
        (root / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
        (root / MANIFEST).write_text(manifest, encoding="utf-8")
    except OSError as exc:
        err.write(
            f"fullsend init --upgrade: cannot write under {root}: {exc.strerror or exc}; check the folder "
            "and its permissions\n"
        )
        return ExitCode.FAILED
    kept = [c for c in changes if c.kind == "yours" and not force]
    out.write(
        f"Wrote {len(chosen)} file(s) under {root}"
        + (f"; kept {len(kept)} of yours (--force replaces them)" if kept else "")
        + ".\n"
    )
    return ExitCode.OK


def upgrade_manifest(plan: Any, changes: Sequence[Change], recorded: Mapping[str, Any], force: bool) -> str:
    """The manifest after an upgrade: a kept file keeps its old digest, so it stays ``yours``."""
    old = _digests(recorded)
    text = json.loads(manifest_text(plan, [(c.rel, c.text) for c in changes]))
    for change in changes:
        if change.kind == "yours" and not force:
            if str(change.rel) in old:
                text["files"][str(change.rel)] = old[str(change.rel)]
            else:
                del text["files"][str(change.rel)]
    return json.dumps(text, indent=2, sort_keys=True) + "\n"
