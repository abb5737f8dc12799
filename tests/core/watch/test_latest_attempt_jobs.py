"""Issue 18: each job name's record from the latest attempt that ran it (``latest_attempt_jobs``)."""

from __future__ import annotations

from fullsend.core.model import Job, latest_attempt_jobs
from fullsend.core.scalars import decimal_id


def test_a_job_of_an_earlier_attempt_stays_when_no_later_attempt_ran_it() -> None:
    jobs = [
        Job(1, "dispatch / Route", "completed", "success", 1),
        Job(2, "dispatch / Review", "completed", "failure", 1),
        Job(3, "dispatch / Review", "in_progress", None, 2),
    ]
    assert [j.id for j in latest_attempt_jobs(jobs)] == [1, 3]


def test_two_jobs_of_one_name_in_the_latest_attempt_stay_two() -> None:
    """Ambiguity is the provenance check's to refuse, not something to resolve here."""
    jobs = [
        Job(1, "dispatch / Route", "completed", "success", 2),
        Job(2, "dispatch / Route", "completed", "success", 2),
        Job(3, "dispatch / Route", "completed", "failure", 1),
    ]
    assert [j.id for j in latest_attempt_jobs(jobs)] == [1, 2]


def test_an_unknown_attempt_counts_as_the_lowest() -> None:
    jobs = [Job(1, "dispatch / Review", "completed", "failure", 0), Job(2, "dispatch / Review", "queued", None, 1)]
    assert [j.id for j in latest_attempt_jobs(jobs)] == [2]


def test_decimal_ids_never_reach_int_with_thousands_of_digits() -> None:
    assert decimal_id("9" * 4301) == 0 and decimal_id("0042") == 42 and decimal_id("") == 0
    assert decimal_id("9223372036854775807") == 2**63 - 1 and decimal_id("9223372036854775808") == 0
    assert decimal_id("-5") == 0 and decimal_id("٣") == 0
