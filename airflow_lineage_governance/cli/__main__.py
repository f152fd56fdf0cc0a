"""Run the CLI as `python -m airflow_lineage_governance.cli`."""

import sys

from airflow_lineage_governance.cli.main import main

sys.exit(main())
