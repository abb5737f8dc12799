"""The harness ``steer:`` block: defaults, absent ≠ false, the bounds, input overrides and
the lint diagnostics (docs/architecture.md "Harness")."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.errors import ConfigError
from fullsend.harness import (
    RULE_STEER_ENABLED_UNSET,
    RULE_UNKNOWN_KEY,
    Harness,
    SteerBlock,
    harness_diagnostics,
    load_harness,
    parse_harness,
    with_overrides,
)


def load(tmp_path: Path, text: str) -> Harness:
    path = tmp_path / "harness.yaml"
    path.write_text(text, encoding="utf-8")
    return load_harness(path)


# --- semantics: (enabled, explicit, max, poll) ---------------------------------------------------


@pytest.mark.parametrize(
    ("vid", "yaml_text", "enabled", "explicit", "max_steers", "poll_s"),
    [
        ("V49-no-block-default-on", "prompt: do it\n", True, False, 2, 5),
        ("empty-file", "", True, False, 2, 5),
        ("null-block-is-absent", "steer:\n", True, False, 2, 5),
        ("empty-mapping", "steer: {}\n", True, False, 2, 5),
        ("V40-opt-out", "steer: {enabled: false}\n", False, False, 2, 5),
        ("explicit-on", "steer: {enabled: true}\n", True, True, 2, 5),
        ("V160-cap-only-still-steers", "steer: {max_steers: 3}\n", True, False, 3, 5),
        ("cadence-only-still-steers", "steer: {poll_interval_seconds: 45}\n", True, False, 2, 45),
        ("zero-means-default", "steer: {max_steers: 0, poll_interval_seconds: 0}\n", True, False, 2, 5),
        ("upper-bounds-accepted", "steer: {max_steers: 50, poll_interval_seconds: 600}\n", True, False, 50, 600),
        ("off-keeps-numbers", "steer: {enabled: false, max_steers: 5}\n", False, False, 5, 5),
        ("seed-block", "steer:\n  enabled: false\n  max_steers: 2\n  poll_interval_seconds: 30\n", False, False, 2, 30),
    ],
)
def test_steer_semantics(
    tmp_path: Path, vid: str, yaml_text: str, enabled: bool, explicit: bool, max_steers: int, poll_s: int
) -> None:
    steer = load(tmp_path, yaml_text).steer
    assert (steer.steer_enabled, steer.explicitly_enabled) == (enabled, explicit)
    assert (steer.effective_max_steers, steer.effective_poll_interval_s) == (max_steers, poll_s)


def test_absent_enabled_is_not_false(tmp_path: Path) -> None:
    steer = load(tmp_path, "steer: {max_steers: 3}\n").steer
    assert steer.present and steer.enabled is None and steer.steer_enabled is True


# --- validation errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vid", "yaml_text", "expected"),
    [
        ("max-negative", "steer: {max_steers: -1}\n", "steer.max_steers must not be negative, got -1"),
        ("max-above-50", "steer: {max_steers: 51}\n", "steer.max_steers must be at most 50, got 51"),
        (
            "poll-negative",
            "steer: {poll_interval_seconds: -5}\n",
            "steer.poll_interval_seconds must not be negative, got -5",
        ),
        (
            "poll-above-600",
            "steer: {poll_interval_seconds: 601}\n",
            "steer.poll_interval_seconds must be at most 600, got 601",
        ),
        ("enabled-not-bool", "steer: {enabled: 'false'}\n", "steer.enabled must be true or false"),
        ("max-not-int", "steer: {max_steers: 2.5}\n", "steer.max_steers must be a whole number"),
        ("max-bool", "steer: {max_steers: true}\n", "steer.max_steers must be a whole number"),
        ("poll-string", "steer: {poll_interval_seconds: '30'}\n", "steer.poll_interval_seconds must be a whole number"),
        ("block-not-mapping", "steer: true\n", "steer must be a mapping"),
        ("text-key-not-string", "pre_script: [a, b]\n", "pre_script must be a string"),
        ("top-not-mapping", "- a\n- b\n", "the top level must be a mapping"),
        ("bad-yaml", "steer: {enabled: true\n", "is not valid YAML (line"),
        ("bad-date", "when: 2026-13-45\n", "is not valid YAML (month must be in 1..12)"),
        (
            "max-4400-digits",
            f"steer: {{max_steers: {'9' * 4400}}}\n",
            "a number has thousands of digits; steer.max_steers must be in 0..50 and "
            "steer.poll_interval_seconds in 0..600",
        ),
        (
            "poll-4000-digits",
            f"steer: {{poll_interval_seconds: {'9' * 4000}}}\n",
            "steer.poll_interval_seconds must be at most 600, got a number of 4000 digits",
        ),
        (
            "max-30-negative-digits",
            f"steer: {{max_steers: -{'9' * 30}}}\n",
            "steer.max_steers must not be negative, got a negative number of 30 digits",
        ),
    ],
)
def test_load_fails(tmp_path: Path, vid: str, yaml_text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, yaml_text)
    assert expected in str(info.value)
    assert str(info.value).startswith("harness harness.yaml: ")


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"harness nope\.yaml: cannot be read"):
        load_harness(tmp_path / "nope.yaml")


# --- keys read, keys ignored ---------------------------------------------------------------------


def test_text_keys_are_read_and_stripped(tmp_path: Path) -> None:
    harness = load(tmp_path, "role: coder\nprompt: |\n  fix it\npre_script: ' ./pre.sh '\npost_script: ./post.sh\n")
    assert (harness.role, harness.prompt, harness.pre_script, harness.post_script) == (
        "coder",
        "fix it",
        "./pre.sh",
        "./post.sh",
    )
    assert harness.unknown_keys == ()


def test_unknown_keys_are_ignored_and_listed(tmp_path: Path) -> None:
    harness = load(
        tmp_path, "base: ../code.yaml\nprivilege_levels: [a]\nsteer: {enable: false, max_steers: 4}\nrole: coder\n"
    )
    assert harness.unknown_keys == ("base", "privilege_levels", "steer.enable")
    # base composition is not supported: the named base is not read, and the typo'd key is no opt-out
    assert harness.steer.steer_enabled is True and harness.steer.effective_max_steers == 4


# --- input overrides (action.yml: steer_enabled, max_steers, poll_interval_seconds) ------------


@pytest.mark.parametrize(
    ("vid", "block", "inputs", "enabled", "explicit", "max_steers", "poll_s"),
    [
        ("empty-inputs-change-nothing", SteerBlock(True, False, 4, 60), (None, None, None), False, False, 4, 60),
        ("input-turns-on", SteerBlock(True, False, None, None), (True, None, None), True, True, 2, 5),
        ("input-turns-off", SteerBlock(True, True, None, None), (False, None, None), False, False, 2, 5),
        ("input-on-without-block-is-explicit", SteerBlock(), (True, None, None), True, True, 2, 5),
        ("cap-input-not-explicit", SteerBlock(), (None, 7, None), True, False, 7, 5),
        ("cadence-input-keeps-harness-off", SteerBlock(True, False, None, None), (None, None, 10), False, False, 2, 10),
        ("zero-input-means-default", SteerBlock(True, None, 9, 90), (None, 0, 0), True, False, 2, 5),
    ],
)
def test_with_overrides(
    vid: str, block: SteerBlock, inputs: tuple, enabled: bool, explicit: bool, max_steers: int, poll_s: int
) -> None:
    steer = with_overrides(block, *inputs)
    assert (steer.steer_enabled, steer.explicitly_enabled) == (enabled, explicit)
    assert (steer.effective_max_steers, steer.effective_poll_interval_s) == (max_steers, poll_s)


def test_with_overrides_enforces_bounds() -> None:
    with pytest.raises(ConfigError, match=r"steer\.max_steers must be at most 50, got 51"):
        with_overrides(SteerBlock(), None, 51, None)


# --- lint diagnostics ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vid", "yaml_text", "rules"),
    [
        ("V163-pre-script-no-block", "pre_script: ./pre.sh\n", [RULE_STEER_ENABLED_UNSET]),
        ("V163-pre-script-cap-only", "pre_script: ./pre.sh\nsteer: {max_steers: 3}\n", [RULE_STEER_ENABLED_UNSET]),
        ("V164-enabled-false-silences", "pre_script: ./pre.sh\nsteer: {enabled: false}\n", []),
        ("V164-enabled-true-silences", "pre_script: ./pre.sh\nsteer: {enabled: true}\n", []),
        ("no-pre-script", "steer: {max_steers: 3}\n", []),
        (
            "unknown-keys",
            "pre_script: x\nsteer: {enabled: true, cap: 1}\nextends: base\n",
            [RULE_UNKNOWN_KEY, RULE_UNKNOWN_KEY],
        ),
    ],
)
def test_diagnostics(tmp_path: Path, vid: str, yaml_text: str, rules: list[str]) -> None:
    found = harness_diagnostics(load(tmp_path, yaml_text))
    assert [d.rule for d in found] == rules
    assert all(d.severity == "warning" for d in found)


def test_V163_steer_warning_names_field_and_reason(tmp_path: Path) -> None:
    (diag,) = harness_diagnostics(load(tmp_path, "pre_script: ./pre.sh\n"))
    assert diag.field == "steer.enabled"
    assert "pre_script is set but steer.enabled is not" in diag.message
    assert diag.message == (
        "pre_script is set but steer.enabled is not: steering is on by default, and the updates a running "
        "agent absorbs never go through the pre-script; set steer.enabled to true or false to say which you want"
    )


def test_unknown_key_diagnostics_name_each_key(tmp_path: Path) -> None:
    found = harness_diagnostics(load(tmp_path, "steer: {enabled: true, cap: 1}\nextends: base\n"))
    assert [d.field for d in found] == ["extends", "steer.cap"]
    assert "enabled, max_steers, poll_interval_seconds" in found[1].message


# --- properties ----------------------------------------------------------------------------------


@given(
    enabled=st.sampled_from([None, True, False]),
    cap=st.one_of(st.none(), st.integers(0, 50)),
    poll=st.one_of(st.none(), st.integers(0, 600)),
)
def test_any_valid_block_parses_with_defaults_applied(enabled: bool | None, cap: int | None, poll: int | None) -> None:
    block = {
        k: v for k, v in (("enabled", enabled), ("max_steers", cap), ("poll_interval_seconds", poll)) if v is not None
    }
    steer = parse_harness({"steer": block}).steer
    assert steer.steer_enabled is (enabled is not False)
    assert steer.explicitly_enabled is (enabled is True)
    assert steer.effective_max_steers == (cap or 2)
    assert steer.effective_poll_interval_s == (poll or 5)


@given(value=st.integers().filter(lambda n: n < 0 or n > 50))
def test_any_out_of_range_cap_fails(value: int) -> None:
    digits = len(str(abs(value)))
    shown = str(value) if digits <= 20 else f"a {'negative ' if value < 0 else ''}number of {digits} digits"
    with pytest.raises(ConfigError, match=f"got {shown}$"):
        parse_harness({"steer": {"max_steers": value}})
