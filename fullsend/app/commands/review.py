"""``fullsend review <pull-request-url> [--file FILE]``: post a review with line comments.

The review helper of docs/architecture.md "Review helper".

The review stage's agent calls it instead of writing API calls: it reads one JSON document
(``FILE``, or standard input for ``-``, the default)::

    {"body": "Two findings.", "event": "COMMENT",
     "comments": [{"path": "src/app.py", "line": 12, "body": "This can be None."},
                  {"path": "src/db.py", "start_line": 3, "line": 5, "side": "RIGHT", "body": "…"}]}

and posts it as one review on the commit the agent reviewed (``commit_id``, else the head the run
started on, ``FULLSEND_RUN_HEAD_SHA``; never the live head; outside a run, or in a run started by a
comment, whose event names no head, ``commit_id`` is required), under ``GH_TOKEN`` (in a run, the
role token the agent holds) against ``GITHUB_API_URL`` (else the URL's host).  The URL must name a
pull request (``…/pull/N``): an ``/issues/N`` URL is refused.  The texts are neutralised (no
receipt or status marker can be posted).  Exit codes: 0 posted (the review's URL printed) · 1
GitHub refused it or could not be reached (its message printed: a line outside the diff is a 422)
· 2 a bad document, URL or token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.commands.steer import SteerCommandError, api_base, parse_item_url, resolve_token
from fullsend.core.review import LineComment, ReviewDraft
from fullsend.errors import ExitCode, ForgeError, MalformedResponse

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
    commit_id: Annotated[str, Field(pattern=r"^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")] | None = None
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


#: The head the run started on, which the action exports to the agent (docs/architecture.md "Sandbox environment").
RUN_HEAD_VARIABLE = "FULLSEND_RUN_HEAD_SHA"
_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def reviewed_commit(doc: _Document, env: Mapping[str, str]) -> str:
    """The commit the review is about: the document's ``commit_id``, else the head the run started
    on (``FULLSEND_RUN_HEAD_SHA``); never the pull request's live head, which may have moved past
    what the agent read (a review on it would let that head's queued run skip unreviewed).
    Raises :class:`ReviewDocumentError` when neither names a commit."""
    if doc.commit_id:
        return doc.commit_id.lower()
    exported = env.get(RUN_HEAD_VARIABLE, "").strip().strip("'")
    if _SHA.fullmatch(exported):
        return exported.lower()
    raise ReviewDocumentError(
        "name the commit you reviewed: set commit_id in the review document (`git rev-parse HEAD` of the "
        f"checkout you read), or run where {RUN_HEAD_VARIABLE} is set"
    )


def _draft(doc: _Document, commit_id: str) -> ReviewDraft:
    lines = tuple(LineComment(c.path, c.line, c.body, c.side, c.start_line) for c in doc.comments)
    return ReviewDraft(commit_id, doc.body, doc.event, lines)


def run_review(url: str, source: str, env: Mapping[str, str], stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """The ``fullsend review`` command: read, check, post; returns the exit code (0, 1 or 2)."""
    try:
        item = parse_item_url(url)
        if item.kind != "pull":
            raise SteerCommandError(
                f"{item.repo.full_name}#{item.number}: the URL names an issue (/issues/{item.number}); a review "
                f"goes on a pull request: give its URL, …/{item.repo.full_name}/pull/{item.number}"
            )
        if source == "-":
            text = stdin.read(MAX_DOCUMENT_BYTES + 1)
        else:
            with open(source, encoding="utf-8") as handle:
                text = handle.read(MAX_DOCUMENT_BYTES + 1)
        doc = parse_review(text)
        commit_id = reviewed_commit(doc, env)
        token = resolve_token(env, item.hostname)
    except (SteerCommandError, ReviewDocumentError) as exc:
        err.write(f"fullsend review: {exc}\n")
        return ExitCode.BAD_INPUT
    except (OSError, UnicodeDecodeError) as exc:
        err.write(f"fullsend review: cannot read the review document {source!r}: {exc}\n")
        return ExitCode.BAD_INPUT
    forge = GitHubForge(item.repo, api_base(item, env), "", token, token, SystemClock(), timeout_s=TIMEOUT_S)
    where = f"{item.repo.full_name}#{item.number}"
    try:
        posted = forge.post_review(item.number, _draft(doc, commit_id))
    except MalformedResponse as exc:
        if exc.status is not None and 200 <= exc.status < 300:  # made, but the answer does not say where
            out.write(f"{where} (review posted; GitHub's answer did not say where)\n")
            return ExitCode.OK
        err.write(f"fullsend review: GitHub did not take the review on {where}: {exc}{_MAYBE}\n")
        return ExitCode.FAILED
    except ForgeError as exc:
        lost = exc.status is None or exc.status >= 500  # a POST is not idempotent: it may have landed
        err.write(f"fullsend review: GitHub did not take the review on {where}: {exc}{_MAYBE if lost else ''}\n")
        return ExitCode.FAILED
    out.write(f"{posted.html_url}\n")
    return ExitCode.OK


_MAYBE = "; it may have been posted all the same: look at the pull request before posting again"
