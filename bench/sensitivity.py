"""Where steer + receipt stops beating preserve: the policy benchmark swept one knob at a time (issue 22).

    PYTHONPATH=. python bench/sensitivity.py [--quick] [--overhead-s 60]

From the defaults of ``bench/policies.py`` (turn 300 s, answering drained steers half a turn, poll
30 s, ``max_steers`` 2; the same traces, agent and simulated concurrency group), each knob is
moved alone: turn length, steered-answer cost (as a fraction of the turn), poll interval and
``max_steers``.  Each row prints steer + receipt and preserve over the whole trace set in
agent-minutes and in agent + overhead minutes; each knob's break-even is where the difference
(steer - preserve, agent-minutes) changes sign, linearly interpolated between the two rows around
it, or "none in the range".  ``--quick`` sweeps fewer points.  Exits 0 either way.
"""

from __future__ import annotations

import sys

import policies

from tests.doubles.burst_traces import ReplayParams

FULL = {
    "turn_s": (120.0, 300.0, 600.0, 900.0),
    "steer_share": (0.0, 0.25, 0.5, 0.75, 1.0),
    "poll_s": (10.0, 30.0, 60.0, 120.0),
    "max_steers": (1, 2, 3, 4),
}
QUICK = {"turn_s": (120.0, 300.0), "steer_share": (0.25, 0.5, 1.0), "poll_s": (10.0, 60.0), "max_steers": (1, 2)}
DEFAULT = {"turn_s": 300.0, "steer_share": 0.5, "poll_s": 30.0, "max_steers": 2}
UNITS = {"turn_s": "turn s", "steer_share": "steer cost x turn", "poll_s": "poll s", "max_steers": "max_steers"}


def sweep(knob: str, values: tuple[float, ...], overhead_s: float) -> list[tuple[float, float, float, float, float]]:
    """Rows ``(value, steer agent-min, preserve agent-min, steer total-min, preserve total-min)`` with
    only ``knob`` moved from ``DEFAULT``; total = agent + ``overhead_s`` per job start."""
    rows = []
    for value in values:
        knobs = {**DEFAULT, knob: value}
        params = ReplayParams(
            turn_s=knobs["turn_s"],
            absorb_s=knobs["turn_s"] * knobs["steer_share"],
            poll_interval_s=knobs["poll_s"],
            max_steers=int(knobs["max_steers"]),
        )
        total = policies.totals(policies.run_set(params, policies.all_traces(), ("preserve", "steer")))
        steer, kept = total["steer"], total["preserve"]
        rows.append(
            (
                value,
                steer.agent_s / 60,
                kept.agent_s / 60,
                steer.total_s(overhead_s) / 60,
                kept.total_s(overhead_s) / 60,
            )
        )
    return rows


def break_even(rows: list[tuple[float, float, float, float, float]], continuous: bool) -> str:
    """Where steer + receipt stops beating preserve (agent-min) along the rows: the first crossing
    (interpolated for a ``continuous`` knob), then the values where it wins, ties and loses."""
    sides: dict[str, list[str]] = {"wins": [], "ties": [], "loses": []}
    crossing = ""
    for index, (value, steer, kept, _, _) in enumerate(rows):
        diff = steer - kept
        sides["wins" if diff < 0 else "ties" if diff == 0 else "loses"].append(f"{value:g}")
        if diff >= 0 and not crossing:
            prev = rows[index - 1] if index else None
            if prev is None or diff == 0 or not continuous:
                crossing = f"{value:g}"
            else:
                d0 = prev[1] - prev[2]
                crossing = f"~{prev[0] + (value - prev[0]) * d0 / (d0 - diff):.3g} (between {prev[0]:g} and {value:g})"
    listed = "; ".join(f"{side} at {', '.join(values)}" for side, values in sides.items() if values)
    return f"{crossing or 'none in the range'} ({listed})"


def main(argv: list[str]) -> int:
    grid = QUICK if "--quick" in argv else FULL
    overhead_s = float(argv[argv.index("--overhead-s") + 1]) if "--overhead-s" in argv else policies.OVERHEAD_S
    head = (
        f"{'knob':<18}  {'value':>6}  {'steer min':>9}  {'preserve':>8}  {'diff':>6}  {'steer+oh':>8}  {'pres+oh':>7}"
    )
    print(head)
    print("-" * len(head))
    evens = []
    for knob, values in grid.items():
        rows = sweep(knob, values, overhead_s)
        for value, s, p, so, po in rows:
            print(f"{UNITS[knob]:<18}  {value:>6g}  {s:>9.1f}  {p:>8.1f}  {s - p:>+6.1f}  {so:>8.1f}  {po:>7.1f}")
        evens.append((knob, break_even(rows, continuous=knob != "max_steers")))
    print(
        f"\nOver {len(policies.all_traces())} traces; defaults turn 300 s, steer cost 0.5 x turn, poll 30 s, "
        f"max_steers 2; overhead {overhead_s:g} s per job start (the +oh columns)."
    )
    print("Break-even: where steer + receipt stops beating preserve in agent-minutes, one knob moved at a time:")
    for knob, text in evens:
        print(f"- {UNITS[knob]}: {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
