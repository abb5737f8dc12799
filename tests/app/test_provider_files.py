"""Issue 19 B: provider definitions are regular files inside the workspace, read with a size
bound; anything else is "unreadable" and turns the receipt check off with one line (fail open),
at once (no unbounded read, no hang)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fullsend.app.action.providers import PROVIDER_FILE_LIMIT_BYTES, providers_refusal
from tests.app.test_preflight_wiring import _check

pytestmark = pytest.mark.timeout(20)
GOOD = 'name: github\ntype: t\ncredentials: {GITHUB_TOKEN: "${GH_TOKEN}"}\n'


def _providers(workspace: Path) -> Path:
    providers = workspace / ".fullsend" / "providers"
    providers.mkdir(parents=True)
    (providers / "github.yaml").write_text(GOOD)
    return providers


def _refusal(workspace: Path) -> str | None:
    return providers_refusal(str(workspace / ".fullsend"), str(workspace))


def test_regular_definitions_inside_the_workspace_are_read(tmp_path):
    providers = _providers(tmp_path)
    (providers / "nested.yaml").mkdir()  # a directory named like a definition is not one
    assert _refusal(tmp_path) is None


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/fd/1"], ids=["dev-zero", "own-stdout"])
def test_a_definition_linked_to_a_device_or_a_stream_is_unreadable_at_once(tmp_path, target):
    (_providers(tmp_path) / "evil.yaml").symlink_to(target)
    assert (
        _refusal(tmp_path)
        == "provider definitions unreadable: evil.yaml is a symbolic link; only regular files are read"
    )


def test_a_definition_linked_to_a_file_outside_the_workspace_is_unreadable(tmp_path):
    workspace, outside = tmp_path / "workspace", tmp_path / "outside.yaml"
    outside.write_text(GOOD)
    (_providers(workspace) / "elsewhere.yml").symlink_to(outside)
    assert (
        _refusal(workspace)
        == "provider definitions unreadable: elsewhere.yml is a symbolic link; only regular files are read"
    )


def test_a_definition_linked_to_a_file_inside_the_workspace_is_unreadable_too(tmp_path):
    providers = _providers(tmp_path)
    (providers / "alias.yaml").symlink_to(providers / "github.yaml")
    assert (_refusal(tmp_path) or "").startswith("provider definitions unreadable: alias.yaml is a symbolic link")


def test_a_fifo_is_unreadable_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(_providers(tmp_path) / "pipe.yaml")
    assert _refusal(tmp_path) == "provider definitions unreadable: pipe.yaml is not a regular file"


def test_an_oversized_definition_is_unreadable(tmp_path):
    big = _providers(tmp_path) / "big.yaml"
    big.write_text(GOOD + "#" * PROVIDER_FILE_LIMIT_BYTES)
    assert _refusal(tmp_path) == "provider definitions unreadable: big.yaml is larger than 64 KiB"
    big.write_text(GOOD + "#" * (PROVIDER_FILE_LIMIT_BYTES - len(GOOD)))  # exactly at the bound
    assert _refusal(tmp_path) is None


def test_a_providers_directory_resolving_outside_the_workspace_is_unreadable(tmp_path):
    workspace, elsewhere = tmp_path / "workspace", tmp_path / "elsewhere"
    (elsewhere).mkdir()
    (elsewhere / "github.yaml").write_text(GOOD)
    (workspace / ".fullsend").mkdir(parents=True)
    (workspace / ".fullsend" / "providers").symlink_to(elsewhere)
    assert _refusal(workspace) == "provider definitions unreadable: providers/ lies outside the workspace"


def test_an_unreadable_definition_turns_the_receipt_check_off_with_one_line(tmp_path):
    (_providers(tmp_path) / "evil.yaml").symlink_to("/dev/zero")
    skip, lines, _ = _check(tmp_path, fullsend_dir=str(tmp_path / ".fullsend"), workspace=str(tmp_path))
    assert skip is None
    assert lines == [
        (
            "info",
            "Not skipping on a steer receipt: provider definitions unreadable: evil.yaml is a "
            "symbolic link; only regular files are read [receipt-lists-my-run]",
        )
    ]
