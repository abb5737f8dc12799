"""Trim GitHub's OpenAPI description to the response schemas the simulator serves.

Input: ``generated/api.github.com.json`` of the npm package ``@octokit/openapi`` (OpenAPI 3.0):

    scratch="$(mktemp -d)"
    (cd "$scratch" && npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz \\
        package/generated/api.github.com.json)
    python tools/openapi_trim.py "$scratch/package/generated/api.github.com.json" \\
        tests/data/openapi/github-rest-trimmed.json

With ``--webhooks`` it trims the payload schemas of ``WEBHOOKS`` from ``@octokit/openapi-webhooks``
12.1.0's ``generated/api.github.com.json`` into ``tests/data/openapi/github-webhooks-trimmed.json``
(``{"source", "webhooks": {name: <schema>}, "$defs"}``): the oracle of the simulator's webhook
payloads.

The same package ships one description per GitHub Enterprise Server release,
``generated/ghes-3.X.json``; trim each supported one (docs/adopting.md "GitHub Enterprise Server")
the same way into ``tests/data/openapi/ghes-3.X-trimmed.json``.  The ``source`` recorded in the
output names the input file.

Output: one self-contained JSON-Schema (2020-12) document::

    {"source": ..., "endpoints": {"GET /repos/{owner}/{repo}/...": {"200": <schema>, "404": ...}},
     "$defs": {"workflow-run": <schema>, ...}}

Every ``#/components/schemas/X`` reference becomes ``#/$defs/X`` and only the definitions reachable
from the kept endpoints are copied.  Validate a body with
``{**doc["endpoints"][key][status], "$defs": doc["$defs"]}``.

OpenAPI 3.0 → JSON Schema: ``nullable: true`` becomes a type list
with ``"null"`` (and ``None`` joins the field's ``enum``); a nullable ``$ref`` / ``oneOf`` /
``anyOf`` / ``allOf`` is wrapped as ``anyOf: [<schema>, {"type": "null"}]``; boolean
``exclusiveMinimum``/``exclusiveMaximum`` become numeric; documentation keywords are dropped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/openapi 23.0.2"
SOURCE = f"{PACKAGE} generated/api.github.com.json"

# (method, OpenAPI path, statuses kept) for every endpoint fullsend/simulator/server.py serves.
ENDPOINTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/runs", ("200",)),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}", ("200", "404")),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}", ("200", "404")),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments", ("200", "404")),
    ("get", "/repos/{owner}/{repo}/issues/comments", ("200",)),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments", ("201", "403", "404")),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}", ("200",)),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", ("200",)),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", ("200",)),
    ("get", "/repos/{owner}/{repo}/pulls/comments/{comment_id}", ("200", "404")),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", ("200", "422")),
    ("get", "/repos/{owner}/{repo}/compare/{basehead}", ("200", "404")),
    ("get", "/user", ("200", "401", "403")),
    ("get", "/app", ("200",)),
    ("post", "/repos/{owner}/{repo}/pulls", ("201", "422")),
    ("post", "/repos/{owner}/{repo}/issues", ("201", "422")),
    ("get", "/repos/{owner}/{repo}/installation", ("200",)),
    ("post", "/app/installations/{installation_id}/access_tokens", ("201", "422")),
)

WEBHOOKS_PACKAGE = "@octokit/openapi-webhooks 12.1.0"
WEBHOOKS_SOURCE = f"{WEBHOOKS_PACKAGE} generated/api.github.com.json"
# The webhook events whose payloads the simulator sends to the runs it starts (fullsend/simulator/events).
WEBHOOKS = (
    "issues-opened",
    "issue-comment-created",
    "pull-request-opened",
    "pull-request-synchronize",
    "pull-request-review-submitted",
)

_KEEP = {
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "format",
    "additionalProperties",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "$ref",
    "const",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "patternProperties",
}
_COMPOSED = ("oneOf", "anyOf", "allOf")
_SCHEMA_REF = "#/components/schemas/"


def convert(schema: Any) -> Any:
    """Convert one OpenAPI 3.0 schema object (recursively) to JSON Schema 2020-12."""
    if isinstance(schema, bool) or not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in _KEEP:
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {name: convert(sub) for name, sub in value.items()}
        elif key in _COMPOSED:
            out[key] = [convert(sub) for sub in value]
        elif key in ("items", "additionalProperties", "not"):
            out[key] = convert(value)
        elif key == "$ref":
            out[key] = "#/$defs/" + value[len(_SCHEMA_REF) :] if value.startswith(_SCHEMA_REF) else value
        else:
            out[key] = value
    for bound in ("Minimum", "Maximum"):
        flag = schema.get("exclusive" + bound)
        if flag is True and bound.lower() in out:
            out["exclusive" + bound] = out.pop(bound.lower())
    if schema.get("nullable") is True:
        out = _nullable(out)
    return out


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """Let ``null`` through a converted schema that OpenAPI marked ``nullable``."""
    if "$ref" in out or any(k in out for k in _COMPOSED) or "type" not in out:
        return {"anyOf": [out, {"type": "null"}]}
    kind = out["type"]
    kinds = list(kind) if isinstance(kind, list) else [kind]
    if "null" not in kinds:
        kinds.append("null")
    out["type"] = kinds
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _refs(node: Any, found: set[str]) -> None:
    """Collect every ``#/$defs/<name>`` reference under ``node``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref[len("#/$defs/") :])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _response_schema(api: dict[str, Any], response: dict[str, Any]) -> Any:
    """The JSON body schema of one response object (following ``#/components/responses`` refs)."""
    ref = response.get("$ref")
    if isinstance(ref, str):
        response = api["components"]["responses"][ref.rsplit("/", 1)[1]]
    body = response.get("content", {}).get("application/json", {}).get("schema")
    return convert(body) if body is not None else None


