"""Issue 31: ``app-manifest.json`` registers the GitHub App the stages need, exactly
(docs/adopting.md "Create the GitHub App from the manifest"): every permission the workflows ask
of the App's token and every one the docs list, and nothing more; no webhook and no events; and
``docs/create-app.html`` sends that manifest byte for byte."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fullsend.app.commands.init import HOSTED_DISPATCH, InitPlan, parse_stages, render_files
from fullsend.app.commands.init_hints import APP_MANIFEST_URL
from fullsend.app.commands.init_stages import STAGE_SPECS
from fullsend.core.app_names import AUTHOR_SUFFIX, REVIEW_SUFFIX, author_app_name, review_app_name
from tests.support.tools import missing_tool

REPO_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = json.loads((REPO_ROOT / "app-manifest.json").read_text(encoding="utf-8"))
REVIEW_MANIFEST = json.loads((REPO_ROOT / "app-manifest-review.json").read_text(encoding="utf-8"))
REF = "0123456789abcdef0123456789abcdef01234567"
LEVEL = {"read": 1, "write": 2, "admin": 3}
#: The parameters GitHub's manifest flow takes ("Registering a GitHub App from a manifest").
MANIFEST_PARAMETERS = {
    "name",
    "url",
    "hook_attributes",
    "redirect_url",
    "callback_urls",
    "setup_url",
    "description",
    "public",
    "default_events",
    "default_permissions",
    "request_oauth_on_install",
    "setup_on_update",
}
#: Beyond what the workflows ask: metadata (GitHub grants it to every App) and actions read (the
#: agent stage's Actions reads under the role token with allow_shared_uid, docs/adopting.md).
EXTRA = {"metadata": "read", "actions": "read"}


def _asked_in(text: str) -> dict[str, str]:
    """``permission-<scope>: <level>`` of every create-github-app-token step in a workflow."""
    asked: dict[str, str] = {}
    for job in yaml.safe_load(text)["jobs"].values():
        for step in job.get("steps", []):
            if "create-github-app-token" in str(step.get("uses", "")):
                for key, level in step["with"].items():
                    if key.startswith("permission-"):
                        scope = key.removeprefix("permission-").replace("-", "_")
                        asked[scope] = max(asked.get(scope, level), level, key=LEVEL.__getitem__)
    return asked


def _asked_by_the_workflows() -> dict[str, str]:
    texts = [(REPO_ROOT / HOSTED_DISPATCH).read_text(encoding="utf-8")]
    texts.append(
        dict(render_files(InitPlan(parse_stages("all"), ref=REF, dispatch="self-contained")))[
            Path(".github/workflows/fullsend-dispatch.yml")
        ]
    )
    asked: dict[str, str] = {}
    for text in texts:
        for scope, level in _asked_in(text).items():
            asked[scope] = max(asked.get(scope, level), level, key=LEVEL.__getitem__)
    for spec in STAGE_SPECS.values():
        for scope, level in spec.app_permissions:
            scope = scope.replace("-", "_")
            asked[scope] = max(asked.get(scope, level), level, key=LEVEL.__getitem__)
    return asked


def _listed_in_the_docs() -> dict[str, str]:
    """The App's repository permissions as docs/adopting.md lists them (``**Contents** read and write``)."""
    text = (REPO_ROOT / "docs" / "adopting.md").read_text(encoding="utf-8")
    section = text.split("### A GitHub App as the role token", 1)[1].split("\n2. ", 1)[0]
    found = re.findall(r"\*\*([A-Z][a-z]+(?: [a-z]+)?)\*\* (read and write|read)", " ".join(section.split()))
    assert found, section
    return {name.lower().replace(" ", "_"): "write" if "write" in level else "read" for name, level in found}


@pytest.mark.parametrize("manifest", [MANIFEST, REVIEW_MANIFEST], ids=["author", "review"])
def test_the_manifest_uses_only_githubs_parameters_and_registers_a_private_app_without_webhooks(
    manifest: dict,
) -> None:
    assert set(manifest) <= MANIFEST_PARAMETERS
    assert manifest["url"].startswith("https://") and manifest["name"]
    assert manifest["public"] is False
    assert manifest["hook_attributes"]["active"] is False and manifest["default_events"] == []
    # GitHub appends ?code=…&state=… to redirect_url (docs/adopting.md "Create the GitHub Apps from
    # the manifests"): a #fragment would come before them.
    assert manifest["redirect_url"].endswith("/docs/adopting.md") and "#" not in manifest["redirect_url"]


def test_the_manifest_covers_every_permission_the_workflows_ask_of_the_apps_token() -> None:
    granted = MANIFEST["default_permissions"]
    for scope, level in _asked_by_the_workflows().items():
        assert scope in granted and LEVEL[granted[scope]] >= LEVEL[level], (scope, level, granted)


def test_the_manifest_covers_what_the_docs_list_and_asks_for_nothing_more() -> None:
    granted = MANIFEST["default_permissions"]
    assert _listed_in_the_docs() == granted
    assert granted == {**_asked_by_the_workflows(), **EXTRA}


