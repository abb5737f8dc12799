"""Issue 27: a typed answer is as lenient as GitHub is, on api.github.com and on every supported GHES.

Every field a ``fullsend.adapters.github.wire`` model requires (no default) must be in the
``required`` list of the schema GitHub documents for the endpoint the adapter reads it from, in
the description of api.github.com and in that of every GitHub Enterprise Server release named in
docs/adopting.md "GitHub Enterprise Server"; nested models are walked too.  Otherwise an answer
GitHub may legally send would make the whole read a ``MalformedResponse`` (docs/architecture.md
"Binding": a missing optional field degrades one feature, never steering as a whole).

The oracles are ``tests/data/openapi/*-trimmed.json`` (``tools/openapi_trim.py`` over
``@octokit/openapi`` 23.0.2).  A schema with ``oneOf``/``anyOf`` branches must require the field
in each object branch; ``allOf`` parts are merged.  Likewise a field the model types without
``None`` must not be nullable there: a documented ``null`` would be malformed too.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from fullsend.adapters.github import wire

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"
# Every description the models are held to: api.github.com and each supported GHES release.
DESCRIPTIONS = {
    "api.github.com": "github-rest-trimmed.json",
    "ghes-3.18": "ghes-3.18-trimmed.json",
    "ghes-3.19": "ghes-3.19-trimmed.json",
}

R = "/repos/{owner}/{repo}"
# (model, endpoint key, status, array?) for every typed REST read of the adapter (forge.py, logins.py).
READS: tuple[tuple[type[BaseModel], str, str, bool], ...] = (
    (wire.WorkflowRun, f"GET {R}/actions/runs/{{run_id}}", "200", False),
    (wire.JobsPage, f"GET {R}/actions/runs/{{run_id}}/jobs", "200", False),
    (wire.WorkflowRunsPage, f"GET {R}/actions/workflows/{{workflow_id}}/runs", "200", False),
    (wire.WorkflowRunsPage, f"GET {R}/actions/runs", "200", False),
    (wire.Issue, f"GET {R}/issues/{{issue_number}}", "200", False),
    (wire.PullRequest, f"GET {R}/pulls/{{pull_number}}", "200", False),
    (wire.IssueComment, f"GET {R}/issues/{{issue_number}}/comments", "200", True),
    (wire.RepositoryComment, f"GET {R}/issues/comments", "200", True),
    (wire.IssueComment, f"POST {R}/issues/{{issue_number}}/comments", "201", False),
    (wire.IssueComment, f"PATCH {R}/issues/comments/{{comment_id}}", "200", False),
    (wire.Review, f"GET {R}/pulls/{{pull_number}}/reviews", "200", True),
    (wire.ReviewComment, f"GET {R}/pulls/{{pull_number}}/comments", "200", True),
    (wire.PostedReview, f"POST {R}/pulls/{{pull_number}}/reviews", "200", False),
    (wire.Comparison, f"GET {R}/compare/{{basehead}}", "200", False),
    (wire.AuthenticatedUser, "GET /user", "200", False),
    (wire.App, "GET /app", "200", False),
)


def _load(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _resolve(doc: dict[str, Any], schema: Any) -> Any:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        schema = doc["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return "object" in kinds or "properties" in schema or "required" in schema


def branches(doc: dict[str, Any], schema: Any) -> list[dict[str, Any]]:
    """The object schemas an answer may match: each ``oneOf``/``anyOf`` branch on its own, the
    parts of an ``allOf`` merged (properties joined, ``required`` the union)."""
    schema = _resolve(doc, schema)
    if not isinstance(schema, dict):
        return []
    out: list[dict[str, Any]] = []
    for key in ("oneOf", "anyOf"):
        for sub in schema.get(key, ()):
            out.extend(branches(doc, sub))
    if "allOf" in schema:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            for piece in branches(doc, part) or [{}]:
                merged["properties"].update(piece.get("properties", {}))
                merged["required"] = sorted({*merged["required"], *piece.get("required", ())})
        merged["properties"].update(schema.get("properties", {}))
        merged["required"] = sorted({*merged["required"], *schema.get("required", ())})
        out.append(merged)
    elif _is_object(schema):
        out.append(schema)
    return out


def _items(doc: dict[str, Any], schema: Any) -> list[Any]:
    """The ``items`` schemas of every array branch of ``schema``."""
    schema = _resolve(doc, schema)
    if not isinstance(schema, dict):
        return []
    found = [schema["items"]] if "items" in schema else []
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in schema.get(key, ()):
            found.extend(_items(doc, sub))
    return found


def _nested(annotation: Any) -> list[tuple[type[BaseModel], bool]]:
    """The models inside a field's type, each with whether it sits in a list: ``list[str | Label]``
    → ``[(Label, True)]``, ``User | None`` → ``[(User, False)]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, False)]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list:
        return [(model, True) for arg in args for model, _ in _nested(arg)]
    if origin in (typing.Union, types.UnionType) or origin is typing.Annotated:
        return [found for arg in args for found in _nested(arg)]
    return []


def _accepts_none(annotation: Any) -> bool:
    if annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts_none(arg) for arg in typing.get_args(annotation))
    if origin is typing.Annotated:
        return _accepts_none(typing.get_args(annotation)[0])
    return False


