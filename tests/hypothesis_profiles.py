"""Hypothesis profiles for the property tests (imported by them, so the default run needs no conftest change).

- ``ci`` (the default): 30 examples a property, derandomised (the same examples on every run, so CI is
  reproducible) and without an example database, no deadline (a busy machine is not a failure).
- ``slow``: 500 random examples, for the ``@pytest.mark.slow`` variants (:data:`SLOW`), or for every property
  with ``HYPOTHESIS_PROFILE=slow``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("slow", max_examples=500, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SLOW = settings.get_profile("slow")
