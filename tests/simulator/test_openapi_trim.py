"""The OpenAPI 3.0 → JSON Schema converter (tools/openapi_trim.py, spec/implementation-notes.md §6)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
TRIMMED = ROOT / "tests" / "data" / "openapi" / "github-rest-trimmed.json"
_spec = importlib.util.spec_from_file_location("openapi_trim", ROOT / "tools" / "openapi_trim.py")
assert _spec and _spec.loader
trim_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trim_tool)


def _ok(schema: dict, value: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def test_nullable_enum_gets_null_type_and_none() -> None:
    got = trim_tool.convert({"type": "string", "nullable": True, "enum": ["success", "failure"], "example": "x",
                             "description": "conclusion"})
    assert got == {"type": ["string", "null"], "enum": ["success", "failure", None]}


def test_nullable_ref_and_composition_are_wrapped() -> None:
    assert trim_tool.convert({"$ref": "#/components/schemas/simple-user", "nullable": True}) == {
        "anyOf": [{"$ref": "#/$defs/simple-user"}, {"type": "null"}]}
    got = trim_tool.convert({"nullable": True, "allOf": [{"type": "string", "enum": ["a"]}]})
    assert _ok(got, None) and _ok(got, "a") and not _ok(got, "b")


def test_nested_branches_and_property_names_survive() -> None:
    schema = {"type": "object", "properties": {
        "description": {"oneOf": [{"type": "integer"}, {"type": "string", "nullable": True, "enum": ["x"]}]},
        "title": {"type": "string"}}, "required": ["description"]}
    got = trim_tool.convert(schema)
    assert set(got["properties"]) == {"description", "title"}
    assert _ok(got, {"description": None}) and _ok(got, {"description": 3}) and not _ok(got, {"description": "y"})


def test_boolean_exclusive_minimum_becomes_numeric() -> None:
    got = trim_tool.convert({"type": "integer", "minimum": 0, "exclusiveMinimum": True})
    assert got == {"type": "integer", "exclusiveMinimum": 0}


def test_committed_trimmed_file_is_small_self_contained_and_nullable_aware() -> None:
    raw = TRIMMED.read_bytes()
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
    assert refs and all(r.startswith("#/$defs/") and r[len("#/$defs/"):] in doc["$defs"] for r in refs)
    assert None in doc["$defs"]["job"]["properties"]["conclusion"]["enum"]
    assert '"nullable":' not in json.dumps(doc)
