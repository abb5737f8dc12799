"""Virtual time for a world a driver controls (the simulator replays, the property machine, the
benchmarks): a ``fullsend.ports.Clock`` whose waits take no wall time.  Time moves only when every
thread of the world is waiting, and then it jumps to the next instant something is due.  A test
double: the shipped simulator and ``fullsend demo`` run on the system clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass
class _Waiter:
    """One thread of the virtual world blocked in :meth:`VirtualClock.wait`."""

    due_s: float
    wake: threading.Event
    released: bool = False


class VirtualClock:
    """``fullsend.ports.Clock`` on virtual time: ``now()`` = ``origin`` + t, ``monotonic()`` = t.

    The world's threads are *participants*, started with :meth:`spawn`.  A participant's
    :meth:`wait` (or :meth:`sleep`) blocks until its event is set or virtual time reaches its
    due instant; time never moves while a participant runs.  The driver (any other thread) moves
    time: :meth:`advance_to` lets every wait due before the new instant end, in order, then sets
    it; :meth:`run_due` ends the waits due now or woken, and returns once every participant waits
    again or has finished.  A driver's own ``wait``/``sleep`` moves time at once by its timeout.

    Participants must block only through this clock (a participant blocked on anything the
    driver has to do next would deadlock the world).  :meth:`join` is the exception: a helper
    thread outside the world takes no virtual time, so it is joined in real seconds.
    """

    def __init__(self, origin: datetime) -> None:
        self.origin = origin
        self._t_s = 0.0
        self._cond = threading.Condition()
        self._running = 0  # participants that are not blocked in wait()
        self._participants: set[int] = set()
        self._waiters: list[_Waiter] = []
        self._never = threading.Event()  # what a plain sleep waits on

    # ---- Clock ------------------------------------------------------------------------------------
    def now(self) -> datetime:
        """``origin`` + virtual seconds elapsed (aware when ``origin`` is)."""
        return self.origin + timedelta(seconds=self._t_s)

    def monotonic(self) -> float:
        """Virtual seconds since ``origin``."""
        return self._t_s

    def sleep(self, seconds: float) -> bool:
        """Pass ``seconds`` of virtual time (nothing interrupts it: always True)."""
        self.wait(self._never, seconds)
        return True

    def wait(self, wake: threading.Event, timeout_s: float) -> bool:
        """Until ``wake`` is set or ``timeout_s`` virtual seconds pass; True when ``wake`` is set.

        In a participant this blocks until the driver lets time reach the due instant (or sees
        ``wake`` set); in the driver it moves time forward at once.
        """
        if wake.is_set() or timeout_s <= 0:
            return wake.is_set()
        if threading.get_ident() not in self._participants:
            self.advance_to(self._t_s + timeout_s)
            self.run_due()
            return wake.is_set()
        with self._cond:
            waiter = _Waiter(self._t_s + timeout_s, wake)
            self._waiters.append(waiter)
            self._running -= 1
            self._cond.notify_all()
            while not waiter.released:
                self._cond.wait()
        return wake.is_set()

    def join(self, thread: threading.Thread, timeout_s: float) -> bool:
        """Wait for a helper thread outside the world: in real seconds, at most ``timeout_s``."""
        thread.join(max(0.0, timeout_s))
        return not thread.is_alive()

    # ---- the driver --------------------------------------------------------------------------------
    def spawn(self, target: Callable[[], object], name: str) -> threading.Thread:
        """Start ``target`` on a daemon thread that is a participant; returns once it waits or ends."""

        def body() -> None:
            with self._cond:
                self._participants.add(threading.get_ident())
            try:
                target()
            finally:
                with self._cond:
                    self._participants.discard(threading.get_ident())
                    self._running -= 1
                    self._cond.notify_all()

        with self._cond:
            self._running += 1
        thread = threading.Thread(target=body, name=name, daemon=True)
        thread.start()
        self.run_due()
        return thread

    def next_due_s(self) -> float | None:
        """The earliest instant a waiting participant is due at, ``None`` when none waits."""
        with self._cond:
            return min((w.due_s for w in self._waiters), default=None)

    def advance_to(self, t_s: float) -> None:
        """Move time to ``t_s`` (never back), ending each wait due before it at its own instant.

        Waits due exactly at ``t_s`` are left for :meth:`run_due`, so the driver acts first at
        an instant it shares with a participant.  A woken wait ends first, at the current instant.
        """
        with self._cond:
            while True:
                self._quiesce()
                if self._release(lambda w: w.wake.is_set()):
                    continue
                due = min((w.due_s for w in self._waiters), default=None)
                if due is None or due >= t_s:
                    self._t_s = max(self._t_s, t_s)
                    return
                self._t_s = max(self._t_s, due)
                self._release(lambda w: w.due_s <= self._t_s)

    def run_due(self) -> None:
        """End every wait that is due now or woken; return once every participant waits or has ended."""
        with self._cond:
            while True:
                self._quiesce()
                if not self._release(lambda w: w.wake.is_set() or w.due_s <= self._t_s):
                    return

    def _quiesce(self) -> None:
        while self._running > 0:
            self._cond.wait()

    def _release(self, ready: Callable[[_Waiter], bool]) -> bool:
        chosen = [w for w in self._waiters if ready(w)]
        for waiter in chosen:
            self._waiters.remove(waiter)
            waiter.released = True
            self._running += 1
        if chosen:
            self._cond.notify_all()
        return bool(chosen)
