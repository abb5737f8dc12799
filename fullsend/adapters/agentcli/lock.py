"""Which packages of a runtime's lockfile one platform needs, and where its executable lands.

The lockfiles are npm's own (``npm install --package-lock-only``, lockfileVersion 3; regenerate
them with ``tools/release/lock-agent-clis.sh``).  Nothing here runs npm or any package script:
an install is the locked tarballs unpacked at their ``node_modules/...`` paths.  Two packages are
left out because the action does their one job itself: ``@anthropic-ai/claude-code`` (its
install script only copies the platform package's native binary into place) and
``@openai/codex`` (a Node.js launcher that starts the platform package's native binary).
"""

from __future__ import annotations

import json
import os
import platform as _platform
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCK_DIR = Path(__file__).resolve().parent / "locks"
#: Set by an image that installs agent CLIs after the pre-flight: the install root (its bin/ is on PATH).
ROOT_VARIABLE = "FULLSEND_AGENT_CLI_ROOT"
NPM_REGISTRY = "https://registry.npmjs.org/"
#: ``uname -m`` → npm's ``cpu`` name.
CPU_NAMES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
#: npm ``cpu`` → the Rust target triple of Codex's native binary.
CODEX_TRIPLES = {"x64": "x86_64-unknown-linux-musl", "arm64": "aarch64-unknown-linux-musl"}


@dataclass(frozen=True)
class Platform:
    """An npm platform: ``os`` (``linux``), ``cpu`` (``x64``/``arm64``), ``libc`` (``glibc``/``musl``)."""

    os: str
    cpu: str
    libc: str

    @classmethod
    def here(cls) -> Platform:
        """This machine's platform.  Raises ``ValueError`` for a CPU no CLI is published for."""
        machine = _platform.machine().lower()
        if machine not in CPU_NAMES:
            raise ValueError(f"no agent CLI is published for the CPU '{machine}'")
        try:
            libc = "glibc" if os.confstr("CS_GNU_LIBC_VERSION") else "musl"
        except (ValueError, OSError):
            libc = "musl"
        return cls(_platform.system().lower(), CPU_NAMES[machine], libc)


@dataclass(frozen=True)
class Package:
    """One locked package: its ``node_modules/...`` path, version, tarball URL and integrity."""

    path: str
    version: str
    resolved: str
    integrity: str


@dataclass(frozen=True)
class CliPlan:
    """What installing ``runtime``'s CLI takes: the packages, the pinned version of the CLI
    (the ``version`` of its own package), the executable (a path relative to the install root) and,
    for a JavaScript CLI, the locked Node.js binary that runs it (else ``""``)."""

    runtime: str
    version: str
    packages: tuple[Package, ...]
    executable: str
    node: str


_MAIN = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "pi": "@earendil-works/pi-coding-agent"}
_LAUNCHERS = {"claude": "node_modules/@anthropic-ai/claude-code", "codex": "node_modules/@openai/codex"}


def runtimes() -> tuple[str, ...]:
    """The runtimes with a lockfile, in name order."""
    return tuple(sorted(p.stem for p in LOCK_DIR.glob("*.json")))


def install_root(environ: Mapping[str, str]) -> str:
    """Where this image installs agent CLIs (``FULLSEND_AGENT_CLI_ROOT``), or "" when it does not."""
    return environ.get(ROOT_VARIABLE, "").strip()


def installable(runtime: str, root: str) -> bool:
    """True when the CLI of ``runtime`` can be installed into ``root`` (set, and a lock exists)."""
    return bool(root) and runtime in runtimes()


def load_lock(runtime: str, lock_dir: Path = LOCK_DIR) -> dict[str, Any]:
    """The lockfile's ``packages`` map.  Raises ``ValueError`` for an unknown runtime or a bad lock."""
    path = lock_dir / f"{runtime}.json"
    if runtime not in _MAIN or not path.is_file():
        raise ValueError(f"no lockfile for the runtime '{runtime}'")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("lockfileVersion") != 3 or not isinstance(data.get("packages"), dict):
        raise ValueError(f"{path.name}: not an npm lockfile of version 3")
    return data["packages"]


