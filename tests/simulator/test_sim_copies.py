"""The simulator's reads hand out copies: what a caller changes never reaches the stored records."""

from __future__ import annotations

from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from fullsend.simulator.shapes import json_copy


def test_json_copy_is_equal_and_shares_no_dict_or_list() -> None:
    value = {"a": [1, 2.5, {"b": None, "c": True}], "d": "text", "e": (1, [2])}
    copied = json_copy(value)
    assert copied == value
    assert copied is not value and copied["a"] is not value["a"] and copied["a"][2] is not value["a"][2]
    assert copied["e"] == (1, [2]) and copied["e"][1] is not value["e"][1]  # other types: copy.deepcopy


def test_changing_what_a_read_returned_leaves_the_record_as_it_was(sim: GitHubSimulator) -> None:
    standard_pr_scenario(sim)
    sim.add_comment(7, "please also check the error path", "reviewer")
    first = sim.comments(7)[0]
    body, login = first["body"], first["user"]["login"]
    first["body"] = "changed by the caller"
    first["user"]["login"] = "someone-else"
    again = sim.comments(7)[0]
    assert (again["body"], again["user"]["login"]) == (body, login)
    run = sim.runs()[0]
    run["pull_requests"].append({"number": 99})
    assert {"number": 99} not in sim.runs()[0]["pull_requests"]
