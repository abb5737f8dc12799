"""Our own sentences of the steer text and the envelope, rendered from jinja2 templates.

The templates live in ``fullsend/templates/envelope/`` (one sentence per file, named after the
:class:`fullsend.core.prose.Wording` field it fills).  The pure core never imports jinja2: it
receives the :class:`Wording` built here as a parameter.  WIRE tokens are not templated; they are
constants of ``fullsend.core.wire``.

Every fixed sentence is checked once at construction: one line, and it does not begin with a
structural token (docs/architecture.md "Steer text"), so the body keeps at most one ``Amendments`` line and one
line starting ``Work-item context.``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from fullsend.core.prose import Wording
from fullsend.core.text.envelope import render_envelope
from fullsend.core.watch.steer import SteerMessage
from fullsend.core.wire import (
    AMENDMENTS_HEADING,
    CONTEXT_HEADING,
    FENCE_CLOSE,
    FENCE_OPEN,
    INSTRUCTION_PREFIX,
    OPENING_LINE,
    SOURCE_PREFIX,
)

__all__ = ["TEMPLATE_DIR", "Wording", "default_wording"]

#: Where the envelope sentences live.
TEMPLATE_DIR = Path(__file__).parent / "templates" / "envelope"

_FIXED = (
    "guide_context_only",
    "context_header",
    "reason_no_previous_head",
    "reason_not_found",
    "reason_not_supported",
    "reason_compare_error",
    "reason_file_cap",
    "no_change",
    "body_edited",
    "delivery",
    "no_authority",
    "authorized_run",
    "no_new_powers",
)
_STRUCTURAL = (
    AMENDMENTS_HEADING,
    CONTEXT_HEADING,
    FENCE_OPEN,
    FENCE_CLOSE,
    INSTRUCTION_PREFIX,
    SOURCE_PREFIX,
    OPENING_LINE,
)


def _environment(template_dir: Path) -> Environment:
    return Environment(
        loader=FileSystemLoader(str(template_dir)),
        autoescape=False,  # plain text for an agent, never HTML
        undefined=StrictUndefined,
        keep_trailing_newline=False,
    )


def _check_fixed(name: str, text: str) -> str:
    """Refuse a fixed sentence that spans lines or carries a structural token (our own bug)."""
    if "\n" in text or "\r" in text:
        raise ValueError(f"envelope template {name!r} renders more than one line")
    if any(token.lower() in text.lower() for token in _STRUCTURAL):
        raise ValueError(f"envelope template {name!r} contains a structural token")
    return text


def _renderer(env: Environment, name: str, *params: str) -> Callable[..., str]:
    template = env.get_template(f"{name}.j2")

    def render(*args: Any) -> str:
        return template.render(**dict(zip(params, args, strict=False)))

    render.__name__ = name
    return render


def build_wording(template_dir: Path = TEMPLATE_DIR) -> Wording:
    """Render the templates of ``template_dir`` into a :class:`Wording` (raises ``ValueError`` on a
    fixed sentence that breaks the one-line / no-token rule; jinja2 errors on a broken template)."""
    env = _environment(template_dir)
    fixed = {name: _check_fixed(name, env.get_template(f"{name}.j2").render()) for name in _FIXED}
    r = _renderer
    return Wording(
        trigger_line=r(env, "trigger_line", "run_ids", "events"),
        guide_amendments=r(env, "guide_amendments", "logins"),
        head_moved_notice=r(env, "head_moved_notice", "new_head", "last_head"),
        head_move=r(env, "head_move", "old", "new"),
        unreadable=r(env, "unreadable", "reason"),
        reason_status=r(env, "reason_status", "status"),
        reason_list_too_long=r(env, "reason_list_too_long", "count"),
        count_line=r(env, "count_line", "files", "ahead_by"),
        patch_trailer=r(env, "patch_trailer", "shown", "with_patch"),
        title_item=r(env, "title_item", "title"),
        labels_changed=r(env, "labels_changed", "added", "removed"),
        authority=r(env, "authority", "actor", "event"),
        **fixed,
    )


@lru_cache(maxsize=1)
def default_wording() -> Wording:
    """The project's wording (templates shipped in ``fullsend/templates/envelope/``); cached."""
    return build_wording()


def render_steer(msg: SteerMessage) -> str:
    """``msg`` in the steer envelope with the project's wording: the text every runtime hands its
    agent (docs/architecture.md "Envelope").  The one renderer is
    ``fullsend.core.text.envelope.render_envelope``; this only picks the wording."""
    return render_envelope(msg, default_wording())
