# Airflow 3 with this provider installed (used by docker-compose.yaml).
FROM apache/airflow:3.1.0-python3.11
COPY --chown=airflow:root pyproject.toml README.md /opt/provider/
COPY --chown=airflow:root airflow_lineage_governance /opt/provider/airflow_lineage_governance
RUN pip install --no-cache-dir "/opt/provider" "apache-airflow-providers-celery" "psycopg2-binary"
