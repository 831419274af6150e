"""Shared test configuration."""

import os

from hypothesis import HealthCheck, settings

# Timing on shared 2-core CI machines is noisy: no per-example deadline; derandomized so a
# failing CI run can be reproduced exactly.
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=300)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
