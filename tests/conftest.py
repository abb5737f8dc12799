"""Session-wide test settings: Hypothesis profiles (select with ``HYPOTHESIS_PROFILE``).

``dev`` (default, 200 examples) for the edit loop, ``ci`` (10,000; what ``.ci/run`` selects) and
``slow`` (50,000).  No example database is written into the working tree.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=200, **_COMMON)
settings.register_profile("ci", max_examples=10_000, **_COMMON)
settings.register_profile("slow", max_examples=50_000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
