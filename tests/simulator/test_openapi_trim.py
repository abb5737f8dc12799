"""The OpenAPI 3.0 → JSON Schema converter (tools/openapi_trim.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
TRIMMED = ROOT / "tests" / "data" / "openapi" / "github-rest-trimmed.json"
# One trimmed description per supported GitHub Enterprise Server release (docs/adopting.md).
GHES = {release: ROOT / "tests" / "data" / "openapi" / f"ghes-{release}-trimmed.json" for release in ("3.18", "3.19")}
_spec = importlib.util.spec_from_file_location("openapi_trim", ROOT / "tools" / "openapi_trim.py")
assert _spec and _spec.loader
trim_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trim_tool)


def _ok(schema: dict, value: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def test_nullable_enum_gets_null_type_and_none() -> None:
    got = trim_tool.convert(
        {
            "type": "string",
            "nullable": True,
            "enum": ["success", "failure"],
            "example": "x",
            "description": "conclusion",
        }
    )
    assert got == {"type": ["string", "null"], "enum": ["success", "failure", None]}


def test_nullable_ref_and_composition_are_wrapped() -> None:
    assert trim_tool.convert({"$ref": "#/components/schemas/simple-user", "nullable": True}) == {
        "anyOf": [{"$ref": "#/$defs/simple-user"}, {"type": "null"}]
    }
    got = trim_tool.convert({"nullable": True, "allOf": [{"type": "string", "enum": ["a"]}]})
    assert _ok(got, None) and _ok(got, "a") and not _ok(got, "b")


def test_nested_branches_and_property_names_survive() -> None:
    schema = {
        "type": "object",
        "properties": {
            "description": {"oneOf": [{"type": "integer"}, {"type": "string", "nullable": True, "enum": ["x"]}]},
            "title": {"type": "string"},
        },
        "required": ["description"],
    }
    got = trim_tool.convert(schema)
    assert set(got["properties"]) == {"description", "title"}
    assert _ok(got, {"description": None}) and _ok(got, {"description": 3}) and not _ok(got, {"description": "y"})


def test_boolean_exclusive_minimum_becomes_numeric() -> None:
    got = trim_tool.convert({"type": "integer", "minimum": 0, "exclusiveMinimum": True})
    assert got == {"type": "integer", "exclusiveMinimum": 0}


def test_trim_records_the_source_it_was_given() -> None:
    paths: dict[str, dict[str, object]] = {}
    for method, path, statuses in trim_tool.ENDPOINTS:
        paths.setdefault(path, {})[method] = {"responses": {s: {"description": "x"} for s in statuses}}
    api = {"paths": paths, "components": {"schemas": {}}}
    assert trim_tool.trim(api)["source"] == trim_tool.SOURCE
    assert trim_tool.trim(api, "@octokit/openapi 23.0.2 generated/ghes-3.19.json")["source"].endswith("ghes-3.19.json")


@pytest.mark.parametrize("release", sorted(GHES))
def test_committed_ghes_files_name_their_release_and_keep_the_same_endpoints(release: str) -> None:
    doc = json.loads(GHES[release].read_bytes())
    assert doc["source"] == f"{trim_tool.PACKAGE} generated/ghes-{release}.json"
    assert set(doc["endpoints"]) == set(json.loads(TRIMMED.read_bytes())["endpoints"])


@pytest.mark.parametrize("path", [TRIMMED, *GHES.values()], ids=lambda p: p.name)
def test_committed_trimmed_file_is_small_self_contained_and_nullable_aware(path: Path) -> None:
    raw = path.read_bytes()
    assert len(raw) < 400_000
    doc = json.loads(raw)
    assert len(doc["endpoints"]) == len(trim_tool.ENDPOINTS)
    refs = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.add(node["$ref"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    assert refs and all(r.startswith("#/$defs/") and r[len("#/$defs/") :] in doc["$defs"] for r in refs)
    assert None in doc["$defs"]["job"]["properties"]["conclusion"]["enum"]
    assert '"nullable":' not in json.dumps(doc)
