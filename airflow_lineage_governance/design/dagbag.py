"""The Airflow shell of design lineage.

Loads a DAGs folder into Airflow's `DagBag` and renders the SQL of every IcebergSqlOperator task for a logical date,
running nothing.

The DagBag parses the files as the dag-processor does (no metadata database is read or written: nothing is
synced). Each task's SQL is rendered by the task's own `render_template` in its DAG's Jinja environment (Airflow's
sandboxed environment, with the DAG's template search path, macros, filters and undefined-variable rule). The
context is the one the CLI's sandboxed templating gives (`templating.template_context`: ds, ts, logical_date,
data_interval_start/end, macros): Airflow builds a task's own context only inside a running task instance, from
the Task SDK's run details, which design has none of.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from airflow_lineage_governance.errors import LineageGovernanceError
from airflow_lineage_governance.graph.design import Design, TaskSql


class DagsFolderError(LineageGovernanceError):
    """Raised when the DAGs folder to read the design from does not exist."""


@dataclass(frozen=True)
class DagsFolderSql:
    """What the DagBag of a folder gave.

    Each IcebergSqlOperator task's rendered SQL, the DAG ids, the jobs of the other tasks, and the files that could not
    be imported (file -> the error's last line).
    """

    tasks: list[TaskSql]
    dag_ids: list[str]
    other_tasks: list[str]
    import_errors: dict[str, str]


@contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """Put `folder` first on sys.path for the block, as Airflow does for its configured DAGs folder.

    So DAG files import the modules that live beside them.
    """
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        if entry in sys.path:
            sys.path.remove(entry)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence, for the block, the deprecation warnings of Airflow's own file discovery.

    The DagBag's progress line still goes to its log, on stderr.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _last_line(error: str) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else "the file could not be imported"


def render_task_sql(task: Any, context: dict[str, Any]) -> TaskSql:
    """Return the task's SQL rendered in its DAG's Jinja environment with `context`.

    Or the task with the one sentence saying why it could not be rendered.
    """
    from jinja2 import TemplateNotFound, TemplateSyntaxError, UndefinedError
    from jinja2.exceptions import SecurityError

    dag_id, task_id = task.dag_id, task.task_id
    where = f"the SQL of {dag_id}.{task_id}"
    try:
        rendered = task.render_template(task.sql, context, task.get_template_env())
    except TemplateNotFound as error:
        problem = f"{where}: the template file {error.name} is not in the DAG's template search path"
    except TemplateSyntaxError as error:
        problem = f"{where}: line {error.lineno} is not valid Jinja ({error.message})"
    except SecurityError as error:
        problem = f"{where}: the template reaches for Python internals, which the sandbox refuses ({error})"
    except UndefinedError as error:
        problem = (
            f"{where}: the template uses a name design does not give ({error}); design renders with ds, "
            "ts, logical_date, data_interval_start/end and macros"
        )
    except Exception as error:  # anything else a template does is still one sentence
        problem = f"{where}: the template failed to render ({type(error).__name__}: {_last_line(str(error))})"
    else:
        if isinstance(rendered, str):
            return TaskSql(dag_id, task_id, sql=rendered)
        problem = f"{where}: it renders to a {type(rendered).__name__}, not one SQL statement"
    return TaskSql(dag_id, task_id, problem=problem)


def dags_folder_sql(folder: str | Path, logical_date: datetime) -> DagsFolderSql:
    """Return every IcebergSqlOperator task of the DAGs in `folder` with its SQL rendered for `logical_date`.

    By DAG id, then task id. Raises DagsFolderError when the folder does not exist; a file that cannot be imported is in
    `import_errors`, a task whose template cannot be rendered carries its sentence.
    """
    from airflow.dag_processing.dagbag import DagBag

    from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator
    from airflow_lineage_governance.templating import template_context

    path = Path(folder)
    if not path.exists():
        raise DagsFolderError(f"{path}: no DAGs folder here; give the folder of the DAG files to read the design from.")
    with _on_path(path if path.is_dir() else path.parent), redirect_stdout(sys.stderr), _quiet():
        bag = DagBag(str(path), load_op_links=False)
    context = template_context(logical_date)
    tasks, others = [], []
    for dag_id in sorted(bag.dags):
        for task in sorted(bag.dags[dag_id].tasks, key=lambda t: t.task_id):
            if isinstance(task, IcebergSqlOperator):
                tasks.append(render_task_sql(task, context))
            else:
                others.append(f"{dag_id}.{task.task_id}")
    errors = {str(file): _last_line(error) for file, error in bag.import_errors.items()}
    return DagsFolderSql(tasks, sorted(bag.dags), others, errors)


def catalog_design(folder: str | Path, catalog: Any, logical_date: datetime) -> Design:
    """Return the design of the DAGs in `folder` (`dags_folder_sql` for `logical_date`).

    Each task's lineage is read against the schemas of the pyiceberg `catalog`. Raises DagsFolderError for a missing
    folder.
    """
    from airflow_lineage_governance.graph.design import design_lineage
    from airflow_lineage_governance.iceberg.catalog import lineage_schema

    found = dags_folder_sql(folder, logical_date)
    return design_lineage(
        found.tasks,
        lineage_schema(catalog),
        import_errors=found.import_errors,
        dag_ids=found.dag_ids,
        other_tasks=found.other_tasks,
        logical_date=logical_date.isoformat(),
    )
