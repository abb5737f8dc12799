"""Issue 21: ``fullsend init`` writes a working setup, refuses to overwrite, prints with --dry-run,
and its files pass ``fullsend lint``; the Route job it writes runs the examples' Route step.

The linters (zizmor, GitHub's workflow schema) run on its output in
``tests/hygiene/test_init_workflows.py``; act plays it, unedited, in ``tests/act/adopter/`` (the adopter-path tier).
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fullsend.app.commands.init import InitError, InitPlan, parse_stages, render_files, run_init
from fullsend.app.commands.init_hints import origin_owner
from fullsend.core.route.decision import default_review_app
from fullsend.core.route.triggers import shim_triggers
from fullsend.core.wire import OPENING_LINE
from tests.support.releases import init_env

REPO_ROOT = Path(__file__).resolve().parents[2]
REF = "0123456789abcdef0123456789abcdef01234567"


def _fullsend(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fullsend", *args],
        cwd=cwd,
        env=init_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_init_then_lint_exits_0_in_a_fresh_repository(tmp_path: Path) -> None:
    made = _fullsend("init", "--stages", "review,fix", "--ref", REF, "--dispatch", "self-contained", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == [
        ".fullsend/agents/fix.md",
        ".fullsend/agents/review.md",
        ".fullsend/harness/fix.yaml",
        ".fullsend/harness/review.yaml",
        ".fullsend/init.json",
        ".fullsend/prompts/fix.md",
        ".fullsend/prompts/review.md",
        ".github/workflows/fullsend-dispatch.yml",
        ".github/workflows/fullsend.yml",
    ]
    lint = _fullsend("lint", cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "0 finding(s) in 2 harness file(s)" in lint.stderr


def test_the_dispatch_workflow_has_route_and_only_the_chosen_stages_pinned_to_the_ref() -> None:
    files = dict(render_files(InitPlan(("review", "fix"), ref=REF, dispatch="self-contained")))
    dispatch = yaml.safe_load(files[Path(".github/workflows/fullsend-dispatch.yml")])
    assert list(dispatch["jobs"]) == ["route", "review", "fix"]
    assert [dispatch["jobs"][j]["name"] for j in dispatch["jobs"]] == ["Route", "Review", "Fix"]
    step = next(s for s in dispatch["jobs"]["review"]["steps"] if str(s.get("uses", "")).startswith("fullsend-ai/"))
    assert step["uses"] == f"fullsend-ai/steer-action@{REF}"
    route_step = dispatch["jobs"]["route"]["steps"][-1]
    assert route_step["uses"] == f"fullsend-ai/steer-action@{REF}"  # the slim image, never .../full
    assert step["with"]["role_token"] == "${{ steps.role-token.outputs.token }}"
    assert step["with"]["prompt_file"] == ".fullsend/prompts/review.md"
    assert dispatch["jobs"]["review"]["concurrency"] == {
        "group": "fullsend-pr-${{ github.repository }}-${{ github.event.pull_request.number || "
        "github.event.issue.number }}",
        "cancel-in-progress": False,
        "queue": "max",
    }
    assert dispatch["jobs"]["fix"]["concurrency"] == dispatch["jobs"]["review"]["concurrency"]
    shim = yaml.safe_load(files[Path(".github/workflows/fullsend.yml")])
    assert list(shim["jobs"]) == ["dispatch"]
    assert shim["jobs"]["dispatch"]["uses"] == "./.github/workflows/fullsend-dispatch.yml"


def test_the_route_job_is_the_examples_route_step_pinned_to_the_ref() -> None:
    """The same decision step as the examples', from the pinned release instead of a checkout
    (so no checkout, and no permission beyond the metadata every job token has)."""
    files = dict(render_files(InitPlan(("review",), ref=REF, dispatch="self-contained")))
    generated = yaml.safe_load(files[Path(".github/workflows/fullsend-dispatch.yml")])["jobs"]["route"]
    example = yaml.safe_load((REPO_ROOT / "examples" / "reusable-dispatch.yml").read_text())["jobs"]["route"]
    (step,) = generated["steps"]
    assert step == {**example["steps"][-1], "uses": f"fullsend-ai/steer-action@{REF}"}
    assert generated["permissions"] == {"pull-requests": "read"}
    rest = {k: v for k, v in generated.items() if k not in ("steps", "permissions")}
    assert rest == {k: v for k, v in example.items() if k not in ("steps", "permissions")}


def test_mint_mode_and_queue_max_and_codex() -> None:
    files = dict(
        render_files(
            InitPlan(("code",), runtime="codex", ref=REF, role_token="mint", queue="max", dispatch="self-contained")
        )
    )
    dispatch = yaml.safe_load(files[Path(".github/workflows/fullsend-dispatch.yml")])
    job = dispatch["jobs"]["code"]
    assert job["concurrency"]["queue"] == "max" and job["permissions"]["id-token"] == "write"
    step = job["steps"][-2]
    assert (step["with"]["mint_url"], step["with"]["role"], step["with"]["runtime"]) == (
        "${{ vars.FULLSEND_MINT_URL }}",
        "coder",
        "codex",
    )
    assert step["env"] == {"OPENAI_API_KEY": "${{ secrets.OPENAI_API_KEY }}"}
    assert not any("create-github-app-token" in str(s.get("uses")) for s in job["steps"])


def test_every_agent_definition_carries_the_envelope_opening_line() -> None:
    files = render_files(InitPlan(parse_stages("all"), ref=REF))
    agents = [text for path, text in files if path.parts[:2] == (".fullsend", "agents")]
    assert len(agents) == 6 and all(OPENING_LINE in text for text in agents)


def test_init_never_overwrites_and_writes_nothing_then(tmp_path: Path) -> None:
    (tmp_path / ".fullsend" / "harness").mkdir(parents=True)
    mine = tmp_path / ".fullsend" / "harness" / "review.yaml"
    mine.write_text("role: mine\n")
    made = _fullsend("init", "--stages", "review", "--ref", REF, cwd=tmp_path)
    assert made.returncode == 2
    assert made.stderr.count("\n") == 1 and "review.yaml already exists; fullsend init never overwrites" in made.stderr
    assert mine.read_text() == "role: mine\n" and not (tmp_path / ".github").exists()


def test_dry_run_prints_every_file_and_writes_none(tmp_path: Path) -> None:
    made = _fullsend(
        "init", "--stages", "triage", "--ref", REF, "--dry-run", "--dispatch", "self-contained", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.count("==> ") == 5 and "==> .github/workflows/fullsend-dispatch.yml <==" in made.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--stages", "review,deploy"], "--stages 'review,deploy': unknown stage deploy; use a comma-separated list"),
        (["--stages", ","], "--stages ',': no stage"),
        (["--ref", "v1"], "--ref 'v1' is not a full commit SHA"),
        (["--ref", REF.upper()], "is not a full commit SHA (40 lowercase hex digits)"),
    ],
)
def test_bad_arguments_exit_2_with_one_plain_line(tmp_path: Path, args: list[str], says: str) -> None:
    made = _fullsend("init", *(args if "--ref" in args else [*args, "--ref", REF]), cwd=tmp_path)
    assert made.returncode == 2 and says in made.stderr, made.stderr
    assert made.stderr.count("\n") == 1 and "Traceback" not in made.stderr
    assert list(tmp_path.iterdir()) == []


def test_without_a_release_commit_the_ref_is_required() -> None:
    with pytest.raises(InitError, match="--ref is required: pass the steer-action commit to pin"):
        render_files(InitPlan(("review",)))
    out, err = io.StringIO(), io.StringIO()
    assert run_init(InitPlan(("review",)), Path("/nonexistent"), False, out, err) == 2 and out.getvalue() == ""


def test_a_file_in_the_way_stops_init_before_it_writes_anything(tmp_path: Path) -> None:
    (tmp_path / ".fullsend").mkdir()
    (tmp_path / ".fullsend" / "prompts").write_text("not a folder")
    made = _fullsend("init", "--stages", "review", "--ref", REF, cwd=tmp_path)
    assert made.returncode == 2 and "prompts is in the way" in made.stderr, made.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".fullsend", "prompts"]


def test_a_missing_dir_is_refused_not_created(tmp_path: Path) -> None:
    made = _fullsend("init", "--stages", "review", "--ref", REF, "--dir", "no-such-repo", cwd=tmp_path)
    assert made.returncode == 2, made.stdout + made.stderr
    assert made.stderr == (
        "fullsend init: --dir no-such-repo is not an existing folder; give the top of your repository's checkout\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_init_outside_a_repository_root_says_github_will_not_see_it(tmp_path: Path) -> None:
    made = _fullsend("init", "--stages", "review", "--ref", REF, cwd=tmp_path)
    assert made.returncode == 0 and "is not the top of a git repository" in made.stdout
    said = " ".join(made.stdout.split())
    assert "the secret FULLSEND_APP_PRIVATE_KEY" in said and "set the secret ANTHROPIC_API_KEY" in said


def test_dry_run_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    proc = subprocess.run(
        f"{sys.executable} -m fullsend init --stages all --ref {REF} --dry-run | head -n 1",
        shell=True,
        cwd=tmp_path,
        env=init_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.startswith("==> ") and "error" not in proc.stderr, proc.stderr


def test_every_file_stamps_the_package_version() -> None:
    """The version stamped is the package's own (``fullsend.__version__``, which pyproject reads
    and a release must match), next to the pinned ref and in every header."""
    from fullsend import __version__

    files = dict(render_files(InitPlan(("review", "fix"), ref=REF, dispatch="self-contained")))
    dispatch = files[Path(".github/workflows/fullsend-dispatch.yml")]
    pins = [line.strip() for line in dispatch.splitlines() if f"fullsend-ai/steer-action@{REF}" in line]
    assert pins and all(
        line.endswith(f"@{REF} # unreleased commit (written by fullsend {__version__})") for line in pins
    )
    for rel in (
        ".github/workflows/fullsend.yml",
        ".github/workflows/fullsend-dispatch.yml",
        ".fullsend/harness/review.yaml",
    ):
        assert f"(steer-action {__version__}" in files[Path(rel)].splitlines()[0]


@pytest.mark.parametrize("dispatch", ["hosted", "self-contained"])
def test_with_fix_the_next_hint_names_the_review_app_input(tmp_path: Path, dispatch: str) -> None:
    """docs/rules.md#route-review-ignored: the one naming rule of Fix is said, and where to set it."""
    out, err = io.StringIO(), io.StringIO()
    plan = InitPlan(("review", "fix"), ref=REF, dispatch=dispatch)
    assert run_init(plan, tmp_path, False, out, err, init_env()) == 0
    said = " ".join(out.getvalue().split())
    where = "review_app in fullsend.yml" if dispatch == "hosted" else "review_app: on the Route step"
    assert where in said and "<owner>-review[bot]" in said
    # every condition Route checks (issue 42): the App, this repository's head, the opt-out, an
    # App author or the opt-in label, the round bound, and the command
    for condition in (
        "not a fork's",
        "fullsend-no-fix",
        "author is an App",
        "labelled fullsend-fix",
        "max_fix_rounds",
        "/fs-fix",
        "FULLSEND_REVIEW_APP_CLIENT_ID",
    ):
        assert condition in said, condition
    shim = yaml.safe_load((tmp_path / ".github/workflows/fullsend.yml").read_text(encoding="utf-8"))
    if dispatch == "hosted":
        assert shim["jobs"]["dispatch"]["with"]["review_app"] == ""


