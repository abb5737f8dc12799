"""Fast checks of the act setup (issue 10), no podman needed: the failure messages name the
missing part and its install command; the README's act block, the simulator's printed flags and
the scenario agree; tools/act/workdir.sh installs the examples unchanged; the job image carries
what the Route job calls; the act lock is hash-pinned and installed by .ci/run."""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from fullsend.app.commands.simulator import run_simulator_serve
from tests.act.act_harness import (
    ACT_HINT,
    APT_HINT,
    FIRST_EVENT,
    FOLLOW_UP_RUN,
    MY_RUN,
    QUEUED_EVENT,
    REPO_ROOT,
    SCENARIO,
    ActRun,
    missing_prerequisites,
    readme_act_block,
)
from tools.act.act_copy import for_act

TOOLS = REPO_ROOT / "tools" / "act"


def test_missing_parts_are_named_with_their_install_command(tmp_path: Path) -> None:
    missing = missing_prerequisites(which=lambda tool: None, act_bin=tmp_path / "act", base_cached=False, is_root=False)
    assert missing == [
        f"podman ({APT_HINT})",
        f"runc ({APT_HINT})",
        f"debootstrap, which makes the local base image debian:bookworm-slim once ({APT_HINT})",
        f"act at {tmp_path / 'act'} ({ACT_HINT})",
        "root: the act tests run podman and its service as root, as CI does (run them as root)",
    ]
    assert sum("install it with" in part for part in missing) == 0  # said once, by missing_tool
    assert "apt-get install -y podman runc debootstrap" in APT_HINT
    assert "pip install --require-hashes -r requirements-act.txt" in ACT_HINT


def test_nothing_missing_when_all_is_there(tmp_path: Path) -> None:
    act = tmp_path / "act"
    act.write_text("#!/bin/sh\n")
    act.chmod(0o755)
    assert (
        missing_prerequisites(which=lambda tool: f"/usr/bin/{tool}", act_bin=act, base_cached=False, is_root=True) == []
    )
    # With the base cached, debootstrap is no longer needed.
    found = missing_prerequisites(
        which=lambda t: None if t == "debootstrap" else t, act_bin=act, base_cached=True, is_root=True
    )
    assert found == []


