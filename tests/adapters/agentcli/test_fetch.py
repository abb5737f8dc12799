"""Issue 20: the agent CLI installed from its lock — pinned, integrity-checked, no package script.

``python -m fullsend.adapters.agentcli.fetch`` runs as a subprocess against a registry on
127.0.0.1 (tests/support/npm_registry.py) with locks written here, so nothing leaves the machine;
the shipped locks are checked for what they pin.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fullsend.adapters.agentcli.lock import NPM_REGISTRY, Platform, fits, plan_install, runtimes
from tests.support.npm_registry import FakeRegistry, integrity, npm_tarball

REPO_ROOT = Path(__file__).resolve().parents[3]
HERE = Platform.here()
OTHER_CPU = "arm64" if HERE.cpu == "x64" else "x64"
CLAUDE = "2.1.296"
FAKE_CLAUDE = f"#!/bin/sh\necho '{CLAUDE} (Claude Code)'\n"


def _claude_path(cpu: str) -> str:
    return f"@anthropic-ai/claude-code-linux-{cpu}/-/claude-code-linux-{cpu}-{CLAUDE}.tgz"


def _write_lock(lock_dir: Path, runtime: str, packages: dict) -> None:
    lock_dir.mkdir(parents=True, exist_ok=True)
    lock = {"name": f"lock-{runtime}", "lockfileVersion": 3, "requires": True, "packages": {"": {}, **packages}}
    (lock_dir / f"{runtime}.json").write_text(json.dumps(lock))


def _claude_lock(lock_dir: Path, blobs: dict[str, bytes], claimed: dict[str, bytes] | None = None) -> None:
    """A claude lock whose platform packages hold ``blobs``; ``claimed`` overrides the bytes
    the lock's integrity is computed from (to make the served bytes wrong)."""
    packages = {
        "node_modules/@anthropic-ai/claude-code": {
            "version": CLAUDE,
            "resolved": f"{NPM_REGISTRY}@anthropic-ai/claude-code/-/claude-code-{CLAUDE}.tgz",
            "integrity": integrity(b"never fetched"),
            "hasInstallScript": True,
        }
    }
    for cpu in ("x64", "arm64"):
        path = _claude_path(cpu)
        packages[f"node_modules/@anthropic-ai/claude-code-linux-{cpu}"] = {
            "version": CLAUDE,
            "resolved": NPM_REGISTRY + path,
            "integrity": integrity((claimed or blobs)[path]),
            "os": ["linux"],
            "cpu": [cpu],
            "libc": ["glibc"],
            "optional": True,
        }
    _write_lock(lock_dir, "claude", packages)


def _blobs(script: str = FAKE_CLAUDE) -> dict[str, bytes]:
    return {
        _claude_path(cpu): npm_tarball({"claude": script, "package.json": "{}"}, {"claude": 0o755})
        for cpu in ("x64", "arm64")
    }


def _fetch(root: Path, registry: FakeRegistry, lock_dir: Path, *runtimes_: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "fullsend.adapters.agentcli.fetch",
        "--root",
        str(root),
        "--registry",
        registry.url,
        "--lock-dir",
        str(lock_dir),
        *runtimes_,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=root.parent)


