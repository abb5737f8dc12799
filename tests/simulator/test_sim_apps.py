"""GitHub Apps' installation tokens in the simulator (fullsend/simulator/apps.py), taken the way
actions/create-github-app-token takes them — by the act stand-in of that action, run here as a
script: a JWT signed with the App's private key, the installation, the token."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from fullsend.simulator.apps import App, AppsServer
from fullsend.simulator.server import GitHubSimulator

STAND_IN = Path(__file__).resolve().parents[2] / "tools" / "act" / "stand-ins" / "create-github-app-token" / "main.py"


def _key_pair(folder: Path, name: str) -> tuple[str, str]:
    private = folder / f"{name}.pem"
    subprocess.run(["openssl", "genrsa", "-out", str(private), "2048"], check=True, capture_output=True)
    public = subprocess.run(
        ["openssl", "rsa", "-in", str(private), "-pubout"], check=True, capture_output=True, text=True
    ).stdout
    return private.read_text(), public


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    folder = tmp_path_factory.mktemp("keys")
    return {name: _key_pair(folder, name) for name in ("fixer", "stranger")}


def _mint(
    sim: GitHubSimulator, tmp_path: Path, client_id: str, private: str, permissions: str
) -> subprocess.CompletedProcess[str]:
    output = tmp_path / "output"
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": "org/repo",
        "GITHUB_API_URL": sim.api_url,
        "GITHUB_OUTPUT": str(output),
        "STAND_IN_CLIENT_ID": client_id,
        "STAND_IN_PRIVATE_KEY": private,
        "STAND_IN_PERMISSIONS": permissions,
    }
    return subprocess.run([sys.executable, str(STAND_IN)], env=env, capture_output=True, text=True, timeout=60)


def test_an_app_key_gets_an_installation_token_with_the_permissions_asked(keys, tmp_path):
    with GitHubSimulator() as sim:
        apps = AppsServer(sim)
        sim.extensions.append(apps)
        apps.add(App("org-fix", "Iv1.fix", keys["fixer"][1], {"contents": "write", "pull_requests": "write"}))
        made = _mint(sim, tmp_path, "Iv1.fix", keys["fixer"][0], "contents=write pull_requests=write issues=")
        assert made.returncode == 0, made.stderr
        outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
        assert outputs["app-slug"] == "org-fix" and outputs["token"].startswith("ghs_")
        assert f"::add-mask::{outputs['token']}" in made.stdout
        assert sim.contents_permission(outputs["token"]) == "write"
        me = requests.post(
            f"{sim.api_url}/repos/org/repo/issues/1/comments",
            headers={"Authorization": f"token {outputs['token']}"},
            json={"body": "x"},
            timeout=10,
        )
        assert me.status_code == 404  # known token (no issue #1), not 401
        narrowed = _mint(sim, tmp_path, "Iv1.fix", keys["fixer"][0], "contents=read pull_requests=write")
        assert narrowed.returncode == 0
        assert [(slug, perms) for slug, _, perms in apps.issued][-1] == (
            "org-fix",
            {"contents": "read", "pull_requests": "write"},
        )
        assert sim.contents_permission(apps.issued[-1][1]) == "read"


def test_a_key_that_is_not_the_apps_or_a_wider_permission_is_refused(keys, tmp_path):
    with GitHubSimulator() as sim:
        apps = AppsServer(sim)
        sim.extensions.append(apps)
        apps.add(App("org-review", "Iv1.review", keys["fixer"][1], {"contents": "read", "pull_requests": "write"}))
        forged = _mint(sim, tmp_path, "Iv1.review", keys["stranger"][0], "")
        assert forged.returncode != 0 and "answered 401" in forged.stderr
        unknown = _mint(sim, tmp_path, "Iv1.nobody", keys["fixer"][0], "")
        assert unknown.returncode != 0 and "answered 401" in unknown.stderr
        wider = _mint(sim, tmp_path, "Iv1.review", keys["fixer"][0], "contents=write")
        assert wider.returncode != 0 and "answered 422" in wider.stderr
        assert apps.issued == []
