"""Our own wording: one line per sentence, no structural token, the statements the spec requires."""

from __future__ import annotations

from dataclasses import fields

import pytest

from fullsend.core.prose import Wording
from fullsend.core.wire import AMENDMENTS_HEADING, CONTEXT_HEADING, FENCE_CLOSE, FENCE_OPEN, INSTRUCTION_PREFIX
from fullsend.wording import TEMPLATE_DIR, build_wording

SAMPLES = {
    "trigger_line": [([55], ["pull_request_target"]), ([1, 2], ["issue_comment", "issues"]), ([], [])],
    "guide_amendments": [(["@reviewer"],), (["@a", "@b"],)],
    "head_moved_notice": [("bbb222", "aaa111"), ("bbb222", "")],
    "head_move": [("aaa111", "bbb222"), ("", "bbb222")],
    "unreadable": [("a reason",)],
    "reason_status": [("diverged",)],
    "reason_list_too_long": [(200,)],
    "count_line": [(1, 1), (3, 2)],
    "patch_trailer": [(13, 40)],
    "title_item": [("New title",)],
    "labels_changed": [(["a"], []), ([], ["b"]), (["a", "c"], ["b"])],
    "authority": [("octocat", "issue_comment"), ("octocat", "")],
}


def all_sentences(w: Wording):
    for f in fields(Wording):
        value = getattr(w, f.name)
        if isinstance(value, str):
            yield f.name, value
        else:
            for args in SAMPLES[f.name]:
                yield f.name, value(*args)


def test_every_template_is_used_and_every_field_has_one():
    names = {p.stem for p in TEMPLATE_DIR.glob("*.j2")}
    assert names == {f.name for f in fields(Wording)}


@pytest.mark.parametrize("name, text", list(all_sentences(build_wording())))
def test_sentences_are_single_lines_without_tokens(name, text):
    assert text and "\n" not in text and "\r" not in text
    for token in (AMENDMENTS_HEADING, CONTEXT_HEADING, FENCE_OPEN, FENCE_CLOSE, INSTRUCTION_PREFIX, "Source: "):
        assert not text.startswith(token)
    assert "[work-item-context]" not in text.lower() and "instruction from @" not in text.lower()
    assert "git fetch" not in text and "scope" not in text.lower()
    assert text == text.strip()


def test_interpolated_values_appear(wording):
    assert wording.labels_changed(["needs-info"], ["bug"]).endswith("added needs-info; removed bug")
    assert wording.title_item("New title").endswith("New title")
    assert "13" in wording.patch_trailer(13, 40) and "40" in wording.patch_trailer(13, 40)
    assert "@a, @b" in wording.guide_amendments(["@a", "@b"])
    assert "1, 2" in wording.trigger_line([1, 2], ["x"]) and "issue_comment, issues" in wording.trigger_line(
        [1], ["issue_comment", "issues"]
    )


def test_statements_the_envelope_must_make(wording):
    assert "no new tools or permissions" in wording.no_new_powers
    assert "ignore" in wording.context_header and "ignored" in wording.guide_context_only
    assert "route job" in wording.guide_amendments(["@x"]) and "precedence" in wording.guide_amendments(["@x"])
    assert "octocat" in wording.authority("octocat", "issue_comment") and "issue_comment" in wording.authority(
        "octocat", "issue_comment"
    )


def test_a_broken_template_is_refused(tmp_path):
    for p in TEMPLATE_DIR.glob("*.j2"):
        (tmp_path / p.name).write_text(p.read_text())
    (tmp_path / "context_header.j2").write_text("Amendments follow.\n")
    with pytest.raises(ValueError, match="structural token"):
        build_wording(tmp_path)