def trim(api: dict[str, Any], source: str = SOURCE) -> dict[str, Any]:
    """Build the trimmed, self-contained document from the full OpenAPI description."""
    endpoints: dict[str, dict[str, Any]] = {}
    for method, path, statuses in ENDPOINTS:
        responses = api["paths"][path][method]["responses"]
        kept = {s: _response_schema(api, responses[s]) for s in statuses}
        endpoints[f"{method.upper()} {path}"] = {s: v for s, v in kept.items() if v is not None}
    return {"source": source, "endpoints": endpoints, "$defs": _definitions(api, endpoints)}


def trim_webhooks(api: dict[str, Any], source: str = WEBHOOKS_SOURCE) -> dict[str, Any]:
    """The payload schemas of ``WEBHOOKS`` from ``@octokit/openapi-webhooks``' description (its
    ``webhooks`` section), self-contained like :func:`trim`'s output."""
    hooks = {
        name: convert(api["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]["schema"])
        for name in WEBHOOKS
    }
    return {"source": source, "webhooks": hooks, "$defs": _definitions(api, hooks)}


def _definitions(api: dict[str, Any], roots: dict[str, Any]) -> dict[str, Any]:
    """Every ``components/schemas`` definition reachable from ``roots``, converted, by name."""
    schemas = api["components"]["schemas"]
    defs: dict[str, Any] = {}
    pending: set[str] = set()
    _refs(roots, pending)
    while pending:
        name = pending.pop()
        if name in defs:
            continue
        defs[name] = convert(schemas[name])
        found: set[str] = set()
        _refs(defs[name], found)
        pending |= found - set(defs)
    return dict(sorted(defs.items()))


def main(argv: list[str] | None = None) -> int:
    """CLI: ``openapi_trim.py SOURCE.json OUT.json``; prints the output size in bytes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--webhooks", action="store_true", help="trim @octokit/openapi-webhooks' payloads")
    args = parser.parse_args(argv)
    api = json.loads(args.source.read_text(encoding="utf-8"))
    if args.webhooks:
        doc = trim_webhooks(api, f"{WEBHOOKS_PACKAGE} generated/{args.source.name}")
    else:
        doc = trim(api, f"{PACKAGE} generated/{args.source.name}")
    text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(f"{args.out}: {len(text.encode())} bytes, {len(doc['$defs'])} definitions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
