"""The HTML of the UI pages.

Jinja templates with autoescaping on (every name from an event or a report is escaped), inline CSS in the Airflow UI's
system font stack, light and dark by `prefers-color-scheme`, nothing fetched from anywhere.
"""

from __future__ import annotations

from typing import Any

from jinja2 import DictLoader, Environment, select_autoescape

STYLE = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1a202c; --muted: #4a5568; --line: #e2e8f0;
  --panel: #f7fafc; --accent: #017cee; --error: #c53030; --warning: #b7791f; --ok: #2f855a;
  --direct: #2b6cb0; --indirect: #718096; --masked: #805ad5; --mark: #fefcbf; }
@media (prefers-color-scheme: dark) { :root { --bg: #1a202c; --fg: #edf2f7; --muted: #a0aec0; --line: #2d3748;
  --panel: #171923; --accent: #63b3ed; --error: #fc8181; --warning: #f6e05e; --ok: #68d391;
  --direct: #63b3ed; --indirect: #a0aec0; --masked: #b794f4; --mark: #44337a; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 24px; background: var(--bg); color: var(--fg); font-size: 14px; line-height: 1.5;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans",
  sans-serif; }
h1 { font-size: 20px; font-weight: 600; margin: 0 0 12px; }
h2 { font-size: 16px; font-weight: 600; margin: 20px 0 8px; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 12px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.muted { color: var(--muted); } .error { color: var(--error); font-weight: 600; }
.warning { color: var(--warning); font-weight: 600; } .ok { color: var(--ok); font-weight: 600; }
tr.finding td:first-child { border-left: 3px solid var(--line); }
tr.finding.error td:first-child { border-left-color: var(--error); }
tr.finding.warning td:first-child { border-left-color: var(--warning); }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; border: 1px solid var(--line);
  background: var(--panel); font-size: 12px; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px;
  margin: 8px 0 16px; }
.picture { overflow: auto; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
form { display: flex; gap: 8px; margin: 0 0 12px; }
input[type=text] { flex: 1; max-width: 560px; padding: 6px 10px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--fg); font: inherit; }
button { padding: 6px 14px; border: 0; border-radius: 6px; background: var(--accent); color: #fff; font: inherit;
  cursor: pointer; }
svg.lineage { font-family: inherit; font-size: 12px; }
svg .box { fill: var(--panel); stroke: var(--line); } svg .row { fill: transparent; }
svg .row.marked { fill: var(--mark); } svg .box-title { font-weight: 600; fill: var(--fg); }
svg .column { fill: var(--fg); } svg .column.marked { font-weight: 600; }
svg .edge { fill: none; stroke-width: 1.6; opacity: .9; }
svg .edge.direct { stroke: var(--direct); } svg .edge.indirect { stroke: var(--indirect); stroke-dasharray: 6 4; }
svg .edge.masked { stroke: var(--masked); stroke-dasharray: 2 3; stroke-width: 2.2; }
svg .edge.other { opacity: .25; stroke-width: 1; } svg .edge.path { stroke-width: 2; }
.legend span { margin-right: 16px; } .legend svg { vertical-align: middle; }
"""

LEGEND = """<p class="legend muted">
<span><svg width="34" height="8"><path d="M0,4 H34" style="stroke:var(--direct);stroke-width:2"/>
</svg> DIRECT (values)</span>
<span><svg width="34" height="8"><path d="M0,4 H34" style="stroke:var(--indirect);stroke-width:2;stroke-dasharray:6 4"/>
</svg> INDIRECT (rows)</span>
<span><svg width="34" height="8"><path d="M0,4 H34" style="stroke:var(--masked);stroke-width:2;stroke-dasharray:2 3"/>
</svg> masked</span></p>"""

TEMPLATES = {
    "base.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{ title }}</title>
<style>{{ style }}</style></head><body>{% block body %}{% endblock %}</body></html>""",
    "refused.html": """{% extends "base.html" %}{% block body %}<h1>{{ title }}</h1>
<p>{{ detail }}</p><p><a href="{{ login }}" target="_top">Log in to Airflow</a></p>{% endblock %}""",
    "findings.html": """
{% for group in groups %}<h2>{{ group.heading }} <span class="badge {{ group.severity }}">{{ group.severity }}</span>
<span class="muted">{{ group.findings|length }}</span></h2>
<table class="findings"><tr><th>Table or column</th><th>Owner</th><th>Finding</th><th>Evidence</th></tr>
{% for f in group.findings %}<tr class="finding {{ group.severity }}"><td class="mono">{{ f.subject }}</td>
<td>{{ f.owner or '—' }}</td><td>{{ f.sentence }}</td><td class="mono">{{ f.evidence }}</td></tr>{% endfor %}
</table>{% endfor %}
{% if not groups %}<p class="panel ok">No findings.</p>{% endif %}""",
    "runs.html": """{% extends "base.html" %}{% block body %}<h1>Governance</h1>
{% if store %}<p class="muted source">From the lineage store <code>{{ store }}</code>.</p>
{% else %}<p class="panel source">{{ reason }}: these are the report files under <code>{{ folder }}</code>.</p>
{% endif %}
{% if not runs %}<p class="panel">No governance run yet{% if store %} you may read{% endif %}.</p>{% else %}
<h2 class="latest">Latest run: <a href="{{ latest_href }}">{{ latest.run_id }}</a>
<span class="muted">{{ latest.dag_id }}</span></h2>
<p>Logical date <span class="mono">{{ latest.logical_date }}</span>{% if latest.checked_at %}, checked at
<span class="mono checked">{{ latest.checked_at }}</span>{% endif %}:
<span class="{{ 'error' if latest.errors else 'ok' }}">{{ latest.errors|counted('error') }}</span>,
<span class="{{ 'warning' if latest.warnings else 'ok' }}">{{ latest.warnings|counted('warning') }}</span>.</p>
{% include "findings.html" %}
<h2>Runs</h2>
<p class="muted">The latest runs of the nightly governance DAGs you may read, newest first.</p>
<table><tr><th>Run</th><th>DAG</th><th>Logical date</th><th>Checked at</th><th>Errors</th><th>Warnings</th>
<th>Checked run</th><th>Coverage</th></tr>
{% for r in runs %}<tr class="run">
<td><a href="{{ r.href }}">{{ r.run_id }}</a></td><td>{{ r.dag_id }}</td><td class="mono">{{ r.logical_date }}</td>
<td class="mono">{{ r.checked_at or '—' }}</td>
<td><span class="{{ 'error' if r.errors else 'ok' }}">{{ r.errors|counted('error') }}</span></td>
<td><span class="{{ 'warning' if r.warnings else 'ok' }}">{{ r.warnings|counted('warning') }}</span></td>
<td>{{ r.coverage.get('target_dag_id', '') }} <span class="muted">{{ r.coverage.get('target_run_id', '') }}</span></td>
<td>{{ r.coverage.get('tasks_with_lineage', '?') }} of {{ r.coverage.get('tasks_succeeded', '?') }} tasks with lineage,
{{ r.coverage.get('columns_with_lineage', '?') }} columns</td></tr>{% endfor %}</table>{% endif %}
{% endblock %}""",
    "run.html": """{% extends "base.html" %}{% block body %}<p><a href="{{ back }}">&larr; Governance</a></p>
<h1>{{ line.dag_id }} <span class="muted">{{ line.run_id }}</span></h1>
<p class="muted source">Governance run {{ line.run_id }} of {{ line.dag_id }}{% if line.checked_at %}, checked at
<span class="mono checked">{{ line.checked_at }}</span>{% endif %}: {{ where }}.</p>
<p><span class="{{ 'error' if line.errors else 'ok' }}">{{ line.errors|counted('error') }}</span>,
<span class="{{ 'warning' if line.warnings else 'ok' }}">{{ line.warnings|counted('warning') }}</span>
&middot; logical date <span class="mono">{{ line.logical_date }}</span>
&middot; <a href="{{ airflow_run }}" target="_top">the Airflow run</a>
&middot; report <a href="{{ report_json }}">governance-report.json</a>,
<a href="{{ report_md }}">governance-report.md</a></p>
{% include "findings.html" %}
<h2>Coverage</h2><table>{% for key, value in line.coverage.items() %}<tr><th>{{ key.replace('_', ' ') }}</th>
<td class="mono">{{ value }}</td></tr>{% endfor %}</table>{% endblock %}""",
    "lineage.html": """{% extends "base.html" %}{% block body %}
<h1>Lineage <span class="muted">{{ dag_id }}.{{ task_id }}</span></h1>
{% if message %}<p class="panel">{{ message }}</p>{% endif %}
{% for o, picture in outputs %}<h2>{{ o.table }}</h2>
<p class="muted">{{ o.columns|length }} columns, {{ o.edge_count }} edges{% if o.snapshot %}; wrote snapshot
<span class="mono">{{ o.snapshot }}</span>{% endif %}
{% if o.row_count is not none %}, {{ o.row_count }} rows{% endif %}</p>
<table class="columns"><tr><th>Output column</th><th>Sources (DIRECT: values)</th>
<th>Also shaped by (INDIRECT)</th></tr>
{% for name, deps in o.columns %}<tr class="output-column"><td class="mono">{{ name }}</td>
<td>{% for d in deps if d.type == 'DIRECT' %}<div class="mono">{{ name }} &lt;- {{ d.line() }}</div>
{% else %}<span class="muted">no source column (a constant or a count)</span>{% endfor %}</td>
<td>{% for d in deps if d.type != 'DIRECT' %}<div class="mono">{{ d.line() }}</div>{% endfor %}</td></tr>{% endfor %}
</table>
<h2>Every row shaped by</h2><table class="rows"><tr><th>Input column</th><th>Type</th><th>Subtype</th><th>How</th></tr>
{% for d in o.rows %}<tr class="row-input"><td class="mono">{{ d.source }}</td><td>{{ d.type }}</td>
<td>{{ d.subtype }}</td><td class="muted">{{ d.description }}{{ ', masked' if d.masking else '' }}</td></tr>
{% else %}<tr><td colspan="4" class="muted">none</td></tr>{% endfor %}</table>
<h2>Picture</h2>{{ legend|safe }}<div class="picture">{{ picture|safe }}</div>{% endfor %}
{% if reads %}<h2>Snapshots</h2><table><tr><th>Read</th><th>Snapshot</th></tr>
{% for table, snapshot in reads %}<tr><td class="mono">{{ table }}</td><td class="mono">{{ snapshot or '—' }}</td></tr>
{% endfor %}</table>{% endif %}
{% if event_time %}<p class="muted">From the COMPLETE event of {{ event_time }}.</p>{% endif %}{% endblock %}""",
    "impact.html": """{% extends "base.html" %}{% block body %}<h1>Impact</h1>
<form method="get" action=""><input type="text" name="column" list="columns" value="{{ column }}"
 placeholder="namespace.table.column" aria-label="column" autocomplete="off"><button type="submit">Show impact</button>
</form><datalist id="columns">{% for c in columns %}<option value="{{ c }}">{% endfor %}</datalist>
{% if problem %}<p class="panel error">{{ problem }}</p>{% endif %}
{% if impact %}<p><b>{{ impact.column }}</b>: {{ impact.values|length }} columns through values,
{{ impact.rows|length }} tables through rows,
<span class="reached">{{ observed }} columns reached</span>{% if impact.columns_reached|length > observed %},
<span class="candidates">{{ impact.columns_reached|length - observed }} more through declared or designed lineage
(candidates to investigate)</span>{% endif %};
blast-radius score <b>{{ score }}</b> &middot; <a href="{{ json_href }}">JSON</a></p>
<table class="reached"><tr><th>Column reached</th><th>How</th><th>Evidence</th><th>Owner</th><th>Tier</th><th>Path</th>
</tr>{% for r in reached %}<tr class="reached-column {{ r.confidence }}"><td class="mono">{{ r.column }}</td>
<td>{{ r.how }}</td><td>{{ r.confidence }}{{ ', stale' if r.stale else '' }}</td>
<td>{{ r.owner or '—' }}</td><td>{{ r.tier or '—' }}</td><td class="mono muted">{{ r.path }}</td></tr>{% endfor %}
</table>{% if more %}<p class="muted">{{ more }} more columns reached: see the <a href="{{ json_href }}">JSON</a>.</p>
{% endif %}
<h2>Picture</h2>{{ legend|safe }}{% if hidden %}<p class="muted">{{ hidden }} more columns are listed above but
not drawn.</p>{% endif %}<div class="picture">{{ picture|safe }}</div>{% endif %}{% endblock %}""",
}

_ENVIRONMENT = Environment(
    loader=DictLoader(TEMPLATES), autoescape=select_autoescape(default=True, default_for_string=True)
)
_ENVIRONMENT.filters["counted"] = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"


def render(template: str, **values: Any) -> str:
    """Return the page `template` renders with `values` (escaped), the style and the legend."""
    return _ENVIRONMENT.get_template(template).render(style=STYLE, legend=LEGEND, **values)
