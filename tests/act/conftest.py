"""Fixtures of the act tests (issue 10): prerequisites, the images, podman's Docker-compatible
service, a work directory and the simulator.

A missing prerequisite makes the tests FAIL (never skip) with what is missing and how to install
it: ``.ci/run`` installs everything, so in CI it is all there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.act.act_harness import ACT_VENV, REPO_ROOT, TIMINGS, SimulatorProcess, missing_prerequisites, script
from tests.support.tools import missing_tool

#: Building the images on a fresh machine (debootstrap, then pip and npm inside the build): about
#: 130 s measured; the test's own limit (600 s) leaves room for the two act runs after it.
IMAGES_TIMEOUT_S = 480


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The adopter-path plays after the other act plays (a stable reorder, the same on every
    xdist worker): the act group runs on one worker, one play after another, and the release the
    adopter plays pin is the last image .ci/run builds in the background."""
    adopter = [item for item in items if "/tests/act/adopter/" in item.path.as_posix()]
    others = [item for item in items if "/tests/act/" in item.path.as_posix() and item not in adopter]
    if not adopter or not others:
        return
    rest = [item for item in items if item not in adopter]
    at = rest.index(others[-1]) + 1
    items[:] = rest[:at] + adopter + rest[at:]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TIMINGS:
        terminalreporter.section("act timings")
        for label, seconds in TIMINGS:
            terminalreporter.write_line(f"{label}: {seconds:.1f} s")


@pytest.fixture(scope="session")
def act_bin() -> Path:
    """The act binary, once every prerequisite is checked (fails naming what is missing)."""
    missing = missing_prerequisites()
    if missing:
        missing_tool("; ".join(missing), "the commands in brackets, or bash .ci/run, which runs them all")
    return ACT_VENV / "bin" / "act"


@pytest.fixture(scope="session")
def job_image(act_bin: Path) -> str:
    """The base, the action image (as ``act-dockeraction:latest``) and the job image, made or
    loaded from FULLSEND_CACHE_DIR by ``tools/act/prepare-images.sh``; returns the job image."""
    started = time.monotonic()
    try:
        tag = script(
            [str(REPO_ROOT / "tools" / "act" / "prepare-images.sh")], "tools/act/prepare-images.sh", IMAGES_TIMEOUT_S
        )
    except AssertionError as exc:
        pytest.fail(f"the images for act could not be made: {exc}", pytrace=False)
    TIMINGS.append(("images (tools/act/prepare-images.sh)", time.monotonic() - started))
    return tag


@pytest.fixture(scope="session")
def docker_host(act_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """podman's Docker-compatible service on a socket of this session (stopped at the end)."""
    socket_path = tmp_path_factory.mktemp("podman") / "podman.sock"
    service = str(REPO_ROOT / "tools" / "act" / "podman-service.sh")
    try:
        export = script([service, "start", str(socket_path)], "podman's Docker-compatible service", 120)
    except AssertionError as exc:
        pytest.fail(f"podman's Docker-compatible service did not start: {exc}", pytrace=False)
    try:
        yield export.removeprefix("export DOCKER_HOST=")
    finally:
        script([service, "stop", str(socket_path)], "stopping podman's service", 60)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A work directory made by ``tools/act/workdir.sh`` (the examples installed)."""
    return Path(
        script([str(REPO_ROOT / "tools" / "act" / "workdir.sh"), str(tmp_path / "work")], "tools/act/workdir.sh", 120)
    )


@pytest.fixture
def simulator(workdir: Path) -> Iterator[SimulatorProcess]:
    """``fullsend simulator serve`` with examples/scenarios/review-steer.yml on a free port, serving
    the work directory as the repository over git (the workflows' checkouts fetch from it)."""
    served = SimulatorProcess.start(repository=workdir)
    try:
        yield served
    finally:
        served.stop()
