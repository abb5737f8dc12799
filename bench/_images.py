"""The image half of ``bench/bench_start.py --images`` (podman; not run by ``run_all.py`` alone).

For today's image (the baseline ref's ``Dockerfile`` built with podman and no build argument, as
a runner builds it) and this checkout's slim (default) and full images: podman's size, the bytes
a pull fetches (every layer gzip-compressed, as a registry push stores it: ``podman push
--compression-format gzip`` into an OCI layout, layers + config + manifest) and ``podman run`` →
first API request and → exit of the receipt skip, run as a runner runs a container action.  A
bare start of the slim image (the same ``podman run``, entrypoint ``/bin/true``), alternating
with the skips, is the floor the skip is measured against: what the action adds over a container
that does nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from bench.bench_start import QUEUED_RUN_ID, ROOT, Arrivals, export_tree, skip_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.runner_container import (
    PODMAN_LIMITS,
    PODMAN_RUNTIME,
    RunnerDirs,
    action_inputs,
    container_env,
    run_container,
)

BUILD_TIMEOUT_S = 3600
#: The row of the slim image started with nothing to do (``--entrypoint /bin/true``).
BARE = "bare start (slim, /bin/true)"


def build(*args: str) -> str:
    """Run this checkout's tools/container/build-image.sh; returns the tag it printed last."""
    proc = subprocess.run(
        [str(ROOT / "tools" / "container" / "build-image.sh"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"build-image.sh {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout.strip().splitlines()[-1]


def build_today(tree: Path, ref: str) -> str:
    """``podman build`` of ``tree``'s Dockerfile with no build argument, as a runner builds it,
    tagged ``localhost/steer-action-bench:today-<ref>`` (kept apart from build-image.sh's tags);
    the host's CA bundle is mounted for the build only, as build-image.sh does."""
    tag = f"localhost/steer-action-bench:today-{ref[:12]}"
    if subprocess.run(["podman", "image", "exists", tag], timeout=60).returncode == 0:
        return tag
    ca = next(
        (
            Path(c)
            for c in (os.environ.get("SSL_CERT_FILE", ""), "/etc/ssl/certs/ca-certificates.crt")
            if c and Path(c).is_file()
        ),
        None,
    )
    with tempfile.TemporaryDirectory() as ca_dir:
        ca_args: list[str] = []
        if ca is not None:
            shutil.copy(ca.resolve(), Path(ca_dir) / "build-ca.crt")
            os.chmod(ca_dir, 0o755)
            ca_args = ["--volume", f"{ca_dir}:/mnt:ro", "--build-arg", "BUILD_CA_BUNDLE=/mnt/build-ca.crt"]
        proc = subprocess.run(
            [
                "podman",
                "build",
                "--runtime",
                PODMAN_RUNTIME,
                "--pull=never",
                "--network",
                "host",
                *PODMAN_LIMITS,
                *ca_args,
                "--tag",
                tag,
                "--file",
                "Dockerfile",
                ".",
            ],
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"podman build of {ref} failed:\n{proc.stderr[-3000:]}")
    return tag


def pull_bytes(tag: str) -> int:
    """Bytes a registry pull of ``tag`` fetches: gzip layers + config + manifest."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["podman", "push", "--quiet", "--compression-format", "gzip", tag, f"oci:{tmp}:bench"],
            check=True,
            capture_output=True,
            timeout=BUILD_TIMEOUT_S,
        )
        blobs = Path(tmp) / "blobs" / "sha256"
        index = json.loads((Path(tmp) / "index.json").read_text())
        manifest_digest = index["manifests"][0]["digest"].split(":", 1)[1]
        manifest = json.loads((blobs / manifest_digest).read_text())
        return (
            sum(layer["size"] for layer in manifest["layers"])
            + manifest["config"]["size"]
            + (blobs / manifest_digest).stat().st_size
        )


def podman_size(tag: str) -> int:
    """podman's (uncompressed) image size in bytes."""
    out = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Size}}", tag],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return int(out.strip())


def container_skips(tags: dict[str, str], runs: int, tmp: Path) -> dict[str, list[tuple[float, float]]]:
    """``runs`` receipt skips of each image, alternating; seconds from ``podman run`` to the
    first API request and to exit."""
    seconds: dict[str, list[tuple[float, float]]] = {label: [] for label in tags}
    with GitHubSimulator() as sim:
        fix, arrivals = skip_scenario(sim), Arrivals(sim)
        for i in range(runs + 1):  # the first round warms the page cache and is not counted
            for label, tag in tags.items() if i % 2 else reversed(tags.items()):
                dirs = RunnerDirs.create(tmp / f"c{i}-{len(seconds[label])}-{label.split()[0]}")
                inputs = action_inputs(
                    fix.job_token,
                    {"role_token": fix.role_token, "stage": "review", "prompt": "Review the pull request."},
                )
                event = {"action": "created", "issue": {"number": fix.pr}}
                env = container_env(
                    dirs,
                    api_url=sim.api_url,
                    graphql_url=sim.graphql_url,
                    run_id=QUEUED_RUN_ID,
                    inputs=inputs,
                    event=event,
                    step_env={},
                )
                if label == BARE:
                    bare = run_container(tag, dirs, env, extra_args=("--entrypoint", "/bin/true"))
                    if bare.exit_code != 0:
                        raise RuntimeError(f"{label}: exit {bare.exit_code}\n{bare.stderr[-2000:]}")
                    if i:
                        seconds[label].append((0.0, bare.finished_at - bare.started_at))
                    continue
                run = run_container(tag, dirs, env)
                if run.exit_code != 0 or run.outputs.get("outcome") != "skipped":
                    raise RuntimeError(
                        f"{label}: exit {run.exit_code}, outputs {run.outputs}\n"
                        f"{run.stdout[-2000:]}{run.stderr[-2000:]}"
                    )
                if i:
                    seconds[label].append((arrivals.first_after(run.started_at), run.finished_at - run.started_at))
    return seconds


def bench_images(baseline_ref: str, tmp: Path, runs: int) -> int:
    """Build, measure and print the image table; returns the exit status."""
    subprocess.run(
        [str(ROOT / "tools" / "container" / "make-base.sh")], check=True, capture_output=True, timeout=BUILD_TIMEOUT_S
    )
    tags: dict[str, str] = {}
    tree = tmp / "baseline-tree"
    if export_tree(baseline_ref, tree, ["."]):
        tags[f"today ({baseline_ref[:12]} Dockerfile)"] = build_today(tree, baseline_ref)
    tags["slim (default)"] = build()
    full = build("--full")
    try:
        seconds = container_skips({**tags, BARE: tags["slim (default)"]}, runs, tmp)
    except RuntimeError as exc:
        print(f"a container run did not skip: {exc}")
        return 1
    print(
        f"\nimages: bytes a pull fetches; podman run -> first API request and -> exit of the receipt skip "
        f"(median (range) of {runs}, seconds)"
    )
    print(f"{'image':<34}  {'pull MB (gzip)':>14}  {'size MB':>8}  {'first request':<20}  {'exit':<20}")
    print("-" * 104)
    for label, tag in [*tags.items(), ("full (every CLI, git)", full)]:
        skip = seconds.get(label, [])
        shown = [_spread([s[k] for s in skip]) for k in (0, 1)] if skip else ["-", "-"]
        sizes = f"{pull_bytes(tag) / 1e6:>14.1f}  {podman_size(tag) / 1e6:>8.1f}"
        print(f"{label:<34}  {sizes}  {shown[0]:<20}  {shown[1]:<20}")
    bare_exit = statistics.median(s[1] for s in seconds[BARE])
    print(f"{BARE:<34}  {'':>14}  {'':>8}  {'-':<20}  {_spread([s[1] for s in seconds[BARE]]):<20}")
    slim_mb = pull_bytes(tags["slim (default)"]) / 1e6
    slim_exit = statistics.median(s[1] for s in seconds["slim (default)"])
    print(f"the receipt skip adds {slim_exit - bare_exit:.2f} s (median) to a bare start of the same image")
    print(
        f"goal: skip-path image <= 80 MB compressed: {slim_mb:.1f} MB ({'met' if slim_mb <= 80 else 'NOT met'}); "
        f"container skip path <= 1.5 s: {slim_exit:.2f} s ({'met' if slim_exit <= 1.5 else 'NOT met'})"
    )
    return 0


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):5.2f}  ({min(values):.2f}-{max(values):.2f})"
