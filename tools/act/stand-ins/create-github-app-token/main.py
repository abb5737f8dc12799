"""The stand-in for actions/create-github-app-token (tools/act/stand-ins/README.md): its inputs
arrive as STAND_IN_* variables; it writes the outputs to $GITHUB_OUTPUT."""

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(client_id: str, private_key: str) -> str:
    now = int(time.time())
    head = b64url(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    claims = b64url(json.dumps({"iat": now - 60, "exp": now + 540, "iss": client_id}).encode())
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as key:
        key.write(private_key.replace("\\n", "\n"))
        key.flush()
        signed = subprocess.run(
            ["openssl", "dgst", "-sha256", "-sign", key.name], input=f"{head}.{claims}".encode(), capture_output=True
        )
    if signed.returncode != 0:
        sys.exit(f"create-github-app-token (stand-in): the private key cannot sign: {signed.stderr.decode()[:300]}")
    return f"{head}.{claims}.{b64url(signed.stdout)}"


def call(method: str, url: str, token: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Accept", "application/vnd.github+json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as exc:
        sys.exit(f"create-github-app-token (stand-in): {method} {url} answered {exc.code}: {exc.read()[:300]!r}")


def main() -> None:
    env = os.environ
    client_id, key = env.get("STAND_IN_CLIENT_ID", ""), env.get("STAND_IN_PRIVATE_KEY", "")
    if not client_id or not key:
        sys.exit("create-github-app-token (stand-in): [client-id] and [private-key] are required")
    owner, _, repo = env["GITHUB_REPOSITORY"].partition("/")
    owner = env.get("STAND_IN_OWNER") or owner
    repositories = [r for r in env.get("STAND_IN_REPOSITORIES", "").replace(",", " ").split() if r] or [repo]
    api = env.get("STAND_IN_API_URL") or env["GITHUB_API_URL"]
    token = jwt(client_id, key)
    installation = call("GET", f"{api}/repos/{owner}/{repositories[0]}/installation", token)
    permissions = dict(p.split("=", 1) for p in env.get("STAND_IN_PERMISSIONS", "").split() if not p.endswith("="))
    body = {"repositories": repositories, **({"permissions": permissions} if permissions else {})}
    made = call("POST", f"{api}/app/installations/{installation['id']}/access_tokens", token, body)
    print(f"::add-mask::{made['token']}")
    with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"token={made['token']}\ninstallation-id={installation['id']}\napp-slug={installation['app_slug']}\n")
    print(
        f"create-github-app-token (stand-in): a token of {installation['app_slug']}[bot] for {owner}/{repositories[0]}"
    )


main()