def fits(entry: Mapping[str, Any], where: Platform) -> bool:
    """npm's ``os``/``cpu``/``libc`` rule: each list (or string) allows its names, or all but
    its ``!``-negated names; a missing field allows every platform."""
    for field, have in (("os", where.os), ("cpu", where.cpu), ("libc", where.libc)):
        wanted = entry.get(field)
        if wanted is None:
            continue
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        allowed = [n for n in names if not n.startswith("!")]
        if have in {n[1:] for n in names if n.startswith("!")} or (allowed and have not in allowed):
            return False
    return True


def plan_install(runtime: str, where: Platform, lock_dir: Path = LOCK_DIR) -> CliPlan:
    """The packages and executable of ``runtime``'s CLI on ``where``.

    Raises ``ValueError`` for an unknown runtime, a lock entry without URL or integrity, or a
    platform the lock has no native package for.
    """
    packages = load_lock(runtime, lock_dir)
    main = _MAIN[runtime]
    chosen = []
    for path, entry in sorted(packages.items()):
        if not path or entry.get("dev") or path == _LAUNCHERS.get(runtime) or not fits(entry, where):
            continue
        if not entry.get("resolved") or not str(entry.get("integrity", "")).startswith("sha512-"):
            raise ValueError(f"{runtime}.json: {path} has no registry URL or no sha512 integrity")
        chosen.append(Package(path, str(entry["version"]), str(entry["resolved"]), str(entry["integrity"])))
    executable, node = _executable(runtime, packages, where)
    have = {p.path for p in chosen}
    if any(_package_of(path) not in have for path in (executable, node) if path):
        raise ValueError(f"the {runtime} lock has no package for {where.os}-{where.cpu} ({where.libc})")
    return CliPlan(runtime, str(packages[f"node_modules/{main}"]["version"]), tuple(chosen), executable, node)


def _executable(runtime: str, packages: Mapping[str, Any], where: Platform) -> tuple[str, str]:
    """(the executable, the Node.js binary or "") relative to the install root."""
    if runtime == "claude":
        suffix = "-musl" if where.libc == "musl" else ""
        return f"node_modules/@anthropic-ai/claude-code-{where.os}-{where.cpu}{suffix}/claude", ""
    if runtime == "codex":
        triple = CODEX_TRIPLES.get(where.cpu, "")
        return f"node_modules/@openai/codex-{where.os}-{where.cpu}/vendor/{triple}/bin/codex", ""
    entry = packages[f"node_modules/{_MAIN[runtime]}"]
    script = dict(entry.get("bin") or {}).get(runtime, "")
    return f"node_modules/{_MAIN[runtime]}/{script}", f"node_modules/node-{where.os}-{where.cpu}/bin/node"


def _package_of(path: str) -> str:
    """``node_modules/@scope/name/x/y`` → ``node_modules/@scope/name`` (``node_modules/name`` unscoped)."""
    parts = path.split("/")
    return "/".join(parts[:3] if parts[1].startswith("@") else parts[:2])


def locked_versions(lock_dir: Path = LOCK_DIR) -> dict[str, str]:
    """The version each lockfile pins: ``{"claude": …, "codex": …, "pi": …, "node": …}`` (Node.js
    from pi's lock, both architectures at one version).  Raises ``ValueError`` for a bad lock."""
    versions = {rt: str(load_lock(rt, lock_dir)[f"node_modules/{_MAIN[rt]}"]["version"]) for rt in _MAIN}
    pi = load_lock("pi", lock_dir)
    nodes = {str(entry["version"]) for path, entry in pi.items() if path.startswith("node_modules/node-linux-")}
    if len(nodes) != 1:
        raise ValueError(f"pi.json: expected one Node.js version, found {sorted(nodes)}")
    versions["node"] = nodes.pop()
    return versions