def test_without_fix_neither_the_hint_nor_the_input_appears(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_init(InitPlan(("review",), ref=REF), tmp_path, False, out, err, init_env()) == 0
    assert "review_app" not in out.getvalue()
    shim = yaml.safe_load((tmp_path / ".github/workflows/fullsend.yml").read_text(encoding="utf-8"))
    assert "review_app" not in shim["jobs"]["dispatch"]["with"]


def _on(text: str) -> dict[str, list[str]]:
    doc = yaml.safe_load(text)
    return {event: spec["types"] for event, spec in doc[True].items()}  # YAML 1.1 reads `on` as True


@pytest.mark.parametrize(
    ("stages", "dispatch"),
    [("review,fix", "hosted"), ("review,fix", "self-contained"), ("triage", "hosted"), ("code,retro", "hosted")],
)
def test_the_shim_listens_only_to_the_events_of_its_stages(stages: str, dispatch: str) -> None:
    plan = InitPlan(parse_stages(stages), ref=REF, dispatch=dispatch)
    shim = dict(render_files(plan))[Path(".github/workflows/fullsend.yml")]
    assert _on(shim) == {event: list(types) for event, types in shim_triggers(plan.stages).items()}


def test_review_and_fix_start_no_run_on_an_issue_event() -> None:
    shim = dict(render_files(InitPlan(("review", "fix"), ref=REF)))[Path(".github/workflows/fullsend.yml")]
    assert _on(shim) == {
        "issue_comment": ["created"],  # /fs-review, /fs-fix
        "pull_request_target": ["opened", "synchronize", "ready_for_review", "labeled"],  # a push steers review
        "pull_request_review": ["submitted"],  # the review App's changes_requested starts fix
        "pull_request_review_comment": ["created"],  # a command in a review thread
    }
    assert "dangerous-triggers" in shim  # the one event zizmor would flag keeps its reason
    shim = dict(render_files(InitPlan(("triage",), ref=REF)))[Path(".github/workflows/fullsend.yml")]
    assert "pull_request_target" not in _on(shim) and "dangerous-triggers" not in shim


@pytest.mark.parametrize(
    ("remote", "owner"),
    [
        ("https://github.com/Acme-Corp/widgets.git", "Acme-Corp"),
        ("git@github.com:acme/widgets.git", "acme"),
        ("ssh://git@ghe.example.com/acme/widgets", "acme"),
        ("http://127.0.0.1:8080/prefix/acme/widgets.git", "acme"),
        ("/srv/git/widgets.git", "git"),
        ("https://github.com/widgets.git", ""),
    ],
)
def test_the_owner_comes_from_the_origin_remote(tmp_path: Path, remote: str, owner: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", remote], check=True, timeout=30)
    assert origin_owner(tmp_path) == owner


def test_without_an_origin_the_owner_is_unknown(tmp_path: Path) -> None:
    assert origin_owner(tmp_path) == ""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    assert origin_owner(tmp_path) == ""


def test_init_names_both_apps_from_the_owner_and_fix_waits_for_the_review_apps_login(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    remote = "https://github.com/Acme-Corp/widgets.git"
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", remote], check=True, timeout=30)
    out, err = io.StringIO(), io.StringIO()
    assert run_init(InitPlan(("review", "fix"), ref=REF), tmp_path, False, out, err, init_env()) == 0
    said = " ".join(out.getvalue().split())
    assert "- acme-corp-fullsend, which authors pull requests and pushes" in said
    assert "FULLSEND_APP_CLIENT_ID" in said and "FULLSEND_APP_PRIVATE_KEY" in said
    assert "- acme-corp-review, which posts the reviews (its login acme-corp-review[bot]" in said
    assert "FULLSEND_REVIEW_APP_CLIENT_ID" in said and "FULLSEND_REVIEW_APP_PRIVATE_KEY" in said
    assert "empty: acme-corp-review[bot])" in said
    # Route's default when review_app is left empty is that very login
    assert default_review_app("Acme-Corp") == "acme-corp-review[bot]"
    hints = out.getvalue().split("Next: ", 1)[1]
    assert all(len(line) <= 100 for line in hints.splitlines()), hints


def test_without_review_init_asks_for_one_app(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_init(InitPlan(("triage",), ref=REF), tmp_path, False, out, err, init_env()) == 0
    said = " ".join(out.getvalue().split())
    assert "create the GitHub App," in said and "- <owner>-fullsend" in said
    assert "<owner>-review" not in said and "install it on the repository" in said
