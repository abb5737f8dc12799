"""Shared fixtures for the steer text / envelope tests (issue 4).

The Hypothesis profiles (``dev``/``ci``/``slow``) are registered in ``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

from fullsend.wording import default_wording


@pytest.fixture(scope="session")
def wording():
    """The project's real wording (templates under fullsend/templates/envelope/)."""
    return default_wording()
