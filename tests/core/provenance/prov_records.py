"""Core records built directly from REST-shaped dicts, for the provenance tests.

The product reads GitHub through ``fullsend.adapters.github.wire`` (strict: a malformed answer is
refused whole) and ``records``.  The core, though, must fail safe on every "unknown" value a record
can hold (docs/architecture.md "GitHub access"): these builders let the tests state a candidate in
GitHub's field names and reach those unknown values.  A missing field, or one of the wrong type,
becomes the field's unknown value (empty string, ``None`` time, 0 id, empty tuple); ids outside
int64 become 0; ``pull_requests[]`` entries bind by ``number`` alone (the adapter's base-repository
check is tested with the adapter).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fullsend.core.model import Comment, Job, ReferencedWorkflow, WorkflowRun
from fullsend.core.scalars import INT64_MAX, parse_time


def _get(d: object, key: str) -> object:
    return d.get(key) if isinstance(d, Mapping) else None


def _str(d: object, key: str) -> str:
    v = _get(d, key)
    return v if isinstance(v, str) else ""


def _int(d: object, key: str) -> int:
    v = _get(d, key)
    if isinstance(v, bool) or not isinstance(v, int):
        return 0
    return v if -INT64_MAX - 1 <= v <= INT64_MAX else 0


def _opt_str(d: object, key: str) -> str | None:
    v = _get(d, key)
    return v if isinstance(v, str) and v != "" else None


def _list(d: object, key: str) -> list[Any]:
    v = _get(d, key)
    return v if isinstance(v, list) else []


def _login(d: object, key: str) -> tuple[str, str]:
    u = _get(d, key)
    return (_str(u, "login"), _str(u, "type")) if isinstance(u, Mapping) else ("", "")


def workflow_run(d: object) -> WorkflowRun:
    """A run from a ``workflow_runs[]``-shaped dict; never raises."""
    prs = tuple(n for n in (_int(p, "number") for p in _list(d, "pull_requests") if isinstance(p, Mapping)) if n > 0)
    chain = tuple(
        ReferencedWorkflow(path=_str(r, "path"), ref=_str(r, "ref"), sha=_str(r, "sha"))
        for r in _list(d, "referenced_workflows")
        if isinstance(r, Mapping)
    )
    return WorkflowRun(
        id=_int(d, "id"),
        path=_str(d, "path"),
        event=_str(d, "event"),
        status=_str(d, "status"),
        conclusion=_opt_str(d, "conclusion"),
        created_at=parse_time(_get(d, "created_at")),
        run_attempt=_int(d, "run_attempt"),
        display_title=_str(d, "display_title"),
        actor=_login(d, "actor")[0],
        triggering_actor=_login(d, "triggering_actor")[0],
        pull_requests=prs,
        referenced_workflows=chain,
        name=_str(d, "name"),
        html_url=_str(d, "html_url"),
        head_sha=_str(d, "head_sha"),
        updated_at=parse_time(_get(d, "updated_at")),
    )


def job(d: object) -> Job:
    """A job from a ``jobs[]``-shaped dict; never raises."""
    return Job(
        id=_int(d, "id"),
        name=_str(d, "name"),
        status=_str(d, "status"),
        conclusion=_opt_str(d, "conclusion"),
        run_attempt=_int(d, "run_attempt"),
    )


def comment(d: object) -> Comment:
    """A comment from an issue-comment-shaped dict; never raises (raw times kept as given)."""
    login, kind = _login(d, "user")
    return Comment(
        id=_int(d, "id"),
        body=_str(d, "body"),
        author=login,
        author_type=kind,
        created_at=parse_time(_get(d, "created_at")),
        updated_at=parse_time(_get(d, "updated_at")),
        created_at_raw=_str(d, "created_at"),
        updated_at_raw=_str(d, "updated_at"),
        html_url=_str(d, "html_url"),
    )
