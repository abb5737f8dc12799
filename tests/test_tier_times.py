"""The per-tier time table that tests/conftest.py prints at the end of a run."""

from __future__ import annotations

from tests.conftest import TOP_LEVEL, format_slowest, format_tier_table, tier_of


def test_the_tier_is_the_first_directory_under_tests() -> None:
    assert tier_of("tests/core/receipt/test_receipt_marker.py::test_x[a-b]") == "core"
    assert tier_of("tests/adapters/runtimes/real/test_real.py::TestX::test_y") == "adapters"
    assert tier_of("tests/container/test_ghes.py::test_z") == "container"
    assert tier_of("tests/test_layers.py::test_rule") == TOP_LEVEL


def test_the_table_lists_tiers_slowest_first_then_the_total() -> None:
    seconds = {"core": 1.25, "act": 200.0, TOP_LEVEL: 0.5}
    tests = {"core": {"a", "b", "c"}, "act": {"d"}, TOP_LEVEL: {"e", "f"}}
    assert format_tier_table(seconds, tests) == [
        "tier              tests   seconds",
        "act                   1     200.0",
        "core                  3       1.2",
        "(top level)           2       0.5",
        "total                 6     201.8",
    ]


def test_the_slowest_tests_are_listed_slowest_first_and_cut_at_the_count() -> None:
    seconds = {"tests/a.py::x": 0.5, "tests/b.py::y": 12.25, "tests/c.py::z": 3.0}
    assert format_slowest(seconds, 2) == ["     12.2s tests/b.py::y", "      3.0s tests/c.py::z"]
