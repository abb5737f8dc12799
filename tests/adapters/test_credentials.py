"""docs/rules.md#credential-removed, the adapter: the checkout's persisted credential is removed
before any child runs, from every git directory under the workspace; mode and owner of what is
rewritten are kept; nothing is written through a link; what cannot be removed stays for the
reach scan."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from fullsend.adapters.confinement.credentials import remove_credentials

TOKEN = "ghs_" + "d" * 36
SECRETS = {"job token": TOKEN}
HEADER = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
V4 = f'[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = {HEADER}\n'


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    workspace, temp = tmp_path / "work" / "repo", tmp_path / "runner_temp"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    temp.mkdir()
    return workspace, temp


def test_checkout_v4_extraheader_is_cut_keeping_mode_and_owner(tree):
    workspace, temp = tree
    config = workspace / ".git" / "config"
    config.write_text(V4)
    config.chmod(0o664)
    os.chown(config, 1234, 4321)
    assert remove_credentials(workspace, [workspace, temp], SECRETS) == [str(config)]
    assert config.read_text() == '[core]\n\tbare = false\n[http "https://github.com/"]\n'
    assert (oct(config.stat().st_mode & 0o777), config.stat().st_uid, config.stat().st_gid) == (oct(0o664), 1234, 4321)
    assert remove_credentials(workspace, [workspace, temp], SECRETS) == []  # nothing left to remove


def test_checkout_v6_credential_file_is_deleted_and_its_include_left(tree):
    workspace, temp = tree
    included = temp / "git-credentials-9f2e.config"
    included.write_text(f'[http "https://github.com/"]\n\textraheader = {HEADER}\n')
    config = workspace / ".git" / "config"
    config.write_text(
        f'[includeIf "gitdir:{workspace}/.git"]\n\tpath = {included}\n'
        '[includeIf "gitdir:/github/workspace/.git"]\n'
        "\tpath = /github/runner_temp/git-credentials-9f2e.config\n"
    )
    before = config.read_bytes()
    assert remove_credentials(workspace, [workspace, temp], SECRETS) == [str(included)]
    assert not included.exists() and config.read_bytes() == before  # git skips a missing include


@pytest.mark.parametrize("module", ["lib", "logs", "refs", "objects"])
def test_submodule_configs_and_nested_checkouts_are_covered(tree, module):
    """A submodule's git directory is searched whatever its name: git's own folders are skipped
    only at a git directory's root."""
    workspace, temp = tree
    module_dir = workspace / ".git" / "modules" / module
    module_dir.mkdir(parents=True)
    (module_dir / "HEAD").write_text("0" * 40 + "\n")
    nested = workspace / "tools" / "other" / ".git" / "config"
    nested.parent.mkdir(parents=True)
    for path in (module_dir / "config", nested, workspace / ".git" / "config"):
        path.write_text(V4)
    removed = remove_credentials(workspace, [workspace, temp], SECRETS)
    assert sorted(removed) == sorted(str(p) for p in (module_dir / "config", nested, workspace / ".git" / "config"))
    assert all(HEADER not in p.read_text() for p in (module_dir / "config", nested))


def test_a_link_in_place_of_the_config_is_never_written_through(tree, tmp_path):
    workspace, temp = tree
    outside = tmp_path / "outside"
    outside.write_text(V4)
    (workspace / ".git" / "config").symlink_to(outside)
    assert remove_credentials(workspace, [workspace, temp], SECRETS) == [] and outside.read_text() == V4


@pytest.mark.parametrize("odd", ["fifo", "folder", "binary", "too-large"])
def test_an_odd_config_is_left_alone_without_hanging_or_crashing(tree, odd):
    workspace, temp = tree
    config = workspace / ".git" / "config"
    if odd == "fifo":
        os.mkfifo(config)
    elif odd == "folder":
        config.mkdir()
    elif odd == "binary":
        config.write_bytes(b"\xff\xfe\0" + HEADER.encode() + b"\0\n")
    else:
        config.write_text(V4 + "#" * (1024 * 1024 + 1))
    assert remove_credentials(workspace, [workspace, temp], SECRETS) == []  # the reach scan judges it


def test_what_cannot_be_removed_stays_for_the_reach_scan(tree, tmp_path):
    workspace, temp = tree
    elsewhere = tmp_path / "not-a-root.config"
    elsewhere.write_text(f"[http]\n\textraheader = {HEADER}\n")
    config = workspace / ".git" / "config"
    config.write_text(f'[http "https://{TOKEN}@github.com/"]\n\tsslVerify = true\n[include]\n\tpath = {elsewhere}\n')
    assert remove_credentials(workspace, [workspace, temp], SECRETS) == []
    assert TOKEN in config.read_text() and elsewhere.exists()


def test_nothing_to_remove_without_a_secret(tree):
    workspace, temp = tree
    (workspace / ".git" / "config").write_text(V4)
    assert remove_credentials(workspace, [workspace, temp], {}) == []


def test_a_cloud_credential_file_holding_a_runner_token_is_deleted_and_nothing_else(tmp_path):
    """Issue 45: google-github-actions/auth's ``gha-creds-*.json`` carries the OIDC request token
    (which mints tokens that could sign a receipt): deleted before any child; a file of that name
    without a secret, and another file holding one, are the reach scan's (left where they are)."""
    from fullsend.adapters.confinement.credentials import remove_token_files

    token = "oidc-request-token-0123456789abcdef"
    workspace, temp = tmp_path / "workspace", tmp_path / "runner_temp"
    (workspace / "sub").mkdir(parents=True)
    temp.mkdir()
    creds = workspace / "gha-creds-5e1d2c.json"
    creds.write_text(json.dumps({"credential_source": {"headers": {"Authorization": f"Bearer {token}"}}}))
    nested = workspace / "sub" / "gha-creds-77.json"
    nested.write_text(json.dumps({"x": token.encode().hex()}))  # another spelling is no secret form: kept
    plain = workspace / "gha-creds-empty.json"
    plain.write_text("{}")
    other = temp / "notes.json"
    other.write_text(token)
    removed = remove_token_files([workspace, temp], {"OIDC request token": token})
    assert removed == [str(creds.resolve())]
    assert not creds.exists() and nested.exists() and plain.exists() and other.exists()
    assert remove_token_files([workspace], {}) == []