def test_installs_the_platforms_package_links_it_and_checks_its_version(tmp_path):
    blobs = _blobs()
    _claude_lock(tmp_path / "locks", blobs)
    with FakeRegistry(blobs) as registry:
        first = _fetch(tmp_path / "root", registry, tmp_path / "locks", "claude")
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == f"claude={tmp_path / 'root' / 'bin' / 'claude'}"
        assert registry.requests == [_claude_path(HERE.cpu)]  # only this platform's, no launcher package
        again = _fetch(tmp_path / "root", registry, tmp_path / "locks", "claude")
        assert again.returncode == 0 and registry.requests == [_claude_path(HERE.cpu)]  # a complete install is reused
    out = subprocess.run(
        [str(tmp_path / "root" / "bin" / "claude"), "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"{CLAUDE} (Claude Code)"


def test_bytes_that_do_not_match_the_locks_integrity_are_never_unpacked(tmp_path):
    served = _blobs(FAKE_CLAUDE + "echo tampered\n")
    _claude_lock(tmp_path / "locks", served, claimed=_blobs())
    with FakeRegistry(served) as registry:
        proc = _fetch(tmp_path / "root", registry, tmp_path / "locks", "claude")
    assert proc.returncode == 1
    assert "does not match the lock's integrity" in proc.stderr
    assert not (tmp_path / "root" / "bin" / "claude").exists()
    assert list((tmp_path / "root" / "lib").iterdir()) == []


def test_a_cli_that_reports_another_version_is_refused(tmp_path):
    blobs = _blobs("#!/bin/sh\necho '2.1.295 (Claude Code)'\n")
    _claude_lock(tmp_path / "locks", blobs)
    with FakeRegistry(blobs) as registry:
        proc = _fetch(tmp_path / "root", registry, tmp_path / "locks", "claude")
    assert proc.returncode == 1
    assert f"printed '2.1.295 (Claude Code)', not the locked {CLAUDE}" in proc.stderr


def test_links_and_paths_leaving_the_package_are_not_unpacked(tmp_path):
    import io
    import tarfile

    from fullsend.adapters.agentcli.fetch import unpack

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in ("package/ok.txt", "package/../../escaped.txt", "/abs.txt"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
        link = tarfile.TarInfo("package/passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    buf.seek(0)
    dest = tmp_path / "a" / "b"
    assert unpack(buf, dest) == 1
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file() or p.is_symlink()) == ["ok.txt"]


def test_a_javascript_cli_runs_through_the_locked_node(tmp_path):
    node = '#!/bin/sh\nexec /bin/sh "$@"\n'  # stands in for Node.js: runs the "script" with sh
    blobs = {
        f"node-linux-{cpu}/-/node-linux-{cpu}-22.23.5.tgz": npm_tarball(
            {"bin/node": node, "include/node.h": "x"}, {"bin/node": 0o755}
        )
        for cpu in ("x64", "arm64")
    }
    blobs["@earendil-works/pi-coding-agent/-/pi-coding-agent-0.84.4.tgz"] = npm_tarball(
        {"dist/cli.js": "echo 0.84.4\n"}
    )
    packages = {
        f"node_modules/{path.split('/-/')[0]}": {
            "version": "22.23.5" if path.startswith("node") else "0.84.4",
            "resolved": NPM_REGISTRY + path,
            "integrity": integrity(blob),
            **(
                {"os": "linux", "cpu": path.split("/")[0].rsplit("-", 1)[1]}
                if path.startswith("node")
                else {"bin": {"pi": "dist/cli.js"}}
            ),
        }
        for path, blob in blobs.items()
    }
    _write_lock(tmp_path / "locks", "pi", packages)
    with FakeRegistry(blobs) as registry:
        proc = _fetch(tmp_path / "root", registry, tmp_path / "locks", "pi")
    assert proc.returncode == 0, proc.stderr
    home = tmp_path / "root" / "lib" / "pi-0.84.4" / "node_modules"
    wrapper = (tmp_path / "root" / "bin" / "pi").read_text()
    assert (
        wrapper
        == f'#!/bin/sh\nexec "{home}/node-linux-{HERE.cpu}/bin/node" "{home}/@earendil-works/pi-coding-agent/dist/cli.js" "$@"\n'
    )
    assert (tmp_path / "root" / "bin" / "node").resolve() == home / f"node-linux-{HERE.cpu}" / "bin" / "node"
    assert not (home / f"node-linux-{HERE.cpu}" / "include").exists()  # C headers: only for addons
    assert not (home / f"node-linux-{OTHER_CPU}").exists()


@pytest.mark.parametrize(
    ("entry", "where", "fit"),
    [
        ({}, Platform("linux", "x64", "glibc"), True),
        ({"os": ["linux"], "cpu": ["x64"], "libc": ["glibc"]}, Platform("linux", "x64", "glibc"), True),
        ({"os": ["linux"], "cpu": ["x64"], "libc": ["musl"]}, Platform("linux", "x64", "glibc"), False),
        ({"os": "linux", "cpu": "arm64"}, Platform("linux", "x64", "glibc"), False),
        ({"os": ["!win32"]}, Platform("linux", "x64", "glibc"), True),
        ({"os": ["!linux"]}, Platform("linux", "x64", "glibc"), False),
        ({"os": ["darwin", "linux"]}, Platform("linux", "arm64", "glibc"), True),
    ],
)
def test_platform_fields_follow_npms_rule(entry, where, fit):
    assert fits(entry, where) is fit


def _script_pin(name: str) -> str:
    found = re.search(rf"^{name}=(\S+)$", (REPO_ROOT / "tools" / "install_agent_clis.sh").read_text(), re.M)
    assert found, name
    return found.group(1)


@pytest.mark.parametrize("cpu", ["x64", "arm64"])
def test_the_shipped_locks_pin_what_the_real_cli_tests_run(cpu):
    """Every runtime has a lock; each chosen package is from registry.npmjs.org with a sha512,
    and the versions are tools/install_agent_clis.sh's pins (the CLIs tests/adapters/runtimes/real drive)."""
    assert runtimes() == ("claude", "codex", "pi")
    pins = {
        "claude": _script_pin("CLAUDE_CODE_VERSION"),
        "codex": _script_pin("CODEX_VERSION"),
        "pi": _script_pin("PI_VERSION"),
    }
    for runtime in runtimes():
        plan = plan_install(runtime, Platform("linux", cpu, "glibc"))
        assert plan.version == pins[runtime]
        assert plan.packages and all(
            p.resolved.startswith(NPM_REGISTRY) and p.integrity.startswith("sha512-") for p in plan.packages
        )
    pi = plan_install("pi", Platform("linux", cpu, "glibc"))
    assert pi.node == f"node_modules/node-linux-{cpu}/bin/node"
    assert any(
        p.path == f"node_modules/node-linux-{cpu}" and p.version == _script_pin("NODE_VERSION") for p in pi.packages
    )


def test_a_lock_that_disagrees_with_the_expected_pins_is_refused(tmp_path):
    """The full image's build names its pins (--expect); a lockfile left behind by a bump is refused."""
    from fullsend.adapters.agentcli.lock import locked_versions

    locked = locked_versions()
    assert set(locked) == {"claude", "codex", "pi", "node"}
    assert locked["node"] == _script_pin("NODE_VERSION")
    argv = [
        sys.executable,
        "-m",
        "fullsend.adapters.agentcli.fetch",
        "--root",
        str(tmp_path / "root"),
        "--expect",
        f"claude={locked['claude']}",
        "--expect",
        "node=0.0.1",
        "claude",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert (
        f"the lock pins node {locked['node']}, not 0.0.1: rewrite the locks with tools/release/lock-agent-clis.sh"
        in proc.stderr
    )
    assert not (tmp_path / "root").exists()
