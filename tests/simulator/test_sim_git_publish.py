"""``fullsend simulator serve --repository DIR``: a folder served as the repository over git, and
the act flags for the example workflows' checkouts (README "Run it locally with act")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fullsend.app.commands.simulator_repo import checkout_flags, serve_folder
from fullsend.errors import ConfigError
from fullsend.simulator.git.publish import pull_request_refs
from fullsend.simulator.server import GitHubSimulator

READER = "ghs_" + "reader-of-the-repo"
PIN = "11bd71901bbe5b1630ceea73d27597364c9af683"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / ".fullsend").mkdir(parents=True)
    (folder / "action.yml").write_text("name: x\n")
    (folder / ".fullsend" / "harness.yaml").write_text("poll: 2\n")
    (folder / ".git").mkdir()  # what workdir.sh keeps for act, never served
    (folder / ".git" / "agent").write_text("secret to the work directory\n")
    return folder


def test_the_folder_is_served_at_main_and_at_each_pull_requests_head(tmp_path):
    folder = _folder(tmp_path)
    with GitHubSimulator() as sim:
        sim.add_token(READER, "reader", "Bot")
        sim.add_pull_request(7, "0" * 40, head_ref="feature")
        scratch = serve_folder(sim, folder, [7])
        url = f"{sim.urls.web.replace('http://', f'http://x-access-token:{READER}@')}/org/repo.git"
        listed = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True, timeout=60, check=True)
        refs = dict(reversed(line.split("\t")) for line in listed.stdout.splitlines())
        assert {"refs/heads/main", "refs/heads/feature", "refs/pull/7/head"} <= set(refs)
        assert len({refs["refs/heads/main"], refs["refs/heads/feature"], refs["refs/pull/7/head"]}) == 1
        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", url, str(clone)], capture_output=True, timeout=60, check=True)
        files = subprocess.run(["git", "ls-files"], cwd=clone, capture_output=True, text=True, check=True).stdout
        assert files.split() == [".fullsend/harness.yaml", "action.yml"]
        assert scratch.is_dir() and not (folder / ".git" / "objects").exists()  # the folder is only read


def test_a_missing_folder_is_a_config_error_naming_it(tmp_path):
    with GitHubSimulator() as sim, pytest.raises(ConfigError, match=r"--repository .*nowhere: no such directory"):
        serve_folder(sim, tmp_path / "nowhere", [])


def test_each_pinned_action_with_a_stand_in_gets_its_local_repository(tmp_path):
    folder = tmp_path / "work"
    (folder / ".github" / "workflows").mkdir(parents=True)
    (folder / ".github" / "workflows" / "a.yml").write_text(
        f"steps:\n  - uses: actions/checkout@{PIN} # v4\n  - uses: actions/cache@{'1' * 40}\n"
        f"  - uses: actions/checkout@{PIN}\n"
    )
    stand_ins = tmp_path / "stand-ins"
    (stand_ins / "checkout").mkdir(parents=True)
    assert checkout_flags(folder, "http://127.0.0.1:9", stand_ins) == [
        "--env GITHUB_SERVER_URL=http://127.0.0.1:9",
        f"--local-repository actions/checkout@{PIN}={stand_ins / 'checkout'}",
    ]


def test_the_refs_a_checkout_asks_for_each_once_and_a_named_head_as_a_branch():
    assert pull_request_refs([(7, "feature", "a" * 40), (8, "main", "aaa111")], "main") == [
        "refs/heads/main",
        "refs/heads/feature",
        "refs/pull/7/head",
        "refs/pull/8/head",
        "refs/heads/aaa111",
    ]
