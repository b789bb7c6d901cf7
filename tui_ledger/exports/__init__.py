"""Exports: files written atomically, where a served session may write, the Pareto chart as SVG."""
