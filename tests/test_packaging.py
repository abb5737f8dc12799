"""What the wheel ships: the product and its simulator, no test double (docs/architecture.md "Layers").

Builds the wheel from this checkout, checks its file list, then runs ``fullsend demo`` and
``fullsend simulator serve`` from the unpacked wheel alone (the checkout is not importable: the
interpreter runs with ``-S`` and a ``PYTHONPATH`` of the unpacked wheel plus the dependencies).
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TEST_DOUBLES = ("anthropic_server", "openai_server", "model_server", "virtual_replay", "burst_traces")

# One worker builds the wheel: two concurrent builds of one source tree race in its build/ folder.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"pip wheel failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    (found,) = out.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def unpacked(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def _wheel_only_env(unpacked: Path) -> dict[str, str]:
    paths = [str(unpacked), *site.getsitepackages()]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONSAFEPATH": "1"}


def test_the_wheel_holds_no_test_double_and_no_test(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.startswith("tests/") or any(d in n for d in TEST_DOUBLES)] == []
    assert "fullsend/simulator/server.py" in names and "fullsend/simulator/agent/main.py" in names
    assert any(n.startswith("fullsend/templates/envelope/") for n in names)
    # The agent CLI lockfiles the slim image installs from (docs/architecture.md "Agent CLI").
    assert {f"fullsend/adapters/agentcli/locks/{runtime}.json" for runtime in ("claude", "codex", "pi")} <= set(names)


def test_demo_runs_from_the_wheel_alone(unpacked: Path, tmp_path: Path):
    code = (
        "import fullsend, sys; assert fullsend.__file__.startswith(sys.argv[1]), fullsend.__file__; "
        "from fullsend.__main__ import main; sys.exit(main(['demo', '--turn-seconds', '1']))"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(unpacked)],
        cwd=tmp_path,
        env=_wheel_only_env(unpacked),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "skip" in proc.stdout.lower()


def test_simulator_serve_starts_from_the_wheel_alone(unpacked: Path, tmp_path: Path):
    code = "import sys; from fullsend.__main__ import main; sys.exit(main(['simulator', 'serve', '--port', '0']))"
    proc = subprocess.Popen(
        [sys.executable, "-S", "-c", code],
        cwd=tmp_path,
        env=_wheel_only_env(unpacked),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        assert "127.0.0.1" in first, first
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_init_writes_its_setup_from_the_wheel_alone(unpacked: Path, tmp_path: Path):
    ref = "0123456789abcdef0123456789abcdef01234567"
    code = f"import sys; from fullsend.__main__ import main; sys.exit(main(['init', '--stages', 'all', '--dispatch', 'self-contained', '--ref', '{ref}']))"
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=tmp_path,
        env=_wheel_only_env(unpacked),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    dispatch = (tmp_path / ".github" / "workflows" / "fullsend-dispatch.yml").read_text()
    assert "  route:\n    name: Route" in dispatch and f"fullsend-ai/steer-action@{ref}" in dispatch