def _printed_flags(port_text: str) -> list[str]:
    out, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(target=run_simulator_serve, args=(0, str(SCENARIO), out, stop), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while "Serving;" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    thread.join(10)
    text = out.getvalue()
    port = re.search(r"http://127\.0\.0\.1:(\d+)", text).group(1)
    lines = text.split("act flags for the run in flight", 1)[1].split("Serving;", 1)[0].splitlines()[1:]
    return [flag.replace(f":{port}", f":{port_text}") for line in lines for flag in shlex.split(line)]


def _pairs(argv: list[str]) -> set[tuple[str, str]]:
    return {(argv[i], argv[i + 1]) for i in range(len(argv) - 1) if argv[i] in ("--env", "--var", "-s")}


def test_readme_block_passes_what_the_simulator_prints() -> None:
    """Every ``--env``/``--var``/``-s`` the simulator prints for port 8765 is in the README's act
    commands (GITHUB_RUN_ID per run), and the README's runs name the scenario's events and ids."""
    block = readme_act_block()
    words = shlex.split(block, comments=True)
    printed = _pairs(_printed_flags("8765"))
    in_readme = _pairs(words)
    assert printed - {("--env", f"GITHUB_RUN_ID={MY_RUN}")} <= in_readme
    assert ("--env", f"GITHUB_RUN_ID={MY_RUN}") in in_readme and (
        "--env",
        f"GITHUB_RUN_ID={FOLLOW_UP_RUN}",
    ) in in_readme
    assert ("--var", "FULLSEND_AGENT_CLI=.git/fullsend-scripted-agent") in in_readme
    assert words.count(FIRST_EVENT) == 1 and words.count(QUEUED_EVENT) == 1
    assert "--port 8765 --scenario examples/scenarios/review-steer.yml" in block
    assert "--rebuild=false" in words and "--bind" in words and "-P" in words
    scenario = yaml.safe_load(SCENARIO.read_text())
    assert scenario["run_id"] == MY_RUN and scenario["timeline"][0]["run_id"] == FOLLOW_UP_RUN


def test_workdir_installs_the_examples_as_act_parses_them(tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(TOOLS / "workdir.sh"), str(tmp_path / "work")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    work = Path(proc.stdout.strip().splitlines()[-1])
    for name in ("fullsend.yml", "reusable-dispatch.yml"):
        installed = (work / ".github" / "workflows" / name).read_text()
        assert installed == for_act((REPO_ROOT / "examples" / name).read_text())  # less concurrency queue: only
    harness = (work / ".fullsend" / "harness" / "review.yaml").read_text().splitlines()
    example = (REPO_ROOT / "examples" / "harness" / "review.yaml").read_text().splitlines()
    changed = [(a, b) for a, b in zip(example, harness, strict=False) if a != b]
    assert len(harness) == len(example) and len(changed) == 1
    assert changed[0][0].startswith("  poll_interval_seconds: 30") and changed[0][1].startswith(
        "  poll_interval_seconds: 2 "
    )
    for path in ("action.yml", "Dockerfile", "entrypoint.py", "examples/scenarios/review-steer.event.json"):
        assert (work / path).read_bytes() == (REPO_ROOT / path).read_bytes()
    agent = work / ".git" / "fullsend-scripted-agent"
    assert agent.stat().st_mode & 0o111
    again = subprocess.run([str(TOOLS / "workdir.sh"), str(work)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr  # its own work directory is remade


def test_workdir_holds_no_file_a_scan_would_find_the_simulators_tokens_in(tmp_path: Path) -> None:
    from fullsend.adapters.confinement.reach import scan_for_secrets
    from fullsend.simulator.fixtures import JOB_TOKEN, OIDC_REQUEST_TOKEN

    proc = subprocess.run(
        [str(TOOLS / "workdir.sh"), str(tmp_path / "work")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    work = Path(proc.stdout.strip().splitlines()[-1])
    assert JOB_TOKEN in (REPO_ROOT / "README.md").read_text()  # the checkout spells it ...
    assert not (work / "README.md").exists()  # ... so its copy is left out
    tokens = {"job token": JOB_TOKEN, "OIDC request token": OIDC_REQUEST_TOKEN}
    scan = scan_for_secrets([work], tokens, os.getuid(), os.getgid())
    assert (scan.found, scan.complete) == ((), True)


def test_workdir_refuses_a_directory_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    proc = subprocess.run([str(TOOLS / "workdir.sh"), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "exists and was not made by this script" in proc.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_job_image_has_what_the_jobs_run_steps_call() -> None:
    """The Route job runs no script on the job image any more (its one step is the action's image,
    ``command: route``); the stage jobs' ``run:`` steps are bash."""
    dockerfile = (TOOLS / "job-image.Dockerfile").read_text()
    assert re.search(r"^FROM debian:bookworm-slim$", dockerfile, re.M)
    packages = set(re.search(r"apt-get install -y --no-install-recommends ([^&]+)&&", dockerfile).group(1).split())
    assert "bash" in packages and not {"gh", "jq"} & packages  # no job runs them any more
    jobs = yaml.safe_load((REPO_ROOT / "examples" / "reusable-dispatch.yml").read_text())["jobs"]
    assert [s.get("with") for s in jobs["route"]["steps"] if s.get("uses") == "./"] == [{"command": "route"}]
    assert not any("run" in s for s in jobs["route"]["steps"])
    assert all(s["shell"] == "bash" for job in jobs.values() for s in job["steps"] if "run" in s)


def test_act_is_hash_pinned_and_installed_by_ci() -> None:
    lock = (REPO_ROOT / "requirements-act.txt").read_text()
    assert re.search(r"^act-bin==0\.2\.89 \\$", lock, re.M)
    assert len(re.findall(r"--hash=sha256:[0-9a-f]{64}", lock)) >= 1
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "requirements-act.txt" in ci and ".venv-act" in ci


@pytest.mark.parametrize(
    ("vid", "log", "job", "expected"),
    [
        ("succeeded", "[w/dispatch/Review    ] 🏁  Job succeeded\n", "Review", "succeeded"),
        ("failed", "[w/dispatch/Route] 🏁  Job failed\n", "Route", "failed"),
        ("other-job", "[w/dispatch/Route] 🏁  Job failed\n", "Review", ""),
    ],
)
def test_act_log_reader_job_result(vid: str, log: str, job: str, expected: str) -> None:
    assert ActRun(0, log).job_result(job) == expected


def test_act_log_reader_shown_outputs() -> None:
    log = (
        "[w/dispatch/Review    ] ⭐ Run Main ./\n"
        "[w/dispatch/Review    ]   | outcome=not-this-step\n"
        "[w/dispatch/Review    ] ⭐ Run Main Show the outputs\n"
        "[w/dispatch/Review    ]   | outcome=succeeded\n"
        "[w/dispatch/Review    ]   | receipt_url=http://h/x#c=1\n"
        "[w/dispatch/Route] ⭐ Run Main Show the outputs\n"
        "[w/dispatch/Route]   | outcome=other-job\n"
    )
    assert ActRun(0, log).shown_outputs() == {"outcome": "succeeded", "receipt_url": "http://h/x#c=1"}
