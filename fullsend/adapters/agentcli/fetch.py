"""Install a runtime's agent CLI from its lockfile: ``python -m fullsend.adapters.agentcli.fetch``.

    python -m fullsend.adapters.agentcli.fetch --root DIR [--registry URL] RUNTIME...

Runs as a child process of the action with the scrubbed environment (no token reaches it), and
as a build step of the full image.  For each runtime: every package ``lock.plan_install`` picks
is downloaded (from ``--registry``, default ``$npm_config_registry`` or registry.npmjs.org, in
place of the lock's registry), its ``sha512`` checked against the lock before anything is
unpacked, and unpacked to ``DIR/lib/<runtime>-<version>/node_modules/...``; no package script
runs.  ``DIR/bin/<runtime>`` then points at the executable (a wrapper that starts the locked
Node.js for a JavaScript CLI), and ``<runtime> --version`` must name the locked version.  An
install already complete is reused.  Prints ``<runtime>=<DIR/bin/runtime>`` per runtime (and the
packages and bytes downloaded to stderr) and exits 0; on any failure prints one line to stderr
and exits 1.

It never talks to GitHub: only to the npm registry (or the mirror ``--registry`` names), without
a credential.  So it keeps its own download over ``urllib.request``, the one module besides
``fullsend.adapters.github.client`` that sends HTTP (docs/architecture.md "Agent CLI"): the full
image's build runs it on Debian's bare ``python3``, where the locked libraries are not installed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import IO

from fullsend.adapters.agentcli.lock import (
    LOCK_DIR,
    NPM_REGISTRY,
    CliPlan,
    Package,
    Platform,
    locked_versions,
    plan_install,
)

DOWNLOAD_TIMEOUT_S = 120
VERSION_TIMEOUT_S = 60
PARALLEL_DOWNLOADS = 8
COMPLETE_MARK = ".fullsend-complete"
_CHUNK = 1 << 20


class FetchError(Exception):
    """An install step failed; the message names the package or the check, never a secret."""


def tarball_url(package: Package, registry: str) -> str:
    """The lock's URL, with registry.npmjs.org replaced by ``registry`` (a mirror of it)."""
    if registry and package.resolved.startswith(NPM_REGISTRY):
        return registry.rstrip("/") + "/" + package.resolved[len(NPM_REGISTRY) :]
    return package.resolved


def download_verified(url: str, integrity: str, into: IO[bytes]) -> int:
    """Stream ``url`` into ``into`` and check it against the SRI ``integrity`` (``sha512-<b64>``);
    returns the bytes downloaded.

    Raises ``FetchError`` when the download fails or the digest differs (``into`` then holds
    bytes that must not be used).
    """
    digest, size = hashlib.sha512(), 0
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                into.write(chunk)
                size += len(chunk)
    except OSError as exc:
        raise FetchError(f"download of {url} failed: {exc}") from None
    got = "sha512-" + base64.b64encode(digest.digest()).decode()
    if got != integrity:
        raise FetchError(f"{url} does not match the lock's integrity ({got[:24]}… is not {integrity[:24]}…)")
    return size


#: Node.js's C headers and docs only serve to build addons (no install script runs here).
NODE_UNUSED = ("include", "share")


