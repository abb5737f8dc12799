"""The files a repository adopter or contributor looks for first: the licence pyproject names,
the security policy and its scope, the contributing pointer, the issue template, and the one
version every part of the package reports."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import yaml

from fullsend import __version__

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_licence_is_the_apache_2_0_text_pyproject_names() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["license"] == {"text": "Apache-2.0"}
    text = (REPO_ROOT / "LICENSE").read_text(encoding="utf-8")
    assert re.match(r"\s*Apache License\n\s*Version 2\.0, January 2004\n", text)
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "9. Accepting Warranty or Additional Liability." in text and "END OF TERMS AND CONDITIONS" in text


def test_the_security_policy_says_how_to_report_privately_and_what_is_in_scope() -> None:
    text = (REPO_ROOT / "SECURITY.md").read_text(encoding="utf-8")
    assert "Report a vulnerability" in text and "never in a public issue" in text
    scope = text.split("## In scope", 1)[1].split("\n## ", 1)[0]
    for item in ("**The receipt.**", "**The token isolation.**", "**The envelope and provenance.**"):
        assert item in scope


def test_contributing_points_to_the_contributor_docs() -> None:
    text = (REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "(docs/contributing.md)" in text and "(docs/architecture.md)" in text and "(SECURITY.md)" in text


def test_the_issue_template_is_a_form_that_asks_for_the_version() -> None:
    form = yaml.safe_load((REPO_ROOT / ".github" / "ISSUE_TEMPLATE" / "bug.yml").read_text(encoding="utf-8"))
    assert form["name"] and form["description"]
    ids = [field.get("id") for field in form["body"] if field["type"] != "markdown"]
    assert ids == ["version", "happened", "expected", "workflow"]
    assert all(field["attributes"]["label"] for field in form["body"] if field["type"] != "markdown")


def test_the_package_has_one_version() -> None:
    """pyproject reads ``fullsend.__version__``; the installed metadata is the same string."""
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fullsend.__version__"}
    assert importlib.metadata.version("fullsend-steer-action") == __version__