def _embedded(page: str, which: str) -> str:
    found = re.search(rf'<script type="application/json" id="manifest-{which}">\n(.*?)\n  </script>', page, re.S)
    assert found is not None, which
    return found.group(1) + "\n"


def test_neither_app_may_change_workflow_files() -> None:
    # whoever can push workflow changes to a pull request's branch can sign its receipts (SECURITY.md)
    for manifest in (MANIFEST, REVIEW_MANIFEST):
        assert "workflows" not in manifest["default_permissions"], manifest["name"]


def test_the_creation_page_sends_each_manifest_byte_for_byte() -> None:
    page = (REPO_ROOT / "docs" / "create-app.html").read_text(encoding="utf-8")
    assert _embedded(page, "author") == (REPO_ROOT / "app-manifest.json").read_text(encoding="utf-8")
    assert _embedded(page, "review") == (REPO_ROOT / "app-manifest-review.json").read_text(encoding="utf-8")
    assert 'id="server" value="https://github.com"' in page  # GHES: the adopter's server instead
    assert 'server + "/settings/apps/new"' in page
    assert 'server + "/organizations/" + encodeURIComponent(owner)' in page and 'name="manifest"' in page
    assert 'var SUFFIX = { author: "fullsend", review: "review" };' in page
    assert (AUTHOR_SUFFIX, REVIEW_SUFFIX) == ("fullsend", "review")


def test_each_manifest_names_its_app_after_the_owner_placeholder() -> None:
    """The page always replaces the name; the files say which suffix (fullsend.core.app_names)."""
    assert MANIFEST["name"] == f"OWNER-{AUTHOR_SUFFIX}"
    assert REVIEW_MANIFEST["name"] == f"OWNER-{REVIEW_SUFFIX}"
    assert set(REVIEW_MANIFEST) == set(MANIFEST)
    for key in ("url", "public", "hook_attributes", "redirect_url", "default_events"):
        assert REVIEW_MANIFEST[key] == MANIFEST[key], key


def test_the_review_manifest_grants_what_the_review_job_asks_and_nothing_more() -> None:
    review_job = yaml.safe_load((REPO_ROOT / HOSTED_DISPATCH).read_text(encoding="utf-8"))["jobs"]["review"]
    asked = _asked_in(yaml.safe_dump({"jobs": {"review": review_job}}))
    assert asked == {"contents": "read", "pull_requests": "write"}
    assert REVIEW_MANIFEST["default_permissions"] == {**asked, **EXTRA}


#: Owners whose names the page and the package must derive alike: short, mixed case, at the limit,
#: the longest login, and a cut that ends on a hyphen.
OWNERS = ["acme", "Acme-Corp", "o" * 27, "o" * 28, "a" * 20 + "-" + "b" * 18, "a" * 17 + "-" + "b" * 21]


def test_the_page_derives_the_same_names_as_the_package(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        missing_tool("node (Node.js 20 or newer)", "apt-get install nodejs")
    page = (REPO_ROOT / "docs" / "create-app.html").read_text(encoding="utf-8")
    code = page.split("// app-name:start", 1)[1].split("// app-name:end", 1)[0]
    script = tmp_path / "names.mjs"
    script.write_text(
        code
        + "\nconst owners = JSON.parse(process.argv[2]);\nconst out = [];\n"
        + "for (const o of owners) { out.push([await appName(o, 'fullsend'), await appName(o, 'review')]); }\n"
        + "let refused = '';\ntry { await appName('-acme', 'review'); } catch (e) { refused = e.message; }\n"
        + "console.log(JSON.stringify({out, refused}));\n"
    )
    ran = subprocess.run([node, str(script), json.dumps(OWNERS)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["out"] == [[author_app_name(o), review_app_name(o)] for o in OWNERS]
    assert all(len(name) <= 34 for pair in answer["out"] for name in pair)
    assert "is not a GitHub user or organization login" in answer["refused"]
    # the page's whole script parses (the submit handler too, not run here)
    handler = tmp_path / "page.js"
    handler.write_text(page.rsplit("<script>", 1)[1].split("</script>", 1)[0])
    checked = subprocess.run([node, "--check", str(handler)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("role_token", ["app", "mint"])
def test_init_prints_where_the_manifest_is_for_an_app_only(tmp_path: Path, role_token: str) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "fullsend", "init", "--ref", REF, "--role-token", role_token],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    assert (APP_MANIFEST_URL in made.stdout) is (role_token == "app")
    assert APP_MANIFEST_URL.endswith("/app-manifest.json") and "fullsend-ai/steer-action" in APP_MANIFEST_URL


def test_the_manifest_url_init_prints_names_this_file() -> None:
    assert APP_MANIFEST_URL.rsplit("/blob/main/", 1)[1] == "app-manifest.json"
    assert (REPO_ROOT / "app-manifest.json").is_file()