def unpack(archive: IO[bytes], dest: Path, skip: tuple[str, ...] = ()) -> int:
    """Unpack an npm tarball's regular files and directories into ``dest`` (its first path
    component, ``package/``, dropped); links, devices, paths leaving ``dest`` and top-level
    names in ``skip`` are left out.  Returns the number of files written."""
    written = 0
    with tarfile.open(fileobj=archive, mode="r:gz") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts[1:]
            if not parts or any(p in ("..", "") for p in parts) or member.name.startswith("/") or parts[0] in skip:
                continue
            target = dest.joinpath(*parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                with source as src, open(target, "wb") as out:  # type: ignore[union-attr]  # a regular member: never None
                    shutil.copyfileobj(src, out, _CHUNK)
                target.chmod(0o755 if member.mode & 0o111 else 0o644)
                written += 1
    return written


def _one(package: Package, registry: str, root: Path) -> int:
    with tempfile.TemporaryFile() as tmp:
        size = download_verified(tarball_url(package, registry), package.integrity, tmp)
        tmp.seek(0)
        skip = NODE_UNUSED if package.path.startswith("node_modules/node-") else ()
        try:
            unpack(tmp, root / package.path, skip)
        except (tarfile.TarError, OSError) as exc:
            raise FetchError(f"{package.path}: the tarball cannot be unpacked ({exc})") from None
    return size


def install(plan: CliPlan, root: Path, registry: str) -> tuple[Path, int]:
    """Install ``plan`` under ``root`` (reusing a complete install); returns ``root/bin/<runtime>``
    and the bytes downloaded (0 when reused).

    Raises ``FetchError`` (download, integrity, unpacking or the version check failed).
    """
    home, fetched = root / "lib" / f"{plan.runtime}-{plan.version}", 0
    if not (home / COMPLETE_MARK).exists():
        partial = root / "lib" / f".{home.name}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            with ThreadPoolExecutor(PARALLEL_DOWNLOADS) as pool:
                jobs = [pool.submit(_one, package, registry, partial) for package in plan.packages]
                fetched = sum(job.result() for job in jobs)
            (partial / COMPLETE_MARK).write_text(plan.version + "\n")
            shutil.rmtree(home, ignore_errors=True)
            partial.rename(home)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    link = _link(plan, root, home)
    check_version(link, plan)
    return link, fetched


def _link(plan: CliPlan, root: Path, home: Path) -> Path:
    """``root/bin/<runtime>``: a symlink to a native executable, or a wrapper for a script."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    link, tmp = bin_dir / plan.runtime, bin_dir / f".{plan.runtime}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    if plan.node:
        node = home / plan.node
        tmp.write_text(f'#!/bin/sh\nexec "{node}" "{home / plan.executable}" "$@"\n')
        tmp.chmod(0o755)
        node_link = bin_dir / f".node.{os.getpid()}"
        node_link.unlink(missing_ok=True)
        node_link.symlink_to(node)
        node_link.replace(bin_dir / "node")
    else:
        tmp.symlink_to(home / plan.executable)
    tmp.replace(link)
    return link


def check_version(executable: Path, plan: CliPlan) -> None:
    """``<executable> --version`` must name ``plan.version``.  Raises ``FetchError`` otherwise."""
    try:
        proc = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        printed = proc.stdout + proc.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"{plan.runtime} --version did not run: {exc}") from None
    if not re.search(rf"(?<![\d.]){re.escape(plan.version)}(?![\d.])", printed):
        shown = " ".join(printed.split())[:120]
        raise FetchError(f"{plan.runtime} --version printed '{shown}', not the locked {plan.version}")


def main(argv: Sequence[str] | None = None) -> int:
    """The child process: install each runtime; exit 0, or 1 with one line on stderr."""
    parser = argparse.ArgumentParser(
        prog="python -m fullsend.adapters.agentcli.fetch", description=__doc__.split("\n")[0]
    )
    # npm's own name for its registry setting is lower case; it reads the upper-case one too.
    mirror = os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY") or ""  # noqa: SIM112
    parser.add_argument("--root", required=True, type=Path, help="install root (bin/ and lib/ below it)")
    parser.add_argument(
        "--registry",
        default=mirror,
        help="a mirror of registry.npmjs.org (default: $npm_config_registry, else the lock's URLs)",
    )
    parser.add_argument("--lock-dir", type=Path, default=LOCK_DIR, help=argparse.SUPPRESS)  # tests: other locks
    parser.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="NAME=VERSION",
        help="refuse to install unless the lock pins NAME (claude, codex, pi, node) at VERSION",
    )
    parser.add_argument("runtimes", nargs="+", help="claude, pi and/or codex")
    args = parser.parse_args(argv)
    try:
        if args.expect:
            _check_expected(args.expect, locked_versions(args.lock_dir))
        where = Platform.here()
        for runtime in args.runtimes:
            plan = plan_install(runtime, where, args.lock_dir)
            link, fetched = install(plan, args.root, args.registry)
            print(f"{runtime}={link}", flush=True)
            print(
                f"{runtime} {plan.version}: {len(plan.packages)} packages, {fetched / 1e6:.1f} MB downloaded",
                file=sys.stderr,
                flush=True,
            )
    except (FetchError, ValueError, OSError) as exc:
        print(f"agent CLI install failed: {exc}", file=sys.stderr)
        return 1
    return 0


def _check_expected(expected: Sequence[str], locked: dict[str, str]) -> None:
    """Raise ``FetchError`` unless every ``NAME=VERSION`` of ``expected`` is what the locks pin."""
    for item in expected:
        name, _, version = item.partition("=")
        if locked.get(name) != version:
            raise FetchError(
                f"the lock pins {name} {locked.get(name, '(nothing)')}, not {version}: "
                "rewrite the locks with tools/release/lock-agent-clis.sh"
            )


if __name__ == "__main__":
    sys.exit(main())
