from __future__ import annotations

import os

# `make test` tries a bounded number of generated statements; SOUNDNESS_EXAMPLES=5000 runs a long search.
EXAMPLES = int(os.environ.get("SOUNDNESS_EXAMPLES", "150"))
