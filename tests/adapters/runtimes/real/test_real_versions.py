"""Issue 16: the version check on the real pinned CLIs (installed by tools/install_agent_clis.sh):
each reports the version its runtime pins, inside the range the runtime supports."""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.runtimes import RUNTIMES
from fullsend.adapters.runtimes.versions import check_cli_version
from tests.adapters.runtimes.real.real_cli import offline_env, require_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_the_pinned_cli_passes_its_runtimes_version_check(tmp_path: Path, runtime: str) -> None:
    wanted = RUNTIMES[runtime].cli_versions
    cli = require_cli(runtime)
    found = check_cli_version(wanted, runtime, cli, offline_env(tmp_path / "home"), tmp_path)
    assert found == wanted.pinned