def _nullable(doc: dict[str, Any], schema: Any) -> bool:
    schema = _resolve(doc, schema)
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(doc, sub) for key in ("anyOf", "oneOf") for sub in schema.get(key, ()))


def mismatches(model: type[BaseModel], schema: Any, doc: dict[str, Any], where: str) -> list[str]:
    """Every field ``model`` requires that some object branch of ``schema`` does not, and every
    field it types without ``None`` that the branch lets be ``null``, recursively; each named
    ``<model>.<field> at <where>`` (``(nullable)`` for the second kind)."""
    found: list[str] = []
    for branch in branches(doc, schema):
        required = set(branch.get("required", ()))
        properties = branch.get("properties", {})
        for name, field in model.model_fields.items():
            key = field.alias or name
            if field.is_required() and key not in required:
                found.append(f"{model.__name__}.{key} at {where}")
            if key not in properties:
                continue
            if not _accepts_none(field.annotation) and _nullable(doc, properties[key]):
                found.append(f"{model.__name__}.{key} at {where} (nullable)")
            for inner, in_list in _nested(field.annotation):
                subs = _items(doc, properties[key]) if in_list else [properties[key]]
                for sub in subs:
                    found.extend(mismatches(inner, sub, doc, f"{where}.{key}{'[]' if in_list else ''}"))
    return sorted(set(found))


def _report(description: str) -> list[str]:
    doc = _load(DESCRIPTIONS[description])
    out: list[str] = []
    for model, endpoint, status, array in READS:
        schema = doc["endpoints"][endpoint][status]
        subs = _items(doc, schema) if array else [schema]
        for sub in subs:
            where = f"{endpoint} {status}{'[]' if array else ''}"
            out.extend(f"{line} ({description})" for line in mismatches(model, sub, doc, where))
    return out


@pytest.mark.parametrize("description", sorted(DESCRIPTIONS))
def test_every_field_a_model_requires_is_required_by_github(description: str) -> None:
    found = _report(description)
    assert not found, "model requires a field GitHub may omit or send as null:\n  " + "\n  ".join(found)


def test_every_typed_read_has_a_schema_in_every_description() -> None:
    for description, name in DESCRIPTIONS.items():
        doc = _load(name)
        for model, endpoint, status, array in READS:
            schema = doc["endpoints"][endpoint][status]
            subs = _items(doc, schema) if array else [schema]
            assert subs and all(branches(doc, s) for s in subs), (model.__name__, endpoint, description)


def test_the_walk_finds_a_missing_requirement_nested_and_in_branches() -> None:
    doc: dict[str, Any] = {
        "$defs": {
            "run": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "integer"},
                    "path": {"type": ["string", "null"]},
                    "pull_requests": {"type": "array", "items": {"$ref": "#/$defs/pr"}},
                },
            },
            "pr": {
                "anyOf": [
                    {"type": "object", "required": ["number"], "properties": {"number": {}}},
                    {"type": "object", "properties": {"number": {}}},
                    {"type": "null"},
                ]
            },
        }
    }

    class PR(wire.Wire):
        number: int

    class Run(wire.Wire):
        id: int
        path: str
        pull_requests: list[PR] | None = None

    assert mismatches(Run, {"$ref": "#/$defs/run"}, doc, "GET x 200") == [
        "PR.number at GET x 200.pull_requests[]",
        "Run.path at GET x 200",
        "Run.path at GET x 200 (nullable)",
    ]


@pytest.mark.parametrize("description", sorted(DESCRIPTIONS))
def test_the_walk_would_catch_a_required_label_name_in_the_committed_descriptions(description: str) -> None:
    class NamedLabel(wire.Wire):
        name: str

    class StrictIssue(wire.Issue):
        labels: list[str | NamedLabel]

    doc = _load(DESCRIPTIONS[description])
    endpoint = f"GET {R}/issues/{{issue_number}}"
    assert mismatches(StrictIssue, doc["endpoints"][endpoint]["200"], doc, endpoint + " 200") == [
        f"NamedLabel.name at {endpoint} 200.labels[]"
    ]


# Each field ``wire.ReviewComment`` reads, with the JSON type the reader expects of it.
REVIEW_COMMENT_TYPES = {
    "id": "integer",
    "user": None,
    "created_at": "string",
    "updated_at": "string",
    "html_url": "string",
    "body": "string",
    "path": "string",
    "line": "integer",
    "original_line": "integer",
    "in_reply_to_id": "integer",
}


@pytest.mark.parametrize("description", sorted(DESCRIPTIONS))
def test_every_field_the_review_comment_reader_uses_is_documented_with_its_type(description: str) -> None:
    doc = _load(DESCRIPTIONS[description])
    [item] = _items(doc, doc["endpoints"][f"GET {R}/pulls/{{pull_number}}/comments"]["200"])
    [branch] = branches(doc, item)
    read = {field.alias or name for name, field in wire.ReviewComment.model_fields.items()}
    assert read == set(REVIEW_COMMENT_TYPES)
    for key, kind in REVIEW_COMMENT_TYPES.items():
        schema = _resolve(doc, branch["properties"][key])
        if kind is not None:
            assert kind in (schema["type"] if isinstance(schema["type"], list) else [schema["type"]]), key
    assert "login" in _resolve(doc, branch["properties"]["user"])["required"]
