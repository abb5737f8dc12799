"""Head-move bodies (docs/architecture.md "Head moves"; lastHead aaa111, new bbb222)."""

from __future__ import annotations

from fullsend.core.delta.changes import needs_compare
from fullsend.core.delta.headmove import head_move_context
from fullsend.core.model import CompareFile, Comparison
from tests.support.forge_records import pr_state

OLD, NEW = "aaa111", "bbb222"


def _utf8(s: str) -> int:
    return len(s.encode())


def unreadable(wording, reason: str) -> str:
    return wording.head_move(OLD, NEW) + " " + wording.unreadable(reason)


def test_H1_complete_listing_with_patch(wording):
    cmp = Comparison(
        "ahead",
        ahead_by=2,
        files=(
            CompareFile("internal/x.go", "modified", additions=3, deletions=1, patch="@@ -1,2 +1,4 @@\n-old\n+new"),
            CompareFile("docs/new.md", "renamed", previous_filename="docs/old.md"),
            CompareFile("img.png", "added"),
        ),
    )
    body = head_move_context(OLD, NEW, cmp, "", wording)
    head = wording.head_move(OLD, NEW)
    assert OLD in head and NEW in head
    assert body == (
        head + " " + wording.count_line(3, 2) + "\n- internal/x.go (modified, +3 -1)\n"
        "- docs/new.md (renamed from docs/old.md, +0 -0)\n- img.png (added, +0 -0)\n"
        "\n--- internal/x.go\n@@ -1,2 +1,4 @@\n-old\n+new\n"
    )
    assert "3" in wording.count_line(3, 2) and "2" in wording.count_line(3, 2)


def test_H1_compare_is_asked_only_for_a_move_from_a_known_head():
    assert needs_compare(pr_state(OLD), NEW)
    assert not needs_compare(pr_state(OLD), OLD)
    assert not needs_compare(pr_state(""), NEW)
    assert not needs_compare(pr_state(OLD), "")


def test_H2_not_found(wording):
    body = head_move_context(OLD, NEW, None, "not-found", wording)
    assert body == unreadable(wording, wording.reason_not_found)
    assert not body.endswith("\n")
    assert "force-push" in wording.reason_not_found


def test_H3_diverged(wording):
    cmp = Comparison("diverged", files=(CompareFile("a.go", "modified", patch="+x"),))
    body = head_move_context(OLD, NEW, cmp, "", wording)
    assert body == unreadable(wording, wording.reason_status("diverged"))
    assert "diverged" in body and "a.go" not in body


def test_H4_listing_at_the_cap(wording):
    cmp = Comparison("ahead", ahead_by=1, files=tuple(CompareFile(f"f{i}.go", "modified") for i in range(300)))
    body = head_move_context(OLD, NEW, cmp, "", wording)
    assert body == unreadable(wording, wording.reason_file_cap)
    assert "299" in body and "f0.go" not in body


def test_H4_just_below_the_cap_is_listed_or_too_long(wording):
    cmp = Comparison("ahead", ahead_by=1, files=tuple(CompareFile(f"f{i}", "added") for i in range(299)))
    body = head_move_context(OLD, NEW, cmp, "", wording)
    assert body != unreadable(wording, wording.reason_file_cap)


def test_H5_patches_whole_files_within_budget(wording):
    files = tuple(CompareFile(f"f{i}.go", "modified", additions=1, patch="+line\n" * 60) for i in range(40))
    body = head_move_context(OLD, NEW, Comparison("ahead", ahead_by=1, files=files), "", wording)
    listing = wording.head_move(OLD, NEW) + " " + wording.count_line(40, 1) + "\n"
    listing += "".join(f"- f{i}.go (modified, +1 -0)\n" for i in range(40))
    assert body.startswith(listing)
    hunks = [f"\n--- f{i}.go\n" + "+line\n" * 60 + "\n" for i in range(40)]
    shown = 0
    while _utf8(listing) + sum(map(_utf8, hunks[: shown + 1])) <= 6144:
        shown += 1
    assert 10 <= shown < 40  # 13 with the reference's sentence lengths
    trailer = "\n" + wording.patch_trailer(shown, 40) + "\n"
    assert body == listing + "".join(hunks[:shown]) + trailer
    assert f"--- f{shown}.go" not in body
    assert _utf8(body) <= 6144 + 200


def test_H5_no_skipping_ahead_to_a_smaller_patch(wording):
    files = (CompareFile("big", "modified", patch="x" * 7000), CompareFile("small", "modified", patch="y"))
    body = head_move_context(OLD, NEW, Comparison("ahead", 1, files=files), "", wording)
    assert "--- big" not in body and "--- small" not in body
    assert body.endswith("\n" + wording.patch_trailer(0, 2) + "\n")


def test_H6_list_longer_than_budget(wording):
    files = tuple(
        CompareFile(f"internal/some/deeply/nested/package/path/file_{i:03d}.go", "modified", additions=1)
        for i in range(200)
    )
    body = head_move_context(OLD, NEW, Comparison("ahead", ahead_by=1, files=files), "", wording)
    assert body == unreadable(wording, wording.reason_list_too_long(200))
    assert "200" in body and _utf8(body) <= 6144


def test_H7_no_files(wording):
    body = head_move_context(OLD, NEW, Comparison("ahead", ahead_by=1), "", wording)
    assert body == wording.head_move(OLD, NEW) + " " + wording.no_change


def test_H8_error_text_never_shown(wording):
    # The app maps "403 body: <html>SECRET-LOOKING-TEXT</html>" to compare_error "error".
    body = head_move_context(OLD, NEW, None, "error", wording)
    assert body == unreadable(wording, wording.reason_compare_error)
    assert "SECRET" not in body
    # An unknown error value or a missing comparison fail safe the same way.
    assert head_move_context(OLD, NEW, None, "403 SECRET", wording) == body
    assert head_move_context(OLD, NEW, None, "", wording) == body


def test_H9_not_supported(wording):
    body = head_move_context(OLD, NEW, None, "not-supported", wording)
    assert body == unreadable(wording, wording.reason_not_supported)


def test_H10_no_previous_head(wording):
    body = head_move_context("", NEW, None, "", wording)
    assert body == wording.head_move("", NEW) + " " + wording.unreadable(wording.reason_no_previous_head)
    assert NEW in body
