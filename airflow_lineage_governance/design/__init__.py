"""Design lineage from DAG files (the Airflow shell: `dagbag.py`) and the `design` and `diff` commands (`commands.py`).

The pure parts are `graph/design.py` and `graph/diff.py`.
"""
