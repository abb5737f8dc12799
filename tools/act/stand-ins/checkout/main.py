"""The stand-in for actions/checkout (tools/act/stand-ins/README.md): its inputs arrive as
STAND_IN_* variables."""

import base64
import os
import re
import subprocess
import sys


def git(cwd: str, *args: str, header: str = "") -> str:
    extra = ["-c", f"http.extraheader={header}"] if header else []
    proc = subprocess.run(["git", *extra, *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"checkout (stand-in): git {' '.join(args)} failed: {proc.stderr.strip()[:800]}")
    return proc.stdout.strip()


def refspec(ref: str) -> tuple[str, str, str]:
    """(what to fetch, what to check out, the local branch or "" to detach) for a SHA, a full ref
    or a branch name."""
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return f"+{ref}:refs/remotes/origin/checkout", ref, ""
    name = ref.removeprefix("refs/heads/")
    if ref.startswith("refs/") and not ref.startswith("refs/heads/"):
        return f"+{ref}:refs/remotes/origin/checkout", "refs/remotes/origin/checkout", ""
    return f"+refs/heads/{name}:refs/remotes/origin/{name}", f"refs/remotes/origin/{name}", name


def main() -> None:
    env = os.environ
    dest = os.path.normpath(os.path.join(env["GITHUB_WORKSPACE"], env.get("STAND_IN_PATH", "")))
    server = env.get("GITHUB_SERVER_URL", "").rstrip("/")
    url = f"{server}/{env['STAND_IN_REPOSITORY']}.git"
    ref = env.get("STAND_IN_REF") or env.get("GITHUB_REF") or env.get("GITHUB_SHA", "")
    token = env.get("STAND_IN_TOKEN", "")
    header = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode() if token else ""
    os.makedirs(dest, exist_ok=True)
    git(dest, "config", "--global", "--add", "safe.directory", dest)
    if not os.path.isdir(os.path.join(dest, ".git")):
        git(dest, "init", "-q")
    if _has_head(dest) and env.get("STAND_IN_CLEAN", "true") == "true":
        git(dest, "reset", "-q", "--hard", "HEAD")
        git(dest, "clean", "-ffdx")
    if _has_header(dest, server):
        git(dest, "config", "--local", "--unset-all", f"http.{server}/.extraheader")
    git(dest, "remote", "set-url" if "origin" in git(dest, "remote").split() else "add", "origin", url)
    patterns = [line.strip() for line in env.get("STAND_IN_SPARSE", "").splitlines() if line.strip()]
    if patterns:
        cone = [] if env.get("STAND_IN_CONE", "true") == "true" else ["--no-cone"]
        git(dest, "sparse-checkout", "set", *cone, *patterns)
    elif os.path.exists(os.path.join(dest, ".git", "info", "sparse-checkout")):
        git(dest, "sparse-checkout", "disable")
    depth = env.get("STAND_IN_DEPTH", "1")
    fetch, target, branch = refspec(ref)
    git(
        dest,
        "fetch",
        "-q",
        "--no-tags",
        *([f"--depth={depth}"] if depth != "0" else []),
        "origin",
        fetch,
        header=header,
    )
    if branch:
        git(dest, "checkout", "-q", "--force", "-B", branch, target)
    else:
        git(dest, "checkout", "-q", "--force", "--detach", target)
    if env.get("STAND_IN_PERSIST", "true") == "true" and header:
        git(dest, "config", "--local", f"http.{server}/.extraheader", header)
    print(f"checkout (stand-in): {env['STAND_IN_REPOSITORY']} {ref} at {git(dest, 'rev-parse', 'HEAD')} in {dest}")


def _has_header(dest: str, server: str) -> bool:
    key = f"http.{server}/.extraheader"
    return subprocess.run(["git", "config", "--local", "--get-all", key], cwd=dest, capture_output=True).returncode == 0


def _has_head(dest: str) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=dest, capture_output=True).returncode == 0


main()
