"""The words and numbers of reports: the summary as text, JSON, CSV and markdown; the pairs'
report; --fail-on.
"""
