from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# `make test` tries a bounded number of generated statements; SOUNDNESS_EXAMPLES=5000 (or
# --hypothesis-profile=soundness-long) runs a long search.
settings.register_profile("soundness-long", max_examples=5000, deadline=None,
                          suppress_health_check=list(HealthCheck))
EXAMPLES = int(os.environ.get("SOUNDNESS_EXAMPLES", "150"))
