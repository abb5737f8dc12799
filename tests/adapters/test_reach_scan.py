"""docs/rules.md#token-in-reach, the scan: by value, every spelling, child-readable files only,
``.git/config`` includes outside the roots, and a budget that runs out means "unknown"."""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest

from fullsend.adapters.confinement.reach import ScanLimits, scan_for_secrets

TOKEN = "ghs_Reach+Test/0001"
CHILD = 61998


@pytest.fixture
def tmp_path():
    """A fresh folder every uid can search (pytest's own sits under a folder of mode 700)."""
    root = Path(tempfile.mkdtemp(prefix="fullsend-reach-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "deep" / "er").mkdir(parents=True)
    (root / "plain.txt").write_text("nothing here\n")
    for folder in (tmp_path, root, root / "deep", root / "deep" / "er"):
        folder.chmod(0o755)
    return root


def test_each_spelling_of_the_token_in_a_world_readable_file_is_found(tmp_path):
    root = _tree(tmp_path)
    spellings = {
        "raw": TOKEN,
        "b64": base64.b64encode(TOKEN.encode()).decode(),
        "basic": "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode(),
        "url": f"https://x/?t={quote(TOKEN, safe='')}",
    }
    for name, text in spellings.items():
        path = root / "deep" / "er" / f"{name}.txt"
        path.write_text(text)
        path.chmod(0o644)
        result = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD)
        assert result.found == ((str(path), "job token"),), name
        assert result.complete
        path.unlink()
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found == ()


def test_a_json_escaped_secret_is_found_where_its_raw_spelling_is_absent(tmp_path):
    root = _tree(tmp_path)
    secret = 'oidc"request\\token'
    path = root / "gha-creds-1.json"
    path.write_text(json.dumps({"request_token": secret}))
    path.chmod(0o644)
    assert secret.encode() not in path.read_bytes()
    found = scan_for_secrets([root], {"OIDC request token": secret}, CHILD, CHILD).found
    assert found == ((str(path), "OIDC request token"),)


def test_a_file_the_child_cannot_read_or_reach_is_not_a_finding_but_one_it_owns_is(tmp_path):
    root = _tree(tmp_path)
    secret = root / "deep" / "er" / "secret"
    secret.write_text(TOKEN)
    secret.chmod(0o600)  # root's, mode 600: out of the child's reach
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found == ()
    secret.chmod(0o644)
    (root / "deep").chmod(0o700)  # a folder above it the child cannot search
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found == ()
    (root / "deep").chmod(0o755)
    secret.chmod(0o640)
    os.chown(secret, 0, CHILD)  # the child's group may read it
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found == ((str(secret), "job token"),)
    os.chown(secret, CHILD, 0)
    secret.chmod(0o000)  # the child owns it: it may chmod it back
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found == ((str(secret), "job token"),)


def test_a_file_git_config_includes_outside_every_root_is_scanned(tmp_path):
    root = _tree(tmp_path)
    (root / ".git").mkdir(mode=0o755)
    elsewhere = tmp_path / "runner_temp" / "git-credentials-1.config"
    elsewhere.parent.mkdir(mode=0o755)
    header = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    elsewhere.write_text(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {header}\n')
    elsewhere.chmod(0o644)
    (root / ".git" / "config").write_text(f'[includeIf "gitdir:{root}/.git"]\n\tpath = "{elsewhere}"\n')
    result = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD)
    assert result.found == ((str(elsewhere), "job token"),)


def test_a_spent_budget_is_unknown_and_a_large_file_is_searched_in_blocks(tmp_path):
    root = _tree(tmp_path)
    for i in range(3):
        (root / f"f{i}").write_text("x")
    few = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD, ScanLimits(max_files=2))
    assert (few.complete, few.unknown) == (False, "more than 2 files")
    small = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD, ScanLimits(budget_bytes=2))
    assert (small.complete, small.unknown) == (False, "more than 2 bytes to read")
    (root / "blob.bin").write_bytes(b"\0" * 50 + TOKEN.encode() + b"\0" * 50)  # the token across a block edge
    capped = ScanLimits(file_cap_bytes=32)
    found = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD, capped)
    assert (found.complete, found.found) == (True, ((str(root / "blob.bin"), "job token"),))
    tight = ScanLimits(file_cap_bytes=32, budget_bytes=100)
    spent = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD, tight)
    assert (spent.complete, spent.unknown) == (False, "more than 100 bytes to read")


def test_a_hard_link_the_child_can_read_is_searched_though_another_link_is_closed(tmp_path):
    root = _tree(tmp_path)
    closed = tmp_path / "closed"  # scanned first: a root the child cannot search
    closed.mkdir(mode=0o700)
    secret = closed / "a"
    secret.write_text(TOKEN)
    secret.chmod(0o644)
    os.link(secret, root / "b")
    result = scan_for_secrets([closed, root], {"job token": TOKEN}, CHILD, CHILD)
    assert result.found == ((str(root / "b"), "job token"),)


def test_a_nul_byte_in_an_include_path_is_no_crash(tmp_path):
    root = _tree(tmp_path)
    (root / ".git").mkdir(mode=0o755)
    (root / ".git" / "config").write_text('[include]\n\tpath = "a\0b"\n')
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).complete


def test_a_link_is_never_followed(tmp_path):
    root = _tree(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text(TOKEN)
    outside.chmod(0o644)
    (root / "link").symlink_to(outside)
    assert scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found == ()


def test_for_a_public_job_token_only_encoded_spellings_count(tmp_path):
    root = _tree(tmp_path)
    raw, basic = root / "README.md", root / "header"
    raw.write_text(f"-s GITHUB_TOKEN={TOKEN}\n")
    basic.write_text(base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode())
    for path in (raw, basic):
        path.chmod(0o644)
    public = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD, encoded_only=True)
    assert public.found == ((str(basic), "job token"),)
    assert len(scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD).found) == 2


def test_git_objects_are_not_walked_but_the_rest_of_git_is(tmp_path):
    root = _tree(tmp_path)
    objects = root / ".git" / "objects" / "ab"
    objects.mkdir(parents=True)
    for folder in (root / ".git", objects.parent, objects):
        folder.chmod(0o755)
    for path in (objects / "cdef", root / ".git" / "FETCH_HEAD"):
        path.write_text(TOKEN)
        path.chmod(0o644)
    result = scan_for_secrets([root], {"job token": TOKEN}, CHILD, CHILD, ScanLimits(max_files=2))
    assert result.found == ((str(root / ".git" / "FETCH_HEAD"), "job token"),) and result.complete
