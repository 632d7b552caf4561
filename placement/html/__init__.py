"""One offline HTML page per report: `render_plan` (`plan show --report`), `render_score`
(`score --report`) and `render_simulate`, each from the model the JSON report of the same
run is written from, so the page and the JSON hold the same numbers.

The top layer of the library: it reads the report models of every layer below and is
read by none. `page` is the frame (tables, escaping, the sort script, the figures'
formats), `charts` the inline SVG. A new report is one more module here with a
``render_X(model) -> str`` built from `page.Page`, `page.table` and `charts.chart`.
"""
