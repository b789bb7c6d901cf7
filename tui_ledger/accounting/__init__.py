"""The accounting: both views and every metric, medians, statistics, ranks, verdicts, pairs,
intervals, per task, Pareto, matched tasks, checks, prices.
"""
