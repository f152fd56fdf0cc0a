"""DAG factories of the provider, used by the repository's dags/ folder and by users' own DAG files."""
