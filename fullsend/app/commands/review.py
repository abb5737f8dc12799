"""``fullsend review <pull-request-url> [--file FILE]``: post a review with line comments.

The review helper of docs/architecture.md "Review helper".

The review stage's agent calls it instead of writing API calls: it reads one JSON document
(``FILE``, or standard input for ``-``, the default)::

    {"body": "Two findings.", "event": "COMMENT",
     "comments": [{"path": "src/app.py", "line": 12, "body": "This can be None."},
                  {"path": "src/db.py", "start_line": 3, "line": 5, "side": "RIGHT", "body": "…"}]}

and posts it as one review on the pull request's current head, under ``GH_TOKEN`` (in a run, the
role token the agent holds).  The texts are neutralised (no receipt or status marker can be
posted).  Exit codes: 0 posted (the review's URL printed) · 1 GitHub refused it or could not be
reached (its message printed: a line outside the diff is a 422) · 2 a bad document, URL or token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.commands.steer import SteerCommandError, api_base, parse_item_url, resolve_token
from fullsend.core.review import LineComment, ReviewDraft
from fullsend.errors import ExitCode, ForgeError

MAX_DOCUMENT_BYTES = 1_048_576
MAX_COMMENTS = 100
TIMEOUT_S = 30
Text = Annotated[str, Field(min_length=1, max_length=65_536)]


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    line: Annotated[int, Field(ge=1)]
    body: Text
    side: Literal["LEFT", "RIGHT"] = "RIGHT"
    start_line: Annotated[int, Field(ge=1)] | None = None

    @model_validator(mode="after")
    def _range(self) -> _Line:
        if self.start_line is not None and self.start_line >= self.line:
            raise ValueError("start_line must be below line")
        return self


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    body: Annotated[str, Field(max_length=65_536)] = ""
    event: Literal["COMMENT", "APPROVE", "REQUEST_CHANGES"] = "COMMENT"
    comments: Annotated[list[_Line], Field(max_length=MAX_COMMENTS)] = []

    @model_validator(mode="after")
    def _body(self) -> _Document:
        if self.event != "APPROVE" and not self.body.strip():
            raise ValueError(f"a {self.event} review needs a body")
        return self


class ReviewDocumentError(Exception):
    """The review document is not one this command posts: exit 2, the message names the field."""


def parse_review(text: str) -> _Document:
    """The checked document.  Raises :class:`ReviewDocumentError` naming the first bad field."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise ReviewDocumentError(f"the review document is over {MAX_DOCUMENT_BYTES} bytes")
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ReviewDocumentError("the review document must be a JSON object {body, event, comments}")
        return _Document.model_validate(data)
    except json.JSONDecodeError as exc:
        raise ReviewDocumentError(f"the review document is not JSON: {exc.msg} at line {exc.lineno}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        raise ReviewDocumentError(f"review document, {where}: {first['msg']}") from None


def _draft(doc: _Document, head_sha: str) -> ReviewDraft:
    lines = tuple(LineComment(c.path, c.line, c.body, c.side, c.start_line) for c in doc.comments)
    return ReviewDraft(head_sha, doc.body, doc.event, lines)


def run_review(url: str, source: str, env: Mapping[str, str], stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """The ``fullsend review`` command: read, check, post; returns the exit code (0, 1 or 2)."""
    try:
        item = parse_item_url(url)
        if source == "-":
            text = stdin.read(MAX_DOCUMENT_BYTES + 1)
        else:
            with open(source, encoding="utf-8") as handle:
                text = handle.read(MAX_DOCUMENT_BYTES + 1)
        doc = parse_review(text)
        token = resolve_token(env, item.hostname)
    except (SteerCommandError, ReviewDocumentError) as exc:
        err.write(f"fullsend review: {exc}\n")
        return ExitCode.BAD_INPUT
    except (OSError, UnicodeDecodeError) as exc:
        err.write(f"fullsend review: cannot read the review document {source!r}: {exc}\n")
        return ExitCode.BAD_INPUT
    forge = GitHubForge(item.repo, api_base(item, env), "", token, token, SystemClock(), timeout_s=TIMEOUT_S)
    try:
        head = forge.get_pull_request(item.number).head_sha
        posted = forge.post_review(item.number, _draft(doc, head))
    except ForgeError as exc:
        lost = exc.status is None or exc.status >= 500  # a POST is not idempotent: it may have landed
        maybe = "; it may have been posted all the same: look at the pull request before posting again" if lost else ""
        err.write(
            f"fullsend review: GitHub did not take the review on {item.repo.full_name}#{item.number}: {exc}{maybe}\n"
        )
        return ExitCode.FAILED
    out.write(f"{posted.html_url}\n")
    return ExitCode.OK
