"""Report: the funnel, what-if, budget, since, rendering (table, CSV, JSON, HTML) and explain."""
