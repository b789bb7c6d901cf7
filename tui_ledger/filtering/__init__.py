"""The filter language: text -> polars expression, and its inverse (a cell -> the term that keeps
it).
"""
