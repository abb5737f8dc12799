"""Fixtures of the container tests (issue 8): podman prerequisites, the local base image, the
built action images, and a measurement log printed at the end of the session.

Prerequisites that are missing make the tests FAIL (never skip) with what is missing and how to
install it: ``.ci/run`` installs them, so in CI they are there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.runner_container import MEASUREMENTS, record
from tests.support.tools import missing_tool

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_DIR = REPO_ROOT / "tools" / "container"
INSTALL_HINT = "apt-get install -y podman runc debootstrap (.ci/run does this)"
BUILD_TIMEOUT_S = 1200

# The end-to-end helpers of tests/app (runner_env, run_entrypoint) are shared with these tests.
sys.path.insert(0, str(REPO_ROOT / "tests" / "app"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "container: builds or runs the action image with podman (issue 8)")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if MEASUREMENTS:
        terminalreporter.section("container measurements (bench/README.md, Container)")
        for label, value in MEASUREMENTS:
            terminalreporter.write_line(f"{label}: {value}")


def _missing_prerequisites() -> list[str]:
    missing = [tool for tool in ("podman", os.environ.get("PODMAN_RUNTIME", "runc")) if shutil.which(tool) is None]
    base_cached = (
        Path(os.environ.get("FULLSEND_CACHE_DIR", Path.home() / ".cache" / "fullsend"))
        / "container"
        / "debian-bookworm-slim.tar"
    ).exists()
    if shutil.which("debootstrap") is None and not base_cached:
        missing.append("debootstrap")
    return missing


def _script(argv: list[str], what: str) -> str:
    proc = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    if proc.returncode != 0:
        pytest.fail(f"{what} failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}\n{proc.stdout[-2000:]}")
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


@pytest.fixture(scope="session")
def podman_base() -> str:
    """The local ``debian:bookworm-slim`` (made once with debootstrap, cached as a tarball)."""
    missing = _missing_prerequisites()
    if missing:
        missing_tool(", ".join(missing), INSTALL_HINT)
    if os.geteuid() != 0:
        missing_tool("root (the container tests run podman as root, as the CI machine does)", "run the tests as root")
    _script([str(TOOLS_DIR / "make-base.sh")], "tools/container/make-base.sh")
    return "debian:bookworm-slim"


def _build(variant_args: list[str]) -> str:
    return _script([str(TOOLS_DIR / "build-image.sh"), *variant_args], "tools/container/build-image.sh")


def image_size_bytes(tag: str) -> int:
    out = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Size}}", tag],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return int(out.strip())


@pytest.fixture(scope="session")
def slim_image(podman_base: str) -> str:
    """The default image (the Dockerfile's last stage, what a runner builds: Python, the action
    and git, no Node.js, no agent CLI); its size is recorded."""
    tag = _build([])
    record("slim (default) image size", f"{image_size_bytes(tag) / 1e6:.1f} MB ({tag})")
    return tag


@pytest.fixture(scope="session")
def core_image(slim_image: str) -> str:
    """The image without any agent CLI: since issue 20 that is the default, slim image."""
    return slim_image


@pytest.fixture(scope="session")
def default_image(slim_image: str) -> str:
    """The image exactly as a runner builds it (no build arguments): the slim image."""
    return slim_image


@pytest.fixture(scope="session")
def full_image(podman_base: str) -> str:
    """The full image (``--target full``: git and every agent CLI from the locks); size recorded."""
    tag = _build(["--full"])
    record("full image size (git + claude, pi, codex)", f"{image_size_bytes(tag) / 1e6:.1f} MB ({tag})")
    return tag
